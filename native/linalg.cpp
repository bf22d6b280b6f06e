// linalg kernels of the CPU backend: batched strided matrix multiply.
//
// matmul computes, for every batch index b,
//     out[b] = beta * out[b] + alpha * (a[b] @ bm[b])      (a: MxK, bm: KxN, out: MxN)
// where beta == 0 means out is not read (NaNs in it do not propagate), as in BLAS and
// PyTorch's addmm. float32/float64 go to OpenBLAS (sgemm/dgemm); float16/bfloat16 are
// converted to float32 and use sgemm (float accumulation, one rounding at the end, like
// PyTorch on the CPU); integer dtypes use a blocked loop with wrap-around arithmetic.
#include <cblas.h>

#include <algorithm>
#include <limits>

#include "common.h"
#include "fastcall.h"

namespace fw {
namespace {

constexpr int64_t kBlasMax = std::numeric_limits<int32_t>::max();  // blasint is 32-bit
// OpenBLAS runs a GEMM on one thread below M*N*K = 65536 * 4 (GEMM_MULTITHREAD_THRESHOLD),
// so below this size we thread over batches ourselves without oversubscribing.
constexpr int64_t kSmallGemm = 65536 * 4;

// One strided matrix: element (i, j) is at p[i * rs + j * cs].
template <typename T>
struct Mat {
  T* p;
  int64_t rs, cs;
};

// How BLAS can read a strided rows x cols matrix without a copy: row-major (unit column
// stride) or column-major (unit row stride), with its leading dimension.
struct Layout {
  bool ok = false;
  bool row_major = true;
  int64_t ld = 1;
};

Layout blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  // The stride of a size-1 dim is never used, so it may take whatever value BLAS wants.
  Layout l;
  if ((cs == 1 || cols == 1) && (rows == 1 || rs >= std::max<int64_t>(1, cols))) {
    l.ok = true;
    l.row_major = true;
    l.ld = rows == 1 ? std::max<int64_t>(1, cols) : rs;
  } else if ((rs == 1 || rows == 1) && (cols == 1 || cs >= std::max<int64_t>(1, rows))) {
    l.ok = true;
    l.row_major = false;
    l.ld = cols == 1 ? std::max<int64_t>(1, rows) : cs;
  }
  if (l.ld > kBlasMax) l.ok = false;
  return l;
}

// Copies a strided rows x cols matrix into a contiguous row-major buffer of type D.
template <typename D, typename S>
void pack(D* dst, const S* src, int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  for (int64_t i = 0; i < rows; i++) {
    const S* s = src + i * rs;
    D* d = dst + i * cols;
    if (cs == 1) {
      for (int64_t j = 0; j < cols; j++) d[j] = static_cast<D>(static_cast<acc_t<S>>(s[j]));
    } else {
      for (int64_t j = 0; j < cols; j++) d[j] = static_cast<D>(static_cast<acc_t<S>>(s[j * cs]));
    }
  }
}

inline void gemm(CBLAS_ORDER o, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m, int64_t n,
                 int64_t k, float alpha, const float* a, int64_t lda, const float* b,
                 int64_t ldb, float beta, float* c, int64_t ldc) {
  release_cores();   // OpenBLAS's threads need the cores our idle workers spin on
  scipy_cblas_sgemm(o, ta, tb, (blasint)m, (blasint)n, (blasint)k, alpha, a, (blasint)lda, b,
                    (blasint)ldb, beta, c, (blasint)ldc);
}
inline void gemm(CBLAS_ORDER o, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m, int64_t n,
                 int64_t k, double alpha, const double* a, int64_t lda, const double* b,
                 int64_t ldb, double beta, double* c, int64_t ldc) {
  release_cores();
  scipy_cblas_dgemm(o, ta, tb, (blasint)m, (blasint)n, (blasint)k, alpha, a, (blasint)lda, b,
                    (blasint)ldb, beta, c, (blasint)ldc);
}

inline void gemv(CBLAS_ORDER o, CBLAS_TRANSPOSE t, int64_t m, int64_t n, float alpha,
                 const float* a, int64_t lda, const float* x, int64_t incx, float beta, float* y,
                 int64_t incy) {
  scipy_cblas_sgemv(o, t, (blasint)m, (blasint)n, alpha, a, (blasint)lda, x, (blasint)incx,
                    beta, y, (blasint)incy);
}
inline void gemv(CBLAS_ORDER o, CBLAS_TRANSPOSE t, int64_t m, int64_t n, double alpha,
                 const double* a, int64_t lda, const double* x, int64_t incx, double beta,
                 double* y, int64_t incy) {
  scipy_cblas_dgemv(o, t, (blasint)m, (blasint)n, alpha, a, (blasint)lda, x, (blasint)incx,
                    beta, y, (blasint)incy);
}

// Scratch buffers reused across the matrices one thread computes.
template <typename T>
struct Scratch {
  std::vector<T> a, b, c;
};

// Strided vector usable with a BLAS increment (positive, 32-bit), else copied to `buf`.
template <typename T>
const T* blas_vec(const T* p, int64_t len, int64_t& inc, std::vector<T>& buf) {
  if (len == 1) inc = 1;
  if (inc >= 1 && inc <= kBlasMax) return p;
  buf.resize(len);
  for (int64_t i = 0; i < len; i++) buf[i] = p[i * inc];
  inc = 1;
  return buf.data();
}

// Makes a matrix BLAS-readable: returns its layout, packing it into `buf` if needed.
template <typename T>
Layout blas_mat(Mat<const T> x, int64_t rows, int64_t cols, const T*& p, std::vector<T>& buf) {
  Layout l = blas_layout(rows, cols, x.rs, x.cs);
  p = x.p;
  if (!l.ok) {
    buf.resize(rows * cols);
    pack(buf.data(), x.p, rows, cols, x.rs, x.cs);
    p = buf.data();
    l = Layout{true, true, std::max<int64_t>(1, cols)};
  }
  return l;
}

// c = beta * c + alpha * a @ b when m == 1 or n == 1: a matrix-vector product, for which
// gemv is several times faster than gemm.
template <typename T>
void blas_gemv(Mat<const T> a, Mat<const T> b, Mat<T> c, int64_t m, int64_t n, int64_t k,
               T alpha, T beta, Scratch<T>& s) {
  // n == 1: y(m) = A x, x the column of b;  m == 1: y(n) = B^T x, x the row of a.
  const bool col = n == 1;
  const T* mp;
  const Layout lm = col ? blas_mat(a, m, k, mp, s.a) : blas_mat(b, k, n, mp, s.a);
  int64_t incx = col ? b.rs : a.cs;
  const T* x = blas_vec(col ? b.p : a.p, k, incx, s.b);
  const int64_t len_y = col ? m : n, incy = col ? c.rs : c.cs;
  const bool direct = len_y == 1 || (incy >= 1 && incy <= kBlasMax);
  T* y = c.p;
  if (!direct) {
    s.c.resize(len_y);
    for (int64_t i = 0; i < len_y; i++) s.c[i] = c.p[i * incy];
    y = s.c.data();
  }
  const int64_t yinc = direct && len_y > 1 ? incy : 1;
  if (beta == T(0)) {  // BLAS may compute 0 * y; out must not leak NaNs it held
    for (int64_t i = 0; i < len_y; i++) y[i * yinc] = T(0);
  }
  gemv(lm.row_major ? CblasRowMajor : CblasColMajor, col ? CblasNoTrans : CblasTrans,
       col ? m : k, col ? k : n, alpha, mp, lm.ld, x, incx, beta, y, yinc);
  if (!direct) {
    for (int64_t i = 0; i < len_y; i++) c.p[i * incy] = y[i];
  }
}

// One float32/float64 GEMM through BLAS; operands BLAS cannot read in place are packed.
template <typename T>
void blas_one(Mat<const T> a, Mat<const T> b, Mat<T> c, int64_t m, int64_t n, int64_t k,
              T alpha, T beta, Scratch<T>& s) {
  if (m == 1 || n == 1) {
    blas_gemv(a, b, c, m, n, k, alpha, beta, s);
    return;
  }
  const T *ap, *bp;
  const Layout la = blas_mat(a, m, k, ap, s.a);
  const Layout lb = blas_mat(b, k, n, bp, s.b);
  Layout lc = blas_layout(m, n, c.rs, c.cs);
  T* cp = c.p;
  if (!lc.ok) {
    s.c.resize(m * n);
    if (beta != T(0)) pack(s.c.data(), c.p, m, n, c.rs, c.cs);
    cp = s.c.data();
    lc = Layout{true, true, n};
  }
  // In column-major order a row-major operand reads as its transpose, and vice versa.
  const CBLAS_ORDER order = lc.row_major ? CblasRowMajor : CblasColMajor;
  auto trans = [&](const Layout& l) {
    return l.row_major == lc.row_major ? CblasNoTrans : CblasTrans;
  };
  gemm(order, trans(la), trans(lb), m, n, k, alpha, ap, la.ld, bp, lb.ld, beta, cp, lc.ld);
  if (cp != c.p) {
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) c.p[i * c.rs + j * c.cs] = cp[i * n + j];
  }
}

