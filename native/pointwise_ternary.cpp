// Ternary pointwise kernels: where(cond, x, y) with a bool condition, and lerp, addcmul,
// addcdiv and clamp whose three operands share one promoted dtype.
#include "pointwise.h"

namespace fw {
namespace pw {
namespace {

struct Where {  // the condition is read as bytes (bool tensors hold 0 or 1)
  template <typename C> static FW_PW_INLINE C apply(uint8_t c, C x, C y, const Params&) {
    return c != 0 ? x : y;
  }
};

// lerp(start, end, weight): the two-sided formula keeps lerp(a, b, 1) == b exactly.
struct Lerp {
  template <typename C> static FW_PW_INLINE C apply(C a, C b, C w, const Params&) {
    return std::fabs(w) < C(0.5) ? C(a + w * (b - a)) : C(b - (b - a) * (C(1) - w));
  }
};

// input + value * t1 * t2, value = p0 (cast to the dtype, as PyTorch does for integers)
struct Addcmul {
  template <typename C> static FW_PW_INLINE C apply(C a, C b, C c, const Params& p) {
    return C(a + from_param<C>(p.p0) * b * c);
  }
};

struct Addcdiv {
  template <typename C> static FW_PW_INLINE C apply(C a, C b, C c, const Params& p) {
    return C(a + from_param<C>(p.p0) * (b / c));
  }
};

// clamp(x, min, max) with tensor bounds: NaN in any operand propagates.
struct Clamp {
  template <typename C> static FW_PW_INLINE C apply(C x, C lo, C hi, const Params&) {
    if (is_nan(x)) return x;
    if (is_nan(lo)) return lo;
    if (is_nan(hi)) return hi;
    x = x < lo ? lo : x;
    return x > hi ? hi : x;
  }
};

#define FW_TERNARY_ARGS                                                                   \
  int dt_a, int dt, uintptr_t o, uintptr_t a, uintptr_t b, uintptr_t c, const Shape &s,   \
      const Shape &so, const Shape &sa, const Shape &sb, const Shape &sc, const Params &p

void where_kernel(FW_TERNARY_ARGS) {
  if (dt_a != 0) fail("where expected condition to be a boolean tensor");
  dispatch<M_ALL>(dt, "where_cpu", [&](auto tag) {
    ternary_loop<Where, uint8_t, decltype(tag)>(o, a, b, c, s, so, sa, sb, sc, p);
  });
}

template <typename Op, unsigned MASK>
void same_kernel(const char* err, FW_TERNARY_ARGS) {
  if (dt_a != dt) fail("internal: ternary operands of different dtypes");
  dispatch<MASK>(dt, err, [&](auto tag) {
    using T = decltype(tag);
    ternary_loop<Op, T, T>(o, a, b, c, s, so, sa, sb, sc, p);
  });
}

#define FW_T(NAME, OP, MASK, ERR)                                                 \
  {NAME, [](FW_TERNARY_ARGS) {                                                    \
     same_kernel<OP, MASK>(ERR, dt_a, dt, o, a, b, c, s, so, sa, sb, sc, p);      \
   }}

}  // namespace

const std::vector<TernaryKernel>& ternary_kernels() {
  static const std::vector<TernaryKernel> k = {
      {"where", where_kernel},
      FW_T("lerp", Lerp, M_FLOAT, "lerp_kernel_tensor"),
      FW_T("addcmul", Addcmul, M_NUM, "addcmul_cpu_out"),
      FW_T("addcdiv", Addcdiv, M_FLOAT, "addcdiv_cpu_out"),
      FW_T("clamp", Clamp, M_NUM, "clamp_cpu"),
  };
  return k;
}

}  // namespace pw
}  // namespace fw
