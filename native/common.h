// Shared pieces of the CPU kernels: dtype codes, half types, strided iteration, errors.
//
// Every kernel receives raw pointers plus shapes and strides in elements, computed by the
// Python dispatcher. Kernels never allocate tensors and never see Python objects other
// than these plain arguments.
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "parallel.h"

namespace py = pybind11;

namespace fw {

using Shape = std::vector<int64_t>;

// Keep in sync with framework/_dtype.py (DType.code).
enum class DT : int {
  Bool = 0, UInt8 = 1, Int8 = 2, Int16 = 3, Int32 = 4, Int64 = 5,
  Float16 = 6, BFloat16 = 7, Float32 = 8, Float64 = 9,
  // no kernel takes these: complex ops run on real views (framework/_ops/complex_views.py);
  // they only name the dtype in "not implemented for 'ComplexFloat'" errors
  Complex64 = 10, Complex128 = 11,
};

inline const char* dtype_name(int code) {
  static const char* names[] = {"Bool", "Byte", "Char", "Short", "Int", "Long", "Half",
                                "BFloat16", "Float", "Double", "ComplexFloat",
                                "ComplexDouble", "Float8_e4m3fn", "Float8_e5m2",
                                "Float8_e4m3fnuz", "Float8_e5m2fnuz"};
  return (code >= 0 && code < 16) ? names[code] : "Unknown";
}

// ---- 16-bit floats, stored as bits, computed in float ----------------------------------

inline float bits_to_float(uint32_t b) { float f; std::memcpy(&f, &b, 4); return f; }
inline uint32_t float_to_bits(float f) { uint32_t b; std::memcpy(&b, &f, 4); return b; }

struct Half {
  uint16_t x;
  Half() = default;
  Half(float f) : x(from_float(f)) {}
  operator float() const { return to_float(x); }

  static float to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    if (exp == 0x1f) return bits_to_float(sign | 0x7f800000 | (man << 13));
    if (exp == 0) {
      if (man == 0) return bits_to_float(sign);
      float f = std::ldexp((float)man, -24);  // subnormal
      return sign ? -f : f;
    }
    return bits_to_float(sign | ((exp + 112) << 23) | (man << 13));
  }
  static uint16_t from_float(float f) {
    uint32_t b = float_to_bits(f);
    uint16_t sign = (b >> 16) & 0x8000;
    uint32_t abs = b & 0x7fffffff;
    if (abs >= 0x7f800000) return sign | 0x7c00 | (abs > 0x7f800000 ? 0x200 : 0);
    if (abs >= 0x477ff000) return sign | 0x7c00;  // rounds to inf
    if (abs < 0x38800000) {  // result is subnormal or zero: round via float add
      float a = bits_to_float(abs) + 0.5f;
      return sign | (uint16_t)(float_to_bits(a) - 0x3f000000);
    }
    uint32_t mant_odd = (abs >> 13) & 1;
    abs += 0xc8000fff + mant_odd;  // rebias exponent and round to nearest even
    return sign | (uint16_t)(abs >> 13);
  }
};

struct BFloat16 {
  uint16_t x;
  BFloat16() = default;
  BFloat16(float f) : x(from_float(f)) {}
  operator float() const { return bits_to_float((uint32_t)x << 16); }
  static uint16_t from_float(float f) {
    uint32_t b = float_to_bits(f);
    if ((b & 0x7fffffff) > 0x7f800000) return (uint16_t)((b >> 16) | 0x40);  // quiet NaN
    b += 0x7fff + ((b >> 16) & 1);
    return (uint16_t)(b >> 16);
  }
};

// The type arithmetic is done in: 16-bit floats compute in float, like PyTorch on the CPU.
template <typename T> struct Acc { using type = T; };
template <> struct Acc<Half> { using type = float; };
template <> struct Acc<BFloat16> { using type = float; };
template <typename T> using acc_t = typename Acc<T>::type;

template <typename T> constexpr bool is_float_v =
    std::is_floating_point<T>::value || std::is_same<T, Half>::value ||
    std::is_same<T, BFloat16>::value;

// ---- errors ---------------------------------------------------------------------------

// Raised as RuntimeError in Python (pybind11 maps std::runtime_error to RuntimeError).
[[noreturn]] inline void fail(const std::string& msg) { throw std::runtime_error(msg); }

// Raised as NotImplementedError, like PyTorch's missing dtype kernels.
struct NotImplemented : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] inline void not_implemented(const char* op, int dtype) {
  throw NotImplemented(std::string("\"") + op + "_cpu\" not implemented for '" +
                       dtype_name(dtype) + "'");
}

// Calls f(T{}) with T the C++ type of the dtype code. The macros list which dtypes a
// kernel supports; others raise PyTorch's "not implemented for" error.
#define FW_CASE(code, T, ...) case code: { using scalar_t = T; __VA_ARGS__; } break;
// Case lists of the dtype families; each dispatch macro is one switch over some of them.
#define FW_INT_CASES(...)                                                   \
    FW_CASE(1, uint8_t, __VA_ARGS__)                                        \
    FW_CASE(2, int8_t, __VA_ARGS__)                                         \
    FW_CASE(3, int16_t, __VA_ARGS__)                                        \
    FW_CASE(4, int32_t, __VA_ARGS__)                                        \
    FW_CASE(5, int64_t, __VA_ARGS__)
