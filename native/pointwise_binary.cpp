// Binary pointwise kernels: arithmetic (with PyTorch's integer division, remainder and
// power rules), comparisons, logical and bitwise ops, min/max and float functions of two
// arguments. Operands arrive broadcast and promoted to one compute dtype.
#include "pointwise.h"
#include "pointwise_vmath.h"

namespace fw {
namespace pw {
namespace {

#define FW_BINARY_OP(NAME, OUT, EXPR)                                           \
  struct NAME {                                                                 \
    template <typename T> using out_t = OUT<T>;                                 \
    template <typename C> static FW_PW_INLINE auto apply(C a, C b, const Params& p) { \
      (void)p; return EXPR;                                                     \
    }                                                                           \
  };

template <typename C> constexpr bool is_int_v = std::is_integral<C>::value;

[[noreturn]] inline void zero_division() { fail("ZeroDivisionError"); }

// ---- arithmetic ---------------------------------------------------------------------------
FW_BINARY_OP(Add, same_t, C(a + from_param<C>(p.p0) * b))
FW_BINARY_OP(Sub, same_t, C(a - from_param<C>(p.p0) * b))
FW_BINARY_OP(AddBool, same_t, bool(a || b))   // add on bool is logical or
FW_BINARY_OP(Mul, same_t, C(a * b))
FW_BINARY_OP(MulBool, same_t, bool(a && b))
FW_BINARY_OP(Div, same_t, C(a / b))

// Integer quotient rounded toward zero; INT_MIN / -1 wraps instead of trapping.
template <typename C> inline C int_div(C a, C b) {
  if (b == 0) zero_division();
  if constexpr (std::is_signed<C>::value) {
    if (b == C(-1)) return C(-static_cast<std::make_unsigned_t<C>>(a));
  }
  return C(a / b);
}

struct DivTrunc {
  template <typename T> using out_t = T;
  template <typename C> static FW_PW_INLINE C apply(C a, C b, const Params&) {
    if constexpr (is_int_v<C>) return int_div(a, b);
    else return std::trunc(a / b);
  }
};

// Floor division: PyTorch's div_floor (Python semantics, float path through fmod).
struct DivFloor {
  template <typename T> using out_t = T;
  template <typename C> static FW_PW_INLINE C apply(C a, C b, const Params&) {
    if constexpr (is_int_v<C>) {
      const C q = int_div(a, b);
      if constexpr (std::is_signed<C>::value) {
        if (b != C(-1) && (a < 0) != (b < 0) && C(a % b) != 0) return C(q - 1);
      }
      return q;
    } else {
      if (b == C(0)) return a / b;
      const C mod = std::fmod(a, b);
      C div = (a - mod) / b;
      if (mod != C(0) && (b < C(0)) != (mod < C(0))) div -= C(1);
      if (div == C(0)) return std::copysign(C(0), a / b);
      C fl = std::floor(div);
      if (div - fl > C(0.5)) fl += C(1);
      return fl;
    }
  }
};

// a <op> s for a Python scalar s = p0 held in the compute type (float for float16 and
// bfloat16) instead of rounded to the 16-bit dtype first: PyTorch's opmath rule for mul and
// the divisions by a scalar. The second operand is not read.
template <typename Op> struct ScalarRhs {
  template <typename T> using out_t = typename Op::template out_t<T>;
  template <typename C> static FW_PW_INLINE C apply(C a, C, const Params& p) {
    return C(Op::apply(a, C(p.p0), p));
  }
};

// Python-style remainder: the result has the sign of the divisor.
struct Remainder {
  template <typename T> using out_t = T;
  template <typename C> static FW_PW_INLINE C apply(C a, C b, const Params&) {
    if constexpr (is_int_v<C>) {
      if (b == 0) zero_division();
      if constexpr (std::is_signed<C>::value) {
        if (b == C(-1)) return C(0);
        C r = C(a % b);
        if (r != 0 && (r < 0) != (b < 0)) r = C(r + b);
        return r;
      } else {
        return C(a % b);
      }
    } else {
      C mod = std::fmod(a, b);
      if (mod != C(0) && (b < C(0)) != (mod < C(0))) mod += b;
      return mod;
    }
  }
};

// C-style remainder: the result has the sign of the dividend.
struct Fmod {
  template <typename T> using out_t = T;
  template <typename C> static FW_PW_INLINE C apply(C a, C b, const Params&) {
    if constexpr (is_int_v<C>) {
      if (b == 0) zero_division();
      if constexpr (std::is_signed<C>::value) {
        if (b == C(-1)) return C(0);
      }
      return C(a % b);
    } else {
      return std::fmod(a, b);
    }
  }
};

// Integer powers by squaring (wrapping); negative exponents give 0 except for bases 1, -1.
struct Pow {
  template <typename T> using out_t = T;
  template <typename C> static FW_PW_INLINE C apply(C a, C b, const Params&) {
    if constexpr (is_int_v<C>) {
      using U = std::make_unsigned_t<C>;
      if constexpr (std::is_signed<C>::value) {
        if (b < 0) {
          if (a == 1) return C(1);
          if (a == -1) return (b & 1) ? C(-1) : C(1);
          return C(0);
        }
      }
      U result = 1, base = U(a);
      uint64_t e = uint64_t(b);
      while (e) {
        if (e & 1) result = U(result * base);
        base = U(base * base);
        e >>= 1;
      }
      return C(result);
    } else {
      return std::pow(a, b);
    }
  }
};

FW_BINARY_OP(Atan2, same_t, C(std::atan2(a, b)))
FW_BINARY_OP(Hypot, same_t, C(std::hypot(a, b)))
FW_BINARY_OP(Copysign, same_t, C(std::copysign(a, b)))
FW_BINARY_OP(Ldexp, same_t, C(a * std::exp2(b)))

struct Xlogy {
  template <typename T> using out_t = T;
  template <typename C> static FW_PW_INLINE C apply(C x, C y, const Params&) {
    if (y != y) return C(NAN);
    if (x == C(0)) return C(0);
    return x * std::log(y);
  }
};

struct LogAddExp {
  template <typename T> using out_t = T;
  template <typename C> static FW_PW_INLINE C apply(C a, C b, const Params&) {
    if (std::isinf(a) && a == b) return a;
    const C m = a > b ? a : (b != b ? b : (a != a ? a : b));
    return m + std::log1p(std::exp(-std::fabs(a - b)));
  }
};

struct LogAddExp2 {
  template <typename T> using out_t = T;
  template <typename C> static FW_PW_INLINE C apply(C a, C b, const Params&) {
    if (std::isinf(a) && a == b) return a;
    const C m = a > b ? a : (b != b ? b : (a != a ? a : b));
    return m + std::log1p(std::exp2(-std::fabs(a - b))) / C(M_LN2);
  }
};

// nextafter steps in the storage format: 16-bit floats step their own bit patterns.
template <typename T>
struct NextAfter {
  template <typename> using out_t = T;
  template <typename C> static FW_PW_INLINE C apply(C a, C b, const Params&) {
    if constexpr (std::is_same<T, float>::value || std::is_same<T, double>::value) {
      return std::nextafter(a, b);
    } else {
      if (a != a || b != b) return C(NAN);
      if (a == b) return b;
      uint16_t bits = T(a).x;
      if (a == C(0)) {
        bits = uint16_t(b > C(0) ? 1 : 0x8001);
      } else if ((a < b) == (a > C(0))) {
        bits = uint16_t(bits + 1);  // away from zero
      } else {
        bits = uint16_t(bits - 1);
      }
      T r; r.x = bits;
      return C(float(r));
    }
  }
};

// lerp with a scalar weight p0 (the two-sided formula PyTorch uses for accuracy).
struct Lerp {
  template <typename T> using out_t = T;
  template <typename C> static FW_PW_INLINE C apply(C a, C b, const Params& p) {
    const C w = from_param<C>(p.p0);
    return std::fabs(w) < C(0.5) ? C(a + w * (b - a)) : C(b - (b - a) * (C(1) - w));
  }
};

// gelu's backward, grad a at input b, fused (PyTorch's GeluBackward kernels; the
// composite formula in autograd/formulas.py is the reference and the double backward).
// Two kernels, erf and tanh, as for the forward: a branch in the loop stops the vectorizer.
template <typename C> constexpr bool vm_float = std::is_same<C, float>::value ||
                                                std::is_same<C, double>::value;
struct GeluBackward {
  template <typename T> using out_t = T;
  template <typename C> static FW_PW_INLINE C apply(C g, C x, const Params&) {
    const C u = x * C(M_SQRT1_2), h = C(-0.5) * x * x;
    C e, q;
    if constexpr (vm_float<C>) { e = vm::erf(u); q = vm::exp(h); }
    else { e = std::erf(u); q = std::exp(h); }
    const C cdf = C(0.5) * (C(1) + e);
    const C pdf = q * C(0.3989422804014327);   // 1 / sqrt(2 pi)
    return g * (cdf + x * pdf);
  }
};
struct GeluTanhBackward {
  template <typename T> using out_t = T;
  template <typename C> static FW_PW_INLINE C apply(C g, C x, const Params&) {
    const C k = C(0.7978845608028654), kappa = C(0.044715);   // sqrt(2 / pi)
    const C x2 = x * x;
    const C inner = k * (x + kappa * x2 * x);
    C t;
    if constexpr (vm_float<C>) t = vm::tanh(inner); else t = std::tanh(inner);
    const C left = C(0.5) * x, right = C(1) + t;
    const C dright = left * (C(1) - t * t) * k * (C(1) + C(3) * kappa * x2);
    return g * (C(0.5) * right + dright);
  }
};

// ---- min / max ----------------------------------------------------------------------------
// maximum/minimum propagate NaN; fmax/fmin ignore it.
FW_BINARY_OP(Maximum, same_t, C((is_nan(a) || a > b) ? a : b))
FW_BINARY_OP(Minimum, same_t, C((is_nan(a) || a < b) ? a : b))
FW_BINARY_OP(Fmax, same_t, C((is_nan(b) || a > b) ? a : b))
FW_BINARY_OP(Fmin, same_t, C((is_nan(b) || a < b) ? a : b))

// ---- comparisons and logic ----------------------------------------------------------------
FW_BINARY_OP(Eq, bool_t, a == b)
FW_BINARY_OP(Ne, bool_t, a != b)
FW_BINARY_OP(Lt, bool_t, a < b)
FW_BINARY_OP(Le, bool_t, a <= b)
FW_BINARY_OP(Gt, bool_t, a > b)
FW_BINARY_OP(Ge, bool_t, a >= b)
FW_BINARY_OP(LogicalAnd, bool_t, bool(a != C(0)) && bool(b != C(0)))
FW_BINARY_OP(LogicalOr, bool_t, bool(a != C(0)) || bool(b != C(0)))
FW_BINARY_OP(LogicalXor, bool_t, bool(a != C(0)) != bool(b != C(0)))

// isclose: p0 = rtol, p1 = atol, p2 = equal_nan.
struct IsClose {
  template <typename T> using out_t = bool;
  template <typename C> static FW_PW_INLINE bool apply(C a, C b, const Params& p) {
    if (a == b) return true;
    if constexpr (std::is_floating_point<C>::value) {
      if (p.p2 != 0 && a != a && b != b) return true;
      if (!std::isfinite(a) || !std::isfinite(b)) return false;
    }
    const double d = std::fabs(double(a) - double(b));
    return d <= p.p1 + p.p0 * std::fabs(double(b));
  }
};

struct Heaviside {
  template <typename T> using out_t = T;
  template <typename C> static FW_PW_INLINE C apply(C x, C v, const Params&) {
    return x == C(0) ? v : C(x > C(0));
  }
};

// ---- bitwise ------------------------------------------------------------------------------
FW_BINARY_OP(BitAnd, same_t, C(a & b))
FW_BINARY_OP(BitOr, same_t, C(a | b))
FW_BINARY_OP(BitXor, same_t, C(a ^ b))

// Shifts by a negative amount or by the bit width or more give 0 (left) or the sign
// (right), as in PyTorch.
struct LShift {
  template <typename T> using out_t = T;
  template <typename C> static FW_PW_INLINE C apply(C a, C b, const Params&) {
    using U = std::make_unsigned_t<C>;
    constexpr int64_t bits = sizeof(C) * 8;
    if (int64_t(b) < 0 || int64_t(b) >= bits) return C(0);
    return C(U(U(a) << U(b)));
  }
};
struct RShift {
  template <typename T> using out_t = T;
  template <typename C> static FW_PW_INLINE C apply(C a, C b, const Params&) {
    using U = std::make_unsigned_t<C>;
    constexpr U max_shift = sizeof(C) * 8 - 1;
    if (U(b) > max_shift) return C(a >> max_shift);
    return C(a >> b);
  }
};

// ---- entries that pick a functor per dtype --------------------------------------------------

#define FW_BINARY_ARGS                                                                  \
  int dt, uintptr_t o, uintptr_t a, uintptr_t b, const Shape &s, const Shape &so,       \
      const Shape &sa, const Shape &sb, const Params &p

template <typename BoolOp, typename NumOp, unsigned MASK>
void with_bool(const char* err, FW_BINARY_ARGS) {
  if (dt == 0) binary_loop<BoolOp, bool>(o, a, b, s, so, sa, sb, p);
  else dispatch<MASK>(dt, err, [&](auto tag) {
    binary_loop<NumOp, decltype(tag)>(o, a, b, s, so, sa, sb, p);
  });
}

void nextafter_kernel(FW_BINARY_ARGS) {
  dispatch<M_FLOAT>(dt, "nextafter_cpu", [&](auto tag) {
    using T = decltype(tag);
    binary_loop<NextAfter<T>, T>(o, a, b, s, so, sa, sb, p);
  });
}

}  // namespace

const std::vector<BinaryKernel>& binary_kernels() {
  static const std::vector<BinaryKernel> k = {
      {"add", [](FW_BINARY_ARGS) {
         with_bool<AddBool, Add, M_NUM>("add_cpu", dt, o, a, b, s, so, sa, sb, p);
       }},
      FW_B("sub", Sub, M_NUM, "sub_cpu"),
      {"mul", [](FW_BINARY_ARGS) {
         with_bool<MulBool, Mul, M_NUM>("mul_cpu", dt, o, a, b, s, so, sa, sb, p);
       }},
      FW_B("div", Div, M_FLOAT, "div_true_cpu"),
      FW_B("div_trunc", DivTrunc, M_NUM, "div_trunc_cpu"),
      FW_B("div_floor", DivFloor, M_NUM, "div_floor_cpu"),
      FW_B("mul_scalar", ScalarRhs<Mul>, M_F16, "mul_cpu"),
      FW_B("div_scalar", ScalarRhs<Div>, M_F16, "div_true_cpu"),
      FW_B("div_trunc_scalar", ScalarRhs<DivTrunc>, M_F16, "div_trunc_cpu"),
      FW_B("div_floor_scalar", ScalarRhs<DivFloor>, M_F16, "div_floor_cpu"),
      FW_B("remainder", Remainder, M_NUM, "remainder_cpu"),
      FW_B("fmod", Fmod, M_NUM, "fmod_cpu"),
      FW_B("pow", Pow, M_NUM, "pow"),
      FW_B("atan2", Atan2, M_FLOAT, "atan2_cpu"),
      FW_B("hypot", Hypot, M_FLOAT, "hypot_cpu"),
      FW_B("copysign", Copysign, M_FLOAT, "copysign_cpu"),
      FW_B("ldexp", Ldexp, M_FLOAT, "ldexp_cpu"),
      FW_B("xlogy", Xlogy, M_FLOAT, "xlogy_cpu"),
      FW_B("logaddexp", LogAddExp, M_FLOAT, "logaddexp_cpu"),
      FW_B("logaddexp2", LogAddExp2, M_FLOAT, "logaddexp2_cpu"),
      {"nextafter", nextafter_kernel},
      FW_B("lerp", Lerp, M_FLOAT, "lerp_kernel_scalar"),
      FW_B("gelu_backward", GeluBackward, M_FLOAT, "GeluBackwardKernelImpl"),
      FW_B("gelu_tanh_backward", GeluTanhBackward, M_FLOAT, "GeluBackwardKernelImpl"),
      FW_B("maximum", Maximum, M_ALL, "maximum_cpu"),
      FW_B("minimum", Minimum, M_ALL, "minimum_cpu"),
      FW_B("fmax", Fmax, M_ALL, "fmax_cpu"),
      FW_B("fmin", Fmin, M_ALL, "fmin_cpu"),
      FW_B("eq", Eq, M_ALL, "eq_cpu"),
      FW_B("ne", Ne, M_ALL, "ne_cpu"),
      FW_B("lt", Lt, M_ALL, "lt_cpu"),
      FW_B("le", Le, M_ALL, "le_cpu"),
      FW_B("gt", Gt, M_ALL, "gt_cpu"),
      FW_B("ge", Ge, M_ALL, "ge_cpu"),
      FW_B("logical_and", LogicalAnd, M_ALL, "logical_and_cpu"),
      FW_B("logical_or", LogicalOr, M_ALL, "logical_or_cpu"),
      FW_B("logical_xor", LogicalXor, M_ALL, "logical_xor_cpu"),
      FW_B("isclose", IsClose, M_ALL, "isclose_cpu"),
      FW_B("heaviside", Heaviside, M_ALL, "heaviside_cpu"),
      FW_B("bitwise_and", BitAnd, M_INT_BOOL, "bitwise_and_cpu"),
      FW_B("bitwise_or", BitOr, M_INT_BOOL, "bitwise_or_cpu"),
      FW_B("bitwise_xor", BitXor, M_INT_BOOL, "bitwise_xor_cpu"),
      FW_B("lshift", LShift, M_INT, "lshift_cpu"),
      FW_B("rshift", RShift, M_INT, "rshift_cpu"),
  };
  static const std::vector<BinaryKernel> all =
      joined(joined(k, special_binary_kernels()), polynomial_binary_kernels());
  return all;
}

}  // namespace pw
}  // namespace fw
