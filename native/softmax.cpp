// Softmax family kernels: softmax and log_softmax along one dim.
//
// Input and output are contiguous (outer, n, inner) tensors of the same floating dtype; the
// op works along n. 16-bit floats and float32 compute in float, float64 in double.
//
// One pass over the input finds each row's maximum m and the sum s of exp(x - m) together
// ("online" softmax): the input is read in chunks, each chunk's maximum moves m forward and
// rescales the sum gathered so far by exp(m_old - m_new). A second pass writes
// exp(x - m) / s (softmax) or (x - m) - log(s) (log_softmax). Special values come out as in
// PyTorch: a row of -inf gives NaN (0 / 0), a +inf or NaN anywhere in a row makes the row
// NaN, and -inf entries of a finite row give 0 (softmax) and -inf (log_softmax).
//
// The backward kernels take the output y and its gradient g: softmax's
// gx = y * (g - sum(g * y)), log_softmax's gx = g - exp(y) * sum(g), one read of the row
// for the sum and one (from cache) for the write.
#include "common.h"
#include "pointwise_vmath.h"

#include <algorithm>
#include <limits>

namespace fw {
namespace {

constexpr int64_t kLanes = 16;    // independent partial sums/maxima, so the loops vectorize
constexpr int64_t kChunk = 512;   // row elements per online step (a multiple of kLanes)
constexpr int64_t kCols = 64;     // columns per task when inner > 1
constexpr int64_t kRows = 16;     // rows per online step when inner > 1

template <typename A> constexpr A neg_inf() { return -std::numeric_limits<A>::infinity(); }

// The reference point that exp() is taken against: the running maximum, or 0 while the
// maximum is still -inf (so that exp(-inf - ref) is 0 and not NaN for an all -inf prefix).
template <typename A> inline A ref_of(A m) { return m == neg_inf<A>() ? A(0) : m; }

// Softmax over rows of n contiguous elements (inner == 1).
template <typename T, bool Log>
void softmax_rows(const T* x0, T* y0, int64_t outer, int64_t n) {
  using A = acc_t<T>;
  int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(n, 1));
  parallel_for(0, outer, grain, [&](int64_t b, int64_t e) {
    A buf[kChunk];
    for (int64_t r = b; r < e; r++) {
      const T* x = x0 + r * n;
      T* y = y0 + r * n;
      A m = neg_inf<A>(), s = 0;
      for (int64_t c0 = 0; c0 < n; c0 += kChunk) {
        const int64_t w = std::min(kChunk, n - c0);
        const int64_t wp = (w + kLanes - 1) / kLanes * kLanes;
        for (int64_t j = 0; j < w; j++) buf[j] = A(x[c0 + j]);
        for (int64_t j = w; j < wp; j++) buf[j] = neg_inf<A>();   // exp(-inf - ref) = 0
        A lm[kLanes];
        for (int64_t k = 0; k < kLanes; k++) lm[k] = neg_inf<A>();
        for (int64_t j = 0; j < wp; j += kLanes)
          for (int64_t k = 0; k < kLanes; k++) lm[k] = buf[j + k] > lm[k] ? buf[j + k] : lm[k];
        A nm = m;
        for (int64_t k = 0; k < kLanes; k++) nm = lm[k] > nm ? lm[k] : nm;
        const A ref = ref_of(nm);
        A ls[kLanes] = {};
        for (int64_t j = 0; j < wp; j += kLanes)
          for (int64_t k = 0; k < kLanes; k++) ls[k] += vm::exp(buf[j + k] - ref);
        A cs = 0;
        for (int64_t k = 0; k < kLanes; k++) cs += ls[k];
        // m - ref is -inf (m was -inf), 0 (m unchanged) or negative; NaN only when both
        // are +inf, where PyTorch's row is NaN as well
        s = s * vm::exp(m - ref) + cs;
        m = nm;
      }
      if (Log) {
        const A ls = std::log(s);
        for (int64_t j = 0; j < n; j++) y[j] = T((A(x[j]) - m) - ls);
      } else {
        for (int64_t j = 0; j < n; j++) y[j] = T(vm::exp(A(x[j]) - m) / s);
      }
    }
  });
}

// Softmax along n of (outer, n, inner) with inner > 1: a task takes up to kCols adjacent
// columns of one outer slab, so every step reads contiguous memory.
template <typename T, bool Log>
void softmax_cols(const T* x0, T* y0, int64_t outer, int64_t n, int64_t inner) {
  using A = acc_t<T>;
  const int64_t blocks = (inner + kCols - 1) / kCols;
  int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(n * std::min(inner, kCols), 1));
  parallel_for(0, outer * blocks, grain, [&](int64_t b, int64_t e) {
    A buf[kRows][kCols], m[kCols], s[kCols], nm[kCols], ref[kCols];
    for (int64_t t = b; t < e; t++) {
      const int64_t o = t / blocks, c0 = (t % blocks) * kCols;
      const int64_t w = std::min(kCols, inner - c0);
      const T* x = x0 + o * n * inner + c0;
      T* y = y0 + o * n * inner + c0;
      for (int64_t j = 0; j < w; j++) { m[j] = neg_inf<A>(); s[j] = 0; }
      for (int64_t i0 = 0; i0 < n; i0 += kRows) {
        const int64_t h = std::min(kRows, n - i0);
        for (int64_t j = 0; j < w; j++) nm[j] = m[j];
        for (int64_t i = 0; i < h; i++) {
          const T* xr = x + (i0 + i) * inner;
          for (int64_t j = 0; j < w; j++) {
            const A v = A(xr[j]);
            buf[i][j] = v;
            nm[j] = v > nm[j] ? v : nm[j];
          }
        }
        for (int64_t j = 0; j < w; j++) {
          ref[j] = ref_of(nm[j]);
          s[j] *= vm::exp(m[j] - ref[j]);
          m[j] = nm[j];
        }
        for (int64_t i = 0; i < h; i++)
          for (int64_t j = 0; j < w; j++) s[j] += vm::exp(buf[i][j] - ref[j]);
      }
      if (Log) {
        for (int64_t j = 0; j < w; j++) s[j] = std::log(s[j]);
        for (int64_t i = 0; i < n; i++, x += inner, y += inner)
          for (int64_t j = 0; j < w; j++) y[j] = T((A(x[j]) - m[j]) - s[j]);
      } else {
        for (int64_t i = 0; i < n; i++, x += inner, y += inner)
          for (int64_t j = 0; j < w; j++) y[j] = T(vm::exp(A(x[j]) - m[j]) / s[j]);
      }
    }
  });
}

