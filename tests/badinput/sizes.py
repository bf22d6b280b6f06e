"""Sizes: floats, strings, bools, None, negative, 2**62 and overflowing element counts, NumPy
and 0-d tensor sizes, wherever a size enters."""
import numpy as np

from badinput import C, E, OK

R, T, I, V = "RuntimeError", "TypeError", "IndexError", "ValueError"
NI = "NotImplementedError"
NEG = "Trying to create tensor with negative dimension -1"
ALLOC = "allocate"


def a6(m, d):
    return m.arange(6., device=d)


CASES = [
    # factory sizes of the wrong type
    C("zeros_float", lambda m, d: m.zeros(2.5, device=d), E(T, "zeros(): argument 'size' (position 1) must be tuple of ints, not float")),
    C("zeros_float_in_tuple", lambda m, d: m.zeros((2, 2.5), device=d), E(T, "zeros(): argument 'size'")),
    C("ones_str", lambda m, d: m.ones("3", device=d), E(T, "ones(): argument 'size'")),
    C("ones_str_in_list", lambda m, d: m.ones([2, "3"], device=d), E(T, "ones(): argument 'size'")),
    C("zeros_none", lambda m, d: m.zeros(None, device=d), E(T, "zeros(): argument 'size'")),
    C("zeros_bool", lambda m, d: m.zeros(True, device=d), E(T, "zeros(): argument 'size'")),
    C("zeros_np_float", lambda m, d: m.zeros(np.float64(2.0), device=d), E(T, "zeros(): argument 'size'")),
    C("zeros_float_tensor", lambda m, d: m.zeros(m.tensor(2.), device=d), E(T, "zeros(): argument 'size'")),
    C("empty_float", lambda m, d: m.empty(2.0, device=d), E(T, "empty(): argument 'size'")),
    C("full_float_size", lambda m, d: m.full((2.5,), 1., device=d), E(T, "full(): argument 'size'")),
    C("rand_float", lambda m, d: m.rand(2.5, device=d), E(T, "rand() received an invalid combination of arguments - got (float,")),
    C("randn_str", lambda m, d: m.randn("2", device=d), E(T, "randn() received an invalid combination of arguments - got (str,")),
    C("eye_float", lambda m, d: m.eye(3.5, device=d), E(T, "eye() received an invalid combination of arguments - got (float,")),
    C("eye_float_m", lambda m, d: m.eye(3, 2.5, device=d), E(T, "eye() received an invalid combination of arguments")),
    C("new_zeros_float", lambda m, d: a6(m, d).new_zeros(2.5), E(T, "new_zeros(): argument 'size'")),
    C("new_empty_str", lambda m, d: a6(m, d).new_empty("2"), E(T, "new_empty(): argument 'size'")),
    C("new_full_float", lambda m, d: a6(m, d).new_full((1.5,), 1.), E(T, "new_full(): argument 'size'")),
    C("randint_float_size", lambda m, d: m.randint(0, 5, (2.5,), device=d), E(T, "randint() received an invalid combination of arguments")),
    C("resize_float", lambda m, d, t: t.resize_(2.5), E(T, "resize_(): argument 'size'"), target=a6),
    C("zeros_ok_np_int", lambda m, d: m.zeros(np.int64(2), device=d), OK),
    C("zeros_ok_np_int32_tuple", lambda m, d: m.zeros((np.int32(2), 1), device=d), OK),
    C("zeros_ok_int_tensor", lambda m, d: m.zeros(m.tensor(3), device=d), OK),
    C("zeros_ok_empty_tuple", lambda m, d: m.zeros((), device=d), OK),
    C("zeros_ok_zero", lambda m, d: m.zeros(0, 3, device=d), OK),
    C("zeros_ok_size_obj", lambda m, d: m.zeros(a6(m, d).reshape(2, 3).shape, device=d), OK),
    C("reshape_ok_np_int", lambda m, d: a6(m, d).reshape(np.int64(3), 2), OK),
    # negative sizes
    C("zeros_neg", lambda m, d: m.zeros(-1, device=d), E(R, "zeros: Dimension size must be non-negative.")),
    C("zeros_neg_2d", lambda m, d: m.zeros(2, -1, device=d), E(R, "zeros: Dimension size must be non-negative.")),
    C("empty_neg", lambda m, d: m.empty(-1, device=d), E(R, NEG)),
    C("ones_neg", lambda m, d: m.ones((3, -2), device=d), E(R, "Trying to create tensor with negative dimension -2")),
    C("full_neg", lambda m, d: m.full((-1,), 1., device=d), E(R, NEG)),
    C("rand_neg", lambda m, d: m.rand(-1, device=d), E(R, NEG)),
    C("randn_neg", lambda m, d: m.randn(2, -1, device=d), E(R, NEG)),
    C("randint_neg", lambda m, d: m.randint(0, 5, (-1,), device=d), E(R, NEG)),
    C("new_zeros_neg", lambda m, d: a6(m, d).new_zeros(-1), E(R, NEG)),
    C("new_ones_neg", lambda m, d: a6(m, d).new_ones((-1,)), E(R, NEG)),
    C("empty_like_ok", lambda m, d: m.empty_like(a6(m, d)).shape, OK),
    C("resize_neg", lambda m, d: a6(m, d).resize_(-1), E(R, "numel: integer multiplication overflow")),
    C("eye_neg", lambda m, d: m.eye(-1, device=d), E(R, "n must be greater or equal to 0, got -1")),
    C("eye_neg_m", lambda m, d: m.eye(3, -2, device=d), E(R, "m must be greater or equal to 0, got -2")),
    C("eye_ok_zero", lambda m, d: m.eye(0, device=d), OK),
    C("tril_indices_neg_offset_ok", lambda m, d: m.tril_indices(3, 3, -5, device=d), OK),
    # huge sizes and overflowing element counts: raise without trying to allocate
    C("zeros_huge", lambda m, d: m.zeros(2**62, device=d), E(R, "Storage size calculation overflowed"), crash=True),
    C("zeros_overflow", lambda m, d: m.zeros(2**62, 2**62, device=d), E(R, "overflow"), crash=True),
    C("zeros_overflow_3d", lambda m, d: m.zeros(2**31, 2**31, 2**31, device=d), E(R, "overflow"), crash=True),
    C("empty_huge", lambda m, d: m.empty(2**62, device=d), E(R, "Storage size calculation overflowed"), crash=True),
    C("empty_2_63", lambda m, d: m.empty(2**63, device=d), E(T, "empty(): argument 'size' failed to unpack the object at pos 1 with"), crash=True),
    C("ones_huge_2d", lambda m, d: m.ones(2**31, 2**31, device=d), E(R, "Storage size calculation overflowed"), crash=True),
    C("full_huge", lambda m, d: m.full((2**62,), 1., device=d), E(R, "Storage size calculation overflowed"), crash=True),
    C("rand_huge", lambda m, d: m.rand(2**62, device=d), E(R, "Storage size calculation overflowed"), crash=True),
    C("arange_huge", lambda m, d: m.arange(2**62, device=d), E(R, "Storage size calculation overflowed"), crash=True),
    C("eye_huge", lambda m, d: m.eye(2**31, device=d), E(R, "Storage size calculation overflowed"), crash=True),
    C("repeat_huge", lambda m, d: a6(m, d).repeat(2**62), E(R, "IntArrayRef contains an int that cannot be represented as a SymInt:"), crash=True),
    C("repeat_overflow", lambda m, d: a6(m, d).repeat(2**62, 2**62), E(R, "IntArrayRef contains an int that cannot be represented as a SymInt:"), crash=True),
    C("tile_huge", lambda m, d: a6(m, d).tile((2**61,)), E(R, "Trying to create tensor with negative dimension -4611686018427387904:"), crash=True),
    C("repeat_interleave_huge", lambda m, d: a6(m, d).repeat_interleave(2**40), E(R, ALLOC), crash=True),
    C("new_zeros_huge", lambda m, d: a6(m, d).new_zeros(2**62), E(R, "Storage size calculation overflowed"), crash=True),
    C("resize_huge", lambda m, d: a6(m, d).resize_(2**62), E(R, "Storage size calculation overflowed"), crash=True),
    C("expand_huge_clone", lambda m, d: m.tensor([1.], device=d).expand(2**40).clone(), E(R, ALLOC), crash=True),
    C("expand_huge_contiguous", lambda m, d: m.zeros(1, 1, device=d).expand(2**31, 2**31).contiguous(), E(R, "Storage size calculation overflowed"), crash=True),
    C("expand_huge_add", lambda m, d: m.tensor(1., device=d).expand(2**40) + 1, E(R, ALLOC), crash=True),
    C("zeros_2_64", lambda m, d: m.zeros(2**64, device=d), E(T, "zeros(): argument 'size' failed to unpack the object at pos 1 with"), crash=True),
    C("view_2_64", lambda m, d: a6(m, d).view(2**64), E(T, "view(): argument 'size' failed to unpack the object at pos 1 with"), crash=True),
    C("narrow_2_64", lambda m, d: a6(m, d).narrow(0, 2**64, 1), E(V, "Overflow when unpacking long long"), crash=True),
    C("select_2_64", lambda m, d: a6(m, d).select(0, 2**64), E(V, "Overflow when unpacking long long"), crash=True),
    C("sum_dim_2_64", lambda m, d: a6(m, d).sum(2**64), E(V, "Overflow when unpacking long long"), crash=True),
    C("topk_huge", lambda m, d: a6(m, d).topk(2**62), E(R, "selected index k out of range"), crash=True),
    C("kthvalue_huge", lambda m, d: a6(m, d).kthvalue(2**62), E(R, "kthvalue(): selected number k out of range"), crash=True),
    C("split_ok_huge", lambda m, d: a6(m, d).split(2**62), OK, crash=True),
    C("chunk_ok_huge", lambda m, d: a6(m, d).chunk(2**62), OK, crash=True),
    C("slice_ok_huge_step", lambda m, d: a6(m, d)[::2**62], OK, crash=True),
    C("roll_ok_huge", lambda m, d: a6(m, d).roll(2**62), OK, crash=True),
    C("roll_ok_neg_huge", lambda m, d: a6(m, d).roll(-2**62), OK, crash=True),
    C("diag_embed_huge_offset", lambda m, d: m.ones(2, device=d).diag_embed(2**40), E(R, "Storage size calculation overflowed"), crash=True),
    C("diag_huge_offset", lambda m, d: m.ones(2, device=d).diag(2**40), E(R, "Storage size calculation overflowed"), crash=True),
    C("tril_indices_huge", lambda m, d: m.tril_indices(2**31, 2**31, device=d), E(R, "Storage size calculation overflowed"), crash=True),
    C("linspace_huge", lambda m, d: m.linspace(0, 1, 2**62, device=d), E(R, "Storage size calculation overflowed"), crash=True),
    C("pad_huge", lambda m, d: m.nn.functional.pad(a6(m, d), (0, 2**62)), E(R, "Storage size calculation overflowed"), crash=True),
    C("pad_neg_too_big", lambda m, d: m.nn.functional.pad(a6(m, d), (-4, -4)), E(R, "narrow(): length must be non-negative.")),
    C("pad_odd_len", lambda m, d: m.nn.functional.pad(a6(m, d), (1,)), E(R, "Padding length must be divisible by 2")),
    C("pad_too_long", lambda m, d: m.nn.functional.pad(a6(m, d), (1, 1, 1, 1)), E(R, "Padding length should be less than or equal to two times the input dimension but got padding length 4 and input of dimension 1")),
    C("pad_float", lambda m, d: m.nn.functional.pad(a6(m, d), (1.5, 1)), E(T, "pad(): argument 'pad'")),
    C("pad_bad_mode", lambda m, d: m.nn.functional.pad(a6(m, d), (1, 1), mode="bogus"), E(NI, "Unrecognised padding mode bogus")),
    C("pad_ok_neg", lambda m, d: m.nn.functional.pad(a6(m, d), (-1, 2), value=9.), OK),
]
