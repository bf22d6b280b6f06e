// Normalization kernels: layer_norm, rms_norm and group_norm over rows, batch_norm over
// channels, forward and backward.
//
// Inputs are contiguous and of one floating dtype T; weight, bias, statistics and the
// per-channel coefficients are contiguous vectors of the accumulation type A (float for
// 16-bit floats and float32, double for float64): the Python launcher converts them.
//
// Row kernels (layer/rms/group norm) see the input as R rows of D = K * S contiguous
// elements, each row one set of statistics; the row's k-th run of S elements belongs to
// channel (r % G) * K + k. Layer and RMS norm: K = normalized numel, S = 1, G = 1. Group
// norm of (N, C, *): R = N * G rows, K = C / G channels of S = prod(*) elements.
// Channel kernels (batch norm, and group norm's weight gradient) see (N, C, S).
#include "common.h"

#include <algorithm>
#include <vector>

namespace fw {
namespace {

constexpr int64_t kLanes = 16;   // independent partial sums, so the loops vectorize

template <typename T, typename A>
inline A sum_of(const T* x, int64_t n) {
  if (n < kLanes) {
    A s = 0;
    for (int64_t j = 0; j < n; j++) s += A(x[j]);
    return s;
  }
  A l[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int64_t k = 0; k < kLanes; k++) l[k] += A(x[j + k]);
  A s = 0;
  for (; j < n; j++) s += A(x[j]);
  for (int64_t k = 0; k < kLanes; k++) s += l[k];
  return s;
}

// sum of (x - m)^2: the two-pass variance, exact where sum(x^2) - n m^2 would cancel
template <typename T, typename A>
inline A sqdev_of(const T* x, int64_t n, A m) {
  if (n < kLanes) {
    A s = 0;
    for (int64_t j = 0; j < n; j++) s += (A(x[j]) - m) * (A(x[j]) - m);
    return s;
  }
  A l[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int64_t k = 0; k < kLanes; k++) {
      const A d = A(x[j + k]) - m;
      l[k] += d * d;
    }
  A s = 0;
  for (; j < n; j++) {
    const A d = A(x[j]) - m;
    s += d * d;
  }
  for (int64_t k = 0; k < kLanes; k++) s += l[k];
  return s;
}

// sums of a*b and of a (b = (x - m) * r): the weight and bias gradients of one run
template <typename T, typename A>
inline void dot_of(const T* dy, const T* x, int64_t n, A m, A r, A& sg, A& sgx) {
  if (n < kLanes) {   // short runs (small spatial sizes): no lanes to add up
    for (int64_t j = 0; j < n; j++) {
      const A g = A(dy[j]);
      sg += g;
      sgx += g * ((A(x[j]) - m) * r);
    }
    return;
  }
  A l1[kLanes] = {}, l2[kLanes] = {};
  int64_t j = 0;
  // two loops of one accumulator each: GCC vectorizes these, not one loop of two
  for (; j + kLanes <= n; j += kLanes)
    for (int64_t k = 0; k < kLanes; k++) l1[k] += A(dy[j + k]);
  for (int64_t i = 0; i + kLanes <= n; i += kLanes)
    for (int64_t k = 0; k < kLanes; k++) l2[k] += A(dy[i + k]) * ((A(x[i + k]) - m) * r);
  A s1 = 0, s2 = 0;
  for (; j < n; j++) {
    const A g = A(dy[j]);
    s1 += g;
    s2 += g * ((A(x[j]) - m) * r);
  }
  for (int64_t k = 0; k < kLanes; k++) { s1 += l1[k]; s2 += l2[k]; }
  sg += s1;
  sgx += s2;
}

// ---- rows: layer_norm, rms_norm, group_norm ----------------------------------------------

template <typename T>
void rows_forward(uintptr_t x_, uintptr_t w_, uintptr_t b_, uintptr_t y_, uintptr_t mean_,
                  uintptr_t rstd_, int64_t R, int64_t K, int64_t S, int64_t G, double eps,
                  bool rms) {
  using A = acc_t<T>;
  const T* x0 = ptr<const T>(x_);
  T* y0 = ptr<T>(y_);
  const A* w = ptr<const A>(w_);
  const A* b = ptr<const A>(b_);
  A* mean = ptr<A>(mean_);
  A* rstd = ptr<A>(rstd_);
  const int64_t D = K * S;
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(D, 1));
  parallel_for(0, R, grain, [&](int64_t rb, int64_t re) {
    for (int64_t r = rb; r < re; r++) {
      const T* x = x0 + r * D;
      T* y = y0 + r * D;
      A m = 0, v;
      if (rms) {
        v = D ? sqdev_of<T, A>(x, D, A(0)) / A(D) : A(0);
      } else {
        m = D ? sum_of<T, A>(x, D) / A(D) : A(0);
        v = D ? sqdev_of<T, A>(x, D, m) / A(D) : A(0);
      }
      const A rs = A(1) / std::sqrt(v + A(eps));
      if (mean) mean[r] = m;
      rstd[r] = rs;
      const int64_t c0 = (r % G) * K;
      if (S == 1) {
        const A* wr = w ? w + c0 : nullptr;
        const A* br = b ? b + c0 : nullptr;
        if (wr && br) {
          for (int64_t k = 0; k < K; k++) y[k] = T((A(x[k]) - m) * rs * wr[k] + br[k]);
        } else if (wr) {
          for (int64_t k = 0; k < K; k++) y[k] = T((A(x[k]) - m) * rs * wr[k]);
        } else if (br) {
          for (int64_t k = 0; k < K; k++) y[k] = T((A(x[k]) - m) * rs + br[k]);
        } else {
          for (int64_t k = 0; k < K; k++) y[k] = T((A(x[k]) - m) * rs);
        }
      } else {
        for (int64_t k = 0; k < K; k++) {
          const A sc = w ? rs * w[c0 + k] : rs;
          const A sh = (b ? b[c0 + k] : A(0)) - m * sc;
          const T* xk = x + k * S;
          T* yk = y + k * S;
          for (int64_t s = 0; s < S; s++) yk[s] = T(A(xk[s]) * sc + sh);
        }
      }
    }
  });
}

// One row of layer/rms norm's input gradient (S == 1): sums of g = w dy and g (x - m),
// then dx = rs (g - cg - (x - m) cx). HasW picks the loops without a weight.
template <typename T, typename A, bool HasW>
inline void row_dx(const T* __restrict__ dy, const T* __restrict__ x, const A* __restrict__ w,
                   T* __restrict__ dx, int64_t K, A m, A rs, bool rms) {
  A l1[kLanes] = {}, l2[kLanes] = {};
  int64_t k = 0;
  // two loops of one accumulator each: GCC vectorizes these, not one loop of two
  for (; k + kLanes <= K; k += kLanes)
    for (int64_t j = 0; j < kLanes; j++)
      l1[j] += HasW ? A(dy[k + j]) * w[k + j] : A(dy[k + j]);
  for (int64_t i = 0; i + kLanes <= K; i += kLanes)
    for (int64_t j = 0; j < kLanes; j++)
      l2[j] += (HasW ? A(dy[i + j]) * w[i + j] : A(dy[i + j])) * (A(x[i + j]) - m);
  A sg = 0, sgx = 0;
  for (; k < K; k++) {
    const A g = HasW ? A(dy[k]) * w[k] : A(dy[k]);
    sg += g;
    sgx += g * (A(x[k]) - m);
  }
  for (int64_t j = 0; j < kLanes; j++) { sg += l1[j]; sgx += l2[j]; }
  const A cg = rms ? A(0) : sg / A(K);
  const A cx = sgx * rs * rs / A(K);   // mean(g xhat) * rs, xhat = (x - m) rs
  for (int64_t j = 0; j < K; j++) {
    const A g = HasW ? A(dy[j]) * w[j] : A(dy[j]);
    dx[j] = T(rs * (g - cg - (A(x[j]) - m) * cx));
  }
}

// dx = rstd * (w dy - mean(w dy) - xhat * mean(w dy xhat)); rms: without the mean(w dy)
template <typename T>
void rows_backward_input(uintptr_t dy_, uintptr_t x_, uintptr_t w_, uintptr_t mean_,
                         uintptr_t rstd_, uintptr_t dx_, int64_t R, int64_t K, int64_t S,
                         int64_t G, bool rms) {
  using A = acc_t<T>;
  const T* dy0 = ptr<const T>(dy_);
  const T* x0 = ptr<const T>(x_);
  const A* w = ptr<const A>(w_);
  const A* mean = ptr<const A>(mean_);
  const A* rstd = ptr<const A>(rstd_);
  T* dx0 = ptr<T>(dx_);
  const int64_t D = K * S;
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(D, 1));
  parallel_for(0, R, grain, [&](int64_t rb, int64_t re) {
    for (int64_t r = rb; r < re; r++) {
      const T* x = x0 + r * D;
      const T* dy = dy0 + r * D;
      T* dx = dx0 + r * D;
      const A m = rms ? A(0) : mean[r], rs = rstd[r];
      const int64_t c0 = (r % G) * K;
      if (S == 1) {
        if (w)
          row_dx<T, A, true>(dy, x, w + c0, dx, K, m, rs, rms);
        else
          row_dx<T, A, false>(dy, x, nullptr, dx, K, m, rs, rms);
        continue;
      }
      A sg = 0, sgx = 0;   // sums of w dy and of w dy xhat
      for (int64_t k = 0; k < K; k++) {
        A a = 0, bsum = 0;
        dot_of<T, A>(dy + k * S, x + k * S, S, m, rs, a, bsum);
        const A wk = w ? w[c0 + k] : A(1);
        sg += a * wk;
        sgx += bsum * wk;
      }
      const A cg = rms ? A(0) : sg / A(D);
      const A cx = sgx / A(D) * rs;   // times rstd again: xhat = (x - m) * rs
      for (int64_t k = 0; k < K; k++) {
        const A wk = w ? w[c0 + k] : A(1);
        const T* xk = x + k * S;
        const T* gk = dy + k * S;
        T* dk = dx + k * S;
        for (int64_t s = 0; s < S; s++)
          dk[s] = T(rs * (A(gk[s]) * wk - cg - (A(xk[s]) - m) * cx));
      }
    }
  });
}

