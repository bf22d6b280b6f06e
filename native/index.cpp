// Index kernels of the CPU backend: advanced indexing (gather/put through precomputed
// element offsets), gather/scatter along a dim, nonzero, masked_fill, tril/triu.
//
// The Python layer (framework/_ops/index.py, scatter.py, masked.py) computes shapes,
// converts dtypes, allocates outputs and restrides operands; these kernels only loop.
// Index values are always bounds-checked here: a bad index raises, never reads or writes
// out of bounds. std::out_of_range becomes IndexError in Python, fw::fail RuntimeError.
#include "common.h"

#include <algorithm>
#include <stdexcept>

namespace fw {
namespace {

// Message styles for out-of-bounds indices, matching the op that PyTorch names.
enum Style { S_DIM = 0, S_SELF = 1, S_TAKE = 2, S_PREFIX = 3, S_RUNTIME = 4, S_DATA = 5 };

[[noreturn]] void bad_index(int style, const std::string& prefix, int64_t v, int64_t dim,
                            int64_t size) {
  std::string dims = "index " + std::to_string(v) + " is out of bounds for dimension " +
                     std::to_string(dim) + " with size " + std::to_string(size);
  switch (style) {
    case S_SELF: throw std::out_of_range("index out of range in self");
    case S_TAKE:
      throw std::out_of_range("out of range: tried to access index " + std::to_string(v) +
                              " on a tensor of " + std::to_string(size) + " elements.");
    case S_PREFIX: throw std::out_of_range(prefix + dims);
    case S_RUNTIME: fail(dims);
    case S_DATA:  // PyTorch's CPU index_select along dim 1
      fail("INDICES element is out of DATA bounds, id=" + std::to_string(v) +
           " axis_dim=" + std::to_string(size));
    default:
      if (size == 0) throw std::out_of_range("index is out of bounds for dimension with size 0");
      throw std::out_of_range(dims);
  }
}

// A row-major walk over `shape` that keeps one element offset per operand.
struct Walk {
  const Shape& shape;
  std::vector<const Shape*> strides;
  std::vector<int64_t> idx, off;

  Walk(const Shape& s, std::vector<const Shape*> st, int64_t start) : shape(s), strides(st) {
    const int nd = (int)shape.size();
    idx.assign(nd, 0);
    off.assign(strides.size(), 0);
    int64_t rest = start;
    for (int d = nd - 1; d >= 0; d--) {
      if (shape[d] == 0) break;
      idx[d] = rest % shape[d];
      rest /= shape[d];
    }
    for (size_t k = 0; k < strides.size(); k++)
      for (int d = 0; d < nd; d++) off[k] += idx[d] * (*strides[k])[d];
  }
  void next() {
    for (int d = (int)shape.size() - 1; d >= 0; d--) {
      idx[d]++;
      for (size_t k = 0; k < off.size(); k++) off[k] += (*strides[k])[d];
      if (idx[d] < shape[d]) return;
      for (size_t k = 0; k < off.size(); k++) off[k] -= shape[d] * (*strides[k])[d];
      idx[d] = 0;
    }
  }
};

int64_t numel_of(const Shape& s) {
  int64_t n = 1;
  for (auto v : s) n *= v;
  return n;
}

// out[p] = sum_k wrap(index_k[p]) * src_strides[k] over the broadcast index shape, with
// bounds checks. The index tensors are int64, strided (0 where broadcast).
void index_offsets(uintptr_t out, const Shape& shape, const std::vector<uintptr_t>& ptrs,
                   const std::vector<Shape>& strides, const Shape& sizes, const Shape& src_strides,
                   const Shape& dims, bool allow_negative, int style, const std::string& prefix) {
  const size_t K = ptrs.size();
  if (strides.size() != K || sizes.size() != K || src_strides.size() != K || dims.size() != K)
    fail("internal: index_offsets argument mismatch");
  for (auto& s : strides)
    if (s.size() != shape.size()) fail("internal: index_offsets rank mismatch");
  int64_t* o = ptr<int64_t>(out);
  const int64_t n = numel_of(shape);
  if (K == 1 && shape.size() == 1) {  // the common case: one 1-d index
    const int64_t* ix = ptr<const int64_t>(ptrs[0]);
    const int64_t is = strides[0][0], size = sizes[0], ss = src_strides[0];
    parallel_for(0, n, 32768, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; i++) {
        int64_t v = ix[i * is];
        if (v < 0 && allow_negative) v += size;
        if (v < 0 || v >= size) bad_index(style, prefix, ix[i * is], dims[0], size);
        o[i] = v * ss;
      }
    });
    return;
  }
  std::vector<const Shape*> st;
  for (auto& s : strides) st.push_back(&s);
  parallel_for(0, n, 16384, [&](int64_t b, int64_t e) {
    Walk w(shape, st, b);
    for (int64_t i = b; i < e; i++) {
      int64_t acc = 0;
      for (size_t k = 0; k < K; k++) {
        int64_t v = ptr<const int64_t>(ptrs[k])[w.off[k]];
        const int64_t size = sizes[k];
        if (v < 0 && allow_negative) v += size;
        if (v < 0 || v >= size) {
          int64_t raw = ptr<const int64_t>(ptrs[k])[w.off[k]];
          bad_index(style, prefix, raw, dims[k], size);
        }
        acc += v * src_strides[k];
      }
      o[i] = acc;
      w.next();
    }
  });
}

