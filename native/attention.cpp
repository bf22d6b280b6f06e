// Attention kernels of the CPU backend: scaled dot-product attention forward and backward
// in query/key tiles (flash attention), never holding more than a tile of the score matrix.
//
// Layout: q (Z, Hq, Lq, D), k (Z, Hkv, Lk, D), v (Z, Hkv, Lk, Dv), out/dout (Z, Hq, Lq, Dv),
// of float32 or float64 (the launcher converts 16-bit inputs to float32); query head h reads
// key/value head h / (Hq / Hkv) (grouped-query attention). The inputs q, k, v, out, dout are
// read through their 4 strides (z, h, l, d), of which d must be 1 and l at least the last
// dimension (the row stride of a GEMM operand): the heads split off a fused qkv projection
// are read in place. The results out, lse, dq, dk, dv are contiguous. lse (Z, Hq, Lq) is
// the log-sum-exp of each row's scaled, masked scores, in the compute type (+inf for a row
// with every key masked out, so that exp(s - lse) is 0 there in the backward and the row's
// output is 0).
// The mask is read element by element through 4 strides over (Z, Hq, Lq, Lk) (0 where it
// broadcasts): kind 1 is bool (true = attend), kind 2 additive of the compute type. Causal
// keeps key j for query i when j <= i (top-left aligned, as PyTorch).
//
// Dropout keeps score (zh, i, j) when Triton's uint_to_uniform_float of the first Philox
// 4x32-10 word of counter offset + (zh * Lq + i) * Lk + j (key = seed) is >= p, the same
// stream as framework/kernels/attention.py, and scales kept probabilities by 1 / (1 - p).
//
// Forward: parallel over (z, h, query block); each task walks the key blocks with an online
// softmax (running max m and sum l, rescaling the output accumulator). GEMMs of a tile go
// to OpenBLAS, sized below its threading threshold so each call stays on the calling thread.
// Backward: parallel over (z, kv head); the task owns dK, dV of its head and dQ of the query
// heads that share it, so one pass over the tiles computes all three without atomics.
#include <cblas.h>
#if defined(__AVX2__) || defined(__AVX512F__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"   // GCC 12's own avx512fintrin.h
#include <immintrin.h>
#pragma GCC diagnostic pop
#endif

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "common.h"
#include "philox.h"
#include "parallel.h"
#include "pointwise_vmath.h"

namespace fw {
namespace {

constexpr double kBlasSingle = 65536.0 * 4;   // OpenBLAS's single-thread GEMM size bound

inline void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m, int64_t n, int64_t k,
                 float alpha, const float* a, int64_t lda, const float* b, int64_t ldb,
                 float beta, float* c, int64_t ldc) {
  scipy_cblas_sgemm(CblasRowMajor, ta, tb, (blasint)m, (blasint)n, (blasint)k, alpha, a,
                    (blasint)lda, b, (blasint)ldb, beta, c, (blasint)ldc);
}
inline void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m, int64_t n, int64_t k,
                 double alpha, const double* a, int64_t lda, const double* b, int64_t ldb,
                 double beta, double* c, int64_t ldc) {
  scipy_cblas_dgemm(CblasRowMajor, ta, tb, (blasint)m, (blasint)n, (blasint)k, alpha, a,
                    (blasint)lda, b, (blasint)ldb, beta, c, (blasint)ldc);
}

inline bool keep_of(uint64_t seed, uint64_t ctr, float p) {
  int32_t x = (int32_t)philox(seed, ctr).w0;
  if (x < 0) x = ~x;
  return (float)x * 4.6566127342e-10f >= p;   // compared in float, as Triton
}

struct AttnShape {
  int64_t Z, Hq, Hkv, Lq, Lk, D, Dv;
};

// Strides (in elements) of a 4-D input over (z, h, l); its last dimension is contiguous.
struct Str {
  int64_t z = 0, h = 0, l = 0;
};

struct Mask {
  const void* p = nullptr;
  int kind = 0;                 // 0 none, 1 bool, 2 additive
  int64_t s[4] = {0, 0, 0, 0};  // strides over (Z, Hq, Lq, Lk)
};

struct Drop {
  double p = 0;
  uint64_t seed = 0, offset = 0;
};