// Weight and bias gradients of layer/rms norm: column sums over the R rows of dy * xhat and
// dy. Each task sums its block of rows into a partial row of its own; the partial rows
// are then added up column by column.
template <typename T>
void rows_backward_params(uintptr_t dy_, uintptr_t x_, uintptr_t mean_, uintptr_t rstd_,
                          uintptr_t dw_, uintptr_t db_, int64_t R, int64_t K, bool rms) {
  using A = acc_t<T>;
  const T* dy0 = ptr<const T>(dy_);
  const T* x0 = ptr<const T>(x_);
  const A* mean = ptr<const A>(mean_);
  const A* rstd = ptr<const A>(rstd_);
  A* dw = ptr<A>(dw_);
  A* db = ptr<A>(db_);
  const int64_t tasks = std::max<int64_t>(1, std::min<int64_t>(R, 4 * num_threads()));
  std::vector<A> pw(dw ? tasks * K : 0, A(0)), pb(db ? tasks * K : 0, A(0));
  parallel_for(0, tasks, 1, [&](int64_t tb, int64_t te) {
    for (int64_t t = tb; t < te; t++) {
      const int64_t r0 = R * t / tasks, r1 = R * (t + 1) / tasks;
      A* aw = dw ? pw.data() + t * K : nullptr;
      A* ab = db ? pb.data() + t * K : nullptr;
      for (int64_t r = r0; r < r1; r++) {
        const T* x = x0 + r * K;
        const T* dy = dy0 + r * K;
        const A m = rms ? A(0) : mean[r], rs = rstd[r];
        if (aw)
          for (int64_t k = 0; k < K; k++) aw[k] += A(dy[k]) * ((A(x[k]) - m) * rs);
        if (ab)
          for (int64_t k = 0; k < K; k++) ab[k] += A(dy[k]);
      }
    }
  });
  parallel_for(0, K, 1024, [&](int64_t kb, int64_t ke) {
    for (int64_t k = kb; k < ke; k++) {
      A sw = 0, sb = 0;
      for (int64_t t = 0; t < tasks; t++) {
        if (dw) sw += pw[t * K + k];
        if (db) sb += pb[t * K + k];
      }
      if (dw) dw[k] = sw;
      if (db) db[k] = sb;
    }
  });
}

