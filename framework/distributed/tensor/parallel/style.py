"""Parallel styles (PyTorch's ``torch.distributed.tensor.parallel.style``): how
``parallelize_module`` lays out one submodule's parameters, inputs and outputs.

``nn.Linear`` and ``nn.Embedding`` get a forward that runs on their DTensor parameters
with the column-/row-wise rules directly (no gather), so their outputs are exactly
PyTorch's."""
import types

from ...._tensor import Tensor
from ....nn import functional as F
from ....nn.modules.linear import Linear
from ....nn.modules.sparse import Embedding
from ....nn.parameter import Parameter
from .. import _redistribute as R
from .._api import DTensor, distribute_module, distribute_tensor
from ..placement_types import Partial, Replicate, Shard

__all__ = ["ParallelStyle", "ColwiseParallel", "RowwiseParallel", "SequenceParallel",
           "PrepareModuleInput", "PrepareModuleOutput"]


class ParallelStyle:
    """The base class of the parallel styles."""

    def _apply(self, module, device_mesh):
        raise NotImplementedError


def _to_dtensor(x, mesh, layout, desired):
    """``x`` (a plain tensor laid out as ``layout``, or a DTensor) as a DTensor laid out as
    ``desired``."""
    if not isinstance(x, Tensor):
        return x
    if not isinstance(x, DTensor):
        x = DTensor.from_local(x, mesh, (layout,), run_check=False)
    if desired is not None and x.placements != R.normalize((desired,), x.ndim):
        x = x.redistribute(mesh, (desired,))
    return x


def _shard_param(module, name, mesh, placement):
    p = getattr(module, name)
    if p is None:
        return
    d = distribute_tensor(p.detach(), mesh, [placement])
    module.register_parameter(name, Parameter(d, p.requires_grad))


def _check_1d(mesh, style):
    if mesh.ndim != 1:
        raise ValueError(f"{style} expects a 1-D DeviceMesh (the tensor-parallel dimension), "
                         f"got {mesh.ndim} dimensions")


def _check_module(module, style):
    if not isinstance(module, (Linear, Embedding)):
        raise NotImplementedError(f"{style} currently only support nn.Linear and "
                                  f"nn.Embedding, got {type(module).__name__}")


class _LinearStyle(ParallelStyle):
    def __init__(self, *, input_layouts, output_layouts, use_local_output, desired_input,
                 default_output):
        self.input_layouts = (input_layouts or desired_input,)
        self.output_layouts = (output_layouts or default_output,)
        self.desired_input_layouts = (desired_input,)
        self.use_local_output = use_local_output

    def _input_fn(self, mod, inputs, mesh):
        x = inputs[0]
        desired = self.desired_input_layouts[0]
        if isinstance(mod, Embedding):
            desired = Replicate()
        return (_to_dtensor(x, mesh, self.input_layouts[0], desired),) + tuple(inputs[1:])

    def _output_fn(self, mod, out, mesh):
        if out.placements != R.normalize(self.output_layouts, out.ndim):
            out = out.redistribute(mesh, self.output_layouts)
        return out.to_local() if self.use_local_output else out

    def _apply(self, module, device_mesh):
        name = type(self).__name__
        _check_1d(device_mesh, name)
        _check_module(module, name)
        self._partition(module, device_mesh)
        module.forward = types.MethodType(self._forward(module), module)
        return distribute_module(module, device_mesh, None, self._input_fn, self._output_fn)


class ColwiseParallel(_LinearStyle):
    """Shards an ``nn.Linear`` column-wise (its weight's rows, ``Shard(0)``; an
    ``nn.Embedding``'s embedding dim, ``Shard(1)``): input Replicate, output Shard(-1)."""

    def __init__(self, *, input_layouts=None, output_layouts=None, use_local_output=True):
        super().__init__(input_layouts=input_layouts, output_layouts=output_layouts,
                         use_local_output=use_local_output, desired_input=Replicate(),
                         default_output=Shard(-1))

    def _partition(self, module, mesh):
        if isinstance(module, Linear):
            _shard_param(module, "weight", mesh, Shard(0))
            _shard_param(module, "bias", mesh, Shard(0))
        else:
            _shard_param(module, "weight", mesh, Shard(1))

    def _forward(self, module):
        if isinstance(module, Linear):
            return _linear_forward
        return _colwise_embedding_forward


