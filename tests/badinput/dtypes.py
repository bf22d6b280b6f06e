"""Dtypes: int/bool/float mixes, in-place result-type errors, unsupported dtypes, casts, dtype
arguments of the wrong kind."""
from badinput import C, E, OK


def i3(m, d):
    return m.arange(3, device=d)


def f3(m, d):
    return m.arange(3., device=d)


def b3(m, d):
    return m.tensor([True, False, True], device=d)


R, T, I, V = "RuntimeError", "TypeError", "IndexError", "ValueError"
NI = "NotImplementedError"
CAST_FL = "result type Float can't be cast to the desired output type Long"

CASES = [
    # in-place ops whose result type cannot be stored in the target
    C("int_add_float_inplace", lambda m, d, t: t.add_(1.5), E(R, CAST_FL), target=i3),
    C("int_add_float_tensor_inplace", lambda m, d, t: t.add_(f3(m, d)), E(R, CAST_FL), target=i3),
    C("int_mul_float_inplace", lambda m, d, t: t.mul_(0.5), E(R, CAST_FL), target=i3),
    C("int_div_inplace", lambda m, d, t: t.div_(2), E(R, CAST_FL), target=i3),
    C("int_true_divide_inplace", lambda m, d, t: t.true_divide_(i3(m, d)), E(R, CAST_FL), target=i3),
    C("int_sqrt_inplace", lambda m, d, t: t.sqrt_(), E(R, CAST_FL), target=i3),
    C("int_exp_inplace", lambda m, d, t: t.exp_(), E(R, CAST_FL), target=i3),
    C("int_sigmoid_inplace", lambda m, d, t: t.sigmoid_(), E(R, CAST_FL), target=i3),
    C("int_pow_float_inplace", lambda m, d, t: t.pow_(0.5), E(R, CAST_FL), target=i3),
    C("int_lerp_inplace", lambda m, d, t: t.lerp_(i3(m, d), 0.5), E(NI, "not implemented for 'Long'"), target=i3),
    C("bool_add_int_inplace", lambda m, d, t: t.add_(2), E(R, "result type Long can't be cast to the desired output type Bool"), target=b3),
    C("bool_mul_float_inplace", lambda m, d, t: t.mul_(f3(m, d)), E(R, "result type Float can't be cast to the desired output type Bool"), target=b3),
    C("int_where_float_out", lambda m, d, t: m.add(f3(m, d), f3(m, d), out=t), E(R, CAST_FL), target=i3),
    C("int_clamp_float_inplace", lambda m, d, t: t.clamp_(0.5, 1.5), E(R, "result type Float can't be cast to the desired output type long int"), target=i3),
    C("int8_add_int64_inplace_ok", lambda m, d, t: t.add_(m.tensor([1000, 0, 0], device=d)), OK, target=lambda m, d: m.arange(3, dtype=m.int8, device=d)),
    C("float_add_double_inplace_ok", lambda m, d, t: t.add_(m.ones(3, dtype=m.float64, device=d)), OK, target=f3),
    C("int_floor_divide_float_inplace", lambda m, d, t: t.floor_divide_(1.5), E(R, CAST_FL), target=i3),
    C("int_copy_float_ok", lambda m, d, t: t.copy_(m.tensor([1.7, -1.7, 2.5], device=d)), OK, target=i3),
    # bool arithmetic
    C("bool_sub", lambda m, d: b3(m, d) - b3(m, d), E(R, "Subtraction, the `-` operator, with two bool tensors is not supported.")),
    C("bool_neg", lambda m, d: -b3(m, d), E(R, "Negation, the `-` operator, on a bool tensor is not supported.")),
    C("bool_rsub", lambda m, d: m.rsub(b3(m, d), b3(m, d)), E(R, "Subtraction, the `-` operator, with two bool tensors is not supported.")),
    C("bool_sub_scalar", lambda m, d: b3(m, d) - True, E(R, "Subtraction, the `-` operator, with two bool tensors is not")),
    C("bool_add_ok", lambda m, d: b3(m, d) + b3(m, d), OK),
    C("bool_mul_int_ok", lambda m, d: b3(m, d) * 3, OK),
    C("bool_sum_ok", lambda m, d: b3(m, d).sum(), OK),
    C("bool_cumsum_ok", lambda m, d: b3(m, d).cumsum(0), OK),
    # bitwise ops on floats
    C("bitwise_and_float", lambda m, d: f3(m, d) & f3(m, d), E(NI, "not implemented for 'Float'")),
    C("bitwise_or_float", lambda m, d: m.bitwise_or(f3(m, d), 1), E(NI, "not implemented for 'Float'")),
    C("bitwise_not_float", lambda m, d: ~f3(m, d), E(T, "~ (operator.invert) is only implemented on integer and Boolean-type")),
    C("bitwise_xor_float_int", lambda m, d: m.bitwise_xor(i3(m, d), f3(m, d)), E(NI, "not implemented for 'Float'")),
    C("shift_float", lambda m, d: f3(m, d) << 1, E(NI, "not implemented for 'Float'")),
    C("shift_ok_neg", lambda m, d: i3(m, d) << -1, OK),
    C("shift_ok_big", lambda m, d: i3(m, d) << 70, OK),
    C("bitwise_not_bool_ok", lambda m, d: ~b3(m, d), OK),
    # integer arithmetic edge cases
    C("int_pow_neg", lambda m, d: i3(m, d) ** -1, E(R, "Integers to negative integer powers are not allowed.")),
    C("int_pow_neg_tensor", lambda m, d: m.pow(2, m.tensor([-1], device=d)), OK),
    C("int_remainder_zero", lambda m, d: i3(m, d) % 0, E(R, "ZeroDivisionError")),
    C("int_floor_divide_zero", lambda m, d: i3(m, d) // 0, E(R, "ZeroDivisionError")),
    C("int_fmod_zero", lambda m, d: m.fmod(i3(m, d), 0), E(R, "ZeroDivisionError")),
    C("int_remainder_zero_tensor", lambda m, d: i3(m, d) % m.zeros(3, dtype=m.int64, device=d), E(R, "ZeroDivisionError")),
    C("int_div_zero_ok", lambda m, d: i3(m, d) / 0, OK),
    C("int_div_trunc_zero", lambda m, d: m.div(i3(m, d), 0, rounding_mode="trunc"), E(R, "ZeroDivisionError")),
    C("div_bad_rounding", lambda m, d: m.div(f3(m, d), 2, rounding_mode="round"), E(R, "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found 'round'")),
    C("int_pow_ok_zero", lambda m, d: i3(m, d) ** 0, OK),
    C("int_pow_float_ok", lambda m, d: i3(m, d) ** 0.5, OK),
    C("int_overflow_mul_ok", lambda m, d: m.tensor([2**62], device=d) * 4, OK),
    C("uint8_sub_ok", lambda m, d: m.tensor([1], dtype=m.uint8, device=d) - 2, OK),
    C("int8_uint8_promote_ok", lambda m, d: m.ones(2, dtype=m.int8, device=d) + m.ones(2, dtype=m.uint8, device=d), OK),
    C("int_abs_min_ok", lambda m, d: m.tensor([-2**63], device=d).abs(), OK),
    # operations that reject a dtype
    C("mean_int", lambda m, d: i3(m, d).mean(), E(R, "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: Long")),
    C("mean_bool", lambda m, d: b3(m, d).mean(), E(R, "mean(): could not infer output dtype")),
    C("std_int", lambda m, d: i3(m, d).std(), E(R, "std and var only support floating point and complex dtypes")),
    C("var_bool", lambda m, d: b3(m, d).var(), E(R, "std and var only support floating point and complex dtypes")),
    C("nanmean_int", lambda m, d: i3(m, d).nanmean(), E(R, "nanmean(): expected input to have floating point or complex dtype but got Long")),
    C("argmax_bool", lambda m, d: b3(m, d).argmax(), E(R, "argmax(): does not support bool input")),
    C("histc_int", lambda m, d: m.histc(i3(m, d), 3), E(NI, "not implemented for 'Long'")),
    C("erfinv_bool_ok", lambda m, d: m.erfinv(b3(m, d)), OK),
    C("logit_int_ok", lambda m, d: m.logit(i3(m, d)), OK),
    C("cumsum_bool_out_dtype_ok", lambda m, d: b3(m, d).cumsum(0, dtype=m.float32), OK),
    C("sum_dtype_ok", lambda m, d: f3(m, d).sum(dtype=m.int64), OK),
    C("clamp_bool", lambda m, d: b3(m, d).clamp(0, 1), OK),
    C("sign_bool_ok", lambda m, d: b3(m, d).sign(), OK),
    C("trunc_int_ok", lambda m, d: i3(m, d).trunc(), OK),
    C("round_decimals_int", lambda m, d: i3(m, d).round(decimals=1), E(NI, "not implemented for 'Long'")),
    C("nan_to_num_int_ok", lambda m, d: i3(m, d).nan_to_num(), OK),
    C("lerp_int", lambda m, d: m.lerp(i3(m, d), i3(m, d), 0.5), E(NI, "not implemented for 'Long'")),
    C("lerp_dtype_mismatch", lambda m, d: m.lerp(f3(m, d), f3(m, d).double(), 0.5), E(R, "expected dtype float for `end` but got dtype double")),
    C("addcdiv_int", lambda m, d: m.addcdiv(i3(m, d), i3(m, d), i3(m, d)), E(R, "Integer division with addcdiv is no longer supported")),
    C("xlogy_int_ok", lambda m, d: m.xlogy(i3(m, d), i3(m, d)), OK),
    C("isnan_int_ok", lambda m, d: i3(m, d).isnan(), OK),
    C("signbit_bool_ok", lambda m, d: b3(m, d).signbit(), OK),
    C("heaviside_mixed", lambda m, d: m.heaviside(f3(m, d), i3(m, d)), E(R, "heaviside is not yet implemented for tensors with different dtypes")),
    C("copysign_int_ok", lambda m, d: m.copysign(i3(m, d), -1), OK),
    C("gcd_like_logaddexp_int", lambda m, d: m.logaddexp(i3(m, d), i3(m, d)), E(NI, "not implemented for 'Long'")),
    C("frac_int", lambda m, d: i3(m, d).frac(), E(NI, "not implemented for 'Long'")),
    C("ldexp_int_ok", lambda m, d: m.ldexp(i3(m, d), i3(m, d)), OK),
    # matrix products with mixed dtypes
    C("matmul_int_float", lambda m, d: i3(m, d).reshape(1, 3) @ f3(m, d).reshape(3, 1), E(R, "expected m1 and m2 to have the same dtype, but got: long int != float")),
    C("mm_float_double", lambda m, d: m.mm(f3(m, d).reshape(1, 3), f3(m, d).double().reshape(3, 1)), E(R, "expected m1 and m2 to have the same dtype, but got: float != double")),
    C("dot_int_float", lambda m, d: m.dot(i3(m, d), f3(m, d)), E(R, "dot : expected both vectors to have same dtype, but found Long and Float")),
    C("bmm_mixed", lambda m, d: m.bmm(m.ones(1, 2, 2, device=d), m.ones(1, 2, 2, dtype=m.float64, device=d)), E(R, "expected scalar type Float but found Double")),
    C("mv_mixed", lambda m, d: m.mv(m.ones(2, 2, device=d), m.ones(2, dtype=m.int64, device=d)), E(R, "addmv input tensors must have the same dtype, but got Long, Float,")),
    C("mm_int_ok", lambda m, d: m.mm(i3(m, d).reshape(1, 3), i3(m, d).reshape(3, 1)), OK),
    C("mm_bool", lambda m, d: m.mm(b3(m, d).reshape(1, 3), b3(m, d).reshape(3, 1)), E(NI, "not implemented for 'Bool'")),
    C("matmul_half_ok", lambda m, d: m.ones(2, 3, dtype=m.float16, device=d) @ m.ones(3, 2, dtype=m.float16, device=d), OK),
    C("outer_mixed_ok", lambda m, d: m.outer(i3(m, d), f3(m, d)), OK),
    # dtype arguments and casts
    C("zeros_dtype_str", lambda m, d: m.zeros(3, dtype="float32", device=d), E(T, "zeros(): argument 'dtype' must be torch.dtype, not str")),
    C("zeros_dtype_pytype_ok", lambda m, d: m.zeros(3, dtype=float, device=d), OK),
    C("zeros_dtype_int_ok", lambda m, d: m.zeros(3, dtype=int, device=d), OK),
    C("zeros_dtype_bool_ok", lambda m, d: m.zeros(3, dtype=bool, device=d), OK),
    C("tensor_dtype_obj", lambda m, d: m.tensor([1.], dtype=object, device=d), E(T, "tensor(): argument 'dtype' must be torch.dtype, not type")),
    C("to_str_dtype", lambda m, d: f3(m, d).to("float32"), E(R, "Invalid device string: 'float32'")),
    C("to_ok_int", lambda m, d: m.tensor([1.7, -1.7], device=d).to(m.int64), OK),
    C("to_ok_bool", lambda m, d: m.tensor([0., -0., 0.1, float("nan")], device=d).to(m.bool), OK),
    C("to_ok_half_overflow", lambda m, d: m.tensor([1e5, -1e5], device=d).to(m.float16), OK),
    C("to_ok_uint8_from_bool", lambda m, d: b3(m, d).to(m.uint8), OK),
    C("type_as_ok", lambda m, d: f3(m, d).type_as(i3(m, d)), OK),
    C("cat_ok_int_bool", lambda m, d: m.cat([i3(m, d), b3(m, d)]), OK),
    C("where_ok_int_float", lambda m, d: m.where(b3(m, d), i3(m, d), f3(m, d)), OK),
    C("where_cond_float", lambda m, d: m.where(f3(m, d), f3(m, d), f3(m, d)), E(R, "where expected condition to be a boolean tensor, but got a tensor with dtype Float")),
    C("where_ok_scalar_promote", lambda m, d: m.where(b3(m, d), i3(m, d), 2.5), OK),
    C("result_type_ok", lambda m, d: m.result_type(i3(m, d), 1.0), OK),
    C("promote_types_ok", lambda m, d: m.promote_types(m.uint8, m.int8), OK),
    C("can_cast_ok", lambda m, d: m.can_cast(m.float32, m.int32), OK),
    C("index_put_dtype_mismatch", lambda m, d, t: t.index_put_((m.tensor([0], device=d),), m.tensor([1.5], dtype=m.float64, device=d)), E(R, "Index put requires the source and destination dtypes match, got Float for the destination and Double for the source.")),
    C("masked_fill_bool_value_float_ok", lambda m, d: b3(m, d).masked_fill(b3(m, d), 0.5), OK),
    C("masked_fill_int_float_ok", lambda m, d: i3(m, d).masked_fill(b3(m, d), 1.5), OK),
    C("scatter_dtype_mismatch", lambda m, d, t: t.scatter_(0, m.tensor([0], device=d), m.ones(1, dtype=m.float64, device=d)), E(R, "scatter(): Expected self.dtype to be equal to src.dtype")),
    C("index_add_dtype_mismatch", lambda m, d, t: t.index_add_(0, m.tensor([0], device=d), m.ones(1, dtype=m.float64, device=d)), E(R, "index_add_(): self (Float) and source (Double) must have the same scalar type")),
    C("index_copy_dtype_mismatch", lambda m, d, t: t.index_copy_(0, m.tensor([0], device=d), m.ones(1, dtype=m.int64, device=d)), E(R, "index_copy_(): self and source expected to have the same dtype, but got (self) Float and (source) Long")),
    C("masked_scatter_dtype_mismatch", lambda m, d, t: t.masked_scatter_(b3(m, d), m.ones(3, dtype=m.float64, device=d)), E(R, "masked_scatter: expected self and source to have same dtypes but")),
    C("put_dtype_mismatch", lambda m, d, t: t.put_(m.tensor([0], device=d), m.ones(1, dtype=m.float64, device=d)), E(R, "put_(): self and source expected to have the same dtype, but got self.dtype = Float and source.dtype = Double")),
    C("gather_out_dtype", lambda m, d, t: m.gather(f3(m, d), 0, m.tensor([0], device=d), out=t), E(R, "Expected out tensor to have dtype float, but got long int instead"), target=i3),
]

for c in CASES:   # the in-place index ops above write into a float target
    if c.target is None and c.fn.__code__.co_argcount == 3:
        c.target = f3