#define FW_FLOAT_CASES(...)                                                 \
    FW_CASE(6, ::fw::Half, __VA_ARGS__)                                     \
    FW_CASE(7, ::fw::BFloat16, __VA_ARGS__)                                 \
    FW_CASE(8, float, __VA_ARGS__)                                          \
    FW_CASE(9, double, __VA_ARGS__)
#define FW_SWITCH(dt, name, CASES)                                          \
  switch (dt) {                                                             \
    CASES                                                                   \
    default: ::fw::not_implemented(name, dt);                               \
  }
#define FW_DISPATCH_FLOAT(dt, name, ...) FW_SWITCH(dt, name, FW_FLOAT_CASES(__VA_ARGS__))
#define FW_DISPATCH_INT(dt, name, ...) FW_SWITCH(dt, name, FW_INT_CASES(__VA_ARGS__))
// Every dtype but bool.
#define FW_DISPATCH_NUMERIC(dt, name, ...)                                  \
  FW_SWITCH(dt, name, FW_INT_CASES(__VA_ARGS__) FW_FLOAT_CASES(__VA_ARGS__))
#define FW_DISPATCH_ALL(dt, name, ...)                                      \
  FW_SWITCH(dt, name, FW_CASE(0, bool, __VA_ARGS__) FW_INT_CASES(__VA_ARGS__)             \
                      FW_FLOAT_CASES(__VA_ARGS__))

template <typename T> inline T* ptr(uintptr_t p) { return reinterpret_cast<T*>(p); }

// ---- strided N-d iteration ------------------------------------------------------------

// A loop nest over `shape` for K operands with their own strides (in elements). Dims of
// size 1 are dropped and dims that are contiguous for every operand are merged, so a
// contiguous or simply-broadcast problem becomes one flat loop.
constexpr int kMaxNestDims = 64;

template <int K>
struct Nest {
  Shape shape;                       // outermost first
  std::vector<int64_t> strides[K];   // strides[k][d]
  int64_t numel = 1;

  // by_first: visit dims in decreasing order of operand 0's |stride| (stable) rather than
  // as given, for elementwise loops whose result does not depend on the visiting order: a
  // permuted dense output (PyTorch's preserve_format) then runs as one contiguous loop.
  Nest(const Shape& shp, const std::vector<const Shape*>& st, bool by_first = false) {
    const int nd = (int)shp.size();
    for (int k = 0; k < K; k++)
      if ((int)st[k]->size() != nd) fail("internal: stride rank mismatch");
    int order[kMaxNestDims];
    const bool sorted = by_first && nd > 1 && nd <= kMaxNestDims;
    for (int d = 0; d < nd && sorted; d++) order[d] = d;
    if (sorted) {
      const Shape& s0 = *st[0];
      std::stable_sort(order, order + nd, [&](int x, int y) {
        return std::llabs(s0[x]) > std::llabs(s0[y]);
      });
    }
    for (int j = 0; j < nd; j++) {
      const int d = sorted ? order[j] : j;
      numel *= shp[d];
      if (shp[d] == 1) continue;
      bool merge = !shape.empty();
      for (int k = 0; k < K && merge; k++)
        merge = strides[k].back() == (*st[k])[d] * shp[d];
      if (merge) {
        shape.back() *= shp[d];
        for (int k = 0; k < K; k++) strides[k].back() = (*st[k])[d];
      } else {
        shape.push_back(shp[d]);
        for (int k = 0; k < K; k++) strides[k].push_back((*st[k])[d]);
      }
    }
    if (shape.empty()) {  // 0-d or all-ones: one element
      shape.push_back(1);
      for (int k = 0; k < K; k++) strides[k].push_back(0);
    }
  }

  int64_t inner() const { return shape.back(); }
  int64_t inner_stride(int k) const { return strides[k].back(); }

  // Calls f(offsets[K], n) for each run of the innermost dim that falls in [begin, end)
  // of the flattened index space; offsets are in elements.
  template <typename F>
  void runs(int64_t begin, int64_t end, F&& f) const {
    const int nd = (int)shape.size();
    const int64_t n_in = shape[nd - 1];
    std::vector<int64_t> idx(nd, 0);
    int64_t rest = begin / n_in, pos = begin % n_in;
    for (int d = nd - 2; d >= 0; d--) { idx[d] = rest % shape[d]; rest /= shape[d]; }
    int64_t off[K];
    for (int k = 0; k < K; k++) {
      off[k] = pos * strides[k][nd - 1];
      for (int d = 0; d < nd - 1; d++) off[k] += idx[d] * strides[k][d];
    }
    int64_t i = begin;
    while (i < end) {
      int64_t n = std::min(n_in - pos, end - i);
      f(off, n);
      i += n;
      if (i >= end) break;
      // back to the start of this row, then step the outer index to the next row
      for (int k = 0; k < K; k++) off[k] -= pos * strides[k][nd - 1];
      pos = 0;
      for (int d = nd - 2; d >= 0; d--) {
        idx[d]++;
        for (int k = 0; k < K; k++) off[k] += strides[k][d];
        if (idx[d] < shape[d]) break;
        for (int k = 0; k < K; k++) off[k] -= shape[d] * strides[k][d];
        idx[d] = 0;
      }
    }
  }

  // Runs the nest in parallel chunks; f(offsets, n) as in runs().
  template <typename F>
  void parallel(F&& f, int64_t grain = 32768) const {
    if (numel == 0) return;
    parallel_for(0, numel, grain, [&](int64_t b, int64_t e) { runs(b, e, f); });
  }
};

}  // namespace fw
