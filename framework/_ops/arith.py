"""Pointwise ops with extra arguments or dtype rules of their own: division with rounding
modes, powers, rounding, clamps, where/lerp/addcmul/addcdiv, closeness tests, nan_to_num.

They validate their arguments as PyTorch does and then call the generic ``unary``,
``binary`` and ``ternary`` of pointwise.py, which do broadcasting, promotion and ``out=``.
"""
import builtins

from .. import _dtype
from .._tensor import Tensor
from . import alloc
from .._device import CPU
from .pointwise import (cpp_type_name, require_tensor, binary, unary, ternary, result_dtype,
                        common_device, type_name, check_out, checked_scalar, scalar_tensor,
                        _finish)


def not_implemented(kernel, dtype):
    """PyTorch's error for a kernel that does not support a dtype."""
    return NotImplementedError(f'"{kernel}" not implemented for \'{type_name(dtype)}\'')


def tensor_binary(op, kernel, promote):
    """A binary op whose second operand must be a tensor (maximum, atan2, ...)."""
    def fn(input, other, *, out=None):
        require_tensor(op, input, "input", 1)
        require_tensor(op, other, "other", 2)
        return binary(op, kernel, input, other, out, promote)
    fn.__name__ = fn.__qualname__ = op
    return fn


def _clone_into(op, input, out):
    """``input`` copied (to ``out`` if given): rounding ops on integers are the identity."""
    if out is None:
        from .views import clone
        return clone(input)
    if out is input:
        check_out(op, out, input._shape, input.dtype, True, (input,))
        return out
    target = check_out(op, out, input._shape, input.dtype, False, (input,))
    return _finish(input, target)


# ---- division, remainder, power ------------------------------------------------------------

def div(input, other, *, rounding_mode=None, out=None):
    """input / other; rounding_mode None (true division, integers give floats), 'trunc' or
    'floor'."""
    if rounding_mode is None:
        return binary("div", "div", input, other, out, "float")
    if rounding_mode == "trunc":
        return binary("div", "div_trunc", input, other, out, "default")
    if rounding_mode == "floor":
        return binary("div", "div_floor", input, other, out, "default")
    raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                       f"found '{rounding_mode}'")


def divide(input, other, *, rounding_mode=None, out=None):
    """Alias of :func:`div`."""
    return div(input, other, rounding_mode=rounding_mode, out=out)


def floor_divide(input, other, *, out=None):
    """input // other, rounding toward negative infinity (Python semantics)."""
    return binary("floor_divide", "div_floor", input, other, out, "default")


def remainder(input, other, *, out=None):
    """Python-style modulus: the result has the sign of ``other``."""
    return binary("remainder", "remainder", input, other, out, "default")


def fmod(input, other, *, out=None):
    """C-style remainder: the result has the sign of ``input``."""
    require_tensor("fmod", input, "input", 1)
    return binary("fmod", "fmod", input, other, out, "default")


def pow(input, exponent, *, out=None):
    """input ** exponent; either may be a Python number (but not both)."""
    if (not isinstance(exponent, Tensor) and builtins.type(exponent) is builtins.int
            and exponent < 0 and isinstance(input, Tensor)
            and result_dtype((input, exponent)).category < 2):
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        raise TypeError(f"pow() received an invalid combination of arguments - got "
                        f"({type(input).__name__}, {type(exponent).__name__})")
    if isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        dt = result_dtype((input, exponent))
        if dt is _dtype.bool:  # bool ** bool: x ** True is x, x ** False is True
            one = isreal(input)
            return binary("pow", "bitwise_or", input, one, out, "default") if not exponent \
                else binary("pow", "bitwise_and", input, one, out, "default")
        if dt.itemsize == 2 or dt.category < 2:    # the exponent in the dtype, checked
            checked_scalar(exponent, dt)
        if dt is _dtype.bfloat16:  # PyTorch rounds the exponent to bfloat16 first
            exponent = scalar_tensor(exponent, dt, CPU).item()
        if dt.category == 2 and dt is not _dtype.float16:  # PyTorch's Half uses plain pow
            if dt is not input.dtype:
                input = input.to(dt)
            return unary("pow", "pow_scalar", input, out, "same", builtins.float(exponent))
    return binary("pow", "pow", input, exponent, out, "default")


