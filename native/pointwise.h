// Shared pieces of the pointwise kernel family: the strided loops for one, two and three
// operands, the per-op dtype dispatch and the kernel registries.
//
// An op is a small functor: `template <typename T> using out_t` (the result element type
// for input element type T) and `static apply(C x..., const Params&)` on the compute type
// C = acc_t<T> (16-bit floats compute in float). The Python layer has already broadcast
// the operands (stride 0), promoted them to the compute dtype and allocated the output.
#pragma once

#include "common.h"

// GCC 12's AVX-512 headers trip -Wmaybe-uninitialized (_mm512_undefined_*): not our code
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <algorithm>
#include <limits>
#include <type_traits>

namespace fw {
namespace pw {

struct Params { double p0, p1, p2; };

// Op functors are always inlined into the loops: a call would stop the vectorizer.
#define FW_PW_INLINE inline __attribute__((always_inline))

// Masks of supported dtypes, one bit per dtype code.
enum : unsigned {
  M_BOOL = 1u, M_INT = 0x3Eu, M_F16 = 0xC0u, M_FLOAT = 0x3C0u,
  M_NUM = M_INT | M_FLOAT, M_ALL = 0x3FFu, M_INT_BOOL = M_INT | M_BOOL,
};

// PyTorch raises NotImplementedError (a RuntimeError subclass) naming its kernel.
[[noreturn]] void not_implemented_as(const char* kernel, int dtype);

template <typename T> using same_t = T;
template <typename T> using bool_t = bool;

template <typename R, typename C> inline R to_out(C v) {
  if constexpr (std::is_same<R, bool>::value) return v != C(0);
  else return R(v);
}

// Calls f(T{}) for the C++ type T of dtype `dt` if MASK allows it, else raises.
template <unsigned MASK, typename F>
void dispatch(int dt, const char* kernel, F&& f) {
#define FW_PW_CASE(code, T) \
  case code: if constexpr ((MASK >> code) & 1u) { f(T{}); return; } break;
  switch (dt) {
    FW_PW_CASE(0, bool)
    FW_PW_CASE(1, uint8_t)
    FW_PW_CASE(2, int8_t)
    FW_PW_CASE(3, int16_t)
    FW_PW_CASE(4, int32_t)
    FW_PW_CASE(5, int64_t)
    FW_PW_CASE(6, Half)
    FW_PW_CASE(7, BFloat16)
    FW_PW_CASE(8, float)
    FW_PW_CASE(9, double)
    default: break;
  }
#undef FW_PW_CASE
  not_implemented_as(kernel, dt);
}

// Ops whose fast vector formula is only valid on part of the domain (sin, cos for huge
// arguments) define `fixup(x)`: true where the scalar `exact(x)` must be used instead, and
// `fixup_bits`: the largest float32 |x| bit pattern the vector formula handles.
template <typename Op, typename = void> struct HasFixup : std::false_type {};
template <typename Op>
struct HasFixup<Op, std::void_t<decltype(Op::fixup(0.0f))>> : std::true_type {};

// ---- float16 blocks ---------------------------------------------------------------------
// Half's portable conversion (common.h) has branches, so contiguous float16 loops convert
// blocks with the F16C/AVX-512 instructions instead and compute the block in float.

constexpr int64_t kHalfBlock = 512;

inline void half_to_float(const Half* src, float* dst, int64_t n) {
  int64_t j = 0;
#if defined(__AVX512F__)
  for (; j + 16 <= n; j += 16)
    _mm512_storeu_ps(dst + j, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)(src + j))));
#elif defined(__F16C__)
  for (; j + 8 <= n; j += 8)
    _mm256_storeu_ps(dst + j, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(src + j))));
#endif
  for (; j < n; j++) dst[j] = float(src[j]);
}