// ---- channels: batch_norm (and group_norm's parameter gradients) ------------------------

constexpr int64_t kBlock = 16;   // channels per task when S == 1: rows of 16 contiguous

// Per channel c of (N, C, S): f(c, run pointer offset, run length) over its N runs; with
// S == 1 a task takes kBlock adjacent channels, handled by g(c0, width) instead.
template <typename F, typename G>
void over_channels(int64_t N, int64_t C, int64_t S, F&& f, G&& g) {
  if (S == 1) {
    const int64_t blocks = (C + kBlock - 1) / kBlock;
    parallel_for(0, blocks, std::max<int64_t>(1, 4096 / std::max<int64_t>(N * kBlock, 1)),
                 [&](int64_t b, int64_t e) {
                   for (int64_t i = b; i < e; i++)
                     g(i * kBlock, std::min(kBlock, C - i * kBlock));
                 });
  } else {
    parallel_for(0, C, std::max<int64_t>(1, 16384 / std::max<int64_t>(N * S, 1)),
                 [&](int64_t b, int64_t e) {
                   for (int64_t c = b; c < e; c++) f(c);
                 });
  }
}

// Batch mean and biased variance per channel (two passes).
template <typename T>
void channel_stats(uintptr_t x_, uintptr_t mean_, uintptr_t var_, int64_t N, int64_t C,
                   int64_t S) {
  using A = acc_t<T>;
  const T* x0 = ptr<const T>(x_);
  A* mean = ptr<A>(mean_);
  A* var = ptr<A>(var_);
  const A cnt = A(N * S);
  over_channels(N, C, S, [&](int64_t c) {
    A s = 0;
    for (int64_t n = 0; n < N; n++) s += sum_of<T, A>(x0 + (n * C + c) * S, S);
    const A m = s / cnt;
    A q = 0;
    for (int64_t n = 0; n < N; n++) q += sqdev_of<T, A>(x0 + (n * C + c) * S, S, m);
    mean[c] = m;
    var[c] = q / cnt;
  }, [&](int64_t c0, int64_t w) {
    A s[kBlock] = {}, q[kBlock] = {};
    for (int64_t n = 0; n < N; n++) {
      const T* x = x0 + n * C + c0;
      for (int64_t j = 0; j < w; j++) s[j] += A(x[j]);
    }
    for (int64_t j = 0; j < w; j++) s[j] /= cnt;
    for (int64_t n = 0; n < N; n++) {
      const T* x = x0 + n * C + c0;
      for (int64_t j = 0; j < w; j++) {
        const A d = A(x[j]) - s[j];
        q[j] += d * d;
      }
    }
    for (int64_t j = 0; j < w; j++) { mean[c0 + j] = s[j]; var[c0 + j] = q[j] / cnt; }
  });
}