class RowwiseParallel(_LinearStyle):
    """Shards an ``nn.Linear`` row-wise (its weight's columns, ``Shard(1)``, bias
    Replicate; input Shard(-1)) or an ``nn.Embedding``'s vocabulary (``Shard(0)``, input
    Replicate); their Partial output is reduced to ``output_layouts`` (Replicate)."""

    def __init__(self, *, input_layouts=None, output_layouts=None, use_local_output=True):
        super().__init__(input_layouts=input_layouts, output_layouts=output_layouts,
                         use_local_output=use_local_output, desired_input=Shard(-1),
                         default_output=Replicate())

    def _partition(self, module, mesh):
        if isinstance(module, Linear):
            _shard_param(module, "weight", mesh, Shard(1))
            _shard_param(module, "bias", mesh, Replicate())
        else:
            _shard_param(module, "weight", mesh, Shard(0))

    def _forward(self, module):
        style = self

        def rowwise(mod, x):
            out = _rowwise_embedding(mod, x) if isinstance(mod, Embedding) else \
                x @ mod.weight.t()
            # reduce the Partial result first, then add the (replicated) bias once
            out = out.redistribute(out.device_mesh, style.output_layouts)
            if isinstance(mod, Linear) and mod.bias is not None:
                out = out + mod.bias
            return out
        return rowwise


def _linear_forward(self, x):
    out = x @ self.weight.t()
    return out if self.bias is None else out + self.bias


def _embedding_kwargs(mod):
    if mod.max_norm is not None:
        raise NotImplementedError("tensor-parallel nn.Embedding: max_norm is not supported")
    return dict(scale_grad_by_freq=mod.scale_grad_by_freq, sparse=mod.sparse)


def _colwise_embedding_forward(self, ids):
    w = self.weight
    local = F.embedding(ids.to_local(), w.to_local(), self.padding_idx,
                        **_embedding_kwargs(self))
    return DTensor._wrap(local, w.device_mesh, (Shard(ids.ndim),),
                         tuple(ids.shape) + (w.shape[1],))


def _rowwise_embedding(mod, ids):
    """Each rank looks up the ids of its vocabulary rows (others give zeros): Partial."""
    w = mod.weight
    if mod.padding_idx is not None:
        raise NotImplementedError("row-wise parallel nn.Embedding: padding_idx is not "
                                  "supported")
    mesh = w.device_mesh
    wl = w.to_local()
    start, length = R.chunk_range(w.shape[0], mesh.size(0), mesh.get_local_rank(0))
    idl = ids.to_local()
    mine = (idl >= start) & (idl < start + length)
    local_ids = (idl - start) * mine     # out-of-range ids read row 0, masked below
    if length == 0:
        from ...._ops import creation
        local = creation.zeros(tuple(idl.shape) + (w.shape[1],), dtype=wl.dtype,
                               device=wl.device) + wl.sum() * 0
    else:
        local = F.embedding(local_ids, wl, **_embedding_kwargs(mod)) * \
            mine.unsqueeze(-1).to(wl.dtype)
    return DTensor._wrap(local, mesh, (Partial(),), tuple(ids.shape) + (w.shape[1],))


class SequenceParallel(ParallelStyle):
    """Runs a module whose parameters are replicated (LayerNorm, RMSNorm, Dropout, ...) on
    the local part of a sequence-sharded input (``Shard(sequence_dim)``); the parameters'
    gradients are summed over the ranks."""

    def __init__(self, *, sequence_dim=1, use_local_output=False):
        self.sequence_dim = sequence_dim
        self.use_local_output = use_local_output

    def _apply(self, module, device_mesh):
        _check_1d(device_mesh, "SequenceParallel")
        seq = self.sequence_dim

        def input_fn(mod, inputs, mesh):
            x = inputs[0]
            if isinstance(x, DTensor):
                x = x.redistribute(mesh, (Shard(seq),)).to_local()
            # the replicated parameters meet sharded tokens: sum their gradients
            for key, p in list(mod._parameters.items()):
                if p is not None:
                    mod._sp_locals[key] = R.grad_all_reduce(p.to_local(), mesh, [0])
            return (x,) + tuple(inputs[1:])

        def output_fn(mod, out, mesh):
            mod._sp_locals.clear()
            d = DTensor._wrap(out, mesh, (Shard(seq % out.dim()),),
                              _seq_global(out, seq, mesh))
            return d.to_local() if self.use_local_output else d

        module._sp_locals = {}
        _swap_params_in_forward(module)
        return distribute_module(module, device_mesh, None, input_fn, output_fn)