// out[p] = offset of element p of `shape` with `strides` (row-major p).
void linear_offsets(uintptr_t out, const Shape& shape, const Shape& strides) {
  int64_t* o = ptr<int64_t>(out);
  const int64_t n = numel_of(shape);
  parallel_for(0, n, 32768, [&](int64_t b, int64_t e) {
    Walk w(shape, {&strides}, b);
    for (int64_t i = b; i < e; i++) {
      o[i] = w.off[0];
      w.next();
    }
  });
}

// out[p] = offset in a strided tensor of `shape` of its element number index[p] in
// row-major order (take / put_ on any layout, no copy). Negative numbers count from the end.
void take_offsets(uintptr_t out, uintptr_t index, const Shape& ishape, const Shape& istrides,
                  const Shape& shape, const Shape& strides) {
  int64_t* o = ptr<int64_t>(out);
  const int64_t* ix = ptr<const int64_t>(index);
  const int64_t n = numel_of(ishape), total = numel_of(shape);
  const int nd = (int)shape.size();
  parallel_for(0, n, 16384, [&](int64_t b, int64_t e) {
    Walk w(ishape, {&istrides}, b);
    for (int64_t i = b; i < e; i++, w.next()) {
      const int64_t raw = ix[w.off[0]];
      int64_t v = raw < 0 ? raw + total : raw;
      if (v < 0 || v >= total) bad_index(S_TAKE, "", raw, 0, total);
      int64_t off = 0;
      for (int d = nd - 1; d >= 0; d--) {
        off += (v % shape[d]) * strides[d];
        v /= shape[d];
      }
      o[i] = off;
    }
  });
}

// Threads never split work finer than this many outer elements: neighbouring chunks would
// write to the same cache lines (false sharing makes that slower than one thread).
constexpr int64_t kMinGrain = 64;

// The runs nest.runs(b, e) visits, collected once so that a loop over them can be repeated
// (for each index position) without re-walking the nest.
template <int K>
struct RunList {
  struct Run { int64_t off[K]; int64_t n; };
  std::vector<Run> runs;
  RunList(const Nest<K>& nest, int64_t b, int64_t e) {
    nest.runs(b, e, [&](const int64_t* off, int64_t n) {
      Run r;
      for (int k = 0; k < K; k++) r.off[k] = off[k];
      r.n = n;
      runs.push_back(r);
    });
  }
};

// ---- advanced indexing through offsets ----------------------------------------------------
// X is the indexed tensor: element (o, p) is at X + xbase(o) + xoff[p]. Y is the plain
// tensor: element (o, p) at Y + ybase(o) + yoff[p]. o runs over the `outer` (non-indexed)
// dims, p over the flattened index positions.
enum Mode { GATHER = 0, PUT = 1, ACCUMULATE = 2 };

template <typename T, int MODE>
inline void index_elem(T* x, const T* yc, T* y, acc_t<T> alpha) {
  if constexpr (MODE == GATHER) {
    *y = *x;
  } else if constexpr (MODE == PUT) {
    *x = *yc;
  } else if constexpr (std::is_same<T, bool>::value) {
    *x = *x || *yc;
  } else {
    *x = T(acc_t<T>(*x) + alpha * acc_t<T>(*yc));
  }
}

