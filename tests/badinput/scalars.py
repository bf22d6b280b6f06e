"""Scalars: str and None operands, NumPy scalars, out-of-range integers for the target dtype,
NaN and inf into integers, item()/bool() of many elements, ragged or odd tensor() data."""
import numpy as np

from badinput import C, E, OK

R, T, I, V = "RuntimeError", "TypeError", "IndexError", "ValueError"
NI = "NotImplementedError"
NAN, INF = float("nan"), float("inf")


def f3(m, d):
    return m.arange(3., device=d)


def i8(m, d):
    return m.tensor([1, 2, 3], dtype=m.int8, device=d)


def u8(m, d):
    return m.tensor([1, 2, 3], dtype=m.uint8, device=d)


def i3(m, d):
    return m.arange(3, device=d)


CASES = [
    # operands that are not numbers
    C("add_str", lambda m, d: f3(m, d) + "a", E(T, "unsupported operand type(s) for +: 'Tensor' and 'str'")),
    C("add_none", lambda m, d: f3(m, d) + None, E(T, "unsupported operand type(s) for +: 'Tensor' and 'NoneType'")),
    C("mul_list", lambda m, d: f3(m, d) * [1, 2], E(T, "only integer tensors of a single element can be converted to an index")),
    C("add_method_str", lambda m, d: f3(m, d).add("a"), E(T, "add(): argument 'other' (position 1) must be Tensor, not str")),
    C("add_alpha_str", lambda m, d: m.add(f3(m, d), 1, alpha="a"), E(T, "add(): argument 'alpha' must be Number, not str")),
    C("fill_str", lambda m, d, t: t.fill_("a"), E(T, "fill_() received an invalid combination of arguments"), target=f3),
    C("fill_none", lambda m, d, t: t.fill_(None), E(T, "fill_() received an invalid combination of arguments"), target=f3),
    C("fill_1d_tensor", lambda m, d, t: t.fill_(m.ones(2, device=d)), E(R, "fill_ only supports 0-dimension value tensor but got tensor with 1 dimensions."), target=f3),
    C("clamp_str", lambda m, d: f3(m, d).clamp(min="a"), E(T, "clamp() received an invalid combination of arguments")),
    C("clamp_none_none", lambda m, d: f3(m, d).clamp(), E(R, "At least one of 'min' or 'max' must not be None")),
    C("pow_str", lambda m, d: f3(m, d).pow("2"), E(T, "pow() received an invalid combination of arguments")),
    C("masked_fill_str", lambda m, d: f3(m, d).masked_fill(f3(m, d) > 0, "a"), E(T, "masked_fill() received an invalid combination of arguments")),
    C("where_str", lambda m, d: m.where(f3(m, d) > 0, f3(m, d), "a"), E(T, "where() received an invalid combination of arguments")),
    C("full_str_value", lambda m, d: m.full((2,), "a", device=d), E(T, "full(): argument 'fill_value' (position 2) must be Number, not str")),
    C("full_none_value", lambda m, d: m.full((2,), None, device=d), E(T, "full(): argument 'fill_value' (position 2) must be Number, not")),
    C("eq_str_ok", lambda m, d: f3(m, d) == "a", OK),
    C("lt_str", lambda m, d: f3(m, d) < "a", E(T, "'<' not supported between instances of 'Tensor' and 'str'")),
    # NumPy scalars keep their value and type
    C("full_np_float32", lambda m, d: m.full((2,), np.float32(1.5), device=d), OK),
    C("full_np_int64", lambda m, d: m.full((2,), np.int64(2), device=d), OK),
    C("full_np_bool", lambda m, d: m.full((2,), np.bool_(True), device=d), OK),
    C("full_np_float16", lambda m, d: m.full((2,), np.float16(0.5), device=d), OK),
    C("add_np_float64", lambda m, d: i3(m, d) + np.float64(1.5), OK),
    C("add_np_int64", lambda m, d: f3(m, d) + np.int64(2), OK),
    C("mul_np_float32_int", lambda m, d: i3(m, d) * np.float32(0.5), OK),
    C("pow_np", lambda m, d: f3(m, d) ** np.float64(2), OK),
    C("fill_np", lambda m, d, t: t.fill_(np.float32(2.5)), OK, target=f3),
    C("clamp_np", lambda m, d: f3(m, d).clamp(np.float64(0.5), np.int64(1)), OK),
    C("tensor_np_scalar", lambda m, d: m.tensor(np.float32(1.5), device=d), OK),
    C("tensor_np_int_list", lambda m, d: m.tensor([np.int64(1), np.int64(2)], device=d), OK),
    C("tensor_np_mixed_list", lambda m, d: m.tensor([np.int32(1), 2.5], device=d), OK),
    C("full_ok_bool", lambda m, d: m.full((2,), True, device=d), OK),
    C("full_ok_int", lambda m, d: m.full((2,), 2, device=d), OK),
    C("scalar_tensor_ok", lambda m, d: m.scalar_tensor(2, device=d), OK),
    # integers out of range for the dtype
    C("tensor_2_63", lambda m, d: m.tensor([2**63], device=d), E(V, "Overflow when unpacking long long")),
    C("tensor_2_64", lambda m, d: m.tensor(2**64, device=d), E(V, "Overflow when unpacking long long")),
    C("tensor_neg_2_63_ok", lambda m, d: m.tensor([-2**63, 2**63 - 1], device=d), OK),
    C("tensor_int8_300", lambda m, d: m.tensor([300], dtype=m.int8, device=d), E(R, "value cannot be converted to type")),
    C("tensor_uint8_neg", lambda m, d: m.tensor([-1], dtype=m.uint8, device=d), OK),
    C("tensor_int32_big", lambda m, d: m.tensor([2**31], dtype=m.int32, device=d), E(R, "value cannot be converted to type")),
    C("tensor_int16_big", lambda m, d: m.tensor(40000, dtype=m.int16, device=d), E(R, "value cannot be converted to type")),
    C("tensor_bool_from_2_ok", lambda m, d: m.tensor([2, 0], dtype=m.bool, device=d), OK),
    C("full_int8_300", lambda m, d: m.full((2,), 300, dtype=m.int8, device=d), E(R, "value cannot be converted to type")),
    C("full_uint8_neg", lambda m, d: m.full((2,), -1, dtype=m.uint8, device=d), OK),
    C("fill_int8_300", lambda m, d, t: t.fill_(300), E(R, "value cannot be converted to type"), target=i8),
    C("fill_uint8_256", lambda m, d, t: t.fill_(256), E(R, "value cannot be converted to type"), target=u8),
    C("add_int8_300", lambda m, d: i8(m, d) + 300, OK),
    C("add_inplace_int8_300", lambda m, d, t: t.add_(300), OK, target=i8),
    C("mul_uint8_neg", lambda m, d: u8(m, d) * -1, OK),
    C("masked_fill_int8_300", lambda m, d, t: t.masked_fill_(t > 1, 300), E(R, "value cannot be converted to type"), target=i8),
    C("index_fill_int8_300", lambda m, d, t: t.index_fill_(0, m.tensor([0], device=d), 300), E(R, "value cannot be converted to type"), target=i8),
    C("clamp_int8_300", lambda m, d: i8(m, d).clamp(max=300), E(R, "value cannot be converted to type")),
    C("new_full_int8_300", lambda m, d: i8(m, d).new_full((2,), 300), E(R, "value cannot be converted to type")),
    C("full_like_int8_300", lambda m, d: m.full_like(i8(m, d), 300), E(R, "value cannot be converted to type")),
    C("add_int64_2_63", lambda m, d: i3(m, d) + 2**63, OK),
    C("add_float_2_63_ok", lambda m, d: f3(m, d) + 2**63, OK),
    C("add_float_2_70", lambda m, d: f3(m, d) + 2**70, E("OverflowError", "int too big to convert")),
    C("mul_int_huge_float_ok", lambda m, d: i3(m, d) * 1e300, OK),
    # NaN and inf into integers
    C("tensor_nan_int64", lambda m, d: m.tensor([NAN], dtype=m.int64, device=d), E(R, "value cannot be converted to type")),
    C("tensor_inf_int32", lambda m, d: m.tensor([INF], dtype=m.int32, device=d), E(R, "value cannot be converted to type")),
    C("full_nan_int64", lambda m, d: m.full((2,), NAN, dtype=m.int64, device=d), E(R, "value cannot be converted to type")),
    C("fill_nan_int", lambda m, d, t: t.fill_(NAN), E(R, "value cannot be converted to type"), target=i3),
    C("tensor_float_to_int_ok", lambda m, d: m.tensor([3.7, -3.7], dtype=m.int64, device=d), OK),
    C("tensor_1e20_float32_ok", lambda m, d: m.tensor([1e20], dtype=m.float16, device=d), OK),
    C("full_1e40_float32", lambda m, d: m.full((2,), 1e40, dtype=m.float32, device=d), E(R, "value cannot be converted to type")),
    C("full_inf_float16_ok", lambda m, d: m.full((2,), INF, dtype=m.float16, device=d), OK),
    C("fill_1e10_float16", lambda m, d, t: t.fill_(1e10), E(R, "value cannot be converted to type"), target=lambda m, d: m.zeros(2, dtype=m.float16, device=d)),
    C("fill_nan_bool_ok", lambda m, d, t: t.fill_(NAN), OK, target=lambda m, d: m.zeros(2, dtype=m.bool, device=d)),
    # converting tensors to Python scalars
    C("item_many", lambda m, d: f3(m, d).item(), E(R, "a Tensor with 3 elements cannot be converted to Scalar")),
    C("item_empty", lambda m, d: m.zeros(0, device=d).item(), E(R, "a Tensor with 0 elements cannot be converted to Scalar")),
    C("float_many", lambda m, d: float(f3(m, d)), E(V, "only one element tensors can be converted to Python scalars")),
    C("int_many", lambda m, d: int(f3(m, d)), E(V, "only one element tensors can be converted to Python scalars")),
    C("bool_many", lambda m, d: bool(f3(m, d)), E(R, "Boolean value of Tensor with more than one value is ambiguous")),
    C("bool_empty", lambda m, d: bool(m.zeros(0, device=d)), E(R, "Boolean value of Tensor with no values is ambiguous")),
    C("index_float_tensor", lambda m, d: [1, 2, 3][m.tensor(1.)], E(T, "only integer tensors of a single element can be converted to an index")),
    C("item_ok_1elem", lambda m, d: f3(m, d)[1:2].reshape(1, 1).item(), OK),
    C("int_of_nan", lambda m, d: int(m.tensor(NAN, device=d)), E(V, "cannot convert float NaN to integer")),
    C("tolist_ok_0d", lambda m, d: m.tensor(2.5, device=d).tolist(), OK),
    # odd tensor() data
    C("tensor_ragged", lambda m, d: m.tensor([[1, 2], [3]], device=d), E(V, "expected sequence of length 2 at dim 1 (got 1)")),
    C("tensor_str_elem", lambda m, d: m.tensor([1, "a"], device=d), E(T, "new(): invalid data type 'str'")),
    C("tensor_none", lambda m, d: m.tensor(None, device=d), E(R, "Could not infer dtype of NoneType")),
    C("tensor_none_elem", lambda m, d: m.tensor([1., None], device=d), E(R, "Could not infer dtype of NoneType")),
    C("tensor_object", lambda m, d: m.tensor(object(), device=d), E(R, "Could not infer dtype of object")),
    C("tensor_dict", lambda m, d: m.tensor({1: 2}, device=d), E(R, "Could not infer dtype of dict")),
    C("tensor_ragged_deep", lambda m, d: m.tensor([[[1]], [2]], device=d), E(T, "not a sequence")),
    C("tensor_ok_empty", lambda m, d: m.tensor([], device=d), OK),
    C("tensor_ok_empty_nested", lambda m, d: m.tensor([[], []], device=d), OK),
    C("tensor_ok_bool_int_mix", lambda m, d: m.tensor([True, 2], device=d), OK),
    C("tensor_ok_int_float_mix", lambda m, d: m.tensor([1, 2.5], device=d), OK),
    C("tensor_ok_tuple", lambda m, d: m.tensor(((1, 2), (3, 4)), device=d), OK),
    C("tensor_ok_nan_float16", lambda m, d: m.tensor([NAN, INF, -INF], dtype=m.float16, device=d), OK),
    C("tensor_np_str", lambda m, d: m.tensor(np.array(["a"]), device=d), E(T, "can't convert np.ndarray of type numpy.str_")),
    C("tensor_np_object", lambda m, d: m.tensor(np.array([1, None], dtype=object), device=d), E(T, "can't convert np.ndarray of type numpy.object_")),
    C("from_numpy_str", lambda m, d: m.from_numpy(np.array(["a"])), E(T, "can't convert np.ndarray of type numpy.str_")),
    C("from_numpy_list", lambda m, d: m.from_numpy([1, 2]), E(T, "expected np.ndarray (got list)")),
    C("from_numpy_neg_strides", lambda m, d: m.from_numpy(np.arange(3.)[::-1]), E(V, "At least one stride in the given numpy array is negative")),
    C("as_tensor_ok_uint16", lambda m, d: m.as_tensor(np.array([1, 2], dtype=np.int16), device=d), OK),
]