// Tile sizes: GEMMs of BM x BN x max(D, Dv) stay below OpenBLAS's threading bound. The
// forward prefers long key blocks (fewer rescales of the output rows, per-row work amortised
// over more keys); the backward square ones (its dK/dV GEMMs reduce over BM).
inline void tiles(const AttnShape& sh, bool backward, int64_t& bm, int64_t& bn) {
  const int64_t d = std::max<int64_t>(1, std::max(sh.D, sh.Dv));
  if (backward) {
    bm = 64;
    bn = std::max<int64_t>(16, std::min<int64_t>(256, (int64_t)(kBlasSingle / (bm * d))));
  } else {
    bn = std::max<int64_t>(16, std::min<int64_t>(256, (int64_t)(kBlasSingle / (16 * d))));
    bm = std::max<int64_t>(16, std::min<int64_t>(64, (int64_t)(kBlasSingle / (bn * d))));
  }
}

constexpr int64_t kLanes = 16;   // independent partial results, so the row loops vectorize

template <typename A>
inline A row_max(const A* x, int64_t n) {
  A m = -std::numeric_limits<A>::infinity();
  for (int64_t j = 0; j < n; j++) m = x[j] > m ? x[j] : m;
  return m;
}

// GCC does not vectorize a float max reduction without -ffast-math: spelled out here.
template <>
inline float row_max<float>(const float* x, int64_t n) {
  float m = -std::numeric_limits<float>::infinity();
  int64_t j = 0;
#if defined(__AVX512F__)
  __m512 v = _mm512_set1_ps(m);
  for (; j + 16 <= n; j += 16) v = _mm512_max_ps(v, _mm512_loadu_ps(x + j));
  float t[16];   // (not _mm512_reduce_max_ps: GCC 12 warns inside its header)
  _mm512_storeu_ps(t, v);
  for (int k = 0; k < 16; k++) m = t[k] > m ? t[k] : m;
#elif defined(__AVX2__)
  __m256 v = _mm256_set1_ps(m);
  for (; j + 8 <= n; j += 8) v = _mm256_max_ps(v, _mm256_loadu_ps(x + j));
  float t[8];
  _mm256_storeu_ps(t, v);
  for (int k = 0; k < 8; k++) m = t[k] > m ? t[k] : m;
#endif
  for (; j < n; j++) m = x[j] > m ? x[j] : m;
  return m;
}

template <typename A>
inline A row_sum(const A* x, int64_t n) {
  A ls[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int64_t k = 0; k < kLanes; k++) ls[k] += x[j + k];
  for (; j < n; j++) ls[0] += x[j];
  A s = 0;
  for (int64_t k = 0; k < kLanes; k++) s += ls[k];
  return s;
}

// GCC turns the lanes above into scalar adds for float: spelled out here.
template <>
inline float row_sum<float>(const float* x, int64_t n) {
  float s = 0;
  int64_t j = 0;
#if defined(__AVX512F__)
  __m512 v = _mm512_setzero_ps();
  for (; j + 16 <= n; j += 16) v = _mm512_add_ps(v, _mm512_loadu_ps(x + j));
  float t[16];
  _mm512_storeu_ps(t, v);
  for (int k = 0; k < 16; k++) s += t[k];
#elif defined(__AVX2__)
  __m256 v = _mm256_setzero_ps();
  for (; j + 8 <= n; j += 8) v = _mm256_add_ps(v, _mm256_loadu_ps(x + j));
  float t[8];
  _mm256_storeu_ps(t, v);
  for (int k = 0; k < 8; k++) s += t[k];
#endif
  for (; j < n; j++) s += x[j];
  return s;
}

// exp(x) for x <= 0 (scores minus their running maximum or their log-sum-exp, up to
// rounding): one scaling by 2^n instead of vm::exp's two, results below 2^-126 flushed to 0
// (probabilities that small do not count next to the row's largest).
inline float exp_low(float x) {
  const bool tiny = x < -87.0f;   // also -inf
  float n;
  const float y = vm::exp_reduced(tiny ? -87.0f : x, n) * vm::pow2i((int32_t)n);
  return tiny ? 0.0f : y;
}
inline double exp_low(double x) { return vm::exp(x); }

// x[j] = exp(x[j] - ref) with ref >= every x[j]; returns the sum.
template <typename A>
inline A exp_sum(A* x, int64_t n, A ref) {
  for (int64_t j = 0; j < n; j++) x[j] = exp_low(x[j] - ref);
  return row_sum(x, n);
}

