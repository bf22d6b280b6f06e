// Loss kernels: cross entropy with class indices, forward and backward, one row of logits
// at a time.
//
// x is a contiguous (rows, C) tensor of logits of one floating dtype, target a contiguous
// int64 (rows,) tensor of class indices, weight a contiguous (C,) tensor of x's dtype (or
// absent). 16-bit floats and float32 compute in float, float64 in double; the per-row
// outputs (loss, weight of the row's target, and stats: the row's reference point ref and
// log(sum exp(x - ref)), whose sum is its logsumexp) are in that compute type. The
// logsumexp is kept as two numbers so that (x - ref) - log_s keeps the precision of
// PyTorch's log_softmax where logits are large (+-1e4: ref + log_s would round to the
// float32 spacing near 1e4).
//
// Forward, one pass over a row (online normalisation, as native/softmax.cpp): chunk by
// chunk, the running maximum m and sum s of exp(x - ref) (ref = m, or 0 while m is -inf)
// and, with label smoothing, S = sum_c w_c (x_c - ref), moved to a new ref by adding
// (ref_old - ref_new) * (weights seen so far). At the end lse = ref + log(s) and
//   loss = (1 - eps) w_y (lse - x_y) + eps / C * sum_c w_c (lse - x_c),
// (lse - x_y computed as (ref - x_y) + log(s)), where the smoothing sum is
// log(s) * sum_c w_c - S: its terms are all relative to the
// row maximum, so logits of +-1e4 lose nothing to cancellation. Ignored rows give 0.
//
// Backward, from the logits and lse alone (no probabilities kept):
//   dx_c = g * ((exp((x_c - ref) - log_s) * a - eps / C * w_c) - [c == y] b),
//   a = (1 - eps) w_y + eps / C * sum_c w_c,  b = (1 - eps) w_y,
// g the row's scale (upstream gradient, divided by the total weight for 'mean').
#include "common.h"
#include "pointwise_vmath.h"

#include <algorithm>
#include <limits>

