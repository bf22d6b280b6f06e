// float8 storage types (PyTorch's float8_e4m3fn, float8_e5m2, float8_e4m3fnuz,
// float8_e5m2fnuz). Only the copy kernels take them: a value is widened to float to be
// read and rounded from float to be stored, with the rules of framework/_float8.py
// (round to nearest even; e4m3fn saturates, e5m2 overflows to inf, *fnuz to its NaN).
#pragma once

#include "common.h"

namespace fw {

enum class F8Kind { FN, IEEE, FNUZ };

template <int E, int M, int BIAS, F8Kind K>
struct Float8 {
  uint8_t x;
  Float8() = default;
  Float8(float f) : x(encode(f)) {}
  operator float() const { return bits_to_float(decode(x)); }

  // the largest finite magnitude's code
  static constexpr uint32_t top = K == F8Kind::FN ? 0x7e
                                : K == F8Kind::IEEE ? ((((1u << E) - 1) << M) - 1) : 0x7f;

  static uint32_t decode(uint8_t c) {
    const uint32_t sign = (uint32_t)(c >> 7) << 31;
    const uint32_t ex = (c >> M) & ((1u << E) - 1), man = c & ((1u << M) - 1);
    if (K == F8Kind::FNUZ && c == 0x80) return 0x7f800001u;  // the NaN, as PyTorch widens it
    if (K == F8Kind::FN && (c & 0x7f) == 0x7f) return sign | 0x7f800000u | (man << (23 - M));
    if (K == F8Kind::IEEE && ex == (1u << E) - 1)  // inf, or a NaN made quiet
      return sign | 0x7f800000u | (man << (23 - M)) | (man ? 0x400000u : 0u);
    if (ex == 0)  // subnormal: man * 2^(1 - BIAS - M), exact in float
      return sign | float_to_bits(std::ldexp((float)man, 1 - BIAS - M));
    return sign | ((ex + 127 - BIAS) << 23) | (man << (23 - M));
  }

  static uint8_t encode(float f) {
    const uint32_t b = float_to_bits(f);
    const uint32_t sign = b >> 31, a = b & 0x7fffffffu;
    const bool nan = a > 0x7f800000u;
    uint32_t r;
    if (nan || a == 0x7f800000u) {
      r = top + 1;  // handled as an overflow below
    } else if (a < (uint32_t)(128 - BIAS) << 23) {
      // below the smallest normal: one float add rounds to the subnormal step
      const float magic = std::ldexp(1.0f, 24 - BIAS - M);
      r = float_to_bits(bits_to_float(a) + magic) - float_to_bits(magic);
    } else {
      constexpr int shift = 23 - M;
      const uint32_t odd = (a >> shift) & 1;
      r = (a - ((uint32_t)(127 - BIAS) << 23) + (1u << (shift - 1)) - 1 + odd) >> shift;
    }
    if (K == F8Kind::FNUZ) {
      if (nan || r > top) return 0x80;
      return r == 0 ? 0 : (uint8_t)(r | (sign << 7));
    }
    if (nan) r = 0x7f;
    else if (r > top) r = K == F8Kind::FN ? top : 0x7c;  // saturate / inf
    return (uint8_t)(r | (sign << 7));
  }
};

using Float8E4M3FN = Float8<4, 3, 7, F8Kind::FN>;
using Float8E5M2 = Float8<5, 2, 15, F8Kind::IEEE>;
using Float8E4M3FNUZ = Float8<4, 3, 8, F8Kind::FNUZ>;
using Float8E5M2FNUZ = Float8<5, 2, 16, F8Kind::FNUZ>;

template <int E, int M, int B, F8Kind K> struct Acc<Float8<E, M, B, K>> { using type = float; };
template <int E, int M, int B, F8Kind K> constexpr bool is_float_v<Float8<E, M, B, K>> = true;

template <typename T> constexpr bool is_float8_v = false;
template <int E, int M, int B, F8Kind K> constexpr bool is_float8_v<Float8<E, M, B, K>> = true;

// The float8 cases of a dtype switch (codes as in framework/_dtype.py).
#define FW_FLOAT8_CASES(...)                                                \
    FW_CASE(12, ::fw::Float8E4M3FN, __VA_ARGS__)                            \
    FW_CASE(13, ::fw::Float8E5M2, __VA_ARGS__)                              \
    FW_CASE(14, ::fw::Float8E4M3FNUZ, __VA_ARGS__)                          \
    FW_CASE(15, ::fw::Float8E5M2FNUZ, __VA_ARGS__)

}  // namespace fw