inline void float_to_half(const float* src, Half* dst, int64_t n) {
  int64_t j = 0;
#if defined(__AVX512F__)
  for (; j + 16 <= n; j += 16)
    _mm256_storeu_si256((__m256i*)(dst + j),
                        _mm512_cvtps_ph(_mm512_loadu_ps(src + j), _MM_FROUND_TO_NEAREST_INT));
#elif defined(__F16C__)
  for (; j + 8 <= n; j += 8)
    _mm_storeu_si128((__m128i*)(dst + j),
                     _mm256_cvtps_ph(_mm256_loadu_ps(src + j), _MM_FROUND_TO_NEAREST_INT));
#endif
  for (; j < n; j++) dst[j] = Half(src[j]);
}

// ---- loops ----------------------------------------------------------------------------

template <typename Op, typename T>
void unary_loop(uintptr_t out, uintptr_t x, const Shape& shape, const Shape& so,
                const Shape& sx, const Params& p) {
  using R = typename Op::template out_t<T>;
  using C = acc_t<T>;
  Nest<2> nest(shape, {&so, &sx}, true);
  const int64_t io = nest.inner_stride(0), ix = nest.inner_stride(1);
  R* o0 = ptr<R>(out);
  const T* x0 = ptr<T>(x);
  nest.parallel([&](const int64_t* off, int64_t n) {
    R* o = o0 + off[0];
    const T* a = x0 + off[1];
    if (io == 1 && ix == 1) {
      if constexpr (HasFixup<Op>::value && std::is_same<T, float>::value) {
        // blocks that stay in cache: vector pass, then an integer max over |x| bits (which
        // vectorizes, NaN included) tells whether any element needs the scalar function
        const int32_t limit = Op::fixup_bits;
        for (int64_t b = 0; b < n; b += 4096) {
          const int64_t e = std::min(n, b + 4096);
          for (int64_t i = b; i < e; i++) o[i] = to_out<R>(Op::apply(C(a[i]), p));
          int32_t m = 0;
          for (int64_t i = b; i < e; i++) {
            int32_t bits;
            std::memcpy(&bits, &a[i], 4);
            bits &= 0x7fffffff;
            m = bits > m ? bits : m;
          }
          if (m > limit)
            for (int64_t i = b; i < e; i++)
              if (Op::fixup(a[i])) o[i] = to_out<R>(Op::exact(C(a[i])));
        }
      } else if constexpr (std::is_same<T, Half>::value && std::is_same<R, Half>::value) {
        float xa[kHalfBlock], xo[kHalfBlock];
        for (int64_t b = 0; b < n; b += kHalfBlock) {
          const int64_t len = std::min(kHalfBlock, n - b);
          half_to_float(a + b, xa, len);
          for (int64_t i = 0; i < len; i++) xo[i] = Op::apply(xa[i], p);
          if constexpr (HasFixup<Op>::value)
            for (int64_t i = 0; i < len; i++)
              if (Op::fixup(xa[i])) xo[i] = Op::exact(xa[i]);
          float_to_half(xo, o + b, len);
        }
      } else if constexpr (HasFixup<Op>::value) {  // 16-bit floats: element by element
        for (int64_t i = 0; i < n; i++) {
          const C v = C(a[i]);
          o[i] = to_out<R>(Op::fixup(v) ? Op::exact(v) : Op::apply(v, p));
        }
      } else {
        for (int64_t i = 0; i < n; i++) o[i] = to_out<R>(Op::apply(C(a[i]), p));
      }
    } else {
      for (int64_t i = 0; i < n; i++) {
        C v = C(a[i * ix]);
        if constexpr (HasFixup<Op>::value)
          o[i * io] = to_out<R>(Op::fixup(v) ? Op::exact(v) : Op::apply(v, p));
        else
          o[i * io] = to_out<R>(Op::apply(v, p));
      }
    }
  });
}