// Per channel c: sum of dy * (x - mean) * rstd and of dy, over N and S; the statistics of
// sample n, channel c are at n * sn + c / cdiv (batch norm: sn = 0, cdiv = 1; group norm:
// sn = G, cdiv = C / G).
template <typename T>
void channel_param_grads(uintptr_t dy_, uintptr_t x_, uintptr_t mean_, uintptr_t rstd_,
                         uintptr_t dw_, uintptr_t db_, int64_t N, int64_t C, int64_t S,
                         int64_t sn, int64_t cdiv) {
  using A = acc_t<T>;
  const T* dy0 = ptr<const T>(dy_);
  const T* x0 = ptr<const T>(x_);
  const A* mean = ptr<const A>(mean_);
  const A* rstd = ptr<const A>(rstd_);
  A* dw = ptr<A>(dw_);
  A* db = ptr<A>(db_);
  over_channels(N, C, S, [&](int64_t c) {
    A sg = 0, sgx = 0;
    for (int64_t n = 0; n < N; n++) {
      const int64_t i = n * sn + c / cdiv;
      const int64_t o = (n * C + c) * S;
      dot_of<T, A>(dy0 + o, x0 + o, S, mean[i], rstd[i], sg, sgx);
    }
    if (dw) dw[c] = sgx;
    if (db) db[c] = sg;
  }, [&](int64_t c0, int64_t w) {
    A sg[kBlock] = {}, sgx[kBlock] = {};
    for (int64_t n = 0; n < N; n++) {
      const T* x = x0 + n * C + c0;
      const T* dy = dy0 + n * C + c0;
      for (int64_t j = 0; j < w; j++) {
        const int64_t i = n * sn + (c0 + j) / cdiv;
        const A g = A(dy[j]);
        sg[j] += g;
        sgx[j] += g * ((A(x[j]) - mean[i]) * rstd[i]);
      }
    }
    for (int64_t j = 0; j < w; j++) {
      if (dw) dw[c0 + j] = sgx[j];
      if (db) db[c0 + j] = sg[j];
    }
  });
}

// y = x * kx[c] + z * kz[c] + k0[c] over (N, C, S); z/kz and k0 may be absent.
template <typename T>
void channel_affine(uintptr_t x_, uintptr_t kx_, uintptr_t z_, uintptr_t kz_, uintptr_t k0_,
                    uintptr_t y_, int64_t N, int64_t C, int64_t S) {
  using A = acc_t<T>;
  const T* x0 = ptr<const T>(x_);
  const T* z0 = ptr<const T>(z_);
  const A* kx = ptr<const A>(kx_);
  const A* kz = ptr<const A>(kz_);
  const A* k0 = ptr<const A>(k0_);
  T* y0 = ptr<T>(y_);
  const int64_t rows = N * C;
  parallel_for(0, rows, std::max<int64_t>(1, 32768 / std::max<int64_t>(S, 1)),
               [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; r++) {
      const int64_t c = r % C;
      const A a = kx[c], bz = z0 ? kz[c] : A(0), b0 = k0 ? k0[c] : A(0);
      const T* x = x0 + r * S;
      T* y = y0 + r * S;
      if (z0) {
        const T* z = z0 + r * S;
        for (int64_t s = 0; s < S; s++) y[s] = T(A(x[s]) * a + A(z[s]) * bz + b0);
      } else {
        for (int64_t s = 0; s < S; s++) y[s] = T(A(x[s]) * a + b0);
      }
    }
  });
}

