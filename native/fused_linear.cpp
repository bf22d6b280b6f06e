// fused_linear kernels of the CPU backend: linear with bias and activation.
//
// fused_linear computes out = act(a @ w^T + bias) for a (M, K), w (N, K) with any
// (non-negative) strides, bias (N) with any stride or none, into a contiguous row-major
// out (M, N), and, when asked, the pre-activation a @ w^T + bias into a contiguous pre.
// The product is the linalg family's GEMM (OpenBLAS); the bias and the activation are then
// one threaded pass over the rows. float32/float64 multiply into out (or pre) and the pass
// works there in place; float16/bfloat16 are widened to float32, multiplied into a float32
// buffer, and the pass rounds each value once into pre and once into out (as the cuda
// kernel's epilogue, which works on the float32 accumulator).
// Activations (the same formulas as the pointwise kernels' relu, gelu, gelu tanh and silu):
// 0 none, 1 relu, 2 gelu (erf), 3 gelu (tanh approximation), 4 silu.
#include <algorithm>

#include "common.h"
#include "pointwise_vmath.h"

namespace fw {

// The batched strided GEMM of native/linalg.cpp.
void matmul(int dt, uintptr_t out, Shape so, uintptr_t a, Shape sa, uintptr_t b, Shape sb,
            Shape batch_shape, int64_t m, int64_t n, int64_t k, double beta, double alpha);

namespace {

enum Act { kNone = 0, kRelu = 1, kGelu = 2, kGeluTanh = 3, kSilu = 4 };

// act(x) in the compute type C (float or double); branch-free, so the row loops vectorize.
template <int A, typename C>
FW_VM_INLINE C activate(C x) {
  if constexpr (A == kRelu) {
    return x < C(0) ? C(0) : x;  // NaN stays NaN
  } else if constexpr (A == kGelu) {
    return C(0.5) * x * (C(1) + vm::erf(x * C(M_SQRT1_2)));
  } else if constexpr (A == kGeluTanh) {
    const C inner = C(0.7978845608028654) * (x + C(0.044715) * x * x * x);
    return C(0.5) * x * (C(1) + vm::tanh(inner));
  } else if constexpr (A == kSilu) {
    return x / (C(1) + vm::exp(-x));
  } else {
    return x;
  }
}

// float32/float64, no pre: out = act(out + bias) in place. Each piece of a row is copied
// to a buffer first: computing from it measured 1.7x faster than reading and writing the
// same addresses in one vectorized loop (gelu over 4096 x 4096 floats, 23 vs 39 ms).
template <int A, bool BIAS, typename T>
void pass_inplace(T* out, const T* __restrict bias, int64_t lo, int64_t hi, int64_t n) {
  constexpr int64_t kPiece = 512;
  alignas(64) T buf[kPiece];
  for (int64_t i = lo; i < hi; i++) {
    for (int64_t j0 = 0; j0 < n; j0 += kPiece) {
      const int64_t len = std::min(kPiece, n - j0);
      T* __restrict o = out + i * n + j0;
      std::memcpy(buf, o, len * sizeof(T));
      for (int64_t j = 0; j < len; j++) {
        T v = buf[j];
        if constexpr (BIAS) v += bias[j0 + j];
        o[j] = activate<A>(v);
      }
    }
  }
}

// float32/float64 with pre (holding the product): pre += bias, out = act(pre).
template <int A, bool BIAS, typename T>
void pass_pre(T* __restrict out, T* __restrict pre, const T* __restrict bias, int64_t lo,
              int64_t hi, int64_t n) {
  for (int64_t i = lo; i < hi; i++) {
    T* o = out + i * n;
    T* p = pre + i * n;
    for (int64_t j = 0; j < n; j++) {
      T v = p[j];
      if constexpr (BIAS) v += bias[j];
      p[j] = v;
      o[j] = activate<A>(v);
    }
  }
}

// float16/bfloat16: the float32 product ws, rounded once into pre (when given) and out.
template <int A, bool BIAS, typename T>
void pass_half(const float* __restrict ws, T* __restrict out, T* __restrict pre,
               const float* __restrict bias, int64_t lo, int64_t hi, int64_t n) {
  for (int64_t i = lo; i < hi; i++) {
    const float* s = ws + i * n;
    T* o = out + i * n;
    for (int64_t j = 0; j < n; j++) {
      float v = s[j];
      if constexpr (BIAS) v += bias[j];
      if (pre) pre[i * n + j] = T(v);
      o[j] = T(activate<A>(v));
    }
  }
}

// Calls f(std::integral_constant<int, A>) for the activation code.
template <typename F>
void with_act(int act, F&& f) {
  switch (act) {
    case kNone: f(std::integral_constant<int, kNone>()); break;
    case kRelu: f(std::integral_constant<int, kRelu>()); break;
    case kGelu: f(std::integral_constant<int, kGelu>()); break;
    case kGeluTanh: f(std::integral_constant<int, kGeluTanh>()); break;
    case kSilu: f(std::integral_constant<int, kSilu>()); break;
    default: fail("fused_linear: unknown activation code " + std::to_string(act));
  }
}

// Rows per task: about 16K elements of out, so small outputs stay on one thread.
inline int64_t row_grain(int64_t n) {
  return std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, n));
}