template <typename Op, typename T>
void binary_loop(uintptr_t out, uintptr_t a, uintptr_t b, const Shape& shape, const Shape& so,
                 const Shape& sa, const Shape& sb, const Params& p) {
  using R = typename Op::template out_t<T>;
  using C = acc_t<T>;
  Nest<3> nest(shape, {&so, &sa, &sb}, true);
  const int64_t io = nest.inner_stride(0), ia = nest.inner_stride(1), ib = nest.inner_stride(2);
  R* o0 = ptr<R>(out);
  const T* a0 = ptr<T>(a);
  const T* b0 = ptr<T>(b);
  nest.parallel([&](const int64_t* off, int64_t n) {
    R* o = o0 + off[0];
    const T* x = a0 + off[1];
    const T* y = b0 + off[2];
    // the common layouts get loops the compiler can vectorize
    if constexpr (std::is_same<T, Half>::value && std::is_same<R, Half>::value) {
      if (io == 1 && ia == 1 && (ib == 1 || ib == 0)) {
        float xa[kHalfBlock], xb[kHalfBlock], xo[kHalfBlock];
        const float yv = float(y[0]);
        for (int64_t b = 0; b < n; b += kHalfBlock) {
          const int64_t len = std::min(kHalfBlock, n - b);
          half_to_float(x + b, xa, len);
          if (ib == 1) {
            half_to_float(y + b, xb, len);
            for (int64_t i = 0; i < len; i++) xo[i] = Op::apply(xa[i], xb[i], p);
          } else {
            for (int64_t i = 0; i < len; i++) xo[i] = Op::apply(xa[i], yv, p);
          }
          float_to_half(xo, o + b, len);
        }
        return;
      }
    }
    if (io == 1 && ia == 1 && ib == 1) {
      for (int64_t i = 0; i < n; i++) o[i] = to_out<R>(Op::apply(C(x[i]), C(y[i]), p));
    } else if (io == 1 && ia == 1 && ib == 0) {
      const C yv = C(y[0]);
      for (int64_t i = 0; i < n; i++) o[i] = to_out<R>(Op::apply(C(x[i]), yv, p));
    } else if (io == 1 && ia == 0 && ib == 1) {
      const C xv = C(x[0]);
      for (int64_t i = 0; i < n; i++) o[i] = to_out<R>(Op::apply(xv, C(y[i]), p));
    } else {
      for (int64_t i = 0; i < n; i++)
        o[i * io] = to_out<R>(Op::apply(C(x[i * ia]), C(y[i * ib]), p));
    }
  });
}

// Ternary ops: the first operand has type A (uint8_t for the bool condition of `where`:
// GCC does not vectorize selects on bool loads), the other two T.
template <typename Op, typename A, typename T>
void ternary_loop(uintptr_t out, uintptr_t a, uintptr_t b, uintptr_t c, const Shape& shape,
                  const Shape& so, const Shape& sa, const Shape& sb, const Shape& sc,
                  const Params& p) {
  using C = acc_t<T>;
  using CA = acc_t<A>;
  Nest<4> nest(shape, {&so, &sa, &sb, &sc}, true);
  const int64_t io = nest.inner_stride(0), ia = nest.inner_stride(1);
  const int64_t ib = nest.inner_stride(2), ic = nest.inner_stride(3);
  T* o0 = ptr<T>(out);
  const A* a0 = ptr<A>(a);
  const T* b0 = ptr<T>(b);
  const T* c0 = ptr<T>(c);
  nest.parallel([&](const int64_t* off, int64_t n) {
    T* o = o0 + off[0];
    const A* x = a0 + off[1];
    const T* y = b0 + off[2];
    const T* z = c0 + off[3];
    // contiguous, and the common where(cond, x, scalar) layouts, vectorize
    if (io == 1 && ia == 1 && ib == 1 && ic == 1) {
      for (int64_t i = 0; i < n; i++) o[i] = T(Op::apply(CA(x[i]), C(y[i]), C(z[i]), p));
    } else if (io == 1 && ia == 1 && ib == 1 && ic == 0) {
      const C zv = C(z[0]);
      for (int64_t i = 0; i < n; i++) o[i] = T(Op::apply(CA(x[i]), C(y[i]), zv, p));
    } else if (io == 1 && ia == 1 && ib == 0 && ic == 1) {
      const C yv = C(y[0]);
      for (int64_t i = 0; i < n; i++) o[i] = T(Op::apply(CA(x[i]), yv, C(z[i]), p));
    } else if (io == 1 && ia == 1 && ib == 0 && ic == 0) {
      const C yv = C(y[0]), zv = C(z[0]);
      for (int64_t i = 0; i < n; i++) o[i] = T(Op::apply(CA(x[i]), yv, zv, p));
    } else {
      for (int64_t i = 0; i < n; i++)
        o[i * io] = T(Op::apply(CA(x[i * ia]), C(y[i * ib]), C(z[i * ic]), p));
    }
  });
}

