"""``DTensor``, ``distribute_tensor`` and ``distribute_module``.

A DTensor is a ``framework.Tensor`` whose storage fields are those of this rank's local
shard (so the dispatcher, ``nn.Parameter``, optimizers and in-place updates see the local
data, and nothing is added to the dispatcher's path), plus a spec: the device mesh, the
placements and the global shape, which ``shape``/``size()``/``dim()`` report (``numel()``
stays the local count: native launchers size their loops with it).
Its methods and operators run on DTensors (see ``_ops``)."""
import sys

from ... import _tensor, overrides as _overrides
from ..._ops.alloc import contiguous_strides
from ..._tensor import Tensor, Size
from ...autograd import grad_mode
from ...autograd.function import Function
from ..device_mesh import DeviceMesh
from . import _redistribute as R
from .placement_types import Replicate, Shard

__all__ = ["DTensor", "distribute_tensor", "distribute_module"]


class _Spec:
    __slots__ = ("mesh", "placements", "shape", "stride")

    def __init__(self, mesh, placements, shape, stride):
        self.mesh, self.placements, self.shape, self.stride = mesh, placements, shape, stride


def _from_interpreter():
    """Whether Triton's interpreter (simulated cuda) asks: it rebuilds each kernel argument
    from ``size()``/``stride()`` over its storage, which holds only the local shard (an
    optimizer step passes DTensor parameters to its kernels)."""
    return sys._getframe(2).f_globals.get("__name__") == "triton.runtime.interpreter"


def _alias(t):
    return Tensor._make(t._storage, t._shape, t._stride, t._offset, t.dtype)


class _Identity(Function):
    """The local data as a plain tensor, in the graph (from_local/to_local)."""

    @staticmethod
    def forward(ctx, x):
        return _alias(x)

    @staticmethod
    def backward(ctx, g):
        return g


def _check_placements(mesh, placements, ndim):
    if not isinstance(mesh, DeviceMesh):
        raise TypeError(f"device_mesh must be a DeviceMesh, got {type(mesh).__name__}")
    placements = tuple(placements)
    if len(placements) != mesh.ndim:
        raise ValueError(f"`placements` must have the same length as `device_mesh.ndim`! "
                         f"Found placements length: {len(placements)}, and device_mesh.ndim:"
                         f" {mesh.ndim}.")
    return R.normalize(placements, ndim)


def _global_shape(local, mesh, placements):
    """The global shape when every rank's shard is as large as this one would be on the
    first rank (even shards; pass ``shape=`` for uneven ones, as PyTorch)."""
    shape = list(local._shape)
    for i, p in enumerate(placements):
        if isinstance(p, Shard):
            shape[p.dim] *= mesh.size(i)
    return tuple(shape)


