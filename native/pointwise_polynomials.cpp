// The orthogonal polynomials of torch.special as binary pointwise ops p(x, n): Chebyshev
// T, U, V, W and their shifted forms on [0, 1], Hermite H (physicists') and He
// (probabilists'), Laguerre L and Legendre P; and the Airy function Ai, unary.
//
// As PyTorch does: n is truncated to an integer, n < 0 gives 0, the ends of the interval
// have exact values, and the three-term recurrence runs in the operand's compute type (so a
// float32 result overflows where PyTorch's does). The Triton versions are in
// framework/kernels/pointwise_polynomials.py. The table is appended to the binary one
// (pointwise_binary.cpp) by joined() in pointwise.h; airy_ai, a unary op, to the unary one
// (pointwise_unary.cpp).
#include "pointwise.h"

#include <cmath>
#include <cstdint>

namespace fw {
namespace pw {
namespace {

// n as PyTorch reads it: truncated toward 0 (-0.5 is degree 0); NaN counts as negative
template <typename C> inline int64_t degree(C n) {
  const double d = double(n);
  if (!(d == d) || d <= -1) return -1;
  return d > 9.2e18 ? INT64_MAX : int64_t(d);
}

// p_{k+1} = a(x) p_k - p_{k-1}, from p_0 = 1 and p_1 = q
template <typename C> inline C chebyshev_like(C x2, C q, int64_t n) {
  if (n == 0) return C(1);
  C p = C(1);
  for (int64_t k = 2; k <= n; ++k) {
    const C r = x2 * q - p;
    p = q;
    q = r;
  }
  return q;
}

template <typename C> C cheb_t(C x, int64_t n) {
  if (n < 0) return C(0);
  if (std::abs(x) == C(1)) return (x > 0 || n % 2 == 0) ? C(1) : C(-1);
  return chebyshev_like(x + x, x, n);
}

template <typename C> C cheb_u(C x, int64_t n) {
  if (n < 0) return C(0);
  if (std::abs(x) == C(1)) return (x > 0 || n % 2 == 0) ? C(n + 1) : C(-(n + 1));
  return chebyshev_like(x + x, x + x, n);
}

template <typename C> C cheb_v(C x, int64_t n) {
  if (n < 0) return C(0);
  if (std::abs(x) == C(1)) {
    if (x > 0) return C(1);
    return n % 2 == 0 ? C(n + n + 1) : C(-(n + n + 1));
  }
  return chebyshev_like(x + x, x + x - C(1), n);
}

template <typename C> C cheb_w(C x, int64_t n) {
  if (n < 0) return C(0);
  if (std::abs(x) == C(1)) {
    if (x > 0) return C(n + n + 1);
    return n % 2 == 0 ? C(1) : C(-1);
  }
  return chebyshev_like(x + x, x + x + C(1), n);
}

// the shifted polynomials: the plain ones at 2x - 1, with PyTorch's exact ends at 0 and 1
template <typename C> C shifted_t(C x, int64_t n) {
  if (n < 0) return C(0);
  if (x == C(1)) return C(1);
  if (x == C(0)) return n % 2 == 0 ? C(1) : C(-1);
  const C y = x + x - C(1);
  return chebyshev_like(y + y, y, n);
}

template <typename C> C shifted_u(C x, int64_t n) {
  if (n < 0) return C(0);
  if (x == C(1)) return C(n + 1);
  if (x == C(0)) return n % 2 == 0 ? C(n + 1) : C(-(n + 1));
  const C y = x + x - C(1);
  return chebyshev_like(y + y, y + y, n);
}

template <typename C> C shifted_v(C x, int64_t n) {
  if (n < 0) return C(0);
  if (x == C(1)) return C(1);
  if (x == C(0)) return n % 2 == 0 ? C(n + n + 1) : C(-(n + n + 1));
  const C y = x + x - C(1);
  return chebyshev_like(y + y, y + y - C(1), n);
}

template <typename C> C shifted_w(C x, int64_t n) {
  if (n < 0) return C(0);
  if (x == C(1)) return C(n + n + 1);
  if (x == C(0)) return n % 2 == 0 ? C(1) : C(-1);
  const C y = x + x - C(1);
  return chebyshev_like(y + y, y + y + C(1), n);
}

// H_{k+1} = 2x H_k - 2k H_{k-1}
template <typename C> C hermite_h(C x, int64_t n) {
  if (n < 0) return C(0);
  if (n == 0) return C(1);
  C p = C(1), q = x + x;
  for (int64_t k = 1; k < n; ++k) {
    const C r = (x + x) * q - C(k + k) * p;
    p = q;
    q = r;
  }
  return q;
}

// He_{k+1} = x He_k - k He_{k-1}
template <typename C> C hermite_he(C x, int64_t n) {
  if (n < 0) return C(0);
  if (n == 0) return C(1);
  C p = C(1), q = x;
  for (int64_t k = 1; k < n; ++k) {
    const C r = x * q - C(k) * p;
    p = q;
    q = r;
  }
  return q;
}

// (k + 1) L_{k+1} = (2k + 1 - x) L_k - k L_{k-1}
template <typename C> C laguerre_l(C x, int64_t n) {
  if (n < 0) return C(0);
  if (x == C(0) || n == 0) return C(1);
  C p = C(1), q = C(1) - x;
  for (int64_t k = 1; k < n; ++k) {
    const C r = ((C(k + k) + (C(1) - x)) * q - C(k) * p) / C(k + 1);
    p = q;
    q = r;
  }
  return q;
}

// (k + 1) P_{k+1} = (2k + 1) x P_k - k P_{k-1}
template <typename C> C legendre_p(C x, int64_t n) {
  if (n < 0) return C(0);
  if (std::abs(x) == C(1)) return (x > 0 || n % 2 == 0) ? C(1) : C(-1);
  if (n == 0) return C(1);
  C p = C(1), q = x;
  for (int64_t k = 1; k < n; ++k) {
    const C r = (C(k + k + 1) * x * q - C(k) * p) / C(k + 1);
    p = q;
    q = r;
  }
  return q;
}

// ---- the Airy function Ai -----------------------------------------------------------------
// Maclaurin series for -7 <= x <= 2.09 (at most ~e^{2 zeta} of cancellation: 1e-11 at
// the ends), Ai(x) = sqrt(x / 3) K_{1/3}(zeta) / pi with Steed's continued fraction for K
// above (zeta >= 2, where it converges fast), and the asymptotic expansion in zeta
// (DLMF 9.7.9) below -7 (zeta > 12: terms shrink past the double's precision). As PyTorch:
// NaN at +-inf, 0 beyond x = 103.892.
constexpr double kPiP = 3.141592653589793;

double airy_series(double x) {
  const double c1 = 0.355028053887817239, c2 = 0.258819403792806798;
  const double x3 = x * x * x;
  double f = 1, g = x, tf = 1, tg = x;
  for (int k = 1; k < 200; ++k) {
    tf *= x3 / ((3.0 * k - 1) * (3.0 * k));
    tg *= x3 / ((3.0 * k) * (3.0 * k + 1));
    f += tf;
    g += tg;
    if (std::abs(tf) <= 1e-17 * std::abs(f) && std::abs(tg) <= 1e-17 * std::abs(g)) break;
  }
  return c1 * f - c2 * g;
}

// K_{1/3}(z) e^{z} sqrt(2 z / pi), z >= 2 (Steed's CF2, Numerical Recipes' bessik)
double k13_scaled_inv(double z) {
  const double a1 = 0.25 - 1.0 / 9.0;
  double b = 2 * (1 + z), d = 1 / b, h = d, delh = d, q1 = 0, q2 = 1;
  double q = a1, c = a1, a = -a1, s = 1 + q * delh;
  for (int i = 2; i < 1000; ++i) {
    a -= 2 * (i - 1);
    c = -a * c / i;
    const double qn = (q1 - b * q2) / a;
    q1 = q2;
    q2 = qn;
    q += c * qn;
    b += 2;
    d = 1 / (b + a * d);
    delh = (b * d - 1) * delh;
    h += delh;
    const double dels = q * delh;
    s += dels;
    if (std::abs(dels) < 1e-17 * std::abs(s)) break;
  }
  return s;
}

double airy_ai_d(double x) {
  if (std::isnan(x) || std::isinf(x)) return NAN;
  if (x > 103.892) return 0.0;
  if (x > 2.09) {
    const double zeta = 2.0 / 3.0 * x * std::sqrt(x);
    // sqrt(x/3)/pi * sqrt(pi/(2 zeta)) e^{-zeta} / s
    return std::sqrt(x / 3.0) / kPiP * std::sqrt(kPiP / (2 * zeta)) * std::exp(-zeta) /
           k13_scaled_inv(zeta);
  }
  if (x >= -7.0) return airy_series(x);
  const double z = -x, zeta = 2.0 / 3.0 * z * std::sqrt(z);
  double u = 1, p = 1, q = 0, zk = 1;
  for (int k = 1; k < 24; ++k) {
    u *= (6.0 * k - 5) * (6.0 * k - 3) * (6.0 * k - 1) / ((2.0 * k - 1) * 216.0 * k);
    zk /= zeta;
    const double t = u * zk;
    // k odd: Q gets (-1)^((k-1)/2) u_k zeta^-k; k even: P gets (-1)^(k/2) u_k zeta^-k
    if (k % 2) q += ((k / 2) % 2 ? -t : t);
    else p += ((k / 2) % 2 ? -t : t);
  }
  const double ph = zeta - kPiP / 4;
  return (std::cos(ph) * p + std::sin(ph) * q) / (std::sqrt(kPiP) * std::sqrt(std::sqrt(z)));
}

struct AiryAi {
  template <typename T> using out_t = T;
  template <typename C> static inline C apply(C x, const Params&) {
    return C(airy_ai_d(double(x)));
  }
};

#define FW_POLY(NAME, FN)                                                           \
  struct NAME {                                                                    \
    template <typename T> using out_t = T;                                         \
    template <typename C> static inline C apply(C x, C n, const Params&) {         \
      return FN<C>(x, degree(n));                                                  \
    }                                                                              \
  };

FW_POLY(ChebT, cheb_t)
FW_POLY(ChebU, cheb_u)
FW_POLY(ChebV, cheb_v)
FW_POLY(ChebW, cheb_w)
FW_POLY(ShiftedT, shifted_t)
FW_POLY(ShiftedU, shifted_u)
FW_POLY(ShiftedV, shifted_v)
FW_POLY(ShiftedW, shifted_w)
FW_POLY(HermiteH, hermite_h)
FW_POLY(HermiteHe, hermite_he)
FW_POLY(LaguerreL, laguerre_l)
FW_POLY(LegendreP, legendre_p)

}  // namespace

const std::vector<UnaryKernel>& polynomial_unary_kernels() {
  static const std::vector<UnaryKernel> k = {
      FW_U("airy_ai", AiryAi, M_FLOAT, "airy_ai_cpu"),
  };
  return k;
}

const std::vector<BinaryKernel>& polynomial_binary_kernels() {
  static const std::vector<BinaryKernel> k = {
      FW_B("chebyshev_polynomial_t", ChebT, M_FLOAT, "chebyshev_polynomial_t_cpu"),
      FW_B("chebyshev_polynomial_u", ChebU, M_FLOAT, "chebyshev_polynomial_u_cpu"),
      FW_B("chebyshev_polynomial_v", ChebV, M_FLOAT, "chebyshev_polynomial_v_cpu"),
      FW_B("chebyshev_polynomial_w", ChebW, M_FLOAT, "chebyshev_polynomial_w_cpu"),
      FW_B("shifted_chebyshev_polynomial_t", ShiftedT, M_FLOAT,
           "shifted_chebyshev_polynomial_t_cpu"),
      FW_B("shifted_chebyshev_polynomial_u", ShiftedU, M_FLOAT,
           "shifted_chebyshev_polynomial_u_cpu"),
      FW_B("shifted_chebyshev_polynomial_v", ShiftedV, M_FLOAT,
           "shifted_chebyshev_polynomial_v_cpu"),
      FW_B("shifted_chebyshev_polynomial_w", ShiftedW, M_FLOAT,
           "shifted_chebyshev_polynomial_w_cpu"),
      FW_B("hermite_polynomial_h", HermiteH, M_FLOAT, "hermite_polynomial_h_cpu"),
      FW_B("hermite_polynomial_he", HermiteHe, M_FLOAT, "hermite_polynomial_he_cpu"),
      FW_B("laguerre_polynomial_l", LaguerreL, M_FLOAT, "laguerre_polynomial_l_cpu"),
      FW_B("legendre_polynomial_p", LegendreP, M_FLOAT, "legendre_polynomial_p_cpu"),
  };
  return k;
}

}  // namespace pw
}  // namespace fw
