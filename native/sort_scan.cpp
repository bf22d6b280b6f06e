// Scan and counting kernels of the sort family: cumsum, cumprod, logcumsumexp, cummax,
// cummin, bincount, histc, searchsorted. Registered from register_sort (native/sort.cpp).
#include "sort_keys.h"

namespace fw {
namespace {
using namespace sort_detail;

// ---- scans --------------------------------------------------------------------------------
// Input and output are contiguous (outer, n, inner) of the same dtype. With inner > 1 a
// block of adjacent columns is scanned together so every step reads contiguous memory.

template <typename T> using scan_acc_t =
    std::conditional_t<is_float_v<T>, double,
                       std::conditional_t<std::is_same<T, bool>::value, bool, uint64_t>>;

struct SumOp {
  template <typename A> static A init() { return A(0); }
  template <typename A> static A apply(A a, A x) { return a + x; }
};
struct ProdOp {
  template <typename A> static A init() { return A(1); }
  template <typename A> static A apply(A a, A x) { return a * x; }
};
struct LogAddExpOp {
  template <typename A> static A init() { return -std::numeric_limits<A>::infinity(); }
  template <typename A> static A apply(A a, A x) {
    if (std::isnan(a) || std::isnan(x)) return std::numeric_limits<A>::quiet_NaN();
    A lo = std::min(a, x), hi = std::max(a, x);
    if (lo != hi || std::isfinite(lo)) return hi + std::log1p(std::exp(lo - hi));
    return a;  // both the same infinity
  }
};

constexpr int64_t kScanBlock = 256;

template <typename Op, typename T>
void scan(uintptr_t src, uintptr_t dst, int64_t outer, int64_t n, int64_t inner) {
  using A = scan_acc_t<T>;
  const T* x0 = ptr<T>(src);
  T* y0 = ptr<T>(dst);
  if (inner == 1 && outer == 1 && n >= (1 << 18) && num_threads() >= 4) {
    // one long row: each thread folds its chunk, the chunk totals are scanned, then each
    // thread rescans its chunk from its offset. It reads the input twice, so it only pays
    // with several threads.
    const int64_t parts = num_threads();
    const int64_t len = (n + parts - 1) / parts;
    std::vector<A> total(parts, Op::template init<A>());
    parallel_for(0, parts, 1, [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; c++) {
        A acc = Op::template init<A>();
        for (int64_t i = c * len; i < std::min(n, (c + 1) * len); i++)
          acc = Op::apply(acc, A(acc_t<T>(x0[i])));
        total[c] = acc;
      }
    });
    std::vector<A> start(parts, Op::template init<A>());
    for (int64_t c = 1; c < parts; c++) start[c] = Op::apply(start[c - 1], total[c - 1]);
    parallel_for(0, parts, 1, [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; c++) {
        A acc = start[c];
        for (int64_t i = c * len; i < std::min(n, (c + 1) * len); i++) {
          acc = Op::apply(acc, A(acc_t<T>(x0[i])));
          y0[i] = T(acc_t<T>(acc));
        }
      }
    });
    return;
  }
  if (inner == 1) {
    int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(n, 1));
    parallel_for(0, outer, grain, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; r++) {
        const T* x = x0 + r * n;
        T* y = y0 + r * n;
        A acc = Op::template init<A>();
        for (int64_t i = 0; i < n; i++) { acc = Op::apply(acc, A(acc_t<T>(x[i]))); y[i] = T(acc_t<T>(acc)); }
      }
    });
    return;
  }
  const int64_t blocks = (inner + kScanBlock - 1) / kScanBlock;
  int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(n * kScanBlock, 1));
  parallel_for(0, outer * blocks, grain, [&](int64_t b, int64_t e) {
    A acc[kScanBlock];
    for (int64_t t = b; t < e; t++) {
      int64_t r = t / blocks, c0 = (t % blocks) * kScanBlock;
      int64_t w = std::min(kScanBlock, inner - c0);
      const T* x = x0 + r * n * inner + c0;
      T* y = y0 + r * n * inner + c0;
      for (int64_t j = 0; j < w; j++) acc[j] = Op::template init<A>();
      for (int64_t i = 0; i < n; i++, x += inner, y += inner)
        for (int64_t j = 0; j < w; j++) {
          acc[j] = Op::apply(acc[j], A(acc_t<T>(x[j])));
          y[j] = T(acc_t<T>(acc[j]));
        }
    }
  });
}

