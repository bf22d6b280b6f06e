// Sorting, selection, scans and counting kernels of the CPU backend.
//
// Most kernels work on "rows": 1-d lines of length n along the op's dim, one per element of
// the outer shape (the other dims). The Python layer passes, per operand, the strides of the
// outer dims and the stride along the row, all in elements. Rows run in parallel; each row
// is handled by one thread with its own scratch buffers.
//
// Ordering: every dtype maps to an unsigned "key" whose integer order is PyTorch's order
// (NaN largest, -0.0 == 0.0). Sorting (key, index) pairs with a stable LSD radix sort gives
// stable sorts; descending order sorts ~key, which keeps equal elements in input order too.
#include "common.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <numeric>

namespace fw {
namespace {

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

// ---- sort / topk / kthvalue / median / mode ---------------------------------------------

template <typename T>
struct RowKeys {  // scratch of one thread: keys of the current row and their indices
  SortBuf<key_t<T>> buf;
  // Loads the keys of a row (complemented for descending order) and sorts them stably.
  // Returns pointers to the sorted keys and indices.
  std::pair<key_t<T>*, int64_t*> sorted(const T* x, int64_t n, int64_t s, bool desc) {
    load(x, n, s, desc);
    bool in_b = radix_sort(buf.ka.get(), buf.ia.get(), buf.kb.get(), buf.ib.get(), n);
    return in_b ? std::make_pair(buf.kb.get(), buf.ib.get())
                : std::make_pair(buf.ka.get(), buf.ia.get());
  }
  void load(const T* x, int64_t n, int64_t s, bool desc) {
    buf.resize(n);
    key_t<T>* k = buf.ka.get();
    int64_t* id = buf.ia.get();
    const key_t<T> flip = desc ? key_t<T>(~key_t<T>(0)) : key_t<T>(0);
    for (int64_t i = 0; i < n; i++) { k[i] = key_t<T>(KeyOf<T>::of(x[i * s]) ^ flip); id[i] = i; }
  }
};

template <typename T>
void sort_rows(const Operand& src, const Operand& val, const Operand& ind, const Shape& outer,
               int64_t n, bool desc) {
  struct F {
    const Operand &src, &val, &ind; int64_t n; bool desc;
    RowKeys<T> make_state() const { return {}; }
    void row(const int64_t* o, RowKeys<T>& st) const {
      const T* x = ptr<T>(src.ptr) + o[0];
      T* v = ptr<T>(val.ptr) + o[1];
      int64_t* ix = ptr<int64_t>(ind.ptr) + o[2];
      auto res = st.sorted(x, n, src.stride, desc);
      const key_t<T>* keys = res.first;
      const int64_t* order = res.second;
      // values come from the sorted keys (no random reads of the input), except zeros and
      // NaNs of floats, whose sign / payload the key does not keep
      using K = key_t<T>;
      const K flip = desc ? K(~K(0)) : K(0);
      const K zero = KeyOf<T>::of(T(0)), nan = K(~K(0));
      for (int64_t i = 0; i < n; i++) {
        int64_t j = order[i];
        K k = K(keys[i] ^ flip);
        v[i * val.stride] = (is_float_v<T> && (k == zero || k == nan)) ? x[j * src.stride]
                                                                     : KeyOf<T>::value(k);
        ix[i * ind.stride] = j;
      }
    }
  } f{src, val, ind, n, desc};
  for_rows<3>(outer, {&src.outer, &val.outer, &ind.outer}, n, f);
}

// Pairs ordered by key, then by index, so selection results are deterministic.
template <typename K> struct KeyIdx {
  K k; int64_t i;
  bool operator<(const KeyIdx& o) const { return k < o.k || (k == o.k && i < o.i); }
};

template <typename T>
struct PairScratch { std::vector<KeyIdx<key_t<T>>> p; };

template <typename T>
void load_pairs(std::vector<KeyIdx<key_t<T>>>& p, const T* x, int64_t n, int64_t s, bool desc) {
  if ((int64_t)p.size() < n) p.resize(n);
  const key_t<T> flip = desc ? key_t<T>(~key_t<T>(0)) : key_t<T>(0);
  for (int64_t i = 0; i < n; i++) p[i] = {key_t<T>(KeyOf<T>::of(x[i * s]) ^ flip), i};
}

template <typename T>
void topk_rows(const Operand& src, const Operand& val, const Operand& ind, const Shape& outer,
               int64_t n, int64_t k, bool largest, bool sorted) {
  struct F {
    const Operand &src, &val, &ind; int64_t n, k; bool largest, sorted;
    PairScratch<T> make_state() const { return {}; }
    // Small k: one pass keeping the k best (key, index) pairs in a max-heap, so most
    // elements cost a single comparison with the heap's top.
    KeyIdx<key_t<T>>* heap_select(std::vector<KeyIdx<key_t<T>>>& buf, const T* x, int64_t n,
                                  int64_t k, bool desc) const {
      load_pairs<T>(buf, x, k, src.stride, desc);
      auto* p = buf.data();
      std::make_heap(p, p + k);
      const key_t<T> flip = desc ? key_t<T>(~key_t<T>(0)) : key_t<T>(0);
      const int64_t s = src.stride;
      for (int64_t i = k; i < n; i++) {
        key_t<T> key = key_t<T>(KeyOf<T>::of(x[i * s]) ^ flip);
        if (key < p[0].k) {  // an equal key has a larger index, so it never wins
          std::pop_heap(p, p + k);
          p[k - 1] = {key, i};
          std::push_heap(p, p + k);
        }
      }
      return p;
    }
    void row(const int64_t* o, PairScratch<T>& st) const {
      const T* x = ptr<T>(src.ptr) + o[0];
      T* v = ptr<T>(val.ptr) + o[1];
      int64_t* ix = ptr<int64_t>(ind.ptr) + o[2];
      auto* p = st.p.data();
      if (k > 0 && k * 16 <= n) {
        p = heap_select(st.p, x, n, k, largest);
        if (sorted) std::sort_heap(p, p + k);
      } else {
        load_pairs<T>(st.p, x, n, src.stride, largest);
        p = st.p.data();
        if (k < n) std::nth_element(p, p + k, p + n);
        if (sorted) std::sort(p, p + k);
      }
      for (int64_t i = 0; i < k; i++) {
        v[i * val.stride] = x[p[i].i * src.stride];
        ix[i * ind.stride] = p[i].i;
      }
    }
  } f{src, val, ind, n, k, largest, sorted};
  for_rows<3>(outer, {&src.outer, &val.outer, &ind.outer}, n, f);
}

// mode 0: the k-th smallest (0-based k); 1: median (NaN if the row has one, at its first
// index); 2: nanmedian (median of the non-NaN values; NaN at index 0 if all are NaN).
template <typename T>
void kth_rows(const Operand& src, const Operand& val, const Operand& ind, const Shape& outer,
              int64_t n, int64_t k, int mode) {
  struct F {
    const Operand &src, &val, &ind; int64_t n, k; int mode;
    PairScratch<T> make_state() const { return {}; }
    void row(const int64_t* o, PairScratch<T>& st) const {
      const T* x = ptr<T>(src.ptr) + o[0];
      T* v = ptr<T>(val.ptr) + o[1];
      int64_t* ix = ptr<int64_t>(ind.ptr) + o[2];
      load_pairs<T>(st.p, x, n, src.stride, false);
      auto* p = st.p.data();
      int64_t kk = k, m = n;
      if (mode != 0) {
        int64_t nan_count = 0, first_nan = -1;
        for (int64_t i = 0; i < n; i++)
          if (key_is_nan<T>(p[i].k)) { if (first_nan < 0) first_nan = i; nan_count++; }
        if (mode == 1 && nan_count) {
          *v = x[first_nan * src.stride]; *ix = first_nan; return;
        }
        m = n - nan_count;
        if (m == 0) { *v = x[0]; *ix = 0; return; }
        kk = (m - 1) / 2;
      }
      // NaN keys are the largest, so the k-th among the first m is the k-th non-NaN one
      std::nth_element(p, p + kk, p + n);
      *v = x[p[kk].i * src.stride];
      *ix = p[kk].i;
      (void)m;
    }
  } f{src, val, ind, n, k, mode};
  for_rows<3>(outer, {&src.outer, &val.outer, &ind.outer}, n, f);
}

// The most frequent value of each row (the smallest one on ties) and its last index.
template <typename T>
void mode_rows(const Operand& src, const Operand& val, const Operand& ind, const Shape& outer,
               int64_t n) {
  struct F {
    const Operand &src, &val, &ind; int64_t n;
    RowKeys<T> make_state() const { return {}; }
    void row(const int64_t* o, RowKeys<T>& st) const {
      const T* x = ptr<T>(src.ptr) + o[0];
      auto res = st.sorted(x, n, src.stride, false);
      const key_t<T>* k = res.first;
      const int64_t* id = res.second;
      int64_t best = 0, best_len = 0;
      for (int64_t i = 0; i < n;) {
        int64_t j = i;
        while (j + 1 < n && k[j + 1] == k[i]) j++;
        if (j - i + 1 > best_len) { best_len = j - i + 1; best = j; }
        i = j + 1;
      }
      // stable sort: the run's last element has the largest index
      *(ptr<T>(val.ptr) + o[1]) = x[id[best] * src.stride];
      *(ptr<int64_t>(ind.ptr) + o[2]) = id[best];
    }
  } f{src, val, ind, n};
  for_rows<3>(outer, {&src.outer, &val.outer, &ind.outer}, n, f);
}

// ---- scans --------------------------------------------------------------------------------
// Input and output are contiguous (outer, n, inner) of the same dtype. With inner > 1 a
// block of adjacent columns is scanned together so every step reads contiguous memory.

template <typename T> using scan_acc_t =
    std::conditional_t<is_float_v<T>, double, std::conditional_t<std::is_same<T, bool>::value, bool, uint64_t>>;

struct SumOp {
  template <typename A> static A init() { return A(0); }
  template <typename A> static A apply(A a, A x) { return a + x; }
};
struct ProdOp {
  template <typename A> static A init() { return A(1); }
  template <typename A> static A apply(A a, A x) { return a * x; }
};
struct LogAddExpOp {
  template <typename A> static A init() { return -std::numeric_limits<A>::infinity(); }
  template <typename A> static A apply(A a, A x) {
    if (std::isnan(a) || std::isnan(x)) return std::numeric_limits<A>::quiet_NaN();
    A lo = std::min(a, x), hi = std::max(a, x);
    if (lo != hi || std::isfinite(lo)) return hi + std::log1p(std::exp(lo - hi));
    return a;  // both the same infinity
  }
};

constexpr int64_t kScanBlock = 256;

template <typename Op, typename T>
void scan(uintptr_t src, uintptr_t dst, int64_t outer, int64_t n, int64_t inner) {
  using A = scan_acc_t<T>;
  const T* x0 = ptr<T>(src);
  T* y0 = ptr<T>(dst);
  if (inner == 1 && outer == 1 && n >= (1 << 18) && num_threads() > 1) {
    // one long row: each thread folds its chunk, the chunk totals are scanned, then each
    // thread rescans its chunk from its offset
    const int64_t parts = num_threads();
    const int64_t len = (n + parts - 1) / parts;
    std::vector<A> total(parts, Op::template init<A>());
    parallel_for(0, parts, 1, [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; c++) {
        A acc = Op::template init<A>();
        for (int64_t i = c * len; i < std::min(n, (c + 1) * len); i++)
          acc = Op::apply(acc, A(acc_t<T>(x0[i])));
        total[c] = acc;
      }
    });
    std::vector<A> start(parts, Op::template init<A>());
    for (int64_t c = 1; c < parts; c++) start[c] = Op::apply(start[c - 1], total[c - 1]);
    parallel_for(0, parts, 1, [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; c++) {
        A acc = start[c];
        for (int64_t i = c * len; i < std::min(n, (c + 1) * len); i++) {
          acc = Op::apply(acc, A(acc_t<T>(x0[i])));
          y0[i] = T(acc_t<T>(acc));
        }
      }
    });
    return;
  }
  if (inner == 1) {
    int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(n, 1));
    parallel_for(0, outer, grain, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; r++) {
        const T* x = x0 + r * n;
        T* y = y0 + r * n;
        A acc = Op::template init<A>();
        for (int64_t i = 0; i < n; i++) { acc = Op::apply(acc, A(acc_t<T>(x[i]))); y[i] = T(acc_t<T>(acc)); }
      }
    });
    return;
  }
  const int64_t blocks = (inner + kScanBlock - 1) / kScanBlock;
  int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(n * kScanBlock, 1));
  parallel_for(0, outer * blocks, grain, [&](int64_t b, int64_t e) {
    A acc[kScanBlock];
    for (int64_t t = b; t < e; t++) {
      int64_t r = t / blocks, c0 = (t % blocks) * kScanBlock;
      int64_t w = std::min(kScanBlock, inner - c0);
      const T* x = x0 + r * n * inner + c0;
      T* y = y0 + r * n * inner + c0;
      for (int64_t j = 0; j < w; j++) acc[j] = Op::template init<A>();
      for (int64_t i = 0; i < n; i++, x += inner, y += inner)
        for (int64_t j = 0; j < w; j++) { acc[j] = Op::apply(acc[j], A(acc_t<T>(x[j]))); y[j] = T(acc_t<T>(acc[j])); }
    }
  });
}

