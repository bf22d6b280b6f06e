// Unary pointwise kernels: arithmetic, exponentials and logs, trigonometry, rounding,
// classification (isnan, ...), and the activations of torch.nn.functional.
//
// Float ops take float/double (and 16-bit floats computed in float); the Python layer has
// already converted integer inputs of ops that promote them to float (exp, sin, ...).
// float32 exp/log/sin/cos/tanh/sigmoid/erf/gelu/silu and float64 exp/log/tanh/erf/sigmoid/
// gelu/silu use the vectorizable versions of pointwise_vmath.h; the rest use libm.
#include "pointwise.h"
#include "pointwise_vmath.h"

namespace fw {
namespace pw {
namespace {

template <typename C> constexpr bool is_f32 = std::is_same<C, float>::value;
// exp and log have vectorizable float64 versions too
template <typename C> constexpr bool is_f32_f64 = is_f32<C> || std::is_same<C, double>::value;

#define FW_UNARY_OP(NAME, OUT, EXPR)                                          \
  struct NAME {                                                               \
    template <typename T> using out_t = OUT<T>;                               \
    template <typename C> static FW_PW_INLINE auto apply(C x, const Params& p) {    \
      (void)p; return EXPR;                                                   \
    }                                                                         \
  };
// ---- arithmetic -------------------------------------------------------------------------
FW_UNARY_OP(Neg, same_t, C(-x))
FW_UNARY_OP(Abs, same_t, C(x < C(0) ? C(-x) : (x == C(0) ? C(0) : x)))
FW_UNARY_OP(Sign, same_t, C(C(C(0) < x) - C(x < C(0))))
FW_UNARY_OP(SignBit, bool_t, bool(std::signbit(double(x))))
FW_UNARY_OP(Reciprocal, same_t, C(C(1) / x))
FW_UNARY_OP(Deg2Rad, same_t, C(x * C(M_PI / 180.0)))
FW_UNARY_OP(Rad2Deg, same_t, C(x * C(180.0 / M_PI)))
FW_UNARY_OP(BitwiseNot, same_t, C(~x))
FW_UNARY_OP(LogicalNot, bool_t, bool(!x))

struct SignBool {  // sign/sgn of bool is the identity
  template <typename T> using out_t = T;
  static FW_PW_INLINE bool apply(bool x, const Params&) { return x; }
};
struct AbsUnsigned {
  template <typename T> using out_t = T;
  template <typename C> static FW_PW_INLINE C apply(C x, const Params&) { return x; }
};
struct BitwiseNotBool {
  template <typename T> using out_t = T;
  static FW_PW_INLINE bool apply(bool x, const Params&) { return !x; }
};

// ---- exponentials and logs --------------------------------------------------------------
struct Exp {
  template <typename T> using out_t = T;
  template <typename C> static FW_PW_INLINE C apply(C x, const Params&) {
    if constexpr (is_f32_f64<C>) return vm::exp(x); else return std::exp(x);
  }
};
struct Log {
  template <typename T> using out_t = T;
  template <typename C> static FW_PW_INLINE C apply(C x, const Params&) {
    if constexpr (is_f32_f64<C>) return vm::log(x); else return std::log(x);
  }
};
FW_UNARY_OP(Exp2, same_t, C(std::exp2(x)))
FW_UNARY_OP(Expm1, same_t, C(std::expm1(x)))
FW_UNARY_OP(Log2, same_t, C(std::log2(x)))
FW_UNARY_OP(Log10, same_t, C(std::log10(x)))
FW_UNARY_OP(Log1p, same_t, C(std::log1p(x)))
FW_UNARY_OP(Sqrt, same_t, C(std::sqrt(x)))
FW_UNARY_OP(Rsqrt, same_t, C(C(1) / std::sqrt(x)))

// pow(x, p0) with a scalar exponent: the exponents PyTorch special-cases give its results
// exactly (e.g. pow(-0., -0.5) = rsqrt(-0.) = -inf).
struct PowScalar {
  template <typename T> using out_t = T;
  template <typename C> static FW_PW_INLINE C apply(C x, const Params& p) {
    const double e = p.p0;
    if (e == 2.0) return x * x;
    if (e == 3.0) return x * x * x;
    if (e == 0.5) return std::sqrt(x);
    if (e == -0.5) return C(1) / std::sqrt(x);
    if (e == -1.0) return C(1) / x;
    if (e == -2.0) return C(1) / (x * x);
    return std::pow(x, C(e));
  }
};

// ---- trigonometric and hyperbolic -------------------------------------------------------
struct Sin {
  template <typename T> using out_t = T;
  template <typename C> static FW_PW_INLINE C apply(C x, const Params&) {
    if constexpr (is_f32<C>) return vm::sin(x); else return std::sin(x);
  }
  static constexpr int32_t fixup_bits = vm::trig_fixup_bits;
  static FW_PW_INLINE bool fixup(float x) { return vm::trig_fixup(x); }
  static FW_PW_INLINE bool fixup(double) { return false; }
  template <typename C> static FW_PW_INLINE C exact(C x) { return std::sin(x); }
};
struct Cos {
  template <typename T> using out_t = T;
  template <typename C> static FW_PW_INLINE C apply(C x, const Params&) {
    if constexpr (is_f32<C>) return vm::cos(x); else return std::cos(x);
  }
  static constexpr int32_t fixup_bits = vm::trig_fixup_bits;
  static FW_PW_INLINE bool fixup(float x) { return vm::trig_fixup(x); }
  static FW_PW_INLINE bool fixup(double) { return false; }
  template <typename C> static FW_PW_INLINE C exact(C x) { return std::cos(x); }
};
struct Tanh {
  template <typename T> using out_t = T;
  template <typename C> static FW_PW_INLINE C apply(C x, const Params&) {
    if constexpr (is_f32_f64<C>) return vm::tanh(x); else return std::tanh(x);
  }
};
FW_UNARY_OP(Tan, same_t, C(std::tan(x)))
FW_UNARY_OP(Asin, same_t, C(std::asin(x)))
FW_UNARY_OP(Acos, same_t, C(std::acos(x)))
FW_UNARY_OP(Atan, same_t, C(std::atan(x)))
FW_UNARY_OP(Sinh, same_t, C(std::sinh(x)))
FW_UNARY_OP(Cosh, same_t, C(std::cosh(x)))
FW_UNARY_OP(Asinh, same_t, C(std::asinh(x)))
FW_UNARY_OP(Acosh, same_t, C(std::acosh(x)))
FW_UNARY_OP(Atanh, same_t, C(std::atanh(x)))

struct Sinc {
  template <typename T> using out_t = T;
  template <typename C> static FW_PW_INLINE C apply(C x, const Params&) {
    if (x == C(0)) return C(1);
    const C px = C(M_PI) * x;
    return std::sin(px) / px;
  }
};

// ---- special functions ------------------------------------------------------------------
struct Erf {
  template <typename T> using out_t = T;
  template <typename C> static FW_PW_INLINE C apply(C x, const Params&) {
    if constexpr (is_f32_f64<C>) return vm::erf(x); else return std::erf(x);
  }
};
FW_UNARY_OP(Erfc, same_t, C(std::erfc(x)))

struct Sigmoid {
  template <typename T> using out_t = T;
  template <typename C> static FW_PW_INLINE C apply(C x, const Params&) {
    return vm::sigmoid(x);
  }
};

// logit(x) = log(x / (1 - x)), with x clamped to [eps, 1 - eps] when p1 != 0.
struct Logit {
  template <typename T> using out_t = T;
  template <typename C> static FW_PW_INLINE C apply(C x, const Params& p) {
    if (p.p1 != 0) {
      const C lo = from_param<C>(p.p0), hi = C(1) - from_param<C>(p.p0);
      x = x < lo ? lo : (x > hi ? hi : x);
    }
    return std::log(x / (C(1) - x));
  }
};

// Inverse error function: Giles' single-precision approximation as a starting point,
// refined by two Newton steps in the compute type (exact to a few ulp in double).
struct Erfinv {
  template <typename T> using out_t = T;
  template <typename C> static FW_PW_INLINE C apply(C y, const Params&) {
    if (y != y || y < C(-1) || y > C(1)) return C(NAN);
    if (y == C(1)) return C(INFINITY);
    if (y == C(-1)) return C(-INFINITY);
    double yd = double(y);
    double w = -std::log((1.0 - yd) * (1.0 + yd)), x;
    if (w < 5.0) {
      w -= 2.5;
      double q = 2.81022636e-08;
      q = 3.43273939e-07 + q * w; q = -3.5233877e-06 + q * w; q = -4.39150654e-06 + q * w;
      q = 0.00021858087 + q * w; q = -0.00125372503 + q * w; q = -0.00417768164 + q * w;
      q = 0.246640727 + q * w; q = 1.50140941 + q * w;
      x = q * yd;
    } else {
      w = std::sqrt(w) - 3.0;
      double q = -0.000200214257;
      q = 0.000100950558 + q * w; q = 0.00134934322 + q * w; q = -0.00367342844 + q * w;
      q = 0.00573950773 + q * w; q = -0.0076224613 + q * w; q = 0.00943887047 + q * w;
      q = 1.00167406 + q * w; q = 2.83297682 + q * w;
      x = q * yd;
    }
    for (int it = 0; it < 2; it++) {  // Newton on erf(x) - y, derivative 2/sqrt(pi) e^-x^2
      const double err = std::erf(x) - yd;
      x -= err / (1.1283791670955126 * std::exp(-x * x));
    }
    return C(x);
  }
};

// ---- rounding ---------------------------------------------------------------------------
FW_UNARY_OP(Floor, same_t, C(std::floor(x)))
FW_UNARY_OP(Ceil, same_t, C(std::ceil(x)))
FW_UNARY_OP(Trunc, same_t, C(std::trunc(x)))
FW_UNARY_OP(Frac, same_t, C(x - std::trunc(x)))
FW_UNARY_OP(Round, same_t, C(std::nearbyint(x)))

// round(x, decimals=p0) as PyTorch computes it (half to even on the scaled value).
struct RoundDecimals {
  template <typename T> using out_t = T;
  template <typename C> static FW_PW_INLINE C apply(C x, const Params& p) {
    const bool neg = p.p0 < 0;
    const C ten = C(std::pow(10.0, neg ? -p.p0 : p.p0));
    return neg ? C(std::nearbyint(x / ten) * ten) : C(std::nearbyint(x * ten) / ten);
  }
};

// ---- classification ---------------------------------------------------------------------
FW_UNARY_OP(IsNan, bool_t, is_nan(x))
FW_UNARY_OP(IsInf, bool_t, bool(std::is_floating_point<C>::value && std::isinf(double(x))))
FW_UNARY_OP(IsPosInf, bool_t, bool(std::is_floating_point<C>::value && double(x) == INFINITY))
FW_UNARY_OP(IsNegInf, bool_t, bool(std::is_floating_point<C>::value && double(x) == -INFINITY))
FW_UNARY_OP(IsFinite, bool_t, bool(!std::is_floating_point<C>::value || std::isfinite(double(x))))

// nan_to_num: p0 replaces NaN, p1 +inf, p2 -inf (already the dtype's limits by default).
struct NanToNum {
  template <typename T> using out_t = T;
  template <typename C> static FW_PW_INLINE C apply(C x, const Params& p) {
    if (x != x) return from_param<C>(p.p0);
    if (x == C(INFINITY)) return from_param<C>(p.p1);
    return x == C(-INFINITY) ? from_param<C>(p.p2) : x;
  }
};

// ---- clamps and activations ---------------------------------------------------------------

// clamp with scalar bounds: p0 = min, p1 = max, p2 = 1 (min only), 2 (max only), 3 (both).
// NaN inputs stay NaN (the comparisons are false); a NaN bound makes every element NaN,
// as in PyTorch.
struct Clamp {
  template <typename T> using out_t = T;
  template <typename C> static FW_PW_INLINE C apply(C x, const Params& p) {
    const int which = int(p.p2);
    if (which & 1) { const C lo = from_param<C>(p.p0); x = (x < lo || is_nan(lo)) ? lo : x; }
    if (which & 2) { const C hi = from_param<C>(p.p1); x = (x > hi || is_nan(hi)) ? hi : x; }
    return x;
  }
};

// threshold(x, threshold=p0, value=p1)
struct Threshold {
  template <typename T> using out_t = T;
  template <typename C> static FW_PW_INLINE C apply(C x, const Params& p) {
    return x <= from_param<C>(p.p0) ? from_param<C>(p.p1) : x;
  }
};

struct Relu {
  template <typename T> using out_t = T;
  template <typename C> static FW_PW_INLINE C apply(C x, const Params&) {
    return x < C(0) ? C(0) : x;  // NaN stays NaN
  }
};

// gelu with erf, and its tanh approximation (two kernels: a branch on the parameter in the
// loop body would stop the vectorizer).
struct Gelu {
  template <typename T> using out_t = T;
  template <typename C> static FW_PW_INLINE C apply(C x, const Params&) {
    C e;
    if constexpr (is_f32_f64<C>) e = vm::erf(x * C(M_SQRT1_2));
    else e = std::erf(x * C(M_SQRT1_2));
    return C(0.5) * x * (C(1) + e);
  }
};
struct GeluTanh {
  template <typename T> using out_t = T;
  template <typename C> static FW_PW_INLINE C apply(C x, const Params&) {
    const C inner = C(0.7978845608028654) * (x + C(0.044715) * x * x * x);
    return C(0.5) * x * (C(1) + Tanh::apply(inner, Params{}));
  }
};

struct Silu {
  template <typename T> using out_t = T;
  template <typename C> static FW_PW_INLINE C apply(C x, const Params&) {
    return x / (C(1) + vm::exp(-x));
  }
};

struct Mish {
  template <typename T> using out_t = T;
  template <typename C> static FW_PW_INLINE C apply(C x, const Params&) {
    return x * std::tanh(std::log1p(std::exp(x)));
  }
};

// softplus(x, beta=p0, threshold=p1): linear where x * beta > threshold.
struct Softplus {
  template <typename T> using out_t = T;
  template <typename C> static FW_PW_INLINE C apply(C x, const Params& p) {
    const C b = from_param<C>(p.p0);
    return x * b > from_param<C>(p.p1) ? x : C(std::log1p(std::exp(x * b)) / b);
  }
};

// elu(x, alpha=p0, scale=p1, input_scale=p2); selu and celu are elu with other constants.
struct Elu {
  template <typename T> using out_t = T;
  template <typename C> static FW_PW_INLINE C apply(C x, const Params& p) {
    const C alpha = from_param<C>(p.p0), scale = from_param<C>(p.p1);
    return x <= C(0) ? C(std::expm1(x * from_param<C>(p.p2)) * alpha * scale) : C(x * scale);
  }
};

struct LeakyRelu {
  template <typename T> using out_t = T;
  template <typename C> static FW_PW_INLINE C apply(C x, const Params& p) {
    return x > C(0) ? x : C(x * from_param<C>(p.p0));
  }
};

struct HardSigmoid {
  template <typename T> using out_t = T;
  template <typename C> static FW_PW_INLINE C apply(C x, const Params&) {
    C v = x + C(3);
    v = v < C(0) ? C(0) : (v > C(6) ? C(6) : v);
    return v / C(6);
  }
};

struct HardSwish {
  template <typename T> using out_t = T;
  template <typename C> static FW_PW_INLINE C apply(C x, const Params&) {
    C v = x + C(3);
    v = v < C(0) ? C(0) : (v > C(6) ? C(6) : v);
    return x * v / C(6);
  }
};

// ---- sign-aware wrappers: the same Python kernel name on every dtype ------------------------

template <typename OpSigned>
void abs_kernel(int dt, uintptr_t o, uintptr_t x, const Shape& s, const Shape& so,
                const Shape& sx, const Params& p) {
  if (dt == 1) unary_loop<AbsUnsigned, uint8_t>(o, x, s, so, sx, p);
  else dispatch<M_NUM>(dt, "abs_cpu", [&](auto tag) {
    unary_loop<OpSigned, decltype(tag)>(o, x, s, so, sx, p);
  });
}

void sign_kernel(int dt, uintptr_t o, uintptr_t x, const Shape& s, const Shape& so,
                 const Shape& sx, const Params& p) {
  if (dt == 0) unary_loop<SignBool, bool>(o, x, s, so, sx, p);
  else dispatch<M_NUM>(dt, "sign_cpu", [&](auto tag) {
    unary_loop<Sign, decltype(tag)>(o, x, s, so, sx, p);
  });
}

void bitwise_not_kernel(int dt, uintptr_t o, uintptr_t x, const Shape& s, const Shape& so,
                        const Shape& sx, const Params& p) {
  if (dt == 0) unary_loop<BitwiseNotBool, bool>(o, x, s, so, sx, p);
  else dispatch<M_INT>(dt, "bitwise_not_cpu", [&](auto tag) {
    unary_loop<BitwiseNot, decltype(tag)>(o, x, s, so, sx, p);
  });
}

}  // namespace

// airy_ai's row (pointwise_polynomials.cpp)
const std::vector<UnaryKernel>& polynomial_unary_kernels();

const std::vector<UnaryKernel>& unary_kernels() {
  static const std::vector<UnaryKernel> k = {
      FW_U("neg", Neg, M_NUM, "neg_cpu"),
      {"abs", abs_kernel<Abs>},
      {"sign", sign_kernel},
      FW_U("signbit", SignBit, M_ALL, "signbit_cpu"),
      FW_U("reciprocal", Reciprocal, M_FLOAT, "reciprocal_cpu"),
      FW_U("deg2rad", Deg2Rad, M_FLOAT, "deg2rad_cpu"),
      FW_U("rad2deg", Rad2Deg, M_FLOAT, "rad2deg_cpu"),
      {"bitwise_not", bitwise_not_kernel},
      FW_U("logical_not", LogicalNot, M_ALL, "logical_not_cpu"),
      FW_U("exp", Exp, M_FLOAT, "exp_vml_cpu"),
      FW_U("exp2", Exp2, M_FLOAT, "exp2_vml_cpu"),
      FW_U("expm1", Expm1, M_FLOAT, "expm1_vml_cpu"),
      FW_U("log", Log, M_FLOAT, "log_vml_cpu"),
      FW_U("log2", Log2, M_FLOAT, "log2_vml_cpu"),
      FW_U("log10", Log10, M_FLOAT, "log10_vml_cpu"),
      FW_U("log1p", Log1p, M_FLOAT, "log1p_vml_cpu"),
      FW_U("sqrt", Sqrt, M_FLOAT, "sqrt_vml_cpu"),
      FW_U("rsqrt", Rsqrt, M_FLOAT, "rsqrt_cpu"),
      FW_U("pow_scalar", PowScalar, M_FLOAT, "pow"),
      FW_U("sin", Sin, M_FLOAT, "sin_vml_cpu"),
      FW_U("cos", Cos, M_FLOAT, "cos_vml_cpu"),
      FW_U("tan", Tan, M_FLOAT, "tan_vml_cpu"),
      FW_U("asin", Asin, M_FLOAT, "asin_vml_cpu"),
      FW_U("acos", Acos, M_FLOAT, "acos_vml_cpu"),
      FW_U("atan", Atan, M_FLOAT, "atan_vml_cpu"),
      FW_U("sinh", Sinh, M_FLOAT, "sinh_vml_cpu"),
      FW_U("cosh", Cosh, M_FLOAT, "cosh_vml_cpu"),
      FW_U("tanh", Tanh, M_FLOAT, "tanh_vml_cpu"),
      FW_U("asinh", Asinh, M_FLOAT, "asinh_cpu"),
      FW_U("acosh", Acosh, M_FLOAT, "acosh_cpu"),
      FW_U("atanh", Atanh, M_FLOAT, "atanh_cpu"),
      FW_U("sinc", Sinc, M_FLOAT, "sinc_cpu"),
      FW_U("erf", Erf, M_FLOAT, "erf_vml_cpu"),
      FW_U("erfc", Erfc, M_FLOAT, "erfc_vml_cpu"),
      FW_U("erfinv", Erfinv, M_FLOAT, "erfinv_vml_cpu"),
      FW_U("sigmoid", Sigmoid, M_FLOAT, "sigmoid_cpu"),
      FW_U("logit", Logit, M_FLOAT, "logit_cpu"),
      FW_U("floor", Floor, M_FLOAT, "floor_vml_cpu"),
      FW_U("ceil", Ceil, M_FLOAT, "ceil_vml_cpu"),
      FW_U("trunc", Trunc, M_FLOAT, "trunc_vml_cpu"),
      FW_U("frac", Frac, M_FLOAT, "frac_cpu"),
      FW_U("round", Round, M_FLOAT, "round_vml_cpu"),
      FW_U("round_decimals", RoundDecimals, M_FLOAT, "round_cpu"),
      FW_U("isnan", IsNan, M_ALL, "isnan_cpu"),
      FW_U("isinf", IsInf, M_ALL, "isinf_cpu"),
      FW_U("isposinf", IsPosInf, M_ALL, "isposinf_cpu"),
      FW_U("isneginf", IsNegInf, M_ALL, "isneginf_cpu"),
      FW_U("isfinite", IsFinite, M_ALL, "isfinite_cpu"),
      FW_U("nan_to_num", NanToNum, M_FLOAT, "nan_to_num_cpu"),
      FW_U("clamp", Clamp, M_NUM, "clamp_scalar_cpu"),
      FW_U("threshold", Threshold, M_NUM, "threshold_cpu"),
      FW_U("relu", Relu, M_NUM, "clamp_min_scalar_cpu"),
      FW_U("gelu", Gelu, M_FLOAT, "GeluKernelImpl"),
      FW_U("gelu_tanh", GeluTanh, M_FLOAT, "GeluKernelImpl"),
      FW_U("silu", Silu, M_FLOAT, "silu_cpu"),
      FW_U("mish", Mish, M_FLOAT, "mish_cpu"),
      FW_U("softplus", Softplus, M_FLOAT, "softplus_cpu"),
      FW_U("elu", Elu, M_FLOAT, "elu_cpu"),
      FW_U("leaky_relu", LeakyRelu, M_FLOAT, "leaky_relu_cpu"),
      FW_U("hardsigmoid", HardSigmoid, M_FLOAT, "hardsigmoid_cpu"),
      FW_U("hardswish", HardSwish, M_FLOAT, "hardswish_cpu"),
  };
  static const std::vector<UnaryKernel> all =
      joined(joined(k, special_unary_kernels()), polynomial_unary_kernels());
  return all;
}

}  // namespace pw
}  // namespace fw
