// Reduction kernels of the CPU backend: sum, prod, mean, max/min (+ indices), var, norm,
// logsumexp, all/any, count_nonzero over any set of dims of a strided input.
//
// Python (framework/_ops/reduction.py) describes the problem as two loop nests over the
// input: the kept dims ("outer": one output element per index, with the strides of the
// input and of up to two outputs) and the reduced dims (input strides only). One engine
// runs every op; an op is a small struct with a state type and init/step/combine, plus an
// optional fast `run` over a strided 1-d run of the input. The engine picks one of three
// layouts:
//  - per output: each output reduces its own (usually contiguous) runs; parallel over
//    outputs. Sums use lanes of partial sums and pairwise combination (like NumPy).
//  - columns: when the kept innermost dim is contiguous in the input (reducing an outer
//    dim), whole rows are accumulated into a block of output states, a loop the compiler
//    vectorizes, instead of a strided loop per output.
//  - split: with few outputs and a long reduction, the reduced range is cut into chunks
//    reduced in parallel into partial states that are combined in order.
#include "common.h"

#include <algorithm>
#include <limits>
#include <memory>

namespace fw {
namespace {

constexpr int64_t GRAIN = 32768;

struct Geom {
  Nest<3> outer;  // operands: input, out0, out1
  Nest<1> red;    // operand: input
  int64_t onum, rnum;
  Geom(const Shape& os, const Shape& oi, const Shape& o0, const Shape& o1, const Shape& rs,
       const Shape& ri)
      : outer(os, {&oi, &o0, &o1}), red(rs, {&ri}), onum(outer.numel), rnum(red.numel) {}
};

// sum/prod accumulate ints and bool in int64, 16-bit floats in float.
template <typename T> using sum_t = std::conditional_t<is_float_v<T>, acc_t<T>, int64_t>;

template <typename T> inline bool is_nan(T v) {
  if constexpr (std::is_floating_point<T>::value) return v != v;
  else return false;
}

// ---- sums: lanes of partial sums, combined pairwise --------------------------------------

// Sum of f(p[i * st]) for i < n (n <= 2048): L independent partial sums the compiler keeps
// in vector registers, each summing 8 terms at a time into a second partial sum (so no
// lane adds more than ~16 terms in a row), reduced as a tree.
template <typename S, typename T, typename F>
S lanes_sum(const T* p, int64_t n, int64_t st, const F& f) {
  constexpr int L = sizeof(S) >= 8 ? 16 : 32;
  S hi[L], lo[L];
  for (int j = 0; j < L; j++) hi[j] = S(0);
  int64_t i = 0;
  while (i + L <= n) {
    for (int j = 0; j < L; j++) lo[j] = S(0);
    const int64_t end = std::min(n - L, i + 7 * L);
    if (st == 1) {
      for (; i <= end; i += L)
        for (int j = 0; j < L; j++) lo[j] += f(p[i + j]);
    } else {
      for (; i <= end; i += L)
        for (int j = 0; j < L; j++) lo[j] += f(p[(i + j) * st]);
    }
    for (int j = 0; j < L; j++) hi[j] += lo[j];
  }
  for (int w = L / 2; w > 0; w /= 2)
    for (int j = 0; j < w; j++) hi[j] += hi[j + w];
  S r = hi[0];
  for (; i < n; i++) r += f(p[i * st]);
  return r;
}

// Pairwise summation over blocks: error grows with log(n), not n.
template <typename S, typename T, typename F>
S pairwise_sum(const T* p, int64_t n, int64_t st, const F& f) {
  if (n <= 2048) return lanes_sum<S>(p, n, st, f);
  int64_t h = (n / 2) & ~int64_t(63);
  return pairwise_sum<S>(p, h, st, f) + pairwise_sum<S>(p + h * st, n - h, st, f);
}

// An op whose state is a sum of f(x) (sum, nansum, mean, count_nonzero, the norms, the
// second passes of var and logsumexp). F: (x, center) -> contribution; `center` is a
// per-output value from a first pass (0 when unused).
template <typename T_, typename S_, typename F, bool Centered = false>
struct SumLike {
  using T = T_;
  using S = S_;
  static constexpr bool cascade = is_float_v<S_>;  // see Engine::rows_block
  F f;
  S init() const { return S(0); }
  S step(S s, T x, int64_t, double c) const { return s + f(x, c); }
  S combine(S a, S b) const { return a + b; }
  S run(S s, const T* p, int64_t n, int64_t st, int64_t, double c) const {
    if (n < 32) {  // short runs (many small outputs): no lane set-up
      S r = S(0);
      for (int64_t i = 0; i < n; i++) r += f(p[i * st], c);
      return s + r;
    }
    return s + pairwise_sum<S>(p, n, st, [&](T x) { return f(x, c); });
  }
  void rows(S* acc, const T* p, int64_t m, int64_t, const double* c) const {
    if constexpr (Centered) {
      for (int64_t j = 0; j < m; j++) acc[j] += f(p[j], c[j]);
    } else {
      for (int64_t j = 0; j < m; j++) acc[j] += f(p[j], 0.0);
    }
  }
  // four rows (rs apart) at once: a quarter of the loads and stores of acc
  void rows4(S* acc, const T* p, int64_t rs, int64_t m, int64_t, const double* c) const {
    const T *p1 = p + rs, *p2 = p + 2 * rs, *p3 = p + 3 * rs;
    if constexpr (Centered) {
      for (int64_t j = 0; j < m; j++)
        acc[j] += (f(p[j], c[j]) + f(p1[j], c[j])) + (f(p2[j], c[j]) + f(p3[j], c[j]));
    } else {
      for (int64_t j = 0; j < m; j++)
        acc[j] += (f(p[j], 0.0) + f(p1[j], 0.0)) + (f(p2[j], 0.0) + f(p3[j], 0.0));
    }
  }
};

template <typename S, typename T, typename F>
SumLike<T, S, F> sum_like(F f) { return SumLike<T, S, F>{f}; }
template <typename S, typename T, typename F>
SumLike<T, S, F, true> centered(F f) { return SumLike<T, S, F, true>{f}; }

// ---- generic ops: sequential steps --------------------------------------------------------

template <typename Derived, typename T_, typename S_>
struct Stepper {
  using T = T_;
  using S = S_;
  static constexpr bool cascade = false;
  const Derived& self() const { return static_cast<const Derived&>(*this); }
  S run(S s, const T* p, int64_t n, int64_t st, int64_t i0, double c) const {
    for (int64_t i = 0; i < n; i++) s = self().step(s, p[i * st], i0 + i, c);
    return s;
  }
  void rows(S* acc, const T* p, int64_t m, int64_t idx, const double*) const {
    for (int64_t j = 0; j < m; j++) acc[j] = self().step(acc[j], p[j], idx, 0.0);
  }
  void rows4(S* acc, const T* p, int64_t rs, int64_t m, int64_t idx, const double*) const {
    const T *p1 = p + rs, *p2 = p + 2 * rs, *p3 = p + 3 * rs;
    for (int64_t j = 0; j < m; j++) {
      S s = self().step(acc[j], p[j], idx, 0.0);
      s = self().step(s, p1[j], idx + 1, 0.0);
      s = self().step(s, p2[j], idx + 2, 0.0);
      acc[j] = self().step(s, p3[j], idx + 3, 0.0);
    }
  }
};

template <typename T>
struct Prod : Stepper<Prod<T>, T, sum_t<T>> {
  using S = sum_t<T>;
  S init() const { return S(1); }
  S step(S s, T x, int64_t, double) const { return s * S(acc_t<T>(x)); }
  S combine(S a, S b) const { return a * b; }
};

template <typename T, bool All>
struct AllAny : Stepper<AllAny<T, All>, T, bool> {
  bool init() const { return All; }
  bool step(bool s, T x, int64_t, double) const {
    return All ? (s & (acc_t<T>(x) != acc_t<T>(0))) : (s | (acc_t<T>(x) != acc_t<T>(0)));
  }
  bool combine(bool a, bool b) const { return All ? (a && b) : (a || b); }
};

template <typename C> C lowest() {
  if constexpr (std::is_floating_point<C>::value) return -std::numeric_limits<C>::infinity();
  else return std::numeric_limits<C>::lowest();
}
template <typename C> C highest() {
  if constexpr (std::is_floating_point<C>::value) return std::numeric_limits<C>::infinity();
  else return std::numeric_limits<C>::max();
}

// max / min (also of |x| for the inf norms); NaN propagates.
template <typename T, bool IsMax, bool Abs = false>
struct MaxMin : Stepper<MaxMin<T, IsMax, Abs>, T, acc_t<T>> {
  using C = acc_t<T>;
  static C val(T x) {
    C v = C(x);
    if constexpr (Abs) return v < C(0) ? C(-v) : v;
    else return v;
  }
  static bool better(C v, C s) { return (IsMax ? v > s : v < s) | is_nan(v); }
  C init() const { return IsMax ? lowest<C>() : highest<C>(); }
  C step(C s, T x, int64_t, double) const { C v = val(x); return better(v, s) ? v : s; }
  C combine(C a, C b) const { return is_nan(a) ? a : (better(b, a) ? b : a); }
  C run(C s, const T* p, int64_t n, int64_t st, int64_t, double) const {
    int64_t i = 0;
    if (st == 1) {
      // four 512-bit registers of lanes for long runs, two for short ones (less set-up)
      constexpr int L = 256 / sizeof(C);
      if (n >= 32 * L) i = lanes<L>(s, p, n);
      else if (n >= L) i = lanes<L / 2>(s, p, n);
    }
    // the rest without data-dependent branches: plain max/min, NaNs noted on the side
    bool nan = false;
    for (; i < n; i++) {
      const C v = val(p[i * st]);
      nan |= is_nan(v);
      s = (IsMax ? v > s : v < s) ? v : s;
    }
    if constexpr (std::is_floating_point<C>::value) {
      if (nan) s = std::numeric_limits<C>::quiet_NaN();
    }
    return s;
  }
  // Folds p[0 .. n rounded down to L) into s with L lanes; returns how many it took.
  template <int L>
  // Plain max/min lanes (vmaxps-style selects), with NaNs kept aside by a second select
  // (cheaper than a NaN-propagating select).
  int64_t lanes(C& s, const T* p, int64_t n) const {
    C m[L], nan[L];
    for (int j = 0; j < L; j++) { m[j] = s; nan[j] = C(0); }
    int64_t i = 0;
    for (; i + L <= n; i += L)
      for (int j = 0; j < L; j++) {
        C v = val(p[i + j]);
        m[j] = (IsMax ? v > m[j] : v < m[j]) ? v : m[j];
        if constexpr (std::is_floating_point<C>::value) nan[j] = is_nan(v) ? v : nan[j];
      }
    for (int w = L / 2; w > 0; w /= 2)
      for (int j = 0; j < w; j++) {
        m[j] = better(m[j + w], m[j]) ? m[j + w] : m[j];
        if constexpr (std::is_floating_point<C>::value)
          nan[j] = is_nan(nan[j + w]) ? nan[j + w] : nan[j];
      }
    s = is_nan(nan[0]) ? nan[0] : m[0];
    return i;
  }
};

// max / min with the index of the first occurrence (of the first NaN, if any).
template <typename C> struct ValIdx { C v; int64_t i; };

template <typename T, bool IsMax>
struct ArgOp : Stepper<ArgOp<T, IsMax>, T, ValIdx<acc_t<T>>> {
  using C = acc_t<T>;
  using S = ValIdx<C>;
  static bool better(C v, C s) { return IsMax ? v > s : v < s; }
  S init() const { return S{C(0), -1}; }
  S step(S s, T x, int64_t idx, double) const {
    C v = C(x);
    if (s.i < 0 || better(v, s.v) || (is_nan(v) && !is_nan(s.v))) return S{v, idx};
    return s;
  }
  S combine(S a, S b) const {  // symmetric: ties and NaNs go to the lower index
    if (a.i < 0) return b;
    if (b.i < 0) return a;
    bool na = is_nan(a.v), nb = is_nan(b.v);
    if (na || nb) return (na && nb) ? (a.i <= b.i ? a : b) : (na ? a : b);
    if (better(b.v, a.v)) return b;
    if (better(a.v, b.v)) return a;
    return a.i <= b.i ? a : b;
  }
  // Contiguous runs, in blocks: each block's best value with vector code (NaN if it holds
  // one); the first index of the best value is searched once, in the block that has it.
  S run(S s, const T* p, int64_t n, int64_t st, int64_t i0, double c) const {
    if (st != 1 || n < 64) return Stepper<ArgOp, T, S>::run(s, p, n, st, i0, c);
    constexpr int64_t B = 8192;
    const MaxMin<T, IsMax> best_of;
    C bv = C(0);
    int64_t bb = -1;  // start of the block holding bv
    for (int64_t b = 0; b < n; b += B) {
      const int64_t m = std::min(B, n - b);
      const T* q = p + b;
      const C best = best_of.run(C(q[0]), q, m, 1, 0, 0.0);
      if (is_nan(best)) {
        if (s.i >= 0 && is_nan(s.v)) return s;
        return S{best, i0 + b + find(q, m, [](C v) { return is_nan(v); })};
      }
      if (bb < 0 ? (s.i < 0 || better(best, s.v)) : better(best, bv)) { bv = best; bb = b; }
    }
    if (bb >= 0) {
      const int64_t m = std::min(B, n - bb);
      s = S{bv, i0 + bb + find(p + bb, m, [bv](C v) { return v == bv; })};
    }
    return s;
  }
  // First j < m with pred(q[j]) (there is one), as a min-reduction the compiler vectorizes
  // (a loop with an early exit would stay scalar).
  template <typename P>
  static int64_t find(const T* q, int64_t m, const P& pred) {
    using I = std::conditional_t<sizeof(C) == 8, int64_t, int32_t>;
    constexpr I K = 512;  // searched K at a time, stopping at the first hit
    for (I b = 0; b < I(m); b += K) {
      const I e = std::min<I>(I(m), b + K);
      I first = e;
      for (I j = b; j < e; j++) {
        const I cand = pred(C(q[j])) ? j : e;
        first = cand < first ? cand : first;
      }
      if (first < e) return first;
    }
    return m - 1;
  }
};

template <typename C> struct MinMaxS { C mn, mx; };

template <typename T>
struct AMinMax : Stepper<AMinMax<T>, T, MinMaxS<acc_t<T>>> {
  using C = acc_t<T>;
  using S = MinMaxS<C>;
  S init() const { return S{highest<C>(), lowest<C>()}; }
  S step(S s, T x, int64_t, double) const {
    C v = C(x);
    bool n = is_nan(v);
    return S{(v < s.mn) | n ? v : s.mn, (v > s.mx) | n ? v : s.mx};
  }
  S combine(S a, S b) const {
    MaxMin<T, false> lo;
    MaxMin<T, true> hi;
    return S{lo.combine(a.mn, b.mn), hi.combine(a.mx, b.mx)};
  }
};

// ---- the engine ---------------------------------------------------------------------------

// An array of states (not std::vector: vector<bool> has no data()).
template <typename S>
struct States {
  std::unique_ptr<S[]> p;
  States(int64_t n, S v) : p(new S[std::max<int64_t>(n, 1)]) { std::fill(p.get(), p.get() + n, v); }
  S* data() { return p.get(); }
  S& operator[](int64_t i) { return p[i]; }
};

template <typename Op>
struct Engine {
  using T = typename Op::T;
  using S = typename Op::S;
  const Op& op;
  const Geom& g;
  const T* in;
  const double* centers;  // per output (logical outer index), or null

