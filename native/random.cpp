// Counter-based random numbers: Philox 4x32-10, bit-identical to framework/kernels/random.py.
//
// Element i of a call with (seed, offset) is computed from the four 32-bit words
// philox(key = seed, counter = offset + i), exactly as Triton's `tl.randint4x(seed, offset + i)`
// computes them; element i never depends on another element, so any chunking (threads here,
// program blocks on the GPU) gives the same numbers. How words become values, per dtype:
//   uniform [0,1): float32: Triton's `tl.rand` (word 0 folded to 31 bits, times 2^-31-ish);
//                  float16: (w0 >> 21) * 2^-11; bfloat16: (w0 >> 24) * 2^-8 (exact, < 1);
//                  float64: u53(w0, w1) = ((w0 << 32 | w1) >> 11) * 2^-53.
//   normal:        Box-Muller in float64, sqrt(-2 log(1 - u53(w0, w1))) * cos(2 pi u53(w2, w3)),
//                  then rounded to the dtype. log and cos are our own (log_m53, sincos_turns):
//                  only +, -, *, /, sqrt, fma and integer operations, which IEEE fixes to the
//                  bit, so every dtype agrees on every device. (`tl.randn` uses the device's
//                  float32 log/cos, whose last bits differ between libm, NumPy and libdevice.)
//   integers:      low + (w0 % range) if range <= 2^32, else low + ((w0 << 32 | w1) % range).
//   bernoulli:     u53(w0, w1) < p.
// Products and sums that a compiler could fuse are written as explicit fma on both sides, and
// negation as 0 - x (Triton's), so signed zeros agree too.
#include <algorithm>
#include <limits>
#include <numeric>

#include "common.h"
#include "philox.h"