// dst (cols x rows, row stride ld) = src^T (src: rows x cols, row stride lds), in 16-row
// strips so that each inner loop writes 16 contiguous elements.
template <typename A>
void transpose(const A* src, int64_t lds, A* dst, int64_t rows, int64_t cols, int64_t ld) {
  int64_t r0 = 0;
  for (; r0 + 16 <= rows; r0 += 16)
    for (int64_t c = 0; c < cols; c++)
      for (int64_t r = 0; r < 16; r++) dst[c * ld + r0 + r] = src[(r0 + r) * lds + c];
  for (; r0 < rows; r0++)
    for (int64_t c = 0; c < cols; c++) dst[c * ld + r0] = src[r0 * lds + c];
}

// Scores of rows [i0, i0 + bm) x keys [j0, j0 + bn) (already scaled in s, row stride bn):
// applies the mask and causal rule, setting dropped positions to -inf.
template <typename A>
void mask_tile(A* s, const AttnShape& sh, const Mask& mk, bool causal, int64_t z, int64_t h,
               int64_t i0, int64_t bm, int64_t j0, int64_t bn) {
  const A ninf = -std::numeric_limits<A>::infinity();
  for (int64_t r = 0; r < bm; r++) {
    A* row = s + r * bn;
    const int64_t i = i0 + r;
    if (mk.kind) {
      const int64_t base = z * mk.s[0] + h * mk.s[1] + i * mk.s[2];
      if (mk.kind == 1) {
        const uint8_t* m = static_cast<const uint8_t*>(mk.p) + base;
        for (int64_t c = 0; c < bn; c++)
          if (!m[(j0 + c) * mk.s[3]]) row[c] = ninf;
      } else {
        const A* m = static_cast<const A*>(mk.p) + base;
        for (int64_t c = 0; c < bn; c++) row[c] += m[(j0 + c) * mk.s[3]];
      }
    }
    if (causal)
      for (int64_t c = std::max<int64_t>(0, i - j0 + 1); c < bn; c++) row[c] = ninf;
  }
}

template <typename A>
void forward(const A* q, Str sq, const A* k, Str sk, const A* v, Str sv, const Mask& mk, A* out,
             A* lse, const AttnShape& sh, A scale, bool causal, const Drop& dr) {
  int64_t BM, BN;
  tiles(sh, false, BM, BN);
  const int64_t nqb = (sh.Lq + BM - 1) / BM, group = sh.Hq / sh.Hkv;
  const int64_t ldk = sh.Lk + 16;   // not a multiple of 4 KiB: no cache-set conflicts
  const A ninf = -std::numeric_limits<A>::infinity();
  const A keep_scale = dr.p > 0 ? A(1) / (A(1) - A(dr.p)) : A(1);
  parallel_for(0, sh.Z * sh.Hq * nqb, 1, [&](int64_t b, int64_t e) {
    std::vector<A> s(BM * BN), o(BM * sh.Dv), m(BM), l(BM), kt(sh.D * ldk);
    int64_t kt_head = -1;   // the key head held transposed in kt (tasks run head by head)
    for (int64_t t = b; t < e; t++) {
      const int64_t zh = t / nqb, i0 = (t % nqb) * BM, z = zh / sh.Hq, h = zh % sh.Hq;
      const int64_t bm = std::min(BM, sh.Lq - i0);
      const int64_t hk = h / group, zk = z * sh.Hkv + hk;
      const A* qt = q + z * sq.z + h * sq.h + i0 * sq.l;
      const A* kh = k + z * sk.z + hk * sk.h;
      const A* vh = v + z * sv.z + hk * sv.h;
      if (kt_head != zk) {   // K^T, so that the score GEMMs are NN (no packing per call)
        transpose(kh, sk.l, kt.data(), sh.Lk, sh.D, ldk);
        kt_head = zk;
      }
      std::fill(o.begin(), o.end(), A(0));
      std::fill(m.begin(), m.end(), ninf);
      std::fill(l.begin(), l.end(), A(0));
      const int64_t kend = causal ? std::min(sh.Lk, i0 + bm) : sh.Lk;
      for (int64_t j0 = 0; j0 < kend; j0 += BN) {
        const int64_t bn = std::min(BN, kend - j0);
        // beta = 1 over zeros: OpenBLAS takes its small-matrix kernel only then
        std::fill(s.begin(), s.begin() + bm * bn, A(0));
        gemm(CblasNoTrans, CblasNoTrans, bm, bn, sh.D, scale, qt, sq.l, kt.data() + j0, ldk,
             A(1), s.data(), bn);
        mask_tile(s.data(), sh, mk, causal, z, h, i0, bm, j0, bn);
        for (int64_t r = 0; r < bm; r++) {
          A* row = s.data() + r * bn;
          const A mx = std::max(m[r], row_max(row, bn));
          const A ref = mx == ninf ? A(0) : mx;   // exp(-inf - 0) = 0 for a masked prefix
          const A alpha = vm::exp(m[r] - ref);
          const A sum = exp_sum(row, bn, ref);
          if (dr.p > 0) {
            const uint64_t ctr = dr.offset + (uint64_t)((zh * sh.Lq + i0 + r) * sh.Lk + j0);
            for (int64_t c = 0; c < bn; c++)
              row[c] = keep_of(dr.seed, ctr + c, (float)dr.p) ? row[c] * keep_scale : A(0);
          }
          l[r] = l[r] * alpha + sum;
          m[r] = mx;
          if (alpha != A(1)) {
            A* orow = o.data() + r * sh.Dv;
            for (int64_t c = 0; c < sh.Dv; c++) orow[c] *= alpha;
          }
        }
        gemm(CblasNoTrans, CblasNoTrans, bm, sh.Dv, bn, A(1), s.data(), bn,
             vh + j0 * sv.l, sv.l, A(1), o.data(), sh.Dv);
      }
      A* ot = out + (zh * sh.Lq + i0) * sh.Dv;
      A* lt = lse + zh * sh.Lq + i0;
      for (int64_t r = 0; r < bm; r++) {
        const A inv = l[r] > 0 ? A(1) / l[r] : A(0);
        for (int64_t c = 0; c < sh.Dv; c++) ot[r * sh.Dv + c] = o[r * sh.Dv + c] * inv;
        lt[r] = l[r] > 0 ? m[r] + std::log(l[r]) : std::numeric_limits<A>::infinity();
      }
    }
  });
}