// cummax / cummin: PyTorch's rule is that a NaN, or a value >= (<=) the running one, takes
// over; so ties move the index forward and NaN sticks.
template <typename T, bool Max>
void cum_ext(uintptr_t src, uintptr_t val, uintptr_t ind, int64_t outer, int64_t n, int64_t inner) {
  using C = acc_t<T>;
  const T* x0 = ptr<T>(src);
  T* v0 = ptr<T>(val);
  int64_t* i0 = ptr<int64_t>(ind);
  const int64_t blocks = (inner + kScanBlock - 1) / kScanBlock;
  int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(n * std::min(inner, kScanBlock), 1));
  parallel_for(0, outer * blocks, grain, [&](int64_t b, int64_t e) {
    C cur[kScanBlock];
    int64_t at[kScanBlock];
    for (int64_t t = b; t < e; t++) {
      int64_t r = t / blocks, c0 = (t % blocks) * kScanBlock;
      int64_t w = std::min(kScanBlock, inner - c0);
      int64_t base = r * n * inner + c0;
      for (int64_t j = 0; j < w; j++) { cur[j] = C(x0[base + j]); at[j] = 0; }
      for (int64_t i = 0; i < n; i++) {
        const T* x = x0 + base + i * inner;
        for (int64_t j = 0; j < w; j++) {
          C c = C(x[j]);
          bool take = Max ? (c >= cur[j]) : (c <= cur[j]);
          if constexpr (is_float_v<T>) take = (c != c) || (cur[j] == cur[j] && take);
          if (take) { cur[j] = c; at[j] = i; }
          v0[base + i * inner + j] = T(cur[j]);
          i0[base + i * inner + j] = at[j];
        }
      }
    }
  });
}

