"""Ops on DTensors, installed as DTensor methods and operators: elementwise ops (same
placements, or a Replicate operand broadcast against a Shard one), matmul/mm (the sharding
rules of column- and row-wise parallelism), sum/mean, local-only conversions, and for every
other Tensor method a fallback that gathers the inputs (Replicate), runs the op on the full
tensors and returns a Replicate DTensor, warning once per op."""
import warnings

from ..._tensor import Tensor
from . import _redistribute as R
from ._api import DTensor
from .placement_types import Partial, Replicate, Shard

_warned = set()


def _mixed(op):
    raise RuntimeError(f"{op}: got mixed framework.Tensor and DTensor, need to convert all "
                       "framework.Tensor to DTensor before calling distributed operators!")


def _replicate_all(x):
    return x.redistribute(x.device_mesh, [Replicate()] * x.device_mesh.ndim)


def _wrap_like(local, x, placements, shape):
    return DTensor._wrap(local, x.device_mesh, tuple(placements), shape)


# ---- elementwise --------------------------------------------------------------------------
_LINEAR = {"add", "sub", "__add__", "__radd__", "__sub__", "__rsub__"}
_SCALE = {"mul", "__mul__", "__rmul__", "div", "__truediv__", "neg", "__neg__"}


def _broadcast_shape(a, b):
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b "
                               f"({y}) at non-singleton dimension")
        out.append(max(x, y) if x != 1 and y != 1 else x * y if 0 in (x, y) else max(x, y))
    return tuple(out)


def _elementwise(name, self, other=None, *args, **kwargs):
    """``self.name(other, ...)`` on DTensors; ``other`` may be a Python scalar."""
    method = getattr(Tensor, name)
    if other is None or not isinstance(other, Tensor):
        x = self
        # a Partial(sum) value may be scaled as it is; anything else needs the reduced value
        keep = name in _SCALE and all(p.is_partial("sum") for p in x.placements
                                      if p.is_partial())
        if any(p.is_partial() for p in x.placements) and not keep:
            x = _replicate_all(x)
        local = method(x.to_local(), *(() if other is None else (other,)), *args, **kwargs)
        return _wrap_like(local, x, x.placements, local_global(x, local))
    if not isinstance(other, DTensor) or not isinstance(self, DTensor):
        _mixed(f"aten.{name.strip('_')}")
    a, b = self, other
    if a.device_mesh != b.device_mesh:
        raise RuntimeError(f"{name}: DTensor operands must be on the same DeviceMesh")
    out_shape = _broadcast_shape(a.shape, b.shape)
    nd = len(out_shape)
    pa, pb, po, red_a, red_b = [], [], [], [], []
    for i, (x, y) in enumerate(zip(a.placements, b.placements)):
        xa = _out_dim(x, a.ndim, nd)
        yb = _out_dim(y, b.ndim, nd)
        if x == y and not x.is_partial() and a.shape == b.shape:
            pa.append(x), pb.append(y), po.append(x)
        elif xa is not None and xa == yb and _same_size(a, b, x.dim, y.dim):
            pa.append(x), pb.append(y), po.append(Shard(xa))
        elif x.is_partial("sum") and y.is_partial("sum") and name in _LINEAR:
            pa.append(x), pb.append(y), po.append(x)
        elif x.is_partial("sum") and y.is_replicate() and name in _SCALE:
            pa.append(x), pb.append(y), po.append(x)
        elif y.is_partial("sum") and x.is_replicate() and name in ("mul", "__mul__",
                                                                   "__rmul__"):
            pa.append(x), pb.append(y), po.append(y)
        elif xa is not None and (y.is_replicate() or y.is_partial()):
            pb.append(_matching(b, xa, nd, red_b, i))
            pa.append(x), po.append(Shard(xa))
        elif yb is not None and (x.is_replicate() or x.is_partial()):
            pa.append(_matching(a, yb, nd, red_a, i))
            pb.append(y), po.append(Shard(yb))
        else:
            pa.append(Replicate()), pb.append(Replicate()), po.append(Replicate())
    la = R.grad_all_reduce(a.redistribute(a.device_mesh, pa).to_local(), a.device_mesh, red_a)
    lb = R.grad_all_reduce(b.redistribute(b.device_mesh, pb).to_local(), b.device_mesh, red_b)
    local = method(la, lb, *args, **kwargs)
    return _wrap_like(local, a, po, out_shape)