// A strided rows x cols matrix of T as a contiguous row-major float32 one (threaded).
template <typename T>
void widen(std::vector<float>& dst, const T* src, int64_t rows, int64_t cols, int64_t rs,
           int64_t cs) {
  dst.resize(rows * cols);
  float* d = dst.data();
  parallel_for(0, rows, row_grain(cols), [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; i++)
      for (int64_t j = 0; j < cols; j++) d[i * cols + j] = float(src[i * rs + j * cs]);
  });
}

template <typename T>
void fused_linear_impl(uintptr_t out, uintptr_t pre, uintptr_t a, int64_t sam, int64_t sak,
                       uintptr_t w, int64_t swn, int64_t swk, uintptr_t bias, int64_t sb,
                       int64_t m, int64_t n, int64_t k, int act, int dt) {
  using C = acc_t<T>;
  constexpr bool is_half = !std::is_same<T, C>::value;
  // the bias as a contiguous vector of the compute type (strided or 16-bit ones widened)
  std::vector<C> bvec;
  if (bias) {
    bvec.resize(n);
    const T* bp = ptr<const T>(bias);
    for (int64_t j = 0; j < n; j++) bvec[j] = C(bp[j * sb]);
  }
  const C* bv = bias ? bvec.data() : nullptr;
  T* o = ptr<T>(out);
  T* p = pre ? ptr<T>(pre) : nullptr;
  const int64_t grain = row_grain(n);
  if constexpr (!is_half) {
    // w^T is the (K, N) operand: element (kk, j) at w + kk * swk + j * swn
    const uintptr_t dst = pre ? pre : out;
    matmul(dt, dst, {n, 1}, a, {sam, sak}, w, {swk, swn}, {}, m, n, k, 0.0, 1.0);
    with_act(act, [&](auto A) {
      parallel_for(0, m, grain, [&](int64_t lo, int64_t hi) {
        if (p) {
          if (bv) pass_pre<decltype(A)::value, true>(o, p, bv, lo, hi, n);
          else pass_pre<decltype(A)::value, false>(o, p, bv, lo, hi, n);
        } else {
          if (bv) pass_inplace<decltype(A)::value, true>(o, bv, lo, hi, n);
          else pass_inplace<decltype(A)::value, false>(o, bv, lo, hi, n);
        }
      });
    });
  } else {
    std::vector<float> af, wf, ws(m * n);
    widen(af, ptr<const T>(a), m, k, sam, sak);
    widen(wf, ptr<const T>(w), n, k, swn, swk);
    // wf is (N, K) row-major: as the (K, N) operand its strides are (1, K)
    matmul(8, (uintptr_t)ws.data(), {n, 1}, (uintptr_t)af.data(), {k, 1},
           (uintptr_t)wf.data(), {1, k}, {}, m, n, k, 0.0, 1.0);
    const float* s = ws.data();
    with_act(act, [&](auto A) {
      parallel_for(0, m, grain, [&](int64_t lo, int64_t hi) {
        if (bv) pass_half<decltype(A)::value, true>(s, o, p, bv, lo, hi, n);
        else pass_half<decltype(A)::value, false>(s, o, p, bv, lo, hi, n);
      });
    });
  }
}

void fused_linear(int dt, uintptr_t out, uintptr_t pre, uintptr_t a, int64_t sam, int64_t sak,
                  uintptr_t w, int64_t swn, int64_t swk, uintptr_t bias, int64_t sb, int64_t m,
                  int64_t n, int64_t k, int act) {
  if (m < 0 || n < 0 || k < 0) fail("fused_linear: negative size");
  if (std::min({sam, sak, swn, swk, sb}) < 0)
    fail("fused_linear: negative strides are not supported");
  if (act < kNone || act > kSilu)
    fail("fused_linear: unknown activation code " + std::to_string(act));
  if (m == 0 || n == 0) return;
  if (!out || (k > 0 && (!a || !w))) fail("fused_linear: null data pointer");
  FW_DISPATCH_FLOAT(dt, "fused_linear", {
    fused_linear_impl<scalar_t>(out, pre, a, sam, sak, w, swn, swk, bias, sb, m, n, k, act, dt);
  });
}

}  // namespace

void register_fused_linear(py::module_& m) {
  m.def("fused_linear",
        [](int dt, uintptr_t out, uintptr_t pre, uintptr_t a, int64_t sam, int64_t sak,
           uintptr_t w, int64_t swn, int64_t swk, uintptr_t bias, int64_t sb, int64_t m,
           int64_t n, int64_t k, int act) {
          py::gil_scoped_release nogil;
          fused_linear(dt, out, pre, a, sam, sak, w, swn, swk, bias, sb, m, n, k, act);
        },
        "fused_linear(dtype, out, pre, a, sam, sak, w, swn, swk, bias, sb, m, n, k, act): "
        "out = act(a @ w^T + bias), pre = a @ w^T + bias when pre != 0 (out and pre "
        "contiguous (m, n); pre, bias: 0 when absent)");
}

}  // namespace fw
