"""Pointwise ops: broadcasting, type promotion, ``out=`` and in-place rules in one place.

Every unary, binary and ternary op of ops.yaml goes through ``unary``/``binary``/``ternary``
below; the per-op part is only the kernel name and the promotion rule:

- ``default``: result dtype by PyTorch's promotion (add, mul, maximum, bitwise ops)
- ``float``:   as default, then integers and bool become the default float (div, exp, sin)
- ``compare``: computed in the promoted dtype, result bool (eq, lt, isclose)
- ``bool``:    result bool, computed in the input dtype (isnan, logical_not)
- ``same``:    result is the input dtype (neg, abs, floor)

``out=`` and in-place targets follow PyTorch's memory-overlap rules (overlap.py, applied in
``check_out``); float16/bfloat16 ops with a Python scalar follow its opmath rule (computed in
float32; mul and the divisions take the scalar unrounded, see ``_OPMATH``).

Ops with extra arguments or rules of their own (div rounding modes, pow, clamp, where,
lerp, isclose, ...) live in arith.py, the nn.functional activations in activation.py; both
end in the three functions here. The CPU kernels are native/pointwise_{unary,binary,
ternary}.cpp. A complex compute dtype leaves the three functions as soon as it is known,
for complex_ops.py (formulas over the real kernels, on real views): one test on the real
path.
"""
import builtins
import warnings

from .. import _dtype
from .._tensor import Size, Tensor
from .._device import CPU
from . import alloc
from . import complex_ops
from . import memory_format
from . import args as _args
from .args import check_range
from .overlap import TOO_HARD, check_internal, check_partial, overlap

_T = Tensor
_float_types = (builtins.float, builtins.int, builtins.bool)
_PROMOTE = _dtype._PROMOTE
_bool = _dtype.bool


# ---- shapes ---------------------------------------------------------------------------

def broadcast_shapes(*shapes):
    """The shape that tensors of the given shapes broadcast to (PyTorch's rules), for
    shapes of tensors (the public ``framework.broadcast_shapes`` is broadcast_shapes_api)."""
    first = shapes[0] if shapes else 0
    if not isinstance(first, int) and all(s == first for s in shapes):
        return tuple(first)
    out = ()
    for s in shapes:
        # an int is a 1-d shape (torch.broadcast_shapes(5, (5, 1)))
        out = _broadcast_pair(out, (s,) if isinstance(s, int) else tuple(s))
    return out


def broadcast_shapes_api(*shapes):
    """``torch.broadcast_shapes``: the shape tensors of the given shapes (or ints, 1-d
    shapes) broadcast to, as a ``Size``, without making any tensor. Its errors are
    PyTorch's: ValueError for a negative length, RuntimeError naming the first shape that
    does not broadcast."""
    shapes = [_args.int_list("broadcast_shapes", "shape",
                             ((s,) if isinstance(s, builtins.int) else s,)) for s in shapes]
    result = [1] * builtins.max((len(s) for s in shapes), default=0)
    for k, s in enumerate(shapes):
        for j in range(-1, -1 - len(s), -1):
            if s[j] < 0:
                raise ValueError("Attempting to broadcast a dimension with negative length!")
            if s[j] == 1 or s[j] == result[j]:
                continue
            if result[j] != 1:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {s[j]} at {j}! "
                    f"Mismatching argument at index {k} had {s}; but expected shape should "
                    f"be broadcastable to {result}")
            result[j] = s[j]
    return Size(result)


def _broadcast_pair(a, b):
    # right to left, like PyTorch, so the error names the same dim
    ndim = max(len(a), len(b))
    out = [1] * ndim
    for i in range(ndim - 1, -1, -1):
        da = a[i - ndim + len(a)] if i - ndim + len(a) >= 0 else 1
        db = b[i - ndim + len(b)] if i - ndim + len(b) >= 0 else 1
        if da < 0 or db < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension "
                               f"{min(da, db)}: {list(a if da < 0 else b)}")
        if da != db and da != 1 and db != 1:
            raise RuntimeError(f"The size of tensor a ({da}) must match the size of tensor b "
                               f"({db}) at non-singleton dimension {i}")
        out[i] = db if da == 1 else da
    return tuple(out)


def expand_strides(t, shape):
    """Strides of ``t`` viewed at the broadcast ``shape`` (0 where it is broadcast)."""
    if t._shape == shape:
        return t._stride
    off = len(shape) - len(t._shape)
    st = [0] * off
    for n, s, target in zip(t._shape, t._stride, shape[off:]):
        st.append(s if n == target else 0)
    return tuple(st)