class DTensor(Tensor):
    """A tensor distributed over a ``DeviceMesh`` as its ``placements`` say (PyTorch's
    ``torch.distributed.tensor.DTensor``)."""

    def __new__(cls, *args, **kwargs):
        raise TypeError("DTensor: use DTensor.from_local or distribute_tensor to make one")

    @staticmethod
    def _wrap(local, mesh, placements, shape, stride=None):
        """A DTensor over ``local`` (its data and its place in the graph)."""
        if not _overrides._active:
            from ._dispatch import enable_protocol
            enable_protocol()
        t = _tensor._new(DTensor)
        t._storage, t._shape, t._stride = local._storage, local._shape, local._stride
        t._offset, t.dtype = local._offset, local.dtype
        t._requires_grad = local._requires_grad
        t._grad = None
        t._grad_fn = local._grad_fn
        t._output_nr = local._output_nr
        t._base = None
        shape = tuple(int(s) for s in shape)
        t._spec = _Spec(mesh, tuple(placements), shape,
                        tuple(stride) if stride is not None else contiguous_strides(tuple(shape)))
        return t

    # ---- what PyTorch's DTensor exposes --------------------------------------------------
    @property
    def device_mesh(self):
        return self._spec.mesh

    @property
    def placements(self):
        return self._spec.placements

    @property
    def shape(self):
        return Size(self._spec.shape)

    def size(self, dim=None):
        if dim is None:
            if _from_interpreter():
                return Size(self._shape)
            return Size(self._spec.shape)
        return self._spec.shape[_tensor._wrap_dim(dim, len(self._spec.shape), "size", "dim",
                                                  1)]

    def stride(self, dim=None):
        if dim is None:
            return self._stride if _from_interpreter() else self._spec.stride
        return self._spec.stride[dim]

    def dim(self):
        return len(self._spec.shape)

    ndimension = dim

    @property
    def ndim(self):
        return len(self._spec.shape)

    def __len__(self):
        if not self._spec.shape:
            raise TypeError("len() of a 0-d tensor")
        return self._spec.shape[0]

    def __repr__(self):
        return (f"DTensor(local_tensor={_alias(self)!r}, device_mesh={self.device_mesh}, "
                f"placements={self.placements})")

    def __str__(self):
        return self.__repr__()

    @staticmethod
    def from_local(local_tensor, device_mesh=None, placements=None, *, run_check=False,
                   shape=None, stride=None):
        """A DTensor from each rank's ``local_tensor`` (differentiable: the gradient flows
        back to ``local_tensor``). Without ``shape`` the shards are taken to be even."""
        if not isinstance(local_tensor, Tensor) or isinstance(local_tensor, DTensor):
            raise TypeError("DTensor.from_local: local_tensor must be a framework.Tensor, got "
                            f"{type(local_tensor).__name__}")
        if device_mesh is None:
            raise ValueError("DTensor.from_local: device_mesh is required")
        if placements is None:
            placements = [Replicate()] * device_mesh.ndim
        placements = _check_placements(device_mesh, placements, local_tensor.dim())
        if run_check:
            local_tensor = _run_check(local_tensor, device_mesh, placements)
        if shape is None:
            shape = _global_shape(local_tensor, device_mesh, placements)
        local = local_tensor
        if local._requires_grad and grad_mode._mode.enabled:
            local = _Identity.apply(local)
        return DTensor._wrap(local, device_mesh, placements, shape, stride)

    def to_local(self, *, grad_placements=None):
        """This rank's local tensor (differentiable: its gradient flows to this DTensor)."""
        if self._requires_grad and grad_mode._mode.enabled:
            return _Identity.apply(self)
        return _alias(self)

    def redistribute(self, device_mesh=None, placements=None, *, async_op=False,
                     forward_dtype=None, backward_dtype=None):
        """This DTensor with ``placements`` (collectives as needed; differentiable)."""
        mesh = self.device_mesh if device_mesh is None else device_mesh
        if mesh != self.device_mesh:
            raise NotImplementedError("DTensor.redistribute: moving to another DeviceMesh is "
                                      "not supported")
        if placements is None:
            raise RuntimeError("placements is needed for redistribute!")
        placements = _check_placements(mesh, placements, self.ndim)
        if placements == self.placements:
            return self
        local = R.redistribute_local(self.to_local(), mesh, self.placements, placements,
                                     self._spec.shape)
        return DTensor._wrap(local, mesh, placements, self._spec.shape, self._spec.stride)

    def full_tensor(self, *, grad_placements=None):
        """The whole tensor on every rank, as a plain tensor (differentiable)."""
        return self.redistribute(self.device_mesh,
                                 [Replicate()] * self.device_mesh.ndim).to_local()

    # ---- autograd fields seen through the spec -------------------------------------------
    @property
    def grad(self):
        g = self._grad
        if g is None or isinstance(g, DTensor):
            return g
        return DTensor._wrap(g, self.device_mesh, self.placements, self._spec.shape,
                             self._spec.stride)

    @grad.setter
    def grad(self, value):
        if isinstance(value, DTensor):
            value = _alias(value)
        Tensor.grad.fset(self, value)

    @grad.deleter
    def grad(self):
        self._grad = None

    @property
    def data(self):
        return DTensor._wrap(_alias(self), self.device_mesh, self.placements, self._spec.shape,
                             self._spec.stride)

    @data.setter
    def data(self, other):
        Tensor.data.fset(self, other)
        if isinstance(other, DTensor):
            self._spec = other._spec

    def detach(self):
        return self.data

    def _as_parameter(self, requires_grad):
        """``nn.Parameter(dtensor)``: a DTensor that is a Parameter."""
        return _parameter_class()._from(self, requires_grad)


_PARAM = None