template <typename A>
void backward(const A* q, Str sq, const A* k, Str sk, const A* v, Str sv, const Mask& mk,
              const A* out, Str so, const A* lse, const A* dout, Str sd, A* dq, A* dk, A* dv,
              const AttnShape& sh, A scale, bool causal, const Drop& dr) {
  int64_t BM, BN;
  tiles(sh, true, BM, BN);
  const int64_t group = sh.Hq / sh.Hkv;
  const int64_t ldk = sh.Lk + 16;   // not a multiple of 4 KiB: no cache-set conflicts
  const A keep_scale = dr.p > 0 ? A(1) / (A(1) - A(dr.p)) : A(1);
  parallel_for(0, sh.Z * sh.Hkv, 1, [&](int64_t b, int64_t e) {
    std::vector<A> p(BM * BN), dp(BM * BN), delta(group * sh.Lq), kt(sh.D * ldk),
        vt(sh.Dv * ldk);
    for (int64_t zk = b; zk < e; zk++) {
      const int64_t z = zk / sh.Hkv, hk = zk % sh.Hkv;
      const A* kh = k + z * sk.z + hk * sk.h;
      const A* vh = v + z * sv.z + hk * sv.h;
      // K^T, V^T: NN GEMMs below (OpenBLAS's small path)
      transpose(kh, sk.l, kt.data(), sh.Lk, sh.D, ldk);
      transpose(vh, sv.l, vt.data(), sh.Lk, sh.Dv, ldk);
      A* dkh = dk + zk * sh.Lk * sh.D;
      A* dvh = dv + zk * sh.Lk * sh.Dv;
      std::fill(dkh, dkh + sh.Lk * sh.D, A(0));
      std::fill(dvh, dvh + sh.Lk * sh.Dv, A(0));
      for (int64_t g = 0; g < group; g++) {
        const int64_t h = hk * group + g, zh = z * sh.Hq + h;
        std::fill(dq + zh * sh.Lq * sh.D, dq + (zh + 1) * sh.Lq * sh.D, A(0));
        for (int64_t i = 0; i < sh.Lq; i++) {   // delta = rowsum(dO * O)
          const A* o = out + z * so.z + h * so.h + i * so.l;
          const A* d = dout + z * sd.z + h * sd.h + i * sd.l;
          A acc = 0;
          for (int64_t c = 0; c < sh.Dv; c++) acc += o[c] * d[c];
          delta[g * sh.Lq + i] = acc;
        }
      }
      for (int64_t j0 = 0; j0 < sh.Lk; j0 += BN) {
        const int64_t bn = std::min(BN, sh.Lk - j0);
        for (int64_t g = 0; g < group; g++) {
          const int64_t h = hk * group + g, zh = z * sh.Hq + h;
          // causal: rows i < j0 see none of these keys
          for (int64_t i0 = causal ? j0 / BM * BM : 0; i0 < sh.Lq; i0 += BM) {
            const int64_t bm = std::min(BM, sh.Lq - i0);
            const A* qt = q + z * sq.z + h * sq.h + i0 * sq.l;
            const A* dot = dout + z * sd.z + h * sd.h + i0 * sd.l;
            std::fill(p.begin(), p.begin() + bm * bn, A(0));
            std::fill(dp.begin(), dp.begin() + bm * bn, A(0));
            gemm(CblasNoTrans, CblasNoTrans, bm, bn, sh.D, scale, qt, sq.l, kt.data() + j0,
                 ldk, A(1), p.data(), bn);
            mask_tile(p.data(), sh, mk, causal, z, h, i0, bm, j0, bn);
            // dPd = dO V^T (the gradient of the dropped probabilities)
            gemm(CblasNoTrans, CblasNoTrans, bm, bn, sh.Dv, A(1), dot, sd.l, vt.data() + j0,
                 ldk, A(1), dp.data(), bn);
            for (int64_t r = 0; r < bm; r++) {
              A* pr = p.data() + r * bn;
              A* dr_ = dp.data() + r * bn;
              const A ls = lse[zh * sh.Lq + i0 + r];
              const A dl = delta[g * sh.Lq + i0 + r];
              for (int64_t c = 0; c < bn; c++) pr[c] = exp_low(pr[c] - ls);
              if (dr.p > 0) {
                const uint64_t ctr = dr.offset + (uint64_t)((zh * sh.Lq + i0 + r) * sh.Lk + j0);
                for (int64_t c = 0; c < bn; c++) {
                  const A f = keep_of(dr.seed, ctr + c, (float)dr.p) ? keep_scale : A(0);
                  const A ds = pr[c] * (dr_[c] * f - dl);
                  pr[c] *= f;      // dropped P for dV
                  dr_[c] = ds;
                }
              } else {
                for (int64_t c = 0; c < bn; c++) dr_[c] = pr[c] * (dr_[c] - dl);
              }
            }
            // dV += Pd^T dO, dK += scale dS^T Q, dQ += scale dS K
            gemm(CblasTrans, CblasNoTrans, bn, sh.Dv, bm, A(1), p.data(), bn, dot, sd.l,
                 A(1), dvh + j0 * sh.Dv, sh.Dv);
            gemm(CblasTrans, CblasNoTrans, bn, sh.D, bm, scale, dp.data(), bn, qt, sq.l,
                 A(1), dkh + j0 * sh.D, sh.D);
            gemm(CblasNoTrans, CblasNoTrans, bm, sh.D, bn, scale, dp.data(), bn,
                 kh + j0 * sk.l, sk.l, A(1), dq + (zh * sh.Lq + i0) * sh.D, sh.D);
          }
        }
      }
    }
  });
}