// cummax / cummin: PyTorch's rule is that a NaN, or a value >= (<=) the running one, takes
// over; so ties move the index forward and NaN sticks.
template <typename T, bool Max>
void cum_ext(uintptr_t src, uintptr_t val, uintptr_t ind, int64_t outer, int64_t n, int64_t inner) {
  using C = acc_t<T>;
  const T* x0 = ptr<T>(src);
  T* v0 = ptr<T>(val);
  int64_t* i0 = ptr<int64_t>(ind);
  const int64_t blocks = (inner + kScanBlock - 1) / kScanBlock;
  int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(n * std::min(inner, kScanBlock), 1));
  parallel_for(0, outer * blocks, grain, [&](int64_t b, int64_t e) {
    C cur[kScanBlock];
    int64_t at[kScanBlock];
    for (int64_t t = b; t < e; t++) {
      int64_t r = t / blocks, c0 = (t % blocks) * kScanBlock;
      int64_t w = std::min(kScanBlock, inner - c0);
      int64_t base = r * n * inner + c0;
      for (int64_t j = 0; j < w; j++) { cur[j] = C(x0[base + j]); at[j] = 0; }
      for (int64_t i = 0; i < n; i++) {
        const T* x = x0 + base + i * inner;
        for (int64_t j = 0; j < w; j++) {
          C c = C(x[j]);
          bool take = Max ? (c >= cur[j]) : (c <= cur[j]);
          if constexpr (is_float_v<T>) take = (c != c) || (cur[j] == cur[j] && take);
          if (take) { cur[j] = c; at[j] = i; }
          v0[base + i * inner + j] = T(cur[j]);
          i0[base + i * inner + j] = at[j];
        }
      }
    }
  });
}

// ---- counting ---------------------------------------------------------------------------------

template <typename T>
py::tuple int_range(uintptr_t src, int64_t n, int64_t s) {
  const T* x = ptr<T>(src);
  int64_t lo = 0, hi = 0;
  if (n > 0) { lo = hi = (int64_t)x[0]; }
  for (int64_t i = 1; i < n; i++) {
    int64_t v = (int64_t)x[i * s];
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  return py::make_tuple(lo, hi);
}

template <typename T, typename W>
void bincount_impl(const T* x, int64_t n, int64_t s, const W* w, int64_t ws, uintptr_t out, int odt) {
  if (odt == 5) {
    int64_t* o = ptr<int64_t>(out);
    for (int64_t i = 0; i < n; i++) o[(int64_t)x[i * s]] += 1;
  } else if (odt == 8) {
    float* o = ptr<float>(out);
    for (int64_t i = 0; i < n; i++) o[(int64_t)x[i * s]] += float(w[i * ws]);
  } else {
    double* o = ptr<double>(out);
    for (int64_t i = 0; i < n; i++) o[(int64_t)x[i * s]] += double(acc_t<W>(w[i * ws]));
  }
}

}  // namespace