def _parameter_class():
    global _PARAM
    if _PARAM is None:
        from ...nn.parameter import Parameter

        class DTensorParameter(DTensor, Parameter):
            """A module parameter distributed over a DeviceMesh."""

            def __new__(cls, data=None, requires_grad=True):
                return cls._from(data, requires_grad)

            def __init__(self, *args, **kwargs):
                pass

            @classmethod
            def _from(cls, data, requires_grad):
                p = _tensor._new(cls)
                p._storage, p._shape, p._stride = data._storage, data._shape, data._stride
                p._offset, p.dtype = data._offset, data.dtype
                p._requires_grad, p._grad, p._grad_fn = False, None, None
                p._output_nr, p._base = 0, None
                p._spec = data._spec
                if requires_grad:
                    p.requires_grad_(True)
                return p

            def __repr__(self):
                return "Parameter containing:\n" + DTensor.__repr__(self)

            def __deepcopy__(self, memo):
                if id(self) not in memo:
                    d = DTensor._wrap(_alias(self).clone(), self.device_mesh, self.placements,
                                      self._spec.shape, self._spec.stride)
                    memo[id(self)] = type(self)._from(d, self._requires_grad)
                return memo[id(self)]

            def __reduce_ex__(self, proto):
                raise NotImplementedError("pickling a DTensor parameter is not supported")
        _PARAM = DTensorParameter
    return _PARAM


def _run_check(local, mesh, placements):
    """from_local(run_check=True): as PyTorch, the replicas of every Replicate mesh
    dimension become those of its first rank (a broadcast)."""
    from .. import collectives as C
    for i, p in enumerate(placements):
        if isinstance(p, Replicate) and mesh.size(i) > 1:
            with grad_mode.no_grad():
                ref = local.detach().contiguous().clone()
                C.broadcast(ref, src=mesh.get_group(i).ranks[0], group=mesh.get_group(i))
            if not local._requires_grad:
                local = ref
                continue
            with grad_mode.no_grad():
                delta = ref - local.detach()
            local = local + delta      # rank 0's values (to rounding), the gradient as is
    return local


def distribute_tensor(tensor, device_mesh=None, placements=None, *, src_data_rank=0):
    """A DTensor of ``tensor`` (the same full tensor on every rank) laid out as
    ``placements``: each rank keeps its chunk of every Shard dimension (Partial: the value
    split over the ranks). The result is a leaf that requires grad as ``tensor`` does.
    PyTorch broadcasts ``tensor`` from ``src_data_rank``; here every rank must pass the
    same values."""
    if isinstance(tensor, DTensor):
        raise ValueError("distribute_tensor: the tensor is already a DTensor; use "
                         "redistribute")
    if device_mesh is None:
        raise ValueError("distribute_tensor: device_mesh is required")
    if placements is None:
        placements = [Replicate()] * device_mesh.ndim
    placements = _check_placements(device_mesh, placements, tensor.dim())
    if device_mesh.get_coordinate() is None:
        raise RuntimeError("distribute_tensor: this rank is not in the device mesh")
    shape = tuple(tensor._shape)
    with grad_mode.no_grad():
        local = R.redistribute_local(_alias(tensor), device_mesh,
                                     (Replicate(),) * device_mesh.ndim, placements, shape)
        if local._storage is tensor._storage:
            local = local.contiguous().clone()
    out = DTensor._wrap(local, device_mesh, placements, shape)
    if tensor._requires_grad:
        out.requires_grad_(True)
    return out


def distribute_module(module, device_mesh=None, partition_fn=None, input_fn=None,
                      output_fn=None):
    """Lays out ``module``'s parameters with ``partition_fn(name, submodule, mesh)`` (default:
    every parameter and buffer Replicate) and installs ``input_fn(module, inputs, mesh)`` as
    a forward pre-hook and ``output_fn(module, outputs, mesh)`` as a forward hook."""
    if device_mesh is None:
        raise ValueError("distribute_module: device_mesh is required")
    if getattr(module, "_distribute_module_applied", False):
        raise RuntimeError("distribute_module should only be called once on a module, but it "
                           "has already been called on this module!")
    for name, sub in list(module.named_modules()):
        if partition_fn is not None:
            partition_fn(name, sub, device_mesh)
        _replicate_rest(sub, device_mesh)
    if input_fn is not None:
        module.register_forward_pre_hook(lambda mod, inputs: input_fn(mod, inputs,
                                                                      device_mesh))
    if output_fn is not None:
        module.register_forward_hook(lambda mod, inputs, outputs: output_fn(
            mod, outputs, device_mesh))
    module._distribute_module_applied = True
    return module


def _replicate_rest(sub, mesh):
    """Parameters and buffers that partition_fn left as plain tensors become Replicate."""
    from ...nn.parameter import Parameter
    for key, p in list(sub._parameters.items()):
        if p is not None and not isinstance(p, DTensor):
            d = distribute_tensor(p.detach(), mesh, [Replicate()] * mesh.ndim)
            sub.register_parameter(key, Parameter(d, p.requires_grad))
    for key, b in list(sub._buffers.items()):
        if b is not None and not isinstance(b, DTensor):
            sub._buffers[key] = distribute_tensor(b, mesh, [Replicate()] * mesh.ndim)