  double center(int64_t oi) const { return centers ? centers[oi] : 0.0; }

  // One output: reduce its reduced elements [rb, re) (logical order) into s.
  S reduce_one(S s, const T* base, int64_t rb, int64_t re, double c) const {
    const int64_t rs = g.red.inner_stride(0);
    if (g.red.shape.size() == 1) return op.run(s, base + rb * rs, re - rb, rs, rb, c);
    int64_t idx = rb;
    g.red.runs(rb, re, [&](const int64_t* off, int64_t n) {
      s = op.run(s, base + off[0], n, rs, idx, c);
      idx += n;
    });
    return s;
  }

  // Whole rows into a block of m output states (the kept dim is contiguous in the input).
  void rows_block(S* acc, const T* base, int64_t m, int64_t rb, int64_t re,
                  const double* cent) const {
    const int64_t rs = g.red.inner_stride(0);
    int64_t idx = rb;
    if constexpr (Op::cascade) {
      // float sums cascade: groups of 64 rows summed apart (tmp), 64 groups into mid, then
      // into the totals, so rounding error grows like 64 + 64 + rows / 4096, not rows
      S tmp[1024], mid[1024];
      int pending = 0, groups = 0;
      for (int64_t j = 0; j < m; j++) tmp[j] = mid[j] = S(0);
      g.red.runs(rb, re, [&](const int64_t* off, int64_t n) {
        int64_t i = 0;
        for (; i + 4 <= n; i += 4) {
          op.rows4(tmp, base + off[0] + i * rs, rs, m, idx + i, cent);
          if (++pending == 16) {
            for (int64_t j = 0; j < m; j++) { mid[j] += tmp[j]; tmp[j] = S(0); }
            pending = 0;
            if (++groups == 64) {
              for (int64_t j = 0; j < m; j++) { acc[j] += mid[j]; mid[j] = S(0); }
              groups = 0;
            }
          }
        }
        for (; i < n; i++) op.rows(tmp, base + off[0] + i * rs, m, idx + i, cent);
        idx += n;
      });
      for (int64_t j = 0; j < m; j++) acc[j] += mid[j] + tmp[j];
    } else {
      g.red.runs(rb, re, [&](const int64_t* off, int64_t n) {
        int64_t i = 0;
        for (; i + 4 <= n; i += 4) op.rows4(acc, base + off[0] + i * rs, rs, m, idx + i, cent);
        for (; i < n; i++) op.rows(acc, base + off[0] + i * rs, m, idx + i, cent);
        idx += n;
      });
    }
  }