// float16/bfloat16: convert to float32, multiply with BLAS, round once into the output.
struct HalfScratch {
  std::vector<float> a, b, c;
  Scratch<float> blas;
};

template <typename T>
void half_one(Mat<const T> a, Mat<const T> b, Mat<T> c, int64_t m, int64_t n, int64_t k,
              float alpha, float beta, HalfScratch& s) {
  s.a.resize(m * k);
  s.b.resize(k * n);
  s.c.resize(m * n);
  pack(s.a.data(), a.p, m, k, a.rs, a.cs);
  pack(s.b.data(), b.p, k, n, b.rs, b.cs);
  blas_one<float>(Mat<const float>{s.a.data(), k, 1}, Mat<const float>{s.b.data(), n, 1},
                  Mat<float>{s.c.data(), n, 1}, m, n, k, alpha, 0.0f, s.blas);
  for (int64_t i = 0; i < m; i++) {
    T* row = c.p + i * c.rs;
    const float* r = s.c.data() + i * n;
    if (beta == 0.0f) {
      for (int64_t j = 0; j < n; j++) row[j * c.cs] = T(r[j]);
    } else {
      for (int64_t j = 0; j < n; j++) row[j * c.cs] = T(beta * float(row[j * c.cs]) + r[j]);
    }
  }
}