def float_power(input, exponent, *, out=None):
    """input ** exponent computed in double precision (result float64)."""
    f64 = _dtype.float64
    if any(x.dtype.is_complex if isinstance(x, Tensor) else isinstance(x, builtins.complex)
           for x in (input, exponent)):
        f64 = _dtype.complex128        # complex inputs compute in complex128
    if out is not None and out.dtype is not f64:
        which = "base given to float_power_" if out is input else "output given to float_power"
        raise RuntimeError(f"the {which} has dtype {type_name(out.dtype)} but the operation's "
                           f"result requires dtype {f64.scalar_name}")
    num = builtins.complex if f64.is_complex else builtins.float
    a = input.to(f64) if isinstance(input, Tensor) else num(input)
    b = exponent.to(f64) if isinstance(exponent, Tensor) else num(exponent)
    return binary("float_power", "pow", a, b, out, "default")


def square(input, *, out=None):
    """input * input (bool becomes int64, as in PyTorch)."""
    if input.dtype is _dtype.bool:
        input = input.to(_dtype.int64)
    return binary("square", "mul", input, input, out, "default")


def positive(input):
    """Returns ``input`` itself (bool is refused, as in PyTorch)."""
    if input.dtype is _dtype.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def neg(input, *, out=None):
    """-input."""
    require_tensor("neg", input, "input", 1)
    if input.dtype is _dtype.bool:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If "
                           "you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")
    return unary("neg", "neg", input, out, "same")


def negative(input, *, out=None):
    """Alias of :func:`neg`."""
    return neg(input, out=out)


# ---- rounding ------------------------------------------------------------------------------

def _rounding(op, kernel, err):
    def fn(input, *, out=None):
        require_tensor(op, input, "input", 1)
        if input.dtype.category == 2:
            return unary(op, kernel, input, out, "same")
        if input.dtype.is_complex:
            if kernel == "round":
                raise not_implemented(err, input.dtype)
            raise NotImplementedError(f"{kernel} is not supported for complex inputs")
        if input.dtype is _dtype.bool:
            raise not_implemented(err, input.dtype)
        return _clone_into(op, input, out)
    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = f"Elementwise {kernel} (integers are returned unchanged)."
    return fn


floor = _rounding("floor", "floor", "floor_vml_cpu")
ceil = _rounding("ceil", "ceil", "ceil_vml_cpu")
trunc = _rounding("trunc", "trunc", "trunc_vml_cpu")
fix = _rounding("fix", "trunc", "trunc_vml_cpu")
_round0 = _rounding("round", "round", "round_vml_cpu")


def round(input, *, decimals=0, out=None):
    """Rounds half to even; with ``decimals`` rounds to that many decimal places."""
    if decimals == 0:
        return _round0(input, out=out)
    if input.dtype.category != 2:
        raise not_implemented("round_cpu", input.dtype)
    return unary("round", "round_decimals", input, out, "same", builtins.float(decimals))


def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    """Replaces NaN, +inf and -inf with ``nan``, ``posinf`` and ``neginf`` (by default the
    dtype's largest and lowest finite values)."""
    if input.dtype.category < 2:
        return _clone_into("nan_to_num", input, out)
    fi = _dtype.finfo(input.dtype)
    hi = fi.max if posinf is None else posinf
    lo = fi.min if neginf is None else neginf
    return unary("nan_to_num", "nan_to_num", input, out, "same", builtins.float(nan),
                 builtins.float(hi), builtins.float(lo))


def logit(input, eps=None, *, out=None):
    """log(p / (1 - p)), with p clamped to [eps, 1 - eps] when eps is given."""
    if eps is not None and input.dtype.category == 2:
        checked_scalar(eps, input.dtype)
    return unary("logit", "logit", input, out, "float",
                 0.0 if eps is None else builtins.float(eps), 0.0 if eps is None else 1.0)


def isreal(input):
    """True everywhere: framework tensors are real."""
    out = alloc.empty(input._shape, _dtype.bool, input._storage.device)
    alloc.backend(out._storage.device).copy.fill(out, True)
    return out