void check_sizes(const char* op, std::initializer_list<int64_t> sizes) {
  for (int64_t s : sizes)
    if (s < 0) fail(std::string(op) + ": negative size");
}

}  // namespace

void register_norm(py::module_& m) {
  // rows of D = K * S: y = (x - mean) * rstd * w[c] + b[c]; saves mean (unless rms) and rstd
  m.def("norm_rows_forward", [](int dt, uintptr_t x, uintptr_t w, uintptr_t b, uintptr_t y,
                                uintptr_t mean, uintptr_t rstd, int64_t R, int64_t K,
                                int64_t S, int64_t G, double eps, bool rms) {
    check_sizes("norm_rows_forward", {R, K, S});
    if (G < 1) fail("norm_rows_forward: groups must be positive");
    py::gil_scoped_release nogil;
    FW_DISPATCH_FLOAT(dt, "native_layer_norm",
                      (rows_forward<scalar_t>(x, w, b, y, mean, rstd, R, K, S, G, eps, rms)));
  });
  m.def("norm_rows_backward_input", [](int dt, uintptr_t dy, uintptr_t x, uintptr_t w,
                                       uintptr_t mean, uintptr_t rstd, uintptr_t dx, int64_t R,
                                       int64_t K, int64_t S, int64_t G, bool rms) {
    check_sizes("norm_rows_backward_input", {R, K, S});
    if (G < 1) fail("norm_rows_backward_input: groups must be positive");
    py::gil_scoped_release nogil;
    FW_DISPATCH_FLOAT(dt, "native_layer_norm_backward",
                      (rows_backward_input<scalar_t>(dy, x, w, mean, rstd, dx, R, K, S, G,
                                                     rms)));
  });
  m.def("norm_rows_backward_params", [](int dt, uintptr_t dy, uintptr_t x, uintptr_t mean,
                                        uintptr_t rstd, uintptr_t dw, uintptr_t db, int64_t R,
                                        int64_t K, bool rms) {
    check_sizes("norm_rows_backward_params", {R, K});
    py::gil_scoped_release nogil;
    FW_DISPATCH_FLOAT(dt, "native_layer_norm_backward",
                      (rows_backward_params<scalar_t>(dy, x, mean, rstd, dw, db, R, K, rms)));
  });
  m.def("norm_channel_stats", [](int dt, uintptr_t x, uintptr_t mean, uintptr_t var,
                                 int64_t N, int64_t C, int64_t S) {
    check_sizes("norm_channel_stats", {N, C, S});
    py::gil_scoped_release nogil;
    FW_DISPATCH_FLOAT(dt, "batch_norm", (channel_stats<scalar_t>(x, mean, var, N, C, S)));
  });
  m.def("norm_channel_param_grads", [](int dt, uintptr_t dy, uintptr_t x, uintptr_t mean,
                                       uintptr_t rstd, uintptr_t dw, uintptr_t db, int64_t N,
                                       int64_t C, int64_t S, int64_t sn, int64_t cdiv) {
    check_sizes("norm_channel_param_grads", {N, C, S});
    if (cdiv < 1) fail("norm_channel_param_grads: cdiv must be positive");
    py::gil_scoped_release nogil;
    FW_DISPATCH_FLOAT(dt, "batch_norm_backward",
                      (channel_param_grads<scalar_t>(dy, x, mean, rstd, dw, db, N, C, S, sn,
                                                     cdiv)));
  });
  m.def("norm_channel_affine", [](int dt, uintptr_t x, uintptr_t kx, uintptr_t z,
                                  uintptr_t kz, uintptr_t k0, uintptr_t y, int64_t N,
                                  int64_t C, int64_t S) {
    check_sizes("norm_channel_affine", {N, C, S});
    py::gil_scoped_release nogil;
    FW_DISPATCH_FLOAT(dt, "batch_norm",
                      (channel_affine<scalar_t>(x, kx, z, kz, k0, y, N, C, S)));
  });
}

}  // namespace fw
