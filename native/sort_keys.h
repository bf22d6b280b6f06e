// Shared pieces of the sort family's kernels (native/sort.cpp, native/sort_scan.cpp):
// order-preserving keys, the stable radix sort, and parallel iteration over rows.
//
// Most kernels work on "rows": 1-d lines of length n along the op's dim, one per element of
// the outer shape (the other dims). The Python layer passes, per operand, the strides of the
// outer dims and the stride along the row, all in elements. Rows run in parallel; each row
// is handled by one thread with its own scratch buffers.
//
// Ordering: every dtype maps to an unsigned "key" whose integer order is PyTorch's order
// (NaN largest, -0.0 == 0.0). Sorting (key, index) pairs with a stable LSD radix sort gives
// stable sorts; descending order sorts ~key, which keeps equal elements in input order too.
#pragma once

#include "common.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <vector>

namespace fw {
namespace sort_detail {

// ---- keys ---------------------------------------------------------------------------------

template <typename T> struct KeyOf;
template <> struct KeyOf<bool> {
  using type = uint8_t;
  static type of(bool v) { return v ? 1 : 0; }
  static bool value(type k) { return k != 0; }
};
template <> struct KeyOf<uint8_t> {
  using type = uint8_t;
  static type of(uint8_t v) { return v; }
  static uint8_t value(type k) { return k; }
};
template <> struct KeyOf<int8_t> {
  using type = uint8_t;
  static type of(int8_t v) { return (uint8_t)v ^ 0x80u; }
  static int8_t value(type k) { return (int8_t)(uint8_t)(k ^ 0x80u); }
};
template <> struct KeyOf<int16_t> {
  using type = uint16_t;
  static type of(int16_t v) { return (uint16_t)((uint16_t)v ^ 0x8000u); }
  static int16_t value(type k) { return (int16_t)(uint16_t)(k ^ 0x8000u); }
};
template <> struct KeyOf<int32_t> {
  using type = uint32_t;
  static type of(int32_t v) { return (uint32_t)v ^ 0x80000000u; }
  static int32_t value(type k) { return (int32_t)(k ^ 0x80000000u); }
};
template <> struct KeyOf<int64_t> {
  using type = uint64_t;
  static type of(int64_t v) { return (uint64_t)v ^ 0x8000000000000000ull; }
  static int64_t value(type k) { return (int64_t)(k ^ 0x8000000000000000ull); }
};
// Floats: flip the sign bit of positives and all bits of negatives; NaN becomes all ones
// (above +inf) and -0.0 becomes +0.0 so the two compare equal, as in PyTorch.
template <typename U, int ExpBits>
inline U float_bits_key(U b) {
  constexpr int W = sizeof(U) * 8;
  constexpr U sign = U(1) << (W - 1);
  constexpr U inf = (U(~U(0)) >> (W - 1 - ExpBits)) << (W - 1 - ExpBits) & U(~sign);
  U mag = b & U(~sign);
  if (mag > inf) return U(~U(0));
  if (mag == 0) return sign;
  return (b & sign) ? U(~b) : U(b | sign);
}
// The inverse of float_bits_key (NaN and zero come back canonical: callers that must keep
// -0.0 or a NaN's payload read those from the input instead).
template <typename U>
inline U key_float_bits(U k) {
  constexpr U sign = U(1) << (sizeof(U) * 8 - 1);
  return (k & sign) ? U(k ^ sign) : U(~k);
}
template <> struct KeyOf<float> {
  using type = uint32_t;
  static type of(float v) { uint32_t b; std::memcpy(&b, &v, 4); return float_bits_key<uint32_t, 8>(b); }
  static float value(type k) { uint32_t b = key_float_bits(k); float v; std::memcpy(&v, &b, 4); return v; }
};
template <> struct KeyOf<double> {
  using type = uint64_t;
  static type of(double v) { uint64_t b; std::memcpy(&b, &v, 8); return float_bits_key<uint64_t, 11>(b); }
  static double value(type k) { uint64_t b = key_float_bits(k); double v; std::memcpy(&v, &b, 8); return v; }
};
template <> struct KeyOf<Half> {
  using type = uint16_t;
  static type of(Half v) { return float_bits_key<uint16_t, 5>(v.x); }
  static Half value(type k) { Half h; h.x = key_float_bits(k); return h; }
};
template <> struct KeyOf<BFloat16> {
  using type = uint16_t;
  static type of(BFloat16 v) { return float_bits_key<uint16_t, 8>(v.x); }
  static BFloat16 value(type k) { BFloat16 h; h.x = key_float_bits(k); return h; }
};
template <typename T> using key_t = typename KeyOf<T>::type;

// Whether a key is NaN's (only floats have one).
template <typename T> inline bool key_is_nan(key_t<T> k) {
  return is_float_v<T> && k == key_t<T>(~key_t<T>(0));
}

// ---- stable sort of (key, index) pairs ------------------------------------------------------

// Sorts keys[0..n) with their indices, stably. Uses a / b as the two buffers and returns
// whichever ends up holding the result (a, unless an odd number of passes ran).
template <typename K>
struct SortBuf {  // uninitialised on purpose: zero-filling would cost as much as a pass
  std::unique_ptr<K[]> ka, kb;
  std::unique_ptr<int64_t[]> ia, ib;
  int64_t cap = 0;
  void resize(int64_t n) {
    if (cap >= n) return;
    ka.reset(new K[n]); kb.reset(new K[n]);
    ia.reset(new int64_t[n]); ib.reset(new int64_t[n]);
    cap = n;
  }
};

template <typename K>
void small_sort(K* k, int64_t* idx, int64_t n) {
  for (int64_t i = 1; i < n; i++) {  // insertion sort: stable, fast for short rows
    K kv = k[i];
    int64_t iv = idx ? idx[i] : 0, j = i;
    while (j > 0 && k[j - 1] > kv) {
      k[j] = k[j - 1];
      if (idx) idx[j] = idx[j - 1];
      j--;
    }
    k[j] = kv;
    if (idx) idx[j] = iv;
  }
}

template <typename K, bool WithIdx>
bool radix_passes(K* ka, int64_t* ia, K* kb, int64_t* ib, int64_t n) {
  if (n <= 32) { small_sort(ka, ia, n); return false; }
  constexpr int P = sizeof(K);
  // the bytes in which some key differs from the first; only those need a pass
  K diff = 0;
  const K k0 = ka[0];
  for (int64_t i = 0; i < n; i++) diff |= K(ka[i] ^ k0);
  int active[P], na = 0;
  for (int p = 0; p < P; p++)
    if ((diff >> (8 * p)) & 0xff) active[na++] = p;
  std::vector<int64_t> hist(na * 256, 0);
  for (int64_t i = 0; i < n; i++) {
    K v = ka[i];
    for (int a = 0; a < na; a++) hist[a * 256 + ((v >> (8 * active[a])) & 0xff)]++;
  }
  bool swapped = false;
  K* ks = ka; K* kd = kb; int64_t* is = ia; int64_t* id = ib;
  for (int a = 0; a < na; a++) {
    const int p = active[a];
    int64_t* h = &hist[a * 256];
    int64_t sum = 0;
    for (int d = 0; d < 256; d++) { int64_t c = h[d]; h[d] = sum; sum += c; }
    for (int64_t i = 0; i < n; i++) {
      int64_t pos = h[(ks[i] >> (8 * p)) & 0xff]++;
      kd[pos] = ks[i];
      if (WithIdx) id[pos] = is[i];
    }
    std::swap(ks, kd); std::swap(is, id);
    swapped = !swapped;
  }
  return swapped;
}

// Returns true when the result is in (kb, ib) rather than (ka, ia). With ia == nullptr only
// the keys are sorted.
template <typename K>
bool radix_sort(K* ka, int64_t* ia, K* kb, int64_t* ib, int64_t n) {
  if (ia == nullptr) return radix_passes<K, false>(ka, ia, kb, ib, n);
  return radix_passes<K, true>(ka, ia, kb, ib, n);
}

// ---- rows ---------------------------------------------------------------------------------

// Iterates the rows of an outer shape for K operands, in parallel; f(offsets, scratch-id).
template <int K, typename F>
void for_rows(const Shape& outer, const std::vector<const Shape*>& strides, int64_t row_len,
              F&& f) {
  Nest<K> nest(outer, strides);
  if (nest.numel == 0) return;
  int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(row_len, 1));
  parallel_for(0, nest.numel, grain, [&](int64_t b, int64_t e) {
    auto state = f.make_state();
    nest.runs(b, e, [&](const int64_t* off, int64_t cnt) {
      int64_t o[K];
      for (int64_t r = 0; r < cnt; r++) {
        for (int k = 0; k < K; k++) o[k] = off[k] + r * nest.inner_stride(k);
        f.row(o, state);
      }
    });
  });
}

struct Operand {  // one strided operand of a row kernel
  uintptr_t ptr;
  Shape outer;    // strides of the outer dims
  int64_t stride; // stride along the row
};




inline Operand op(uintptr_t p, const Shape& outer, int64_t stride) {
  return Operand{p, outer, stride};
}

}  // namespace sort_detail
}  // namespace fw
