// GradScaler's kernels (framework/amp/grad_scaler.py): unscale every gradient of a list in
// place while looking for infs and NaNs (one threaded loop over all tensors, multi_tensor.h),
// and the update of the scale and its growth tracker that ends an iteration.
#include <atomic>
#include <cmath>

#include "multi_tensor.h"

namespace fw {
namespace {

// g *= inv_scale over every tensor; found_inf = 1 when an element was inf or NaN. 16-bit
// floats and float compute in float, double in double (inv_scale is a float32 value). Each
// chunk keeps its own flag, so found_inf is written once, by this thread, after the loop.
template <typename T>
void unscale(const Ptrs& gs, const Shape& numels, float* found_inf, float inv_scale) {
  using C = acc_t<T>;
  const C inv = C(inv_scale);
  std::atomic<bool> any{false};
  for_chunks(numels, [&](int64_t t, int64_t lo, int64_t hi) {
    T* g = ptr<T>(gs[t]);
    bool bad = false;
    for (int64_t i = lo; i < hi; i++) {
      C v = C(g[i]);
      bad |= !std::isfinite(v);
      g[i] = T(v * inv);
    }
    if (bad) any.store(true, std::memory_order_relaxed);
  });
  if (any.load()) *found_inf = 1.0f;
}

// PyTorch's rule: an inf/NaN backs the scale off and restarts the count of good steps;
// growth_interval good steps in a row grow it (unless the grown scale would overflow).
// The products are taken in double and rounded to float, as PyTorch's CPU kernel does.
void update_scale(float* scale, int32_t* tracker, const float* found_inf, double growth,
                  double backoff, int64_t interval) {
  if (*found_inf != 0.0f) {
    *scale = float(double(*scale) * backoff);
    *tracker = 0;
    return;
  }
  int64_t good = int64_t(*tracker) + 1;
  if (good == interval) {
    float grown = float(double(*scale) * growth);
    if (std::isfinite(grown)) *scale = grown;
    *tracker = 0;
  } else {
    *tracker = int32_t(good);
  }
}

}  // namespace

void register_amp(py::module_& m) {
  m.def("amp_unscale", [](int dt, const Ptrs& gs, const Shape& numels, uintptr_t found_inf,
                          uintptr_t inv_scale) {
    check_sizes("_amp_foreach_non_finite_check_and_unscale_", numels, {&gs});
    const float inv = *ptr<float>(inv_scale);
    py::gil_scoped_release nogil;
    FW_DISPATCH_FLOAT(dt, "_amp_foreach_non_finite_check_and_unscale", {
      unscale<scalar_t>(gs, numels, ptr<float>(found_inf), inv);
    });
  });
  m.def("amp_update_scale", [](uintptr_t scale, uintptr_t tracker, uintptr_t found_inf,
                               double growth, double backoff, int64_t interval) {
    update_scale(ptr<float>(scale), ptr<int32_t>(tracker), ptr<float>(found_inf), growth,
                 backoff, interval);
  });
}

}  // namespace fw