// Integers: products and sums wrap around like PyTorch's (two's complement, mod 2^bits).
// Accumulating in an unsigned type as wide as T (16 bits for 8-bit types: x86 has no 8-bit
// multiply) makes the wrap well defined, and only T's low bits survive the final cast.
template <typename T>
using uacc_t = typename std::conditional<
    sizeof(T) == 8, uint64_t,
    typename std::conditional<sizeof(T) == 4, uint32_t, uint16_t>::type>::type;

// a * b + c in U's wrap-around arithmetic (uint16_t would otherwise promote to int, whose
// overflow is undefined).
template <typename U>
inline U mul_add(U a, U b, U c) {
  using W = typename std::conditional<sizeof(U) < 4, uint32_t, U>::type;
  return static_cast<U>(static_cast<W>(a) * static_cast<W>(b) + static_cast<W>(c));
}

constexpr int64_t kTileM = 32, kTileN = 256, kTileK = 256;

// Computes the out tile rows [i0, i0+mb) x cols [j0, j0+nb) of one integer GEMM.
template <typename T>
void int_tile(Mat<const T> a, Mat<const T> b, Mat<T> c, int64_t i0, int64_t mb, int64_t j0,
              int64_t nb, int64_t k, uacc_t<T> alpha, uacc_t<T> beta, std::vector<uacc_t<T>>& acc,
              std::vector<uacc_t<T>>& bp) {
  using U = uacc_t<T>;
  acc.assign(mb * nb, U(0));
  bp.resize(kTileK * nb);
  for (int64_t k0 = 0; k0 < k; k0 += kTileK) {
    const int64_t kb = std::min(kTileK, k - k0);
    for (int64_t kk = 0; kk < kb; kk++) {
      const T* src = b.p + (k0 + kk) * b.rs + j0 * b.cs;
      U* dst = bp.data() + kk * nb;
      for (int64_t j = 0; j < nb; j++) dst[j] = static_cast<U>(static_cast<int64_t>(src[j * b.cs]));
    }
    for (int64_t i = 0; i < mb; i++) {
      U* arow = acc.data() + i * nb;
      const T* asrc = a.p + (i0 + i) * a.rs + k0 * a.cs;
      for (int64_t kk = 0; kk < kb; kk++) {
        const U av = static_cast<U>(static_cast<int64_t>(asrc[kk * a.cs]));
        const U* brow = bp.data() + kk * nb;
        for (int64_t j = 0; j < nb; j++) arow[j] = mul_add(av, brow[j], arow[j]);
      }
    }
  }
  for (int64_t i = 0; i < mb; i++) {
    T* row = c.p + (i0 + i) * c.rs + j0 * c.cs;
    const U* arow = acc.data() + i * nb;
    for (int64_t j = 0; j < nb; j++) {
      U v = mul_add(alpha, arow[j], U(0));
      if (beta != U(0)) v = mul_add(beta, static_cast<U>(static_cast<int64_t>(row[j * c.cs])), v);
      row[j * c.cs] = static_cast<T>(v);
    }
  }
}