template <typename T, int MODE>
void index_loop_impl(uintptr_t xp, const Shape& xs, const int64_t* xoff, uintptr_t yp,
                     const Shape& ys, const int64_t* yoff, int64_t P, const Shape& outer,
                     acc_t<T> alpha) {
  Nest<2> nest(outer, {&xs, &ys});
  const int64_t O = nest.numel;
  if (O == 0 || P == 0) return;
  T* x0 = ptr<T>(xp);
  T* y0 = ptr<T>(yp);
  const int64_t ix = nest.inner_stride(0), iy = nest.inner_stride(1);
  // p outermost: each p moves a run of the outer dims (rows of a gathered slice)
  auto by_p = [&](int64_t p, const int64_t* off, int64_t n) {
    T* x = x0 + off[0] + xoff[p];
    T* y = y0 + off[1] + yoff[p];
    if constexpr (MODE != ACCUMULATE) {
      if (ix == 1 && iy == 1) {
        if constexpr (MODE == GATHER) std::memcpy(y, x, n * sizeof(T));
        else std::memcpy(x, y, n * sizeof(T));
        return;
      }
    }
    for (int64_t i = 0; i < n; i++)
      index_elem<T, MODE>(x + i * ix, y + i * iy, y + i * iy, alpha);
  };
  // o outermost: for each outer element, loop over all p (a gather along one row)
  auto by_o = [&](int64_t pb, int64_t pe, const int64_t* off, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
      T* x = x0 + off[0] + i * ix;
      T* y = y0 + off[1] + i * iy;
      for (int64_t p = pb; p < pe; p++)
        index_elem<T, MODE>(x + xoff[p], y + yoff[p], y + yoff[p], alpha);
    }
  };
  // p outermost only when a contiguous run of the outer dims can be streamed
  const bool p_outer = nest.inner() >= 16 && (ix == 1 || iy == 1);
  const int64_t total = O * P;
  // Writes to X may collide between different p (duplicate indices): accumulate keeps all
  // p of one outer element on one thread. Gather and put split either way.
  if (MODE == ACCUMULATE || O >= P || total < 32768) {
    const int64_t grain = std::max<int64_t>(kMinGrain, 32768 / P);
    parallel_for(0, O, grain, [&](int64_t b, int64_t e) {
      if (p_outer) {
        RunList<2> rl(nest, b, e);
        for (int64_t p = 0; p < P; p++)
          for (auto& r : rl.runs) by_p(p, r.off, r.n);
      } else {
        nest.runs(b, e, [&](const int64_t* off, int64_t n) { by_o(0, P, off, n); });
      }
    });
  } else {
    const int64_t grain = std::max<int64_t>(kMinGrain, 32768 / O);
    parallel_for(0, P, grain, [&](int64_t b, int64_t e) {
      if (p_outer) {
        RunList<2> rl(nest, 0, O);
        for (int64_t p = b; p < e; p++)
          for (auto& r : rl.runs) by_p(p, r.off, r.n);
      } else {
        nest.runs(0, O, [&](const int64_t* off, int64_t n) { by_o(b, e, off, n); });
      }
    });
  }
}

template <typename T>
acc_t<T> scalar_as(double fv, int64_t iv, bool is_float) {
  if constexpr (std::is_same<T, bool>::value) return is_float ? fv != 0.0 : iv != 0;
  else if constexpr (is_float_v<T>) return is_float ? acc_t<T>(fv) : acc_t<T>((double)iv);
  else return is_float ? (T)(int64_t)fv : (T)iv;
}

// yoff == 0 means y's index positions are evenly spaced: yoff[p] = p * y_pstride.
void index_loop(int mode, int dt, uintptr_t x, const Shape& xs, uintptr_t xoff, uintptr_t y,
                const Shape& ys, uintptr_t yoff, int64_t y_pstride, int64_t P,
                const Shape& outer, double alpha_f, int64_t alpha_i, bool alpha_is_float) {
  if (xs.size() != outer.size() || ys.size() != outer.size()) fail("internal: index_loop rank");
  const int64_t* xo = ptr<const int64_t>(xoff);
  std::vector<int64_t> even;
  if (!yoff) {
    even.resize(P);
    for (int64_t p = 0; p < P; p++) even[p] = p * y_pstride;
  }
  const int64_t* yo = yoff ? ptr<const int64_t>(yoff) : even.data();
  FW_DISPATCH_ALL(dt, "index", {
    auto alpha = scalar_as<scalar_t>(alpha_f, alpha_i, alpha_is_float);
    if (mode == GATHER) index_loop_impl<scalar_t, GATHER>(x, xs, xo, y, ys, yo, P, outer, alpha);
    else if (mode == PUT) index_loop_impl<scalar_t, PUT>(x, xs, xo, y, ys, yo, P, outer, alpha);
    else index_loop_impl<scalar_t, ACCUMULATE>(x, xs, xo, y, ys, yo, P, outer, alpha);
  });
}