def _out_dim(p, ndim, out_ndim):
    return p.dim + out_ndim - ndim if isinstance(p, Shard) else None


def _same_size(a, b, da, db):
    return a.shape[da] == b.shape[db]


def _matching(t, out_dim, nd, reduce_dims, mesh_dim):
    """The placement of operand ``t`` (Replicate on this mesh dim) next to an operand
    sharded on output dim ``out_dim``: sharded the same way when it spans that dim, else
    kept whole, its gradient then summed over the mesh dim."""
    d = out_dim - (nd - t.ndim)
    if d >= 0 and t.shape[d] != 1:
        return Shard(d)
    reduce_dims.append(mesh_dim)
    return Replicate()


def local_global(x, local):
    """The global shape of a placement-preserving op's result."""
    shape = list(local._shape)
    for i, p in enumerate(x.placements):
        if isinstance(p, Shard):
            shape[p.dim] = x.shape[p.dim]
    return tuple(shape)


# ---- matmul -------------------------------------------------------------------------------
def _matmul(self, other):
    """``(..., m, k) @ (k, n)`` with per mesh dim rules: R x Shard(1) -> Shard(-1),
    Shard(-1) x Shard(0) -> Partial, Shard(batch or m) x R -> Shard, Partial x R and
    R x Partial -> Partial; anything else is replicated first."""
    if not isinstance(other, DTensor) or not isinstance(self, DTensor):
        _mixed("aten.mm")
    a, b = self, other
    if b.ndim != 2 or a.ndim < 1:
        return _fallback("matmul", a, b)
    nd = a.ndim if a.ndim > 1 else 1
    pa, pb, po, red_a, red_b = [], [], [], [], []
    for i, (x, y) in enumerate(zip(a.placements, b.placements)):
        if x.is_replicate() and y.is_replicate():
            r = (x, y, x)
        elif x.is_replicate() and y == Shard(1):
            r = (x, y, Shard(nd - 1))
            red_a.append(i)
        elif x == Shard(a.ndim - 1) and y == Shard(0):
            r = (x, y, Partial())
        elif isinstance(x, Shard) and x.dim < a.ndim - 1 and y.is_replicate():
            r = (x, y, x)
            red_b.append(i)
        elif x.is_partial("sum") and y.is_replicate():
            r = (x, y, x)
        elif x.is_replicate() and y.is_partial("sum"):
            r = (x, y, y)
        else:
            r = (Replicate(), Replicate(), Replicate())
        pa.append(r[0]), pb.append(r[1]), po.append(r[2])
    la = R.grad_all_reduce(a.redistribute(a.device_mesh, pa).to_local(), a.device_mesh, red_a)
    lb = R.grad_all_reduce(b.redistribute(b.device_mesh, pb).to_local(), b.device_mesh, red_b)
    local = Tensor.matmul(la, lb)
    shape = tuple(a.shape[:-1]) + (b.shape[1],) if a.ndim > 1 else (b.shape[1],)
    return _wrap_like(local, a, po, shape)


def _transpose(self, d0=0, d1=1):
    n = self.ndim
    d0, d1 = d0 % n, d1 % n
    swap = {d0: d1, d1: d0}
    po = [Shard(swap.get(p.dim, p.dim)) if isinstance(p, Shard) else p
          for p in self.placements]
    local = Tensor.transpose(self.to_local(), d0, d1)
    shape = list(self.shape)
    shape[d0], shape[d1] = shape[d1], shape[d0]
    return _wrap_like(local, self, po, shape)


