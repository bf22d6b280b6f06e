// Special functions of the pointwise family: the gamma family (lgamma, digamma, trigamma,
// polygamma, the Hurwitz zeta, the regularized incomplete gamma functions), Bessel
// functions (I0, I1, K0, K1 and their scaled forms, J0, J1, Y0, Y1, spherical j0) and the
// normal distribution (ndtr, ndtri, log_ndtr, erfcx), plus entr and xlog1py.
//
// Every op computes in double whatever the float dtype and rounds once. The methods are
// those of the Triton versions (framework/kernels/pointwise_special.py and
// pointwise_bessel.py, whose docstrings list them), so both devices agree to a few ulp.
// The tables are appended to the unary and binary ones (pointwise_unary.cpp,
// pointwise_binary.cpp) by joined() in pointwise.h.
#include "pointwise.h"

#include <cmath>

namespace fw {
namespace pw {
namespace {

constexpr double kPi = 3.141592653589793;
constexpr double kEuler = 0.5772156649015329;
constexpr double kEps = 1.11022302462515654042e-16;
constexpr double kInf = INFINITY;
const double kNan = std::nan("");

// ---- gamma family ---------------------------------------------------------------------

// lgamma_r: std::lgamma writes the global signgam, a race between the loop's threads
double lgamma_d(double x) {
  int sign;
  return ::lgamma_r(x, &sign);
}

// psi(x): torch's calc_digamma (reflection below 0, recurrence to 10, asymptotic series)
double digamma_d(double x) {
  if (x == 0) return std::copysign(kInf, -x);
  if (x < 0) {
    if (x == std::trunc(x)) return kNan;
    const double r = x - std::trunc(x);
    return digamma_d(1 - x) - kPi / std::tan(kPi * r);
  }
  if (x == kInf) return x;
  double res = 0;
  while (x < 10) { res -= 1 / x; x += 1; }
  double y = 0;
  if (x < 1e17) {
    const double z = 1 / (x * x);
    double p = 8.33333333333333333333E-2;
    p = p * z - 2.10927960927960927961E-2;
    p = p * z + 7.57575757575757575758E-3;
    p = p * z - 4.16666666666666666667E-3;
    p = p * z + 3.96825396825396825397E-3;
    p = p * z - 8.33333333333333333333E-3;
    p = p * z + 8.33333333333333333333E-2;
    y = z * p;
  }
  return res + std::log(x) - 0.5 / x - y;
}

// Hurwitz zeta(x, q) (Cephes): direct sum until q + i > 9, then Euler-Maclaurin.
double zeta_d(double x, double q) {
  static const double A[] = {12.0, -720.0, 30240.0, -1209600.0, 47900160.0,
                             -1.8924375803183791606e9, 7.47242496e10,
                             -2.950130727918164224e12, 1.1646782814350067249e14,
                             -4.5979787224074726105e15, 1.8152105401943546773e17,
                             -7.1661652561756670113e18};
  if (x != x || q != q) return kNan;
  if (x == 1) return kInf;
  if (x < 1 || q == kInf) return kNan;
  if (q <= 0) {
    if (q == std::floor(q)) return kInf;
    if (x != std::floor(x)) return kNan;
  }
  double s = std::pow(q, -x), a = q, b = 0;
  int i = 0;
  while (i < 9 || (a <= 9 && i < 10000)) {  // q < -1e4 stops early (inaccurate there)
    i++;
    a += 1;
    b = std::pow(a, -x);
    s += b;
    if (std::fabs(b / s) < kEps) return s;
  }
  const double w = a;
  s += b * w / (x - 1);
  s -= 0.5 * b;
  double aa = 1, k = 0;
  for (int j = 0; j < 12; j++) {
    aa *= x + k;
    b /= w;
    const double t = aa * b / A[j];
    s += t;
    if (std::fabs(t / s) < kEps) return s;
    k += 1;
    aa *= x + k;
    b /= w;
    k += 1;
  }
  return s;
}

// psi'(x) = zeta(2, x), reflected below 1/2 (torch's calc_trigamma has the same
// structure with a shorter series, good to ~1e-9)
double trigamma_d(double x) {
  if (x < 0.5) {
    const double s = std::sin(kPi * x);
    return (kPi * kPi) / (s * s) - zeta_d(2, 1 - x);
  }
  return x == kInf ? 0.0 : zeta_d(2, x);
}

double polygamma_d(double n, double x) {
  if (n == 0) return digamma_d(x);
  if (n == 1) return trigamma_d(x);
  const double sign = std::fmod(n, 2.0) == 1 ? 1.0 : -1.0;
  return sign * std::exp(lgamma_d(n + 1)) * zeta_d(n + 1, x);
}

// x^a e^-x / Gamma(a)
double igam_fac(double a, double x) { return std::exp(a * std::log(x) - x - lgamma_d(a)); }

double igam_series(double a, double x) {
  const double ax = igam_fac(a, x);
  if (ax == 0) return 0;
  double r = a, c = 1, ans = 1;
  for (int i = 0; i < 4000; i++) {
    r += 1;
    c *= x / r;
    ans += c;
    if (c <= kEps * ans) break;
  }
  return ans * ax / a;
}

double igamc_cf(double a, double x) {
  const double ax = igam_fac(a, x);
  if (ax == 0) return 0;
  double y = 1 - a, z = x + y + 1, c = 0;
  double pkm2 = 1, qkm2 = x, pkm1 = x + 1, qkm1 = z * x, ans = pkm1 / qkm1;
  for (int i = 0; i < 4000; i++) {
    c += 1;
    y += 1;
    z += 2;
    const double yc = y * c;
    const double pk = pkm1 * z - pkm2 * yc, qk = qkm1 * z - qkm2 * yc;
    double t = 1;
    if (qk != 0) {
      const double r = pk / qk;
      t = std::fabs((ans - r) / r);
      ans = r;
    }
    pkm2 = pkm1; pkm1 = pk; qkm2 = qkm1; qkm1 = qk;
    if (std::fabs(pk) > 4.503599627370496e15) {
      pkm2 *= kEps * 2; pkm1 *= kEps * 2; qkm2 *= kEps * 2; qkm1 *= kEps * 2;
    }
    if (t <= 8 * kEps) break;  // the ratio settles within a few ulp, not always one
  }
  return ans * ax;
}

double igamc_small(double a, double x) {
  double fac = 1, sum = 0;
  for (int n = 1; n < 2000; n++) {
    fac *= -x / n;
    const double term = fac / (a + n);
    sum += term;
    if (std::fabs(term) <= kEps * std::fabs(sum)) break;
  }
  const double logx = std::log(x);
  return -std::expm1(a * logx - lgamma_d(a + 1)) - std::exp(a * logx - lgamma_d(a)) * sum;
}

double igammac_d(double a, double x);

double igamma_d(double a, double x) {
  if (a != a || x != x || a < 0 || x < 0) return kNan;
  if (a == 0) return x > 0 ? 1 : kNan;
  if (x == 0) return 0;
  if (a == kInf) return x == kInf ? kNan : 0;
  if (x == kInf) return 1;
  if (x > 1 && x > a) return 1 - igamc_cf(a, x);
  return igam_series(a, x);
}

double igammac_d(double a, double x) {
  if (a != a || x != x || a < 0 || x < 0) return kNan;
  if (a == 0) return x > 0 ? 0 : kNan;
  if (x == 0) return 1;
  if (a == kInf) return x == kInf ? kNan : 1;
  if (x == kInf) return 0;
  if (x > 1.1) return x < a ? 1 - igam_series(a, x) : igamc_cf(a, x);
  if (x <= 0.5) return -0.4 / std::log(x) < a ? 1 - igam_series(a, x) : igamc_small(a, x);
  return x * 1.1 < a ? 1 - igam_series(a, x) : igamc_small(a, x);
}

// ---- Bessel functions -----------------------------------------------------------------

// I_nu(x), x >= 0, by its power series
double i_series(double x, int nu) {
  const double q = x * x * 0.25;
  double term = 1, s = 1;
  for (int k = 1; k < 200; k++) {
    term *= q / (double(k) * (k + nu));
    s += term;
    if (term < kEps * s) break;
  }
  return nu == 1 ? s * x * 0.5 : s;
}

// e^-x I_nu(x) for large x (Hankel's expansion)
double i_asym(double x, int nu) {
  const double mu = 4.0 * nu * nu;
  double s = 1, term = 1;
  for (int k = 1; k < 30; k++) {
    term = -term * (mu - double(2 * k - 1) * (2 * k - 1)) / (k * 8.0 * x);
    s += term;
  }
  return s / std::sqrt(2 * kPi * x);
}

double bessel_i(double x, int nu, bool scaled) {
  if (x != x) return x;
  const double a = std::fabs(x);
  double r;
  if (a > 20) {
    r = i_asym(a, nu);
    if (!scaled) r = r * std::exp(a * 0.5) * std::exp(a * 0.5);
  } else {
    r = i_series(a, nu);
    if (scaled) r *= std::exp(-a);
  }
  return nu == 1 && x < 0 ? -r : r;
}

// K_nu(x) (nu 0 or 1), or e^x K_nu(x): power series up to 2, Steed's CF2 above
double bessel_k(double x, int nu, bool scaled) {
  if (x != x || x < 0) return kNan;
  if (x == 0) return kInf;
  if (x == kInf) return 0;
  if (x > 1e8) return scaled ? std::sqrt(kPi / (2 * x)) : 0.0;
  if (x <= 2) {
    const double q = x * x * 0.25, lg = std::log(x * 0.5) + kEuler;
    double term = 1, h = 0, r;
    if (nu == 0) {
      double s = 0, i0 = 1;
      for (int k = 1; k < 40; k++) {
        term *= q / (double(k) * k);
        h += 1.0 / k;
        s += term * h;
        i0 += term;
        if (term < kEps * i0) break;
      }
      r = s - lg * i0;
    } else {
      double s = 1, i1 = 1;
      for (int k = 1; k < 40; k++) {
        term *= q / (double(k) * (k + 1));
        h += 1.0 / k;
        s += term * (2 * h + 1.0 / (k + 1));
        i1 += term;
        if (term < kEps * i1) break;
      }
      r = 1 / x + lg * i1 * x * 0.5 - x * 0.25 * s;
    }
    return scaled ? r * std::exp(x) : r;
  }
  double b = 2 * (1 + x), d = 1 / b, h = d, delh = d, q1 = 0, q2 = 1;
  const double a1 = 0.25;
  double q = a1, c = a1, a = -a1, s = 1 + q * delh;
  for (int i = 1; i < 200; i++) {
    a -= 2 * i;
    c = -a * c / (i + 1.0);
    const double qnew = (q1 - b * q2) / a;
    q1 = q2;
    q2 = qnew;
    q += c * qnew;
    b += 2;
    d = 1 / (b + a * d);
    delh = (b * d - 1) * delh;
    h += delh;
    const double dels = q * delh;
    s += dels;
    if (std::fabs(dels / s) < kEps) break;
  }
  h = a1 * h;
  double k = std::sqrt(kPi / (2 * x)) / s;
  if (nu == 1) k *= (x + 0.5 - h) / x;
  return scaled ? k : k * std::exp(-x);
}

// J_nu(x) or Y_nu(x), x > 0: power series up to 8, Miller's backward recurrence (with
// Neumann's series for Y) up to 25, Hankel's expansion beyond
double bessel_jy_pos(double x, int nu, bool y) {
  if (x <= 8) {
    const double q = -x * x * 0.25, lg = std::log(x * 0.5) + kEuler;
    double term = 1, js = 1, hs = nu == 1 ? 1 : 0, h = 0;
    for (int k = 1; k < 40; k++) {
      term *= q / (double(k) * (k + nu));
      h += 1.0 / k;
      js += term;
      hs += nu == 0 ? term * h : term * (2 * h + 1.0 / (k + 1));
    }
    if (nu == 0) return y ? 0.6366197723675814 * (lg * js - hs) : js;
    const double j = js * x * 0.5;
    return y ? 0.6366197723675814 * (lg * j - 1 / x) - 0.3183098861837907 * x * 0.5 * hs : j;
  }
  if (x <= 25) {
    double jp1 = 0, jk = 1e-30, norm = 0, neu = 0, neu1 = 0, j1 = 0;
    for (int n = 64; n >= 1; n--) {
      const double jm1 = 2.0 * n / x * jk - jp1;
      if (n % 2 == 0) {
        const int m = n / 2;
        norm += 2 * jk;
        neu += (m % 2 == 0 ? jk : -jk) / m;
      } else {
        const int lo = (n + 1) / 2, hi = (n - 1) / 2;
        neu1 += (lo % 2 == 0 ? jk : -jk) / lo;
        if (hi >= 1) neu1 -= (hi % 2 == 0 ? jk : -jk) / hi;
      }
      if (n == 1) j1 = jk;
      jp1 = jk;
      jk = jm1;
    }
    norm += jk;
    const double j0 = jk / norm, jj1 = j1 / norm, lg = std::log(x * 0.5) + kEuler;
    if (nu == 0) return y ? 0.6366197723675814 * (lg * j0 - 2 * neu / norm) : j0;
    return y ? 0.6366197723675814 * (lg * jj1 - j0 / x + neu1 / norm) : jj1;
  }
  const double mu = 4.0 * nu * nu;
  double p = 1, q = 0, term = 1;
  for (int k = 1; k < 40; k++) {
    term = term * (mu - double(2 * k - 1) * (2 * k - 1)) / (k * 8.0 * x);
    switch (k % 4) {
      case 1: q += term; break;
      case 2: p -= term; break;
      case 3: q -= term; break;
      default: p += term;
    }
  }
  const double chi = x - (0.5 * nu + 0.25) * kPi, amp = std::sqrt(0.6366197723675814 / x);
  return y ? amp * (p * std::sin(chi) + q * std::cos(chi))
           : amp * (p * std::cos(chi) - q * std::sin(chi));
}

double bessel_j(double x, int nu) {
  if (x != x || std::isinf(x)) return kNan;
  if (x == 0) return nu == 0 ? 1 : x;
  const double r = bessel_jy_pos(std::fabs(x), nu, false);
  return nu == 1 && x < 0 ? -r : r;
}

double bessel_y(double x, int nu) {
  if (x != x || std::isinf(x) || x < 0) return kNan;
  if (x == 0) return -kInf;
  return bessel_jy_pos(x, nu, true);
}

// ---- the normal distribution ----------------------------------------------------------

// e^(x^2) erfc(x): below 2 from erfc with x^2 split exactly, above by Laplace's fraction
double erfcx_d(double x) {
  if (x != x) return x;
  if (x < 2) {
    if (x < -26.7) return kInf;
    const double hi = x * x, lo = std::fma(x, x, -hi);
    return std::exp(hi) * (1 + lo) * std::erfc(x);
  }
  if (x > 1e8) return 0.5641895835477563 / x;
  double f = x;
  for (int k = 60; k > 0; k--) f = x + (k * 0.5) / f;
  return 0.5641895835477563 / f;
}

double ndtr_d(double x) { return 0.5 * std::erfc(-x * 0.7071067811865476); }

// the normal quantile: Acklam's approximation, two Halley steps
double ndtri_d(double p) {
  if (p != p || p < 0 || p > 1) return kNan;
  if (p == 0) return -kInf;
  if (p == 1) return kInf;
  const bool lower = p < 0.02425, upper = p > 1 - 0.02425;
  double z;
  if (lower || upper) {
    const double q = std::sqrt(-2 * std::log(lower ? p : 1 - p));
    z = (((((-7.784894002430293e-03 * q - 3.223964580411365e-01) * q - 2.400758277161838e+00) * q
           - 2.549732539343734e+00) * q + 4.374664141464968e+00) * q + 2.938163982698783e+00) /
        ((((7.784695709041462e-03 * q + 3.224671290700398e-01) * q + 2.445134137142996e+00) * q
          + 3.754408661907416e+00) * q + 1);
    if (upper) z = -z;
  } else {
    const double q = p - 0.5, r = q * q;
    z = (((((-3.969683028665376e+01 * r + 2.209460984245205e+02) * r - 2.759285104469687e+02) * r
           + 1.383577518672690e+02) * r - 3.066479806614716e+01) * r + 2.506628277459239e+00) * q /
        (((((-5.447609879822406e+01 * r + 1.615858368580409e+02) * r - 1.556989798598866e+02) * r
           + 6.680131188771972e+01) * r - 1.328068155288572e+01) * r + 1);
  }
  for (int i = 0; i < 2; i++) {
    // ndtr(z) - p; in the upper tail from the complements, which keep their accuracy
    const double e = upper ? (1 - p) - ndtr_d(-z) : ndtr_d(z) - p;
    const double u = e * 2.5066282746310002 * std::exp(z * z * 0.5);
    z = z - u / (1 + z * u * 0.5);
  }
  return z;
}

double log_ndtr_d(double x) {
  const double t = x * 0.7071067811865476;
  if (x < -1) return std::log(erfcx_d(-t) * 0.5) - t * t;
  return std::log1p(-std::erfc(t) * 0.5);
}

double entr_d(double x) {
  if (x != x) return x;
  if (x > 0) return -x * std::log(x);
  return x == 0 ? 0 : -kInf;
}

double xlog1py_d(double x, double y) {
  if (y != y) return y;
  if (x == 0) return 0;
  return x * std::log1p(y);
}

// ---- functors: compute in double, round once --------------------------------------------

#define FW_SPECIAL_U(NAME, EXPR)                                                   \
  struct NAME {                                                                    \
    template <typename T> using out_t = T;                                         \
    template <typename C> static inline C apply(C xc, const Params& p) {           \
      (void)p; const double x = double(xc); return C(EXPR);                        \
    }                                                                              \
  };
#define FW_SPECIAL_B(NAME, EXPR)                                                   \
  struct NAME {                                                                    \
    template <typename T> using out_t = T;                                         \
    template <typename C> static inline C apply(C ac, C bc, const Params&) {       \
      const double a = double(ac), b = double(bc); return C(EXPR);                 \
    }                                                                              \
  };

FW_SPECIAL_U(Lgamma, lgamma_d(x))
FW_SPECIAL_U(Digamma, digamma_d(x))
FW_SPECIAL_U(Trigamma, trigamma_d(x))
FW_SPECIAL_U(Polygamma, polygamma_d(p.p0, x))
FW_SPECIAL_U(I0, bessel_i(x, 0, false))
FW_SPECIAL_U(I0e, bessel_i(x, 0, true))
FW_SPECIAL_U(I1, std::isinf(x) ? kNan : bessel_i(x, 1, false))  // torch's i1(+-inf)
FW_SPECIAL_U(I1e, bessel_i(x, 1, true))
FW_SPECIAL_U(K0, bessel_k(x, 0, false))
FW_SPECIAL_U(K1, bessel_k(x, 1, false))
FW_SPECIAL_U(K0e, bessel_k(x, 0, true))
FW_SPECIAL_U(K1e, bessel_k(x, 1, true))
FW_SPECIAL_U(J0, bessel_j(x, 0))
FW_SPECIAL_U(J1, bessel_j(x, 1))
FW_SPECIAL_U(Y0, bessel_y(x, 0))
FW_SPECIAL_U(Y1, bessel_y(x, 1))
FW_SPECIAL_U(SphericalJ0, std::isinf(x) ? 0.0 : (x == 0 ? 1.0 : std::sin(x) / x))
FW_SPECIAL_U(Ndtr, ndtr_d(x))
FW_SPECIAL_U(Ndtri, ndtri_d(x))
FW_SPECIAL_U(LogNdtr, log_ndtr_d(x))
FW_SPECIAL_U(Erfcx, erfcx_d(x))
FW_SPECIAL_U(Entr, entr_d(x))
FW_SPECIAL_B(Zeta, zeta_d(a, b))
FW_SPECIAL_B(Igamma, igamma_d(a, b))
FW_SPECIAL_B(Igammac, igammac_d(a, b))
FW_SPECIAL_B(Xlog1py, xlog1py_d(a, b))

}  // namespace

const std::vector<UnaryKernel>& special_unary_kernels() {
  static const std::vector<UnaryKernel> k = {
      FW_U("lgamma", Lgamma, M_FLOAT, "lgamma_vml_cpu"),
      FW_U("digamma", Digamma, M_FLOAT, "digamma"),
      FW_U("trigamma", Trigamma, M_FLOAT, "trigamma"),
      FW_U("polygamma", Polygamma, M_FLOAT, "polygamma"),
      FW_U("i0", I0, M_FLOAT, "i0_vml_cpu"),
      FW_U("i0e", I0e, M_FLOAT, "i0e_vml_cpu"),
      FW_U("i1", I1, M_FLOAT, "i1_cpu"),
      FW_U("i1e", I1e, M_FLOAT, "i1e_cpu"),
      FW_U("k0", K0, M_FLOAT, "modified_bessel_k0_cpu"),
      FW_U("k1", K1, M_FLOAT, "modified_bessel_k1_cpu"),
      FW_U("k0e", K0e, M_FLOAT, "scaled_modified_bessel_k0_cpu"),
      FW_U("k1e", K1e, M_FLOAT, "scaled_modified_bessel_k1_cpu"),
      FW_U("bessel_j0", J0, M_FLOAT, "bessel_j0_cpu"),
      FW_U("bessel_j1", J1, M_FLOAT, "bessel_j1_cpu"),
      FW_U("bessel_y0", Y0, M_FLOAT, "bessel_y0_cpu"),
      FW_U("bessel_y1", Y1, M_FLOAT, "bessel_y1_cpu"),
      FW_U("spherical_bessel_j0", SphericalJ0, M_FLOAT, "spherical_bessel_j0_cpu"),
      FW_U("ndtr", Ndtr, M_FLOAT, "ndtr_cpu"),
      FW_U("ndtri", Ndtri, M_FLOAT, "ndtri_cpu"),
      FW_U("log_ndtr", LogNdtr, M_FLOAT, "log_ndtr_cpu"),
      FW_U("erfcx", Erfcx, M_FLOAT, "erfcx_cpu"),
      FW_U("entr", Entr, M_FLOAT, "entr_cpu"),
  };
  return k;
}

const std::vector<BinaryKernel>& special_binary_kernels() {
  static const std::vector<BinaryKernel> k = {
      FW_B("zeta", Zeta, M_FLOAT, "zeta_cpu"),
      FW_B("igamma", Igamma, M_FLOAT, "igamma_cpu"),
      FW_B("igammac", Igammac, M_FLOAT, "igammac_cpu"),
      FW_B("xlog1py", Xlog1py, M_FLOAT, "xlog1py_cpu"),
  };
  return k;
}

}  // namespace pw
}  // namespace fw