void register_sort_scan(py::module_& m) {
  // kind: 0 cumsum, 1 cumprod, 2 logcumsumexp
  m.def("scan", [](int kind, int dt, uintptr_t x, uintptr_t y, int64_t outer, int64_t n, int64_t inner) {
    py::gil_scoped_release nogil;
    if (kind == 0) {
      FW_DISPATCH_NUMERIC(dt, "cumsum", scan<SumOp, scalar_t>(x, y, outer, n, inner));
    } else if (kind == 1) {
      FW_DISPATCH_NUMERIC(dt, "cumprod", scan<ProdOp, scalar_t>(x, y, outer, n, inner));
    } else {
      FW_DISPATCH_FLOAT(dt, "logcumsumexp_out", scan<LogAddExpOp, scalar_t>(x, y, outer, n, inner));
    }
  });
  m.def("cum_ext", [](bool is_max, int dt, uintptr_t x, uintptr_t v, uintptr_t i, int64_t outer,
                      int64_t n, int64_t inner) {
    py::gil_scoped_release nogil;
    if (is_max) {
      FW_DISPATCH_ALL(dt, "cummax", (cum_ext<scalar_t, true>(x, v, i, outer, n, inner)));
    } else {
      FW_DISPATCH_ALL(dt, "cummin", (cum_ext<scalar_t, false>(x, v, i, outer, n, inner)));
    }
  });
  m.def("int_range", [](int dt, uintptr_t x, int64_t n, int64_t s) {
    py::tuple r;
    FW_DISPATCH_INT(dt, "bincount", r = int_range<scalar_t>(x, n, s));
    return r;
  });
  // out (zeroed by the caller) has dtype odt: 5 int64 counts, 8 float / 9 double weights
  m.def("bincount", [](int dt, uintptr_t x, int64_t n, int64_t s, int wdt, uintptr_t w,
                       int64_t ws, uintptr_t out, int odt) {
    py::gil_scoped_release nogil;
    FW_DISPATCH_INT(dt, "bincount", {
      using X = scalar_t;
      if (odt == 5) {
        bincount_impl<X, int64_t>(ptr<X>(x), n, s, nullptr, 0, out, odt);
      } else {
        FW_DISPATCH_NUMERIC(wdt, "bincount", bincount_impl<X, scalar_t>(ptr<X>(x), n, s,
                                                                        ptr<scalar_t>(w), ws, out, odt));
      }
    });
  });
  // float range of a strided tensor (NaN if any value is NaN), for histc without a range
  m.def("float_range", [](int dt, uintptr_t x, const Shape& shape, const Shape& st) {
    double lo = 0, hi = 0;
    bool any = false, nan = false;
    FW_DISPATCH_FLOAT(dt, "histc", {
      Nest<1> nest(shape, {&st});
      if (nest.numel > 0) nest.runs(0, nest.numel, [&](const int64_t* off, int64_t cnt) {
        const scalar_t* p = ptr<scalar_t>(x) + off[0];
        for (int64_t i = 0; i < cnt; i++) {
          double v = double(acc_t<scalar_t>(p[i * nest.inner_stride(0)]));
          if (v != v) { nan = true; continue; }
          if (!any) { lo = hi = v; any = true; }
          lo = std::min(lo, v); hi = std::max(hi, v);
        }
      });
    });
    if (nan) lo = hi = std::numeric_limits<double>::quiet_NaN();
    return py::make_tuple(lo, hi);
  });
  // out: contiguous float tensor of `bins` zeros, same dtype as x
  m.def("histc", [](int dt, uintptr_t x, const Shape& shape, const Shape& st, uintptr_t out,
                    int64_t bins, double lo, double hi) {
    py::gil_scoped_release nogil;
    FW_DISPATCH_FLOAT(dt, "histogram", {
      using C = acc_t<scalar_t>;
      std::vector<double> h(bins, 0.0);
      Nest<1> nest(shape, {&st});
      const C clo = C(lo), chi = C(hi);
      if (nest.numel > 0) nest.runs(0, nest.numel, [&](const int64_t* off, int64_t cnt) {
        const scalar_t* p = ptr<scalar_t>(x) + off[0];
        for (int64_t i = 0; i < cnt; i++) {
          C v = C(p[i * nest.inner_stride(0)]);
          if (!(v >= clo && v <= chi)) continue;  // outside the range, or NaN
          int64_t b = (int64_t)((v - clo) * C(bins) / (chi - clo));
          if (b >= bins) b = bins - 1;
          if (b < 0) b = 0;
          h[b] += 1;
        }
      });
      scalar_t* o = ptr<scalar_t>(out);
      for (int64_t b = 0; b < bins; b++) o[b] = scalar_t(C(h[b]));
    });
  });
  // For each value row, the insertion points in the matching boundary row (PyTorch's
  // lower/upper bound with `!(mid >= v)` so NaN values land at the end).
  m.def("searchsorted", [](int dt, const Shape& outer, int64_t nb, int64_t nv, bool right,
                           bool out32, uintptr_t b, const Shape& bo, int64_t bs, uintptr_t srt,
                           const Shape& so, int64_t ss, uintptr_t v, const Shape& vo, int64_t vs,
                           uintptr_t out, const Shape& oo, int64_t os) {
    py::gil_scoped_release nogil;
    FW_DISPATCH_NUMERIC(dt, "searchsorted_out", {
      using C = acc_t<scalar_t>;
      Nest<4> nest(outer, {&bo, &so, &vo, &oo});
      if (nest.numel > 0) nest.runs(0, nest.numel, [&](const int64_t* off, int64_t cnt) {
        for (int64_t r = 0; r < cnt; r++) {
          const scalar_t* bd = ptr<scalar_t>(b) + off[0] + r * nest.inner_stride(0);
          const int64_t* sp = srt ? ptr<int64_t>(srt) + off[1] + r * nest.inner_stride(1) : nullptr;
          const scalar_t* vp = ptr<scalar_t>(v) + off[2] + r * nest.inner_stride(2);
          int64_t o = off[3] + r * nest.inner_stride(3);
          for (int64_t j = 0; j < nv; j++) {
            C val = C(vp[j * vs]);
            int64_t lo = 0, hi = nb;
            while (lo < hi) {
              int64_t mid = lo + ((hi - lo) >> 1);
              int64_t at = mid;
              if (sp) {  // the sorter is user data: never read through it unchecked
                at = sp[mid * ss];
                if (at < 0 || at >= nb) fail("torch.searchsorted(): sorter index out of range");
              }
              C mv = C(bd[at * bs]);
              bool go_right = right ? !(mv > val) : !(mv >= val);
              if (go_right) lo = mid + 1; else hi = mid;
            }
            if (out32) ptr<int32_t>(out)[o + j * os] = (int32_t)lo;
            else ptr<int64_t>(out)[o + j * os] = lo;
          }
        }
      });
    });
  });
}

}  // namespace fw