  // Outputs [ob, oe) over reduced elements [rb, re), into st[0 .. oe - ob).
  void core(int64_t ob, int64_t oe, int64_t rb, int64_t re, S* st) const {
    if (rb >= re) return;
    const int64_t ois = g.outer.inner_stride(0);
    const bool cols = ois == 1 && g.outer.inner() >= 4;
    int64_t k = 0;
    g.outer.runs(ob, oe, [&](const int64_t* off, int64_t n) {
      if (cols) {
        constexpr int64_t BLK = 1024;
        for (int64_t j0 = 0; j0 < n; j0 += BLK) {
          const int64_t m = std::min(BLK, n - j0);
          rows_block(st + k + j0, in + off[0] + j0, m, rb, re,
                     centers ? centers + ob + k + j0 : nullptr);
        }
      } else if (g.red.shape.size() == 1) {
        // one strided run per output: keep everything in locals for the tight loop
        const int64_t rs = g.red.inner_stride(0), rn = re - rb;
        const T* b0 = in + off[0] + rb * rs;
        S* s0 = st + k;
        const Op o = op;
        for (int64_t i = 0; i < n; i++)
          s0[i] = o.run(s0[i], b0 + i * ois, rn, rs, rb, center(ob + k + i));
      } else {
        for (int64_t i = 0; i < n; i++)
          st[k + i] = reduce_one(st[k + i], in + off[0] + i * ois, rb, re, center(ob + k + i));
      }
      k += n;
    });
  }

