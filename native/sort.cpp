// Sorting and selection kernels of the CPU backend: sort, topk, kthvalue, median, mode,
// unique. Keys, the radix sort and the row iteration are in sort_keys.h.
#include "sort_keys.h"

namespace fw {
namespace {
using namespace sort_detail;

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

// The most frequent value of each row (the smallest one on ties) and its last index. NaNs are
// never equal to each other (each counts once), as in PyTorch.
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
        while (j + 1 < n && k[j + 1] == k[i] && !key_is_nan<T>(k[i])) j++;
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

}  // namespace

void register_sort_scan(py::module_& m);  // native/sort_scan.cpp

void register_sort(py::module_& m) {
  m.def("sort_rows", [](int dt, const Shape& outer, int64_t n, bool desc, uintptr_t x,
                        const Shape& xo, int64_t xs, uintptr_t v, const Shape& vo, int64_t vs,
                        uintptr_t i, const Shape& io, int64_t is) {
    py::gil_scoped_release nogil;
    FW_DISPATCH_ALL(dt, "sort", sort_rows<scalar_t>(op(x, xo, xs), op(v, vo, vs), op(i, io, is),
                                                    outer, n, desc));
  });
  m.def("topk_rows", [](int dt, const Shape& outer, int64_t n, int64_t k, bool largest,
                        bool sorted, uintptr_t x, const Shape& xo, int64_t xs, uintptr_t v,
                        const Shape& vo, int64_t vs, uintptr_t i, const Shape& io, int64_t is) {
    py::gil_scoped_release nogil;
    FW_DISPATCH_NUMERIC(dt, "topk", topk_rows<scalar_t>(op(x, xo, xs), op(v, vo, vs),
                                                        op(i, io, is), outer, n, k, largest, sorted));
  });
  m.def("kth_rows", [](int dt, const Shape& outer, int64_t n, int64_t k, int mode, uintptr_t x,
                       const Shape& xo, int64_t xs, uintptr_t v, const Shape& vo, int64_t vs,
                       uintptr_t i, const Shape& io, int64_t is) {
    py::gil_scoped_release nogil;
    const char* name = mode == 0 ? "kthvalue" : "median";
    FW_DISPATCH_NUMERIC(dt, name, kth_rows<scalar_t>(op(x, xo, xs), op(v, vo, vs), op(i, io, is),
                                                     outer, n, k, mode));
  });
  m.def("mode_rows", [](int dt, const Shape& outer, int64_t n, uintptr_t x, const Shape& xo,
                        int64_t xs, uintptr_t v, const Shape& vo, int64_t vs, uintptr_t i,
                        const Shape& io, int64_t is) {
    py::gil_scoped_release nogil;
    FW_DISPATCH_ALL(dt, "mode", mode_rows<scalar_t>(op(x, xo, xs), op(v, vo, vs), op(i, io, is), outer, n));
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
  register_sort_scan(m);
}

}  // namespace fw