// ---- unique ---------------------------------------------------------------------------------
// Rows of a contiguous (n, m) array (m == 1 for flat unique). Writes the order of rows
// (sorted, or as is for unique_consecutive) to perm, the group of each row to inverse, the
// size of each group to counts and a representative row of each group to first. Returns the
// number of groups. NaNs are never equal to each other, as in PyTorch.

// Flat sorted unique: writes the unique values to `values` directly. Without inverse, integer
// keys are sorted alone and decoded back; otherwise (key, index) pairs are sorted.
template <typename T>
int64_t unique_flat(const T* x, int64_t n, T* values, int64_t* inverse, int64_t* counts) {
  using K = key_t<T>;
  RowKeys<T> rk;
  const bool keys_only = inverse == nullptr && !is_float_v<T>;
  const K* k;
  const int64_t* id = nullptr;
  if (keys_only) {
    rk.buf.resize(n);
    K* ka = rk.buf.ka.get();
    for (int64_t i = 0; i < n; i++) ka[i] = KeyOf<T>::of(x[i]);
    bool in_b = radix_sort<K>(ka, nullptr, rk.buf.kb.get(), nullptr, n);
    k = in_b ? rk.buf.kb.get() : ka;
  } else {
    auto res = rk.sorted(x, n, 1, false);
    k = res.first;
    id = res.second;
  }
  int64_t g = -1;
  for (int64_t i = 0; i < n; i++) {
    if (i == 0 || k[i] != k[i - 1] || key_is_nan<T>(k[i])) {
      g++;
      values[g] = keys_only ? KeyOf<T>::value(k[i]) : x[id[i]];
      counts[g] = 0;
    }
    counts[g]++;
    if (inverse) inverse[id[i]] = g;
  }
  return g + 1;
}