// Batch offsets: element offsets of batch `idx` for out, a, b.
struct Batch {
  Shape shape;
  Shape st[3];
  int64_t count = 1;
  void offsets(int64_t idx, int64_t off[3]) const {
    off[0] = off[1] = off[2] = 0;
    for (int d = (int)shape.size() - 1; d >= 0; d--) {
      const int64_t i = idx % shape[d];
      idx /= shape[d];
      for (int q = 0; q < 3; q++) off[q] += i * st[q][d];
    }
  }
};

template <typename T>
void matmul_float(uintptr_t out, uintptr_t a, uintptr_t b, const Batch& bt, const Shape& so,
                  const Shape& sa, const Shape& sb, int64_t m, int64_t n, int64_t k,
                  double beta, double alpha) {
  const size_t nd = bt.shape.size();
  constexpr bool is_half = !std::is_same<T, acc_t<T>>::value;
  auto run = [&](int64_t lo, int64_t hi) {
    typename std::conditional<is_half, HalfScratch, Scratch<acc_t<T>>>::type s;
    int64_t off[3];
    for (int64_t i = lo; i < hi; i++) {
      bt.offsets(i, off);
      Mat<const T> ma{ptr<const T>(a) + off[1], sa[nd], sa[nd + 1]};
      Mat<const T> mb{ptr<const T>(b) + off[2], sb[nd], sb[nd + 1]};
      Mat<T> mc{ptr<T>(out) + off[0], so[nd], so[nd + 1]};
      if constexpr (!is_half) {
        blas_one<T>(ma, mb, mc, m, n, k, T(alpha), T(beta), s);
      } else {
        half_one<T>(ma, mb, mc, m, n, k, float(alpha), float(beta), s);
      }
    }
  };
  const int64_t work = m * n * k;
  if (bt.count > 1 && work <= kSmallGemm) {
    parallel_for(0, bt.count, std::max<int64_t>(1, (1 << 16) / std::max<int64_t>(1, work)), run);
  } else {
    run(0, bt.count);  // each GEMM is big enough for OpenBLAS's own threads
  }
}