# ---- dtypes and devices ---------------------------------------------------------------

def result_dtype(operands):
    """PyTorch's result type of tensors and Python scalars (see _dtype.result_type_of)."""
    dims, zeros, cats = [], [], []
    for x in operands:
        if x.__class__ is _T or isinstance(x, _T):
            (dims if x._shape else zeros).append(x.dtype)
        else:
            cats.append(_dtype.scalar_category(x))
    return _dtype.result_type_of(dims, zeros, cats)


def common_device(op, tensors):
    """The device of the op; 0-d CPU tensors may join CUDA tensors, as in PyTorch."""
    dev = None
    for t in tensors:
        d = t._storage.device
        if dev is None or dev is d:
            dev = d
        elif dev.type == "cpu" and not _dim_on(tensors, dev):
            dev = d
        elif d.type == "cpu" and not t._shape:
            continue
        else:
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at "
                               f"least two devices, {dev} and {d}! (when checking arguments "
                               f"for {op})")
    return dev


def _dim_on(tensors, dev):
    return any(t._shape and t._storage.device is dev for t in tensors)


_scalars = {}


def scalar_tensor(value, dtype, device):
    """A cached 0-d tensor holding a Python number (read-only by convention)."""
    key = (value.__class__, value, dtype, device)
    t = _scalars.get(key)
    if t is not None and t._storage.version:  # written to by someone: don't trust it
        t = None
    if t is None:
        t = alloc.empty((), dtype, device)
        alloc.backend(device).copy.fill(t, value)
        alloc.remember_filled(_scalars, key, t, 1024)
    return t


def as_operand(x, dtype, device):
    """``x`` (tensor or number) as a tensor of ``dtype`` on ``device`` (copying if needed)."""
    if x.__class__ is not _T and not isinstance(x, _T):
        if x.__class__ not in _float_types:
            x = _args.scalar("", "other", x)    # NumPy scalars as Python numbers
        return scalar_tensor(x, dtype, device)
    if x.dtype is not dtype or x._storage.device is not device:
        return convert(x, dtype, device, True)
    return x


def convert(x, dtype, device, preserve=False):
    """A copy of ``x`` converted to ``dtype`` and moved to ``device``: contiguous, or
    (``preserve``) in x's layout as PyTorch's ``to`` keeps it (memory_format.dense_like)."""
    if x._storage.device is not device:
        from .creation import to_device
        x = to_device(x, device)
        if x.dtype is dtype:
            return x
    out = memory_format.empty_like(x, dtype, device) if preserve else \
        alloc.empty(x._shape, dtype, device)
    alloc.backend(device).copy.copy(out, x, x._stride)
    return out


def result(shape, dtype, device, strides):
    """A new elementwise result of ``shape`` whose operands have ``strides`` (expanded
    to ``shape``): contiguous when the first operand is (the common case), else laid out
    as PyTorch's TensorIterator lays it out (memory_format.iter_strides)."""
    res = alloc.empty(shape, dtype, device)
    cs, st = res._stride, strides[0]
    if st != cs and not (len(strides) > 1 and strides[1] == cs and not any(st)):
        st = memory_format.iter_strides(shape, strides)
        if st != cs:
            res._stride = st
    return res


def checked_scalar(value, dtype, opmath=False):
    """A Python number after PyTorch's checked conversion to ``dtype`` (``opmath``: to the
    dtype the op computes in, float32 for float16/bfloat16), which raises "value cannot be
    converted to type c10::Half without overflow" when it does not fit."""
    c = value.__class__
    if c is builtins.float or c is builtins.int:
        if -65504.0 <= value <= 65504.0 and dtype.is_floating_point:
            return value        # fits every floating dtype: the common case, kept cheap
        if opmath and (dtype is _f16 or dtype is _bf16):
            dtype = _dtype.float32
        check_range(value, dtype)
    return value


def require_tensor(op, x, name, pos=None):
    """Raises PyTorch's TypeError when an argument that must be a tensor is not one."""
    if not isinstance(x, _T):
        where = "" if pos is None else f" (position {pos})"
        raise TypeError(f"{op}(): argument '{name}'{where} must be Tensor, not "
                        f"{type(x).__name__}")


# ---- outputs --------------------------------------------------------------------------