# ---- reductions ---------------------------------------------------------------------------
def _reduce(name, self, dim=None, keepdim=False, *, dtype=None):
    x = self
    if any(p.is_partial() and not p.is_partial("sum") for p in x.placements):
        x = _replicate_all(x)
    n = x.ndim
    dims = list(range(n)) if dim is None else \
        sorted(d % n for d in ((dim,) if isinstance(dim, int) else dim))
    keep = keepdim and dim is not None
    po = []
    for p in x.placements:
        if isinstance(p, Shard) and p.dim in dims:
            po.append(Partial())
        elif isinstance(p, Shard):
            po.append(Shard(p.dim if keep else p.dim - sum(d < p.dim for d in dims)))
        else:
            po.append(p)
    local = x.to_local()
    kw = {} if dtype is None else {"dtype": dtype}
    out = local.sum(**kw) if dim is None else local.sum(dim, keepdim, **kw)
    if name == "mean":
        count = 1
        for d in dims:
            count *= x.shape[d]
        out = out / count
    shape = [s for d, s in enumerate(x.shape) if d not in dims or keep]
    if keep:
        shape = [1 if d in dims else s for d, s in enumerate(x.shape)]
    return _wrap_like(out, x, po, shape)


# ---- fallback -----------------------------------------------------------------------------
def _full(v):
    if isinstance(v, DTensor):
        return _replicate_all(v).to_local()
    if isinstance(v, (list, tuple)):
        return type(v)(_full(e) for e in v)
    return v


def _fallback(name, *args, **kwargs):
    mesh = next(a.device_mesh for a in args if isinstance(a, DTensor))
    if name not in _warned:
        _warned.add(name)
        warnings.warn(f"DTensor: {name} has no sharding rule here; its DTensor inputs are "
                      "gathered to Replicate and it runs on the full tensors", UserWarning,
                      stacklevel=3)
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, Tensor) and not isinstance(a, DTensor):
            _mixed(f"aten.{name}")
    out = getattr(Tensor, name)(*_full(args), **{k: _full(v) for k, v in kwargs.items()})
    return _wrap_out(out, mesh)


def _wrap_out(out, mesh):
    if isinstance(out, Tensor) and not isinstance(out, DTensor):
        return DTensor._wrap(out, mesh, (Replicate(),) * mesh.ndim, out._shape)
    if isinstance(out, tuple):
        return type(out)(_wrap_out(o, mesh) for o in out) if not hasattr(out, "_fields") \
            else type(out)(*(_wrap_out(o, mesh) for o in out))
    if isinstance(out, list):
        return [_wrap_out(o, mesh) for o in out]
    return out


def _local_only(name):
    def method(self, *args, **kwargs):
        local = getattr(Tensor, name)(self.to_local(), *args, **kwargs)
        if not isinstance(local, Tensor):
            return local
        return DTensor._wrap(local, self.device_mesh, self.placements, self._spec.shape,
                             self._spec.stride)
    method.__name__ = name
    return method


def _inplace(name):
    """An in-place method: it updates the local shard, so DTensor operands must be laid out
    as ``self`` or be replicated scalars (``clip_grad_norm_``'s coefficient); plain tensors
    and scalars are taken as local values."""
    def method(self, *args, **kwargs):
        for a in list(args) + list(kwargs.values()):
            if isinstance(a, DTensor) and (a.placements != self.placements or
                                           tuple(a.shape) != tuple(self.shape)) and \
                    not (a.ndim == 0 and all(p.is_replicate() for p in a.placements)):
                raise RuntimeError(
                    f"DTensor.{name}: in-place ops need operands laid out as self "
                    f"({list(self.shape)} {self.placements}), got {list(a.shape)} "
                    f"{a.placements}; redistribute them first")
        return getattr(Tensor, name)(self, *args, **kwargs)
    method.__name__ = name
    return method


def _setitem(self, index, value):
    raise NotImplementedError("DTensor.__setitem__ is not supported: it would index the "
                              "local shard with global indices; write into to_local() or "
                              "full_tensor() instead")


def _scalar(name):
    """``float(dt)``, ``bool(dt)``, ...: of the full (reduced) value."""
    def method(self):
        return getattr(Tensor, name)(_replicate_all(self).to_local())
    method.__name__ = name
    return method