namespace fw {
namespace {

// Triton's uint_to_uniform_float for 32-bit words: fold the sign away, scale below 1.
inline float uniform_f32(uint32_t w) {
  int32_t x = (int32_t)w;
  if (x < 0) x = ~x;
  return (float)x * 4.6566127342e-10f;
}

inline uint64_t bits64(uint32_t hi, uint32_t lo) { return ((uint64_t)hi << 32) | lo; }

inline double u53(uint32_t hi, uint32_t lo) {
  return (double)(bits64(hi, lo) >> 11) * 0x1p-53;
}

// The dtype's own uniform in [0, 1), as double (exact).
template <typename T>
inline double uniform_of(const Words& w) {
  if constexpr (std::is_same<T, float>::value) return uniform_f32(w.w0);
  else if constexpr (std::is_same<T, Half>::value) return (double)(w.w0 >> 21) * 0x1p-11;
  else if constexpr (std::is_same<T, BFloat16>::value) return (double)(w.w0 >> 24) * 0x1p-8;
  else return u53(w.w0, w.w1);
}

// Taylor coefficients of cos(pi/2 r) and sin(pi/2 r) / r in r^2, for |r| <= 1/2 (the next
// terms are below 2^-58), and of 2 atanh(s) / s in s^2 for |s| <= 0.1716.
constexpr double kCos[9] = {1.0, -1.2337005501361697, 0.253669507901048,
                            -0.020863480763352957, 0.0009192602748394263,
                            -2.5202042373060596e-05, 4.710874778818169e-07,
                            -6.386603083791849e-09, 6.565963114979468e-11};
constexpr double kSin[9] = {1.5707963267948966, -0.6459640975062462, 0.07969262624616703,
                            -0.004681754135318687, 0.00016044118478735975,
                            -3.598843235212084e-06, 5.692172921967924e-08,
                            -6.688035109811464e-10, 6.066935731106192e-12};
constexpr double kLog[12] = {2.0, 0.6666666666666666, 0.4, 0.2857142857142857,
                             0.2222222222222222, 0.18181818181818182, 0.15384615384615385,
                             0.13333333333333333, 0.11764705882352941, 0.10526315789473684,
                             0.09523809523809523, 0.08695652173913043};

// log(m * 2^-53) for an integer 1 <= m <= 2^53: m = 2^e f with f in [sqrt(1/2), sqrt(2)),
// log f = 2 atanh(s) with s = (f - 1) / (f + 1). A few ulp of error, the same everywhere.
inline double log_m53(int64_t m) {
  const double y = (double)m;
  int64_t bits;
  std::memcpy(&bits, &y, 8);
  int64_t e = (bits >> 52) - 1023;
  const int64_t fb = (bits & 0x000FFFFFFFFFFFFFLL) | 0x3FF0000000000000LL;
  double f;
  std::memcpy(&f, &fb, 8);
  const bool big = f > 1.4142135623730951;
  f = big ? f * 0.5 : f;
  e += big ? 1 : 0;
  const double s = (f - 1.0) / (f + 1.0);
  const double z = s * s;
  double p = kLog[11];
#pragma GCC unroll 16
  for (int i = 10; i >= 0; i--) p = std::fma(p, z, kLog[i]);
  return std::fma((double)(e - 53), 0.6931471805599453, s * p);
}

struct SinCos {
  double s, c;
};

// sin and cos of the angle 2 pi b / 2^53 for an integer 0 <= b < 2^53. The reduction to the
// nearest quarter turn is exact integer arithmetic: angle = q pi/2 + r pi/2, |r| <= 1/2.
inline SinCos sincos_turns(int64_t b) {
  const int64_t q = (b + ((int64_t)1 << 50)) >> 51;
  const double r = (double)(b - (q << 51)) * 0x1p-51;
  const double z = r * r;
  double c = kCos[8], s = kSin[8];
#pragma GCC unroll 16
  for (int i = 7; i >= 0; i--) {
    c = std::fma(c, z, kCos[i]);
    s = std::fma(s, z, kSin[i]);
  }
  s = s * r;
  const int k = (int)(q & 3);
  const double ns = 0.0 - s, nc = 0.0 - c;
  return {k == 0 ? s : k == 1 ? c : k == 2 ? ns : nc, k == 0 ? c : k == 1 ? ns : k == 2 ? nc : s};
}

inline int64_t top53(uint32_t hi, uint32_t lo) { return (int64_t)(bits64(hi, lo) >> 11); }

inline double normal_of(const Words& w) {
  const int64_t m = ((int64_t)1 << 53) - top53(w.w0, w.w1);  // 1 - u1 = m 2^-53, in (0, 1]
  const double r = std::sqrt(-2.0 * log_m53(m));
  return r * sincos_turns(top53(w.w2, w.w3)).c;
}

// Rounds a double to T like the Triton kernels do (float64 -> float32 -> 16-bit float).
template <typename T>
inline T from_double(double v) {
  if constexpr (std::is_same<T, double>::value) return v;
  else if constexpr (is_float_v<T>) return T((float)v);
  else if constexpr (std::is_same<T, bool>::value) return v != 0.0;
  else {
    // integer outputs (geometric_): saturate to the int64 range first
    return (T)(int64_t)std::min(std::max(v, -9223372036854775808.0), 9223372036854774784.0);
  }
}

enum Kind { UNIFORM = 0, NORMAL = 1, EXPONENTIAL = 2, CAUCHY = 3, LOG_NORMAL = 4, GEOMETRIC = 5 };

// The value of one element for a distribution kind with parameters (a, b):
//   UNIFORM     a + u * b             (low, high - low)
//   NORMAL      a + n * b             (mean, std)
//   EXPONENTIAL -log(1 - u53) * b     (b = 1 / lambda)
//   CAUCHY      a + tan(theta - pi/2) * b, theta uniform in (0, pi)   (median, sigma)
//   LOG_NORMAL  exp(a + n * b)        (mean, std of the log)
//   GEOMETRIC   ceil(log(v) * b), v = odd 53-bit fraction in (0,1), b = 1 / log1p(-p)
template <int K, typename T>
inline double value_of(const Words& w, double a, double b) {
  if constexpr (K == UNIFORM) {
    return std::fma(uniform_of<T>(w), b, a);
  } else if constexpr (K == NORMAL) {
    return std::fma(normal_of(w), b, a);
  } else if constexpr (K == EXPONENTIAL) {
    const int64_t m = ((int64_t)1 << 53) - top53(w.w0, w.w1);
    return (0.0 - log_m53(m)) * b;
  } else if constexpr (K == CAUCHY) {
    // tan(theta - pi/2) = -cos/sin theta, theta = 2 pi bt / 2^53 in (0, pi) (bt odd, < 2^52)
    const int64_t bt = (int64_t)((bits64(w.w0, w.w1) >> 13) << 1) | 1;
    const SinCos sc = sincos_turns(bt);
    return std::fma((0.0 - sc.c) / sc.s, b, a);
  } else if constexpr (K == LOG_NORMAL) {
    return std::exp(std::fma(normal_of(w), b, a));
  } else {
    const int64_t k = (int64_t)(bits64(w.w0, w.w1) >> 12);
    return std::max(1.0, std::ceil(log_m53(2 * k + 1) * b));
  }
}

constexpr int64_t kGrain = 16384;

// Calls f(i, off) for every element of a strided view, i the row-major (logical) index and
// off the element offset, in parallel chunks.
template <typename F>
void for_each_element(const Shape& shape, const Shape& strides, F&& f) {
  Nest<1> nest(shape, {&strides});
  if (nest.numel == 0) return;
  const int64_t is = nest.inner_stride(0);
  parallel_for(0, nest.numel, kGrain, [&](int64_t b, int64_t e) {
    int64_t i = b;
    nest.runs(b, e, [&](const int64_t* off, int64_t n) {
      if (is == 1) {
        for (int64_t k = 0; k < n; k++) f(i + k, off[0] + k);
      } else {
        for (int64_t k = 0; k < n; k++) f(i + k, off[0] + k * is);
      }
      i += n;
    });
  });
}

constexpr int kBlock = 64;

// Values of counters ctr .. ctr+n-1 (n <= kBlock) into out[0 .. n-1]. Two simple passes
// (Philox words, values in double, rounding to T) so that the compiler can vectorize each.
template <int K, typename T>
inline void values_block(uint64_t seed, uint64_t ctr, int n, double a, double b, T* out) {
  uint32_t w0[kBlock], w1[kBlock], w2[kBlock], w3[kBlock];
  for (int i = 0; i < n; i++) {
    const Words w = philox(seed, ctr + (uint64_t)i);
    w0[i] = w.w0;
    w1[i] = w.w1;
    w2[i] = w.w2;
    w3[i] = w.w3;
  }
  double v[kBlock];
  for (int i = 0; i < n; i++) v[i] = value_of<K, T>(Words{w0[i], w1[i], w2[i], w3[i]}, a, b);
  for (int i = 0; i < n; i++) out[i] = from_double<T>(v[i]);
}

template <int K, typename T>
void fill_dist(uintptr_t out, const Shape& shape, const Shape& strides, uint64_t seed,
               uint64_t offset, double a, double b) {
  T* o = ptr<T>(out);
  Nest<1> nest(shape, {&strides});
  if (nest.numel == 0) return;
  const int64_t is = nest.inner_stride(0);
  parallel_for(0, nest.numel, kGrain, [&](int64_t begin, int64_t end) {
    int64_t i = begin;
    T tmp[kBlock];
    nest.runs(begin, end, [&](const int64_t* off, int64_t n) {
      for (int64_t j = 0; j < n; j += kBlock) {
        const int m = (int)std::min<int64_t>(kBlock, n - j);
        const uint64_t ctr = offset + (uint64_t)(i + j);
        if (is == 1) {
          values_block<K, T>(seed, ctr, m, a, b, o + off[0] + j);
        } else {
          values_block<K, T>(seed, ctr, m, a, b, tmp);
          for (int k = 0; k < m; k++) o[off[0] + (j + k) * is] = tmp[k];
        }
      }
      i += n;
    });
  });
}

template <typename T>
void fill_kind(int kind, uintptr_t out, const Shape& shape, const Shape& strides, uint64_t seed,
               uint64_t offset, double a, double b) {
  switch (kind) {
    case UNIFORM: return fill_dist<UNIFORM, T>(out, shape, strides, seed, offset, a, b);
    case NORMAL: return fill_dist<NORMAL, T>(out, shape, strides, seed, offset, a, b);
    case EXPONENTIAL: return fill_dist<EXPONENTIAL, T>(out, shape, strides, seed, offset, a, b);
    case CAUCHY: return fill_dist<CAUCHY, T>(out, shape, strides, seed, offset, a, b);
    case LOG_NORMAL: return fill_dist<LOG_NORMAL, T>(out, shape, strides, seed, offset, a, b);
    case GEOMETRIC: return fill_dist<GEOMETRIC, T>(out, shape, strides, seed, offset, a, b);
    default: fail("random_fill: unknown distribution kind " + std::to_string(kind));
  }
}

// Fills a strided view with a distribution (see value_of); counters offset .. offset+numel-1.
void random_fill(int dt, uintptr_t out, const Shape& shape, const Shape& strides, uint64_t seed,
                 uint64_t offset, int kind, double a, double b) {
  if (kind == GEOMETRIC) {
    FW_DISPATCH_ALL(dt, "geometric", {
      fill_dist<GEOMETRIC, scalar_t>(out, shape, strides, seed, offset, a, b);
    });
    return;
  }
  FW_DISPATCH_FLOAT(dt, "random", {
    fill_kind<scalar_t>(kind, out, shape, strides, seed, offset, a, b);
  });
}

// Fills a strided view with f(words of counter offset + i), Philox in blocks so that it
// vectorizes.
template <typename T, typename F>
void fill_words(uintptr_t out, const Shape& shape, const Shape& strides, uint64_t seed,
                uint64_t offset, F&& f) {
  T* o = ptr<T>(out);
  Nest<1> nest(shape, {&strides});
  if (nest.numel == 0) return;
  const int64_t is = nest.inner_stride(0);
  parallel_for(0, nest.numel, kGrain, [&](int64_t begin, int64_t end) {
    int64_t i = begin;
    uint32_t w0[kBlock], w1[kBlock], w2[kBlock], w3[kBlock];
    nest.runs(begin, end, [&](const int64_t* off, int64_t n) {
      for (int64_t j = 0; j < n; j += kBlock) {
        const int m = (int)std::min<int64_t>(kBlock, n - j);
        const uint64_t ctr = offset + (uint64_t)(i + j);
        for (int k = 0; k < m; k++) {
          const Words w = philox(seed, ctr + (uint64_t)k);
          w0[k] = w.w0;
          w1[k] = w.w1;
          w2[k] = w.w2;
          w3[k] = w.w3;
        }
        T* dst = o + off[0] + j * is;
        for (int k = 0; k < m; k++) dst[k * is] = f(Words{w0[k], w1[k], w2[k], w3[k]});
      }
      i += n;
    });
  });
}

// Uniform integers in [low, low + range); range == 0 means 2^64 (every int64).
void random_int(int dt, uintptr_t out, const Shape& shape, const Shape& strides, uint64_t seed,
                uint64_t offset, int64_t low, uint64_t range) {
  FW_DISPATCH_ALL(dt, "random", {
    auto store = [](int64_t v) -> scalar_t {
      if constexpr (std::is_same<scalar_t, bool>::value) return v != 0;
      else if constexpr (is_float_v<scalar_t>) return from_double<scalar_t>((double)v);
      else return (scalar_t)v;
    };
    const uint64_t ulow = (uint64_t)low;
    if (range != 0 && range < ((uint64_t)1 << 32)) {  // 32-bit division is the fast one
      const uint32_t r32 = (uint32_t)range;
      fill_words<scalar_t>(out, shape, strides, seed, offset, [&](const Words& w) {
        return store((int64_t)(ulow + (uint64_t)(w.w0 % r32)));
      });
    } else if (range == ((uint64_t)1 << 32)) {
      fill_words<scalar_t>(out, shape, strides, seed, offset, [&](const Words& w) {
        return store((int64_t)(ulow + (uint64_t)w.w0));
      });
    } else {
      fill_words<scalar_t>(out, shape, strides, seed, offset, [&](const Words& w) {
        const uint64_t r = range == 0 ? bits64(w.w0, w.w1) : bits64(w.w0, w.w1) % range;
        return store((int64_t)(ulow + r));
      });
    }
  });
}

// out = u53 < p, p a scalar.
void bernoulli_scalar(int dt, uintptr_t out, const Shape& shape, const Shape& strides,
                      uint64_t seed, uint64_t offset, double p) {
  FW_DISPATCH_ALL(dt, "bernoulli", {
    fill_words<scalar_t>(out, shape, strides, seed, offset, [&](const Words& w) {
      return (scalar_t)(u53(w.w0, w.w1) < p ? 1 : 0);
    });
  });
}

// out = u53 < p[...], p a float tensor view broadcast to out's shape (strides in elements).
void bernoulli_tensor(int dt, uintptr_t out, const Shape& shape, const Shape& strides, int pdt,
                      uintptr_t p, const Shape& pstrides, uint64_t seed, uint64_t offset) {
  FW_DISPATCH_ALL(dt, "bernoulli", {
    using O = scalar_t;
    O* o = ptr<O>(out);
    FW_DISPATCH_FLOAT(pdt, "bernoulli", {
      const scalar_t* pp = ptr<scalar_t>(p);
      Nest<2> nest(shape, {&strides, &pstrides});
      if (nest.numel == 0) return;
      const int64_t is = nest.inner_stride(0), ps = nest.inner_stride(1);
      parallel_for(0, nest.numel, kGrain, [&](int64_t b, int64_t e) {
        int64_t i = b;
        nest.runs(b, e, [&](const int64_t* off, int64_t n) {
          for (int64_t k = 0; k < n; k++) {
            const Words w = philox(seed, offset + (uint64_t)(i + k));
            const double pv = (double)(acc_t<scalar_t>)pp[off[1] + k * ps];
            o[off[0] + k * is] = (O)(u53(w.w0, w.w1) < pv ? 1 : 0);
          }
          i += n;
        });
      });
    });
  });
}

// A random permutation of 0..n-1 into a contiguous buffer: indices sorted by the 64-bit key
// of counter offset + i (ties, about n^2 / 2^65 likely, by index). Uses n counters. The sort
// is a stable bucket pass on the keys' top bits (the keys are uniform, so buckets hold about
// 4 each) followed by a small sort per bucket: the same order as sorting (key, index) pairs.
void randperm(int dt, uintptr_t out, int64_t n, uint64_t seed, uint64_t offset) {
  if (n < 0) fail("randperm: n must be non-negative, got " + std::to_string(n));
  std::vector<uint64_t> key(n);
  parallel_for(0, n, kGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; i++) {
      const Words w = philox(seed, offset + (uint64_t)i);
      key[i] = bits64(w.w0, w.w1);
    }
  });
  int bits = 0;
  while (bits < 26 && ((int64_t)4 << bits) < n) bits++;
  const int shift = 64 - bits;
  std::vector<int64_t> start(((size_t)1 << bits) + 1, 0);
  for (int64_t i = 0; i < n; i++) start[(bits ? key[i] >> shift : 0) + 1]++;
  for (size_t k = 1; k < start.size(); k++) start[k] += start[k - 1];
  std::vector<std::pair<uint64_t, int64_t>> sorted(n);
  {
    std::vector<int64_t> fill(start.begin(), start.end() - 1);
    for (int64_t i = 0; i < n; i++) sorted[fill[bits ? key[i] >> shift : 0]++] = {key[i], i};
  }
  const int64_t nb = (int64_t)1 << bits;
  parallel_for(0, nb, std::max<int64_t>(1, kGrain / 4), [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; k++)
      if (start[k + 1] - start[k] > 1)
        std::sort(sorted.begin() + start[k], sorted.begin() + start[k + 1]);
  });
  FW_DISPATCH_ALL(dt, "randperm", {
    scalar_t* o = ptr<scalar_t>(out);
    for (int64_t i = 0; i < n; i++) {
      if constexpr (is_float_v<scalar_t>) o[i] = from_double<scalar_t>((double)sorted[i].second);
      else o[i] = (scalar_t)sorted[i].second;
    }
  });
}