// ---- gather / scatter along one dim ----------------------------------------------------------

// out[e] = src[srcbase(e) + index[e] * sd] over the index shape; src strides have 0 at dim.
template <typename T, typename I>
void gather_impl(uintptr_t out, const Shape& so, uintptr_t src, const Shape& ss, uintptr_t idx,
                 const Shape& si, const Shape& shape, int64_t dim, int64_t sd, int64_t size) {
  Nest<3> nest(shape, {&so, &ss, &si});
  T* o0 = ptr<T>(out);
  const T* s0 = ptr<const T>(src);
  const I* i0 = ptr<const I>(idx);
  const int64_t io = nest.inner_stride(0), is = nest.inner_stride(1), ii = nest.inner_stride(2);
  nest.parallel([&](const int64_t* off, int64_t n) {
    T* o = o0 + off[0];
    const T* s = s0 + off[1];
    const I* ix = i0 + off[2];
    for (int64_t k = 0; k < n; k++) {
      const int64_t v = (int64_t)ix[k * ii];
      if (v < 0 || v >= size) bad_index(S_RUNTIME, "", v, dim, size);
      o[k * io] = s[k * is + v * sd];
    }
  });
}

void gather(int dt, int it, uintptr_t out, const Shape& so, uintptr_t src, const Shape& ss,
            uintptr_t idx, const Shape& si, const Shape& shape, int64_t dim, int64_t sd,
            int64_t size) {
  FW_DISPATCH_ALL(dt, "gather", {
    if (it == 5) {
      gather_impl<scalar_t, int64_t>(out, so, src, ss, idx, si, shape, dim, sd, size);
    } else if (it == 4) {
      gather_impl<scalar_t, int32_t>(out, so, src, ss, idx, si, shape, dim, sd, size);
    } else {
      fail("gather(): Expected dtype int32/int64 for index");
    }
  });
}

enum Reduce { R_ASSIGN = 0, R_ADD = 1, R_MUL = 2, R_MAX = 3, R_MIN = 4 };

template <typename T, int R>
inline void reduce_into(T& d, T s) {
  using C = acc_t<T>;
  if constexpr (R == R_ASSIGN) {
    d = s;
  } else if constexpr (std::is_same<T, bool>::value) {
    if constexpr (R == R_ADD || R == R_MAX) d = d || s;
    else d = d && s;
  } else if constexpr (R == R_ADD) {
    d = T(C(d) + C(s));
  } else if constexpr (R == R_MUL) {
    d = T(C(d) * C(s));
  } else {
    const C a = C(d), b = C(s);
    if constexpr (R == R_MAX) d = (b != b) ? s : (a < b ? s : d);
    else d = (b != b) ? s : (b < a ? s : d);
  }
}