# ---- clamps ----------------------------------------------------------------------------------

def clamp(input, min=None, max=None, *, out=None):
    """Clamps to [min, max] (numbers or tensors); min is applied first, so min > max gives
    max everywhere. NaN stays NaN."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return _clamp_tensor(input, min, max, out)
    given = [x for x in (input, min, max) if x is not None]
    dt = result_dtype(given)
    if dt is _dtype.bool:
        raise not_implemented("clamp_scalar_cpu", dt)
    which = (1 if min is not None else 0) | (2 if max is not None else 0)
    lo = 0.0 if min is None else checked_scalar(min, dt)
    hi = 0.0 if max is None else checked_scalar(max, dt)
    if dt is not input.dtype:
        input = input.to(dt)
    return unary("clamp", "clamp", input, out, "same", builtins.float(lo), builtins.float(hi),
                 builtins.float(which))


def _clamp_tensor(input, min, max, out):
    if (min is not None and not isinstance(min, Tensor)) or \
            (max is not None and not isinstance(max, Tensor)):
        raise TypeError("clamp() received an invalid combination of arguments - got (Tensor, "
                        f"min={type(min).__name__}, max={type(max).__name__})")
    given = [x for x in (input, min, max) if x is not None]
    dt = result_dtype(given)
    if dt is _dtype.bool and min is not None and max is not None:
        raise not_implemented("clamp_cpu", dt)
    if max is None:  # one bound: PyTorch's max/min kernels, which take bool too
        return binary("clamp", "maximum", input, min, out, "default")
    if min is None:
        return binary("clamp", "minimum", input, max, out, "default")
    return ternary("clamp", "clamp", input, min, max, out, (dt, dt, dt))


def clip(input, min=None, max=None, *, out=None):
    """Alias of :func:`clamp`."""
    return clamp(input, min, max, out=out)


def clamp_min(input, min, *, out=None):
    """Clamps from below."""
    return clamp(input, min, None, out=out)


def clamp_max(input, max, *, out=None):
    """Clamps from above."""
    return clamp(input, None, max, out=out)


# ---- three operands ------------------------------------------------------------------------

def where(condition, input=None, other=None, *, out=None):
    """input where condition is True, else other (tensors or numbers, broadcast).
    ``where(condition)`` alone is ``nonzero(condition, as_tuple=True)``."""
    if input is None and other is None:
        from .masked import where_condition
        return where_condition(condition)
    if input is None or other is None:
        raise TypeError("where() missing an argument: expected (condition) or "
                        "(condition, input, other)")
    require_tensor("where", condition, "condition", 1)
    if condition.dtype is not _dtype.bool:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {type_name(condition.dtype)}")
    dt = result_dtype([x for x in (input, other)])
    return ternary("where", "where", condition, input, other, out, (_dtype.bool, dt, dt))


def where_method(self, condition, other):
    """``Tensor.where(condition, other)``: self where condition is True, else other."""
    from . import dispatcher
    return dispatcher.function("where")(condition, self, other)   # the recorded op


def lerp(input, end, weight, *, out=None):
    """input + weight * (end - input); weight a number or a tensor of input's dtype."""
    require_tensor("lerp", input, "input", 1)
    require_tensor("lerp", end, "end", 2)
    for name, t in (("end", end), ("weight", weight)):
        if isinstance(t, Tensor) and t.dtype is not input.dtype:
            raise RuntimeError(f"expected dtype {cpp_type_name(input.dtype)} for `{name}` but got "
                               f"dtype {cpp_type_name(t.dtype)}")
    if not isinstance(weight, Tensor):
        weight = checked_scalar(weight, input.dtype, opmath=True)
        if not input.dtype.is_complex:      # complex_ops takes a complex weight as it is
            weight = builtins.float(weight)
        return binary("lerp", "lerp", input, end, out, "same", weight)
    dt = input.dtype
    return ternary("lerp", "lerp", input, end, weight, out, (dt, dt, dt))