// Samples n_samples category indices per row of a (rows, cats) probability view into a
// contiguous int64 (rows, n_samples) buffer.
//   With replacement: sample s of row r uses counter offset + r*n_samples + s and picks the
//   first category whose running sum exceeds u53 * total.
//   Without: category j of row r uses counter offset + r*cats + j and gets the key
//   -log(1 - u53) / p_j (an exponential race); the n_samples smallest keys, in order.
void multinomial(int pdt, uintptr_t probs, int64_t rows, int64_t cats, int64_t rs, int64_t cs,
                 int64_t n_samples, bool replacement, uintptr_t out, uint64_t seed,
                 uint64_t offset) {
  std::vector<double> p((size_t)(rows * cats));
  FW_DISPATCH_FLOAT(pdt, "multinomial", {
    const scalar_t* pp = ptr<scalar_t>(probs);
    for (int64_t r = 0; r < rows; r++)
      for (int64_t j = 0; j < cats; j++)
        p[r * cats + j] = (double)(acc_t<scalar_t>)pp[r * rs + j * cs];
  });
  for (int64_t r = 0; r < rows; r++) {
    double total = 0;
    for (int64_t j = 0; j < cats; j++) {
      const double v = p[r * cats + j];
      if (!(v >= 0) || std::isinf(v))
        fail("probability tensor contains either `inf`, `nan` or element < 0");
      total += v;
    }
    // without replacement, zero-probability categories come last (PyTorch's CPU kernel
    // allows drawing them too)
    if (!(total > 0)) fail("invalid multinomial distribution (sum of probabilities <= 0)");
  }
  int64_t* o = ptr<int64_t>(out);
  const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(1, cats));
  parallel_for(0, rows, grain, [&](int64_t rb, int64_t re) {
    std::vector<double> cdf(cats);
    std::vector<std::pair<double, int64_t>> keys(cats);
    for (int64_t r = rb; r < re; r++) {
      const double* pr = p.data() + r * cats;
      int64_t* orow = o + r * n_samples;
      if (replacement) {
        double acc = 0;
        int64_t last = 0;
        for (int64_t j = 0; j < cats; j++) {
          acc += pr[j];
          cdf[j] = acc;
          if (pr[j] > 0) last = j;
        }
        for (int64_t s = 0; s < n_samples; s++) {
          const Words w = philox(seed, offset + (uint64_t)(r * n_samples + s));
          const double target = u53(w.w0, w.w1) * acc;
          const int64_t j = std::upper_bound(cdf.begin(), cdf.end(), target) - cdf.begin();
          orow[s] = std::min(j, last);
        }
      } else {
        for (int64_t j = 0; j < cats; j++) {
          const Words w = philox(seed, offset + (uint64_t)(r * cats + j));
          const double e = 0.0 - log_m53(((int64_t)1 << 53) - top53(w.w0, w.w1));
          keys[j] = {pr[j] > 0 ? e / pr[j] : std::numeric_limits<double>::infinity(), j};
        }
        std::partial_sort(keys.begin(), keys.begin() + n_samples, keys.end());
        for (int64_t s = 0; s < n_samples; s++) orow[s] = keys[s].second;
      }
    }
  });
}