template <typename T, bool Log>
void softmax(uintptr_t x, uintptr_t y, int64_t outer, int64_t n, int64_t inner) {
  if (outer * n * inner == 0) return;
  if (inner == 1)
    softmax_rows<T, Log>(ptr<const T>(x), ptr<T>(y), outer, n);
  else
    softmax_cols<T, Log>(ptr<const T>(x), ptr<T>(y), outer, n, inner);
}

// Backward from the output y and its gradient g, both (outer, n, inner):
//   softmax:      gx = y * (g - sum(g * y)),  log_softmax: gx = g - exp(y) * sum(g).
// One pass gathers the row's sum, a second writes gx (the row is still in cache).
template <typename T, bool Log>
void softmax_backward_rows(const T* g0, const T* y0, T* gx0, int64_t outer, int64_t n) {
  using A = acc_t<T>;
  int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(n, 1));
  parallel_for(0, outer, grain, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; r++) {
      const T* g = g0 + r * n;
      const T* y = y0 + r * n;
      T* gx = gx0 + r * n;
      const int64_t nv = n / kLanes * kLanes;
      A ls[kLanes] = {};
      for (int64_t j = 0; j < nv; j += kLanes)
        for (int64_t k = 0; k < kLanes; k++)
          ls[k] += Log ? A(g[j + k]) : A(g[j + k]) * A(y[j + k]);
      A s = 0;
      for (int64_t k = 0; k < kLanes; k++) s += ls[k];
      for (int64_t j = nv; j < n; j++) s += Log ? A(g[j]) : A(g[j]) * A(y[j]);
      if (Log) {
        for (int64_t j = 0; j < n; j++) gx[j] = T(A(g[j]) - vm::exp(A(y[j])) * s);
      } else {
        for (int64_t j = 0; j < n; j++) gx[j] = T(A(y[j]) * (A(g[j]) - s));
      }
    }
  });
}