namespace fw {
namespace {

constexpr int64_t kLanes = 16;    // independent partial sums/maxima, so the loops vectorize
constexpr int64_t kChunk = 1024;  // row elements per online step (a multiple of kLanes)

template <typename A> constexpr A neg_inf() { return -std::numeric_limits<A>::infinity(); }
template <typename A> inline A ref_of(A m) { return m == neg_inf<A>() ? A(0) : m; }

// The weights in the compute type (a small (C,) copy shared by all rows), or empty.
template <typename T, typename A = acc_t<T>>
std::vector<A> weights_of(uintptr_t w, int64_t C) {
  std::vector<A> out;
  if (!w) return out;
  const T* wp = ptr<const T>(w);
  out.resize(C);
  for (int64_t c = 0; c < C; c++) out[c] = A(wp[c]);
  return out;
}

template <typename T, bool HasW, bool Smooth>
void ce_forward(const T* x0, const int64_t* tgt, const acc_t<T>* w, acc_t<T>* loss,
                acc_t<T>* stats, acc_t<T>* wrow, int64_t rows, int64_t C, int64_t ignore,
                acc_t<T> eps) {
  using A = acc_t<T>;
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(C, 1));
  parallel_for(0, rows, grain, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; r++) {
      const T* x = x0 + r * C;
      A m = neg_inf<A>(), s = 0, S = 0, wseen = 0;
      for (int64_t c0 = 0; c0 < C; c0 += kChunk) {
        const int64_t n = std::min(kChunk, C - c0), nv = n / kLanes * kLanes;
        const T* xc = x + c0;
        A lm[kLanes];
        for (int64_t k = 0; k < kLanes; k++) lm[k] = neg_inf<A>();
        for (int64_t j = 0; j < nv; j += kLanes)
          for (int64_t k = 0; k < kLanes; k++) {
            const A v = A(xc[j + k]);
            lm[k] = v > lm[k] ? v : lm[k];
          }
        A nm = m;
        for (int64_t k = 0; k < kLanes; k++) nm = lm[k] > nm ? lm[k] : nm;
        for (int64_t j = nv; j < n; j++) nm = A(xc[j]) > nm ? A(xc[j]) : nm;
        const A ref_old = ref_of(m), ref = ref_of(nm);
        A ls[kLanes] = {};
        for (int64_t j = 0; j < nv; j += kLanes)
          for (int64_t k = 0; k < kLanes; k++) ls[k] += vm::exp(A(xc[j + k]) - ref);
        A cs = 0;
        for (int64_t k = 0; k < kLanes; k++) cs += ls[k];
        for (int64_t j = nv; j < n; j++) cs += vm::exp(A(xc[j]) - ref);
        // m - ref is -inf (m was -inf), 0 or negative; NaN only for a +inf logit, where
        // the row is NaN in PyTorch as well
        s = s * vm::exp(m - ref) + cs;
        if (Smooth) {
          A lw[kLanes] = {};
          A cw = A(n);
          if (HasW) {
            const A* wc = w + c0;
            A lws[kLanes] = {};
            for (int64_t j = 0; j < nv; j += kLanes)
              for (int64_t k = 0; k < kLanes; k++) {
                lw[k] += wc[j + k] * (A(xc[j + k]) - ref);
                lws[k] += wc[j + k];
              }
            cw = 0;
            for (int64_t k = 0; k < kLanes; k++) cw += lws[k];
            for (int64_t j = nv; j < n; j++) {
              lw[0] += wc[j] * (A(xc[j]) - ref);
              cw += wc[j];
            }
          } else {
            for (int64_t j = 0; j < nv; j += kLanes)
              for (int64_t k = 0; k < kLanes; k++) lw[k] += A(xc[j + k]) - ref;
            for (int64_t j = nv; j < n; j++) lw[0] += A(xc[j]) - ref;
          }
          A cl = 0;
          for (int64_t k = 0; k < kLanes; k++) cl += lw[k];
          S = S + (ref_old - ref) * wseen + cl;
          wseen += cw;
        }
        m = nm;
      }
      const A log_s = std::log(s), ref = ref_of(m);
      stats[r] = ref;
      stats[rows + r] = log_s;
      const int64_t t = tgt[r];
      if (t == ignore) {
        loss[r] = 0;
        wrow[r] = 0;
        continue;
      }
      const A wy = HasW ? w[t] : A(1);
      const A nll = (ref - A(x[t])) + log_s;
      wrow[r] = wy;
      if (Smooth)
        loss[r] = (1 - eps) * wy * nll + eps / A(C) * (log_s * wseen - S);
      else
        loss[r] = wy * nll;
    }
  });
}

// Rows of at most kSmall classes: kLanes rows at a time, transposed into a [C][kLanes]
// buffer, so that the max, exp-sum and log run across rows in vector lanes (a row of a
// few classes is too short for the lanes along it). Same results as the online loop.
constexpr int64_t kSmall = 64;