template <typename T>
void matmul_int(uintptr_t out, uintptr_t a, uintptr_t b, const Batch& bt, const Shape& so,
                const Shape& sa, const Shape& sb, int64_t m, int64_t n, int64_t k,
                double beta, double alpha) {
  using U = uacc_t<T>;
  const size_t nd = bt.shape.size();
  const U ua = static_cast<U>(static_cast<int64_t>(alpha));
  const U ub = static_cast<U>(static_cast<int64_t>(beta));
  const int64_t tm = (m + kTileM - 1) / kTileM, tn = (n + kTileN - 1) / kTileN;
  const int64_t tiles = bt.count * tm * tn;
  const int64_t tile_work = kTileM * std::min(kTileN, n) * std::max<int64_t>(1, k);
  parallel_for(0, tiles, std::max<int64_t>(1, (1 << 16) / tile_work), [&](int64_t lo, int64_t hi) {
    std::vector<U> acc, bp;
    int64_t off[3];
    for (int64_t t = lo; t < hi; t++) {
      const int64_t bi = t / (tm * tn), ti = (t / tn) % tm, tj = t % tn;
      bt.offsets(bi, off);
      Mat<const T> ma{ptr<const T>(a) + off[1], sa[nd], sa[nd + 1]};
      Mat<const T> mb{ptr<const T>(b) + off[2], sb[nd], sb[nd + 1]};
      Mat<T> mc{ptr<T>(out) + off[0], so[nd], so[nd + 1]};
      const int64_t i0 = ti * kTileM, j0 = tj * kTileN;
      int_tile<T>(ma, mb, mc, i0, std::min(kTileM, m - i0), j0, std::min(kTileN, n - j0), k, ua,
                  ub, acc, bp);
    }
  });
}

// out[...] = beta * out (beta == 0: zeros) when K == 0.
template <typename T>
void scale_out(uintptr_t out, const Batch& bt, const Shape& so, int64_t m, int64_t n, double beta) {
  const size_t nd = bt.shape.size();
  int64_t off[3];
  for (int64_t bi = 0; bi < bt.count; bi++) {
    bt.offsets(bi, off);
    T* c = ptr<T>(out) + off[0];
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        T& v = c[i * so[nd] + j * so[nd + 1]];
        if constexpr (is_float_v<T>) {
          v = beta == 0.0 ? T(0.0f) : T(static_cast<acc_t<T>>(beta) * static_cast<acc_t<T>>(v));
        } else {
          const uint64_t ub = static_cast<uint64_t>(static_cast<int64_t>(beta));
          const uint64_t uv = static_cast<uint64_t>(static_cast<int64_t>(v));
          v = beta == 0.0 ? T(0) : static_cast<T>(ub * uv);
        }
      }
  }
}

// Folds batch dims over which b is broadcast (stride 0) into the rows of a and out when
// each such dim steps exactly over the rows of both: (B, M, K) @ (K, N) becomes one
// (B*M, K) @ (K, N) GEMM, much faster than B small ones. Size-1 batch dims are dropped.
void fold_rows(Shape& batch, Shape& so, Shape& sa, Shape& sb, int64_t& m) {
  for (size_t d = batch.size(); d-- > 0;) {
    if (batch[d] != 1) continue;
    batch.erase(batch.begin() + d);
    so.erase(so.begin() + d);
    sa.erase(sa.begin() + d);
    sb.erase(sb.begin() + d);
  }
  while (!batch.empty()) {
    const size_t d = batch.size() - 1, row = d + 1;
    const bool fits = m == 1 || (sa[d] == sa[row] * m && so[d] == so[row] * m);
    if (sb[d] != 0 || !fits || m * batch[d] > kBlasMax) return;
    if (m == 1) {
      sa[row] = sa[d];
      so[row] = so[d];
    }
    m *= batch[d];
    batch.pop_back();
    so.erase(so.begin() + d);
    sa.erase(sa.begin() + d);
    sb.erase(sb.begin() + d);
  }
}

}  // namespace