def check_out(op, out, shape, dtype, is_inplace, inputs=None):
    """Validates an ``out=`` or in-place target; resizes an ``out=`` tensor of another shape
    (with PyTorch's warning when it was not empty). Returns the tensor to write into.
    ``inputs``: the op's operands, checked with ``out`` by PyTorch's memory-overlap rules
    before anything is resized or written (None: the caller applies its own rules)."""
    require_tensor(op, out, "out")
    if inputs is not None:
        check_overlap(out, inputs)
    if not _dtype.can_cast(dtype, out.dtype):
        raise RuntimeError(f"result type {dtype.scalar_name} can't be cast to the desired "
                           f"output type {out.dtype.scalar_name}")
    if out._shape != shape:
        if is_inplace:
            raise RuntimeError(f"output with shape {list(out._shape)} doesn't match the "
                               f"broadcast shape {list(shape)}")
        if out.numel():
            warnings.warn(f"An output with one or more elements was resized since it had shape "
                          f"{list(out._shape)}, which does not match the required output shape "
                          f"{list(shape)}. This behavior is deprecated.", UserWarning)
        from .views import resize_
        resize_(out, shape)
    out._storage.version += 1
    return out


def check_overlap(out, inputs):
    """Refuses a written-to tensor whose elements share memory, and inputs (tensors or
    numbers) that share part but not all of its memory (overlap.py)."""
    if 0 in out._stride:        # the only cheap sign of internal overlap
        check_internal(out)
    storage = out._storage
    for x in inputs:
        if x is not out and (x.__class__ is _T or isinstance(x, _T)):
            if x._storage is storage:
                check_partial(out, x)
            elif x._storage.device is not storage.device and x._shape:
                common_device("out", (out, x))


def _read_first(out, x, stride=None, shape=None):
    """(``x``, ``stride``), or a copy of ``x`` and its strides at the broadcast ``shape``
    when it shares memory with ``out`` in a layout PyTorch lets through (too hard to
    decide, so not refused): the op then reads its whole input before writing, whatever
    order the kernel visits elements in."""
    if overlap(out, x) is not TOO_HARD:
        return x, stride
    x = convert(x, x.dtype, x._storage.device)
    return x, None if shape is None else expand_strides(x, shape)


def type_name(dtype):
    """PyTorch's scalar type name of a dtype ('Float', 'Long', ...), used in error messages."""
    return dtype.scalar_name


_CPP_NAMES = {_dtype.float32: "float", _dtype.float64: "double", _dtype.float16: "c10::Half",
              _dtype.bfloat16: "c10::BFloat16", _dtype.int64: "long int", _dtype.int32: "int",
              _dtype.int16: "short int", _dtype.int8: "signed char",
              _dtype.uint8: "unsigned char", _dtype.bool: "bool"}


def cpp_type_name(dtype):
    """The C++ type PyTorch names in some dtype messages ('float', 'long int', ...)."""
    return _CPP_NAMES[dtype]


def _output(op, out, shape, dtype, device, is_inplace, inputs):
    """The tensor a kernel writes into, and the tensor ``out`` to copy it to afterwards (or
    None). ``inputs`` are the operands as the caller gave them (before any conversion)."""
    target = check_out(op, out, shape, dtype, is_inplace, inputs)
    if target.dtype is dtype and target._storage.device is device:
        return target, None
    return alloc.empty(shape, dtype, device), target


def _finish(result, target):
    if target is None:
        return result
    alloc.backend(target._storage.device).copy.copy(target, result, result._stride)
    return target


# ---- the three arities ----------------------------------------------------------------

def compute_dtypes(promote, dtype):
    """(compute dtype, result dtype) for a promotion rule and the promoted input dtype."""
    if promote == "default" or promote == "same":
        return dtype, dtype
    if promote == "float":
        if dtype.category < 2:
            dtype = _dtype.get_default_dtype()
        return dtype, dtype
    return dtype, _bool   # compare, bool


def unary(op, kernel, x, out, promote, p0=0.0, p1=0.0, p2=0.0):
    """Applies a unary kernel elementwise to tensor ``x``."""
    require_tensor(op, x, "input", 1)
    device = x._storage.device
    cdt, rdt = compute_dtypes(promote, x.dtype)
    if cdt.is_complex:
        return complex_ops.unary(op, kernel, x, out, promote, p0, p1, p2)
    given = x
    if cdt is not x.dtype:
        x = convert(x, cdt, device, True)
    shape = x._shape
    if out is None:
        res, target = result(shape, rdt, device, (x._stride,)), None
    else:
        res, target = _output(op, out, shape, rdt, device, out is x, (given,))
        if x is not res and x._storage is res._storage:
            x = _read_first(res, x)[0]
    alloc.backend(device).pointwise.unary(kernel, res, x, x._stride, p0, p1, p2)
    return _finish(res, target)


