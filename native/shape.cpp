// Shape-family kernels that a strided copy cannot express in a few calls: repeat_interleave
// with a tensor of counts (one run per input slice, of a data-dependent length). Every
// other shape op (cat, stack, flip, roll, repeat, pad, ...) is strided copies in Python.
#include "common.h"

#include <algorithm>

namespace fw {
namespace {

// Calls f(const C* counts) with C the counts' C++ type (int32 or int64, as in PyTorch).
template <typename F>
void with_counts(int dt, uintptr_t counts, F&& f) {
  if (dt == 4) {
    f(ptr<const int32_t>(counts));
  } else if (dt == 5) {
    f(ptr<const int64_t>(counts));
  } else {
    not_implemented("repeat_interleave", dt);
  }
}

// Start of each run in the output: starts[i] = counts[0] + ... + counts[i-1].
template <typename C>
std::vector<int64_t> run_starts(const C* counts, int64_t n, int64_t stride) {
  std::vector<int64_t> starts(n + 1, 0);
  for (int64_t i = 0; i < n; i++) {
    const int64_t c = (int64_t)counts[i * stride];
    if (c < 0) fail("repeats can not be negative");
    starts[i + 1] = starts[i] + c;
  }
  return starts;
}

// dst (outer, total, inner) contiguous; src (outer, n, inner) with strides so, sn, si.
// Slice i of src is written counts[i] times in a row. E is an unsigned type of the
// element's size: the elements are only moved, never converted.
template <typename E>
void interleave(uintptr_t dst, uintptr_t src, int64_t outer, int64_t n, int64_t inner,
                int64_t so, int64_t sn, int64_t si, const std::vector<int64_t>& starts) {
  const int64_t total = starts[n];
  E* d = ptr<E>(dst);
  const E* s = ptr<const E>(src);
  // about 32K elements written per chunk of slices
  const int64_t avg_reps = std::max<int64_t>(1, total / std::max<int64_t>(1, n));
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, inner * avg_reps));
  parallel_for(0, outer * n, grain, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; t++) {
      const int64_t o = t / n, i = t % n;
      const E* sp = s + o * so + i * sn;
      E* dp = d + (o * total + starts[i]) * inner;
      const int64_t reps = starts[i + 1] - starts[i];
      for (int64_t r = 0; r < reps; r++, dp += inner) {
        if (si == 1) {
          std::memcpy(dp, sp, inner * sizeof(E));
        } else {
          for (int64_t k = 0; k < inner; k++) dp[k] = sp[k * si];
        }
      }
    }
  });
}

}  // namespace

// Sum of n strided counts (int32 or int64); raises if one is negative.
int64_t repeat_interleave_total(int dt, uintptr_t counts, int64_t n, int64_t stride) {
  int64_t total = 0;
  with_counts(dt, counts, [&](auto c) { total = run_starts(c, n, stride)[n]; });
  return total;
}

// out[starts[i] : starts[i+1]] = i, in the counts' dtype (repeat_interleave(counts)).
void repeat_interleave_index(int dt, uintptr_t counts, int64_t n, int64_t stride,
                             uintptr_t out) {
  with_counts(dt, counts, [&](auto c) {
    using C = std::remove_const_t<std::remove_pointer_t<decltype(c)>>;
    const std::vector<int64_t> starts = run_starts(c, n, stride);
    C* o = ptr<C>(out);
    parallel_for(0, n, 4096, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; i++)
        for (int64_t j = starts[i]; j < starts[i + 1]; j++) o[j] = (C)i;
    });
  });
}

// See interleave(); itemsize picks the element type (1, 2, 4 or 8 bytes).
void repeat_interleave_copy(int itemsize, uintptr_t dst, uintptr_t src, int64_t outer,
                            int64_t n, int64_t inner, int64_t so, int64_t sn, int64_t si,
                            int dt_counts, uintptr_t counts, int64_t cstride) {
  with_counts(dt_counts, counts, [&](auto c) {
    const std::vector<int64_t> starts = run_starts(c, n, cstride);
    switch (itemsize) {
      case 1: interleave<uint8_t>(dst, src, outer, n, inner, so, sn, si, starts); break;
      case 2: interleave<uint16_t>(dst, src, outer, n, inner, so, sn, si, starts); break;
      case 4: interleave<uint32_t>(dst, src, outer, n, inner, so, sn, si, starts); break;
      case 8: interleave<uint64_t>(dst, src, outer, n, inner, so, sn, si, starts); break;
      default: fail("repeat_interleave: unsupported element size " + std::to_string(itemsize));
    }
  });
}

void register_shape(py::module_& m) {
  m.def("repeat_interleave_total", &repeat_interleave_total,
        "sum of int32/int64 counts, checked non-negative");
  m.def("repeat_interleave_index", &repeat_interleave_index,
        "out[j] = i for the counts[i] positions of run i");
  m.def("repeat_interleave_copy", &repeat_interleave_copy,
        "each slice of src written counts[i] times in a row into dst");
}

}  // namespace fw