// self[selfbase(e) + index[e] * sd] op= src[e] over the index shape. The caller puts `dim`
// last. Elements that can hit the same self element differ only along dim, so threads
// split the other dims and each walks the whole dim: no write races, any duplicates.
template <typename T, typename I, int R>
void scatter_impl(uintptr_t self, const Shape& sself, uintptr_t idx, const Shape& si,
                  uintptr_t src, const Shape& ssrc, const Shape& shape, int64_t dim, int64_t sd,
                  int64_t size) {
  if (numel_of(shape) == 0) return;
  auto init = [](const Shape& v) { return Shape(v.begin(), v.end() - 1); };
  const Shape oshape = init(shape), o0 = init(sself), o1 = init(si), o2 = init(ssrc);
  const int64_t nd = shape.back(), dd = sself.back(), di = si.back(), ds = ssrc.back();
  Nest<3> nest(oshape, {&o0, &o1, &o2});
  T* d0 = ptr<T>(self);
  const I* i0 = ptr<const I>(idx);
  const T* s0 = ptr<const T>(src);
  const int64_t id = nest.inner_stride(0), ii = nest.inner_stride(1), is = nest.inner_stride(2);
  auto elem = [&](T* d, const I* ix, const T* s) {
    const int64_t v = (int64_t)*ix;
    if (v < 0 || v >= size) bad_index(S_RUNTIME, "", v, dim, size);
    reduce_into<T, R>(d[v * sd], *s);
  };
  const bool dim_outer = nest.inner() >= 16;  // long runs of the other dims: stream them
  const int64_t grain = std::max<int64_t>(kMinGrain, 32768 / nd);
  parallel_for(0, nest.numel, grain, [&](int64_t b, int64_t e) {
    if (dim_outer) {
      RunList<3> rl(nest, b, e);
      for (int64_t i = 0; i < nd; i++)
        for (auto& r : rl.runs) {
          T* d = d0 + r.off[0] + i * dd;
          const I* ix = i0 + r.off[1] + i * di;
          const T* s = s0 + r.off[2] + i * ds;
          for (int64_t k = 0; k < r.n; k++) elem(d + k * id, ix + k * ii, s + k * is);
        }
    } else {
      nest.runs(b, e, [&](const int64_t* off, int64_t n) {
        for (int64_t k = 0; k < n; k++) {
          T* d = d0 + off[0] + k * id;
          const I* ix = i0 + off[1] + k * ii;
          const T* s = s0 + off[2] + k * is;
          for (int64_t i = 0; i < nd; i++) elem(d + i * dd, ix + i * di, s + i * ds);
        }
      });
    }
  });
}

template <typename T, typename I>
void scatter_r(int reduce, uintptr_t self, const Shape& sself, uintptr_t idx, const Shape& si,
               uintptr_t src, const Shape& ssrc, const Shape& shape, int64_t dim, int64_t sd,
               int64_t size) {
  auto run = [&](auto op) {
    constexpr int R = decltype(op)::value;
    scatter_impl<T, I, R>(self, sself, idx, si, src, ssrc, shape, dim, sd, size);
  };
  switch (reduce) {
    case R_ASSIGN: run(std::integral_constant<int, R_ASSIGN>{}); break;
    case R_ADD: run(std::integral_constant<int, R_ADD>{}); break;
    case R_MUL: run(std::integral_constant<int, R_MUL>{}); break;
    case R_MAX: run(std::integral_constant<int, R_MAX>{}); break;
    case R_MIN: run(std::integral_constant<int, R_MIN>{}); break;
    default: fail("internal: bad scatter reduce");
  }
}

// Raises for the first index value outside [0, size) (in a chunk's order). scatter runs
// it before writing anything, so that a bad index leaves self untouched.
template <typename I>
void check_range(uintptr_t idx, const Shape& si, const Shape& shape, int64_t dim,
                 int64_t size) {
  if (numel_of(shape) == 0) return;
  Nest<1> nest(shape, {&si});
  const I* i0 = ptr<const I>(idx);
  const int64_t ii = nest.inner_stride(0);
  nest.parallel([&](const int64_t* off, int64_t n) {
    const I* ix = i0 + off[0];
    for (int64_t k = 0; k < n; k++) {
      const int64_t v = (int64_t)ix[k * ii];
      if (v < 0 || v >= size) bad_index(S_RUNTIME, "", v, dim, size);
    }
  });
}

void scatter(int reduce, int dt, int it, uintptr_t self, const Shape& sself, uintptr_t idx,
             const Shape& si, uintptr_t src, const Shape& ssrc, const Shape& shape, int64_t dim,
             int64_t sd, int64_t size) {
  if (si.size() != shape.size()) fail("internal: scatter rank");
  if (it == 5) check_range<int64_t>(idx, si, shape, dim, size);
  else if (it == 4) check_range<int32_t>(idx, si, shape, dim, size);
  else fail("scatter(): Expected dtype int32/int64 for index");
  FW_DISPATCH_ALL(dt, "scatter", {
    if (it == 5) {
      scatter_r<scalar_t, int64_t>(reduce, self, sself, idx, si, src, ssrc, shape, dim, sd, size);
    } else if (it == 4) {
      scatter_r<scalar_t, int32_t>(reduce, self, sself, idx, si, src, ssrc, shape, dim, sd, size);
    } else {
      fail("scatter(): Expected dtype int32/int64 for index");
    }
  });
}