template <typename T, bool HasW, bool Smooth>
void ce_forward_small(const T* x0, const int64_t* tgt, const acc_t<T>* w, acc_t<T>* loss,
                      acc_t<T>* stats, acc_t<T>* wrow, int64_t rows, int64_t C,
                      int64_t ignore, acc_t<T> eps) {
  using A = acc_t<T>;
  A wall = A(C);
  if (HasW) {
    wall = 0;
    for (int64_t c = 0; c < C; c++) wall += w[c];
  }
  const int64_t blocks = (rows + kLanes - 1) / kLanes;
  const int64_t grain = std::max<int64_t>(1, 2048 / std::max<int64_t>(C * kLanes, 1));
  parallel_for(0, blocks, grain, [&](int64_t b, int64_t e) {
    A buf[kSmall][kLanes];
    for (int64_t blk = b; blk < e; blk++) {
      const int64_t r0 = blk * kLanes, h = std::min(kLanes, rows - r0);
      for (int64_t i = 0; i < h; i++) {
        const T* x = x0 + (r0 + i) * C;
        for (int64_t c = 0; c < C; c++) buf[c][i] = A(x[c]);
      }
      for (int64_t i = h; i < kLanes; i++)
        for (int64_t c = 0; c < C; c++) buf[c][i] = 0;
      A m[kLanes], ref[kLanes], s[kLanes] = {}, S[kLanes] = {};
      for (int64_t k = 0; k < kLanes; k++) m[k] = neg_inf<A>();
      for (int64_t c = 0; c < C; c++)
        for (int64_t k = 0; k < kLanes; k++) m[k] = buf[c][k] > m[k] ? buf[c][k] : m[k];
      for (int64_t k = 0; k < kLanes; k++) ref[k] = ref_of(m[k]);
      for (int64_t c = 0; c < C; c++)
        for (int64_t k = 0; k < kLanes; k++) s[k] += vm::exp(buf[c][k] - ref[k]);
      if (Smooth) {
        for (int64_t c = 0; c < C; c++) {
          const A wc = HasW ? w[c] : A(1);
          for (int64_t k = 0; k < kLanes; k++) S[k] += wc * (buf[c][k] - ref[k]);
        }
      }
      for (int64_t i = 0; i < h; i++) {
        const int64_t r = r0 + i;
        const A log_s = std::log(s[i]);
        stats[r] = ref[i];
        stats[rows + r] = log_s;
        const int64_t t = tgt[r];
        if (t == ignore) {
          loss[r] = 0;
          wrow[r] = 0;
          continue;
        }
        const A wy = HasW ? w[t] : A(1);
        const A nll = (ref[i] - buf[t][i]) + log_s;
        wrow[r] = wy;
        if (Smooth)
          loss[r] = (1 - eps) * wy * nll + eps / A(C) * (log_s * wall - S[i]);
        else
          loss[r] = wy * nll;
      }
    }
  });
}

template <typename T, bool HasW, bool Smooth>
void ce_backward(const T* x0, const int64_t* tgt, const acc_t<T>* w, const acc_t<T>* stats,
                 const acc_t<T>* grow, int64_t gstride, T* gx0, int64_t rows, int64_t C,
                 int64_t ignore, acc_t<T> eps, acc_t<T> wsum) {
  using A = acc_t<T>;
  const A e = Smooth ? eps / A(C) : A(0);
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(C, 1));
  parallel_for(0, rows, grain, [&](int64_t b, int64_t end) {
    for (int64_t r = b; r < end; r++) {
      const T* x = x0 + r * C;
      T* gx = gx0 + r * C;
      const int64_t t = tgt[r];
      if (t == ignore) {
        std::fill(gx, gx + C, T(0.0f));
        continue;
      }
      const A g = grow[r * gstride], M = stats[r], L = stats[rows + r];
      const A wy = HasW ? w[t] : A(1);
      const A bg = (Smooth ? (1 - eps) : A(1)) * wy * g;
      const A ag = Smooth ? bg + e * wsum * g : bg;
      const A eg = e * g;
      if (Smooth && HasW) {
        for (int64_t c = 0; c < C; c++) gx[c] = T(vm::exp((A(x[c]) - M) - L) * ag - eg * w[c]);
      } else if (Smooth) {
        for (int64_t c = 0; c < C; c++) gx[c] = T(vm::exp((A(x[c]) - M) - L) * ag - eg);
      } else {
        for (int64_t c = 0; c < C; c++) gx[c] = T(vm::exp((A(x[c]) - M) - L) * ag);
      }
      gx[t] = T(vm::exp((A(x[t]) - M) - L) * ag - (HasW ? eg * w[t] : eg) - bg);
    }
  });
}

// PyTorch's IndexError for a class index outside [0, C) that is not ignore_index.
void check_targets(const int64_t* t, int64_t rows, int64_t C, int64_t ignore) {
  for (int64_t r = 0; r < rows; r++)
    if (t[r] != ignore && (t[r] < 0 || t[r] >= C))
      throw std::out_of_range("Target " + std::to_string(t[r]) + " is out of bounds.");
}