def binary(op, kernel, a, b, out, promote, p0=0.0, p1=0.0, p2=0.0):
    """Applies a binary kernel to broadcast ``a`` and ``b`` (tensors or Python numbers)."""
    ta = a.__class__ is _T or isinstance(a, _T)
    tb = b.__class__ is _T or isinstance(b, _T)
    if ta and tb:
        device = a._storage.device
        if b._storage.device is not device:
            device = common_device(op, (a, b))
        dt = a.dtype if a.dtype is b.dtype else result_dtype((a, b))
    elif ta:
        device = a._storage.device
        dt = a.dtype if _same_category(a.dtype, b) else result_dtype((a, b))
    elif tb:
        device = b._storage.device
        dt = b.dtype if _same_category(b.dtype, a) else result_dtype((a, b))
    else:
        require_tensor(op, a, "input", 1)
    cdt, rdt = compute_dtypes(promote, dt)
    if cdt.is_complex:
        return complex_ops.binary(op, kernel, a, b, out, cdt, rdt, device, p0, p1, p2)
    a0, b0 = a, b
    if (cdt is _f16 or cdt is _bf16) and kernel in _OPMATH:
        s = _cpu_scalar(b)
        if s is not None:      # the kernel reads the scalar from p0, unrounded
            kernel, p0 = _OPMATH[kernel], builtins.float(s)
    if not ta or a.dtype is not cdt or a._storage.device is not device:
        a = as_operand(a, cdt, device)
    if not tb or b._storage.device is not device or (
            b.dtype is not cdt and not (cdt is _f32 and device.type == "cuda"
                                        and (b.dtype is _bf16 or b.dtype is _f16))):
        # (the Triton kernels widen a 16-bit second operand of a float32 op as they load
        # it, exactly: a residual add of an autocast output needs no cast launch)
        b = as_operand(b, cdt, device)
    sa, sb = a._shape, b._shape
    if sa == sb:
        shape, st_a, st_b = sa, a._stride, b._stride
    elif not sb:  # tensor op scalar: the most common broadcast
        shape, st_a, st_b = sa, a._stride, _zeros(len(sa))
    elif not sa:
        shape, st_a, st_b = sb, _zeros(len(sb)), b._stride
    else:
        shape, st_a, st_b = _broadcast_geometry(a, b)
    if out is None:
        res, target = result(shape, rdt, device, (st_a, st_b)), None
    else:
        res, target = _output(op, out, shape, rdt, device, out is a, (a0, b0))
        if a is not res and a._storage is res._storage:
            a, st_a = _read_first(res, a, st_a, shape)
        if b is not res and b._storage is res._storage:
            b, st_b = _read_first(res, b, st_b, shape)
    alloc.backend(device).pointwise.binary(kernel, res, a, st_a, b, st_b, p0, p1, p2)
    return _finish(res, target)


# kernels that take a float16/bfloat16 tensor's Python scalar (or CPU 0-d tensor) second
# operand at float32 precision, not rounded to 16 bits first: PyTorch's opmath rule (its
# CPU kernels read these through original_scalar_value; its other ops round the scalar)
_OPMATH = {"mul": "mul_scalar", "div": "div_scalar", "div_trunc": "div_trunc_scalar",
           "div_floor": "div_floor_scalar"}
_f16, _bf16, _f32 = _dtype.float16, _dtype.bfloat16, _dtype.float32


def _cpu_scalar(x):
    """The value of a Python number or a 0-d CPU tensor (PyTorch's "CPU scalar"), else None."""
    if not isinstance(x, _T):
        return x
    if not x._shape and x._storage.device.type == "cpu":
        return x.item()
    return None


_GEOMETRY = {}


def _broadcast_geometry(a, b):
    """(broadcast shape, strides of a, strides of b) at that shape. Memoized: a program
    broadcasts the same few layouts again and again (a bias over a batch)."""
    key = (a._shape, a._stride, b._shape, b._stride)
    g = _GEOMETRY.get(key)
    if g is None:
        shape = broadcast_shapes(a._shape, b._shape)
        g = alloc.remember(_GEOMETRY, key,
                           (shape, expand_strides(a, shape), expand_strides(b, shape)))
    return g


_ZEROS = [(0,) * n for n in range(65)]


def _zeros(n):
    """Strides of a 0-d operand broadcast to ``n`` dims."""
    return _ZEROS[n] if n < 65 else (0,) * n