// Batched strided GEMM: out[b] = beta * out[b] + alpha * a[b] @ bm[b] for every index b
// of batch_shape. Strides are in elements, batch dims first then the two matrix dims
// (len(batch_shape) + 2 each); batch strides may be 0 (broadcast) for a and bm.
void matmul(int dt, uintptr_t out, Shape so, uintptr_t a, Shape sa, uintptr_t b, Shape sb,
            Shape batch_shape, int64_t m, int64_t n, int64_t k, double beta, double alpha) {
  const size_t nd = batch_shape.size();
  if (so.size() != nd + 2 || sa.size() != nd + 2 || sb.size() != nd + 2)
    fail("matmul: expected " + std::to_string(nd + 2) + " strides per operand");
  if (m < 0 || n < 0 || k < 0) fail("matmul: negative matrix size");
  if (dt < 0 || dt > 9) fail("matmul: unknown dtype code " + std::to_string(dt));
  if (dt == 0) not_implemented("matmul", dt);
  Batch bt;
  bt.shape = batch_shape;
  for (size_t d = 0; d < nd; d++) {
    if (batch_shape[d] < 0) fail("matmul: negative batch size");
    bt.count *= batch_shape[d];
    if (batch_shape[d] > 1 && so[d] == 0) fail("matmul: output has internal overlap");
  }
  for (size_t d = 0; d < nd + 2; d++)
    if (so[d] < 0 || sa[d] < 0 || sb[d] < 0) fail("matmul: negative strides are not supported");
  if (bt.count == 0 || m == 0 || n == 0) return;
  if ((m > 1 && so[nd] == 0) || (n > 1 && so[nd + 1] == 0))
    fail("matmul: output has internal overlap");
  if (!out || (k > 0 && (!a || !b))) fail("matmul: null data pointer");
  if (std::max({m, n, k}) > kBlasMax) fail("matmul: matrix dimensions must be below 2^31");
  fold_rows(batch_shape, so, sa, sb, m);
  const size_t nb = batch_shape.size();
  bt.shape = batch_shape;
  bt.count = shape_numel(batch_shape);
  for (int q = 0; q < 3; q++) bt.st[q] = Shape((q == 0 ? so : q == 1 ? sa : sb).begin(),
                                               (q == 0 ? so : q == 1 ? sa : sb).begin() + nb);
  if (k == 0) {
    FW_DISPATCH_ALL(dt, "matmul", { scale_out<scalar_t>(out, bt, so, m, n, beta); });
    return;
  }
  switch (dt) {
    case 6: matmul_float<Half>(out, a, b, bt, so, sa, sb, m, n, k, beta, alpha); break;
    case 7: matmul_float<BFloat16>(out, a, b, bt, so, sa, sb, m, n, k, beta, alpha); break;
    case 8: matmul_float<float>(out, a, b, bt, so, sa, sb, m, n, k, beta, alpha); break;
    case 9: matmul_float<double>(out, a, b, bt, so, sa, sb, m, n, k, beta, alpha); break;
    default:
      FW_DISPATCH_INT(dt, "matmul", {
        matmul_int<scalar_t>(out, a, b, bt, so, sa, sb, m, n, k, beta, alpha);
      });
  }
}

namespace {
// matmul(dtype, out, out_strides, a, a_strides, b, b_strides, batch_shape, m, n, k, beta, alpha)
void matmul_fast(const FastArgs& x) {
  x.expect(13);
  Shape so = x.shape(2), sa = x.shape(4), sb = x.shape(6), batch = x.shape(7);
  const int64_t m = x.i(8), n = x.i(9), k = x.i(10);
  const int dt = (int)x.i(0);
  const uintptr_t out = x.ptr(1), a = x.ptr(3), b = x.ptr(5);
  const double beta = x.d(11), alpha = x.d(12);
  // every Python object is read above: none may be touched once the GIL is released
  NoGil nogil(shape_numel(batch) * m * n * std::max<int64_t>(k, 1) > (1 << 16));
  matmul(dt, out, so, a, sa, b, sb, batch, m, n, k, beta, alpha);
}
}  // namespace

void register_linalg(py::module_& m) {
  def_fast<matmul_fast>(m, "matmul",
                        "matmul(dtype, out, out_strides, a, a_strides, b, b_strides, "
                        "batch_shape, m, n, k, beta, alpha): batched strided GEMM, "
                        "out = beta*out + alpha*a@b");
  m.def("blas_num_threads", [] { return scipy_openblas_get_num_threads(); },
        "number of threads OpenBLAS uses");
  m.def("blas_set_num_threads", [](int n) {
    if (n < 1) fail("blas_set_num_threads expects a positive integer");
    scipy_openblas_set_num_threads(n);
  }, "sets the number of threads OpenBLAS uses");
}

}  // namespace fw