template <typename T>
int64_t unique_rows(uintptr_t src, int64_t n, int64_t m, bool do_sort, int64_t* perm,
                    int64_t* inverse, int64_t* counts, int64_t* first) {
  using K = key_t<T>;
  const T* x = ptr<T>(src);
  std::vector<K> keys(n * m);
  for (int64_t i = 0; i < n * m; i++) keys[i] = KeyOf<T>::of(x[i]);
  for (int64_t i = 0; i < n; i++) perm[i] = i;
  if (do_sort) {
    std::stable_sort(perm, perm + n, [&](int64_t a, int64_t b) {
      const K* ka = &keys[a * m];
      const K* kb = &keys[b * m];
      for (int64_t j = 0; j < m; j++)
        if (ka[j] != kb[j]) return ka[j] < kb[j];
      return false;
    });
  }
  auto same = [&](int64_t a, int64_t b) {
    const K* ka = &keys[a * m];
    const K* kb = &keys[b * m];
    for (int64_t j = 0; j < m; j++)
      if (ka[j] != kb[j] || key_is_nan<T>(ka[j])) return false;
    return true;
  };
  int64_t g = -1;
  for (int64_t i = 0; i < n; i++) {
    if (i == 0 || !same(perm[i - 1], perm[i])) {
      g++;
      first[g] = perm[i];
      counts[g] = 0;
    }
    counts[g]++;
    if (inverse) inverse[perm[i]] = g;
  }
  return g + 1;
}