// x /= max(count, 1) elementwise (scatter_reduce mean); integers divide with floor.
void divide_count(int dt, uintptr_t x, const Shape& sx, uintptr_t cnt, const Shape& sc,
                  const Shape& shape) {
  Nest<2> nest(shape, {&sx, &sc});
  const int64_t ix = nest.inner_stride(0), ic = nest.inner_stride(1);
  const int64_t* c0 = ptr<const int64_t>(cnt);
  FW_DISPATCH_ALL(dt, "scatter_reduce_mean", {
    if constexpr (std::is_same<scalar_t, bool>::value) {
      not_implemented("scatter_gather_tensor_cpu_reduce_mean", dt);
    } else {
      scalar_t* x0 = ptr<scalar_t>(x);
      nest.parallel([&](const int64_t* off, int64_t n) {
        scalar_t* xp = x0 + off[0];
        const int64_t* cp = c0 + off[1];
        for (int64_t k = 0; k < n; k++) {
          int64_t c = cp[k * ic];
          if (c == 0) c = 1;
          if constexpr (is_float_v<scalar_t>) {
            xp[k * ix] = scalar_t(acc_t<scalar_t>(xp[k * ix]) / acc_t<scalar_t>(c));
          } else {
            int64_t a = (int64_t)xp[k * ix], q = a / c;
            if ((a % c != 0) && ((a < 0) != (c < 0))) q--;
            xp[k * ix] = (scalar_t)q;
          }
        }
      });
    }
  });
}

// ---- nonzero, masked_select -----------------------------------------------------------------

template <typename T>
inline bool nz(T v) {
  if constexpr (is_float_v<T>) return acc_t<T>(v) != acc_t<T>(0);
  else return v != T(0);
}

// The rows (all dims but the last) of a shape, split into chunks of about 32K elements.
// Compaction runs twice over the same chunks: count per chunk, then write from each
// chunk's start, so the output is in row-major order and the work is parallel.
struct Rows {
  Shape outer;
  int64_t inner = 1, rows = 1, per_chunk = 1, chunks = 0;
  explicit Rows(const Shape& shape) {
    if (!shape.empty()) {
      outer.assign(shape.begin(), shape.end() - 1);
      inner = shape.back();
      rows = numel_of(outer);
    }
    per_chunk = std::max<int64_t>(1, 32768 / std::max<int64_t>(inner, 1));
    chunks = inner == 0 ? 0 : (rows + per_chunk - 1) / per_chunk;
  }
  static Shape outer_of(const Shape& st) {
    return st.empty() ? Shape() : Shape(st.begin(), st.end() - 1);
  }
  static int64_t inner_of(const Shape& st) { return st.empty() ? 0 : st.back(); }

  // f(chunk, walk over outer dims starting at the chunk's first row, number of rows)
  template <typename F>
  void each(const std::vector<const Shape*>& ostrides, F&& f) const {
    parallel_for(0, chunks, 1, [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; c++) {
        const int64_t rb = c * per_chunk, re = std::min(rows, rb + per_chunk);
        Walk w(outer, ostrides, rb);
        f(c, w, re - rb);
      }
    });
  }
};

// counts[c + 1] = nonzeros of the mask in chunk c, then the running sum.
template <typename M>
std::vector<int64_t> chunk_counts(const Rows& R, const M* m0, const Shape& mo, int64_t mi) {
  std::vector<int64_t> counts(R.chunks + 1, 0);
  R.each({&mo}, [&](int64_t c, Walk& w, int64_t nrows) {
    int64_t cnt = 0;
    for (int64_t r = 0; r < nrows; r++, w.next()) {
      const M* m = m0 + w.off[0];
      if (mi == 1) {
        for (int64_t j = 0; j < R.inner; j++) cnt += nz(m[j]);
      } else {
        for (int64_t j = 0; j < R.inner; j++) cnt += nz(m[j * mi]);
      }
    }
    counts[c + 1] = cnt;
  });
  for (int64_t c = 0; c < R.chunks; c++) counts[c + 1] += counts[c];
  return counts;
}

