"""``SparseTensor.__torch_function__``: public functions given a sparse operand.

A function whose first argument is sparse runs the sparse class's own method of that name
(``framework.mm(s, d)`` is ``s.mm(d)``); dense-first ones with a sparse operand follow
PyTorch: ``add``/``sub`` (and ``add_``/``sub_``) give dense results, ``mul`` a sparse one,
``mm``/``matmul``/``addmm``/``F.linear`` dense ones, ``cat`` of sparse tensors a sparse
one. Anything else runs as for a dense tensor, where the sparse tensor's guard raises
PyTorch's NotImplementedError. Dispatch is turned on when the first sparse tensor is made,
so dense-only programs pay nothing."""
from .. import overrides as _overrides
from .._tensor import Tensor
from . import ops
from .base import SparseTensor


def _dense(x):
    return x.to_dense() if isinstance(x, SparseTensor) else x


def _add_dense(func, args, kwargs):
    """dense +/- sparse: the dense op on the densified operand (PyTorch: a dense result)."""
    return func(args[0], _dense(args[1]), *args[2:], **kwargs)


def _mul(func, args, kwargs):
    a, b = args[0], args[1]
    if isinstance(b, SparseTensor) and not isinstance(a, SparseTensor) and not kwargs and \
            isinstance(a, Tensor) and not func.__name__.endswith("_"):
        return b.mul(a)          # dense * sparse: sparse, as PyTorch
    return None


def _mm(func, args, kwargs):
    return ops.dense_mm(*args)


def _matmul(func, args, kwargs):
    return ops.matmul(*args)


def _addmm(func, args, kwargs):
    input, mat1, mat2 = args
    return ops.addmm(input, mat1, mat2, beta=kwargs.get("beta", 1),
                     alpha=kwargs.get("alpha", 1))


def _linear(func, args, kwargs):
    x, w, *rest = args
    bias = rest[0] if rest else kwargs.get("bias")
    if not isinstance(w, SparseTensor) or isinstance(x, SparseTensor) or x.dim() < 1:
        return None
    if bias is not None and w.is_sparse:
        # PyTorch runs addmm(bias, x, w.t()) there, which has no dense x sparse kernel
        raise RuntimeError("addmm_sparse_dense: expected either 'mat1' to have sparse layout "
                           "and 'mat2' to have strided layout, got 'mat1' with layout "
                           "Strided and 'mat2' with layout Sparse")
    lead = tuple(x.shape[:-1])
    out = ops.dense_mm(w, x.reshape(-1, x.shape[-1]).t()).t().reshape(lead + (w.shape[0],))
    return out if bias is None else out + _dense(bias)


def _cat(func, args, kwargs):
    tensors = args[0] if args else kwargs.get("tensors")
    if not any(isinstance(t, SparseTensor) for t in tensors):
        return None
    from .shape_ops import cat
    return cat(tensors, *args[1:], **{k: v for k, v in kwargs.items() if k != "tensors"})


# dense-first functions that take a sparse operand; None from a handler: no rule applies
HANDLERS = {"cat": _cat, "concat": _cat, "concatenate": _cat,
            "add": _add_dense, "sub": _add_dense, "subtract": _add_dense,
            "add_": _add_dense, "sub_": _add_dense, "subtract_": _add_dense,
            "mul": _mul, "multiply": _mul, "mm": _mm, "matmul": _matmul, "addmm": _addmm,
            "linear": _linear}


_LIKE = ("zeros_like", "empty_like")


def _run_dense(func, args, kwargs):
    with _overrides.DisableTorchFunctionSubclass():
        return func(*args, **kwargs)


def torch_function(cls, func, types, args=(), kwargs=None):
    """PyTorch's ``__torch_function__`` protocol for sparse tensors (module docstring)."""
    kwargs = kwargs or {}
    name = getattr(func, "__name__", None)
    first = args[0] if args else None
    if isinstance(first, SparseTensor):
        if name in _LIKE:      # zeros_like(sparse): a sparse result, as PyTorch
            from .products import like
            return like(name, *args, **kwargs)
        # a free function: the sparse class's own method of that name. A Tensor method
        # reached here was called unbound (``Tensor.requires_grad_(s)``): Tensor's own.
        method = None if getattr(func, "_tf_tensor_method", True) else \
            getattr(type(first), name, None)
        if method is not None and getattr(method, "_tf_original", None) is None:
            return method(*args, **kwargs)
        return _run_dense(func, args, kwargs)
    handler = HANDLERS.get(name)
    if handler is not None:
        with _overrides.DisableTorchFunctionSubclass():
            out = handler(func, args, kwargs)
        if out is not None:
            return out
    return _run_dense(func, args, kwargs)


def install():
    """``__torch_function__`` is set after the class exists (defining it in the class body
    would turn dispatch on at import)."""
    SparseTensor.__torch_function__ = classmethod(torch_function)
    _overrides._overrides.clear()


def enable_protocol():
    """Turns dispatch on (once), at the first sparse tensor made."""
    _overrides._subclass_defined(SparseTensor)


install()