// ---- counting ---------------------------------------------------------------------------------

template <typename T>
py::tuple int_range(uintptr_t src, int64_t n, int64_t s) {
  const T* x = ptr<T>(src);
  int64_t lo = 0, hi = 0;
  if (n > 0) { lo = hi = (int64_t)x[0]; }
  for (int64_t i = 1; i < n; i++) { int64_t v = (int64_t)x[i * s]; lo = std::min(lo, v); hi = std::max(hi, v); }
  return py::make_tuple(lo, hi);
}

template <typename T, typename W>
void bincount_impl(const T* x, int64_t n, int64_t s, const W* w, int64_t ws, uintptr_t out, int odt) {
  if (odt == 5) {
    int64_t* o = ptr<int64_t>(out);
    for (int64_t i = 0; i < n; i++) o[(int64_t)x[i * s]] += 1;
  } else if (odt == 8) {
    float* o = ptr<float>(out);
    for (int64_t i = 0; i < n; i++) o[(int64_t)x[i * s]] += float(w[i * ws]);
  } else {
    double* o = ptr<double>(out);
    for (int64_t i = 0; i < n; i++) o[(int64_t)x[i * s]] += double(acc_t<W>(w[i * ws]));
  }
}

// ---- registration -----------------------------------------------------------------------------

