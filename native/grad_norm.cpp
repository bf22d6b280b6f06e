// Multi-tensor gradient norm and clipping (framework/_cpu/grad_norm.py): the 2-norm of every
// tensor of a float32 or float64 list in one threaded pass, and the in-place scaling of all
// of them by min(max_norm / (total + 1e-6), 1), for clip_grad_norm_. Each chunk's sum of
// squares is kept apart and the partials are summed in chunk order, so the norm does not
// depend on the number of threads.
#include <cmath>
#include <vector>

#include "multi_tensor.h"

namespace fw {
namespace {

// float32 squares are summed in float within a chunk (as torch's CPU norm accumulates),
// the partials in double.
template <typename T>
void total_norm(const Ptrs& ts, const Shape& numels, T* out) {
  const std::vector<int64_t> start = chunk_starts(numels);
  std::vector<double> partial(start.back(), 0.0);
  for_chunks(numels, [&](int64_t t, int64_t lo, int64_t hi) {
    const T* x = ptr<T>(ts[t]);
    T a[8] = {0, 0, 0, 0, 0, 0, 0, 0};  // eight lanes: the compiler vectorizes them
    int64_t i = lo;
    for (; i + 8 <= hi; i += 8)
      for (int k = 0; k < 8; k++) a[k] += x[i + k] * x[i + k];
    for (; i < hi; i++) a[0] += x[i] * x[i];
    const T s = ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
    partial[start[t] + lo / kMultiTensorChunk] = double(s);
  });
  double total = 0;
  for (double p : partial) total += p;
  *out = T(std::sqrt(total));
}

// PyTorch's clip_grads_with_norm_: coef = max_norm / (total + 1e-6) in the total's dtype
// (TT), clamped to 1 (a NaN stays NaN), then each gradient times coef in its own dtype.
template <typename T, typename TT>
void scale(const Ptrs& ts, const Shape& numels, double max_norm, const TT* total) {
  TT c = TT(max_norm) / (*total + TT(1e-6));
  if (c > TT(1)) c = TT(1);
  const T coef = T(c);
  for_chunks(numels, [&](int64_t t, int64_t lo, int64_t hi) {
    T* x = ptr<T>(ts[t]);
    for (int64_t i = lo; i < hi; i++) x[i] *= coef;
  });
}

template <typename T>
void scale_by(const Ptrs& ts, const Shape& numels, double max_norm, int total_dt,
              uintptr_t total) {
  if (total_dt == 8) scale<T, float>(ts, numels, max_norm, ptr<float>(total));
  else if (total_dt == 9) scale<T, double>(ts, numels, max_norm, ptr<double>(total));
  else fail("clip_grads_with_norm_: the total norm must be float32 or float64");
}

}  // namespace

void register_grad_norm(py::module_& m) {
  m.def("grad_total_norm", [](int dt, const Ptrs& ts, const Shape& numels, uintptr_t out) {
    check_sizes("get_total_norm", numels, {&ts});
    py::gil_scoped_release nogil;
    if (dt == 8) total_norm<float>(ts, numels, ptr<float>(out));
    else if (dt == 9) total_norm<double>(ts, numels, ptr<double>(out));
    else fail("get_total_norm: the multi-tensor norm takes float32 or float64 tensors");
  });
  m.def("grad_scale", [](int dt, const Ptrs& ts, const Shape& numels, double max_norm,
                         int total_dt, uintptr_t total) {
    check_sizes("clip_grads_with_norm_", numels, {&ts});
    py::gil_scoped_release nogil;
    if (dt == 8) scale_by<float>(ts, numels, max_norm, total_dt, total);
    else if (dt == 9) scale_by<double>(ts, numels, max_norm, total_dt, total);
    else fail("clip_grads_with_norm_: the multi-tensor scaling takes float32 or float64");
  });
}

}  // namespace fw
