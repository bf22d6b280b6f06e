// Dropout kernels of the CPU backend: out = x * keep * scale, and the fused residual add
// out = r + x * keep * scale, in one pass over contiguous buffers of n elements.
//
// The keep mask is never stored: element i uses 32-bit word i % 4 of the Philox 4x32-10
// counter offset + i / 4 (key = seed), the same words as Triton's
// `tl.randint4x(seed, offset + i / 4)`, and is kept when that word is >= threshold
// (threshold = round(p * 2^32), so an element is dropped with probability p up to 2^-33).
// One counter serves four elements, so a call uses ceil(n / 4) counters. The mask depends
// only on (seed, offset, i), never on threads or chunking, and framework/kernels/dropout.py
// computes the very same mask, so cpu and cuda agree bit for bit on the mask.
//
// The backward of dropout is the same computation on the incoming gradient with the same
// (seed, offset): the launcher calls this kernel without a residual.
//
// Arithmetic is in float for 16-bit floats and float32, in double for float64, rounded once
// to the output type: x * f, and with a residual fma(x, f, r) (f = scale or 0), written as
// an explicit fma here and in Triton so that no compiler's contraction choice changes a
// bit and both devices give the same results.
#include <algorithm>

#include "common.h"
#include "philox.h"

namespace fw {
namespace {

constexpr int kGroups = 64;          // Philox counters per inner block (256 elements)
constexpr int64_t kGrain = 4096;     // counters per parallel chunk at least

// out[i] = (r[i] +) x[i] * (word(i) >= thr ? scale : 0) for i in [0, n).
template <typename T, bool kResidual>
void dropout_run(const T* x, const T* r, T* out, int64_t n, uint64_t seed, uint64_t offset,
                 uint64_t thr, double scale_d) {
  using A = acc_t<T>;
  const A scale = (A)scale_d;
  const int64_t groups = (n + 3) / 4;
  // chunks are whole counters, so the split between threads never changes a word's use
  parallel_for(0, groups, kGrain, [&](int64_t gb, int64_t ge) {
    uint32_t w[4 * kGroups];
    for (int64_t g = gb; g < ge; g += kGroups) {
      const int m = (int)std::min<int64_t>(kGroups, ge - g);
      for (int k = 0; k < m; k++) {
        const Words ws = philox(seed, offset + (uint64_t)(g + k));
        w[4 * k] = ws.w0;
        w[4 * k + 1] = ws.w1;
        w[4 * k + 2] = ws.w2;
        w[4 * k + 3] = ws.w3;
      }
      const int64_t i0 = 4 * g;
      const int cnt = (int)std::min<int64_t>(4 * (int64_t)m, n - i0);
      const T* xs = x + i0;
      T* os = out + i0;
      if constexpr (kResidual) {
        const T* rs = r + i0;
        for (int j = 0; j < cnt; j++) {
          const A f = (uint64_t)w[j] >= thr ? scale : A(0);
          os[j] = (T)std::fma((A)xs[j], f, (A)rs[j]);
        }
      } else {
        for (int j = 0; j < cnt; j++) {
          const A f = (uint64_t)w[j] >= thr ? scale : A(0);
          os[j] = (T)((A)xs[j] * f);
        }
      }
    }
  });
}

// The launcher's entry: x, residual (0 for none) and out contiguous, n elements each, of
// the floating dtype dt.
void dropout(int dt, uintptr_t out, uintptr_t x, uintptr_t residual, int64_t n, uint64_t seed,
             uint64_t offset, uint64_t threshold, double scale) {
  if (n < 0) fail("dropout: negative element count " + std::to_string(n));
  if (threshold > ((uint64_t)1 << 32))
    fail("dropout: threshold " + std::to_string(threshold) + " is above 2^32");
  if (n == 0) return;
  FW_DISPATCH_FLOAT(dt, "dropout", {
    const scalar_t* xp = ptr<const scalar_t>(x);
    scalar_t* op = ptr<scalar_t>(out);
    if (residual) {
      dropout_run<scalar_t, true>(xp, ptr<const scalar_t>(residual), op, n, seed, offset,
                                  threshold, scale);
    } else {
      dropout_run<scalar_t, false>(xp, nullptr, op, n, seed, offset, threshold, scale);
    }
  });
}

}  // namespace

void register_dropout(py::module_& m) {
  m.def("dropout", &dropout,
        "out = (residual +) x * keep * scale over n contiguous elements; keep: Philox word "
        "i % 4 of counter offset + i / 4 is >= threshold");
}

}  // namespace fw