#define FW_DISPATCH_NUMERIC(dt, name, ...)                                  \
  switch (dt) {                                                             \
    FW_CASE(1, uint8_t, __VA_ARGS__)                                        \
    FW_CASE(2, int8_t, __VA_ARGS__)                                         \
    FW_CASE(3, int16_t, __VA_ARGS__)                                        \
    FW_CASE(4, int32_t, __VA_ARGS__)                                        \
    FW_CASE(5, int64_t, __VA_ARGS__)                                        \
    FW_CASE(6, ::fw::Half, __VA_ARGS__)                                     \
    FW_CASE(7, ::fw::BFloat16, __VA_ARGS__)                                 \
    FW_CASE(8, float, __VA_ARGS__)                                          \
    FW_CASE(9, double, __VA_ARGS__)                                         \
    default: ::fw::not_implemented(name, dt);                               \
  }

Operand op(uintptr_t p, const Shape& outer, int64_t stride) { return Operand{p, outer, stride}; }

}  // namespace

void register_sort(py::module_& m) {
  m.def("sort_rows", [](int dt, const Shape& outer, int64_t n, bool desc, uintptr_t x,
                        const Shape& xo, int64_t xs, uintptr_t v, const Shape& vo, int64_t vs,
                        uintptr_t i, const Shape& io, int64_t is) {
    py::gil_scoped_release nogil;
    FW_DISPATCH_ALL(dt, "sort", sort_rows<scalar_t>(op(x, xo, xs), op(v, vo, vs), op(i, io, is), outer, n, desc));
  });
  m.def("topk_rows", [](int dt, const Shape& outer, int64_t n, int64_t k, bool largest,
                        bool sorted, uintptr_t x, const Shape& xo, int64_t xs, uintptr_t v,
                        const Shape& vo, int64_t vs, uintptr_t i, const Shape& io, int64_t is) {
    py::gil_scoped_release nogil;
    FW_DISPATCH_NUMERIC(dt, "topk", topk_rows<scalar_t>(op(x, xo, xs), op(v, vo, vs), op(i, io, is), outer, n, k, largest, sorted));
  });
  m.def("kth_rows", [](int dt, const Shape& outer, int64_t n, int64_t k, int mode, uintptr_t x,
                       const Shape& xo, int64_t xs, uintptr_t v, const Shape& vo, int64_t vs,
                       uintptr_t i, const Shape& io, int64_t is) {
    py::gil_scoped_release nogil;
    const char* name = mode == 0 ? "kthvalue" : "median";
    FW_DISPATCH_NUMERIC(dt, name, kth_rows<scalar_t>(op(x, xo, xs), op(v, vo, vs), op(i, io, is), outer, n, k, mode));
  });
  m.def("mode_rows", [](int dt, const Shape& outer, int64_t n, uintptr_t x, const Shape& xo,
                        int64_t xs, uintptr_t v, const Shape& vo, int64_t vs, uintptr_t i,
                        const Shape& io, int64_t is) {
    py::gil_scoped_release nogil;
    FW_DISPATCH_ALL(dt, "mode", mode_rows<scalar_t>(op(x, xo, xs), op(v, vo, vs), op(i, io, is), outer, n));
  });
  // kind: 0 cumsum, 1 cumprod, 2 logcumsumexp
  m.def("scan", [](int kind, int dt, uintptr_t x, uintptr_t y, int64_t outer, int64_t n, int64_t inner) {
    py::gil_scoped_release nogil;
    if (kind == 0) {
      FW_DISPATCH_NUMERIC(dt, "cumsum", scan<SumOp, scalar_t>(x, y, outer, n, inner));
    } else if (kind == 1) {
      FW_DISPATCH_NUMERIC(dt, "cumprod", scan<ProdOp, scalar_t>(x, y, outer, n, inner));
    } else {
      FW_DISPATCH_FLOAT(dt, "logcumsumexp_out", scan<LogAddExpOp, scalar_t>(x, y, outer, n, inner));
    }
  });
  m.def("cum_ext", [](bool is_max, int dt, uintptr_t x, uintptr_t v, uintptr_t i, int64_t outer,
                      int64_t n, int64_t inner) {
    py::gil_scoped_release nogil;
    if (is_max) {
      FW_DISPATCH_ALL(dt, "cummax", (cum_ext<scalar_t, true>(x, v, i, outer, n, inner)));
    } else {
      FW_DISPATCH_ALL(dt, "cummin", (cum_ext<scalar_t, false>(x, v, i, outer, n, inner)));
    }
  });
  m.def("unique_rows", [](int dt, uintptr_t x, int64_t n, int64_t m_, bool do_sort, uintptr_t perm,
                          uintptr_t inverse, uintptr_t counts, uintptr_t first) {
    py::gil_scoped_release nogil;
    int64_t u = 0;
    FW_DISPATCH_ALL(dt, "unique", u = unique_rows<scalar_t>(x, n, m_, do_sort, ptr<int64_t>(perm),
        ptr<int64_t>(inverse), ptr<int64_t>(counts), ptr<int64_t>(first)));
    return u;
  });
  m.def("unique_flat", [](int dt, uintptr_t x, int64_t n, uintptr_t values, uintptr_t inverse,
                          uintptr_t counts) {
    py::gil_scoped_release nogil;
    int64_t u = 0;
    FW_DISPATCH_ALL(dt, "unique", u = unique_flat<scalar_t>(ptr<scalar_t>(x), n, ptr<scalar_t>(values),
        ptr<int64_t>(inverse), ptr<int64_t>(counts)));
    return u;
  });
  // dst[g, :] = src[rows[g], :] for contiguous rows of `row_bytes` bytes
  m.def("gather_rows", [](uintptr_t dst, uintptr_t src, uintptr_t rows, int64_t count, int64_t row_bytes) {
    const int64_t* r = ptr<int64_t>(rows);
    for (int64_t g = 0; g < count; g++)
      std::memcpy(ptr<char>(dst) + g * row_bytes, ptr<char>(src) + r[g] * row_bytes, row_bytes);
  });
  m.def("int_range", [](int dt, uintptr_t x, int64_t n, int64_t s) {
    py::tuple r;
    FW_DISPATCH_INT(dt, "bincount", r = int_range<scalar_t>(x, n, s));
    return r;
  });
  // out (zeroed by the caller) has dtype odt: 5 int64 counts, 8 float / 9 double weights
  m.def("bincount", [](int dt, uintptr_t x, int64_t n, int64_t s, int wdt, uintptr_t w,
                       int64_t ws, uintptr_t out, int odt) {
    py::gil_scoped_release nogil;
    FW_DISPATCH_INT(dt, "bincount", {
      using X = scalar_t;
      if (odt == 5) {
        bincount_impl<X, int64_t>(ptr<X>(x), n, s, nullptr, 0, out, odt);
      } else {
        FW_DISPATCH_NUMERIC(wdt, "bincount", bincount_impl<X, scalar_t>(ptr<X>(x), n, s, ptr<scalar_t>(w), ws, out, odt));
      }
    });
  });
  // float range of a strided tensor (NaN if any value is NaN), for histc without a range
  m.def("float_range", [](int dt, uintptr_t x, const Shape& shape, const Shape& st) {
    double lo = 0, hi = 0;
    bool any = false, nan = false;
    FW_DISPATCH_FLOAT(dt, "histc", {
      Nest<1> nest(shape, {&st});
      if (nest.numel > 0) nest.runs(0, nest.numel, [&](const int64_t* off, int64_t cnt) {
        const scalar_t* p = ptr<scalar_t>(x) + off[0];
        for (int64_t i = 0; i < cnt; i++) {
          double v = double(acc_t<scalar_t>(p[i * nest.inner_stride(0)]));
          if (v != v) { nan = true; continue; }
          if (!any) { lo = hi = v; any = true; }
          lo = std::min(lo, v); hi = std::max(hi, v);
        }
      });
    });
    if (nan) lo = hi = std::numeric_limits<double>::quiet_NaN();
    return py::make_tuple(lo, hi);
  });
  // out: contiguous float tensor of `bins` zeros, same dtype as x
  m.def("histc", [](int dt, uintptr_t x, const Shape& shape, const Shape& st, uintptr_t out,
                    int64_t bins, double lo, double hi) {
    py::gil_scoped_release nogil;
    FW_DISPATCH_FLOAT(dt, "histogram", {
      using C = acc_t<scalar_t>;
      std::vector<double> h(bins, 0.0);
      Nest<1> nest(shape, {&st});
      const C clo = C(lo), chi = C(hi);
      if (nest.numel > 0) nest.runs(0, nest.numel, [&](const int64_t* off, int64_t cnt) {
        const scalar_t* p = ptr<scalar_t>(x) + off[0];
        for (int64_t i = 0; i < cnt; i++) {
          C v = C(p[i * nest.inner_stride(0)]);
          if (!(v >= clo && v <= chi)) continue;  // outside the range, or NaN
          int64_t b = (int64_t)((v - clo) * C(bins) / (chi - clo));
          if (b >= bins) b = bins - 1;
          if (b < 0) b = 0;
          h[b] += 1;
        }
      });
      scalar_t* o = ptr<scalar_t>(out);
      for (int64_t b = 0; b < bins; b++) o[b] = scalar_t(C(h[b]));
    });
  });
  // For each value row, the insertion points in the matching boundary row (PyTorch's
  // lower/upper bound with `!(mid >= v)` so NaN values land at the end).
  m.def("searchsorted", [](int dt, const Shape& outer, int64_t nb, int64_t nv, bool right,
                           bool out32, uintptr_t b, const Shape& bo, int64_t bs, uintptr_t srt,
                           const Shape& so, int64_t ss, uintptr_t v, const Shape& vo, int64_t vs,
                           uintptr_t out, const Shape& oo, int64_t os) {
    py::gil_scoped_release nogil;
    FW_DISPATCH_NUMERIC(dt, "searchsorted_out", {
      using C = acc_t<scalar_t>;
      Nest<4> nest(outer, {&bo, &so, &vo, &oo});
      if (nest.numel > 0) nest.runs(0, nest.numel, [&](const int64_t* off, int64_t cnt) {
        for (int64_t r = 0; r < cnt; r++) {
          const scalar_t* bd = ptr<scalar_t>(b) + off[0] + r * nest.inner_stride(0);
          const int64_t* sp = srt ? ptr<int64_t>(srt) + off[1] + r * nest.inner_stride(1) : nullptr;
          const scalar_t* vp = ptr<scalar_t>(v) + off[2] + r * nest.inner_stride(2);
          int64_t o = off[3] + r * nest.inner_stride(3);
          for (int64_t j = 0; j < nv; j++) {
            C val = C(vp[j * vs]);
            int64_t lo = 0, hi = nb;
            while (lo < hi) {
              int64_t mid = lo + ((hi - lo) >> 1);
              C mv = C(sp ? bd[sp[mid * ss] * bs] : bd[mid * bs]);
              bool go_right = right ? !(mv > val) : !(mv >= val);
              if (go_right) lo = mid + 1; else hi = mid;
            }
            if (out32) ptr<int32_t>(out)[o + j * os] = (int32_t)lo;
            else ptr<int64_t>(out)[o + j * os] = lo;
          }
        }
      });
    });
  });
}

}  // namespace fw