// ---- kernel tables --------------------------------------------------------------------

using UnaryFn = void (*)(int dt, uintptr_t o, uintptr_t x, const Shape& s, const Shape& so,
                         const Shape& sx, const Params& p);
using BinaryFn = void (*)(int dt, uintptr_t o, uintptr_t a, uintptr_t b, const Shape& s,
                          const Shape& so, const Shape& sa, const Shape& sb, const Params& p);
using TernaryFn = void (*)(int dt_a, int dt, uintptr_t o, uintptr_t a, uintptr_t b,
                           uintptr_t c, const Shape& s, const Shape& so, const Shape& sa,
                           const Shape& sb, const Shape& sc, const Params& p);

struct UnaryKernel { const char* name; UnaryFn fn; };
struct BinaryKernel { const char* name; BinaryFn fn; };
struct TernaryKernel { const char* name; TernaryFn fn; };

// A table row: kernel NAME runs functor OP on the dtypes in MASK; ERR is the name PyTorch
// uses in its "not implemented for" error.
#define FW_U(NAME, OP, MASK, ERR)                                                          \
  {NAME, [](int dt, uintptr_t o, uintptr_t x, const Shape& s, const Shape& so,             \
            const Shape& sx, const Params& p) {                                           \
     ::fw::pw::dispatch<MASK>(dt, ERR, [&](auto tag) {                                    \
       ::fw::pw::unary_loop<OP, decltype(tag)>(o, x, s, so, sx, p);                       \
     });                                                                                  \
   }}
#define FW_B(NAME, OP, MASK, ERR)                                                          \
  {NAME, [](int dt, uintptr_t o, uintptr_t a, uintptr_t b, const Shape& s,                 \
            const Shape& so, const Shape& sa, const Shape& sb, const Params& p) {         \
     ::fw::pw::dispatch<MASK>(dt, ERR, [&](auto tag) {                                    \
       ::fw::pw::binary_loop<OP, decltype(tag)>(o, a, b, s, so, sa, sb, p);               \
     });                                                                                  \
   }}

const std::vector<UnaryKernel>& unary_kernels();
const std::vector<BinaryKernel>& binary_kernels();
const std::vector<TernaryKernel>& ternary_kernels();
// the special functions' rows (pointwise_special.cpp), appended to the tables above
const std::vector<UnaryKernel>& special_unary_kernels();
const std::vector<BinaryKernel>& special_binary_kernels();
// the orthogonal polynomials' rows (pointwise_polynomials.cpp)
const std::vector<BinaryKernel>& polynomial_binary_kernels();
template <typename K>
std::vector<K> joined(const std::vector<K>& a, const std::vector<K>& b) {
  std::vector<K> r(a);
  r.insert(r.end(), b.begin(), b.end());
  return r;
}

// ---- small numeric helpers shared by the op files -------------------------------------

// A double kernel parameter as the compute type; integers wrap like PyTorch's Scalar
// conversion (clamp(uint8, -2) uses 254) instead of the undefined float-to-int cast.
template <typename C> FW_PW_INLINE C from_param(double v) {
  if constexpr (std::is_same<C, bool>::value) return v != 0;
  else if constexpr (std::is_integral<C>::value) return C(int64_t(v));
  else return C(v);
}

template <typename C> inline bool is_nan(C x) {
  if constexpr (std::is_floating_point<C>::value) return x != x;
  else return false;
}

}  // namespace pw
}  // namespace fw