def ternary(op, kernel, a, b, c, out, dtypes, p0=0.0):
    """Applies a ternary kernel; ``dtypes`` = (dtype of a, dtype of b and c, result dtype)
    chosen by the caller (where: bool condition; lerp/addcmul: one promoted dtype)."""
    tensors = [x for x in (a, b, c) if isinstance(x, _T)]
    device = common_device(op, tensors)
    da, dbc, rdt = dtypes
    if rdt.is_complex:
        return complex_ops.ternary(op, kernel, a, b, c, out, dtypes, p0)
    given = (a, b, c)
    a = as_operand(a, da, device)
    b = as_operand(b, dbc, device)
    c = as_operand(c, dbc, device)
    shape = broadcast_shapes(a._shape, b._shape, c._shape)
    if out is not None:
        res, target = _output(op, out, shape, rdt, device, out is a, given)
        a, b, c = (_read_first(res, t)[0] if t is not res and t._storage is res._storage
                   else t for t in (a, b, c))
    strides = (expand_strides(a, shape), expand_strides(b, shape), expand_strides(c, shape))
    if out is None:
        res, target = result(shape, rdt, device, strides), None
    alloc.backend(device).pointwise.ternary(kernel, res, a, strides[0], b, strides[1], c,
                                            strides[2], p0)
    return _finish(res, target)


def _same_category(dt, scalar):
    """Whether a Python scalar leaves a tensor's dtype unchanged (the common fast case)."""
    c = scalar.__class__
    if c is builtins.float:
        return dt.category == 2
    if c is builtins.int:
        return dt.category >= 1
    if c is builtins.bool:
        return True
    return False


# ---- factories for ops.yaml rows of kind unary / binary -------------------------------

def make_unary(op, kernel, promote):
    def fn(input, *, out=None):
        return unary(op, kernel, input, out, promote)
    fn.__name__ = fn.__qualname__ = op
    return fn


def make_binary(op, kernel, promote):
    def fn(input, other, *, out=None):
        return binary(op, kernel, input, other, out, promote)
    fn.__name__ = fn.__qualname__ = op
    return fn


# ---- ops with extra arguments ----------------------------------------------------------

def _alpha(a, b, alpha):
    """``alpha`` as the kernels take it: checked as PyTorch does and, for float16/bfloat16,
    rounded to the dtype (PyTorch converts alpha to the tensor's type, then computes in
    float32)."""
    if alpha.__class__ is builtins.int and alpha == 1:
        return alpha
    dt = a.dtype if isinstance(a, _T) and isinstance(b, _T) and a.dtype is b.dtype \
        else result_dtype((a, b))
    if isinstance(alpha, builtins.float) and dt.category < 2:
        raise RuntimeError("For integral input tensors, argument alpha must not be a "
                           "floating point number.")
    if isinstance(alpha, builtins.bool) and dt is not _bool:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if isinstance(alpha, builtins.complex) and not dt.is_complex:
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a "
                           "complex number.")
    checked_scalar(alpha, dt)
    if dt is _f16 or dt is _bf16:
        alpha = scalar_tensor(alpha, dt, CPU).item()
    return alpha


def add(input, other, *, alpha=1, out=None):
    """input + alpha * other, with broadcasting and type promotion."""
    alpha = _alpha(input, other, alpha)
    return binary("add", "add", input, other, out, "default", alpha)


def sub(input, other, *, alpha=1, out=None):
    """input - alpha * other."""
    _check_sub_bool(input, other)
    alpha = _alpha(input, other, alpha)
    return binary("sub", "sub", input, other, out, "default", alpha)


def subtract(input, other, *, alpha=1, out=None):
    """Alias of :func:`sub`."""
    return sub(input, other, alpha=alpha, out=out)


def _check_sub_bool(input, other):
    if _is_bool(input) and _is_bool(other):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if _is_bool(input) or _is_bool(other):
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")


def _is_bool(x):
    return x.__class__ is builtins.bool or (isinstance(x, _T) and x.dtype is _bool)


def rsub(input, other, *, alpha=1, out=None):
    """other - alpha * input."""
    if isinstance(other, _T):
        return sub(other, input, alpha=alpha, out=out)
    _check_sub_bool(input, other)
    alpha = _alpha(input, other, alpha)
    return binary("rsub", "sub", other, input, out, "default", alpha)


def reverse(name, tensor, scalar):
    """``scalar <op> tensor`` for the reflected Python operators (``2 / t``, ``2 ** t``)."""
    from . import dispatcher
    if name == "div" and not isinstance(scalar, _T):   # PyTorch: reciprocal, then multiply
        return dispatcher.function("mul")(dispatcher.function("reciprocal")(tensor), scalar)
    fn = dispatcher.function(name)
    if name == "matmul" and not isinstance(scalar, _T):
        scalar = scalar_tensor(scalar, result_dtype((tensor, scalar)), tensor._storage.device)
    return fn(scalar, tensor)