template <typename T>
void forward(uintptr_t x, uintptr_t t, uintptr_t w, uintptr_t loss, uintptr_t stats,
             uintptr_t wrow, int64_t rows, int64_t C, int64_t ignore, double eps) {
  using A = acc_t<T>;
  const std::vector<A> wa = weights_of<T>(w, C);
  const A* wp = w ? wa.data() : nullptr;
  auto run = [&](auto has_w, auto smooth) {
    constexpr bool HW = decltype(has_w)::value, SM = decltype(smooth)::value;
    if (C <= kSmall)
      ce_forward_small<T, HW, SM>(ptr<const T>(x), ptr<const int64_t>(t), wp, ptr<A>(loss),
                                  ptr<A>(stats), ptr<A>(wrow), rows, C, ignore, A(eps));
    else
      ce_forward<T, HW, SM>(ptr<const T>(x), ptr<const int64_t>(t), wp, ptr<A>(loss),
                            ptr<A>(stats), ptr<A>(wrow), rows, C, ignore, A(eps));
  };
  using F = std::false_type;
  using Tr = std::true_type;
  if (w && eps > 0) run(Tr{}, Tr{});
  else if (w) run(Tr{}, F{});
  else if (eps > 0) run(F{}, Tr{});
  else run(F{}, F{});
}

template <typename T>
void backward(uintptr_t x, uintptr_t t, uintptr_t w, uintptr_t ws, uintptr_t stats,
              uintptr_t grow, int64_t gstride, uintptr_t gx, int64_t rows, int64_t C,
              int64_t ignore, double eps) {
  using A = acc_t<T>;
  const std::vector<A> wa = weights_of<T>(w, C);
  const A* wp = w ? wa.data() : nullptr;
  const A wsum = ws ? *ptr<const A>(ws) : A(C);
  auto run = [&](auto has_w, auto smooth) {
    ce_backward<T, decltype(has_w)::value, decltype(smooth)::value>(
        ptr<const T>(x), ptr<const int64_t>(t), wp, ptr<const A>(stats), ptr<const A>(grow),
        gstride, ptr<T>(gx), rows, C, ignore, A(eps), wsum);
  };
  using F = std::false_type;
  using Tr = std::true_type;
  if (w && eps > 0) run(Tr{}, Tr{});
  else if (w) run(Tr{}, F{});
  else if (eps > 0) run(F{}, Tr{});
  else run(F{}, F{});
}

}  // namespace

void register_loss(py::module_& m) {
  // loss, wrow (rows,), stats (2, rows) = cross entropy of contiguous logits x (rows, C) against
  // class indices t (rows,), optional weight w (C,) (0: none), label smoothing eps
  m.def("cross_entropy_forward", [](int dt, uintptr_t x, uintptr_t t, uintptr_t w,
                                    uintptr_t loss, uintptr_t stats, uintptr_t wrow,
                                    int64_t rows, int64_t C, int64_t ignore, double eps) {
    if (rows < 0 || C < 0) fail("cross_entropy: negative size");
    py::gil_scoped_release nogil;
    check_targets(ptr<const int64_t>(t), rows, C, ignore);
    FW_DISPATCH_FLOAT(dt, "cross_entropy",
                      (forward<scalar_t>(x, t, w, loss, stats, wrow, rows, C, ignore, eps)));
  });
  // gx (rows, C) = gradient of the per-row losses scaled by grow (row r's at r * gstride:
  // gstride 0 scales every row alike), from x and lse (ws: the sum of the weights, compute
  // type; 0: C)
  m.def("cross_entropy_backward", [](int dt, uintptr_t x, uintptr_t t, uintptr_t w,
                                     uintptr_t ws, uintptr_t stats, uintptr_t grow,
                                     int64_t gstride, uintptr_t gx, int64_t rows, int64_t C,
                                     int64_t ignore, double eps) {
    if (rows < 0 || C < 0) fail("cross_entropy_backward: negative size");
    if (gstride != 0 && gstride != 1) fail("cross_entropy_backward: grow stride 0 or 1");
    py::gil_scoped_release nogil;
    FW_DISPATCH_FLOAT(dt, "cross_entropy_backward",
                      (backward<scalar_t>(x, t, w, ws, stats, grow, gstride, gx, rows, C,
                                          ignore, eps)));
  });
}

}  // namespace fw