// The raw Philox words of counters offset .. offset+n-1, (n, 4) uint32, for tests.
void philox_words(uintptr_t out, int64_t n, uint64_t seed, uint64_t offset) {
  uint32_t* o = ptr<uint32_t>(out);
  parallel_for(0, n, kGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; i++) {
      const Words w = philox(seed, offset + (uint64_t)i);
      o[4 * i] = w.w0;
      o[4 * i + 1] = w.w1;
      o[4 * i + 2] = w.w2;
      o[4 * i + 3] = w.w3;
    }
  });
}

}  // namespace

void register_random(py::module_& m) {
  m.def("random_fill", &random_fill,
        "fill a float view with a distribution: kind 0 uniform(a + u*b), 1 normal(a + n*b), "
        "2 exponential(b = 1/lambda), 3 cauchy(a, b), 4 log_normal(a, b), "
        "5 geometric(b = 1/log1p(-p), any dtype)");
  m.def("random_int", &random_int, "uniform integers in [low, low + range); range 0 = 2^64");
  m.def("bernoulli_scalar", &bernoulli_scalar, "out = uniform < p");
  m.def("bernoulli_tensor", &bernoulli_tensor, "out = uniform < p[...]");
  m.def("randperm", &randperm, "random permutation of 0..n-1");
  m.def("multinomial", &multinomial, "multinomial sampling, with or without replacement");
  m.def("philox_words", &philox_words, "raw Philox 4x32-10 words, (n, 4) uint32");
}

}  // namespace fw