// Coordinates of the nonzero elements in row-major order, written to out (n x ndim int64)
// when fill; returns n.
template <typename T>
int64_t nonzero_impl(uintptr_t x, const Shape& shape, const Shape& strides, uintptr_t out,
                     bool fill) {
  if (numel_of(shape) == 0) return 0;
  const T* x0 = ptr<const T>(x);
  if (shape.empty()) return nz(x0[0]) ? 1 : 0;
  Rows R(shape);
  const Shape xo = Rows::outer_of(strides);
  const int64_t xi = Rows::inner_of(strides);
  auto counts = chunk_counts<T>(R, x0, xo, xi);
  if (!fill) return counts[R.chunks];
  const int nd = (int)shape.size();
  int64_t* o = ptr<int64_t>(out);
  R.each({&xo}, [&](int64_t c, Walk& w, int64_t nrows) {
    int64_t* dst = o + counts[c] * nd;
    for (int64_t r = 0; r < nrows; r++, w.next()) {
      const T* xr = x0 + w.off[0];
      for (int64_t j = 0; j < R.inner; j++) {
        if (nz(xr[j * xi])) {
          for (int d = 0; d < nd - 1; d++) dst[d] = w.idx[d];
          dst[nd - 1] = j;
          dst += nd;
        }
      }
    }
  });
  return counts[R.chunks];
}

int64_t nonzero(int dt, uintptr_t x, const Shape& shape, const Shape& strides, uintptr_t out,
                bool fill) {
  int64_t r = 0;
  FW_DISPATCH_ALL(dt, "nonzero", { r = nonzero_impl<scalar_t>(x, shape, strides, out, fill); });
  return r;
}

// The number of True elements of a bool mask.
int64_t mask_count(uintptr_t mask, const Shape& shape, const Shape& strides) {
  return nonzero_impl<bool>(mask, shape, strides, 0, false);
}

// out[k] = x[e] for the k-th element e (row-major) where mask[e]; out holds n elements.
template <typename T>
void masked_select_impl(uintptr_t x, const Shape& sx, uintptr_t mask, const Shape& sm,
                        const Shape& shape, uintptr_t out) {
  if (numel_of(shape) == 0) return;
  const T* x0 = ptr<const T>(x);
  const bool* m0 = ptr<const bool>(mask);
  T* o = ptr<T>(out);
  if (shape.empty()) {
    if (m0[0]) o[0] = x0[0];
    return;
  }
  Rows R(shape);
  const Shape xo = Rows::outer_of(sx), mo = Rows::outer_of(sm);
  const int64_t xi = Rows::inner_of(sx), mi = Rows::inner_of(sm);
  auto counts = chunk_counts<bool>(R, m0, mo, mi);
  R.each({&xo, &mo}, [&](int64_t c, Walk& w, int64_t nrows) {
    T* dst = o + counts[c];
    for (int64_t r = 0; r < nrows; r++, w.next()) {
      const T* xr = x0 + w.off[0];
      const bool* mr = m0 + w.off[1];
      for (int64_t j = 0; j < R.inner; j++)
        if (mr[j * mi]) *dst++ = xr[j * xi];
    }
  });
}

void masked_select(int dt, uintptr_t x, const Shape& sx, uintptr_t mask, const Shape& sm,
                   const Shape& shape, uintptr_t out) {
  if (sx.size() != shape.size() || sm.size() != shape.size())
    fail("internal: masked_select rank");
  FW_DISPATCH_ALL(dt, "masked_select", {
    masked_select_impl<scalar_t>(x, sx, mask, sm, shape, out);
  });
}

// ---- masked_fill, tril/triu --------------------------------------------------------------------

void masked_fill(int dt, uintptr_t x, const Shape& sx, uintptr_t mask, const Shape& sm,
                 const Shape& shape, double fv, int64_t iv, bool is_float) {
  Nest<2> nest(shape, {&sx, &sm});
  const int64_t ix = nest.inner_stride(0), im = nest.inner_stride(1);
  const bool* m0 = ptr<const bool>(mask);
  FW_DISPATCH_ALL(dt, "masked_fill", {
    const scalar_t v = scalar_t(scalar_as<scalar_t>(fv, iv, is_float));
    scalar_t* x0 = ptr<scalar_t>(x);
    nest.parallel([&](const int64_t* off, int64_t n) {
      scalar_t* xp = x0 + off[0];
      const bool* mp = m0 + off[1];
      if (ix == 1 && im == 1) {  // a select the compiler can vectorize
        for (int64_t k = 0; k < n; k++) xp[k] = mp[k] ? v : xp[k];
      } else {
        for (int64_t k = 0; k < n; k++)
          if (mp[k * im]) xp[k * ix] = v;
      }
    });
  });
}

