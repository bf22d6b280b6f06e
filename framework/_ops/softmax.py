"""The softmax family: softmax and log_softmax along one dim (framework.softmax,
Tensor.softmax, framework.log_softmax, Tensor.log_softmax).

The kernels (native/softmax.cpp, framework/kernels/softmax.py) work on contiguous
(outer, n, inner) data of one floating dtype: a non-contiguous input, or one with a
``dtype=`` to convert to, is copied first (PyTorch casts before the op as well). The
backward is an op of its own with a fused kernel (_softmax_backward_data, from the output
and its gradient); its derivatives are formulas over framework ops in ops.yaml, so double
backward works.
"""
from .._tensor import _wrap_dim
from . import alloc
from .pointwise import check_out, convert, cpp_type_name, require_tensor


def _kernel_name(op, x, d):
    # PyTorch names its kernel for the last dim apart from the general one
    last = x.dim() == 0 or d == x.dim() - 1
    return f"{op}_lastdim_kernel_impl" if last else f"{op}_kernel_impl"


def _softmax(op, log, input, dim, dtype, out):
    require_tensor(op, input, "input", 1)
    d = _wrap_dim(dim, input.dim(), op, "dim", 2)
    x = input
    device = x._storage.device
    if dtype is not None:
        dtype = alloc.resolve_dtype(dtype)
    else:
        dtype = x.dtype
    if not dtype.is_floating_point and x.numel():
        raise NotImplementedError(f"\"{_kernel_name(op, x, d)}\" not implemented for "
                                  f"'{dtype.scalar_name}'")
    if out is not None:
        require_tensor(op, out, "out")
        if out.dtype is not dtype:
            raise RuntimeError(f"Expected out tensor to have dtype {cpp_type_name(dtype)}, but "
                               f"got {cpp_type_name(out.dtype)} instead")
    if x.dtype is not dtype or not x.is_contiguous():
        x = convert(x, dtype, device)
    shape = x._shape
    n = shape[d] if shape else 1
    outer = alloc.numel(shape[:d])
    inner = alloc.numel(shape[d + 1:])
    res = alloc.empty(shape, dtype, device)
    if res.numel():
        alloc.backend(device).softmax.softmax(log, x, res, outer, n, inner)
    if out is None:
        return res
    target = check_out(op, out, shape, dtype, False, (input,))
    alloc.backend(device).copy.copy(target, res, res._stride)
    return target


def softmax(input, dim, dtype=None, *, out=None):
    """exp(x) / exp(x).sum(dim), computed stably; ``dtype`` converts the input first."""
    return _softmax("softmax", False, input, dim, dtype, out)


def log_softmax(input, dim, dtype=None, *, out=None):
    """log(softmax(x, dim)) = x - logsumexp(x, dim), computed stably; ``dtype`` converts
    the input first."""
    return _softmax("log_softmax", True, input, dim, dtype, out)



def softmax_backward_data(grad_output, output, dim, log):
    """Gradient of softmax (``log``: log_softmax) along ``dim`` given its ``output`` and
    the output's gradient: ``output * (g - (g * output).sum(dim))``, or
    ``g - exp(output) * g.sum(dim)``, in one kernel."""
    op = "_softmax_backward_data"
    require_tensor(op, grad_output, "grad_output", 1)
    require_tensor(op, output, "output", 2)
    d = _wrap_dim(dim, output.dim(), op, "dim", 3)
    device = output._storage.device
    dtype = output.dtype
    y = output if output.is_contiguous() else convert(output, dtype, device)
    g = grad_output
    if g.dtype is not dtype or not g.is_contiguous() or g._shape != y._shape:
        g = convert(g.expand(y._shape), dtype, device)
    shape = y._shape
    n = shape[d] if shape else 1
    res = alloc.empty(shape, dtype, device)
    if res.numel():
        alloc.backend(device).softmax.softmax_backward(log, g, y, res, alloc.numel(shape[:d]),
                                                       n, alloc.numel(shape[d + 1:]))
    return res