Mask mask_of(uintptr_t p, int kind, const std::vector<int64_t>& s) {
  Mask mk;
  mk.p = reinterpret_cast<const void*>(p);
  mk.kind = p ? kind : 0;
  if (mk.kind && s.size() != 4) fail("sdpa: mask strides must have 4 entries");
  for (size_t i = 0; i < s.size() && i < 4; i++) mk.s[i] = s[i];
  return mk;
}

// The (z, h, l) strides of an input of `rows` x `cols` matrices, given its 4 strides: the
// last must be 1 and the row stride at least `cols` (a GEMM's leading dimension), either
// of no account where that dimension has a single element.
Str strides_of(const std::vector<int64_t>& s, int64_t rows, int64_t cols, const char* name) {
  if (s.size() != 4) fail(std::string("sdpa: ") + name + " strides must have 4 entries");
  Str st{s[0], s[1], rows <= 1 ? cols : s[2]};
  if ((cols > 1 && s[3] != 1) || st.l < cols)
    fail(std::string("sdpa: ") + name + " must have a contiguous last dimension and rows " +
         "that do not overlap");
  return st;
}

void check_shape(const AttnShape& sh) {
  if (sh.Z < 0 || sh.Hq < 1 || sh.Hkv < 1 || sh.Hq % sh.Hkv || sh.Lq < 0 || sh.Lk < 0 ||
      sh.D < 1 || sh.Dv < 1)
    fail("sdpa: bad shape");
}

}  // namespace

