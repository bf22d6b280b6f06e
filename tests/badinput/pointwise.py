"""Pointwise and ordering edge cases that used to give silent wrong answers: float16/bfloat16
with large Python scalars (float32 opmath), NaN in clamp/min/max/sort/topk/mode, division by
zero, rounding, overflow to inf, empty inputs."""
from badinput import C, E, OK

R, T, I, V = "RuntimeError", "TypeError", "IndexError", "ValueError"
NAN, INF = float("nan"), float("inf")


def h(m, d, dt="float16"):
    return m.tensor([1., -1., 0., 2.5], dtype=getattr(m, dt), device=d)


def wn(m, d):
    """Values with a NaN in the middle."""
    return m.tensor([1., NAN, 3., 2.], device=d)


CASES = [
    # float16 / bfloat16 with scalars: computed in float32, rounded once
    C("half_mul_70000", lambda m, d: h(m, d) * 70000, OK),
    C("half_add_70000", lambda m, d: h(m, d) + 70000, OK),
    C("half_sub_70000", lambda m, d: h(m, d) - 70000, OK),
    C("half_div_tiny", lambda m, d: h(m, d) / 1e-8, OK),
    C("half_mul_tiny", lambda m, d: h(m, d) * 1e-8, OK),
    C("half_mul_65520", lambda m, d: h(m, d) * 65519.9, OK),
    C("half_add_then_sub", lambda m, d: (h(m, d) + 1e-4) - 1e-4, OK),
    C("half_pow_big", lambda m, d: h(m, d) ** 20, OK),
    C("half_rsub_big", lambda m, d: 70000 - h(m, d), OK),
    C("half_clamp_big", lambda m, d: h(m, d).clamp(-70000, 70000), E(R, "value cannot be converted to type")),
    C("half_lerp_big", lambda m, d: m.lerp(h(m, d), h(m, d) * 0 + 60000, 2.), OK),
    C("half_addcmul_big", lambda m, d: m.addcmul(h(m, d), h(m, d), h(m, d), value=70000), OK),
    C("half_mul_inplace_70000", lambda m, d, t: t.mul_(70000), OK, target=h),
    C("half_add_alpha_big", lambda m, d: m.add(h(m, d), h(m, d), alpha=70000), E(R, "value cannot be converted to type")),
    C("bf16_mul_1e39", lambda m, d: h(m, d, "bfloat16") * 1e39, OK),
    C("bf16_add_small", lambda m, d: h(m, d, "bfloat16") + 1e-3, OK),
    C("bf16_div_3", lambda m, d: h(m, d, "bfloat16") / 3, OK),
    C("half_sum_overflow", lambda m, d: m.tensor([60000., 60000.], dtype=m.float16, device=d).sum(), OK),
    C("half_mean_big", lambda m, d: m.tensor([60000., 60000.], dtype=m.float16, device=d).mean(), OK),
    C("half_cumsum_overflow", lambda m, d: m.tensor([60000., 60000., -60000.], dtype=m.float16, device=d).cumsum(0), OK),
    C("int32_sum_promotes", lambda m, d: m.tensor([2**31 - 1, 1], dtype=m.int32, device=d).sum(), OK),
    C("int8_sum_promotes", lambda m, d: m.tensor([100, 100], dtype=m.int8, device=d).sum(), OK),
    C("uint8_cumsum_promotes", lambda m, d: m.tensor([200, 100], dtype=m.uint8, device=d).cumsum(0), OK),
    # NaN semantics of clamp / min / max / ordering
    C("clamp_min_nan", lambda m, d: m.arange(3., device=d).clamp(min=NAN), OK),
    C("clamp_max_nan", lambda m, d: m.arange(3., device=d).clamp(max=NAN), OK),
    C("clamp_nan_input", lambda m, d: wn(m, d).clamp(0, 2), OK),
    C("clamp_tensor_nan_bound", lambda m, d: m.arange(4., device=d).clamp(min=wn(m, d)), OK),
    C("clamp_min_gt_max", lambda m, d: m.arange(4., device=d).clamp(3, 1), OK),
    C("clamp_inplace_nan", lambda m, d, t: t.clamp_(min=NAN), OK, target=lambda m, d: m.arange(3., device=d)),
    C("maximum_nan", lambda m, d: m.maximum(wn(m, d), m.zeros(4, device=d)), OK),
    C("minimum_nan", lambda m, d: m.minimum(m.zeros(4, device=d), wn(m, d)), OK),
    C("fmax_nan", lambda m, d: m.fmax(wn(m, d), m.zeros(4, device=d)), OK),
    C("max_nan", lambda m, d: wn(m, d).max(), OK),
    C("min_nan", lambda m, d: wn(m, d).min(), OK),
    C("max_dim_nan", lambda m, d: wn(m, d).reshape(2, 2).max(1), OK),
    C("amax_nan", lambda m, d: wn(m, d).amax(), OK),
    C("argmax_nan", lambda m, d: wn(m, d).argmax(), OK),
    C("argmin_nan", lambda m, d: wn(m, d).argmin(), OK),
    C("aminmax_nan", lambda m, d: m.aminmax(wn(m, d)), OK),
    C("sort_nan", lambda m, d: wn(m, d).sort(), OK),
    C("sort_nan_desc", lambda m, d: wn(m, d).sort(descending=True), OK),
    C("argsort_nan", lambda m, d: wn(m, d).argsort(), OK),
    C("topk_nan", lambda m, d: wn(m, d).topk(2), OK),
    C("topk_nan_smallest", lambda m, d: wn(m, d).topk(2, largest=False), OK),
    C("kthvalue_nan", lambda m, d: wn(m, d).kthvalue(4), OK),
    C("median_nan", lambda m, d: wn(m, d).median(), OK),
    C("nanmedian_nan", lambda m, d: wn(m, d).nanmedian(), OK),
    C("mode_nan", lambda m, d: m.tensor([NAN, NAN, 1., 1., 2.], device=d).mode(), OK),
    C("mode_nan_majority", lambda m, d: m.tensor([NAN, NAN, NAN, 1., 1.], device=d).mode(), OK),
    C("cummax_nan", lambda m, d: wn(m, d).cummax(0), OK),
    C("cummin_nan", lambda m, d: wn(m, d).cummin(0), OK),
    C("unique_nan", lambda m, d: m.tensor([NAN, 1., NAN], device=d).unique(), OK),
    C("msort_nan", lambda m, d: m.msort(wn(m, d)), OK),
    C("searchsorted_nan", lambda m, d: m.searchsorted(m.tensor([1., 2., NAN], device=d), m.tensor([NAN, 1.5], device=d)), OK),
    C("eq_nan", lambda m, d: wn(m, d) == wn(m, d), OK),
    C("isclose_nan", lambda m, d: m.isclose(wn(m, d), wn(m, d), equal_nan=True), OK),
    C("allclose_nan", lambda m, d: m.allclose(wn(m, d), wn(m, d)), OK),
    C("equal_nan", lambda m, d: m.equal(wn(m, d), wn(m, d)), OK),
    C("sign_nan", lambda m, d: wn(m, d).sign(), OK),
    C("nan_to_num_defaults", lambda m, d: m.tensor([NAN, INF, -INF, 1.], device=d).nan_to_num(), OK),
    C("nan_to_num_half", lambda m, d: m.tensor([NAN, INF, -INF], dtype=m.float16, device=d).nan_to_num(), OK),
    C("logsumexp_all_neg_inf", lambda m, d: m.tensor([-INF, -INF], device=d).logsumexp(0), OK),
    C("logsumexp_inf", lambda m, d: m.tensor([INF, 1.], device=d).logsumexp(0), OK),
    # division, rounding, overflow
    C("div_zero_by_zero", lambda m, d: m.tensor([0., 1., -1.], device=d) / 0, OK),
    C("int_floor_div_neg", lambda m, d: m.tensor([-7, 7], device=d) // 2, OK),
    C("int_div_floor_mode", lambda m, d: m.div(m.tensor([-7, 7], device=d), 2, rounding_mode="floor"), OK),
    C("int_div_trunc_mode", lambda m, d: m.div(m.tensor([-7, 7], device=d), 2, rounding_mode="trunc"), OK),
    C("float_floor_div_neg", lambda m, d: m.tensor([-7.5, 7.5], device=d) // 2, OK),
    C("remainder_neg", lambda m, d: m.tensor([-7., 7.], device=d) % -3, OK),
    C("fmod_neg", lambda m, d: m.fmod(m.tensor([-7., 7.], device=d), -3), OK),
    C("remainder_int_neg", lambda m, d: m.tensor([-7, 7], device=d) % 3, OK),
    C("round_half_even", lambda m, d: m.tensor([0.5, 1.5, 2.5, -0.5], device=d).round(), OK),
    C("round_decimals_neg", lambda m, d: m.tensor([1234.5, -15.], device=d).round(decimals=-1), OK),
    C("pow_zero_neg", lambda m, d: m.tensor([0.], device=d) ** -1, OK),
    C("pow_int_zero_zero", lambda m, d: m.tensor([0], device=d) ** 0, OK),
    C("pow_neg_frac", lambda m, d: m.tensor([-8.], device=d) ** (1 / 3), OK),
    C("int_pow_overflow_wraps", lambda m, d: m.tensor([3], device=d) ** 50, OK),
    C("exp_overflow", lambda m, d: m.tensor([1000., -1000.], device=d).exp(), OK),
    C("log_neg", lambda m, d: m.tensor([-1., 0.], device=d).log(), OK),
    C("sqrt_neg", lambda m, d: m.tensor([-1., -0.], device=d).sqrt(), OK),
    C("shift_by_width", lambda m, d: m.tensor([1], device=d) << 64, OK),
    C("shift_int8_by_8", lambda m, d: m.tensor([1], dtype=m.int8, device=d) << 8, OK),
    C("right_shift_neg", lambda m, d: m.tensor([-16], device=d) >> 2, OK),
    C("int_neg_overflow", lambda m, d: -m.tensor([-2**63], device=d), OK),
    C("float_to_half_overflow", lambda m, d: m.tensor([1e6], device=d).half(), OK),
    C("abs_int8_min", lambda m, d: m.tensor([-128], dtype=m.int8, device=d).abs(), OK),
    # empty inputs
    C("chunk_empty", lambda m, d: m.zeros(0, 3, device=d).chunk(2), OK),
    C("sum_empty_int", lambda m, d: m.zeros(0, dtype=m.int64, device=d).sum(), OK),
    C("prod_empty_dim", lambda m, d: m.zeros(2, 0, device=d).prod(1), OK),
    C("amax_empty_dim_ok", lambda m, d: m.zeros(0, 3, device=d).amax(1), OK),
    C("sort_empty", lambda m, d: m.zeros(0, device=d).sort(), OK),
    C("cumsum_empty", lambda m, d: m.zeros(0, device=d).cumsum(0), OK),
    C("topk_empty_k0", lambda m, d: m.zeros(0, device=d).topk(0), OK),
    C("unique_empty", lambda m, d: m.zeros(0, device=d).unique(), OK),
    C("nonzero_empty", lambda m, d: m.zeros(0, 3, device=d).nonzero(), OK),
    C("matmul_empty_inner", lambda m, d: m.ones(2, 0, device=d) @ m.ones(0, 2, device=d), OK),
    C("std_single", lambda m, d: m.ones(1, device=d).std(), OK),
    C("var_empty", lambda m, d: m.zeros(0, device=d).var(), OK),
    C("mean_empty_dim", lambda m, d: m.zeros(0, 2, device=d).mean(0), OK),
    C("max_empty_other_dim", lambda m, d: m.zeros(2, 0, device=d).max(0), OK),
]