  template <typename W>
  void emit(int64_t ob, int64_t oe, const S* st, const W& write) const {
    const int64_t s1 = g.outer.inner_stride(1), s2 = g.outer.inner_stride(2);
    int64_t k = 0;
    g.outer.runs(ob, oe, [&](const int64_t* off, int64_t n) {
      for (int64_t i = 0; i < n; i++)
        write(st[k + i], off[1] + i * s1, off[2] + i * s2, ob + k + i);
      k += n;
    });
  }

  template <typename W>
  void go(const W& write) const {
    if (g.onum == 0) return;
    const int64_t nt = num_threads(), onum = g.onum, rnum = g.rnum;
    const bool cols = g.outer.inner_stride(0) == 1 && g.outer.inner() >= 4;
    int64_t nch = 0;
    if (onum < 4 * nt && rnum >= 2 * GRAIN) {
      // few outputs, long reductions: split the reduced range
      nch = std::min<int64_t>(64, rnum / GRAIN);
    } else if (cols && onum <= 16384 && rnum >= 64 && onum * rnum >= 8 * GRAIN) {
      // columns of a matrix: each thread sums whole rows of its share of the rows (long
      // contiguous reads) into partial columns, rather than a share of every row
      nch = std::min<int64_t>({64, onum * rnum / (4 * GRAIN), rnum / 16});
    }
    if (nch > 1) {
      // the number of chunks depends on the sizes only, so results do not depend on the
      // thread count
      const int64_t csz = (rnum + nch - 1) / nch;
      States<S> part(nch * onum, op.init());
      parallel_for(0, nch, 1, [&](int64_t b, int64_t e) {
        for (int64_t c = b; c < e; c++)
          core(0, onum, c * csz, std::min(rnum, (c + 1) * csz), &part[c * onum]);
      });
      for (int64_t c = 1; c < nch; c++)
        for (int64_t o = 0; o < onum; o++) part[o] = op.combine(part[o], part[c * onum + o]);
      emit(0, onum, part.data(), write);
      return;
    }
    int64_t grain = std::max<int64_t>(1, GRAIN / std::max<int64_t>(rnum, 1));
    if (g.outer.inner_stride(0) == 1) grain = std::max(grain, (onum + nt - 1) / nt);
    parallel_for(0, onum, grain, [&](int64_t b, int64_t e) {
      States<S> st(e - b, op.init());
      core(b, e, 0, rnum, st.data());
      emit(b, e, st.data(), write);
    });
  }
};

template <typename Op, typename W>
void run_op(const Op& op, const Geom& g, uintptr_t in, const W& write,
            const double* centers = nullptr) {
  Engine<Op>{op, g, ptr<typename Op::T>(in), centers}.go(write);
}

// ---- the ops ------------------------------------------------------------------------------

struct Args {
  uintptr_t in, out0, out1;
  double p0, p1;
};

template <typename T, bool SkipNan>
void do_sum(const Geom& g, const Args& a, bool mean) {
  using S = sum_t<T>;
  using O = std::conditional_t<is_float_v<T>, T, int64_t>;
  O* o = ptr<O>(a.out0);
  const S n = S(g.rnum);
  auto op = sum_like<S, T>([](T x, double) {
    S v = S(acc_t<T>(x));
    if constexpr (SkipNan) return is_nan(v) ? S(0) : v;
    else return v;
  });
  if (mean) run_op(op, g, a.in, [&](S s, int64_t o0, int64_t, int64_t) { o[o0] = O(s / n); });
  else run_op(op, g, a.in, [&](S s, int64_t o0, int64_t, int64_t) { o[o0] = O(s); });
}

template <typename T>
void do_count_nonzero(const Geom& g, const Args& a) {
  int64_t* o = ptr<int64_t>(a.out0);
  auto op = sum_like<int64_t, T>([](T x, double) { return int64_t(acc_t<T>(x) != acc_t<T>(0)); });
  run_op(op, g, a.in, [&](int64_t s, int64_t o0, int64_t, int64_t) { o[o0] = s; });
}

template <typename T>
void do_prod(const Geom& g, const Args& a) {
  using O = std::conditional_t<is_float_v<T>, T, int64_t>;
  O* o = ptr<O>(a.out0);
  run_op(Prod<T>{}, g, a.in, [&](sum_t<T> s, int64_t o0, int64_t, int64_t) { o[o0] = O(s); });
}

template <typename T, bool All>
void do_all_any(const Geom& g, const Args& a) {
  uint8_t* o = ptr<uint8_t>(a.out0);  // bool, or uint8 for uint8 input (same bytes)
  run_op(AllAny<T, All>{}, g, a.in, [&](bool s, int64_t o0, int64_t, int64_t) { o[o0] = s; });
}

template <typename T, bool IsMax>
void do_max(const Geom& g, const Args& a) {
  T* o = ptr<T>(a.out0);
  run_op(MaxMin<T, IsMax>{}, g, a.in,
         [&](acc_t<T> s, int64_t o0, int64_t, int64_t) { o[o0] = T(s); });
}

// values (out0, optional) and int64 indices (out1)
template <typename T, bool IsMax>
void do_arg(const Geom& g, const Args& a) {
  T* v = ptr<T>(a.out0);
  int64_t* ix = ptr<int64_t>(a.out1);
  run_op(ArgOp<T, IsMax>{}, g, a.in, [&](ValIdx<acc_t<T>> s, int64_t o0, int64_t o1, int64_t) {
    if (v) v[o0] = T(s.v);
    ix[o1] = s.i;
  });
}

template <typename T>
void do_aminmax(const Geom& g, const Args& a) {
  T* mn = ptr<T>(a.out0);
  T* mx = ptr<T>(a.out1);
  run_op(AMinMax<T>{}, g, a.in, [&](MinMaxS<acc_t<T>> s, int64_t o0, int64_t o1, int64_t) {
    mn[o0] = T(s.mn);
    mx[o1] = T(s.mx);
  });
}

// var/std (p0 = correction, p1 = 1 for std); the mean goes to out1 when given. Two passes
// in double: the mean, then the sum of squared deviations from it.
template <typename T>
void do_var(const Geom& g, const Args& a) {
  T* o = ptr<T>(a.out0);
  T* mo = ptr<T>(a.out1);
  std::vector<double> mean(g.onum);
  const double n = double(g.rnum);
  run_op(sum_like<double, T>([](T x, double) { return double(acc_t<T>(x)); }), g, a.in,
         [&](double s, int64_t, int64_t, int64_t oi) { mean[oi] = s / n; });
  const double dof = std::max(0.0, n - a.p0);
  const bool take_sqrt = a.p1 != 0;
  auto sq = centered<double, T>([](T x, double c) {
    double d = double(acc_t<T>(x)) - c;
    return d * d;
  });
  run_op(sq, g, a.in, [&](double s, int64_t o0, int64_t o1, int64_t oi) {
    double v = s / dof;
    o[o0] = T(take_sqrt ? std::sqrt(v) : v);
    if (mo) mo[o1] = T(mean[oi]);
  }, mean.data());
}

// log(sum(exp(x - m))) + m with m the max (0 where it is infinite).
template <typename T>
void do_logsumexp(const Geom& g, const Args& a) {
  using C = acc_t<T>;
  T* o = ptr<T>(a.out0);
  std::vector<double> m(g.onum);
  run_op(MaxMin<T, true>{}, g, a.in, [&](C s, int64_t, int64_t, int64_t oi) {
    m[oi] = std::isinf(s) ? 0.0 : double(s);
  });
  auto se = centered<C, T>([](T x, double c) { return C(std::exp(C(x) - C(c))); });
  run_op(se, g, a.in, [&](C s, int64_t o0, int64_t, int64_t oi) {
    o[o0] = T(std::log(s) + C(m[oi]));
  }, m.data());
}

// vector norms: p0 = p
template <typename T>
void do_norm(const Geom& g, const Args& a) {
  using C = acc_t<T>;
  T* o = ptr<T>(a.out0);
  const double p = a.p0;
  auto put = [&](C s, int64_t o0, int64_t, int64_t) { o[o0] = T(s); };
  auto abs_ = [](T x) { C v = C(x); return v < C(0) ? C(-v) : v; };
  if (std::isinf(p)) {
    if (p > 0) run_op(MaxMin<T, true, true>{}, g, a.in, put);
    else run_op(MaxMin<T, false, true>{}, g, a.in, put);
  } else if (p == 2) {
    run_op(sum_like<C, T>([](T x, double) { C v = C(x); return v * v; }), g, a.in,
           [&](C s, int64_t o0, int64_t, int64_t) { o[o0] = T(std::sqrt(s)); });
  } else if (p == 1) {
    run_op(sum_like<C, T>([&](T x, double) { return abs_(x); }), g, a.in, put);
  } else if (p == 0) {
    run_op(sum_like<C, T>([](T x, double) { return C(C(x) != C(0)); }), g, a.in, put);
  } else {
    const C pc = C(p), inv = C(1.0 / p);
    run_op(sum_like<C, T>([&](T x, double) { return C(std::pow(abs_(x), pc)); }), g, a.in,
           [&](C s, int64_t o0, int64_t, int64_t) { o[o0] = T(std::pow(s, inv)); });
  }
}

void reduce(const std::string& op, int dt, const Geom& g, const Args& a) {
  const char* name = op.c_str();
  if (op == "sum") { FW_DISPATCH_ALL(dt, name, (do_sum<scalar_t, false>(g, a, false))) }
  else if (op == "nansum") { FW_DISPATCH_FLOAT(dt, name, (do_sum<scalar_t, true>(g, a, false))) }
  else if (op == "mean") { FW_DISPATCH_FLOAT(dt, name, (do_sum<scalar_t, false>(g, a, true))) }
  else if (op == "prod") { FW_DISPATCH_ALL(dt, name, do_prod<scalar_t>(g, a)) }
  else if (op == "count_nonzero") { FW_DISPATCH_ALL(dt, name, do_count_nonzero<scalar_t>(g, a)) }
  else if (op == "all") { FW_DISPATCH_ALL(dt, name, (do_all_any<scalar_t, true>(g, a))) }
  else if (op == "any") { FW_DISPATCH_ALL(dt, name, (do_all_any<scalar_t, false>(g, a))) }
  else if (op == "amax") { FW_DISPATCH_ALL(dt, name, (do_max<scalar_t, true>(g, a))) }
  else if (op == "amin") { FW_DISPATCH_ALL(dt, name, (do_max<scalar_t, false>(g, a))) }
  else if (op == "argmax") { FW_DISPATCH_ALL(dt, name, (do_arg<scalar_t, true>(g, a))) }
  else if (op == "argmin") { FW_DISPATCH_ALL(dt, name, (do_arg<scalar_t, false>(g, a))) }
  else if (op == "aminmax") { FW_DISPATCH_ALL(dt, name, do_aminmax<scalar_t>(g, a)) }
  else if (op == "var") { FW_DISPATCH_FLOAT(dt, name, do_var<scalar_t>(g, a)) }
  else if (op == "logsumexp") { FW_DISPATCH_FLOAT(dt, name, do_logsumexp<scalar_t>(g, a)) }
  else if (op == "norm") { FW_DISPATCH_FLOAT(dt, name, do_norm<scalar_t>(g, a)) }
  else fail("internal: unknown reduction " + op);
}

}  // namespace

void register_reduction(py::module_& m) {
  m.def("reduce", [](const std::string& op, int dt, uintptr_t in, uintptr_t out0, uintptr_t out1,
                     const Shape& oshape, const Shape& o_in, const Shape& o_out0,
                     const Shape& o_out1, const Shape& rshape, const Shape& r_in, double p0,
                     double p1) {
    const size_t ko = oshape.size(), kr = rshape.size();
    if (o_in.size() != ko || o_out0.size() != ko || o_out1.size() != ko || r_in.size() != kr)
      fail("internal: reduce: stride rank mismatch");
    Geom g(oshape, o_in, o_out0, o_out1, rshape, r_in);
    py::gil_scoped_release nogil;
    reduce(op, dt, g, Args{in, out0, out1, p0, p1});
  });
}

}  // namespace fw