template <typename T, bool Log>
void softmax_backward_cols(const T* g0, const T* y0, T* gx0, int64_t outer, int64_t n,
                           int64_t inner) {
  using A = acc_t<T>;
  const int64_t blocks = (inner + kCols - 1) / kCols;
  int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(n * std::min(inner, kCols), 1));
  parallel_for(0, outer * blocks, grain, [&](int64_t b, int64_t e) {
    A s[kCols];
    for (int64_t t = b; t < e; t++) {
      const int64_t o = t / blocks, c0 = (t % blocks) * kCols;
      const int64_t w = std::min(kCols, inner - c0);
      const int64_t off = o * n * inner + c0;
      const T* g = g0 + off;
      const T* y = y0 + off;
      T* gx = gx0 + off;
      for (int64_t j = 0; j < w; j++) s[j] = 0;
      for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < w; j++)
          s[j] += Log ? A(g[i * inner + j]) : A(g[i * inner + j]) * A(y[i * inner + j]);
      for (int64_t i = 0; i < n; i++) {
        const int64_t q = i * inner;
        if (Log) {
          for (int64_t j = 0; j < w; j++) gx[q + j] = T(A(g[q + j]) - vm::exp(A(y[q + j])) * s[j]);
        } else {
          for (int64_t j = 0; j < w; j++) gx[q + j] = T(A(y[q + j]) * (A(g[q + j]) - s[j]));
        }
      }
    }
  });
}

template <typename T, bool Log>
void softmax_backward(uintptr_t g, uintptr_t y, uintptr_t gx, int64_t outer, int64_t n,
                      int64_t inner) {
  if (outer * n * inner == 0) return;
  if (inner == 1)
    softmax_backward_rows<T, Log>(ptr<const T>(g), ptr<const T>(y), ptr<T>(gx), outer, n);
  else
    softmax_backward_cols<T, Log>(ptr<const T>(g), ptr<const T>(y), ptr<T>(gx), outer, n,
                                  inner);
}

}  // namespace

void register_softmax(py::module_& m) {
  // y = softmax (log: log_softmax) of contiguous x viewed as (outer, n, inner) along n
  m.def("softmax", [](bool log, int dt, uintptr_t x, uintptr_t y, int64_t outer, int64_t n,
                      int64_t inner) {
    if (outer < 0 || n < 0 || inner < 0) fail("softmax: negative size");
    py::gil_scoped_release nogil;
    if (log) {
      FW_DISPATCH_FLOAT(dt, "log_softmax", (softmax<scalar_t, true>(x, y, outer, n, inner)));
    } else {
      FW_DISPATCH_FLOAT(dt, "softmax", (softmax<scalar_t, false>(x, y, outer, n, inner)));
    }
  });
  // gx = the gradient of softmax (log: log_softmax) given its output y and the output's
  // gradient g; all contiguous (outer, n, inner) of one floating dtype
  m.def("softmax_backward", [](bool log, int dt, uintptr_t g, uintptr_t y, uintptr_t gx,
                               int64_t outer, int64_t n, int64_t inner) {
    if (outer < 0 || n < 0 || inner < 0) fail("softmax_backward: negative size");
    py::gil_scoped_release nogil;
    if (log) {
      FW_DISPATCH_FLOAT(dt, "log_softmax_backward",
                        (softmax_backward<scalar_t, true>(g, y, gx, outer, n, inner)));
    } else {
      FW_DISPATCH_FLOAT(dt, "softmax_backward",
                        (softmax_backward<scalar_t, false>(g, y, gx, outer, n, inner)));
    }
  });
}

}  // namespace fw