def _named(name, fn):
    def method(self, *args, **kwargs):
        return fn(name, self, *args, **kwargs)
    method.__name__ = name
    return method


def _fallback_method(name):
    def method(*args, **kwargs):
        return _fallback(name, *args, **kwargs)
    method.__name__ = name
    return method


_BINARY = ("add", "sub", "mul", "div", "true_divide", "maximum", "minimum", "__add__",
           "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
           "__rtruediv__", "__pow__", "pow")
_UNARY = ("neg", "__neg__", "relu", "tanh", "sigmoid", "exp", "log", "sqrt", "rsqrt", "abs",
          "sin", "cos", "square", "reciprocal", "sign", "erf")
_LOCAL = ("clone", "contiguous", "to", "cpu", "cuda", "double", "float", "half", "bfloat16",
          "type_as", "detach")
# kept as Tensor's: metadata, autograd plumbing and in-place ops (which update the local
# shard, as an optimizer step needs)
_KEEP = {"size", "stride", "dim", "ndimension", "numel", "nelement", "element_size",
         "data_ptr", "storage_offset", "untyped_storage", "is_contiguous", "backward",
         "register_hook", "register_post_accumulate_grad_hook", "retain_grad",
         "get_device", "is_floating_point", "is_complex", "is_signed", "type",
         "requires_grad_", "to_local", "full_tensor", "redistribute", "from_local",
         "new_empty", "new_zeros", "new_ones", "new_full", "new_tensor", "share_memory_",
         "is_shared", "is_pinned", "pin_memory", "dim_order", "is_set_to", "storage",
         "untyped_storage", "has_names", "is_inference", "is_nonzero"}


def install():
    for name in _BINARY + _UNARY:
        if hasattr(Tensor, name):
            setattr(DTensor, name, _named(name, _elementwise))
    for name in _LOCAL:
        if hasattr(Tensor, name) and name not in DTensor.__dict__:
            setattr(DTensor, name, _local_only(name))
    DTensor.matmul = DTensor.__matmul__ = DTensor.mm = _matmul
    DTensor.__rmatmul__ = lambda self, other: _matmul(other, self)
    DTensor.transpose = DTensor.swapaxes = _transpose
    DTensor.t = lambda self: _transpose(self, 0, 1) if self.ndim == 2 else self
    DTensor.T = property(lambda self: _transpose(self, 0, 1) if self.ndim == 2 else
                         _fallback("permute", self, *reversed(range(self.ndim))))
    DTensor.sum = lambda self, dim=None, keepdim=False, *, dtype=None: _reduce(
        "sum", self, dim, keepdim, dtype=dtype)
    DTensor.mean = lambda self, dim=None, keepdim=False, *, dtype=None: _reduce(
        "mean", self, dim, keepdim, dtype=dtype)
    for name in [n for n in vars(Tensor) if n.endswith("_") and not n.startswith("_")]:
        if callable(vars(Tensor)[name]) and name not in DTensor.__dict__:
            setattr(DTensor, name, _inplace(name))
    for name in ("__iadd__", "__isub__", "__imul__", "__itruediv__"):
        if hasattr(Tensor, name):
            setattr(DTensor, name, _inplace(name))
    DTensor.__setitem__ = _setitem
    for name in ("__float__", "__int__", "__bool__", "__index__", "__complex__"):
        if hasattr(Tensor, name):
            setattr(DTensor, name, _scalar(name))
    # every other public method (and a few operators) falls back to the full tensors
    operators = ("__getitem__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
                 "__floordiv__", "__mod__", "__rpow__", "__abs__")
    public = [n for n in vars(Tensor) if not n.startswith("_") and not n.endswith("_")]
    for name in public + list(operators):
        attr = vars(Tensor).get(name)
        if name in DTensor.__dict__ or name in _KEEP or not callable(attr) or \
                isinstance(attr, (staticmethod, classmethod, type)):
            continue
        setattr(DTensor, name, _fallback_method(name))
    # __eq__ above would otherwise make DTensors unhashable (parameters are dict keys)
    DTensor.__hash__ = Tensor.__hash__


install()