void register_attention(py::module_& m) {
  // out, lse = attention(q, k, v); see the header comment for layouts
  m.def("sdpa_forward", [](int dt, uintptr_t q, std::vector<int64_t> qs, uintptr_t k,
                           std::vector<int64_t> ks, uintptr_t v, std::vector<int64_t> vs,
                           uintptr_t mask, int mask_kind, std::vector<int64_t> ms, uintptr_t out,
                           uintptr_t lse, std::vector<int64_t> shape, double scale, bool causal,
                           double p, uint64_t seed, uint64_t offset) {
    AttnShape sh{shape.at(0), shape.at(1), shape.at(2), shape.at(3), shape.at(4), shape.at(5),
             shape.at(6)};
    check_shape(sh);
    const Str sq = strides_of(qs, sh.Lq, sh.D, "query"), sk = strides_of(ks, sh.Lk, sh.D, "key"),
              sv = strides_of(vs, sh.Lk, sh.Dv, "value");
    const Mask mk = mask_of(mask, mask_kind, ms);
    const Drop dr{p, seed, offset};
    py::gil_scoped_release nogil;
    if (dt == 8)
      forward<float>(ptr<const float>(q), sq, ptr<const float>(k), sk, ptr<const float>(v), sv,
                     mk, ptr<float>(out), ptr<float>(lse), sh, (float)scale, causal, dr);
    else if (dt == 9)
      forward<double>(ptr<const double>(q), sq, ptr<const double>(k), sk, ptr<const double>(v),
                      sv, mk, ptr<double>(out), ptr<double>(lse), sh, scale, causal, dr);
    else
      not_implemented("scaled_dot_product_attention", dt);
  });
  // dq, dk, dv of attention given dout, out and lse of its forward
  m.def("sdpa_backward", [](int dt, uintptr_t q, std::vector<int64_t> qs, uintptr_t k,
                            std::vector<int64_t> ks, uintptr_t v, std::vector<int64_t> vs,
                            uintptr_t mask, int mask_kind, std::vector<int64_t> ms, uintptr_t out,
                            std::vector<int64_t> os, uintptr_t lse, uintptr_t dout,
                            std::vector<int64_t> dos, uintptr_t dq, uintptr_t dk, uintptr_t dv,
                            std::vector<int64_t> shape, double scale, bool causal, double p,
                            uint64_t seed, uint64_t offset) {
    AttnShape sh{shape.at(0), shape.at(1), shape.at(2), shape.at(3), shape.at(4), shape.at(5),
             shape.at(6)};
    check_shape(sh);
    const Str sq = strides_of(qs, sh.Lq, sh.D, "query"), sk = strides_of(ks, sh.Lk, sh.D, "key"),
              sv = strides_of(vs, sh.Lk, sh.Dv, "value"),
              so = strides_of(os, sh.Lq, sh.Dv, "output"),
              sd = strides_of(dos, sh.Lq, sh.Dv, "grad_output");
    const Mask mk = mask_of(mask, mask_kind, ms);
    const Drop dr{p, seed, offset};
    py::gil_scoped_release nogil;
    if (dt == 8)
      backward<float>(ptr<const float>(q), sq, ptr<const float>(k), sk, ptr<const float>(v), sv,
                      mk, ptr<const float>(out), so, ptr<const float>(lse),
                      ptr<const float>(dout), sd, ptr<float>(dq), ptr<float>(dk),
                      ptr<float>(dv), sh, (float)scale, causal, dr);
    else if (dt == 9)
      backward<double>(ptr<const double>(q), sq, ptr<const double>(k), sk,
                       ptr<const double>(v), sv, mk, ptr<const double>(out), so,
                       ptr<const double>(lse), ptr<const double>(dout), sd, ptr<double>(dq),
                       ptr<double>(dk), ptr<double>(dv), sh, scale, causal, dr);
    else
      not_implemented("scaled_dot_product_attention_backward", dt);
  });
  // keep[zh, i, j] (bool, contiguous n = ZH * Lq * Lk) of the dropout stream
  m.def("sdpa_dropout_mask", [](uintptr_t keep, int64_t n, double p, uint64_t seed,
                                uint64_t offset) {
    py::gil_scoped_release nogil;
    bool* out = ptr<bool>(keep);
    parallel_for(0, n, 4096, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; i++) out[i] = keep_of(seed, offset + (uint64_t)i, (float)p);
    });
  });
}

}  // namespace fw