def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    """input + value * tensor1 * tensor2."""
    dt = result_dtype((input, tensor1, tensor2))
    if dt is _dtype.bool:
        raise not_implemented("addcmul_cpu_out", dt)
    return ternary("addcmul", "addcmul", input, tensor1, tensor2, out, (dt, dt, dt),
                   _scalar_value(value, dt))


_ADDCDIV_INT = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv "
    "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
    "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for "
    "integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
    "addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), "
    "for all dtypes.")


def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    """input + value * tensor1 / tensor2 (integer tensor1 and tensor2 are refused)."""
    if tensor1.dtype.category < 2 and tensor2.dtype.category < 2:
        raise RuntimeError(_ADDCDIV_INT)
    dt = result_dtype((input, tensor1, tensor2))
    return ternary("addcdiv", "addcdiv", input, tensor1, tensor2, out, (dt, dt, dt),
                   _scalar_value(value, dt))


def _scalar_value(value, dt):
    if isinstance(value, Tensor):
        value = value.item()
    value = checked_scalar(value, dt, opmath=True)
    return value if dt.is_complex else builtins.float(value)   # complex_ops: any number


# ---- closeness and equality ---------------------------------------------------------------

def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|input - other| <= atol + rtol * |other|, elementwise (both must share a dtype)."""
    require_tensor("isclose", input, "input", 1)
    require_tensor("isclose", other, "other", 2)
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{type_name(input.dtype)} did not match {type_name(other.dtype)}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    return binary("isclose", "isclose", input, other, None, "compare", builtins.float(rtol),
                  builtins.float(atol), 1.0 if equal_nan else 0.0)


def _all_true(t):
    return builtins.bool(t._host_array().all())


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether every element of input is close to other (see :func:`isclose`)."""
    require_tensor("allclose", other, "other", 2)
    close = isclose(input, other, rtol, atol, equal_nan)
    if close._storage.device.type == "meta":   # PyTorch reads it with item()
        raise RuntimeError("Tensor.item() cannot be called on meta tensors")
    return _all_true(close)


def equal(input, other):
    """True if the two tensors have the same shape and elements."""
    require_tensor("equal", input, "input", 1)
    require_tensor("equal", other, "other", 2)
    common_device("equal", (input, other))
    if input._storage.device.type == "meta":
        raise alloc.meta_unsupported("aten::equal")
    if input._shape != other._shape:
        return False
    if input.dtype.is_float8 and other.dtype is input.dtype:    # as PyTorch's kernel
        from .._float8_ops import refuse
        raise refuse("equal_notnan", input.dtype, input._storage.device.type)
    return _all_true(binary("equal", "eq", input, other, None, "compare"))


def heaviside(input, values, *, out=None):
    """0 where input < 0, values where input == 0, 1 where input > 0."""
    require_tensor("heaviside", input, "input", 1)
    require_tensor("heaviside", values, "values", 2)
    if input.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    return binary("heaviside", "heaviside", input, values, out, "default")


def xlogy(input, other, *, out=None):
    """input * log(other), 0 where input == 0 (unless other is NaN)."""
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError(f"xlogy() received an invalid combination of arguments - got "
                        f"({type(input).__name__}, {type(other).__name__})")
    return binary("xlogy", "xlogy", input, other, out, "float")


# ---- binary ops whose operands must both be tensors ----------------------------------------

maximum = tensor_binary("maximum", "maximum", "default")
minimum = tensor_binary("minimum", "minimum", "default")
fmax = tensor_binary("fmax", "fmax", "default")
fmin = tensor_binary("fmin", "fmin", "default")
atan2 = tensor_binary("atan2", "atan2", "float")
arctan2 = tensor_binary("arctan2", "atan2", "float")
hypot = tensor_binary("hypot", "hypot", "default")
logaddexp = tensor_binary("logaddexp", "logaddexp", "default")
logaddexp2 = tensor_binary("logaddexp2", "logaddexp2", "default")
nextafter = tensor_binary("nextafter", "nextafter", "default")
ldexp = tensor_binary("ldexp", "ldexp", "float")
logical_and = tensor_binary("logical_and", "logical_and", "compare")
logical_or = tensor_binary("logical_or", "logical_or", "compare")
logical_xor = tensor_binary("logical_xor", "logical_xor", "compare")