// out = src where (col - row <= k) for tril (>= k for triu), else 0. Shapes are
// [batch, rows, cols] (the caller flattens the batch dims into one when it can, or passes
// them all: `shape` is the full shape and the last two dims are the matrix).
template <typename T>
void tri_impl(uintptr_t out, const Shape& so, uintptr_t src, const Shape& ss, const Shape& shape,
              int64_t k, bool upper) {
  const int nd = (int)shape.size();
  const int64_t R = shape[nd - 2], C = shape[nd - 1];
  Shape batch(shape.begin(), shape.end() - 1);  // batch dims + rows
  Shape bo(so.begin(), so.end() - 1), bs(ss.begin(), ss.end() - 1);
  const int64_t co = so[nd - 1], cs = ss[nd - 1];
  const int64_t rows = numel_of(batch);
  if (rows == 0 || C == 0) return;
  T* o0 = ptr<T>(out);
  const T* s0 = ptr<const T>(src);
  parallel_for(0, rows, std::max<int64_t>(1, 32768 / C), [&](int64_t b, int64_t e) {
    Walk w(batch, {&bo, &bs}, b);
    for (int64_t r = b; r < e; r++) {
      const int64_t i = w.idx[nd - 2];
      T* o = o0 + w.off[0];
      const T* s = s0 + w.off[1];
      // columns kept: tril j <= i + k; triu j >= i + k
      int64_t lo = upper ? std::max<int64_t>(0, std::min(C, i + k)) : 0;
      int64_t hi = upper ? C : std::max<int64_t>(0, std::min(C, i + k + 1));
      for (int64_t j = 0; j < C; j++) {
        if (j >= lo && j < hi) {
          if (o != s || co != cs) o[j * co] = s[j * cs];
        } else {
          o[j * co] = T(0.0f);
        }
      }
      w.next();
    }
    (void)R;
  });
}

void tri(int dt, uintptr_t out, const Shape& so, uintptr_t src, const Shape& ss,
         const Shape& shape, int64_t k, bool upper) {
  if (shape.size() < 2) fail("internal: tri needs 2 dims");
  FW_DISPATCH_ALL(dt, "tril", { tri_impl<scalar_t>(out, so, src, ss, shape, k, upper); });
}

// Row and column indices of the lower (upper) triangle of a rows x cols matrix, written as
// 2 x n int64 when out != 0; returns n.
int64_t tri_indices(int64_t rows, int64_t cols, int64_t offset, bool upper, uintptr_t out) {
  auto range = [&](int64_t i, int64_t& lo, int64_t& hi) {
    if (upper) { lo = std::max<int64_t>(0, std::min(cols, i + offset)); hi = cols; }
    else { lo = 0; hi = std::max<int64_t>(0, std::min(cols, i + offset + 1)); }
  };
  int64_t n = 0, lo, hi;
  for (int64_t i = 0; i < rows; i++) {
    range(i, lo, hi);
    n += hi - lo;
  }
  if (!out) return n;
  int64_t* r = ptr<int64_t>(out);
  int64_t* c = r + n;
  for (int64_t i = 0; i < rows; i++) {
    range(i, lo, hi);
    for (int64_t j = lo; j < hi; j++) { *r++ = i; *c++ = j; }
  }
  return n;
}

}  // namespace

void register_index(py::module_& m) {
  m.def("index_offsets", &index_offsets, "element offsets of broadcast index tensors");
  m.def("linear_offsets", &linear_offsets, "element offsets of a strided shape, row-major");
  m.def("take_offsets", &take_offsets, "offsets of row-major element numbers (take, put_)");
  m.def("index_loop", &index_loop, "gather / put / accumulate through offsets");
  m.def("gather", &gather, "gather along a dim");
  m.def("scatter", &scatter, "scatter (with reduction) along a dim");
  m.def("divide_count", &divide_count, "x /= max(count, 1)");
  m.def("nonzero", &nonzero, "count (and write) nonzero coordinates");
  m.def("masked_fill", &masked_fill, "fill where mask");
  m.def("mask_count", &mask_count, "number of True elements of a bool mask");
  m.def("masked_select", &masked_select, "elements where mask, row-major");
  m.def("tri", &tri, "tril / triu");
  m.def("tri_indices", &tri_indices, "tril_indices / triu_indices");
}

}  // namespace fw