def _seq_global(out, seq, mesh):
    """The global shape of a sequence shard, taking the shards to be even (as
    ``DTensor.from_local`` without ``shape``)."""
    shape = list(out._shape)
    shape[seq % len(shape)] *= mesh.size(0)
    return tuple(shape)


def _swap_params_in_forward(module):
    """The module's forward sees its parameters as local tensors (the DTensor parameters'
    local data, in the graph with their gradient sum) while ``_sp_locals`` holds them."""
    cls_forward = type(module).forward

    def forward(self, *args, **kwargs):
        saved = {}
        for key, local in self._sp_locals.items():
            saved[key] = self._parameters.pop(key)
            object.__setattr__(self, key, local)
        try:
            return cls_forward(self, *args, **kwargs)
        finally:
            for key, p in saved.items():
                del self.__dict__[key]
                self._parameters[key] = p
    module.forward = types.MethodType(forward, module)


class PrepareModuleInput(ParallelStyle):
    """Converts the module's positional inputs laid out as ``input_layouts`` (plain tensors
    are taken as local parts) to DTensors laid out as ``desired_input_layouts`` before its
    forward (``None`` entries pass through)."""

    def __init__(self, *, input_layouts=None, desired_input_layouts=None,
                 input_kwarg_layouts=None, desired_input_kwarg_layouts=None,
                 use_local_output=False):
        self.input_layouts = _as_tuple(input_layouts)
        self.desired_input_layouts = _as_tuple(desired_input_layouts)
        self.input_kwarg_layouts = input_kwarg_layouts or {}
        self.desired_input_kwarg_layouts = desired_input_kwarg_layouts or {}
        self.use_local_output = use_local_output
        if self.input_layouts is not None and len(self.input_layouts) != \
                len(self.desired_input_layouts or ()):
            raise AssertionError("input_layouts and desired_input_layouts should have same "
                                 "length!")

    def _convert(self, x, layout, desired, mesh):
        if layout is None or not isinstance(x, Tensor):
            return x
        d = _to_dtensor(x, mesh, layout, desired)
        return d.to_local() if self.use_local_output else d

    def _apply(self, module, device_mesh):
        def pre_hook(mod, args, kwargs):
            if self.input_layouts is not None:
                if len(args) < len(self.input_layouts):
                    raise ValueError("module inputs and input_layouts should have same length!")
                args = tuple(self._convert(a, lay, des, device_mesh) for a, lay, des in zip(
                    args, self.input_layouts, self.desired_input_layouts)) + \
                    tuple(args[len(self.input_layouts):])
            kwargs = dict(kwargs)
            for k, lay in self.input_kwarg_layouts.items():
                if k in kwargs:
                    kwargs[k] = self._convert(kwargs[k], lay,
                                              self.desired_input_kwarg_layouts.get(k),
                                              device_mesh)
            return args, kwargs
        module.register_forward_pre_hook(pre_hook, with_kwargs=True)
        return module


class PrepareModuleOutput(ParallelStyle):
    """Redistributes the module's outputs from ``output_layouts`` to
    ``desired_output_layouts`` after its forward."""

    def __init__(self, *, output_layouts, desired_output_layouts, use_local_output=True):
        self.output_layouts = _as_tuple(output_layouts)
        self.desired_output_layouts = _as_tuple(desired_output_layouts)
        self.use_local_output = use_local_output
        if len(self.output_layouts) != len(self.desired_output_layouts):
            raise AssertionError("output_layouts and desired_output_layouts should have same "
                                 "length!")

    def _apply(self, module, device_mesh):
        def hook(mod, inputs, outputs):
            single = not isinstance(outputs, tuple)
            outs = (outputs,) if single else outputs
            if len(outs) != len(self.output_layouts):
                raise ValueError("module outputs and output_layouts should have same length!")
            res = []
            for o, lay, des in zip(outs, self.output_layouts, self.desired_output_layouts):
                if lay is not None and isinstance(o, Tensor):
                    o = _to_dtensor(o, device_mesh, lay, des)
                    o = o.to_local() if self.use_local_output else o
                res.append(o)
            return res[0] if single else tuple(res)
        module.register_forward_hook(hook)
        return module


def _as_tuple(x):
    if x is None:
        return None
    return tuple(x) if isinstance(x, (list, tuple)) else (x,)
