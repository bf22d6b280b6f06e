// Fused multi-tensor optimizer steps (framework/optim/_fused.py): one call updates every
// tensor of a list in place (multi_tensor.h). The tensors are contiguous and share one float
// dtype. 16-bit floats compute in float, float and double in themselves.
//
// GradScaler (PyTorch's contract for fused steps): with a grad_scale, each gradient is
// divided by it and the unscaled value is written back into the gradient; when found_inf
// is 1 the call returns before touching anything.
#include <type_traits>

#include "multi_tensor.h"

namespace fw {
namespace {

// Calls f(std::true_type{}) or f(std::false_type{}): a runtime flag made a template one,
// so the inner loops stay branch-free.
template <typename F>
void with_flag(bool b, F&& f) {
  if (b)
    f(std::true_type{});
  else
    f(std::false_type{});
}
#define FW_FLAG(x) decltype(x)::value

// The gradient as the update sees it: unscaled (and written back unscaled) with SCALE,
// then negated for maximize (sign = -1).
template <bool SCALE, typename T, typename C>
inline C load_grad(T* g, int64_t i, C scale, C sign) {
  C gi = C(g[i]);
  if (SCALE) {
    gi = gi / scale;
    g[i] = T(gi);
  }
  return sign * gi;
}

// The loop, branch-free for the compiler to vectorize: maximize is a sign, the decoupled
// decay a factor (1 when off); L2 decay, amsgrad and unscaling are template flags.
template <typename T, bool L2, bool AMS, bool SCALE>
void adam_loop(T* p, T* g, T* m, T* v, T* vmax, int64_t lo, int64_t hi, acc_t<T> scale,
               acc_t<T> sign, acc_t<T> decay, acc_t<T> wd, acc_t<T> b1, acc_t<T> b2,
               acc_t<T> one_b1, acc_t<T> one_b2, acc_t<T> eps, acc_t<T> step_size,
               acc_t<T> bc2s) {
  using C = acc_t<T>;
  for (int64_t i = lo; i < hi; i++) {
    C pi = C(p[i]);
    C gi = load_grad<SCALE>(g, i, scale, sign);
    if (L2) gi = gi + wd * pi;
    pi = pi * decay;
    C mi = b1 * C(m[i]) + one_b1 * gi;
    C vi = b2 * C(v[i]) + one_b2 * gi * gi;
    m[i] = T(mi);
    v[i] = T(vi);
    C den = vi;
    if (AMS) {
      C old = C(vmax[i]);
      den = old > vi ? old : vi;
      vmax[i] = T(den);
    }
    den = std::sqrt(den) / bc2s + eps;
    p[i] = T(pi - step_size * mi / den);
  }
}

template <typename T>
void adam(const Ptrs& ps, const Ptrs& gs, const Ptrs& ms, const Ptrs& vs, const Ptrs& vmaxs,
          const Shape& numels, const std::vector<double>& step_sizes,
          const std::vector<double>& bc2_sqrts, double lr, double beta1, double beta2,
          double eps, double wd, bool decoupled, bool amsgrad, bool maximize,
          const float* scale) {
  using C = acc_t<T>;
  const C decay = C(wd != 0 && decoupled ? 1 - lr * wd : 1.0);
  with_flag(wd != 0 && !decoupled, [&](auto l2) {
    with_flag(amsgrad, [&](auto ams) {
      with_flag(scale != nullptr, [&](auto sc) {
        for_chunks(numels, [&](int64_t t, int64_t lo, int64_t hi) {
          adam_loop<T, FW_FLAG(l2), FW_FLAG(ams), FW_FLAG(sc)>(
              ptr<T>(ps[t]), ptr<T>(gs[t]), ptr<T>(ms[t]), ptr<T>(vs[t]),
              amsgrad ? ptr<T>(vmaxs[t]) : nullptr, lo, hi, C(scale ? *scale : 1.f),
              C(maximize ? -1 : 1), decay, C(wd), C(beta1), C(beta2), C(1 - beta1),
              C(1 - beta2), C(eps), C(step_sizes[t]), C(bc2_sqrts[t]));
        });
      });
    });
  });
}

// Branch-free like adam_loop: maximize is a sign; the momentum mode (0: none, 1: first
// step, buf = grad; 2: buf = momentum buf + (1 - dampening) grad), nesterov and unscaling
// are flags.
template <typename T, int BUF, bool NESTEROV, bool SCALE>
void sgd_loop(T* p, T* g, T* buf, int64_t lo, int64_t hi, acc_t<T> scale, acc_t<T> sign,
              acc_t<T> lr, acc_t<T> mom, acc_t<T> damp, acc_t<T> wd, bool has_wd) {
  using C = acc_t<T>;
  for (int64_t i = lo; i < hi; i++) {
    C pi = C(p[i]);
    C gi = load_grad<SCALE>(g, i, scale, sign);
    if (has_wd) gi = gi + wd * pi;
    if (BUF != 0) {
      C bi = BUF == 1 ? gi : mom * C(buf[i]) + damp * gi;
      buf[i] = T(bi);
      gi = NESTEROV ? gi + mom * bi : bi;
    }
    p[i] = T(pi - lr * gi);
  }
}

template <typename T, int BUF>
void sgd(const Ptrs& ps, const Ptrs& gs, const Ptrs& bufs, const Shape& numels, double lr,
         double momentum, double dampening, double wd, bool nesterov, bool maximize,
         const float* scale) {
  using C = acc_t<T>;
  with_flag(nesterov && BUF != 0, [&](auto nest) {
    with_flag(scale != nullptr, [&](auto sc) {
      for_chunks(numels, [&](int64_t t, int64_t lo, int64_t hi) {
        sgd_loop<T, BUF, FW_FLAG(nest), FW_FLAG(sc)>(
            ptr<T>(ps[t]), ptr<T>(gs[t]), BUF ? ptr<T>(bufs[t]) : nullptr, lo, hi,
            C(scale ? *scale : 1.f), C(maximize ? -1 : 1), C(lr), C(momentum),
            C(1 - dampening), C(wd), wd != 0);
      });
    });
  });
}

// RMSprop, PyTorch's single-tensor formulas: v = alpha v + (1 - alpha) g^2; centered:
// g_avg = lerp(g_avg, g, 1 - alpha), den = sqrt(v - g_avg^2) + eps, else sqrt(v) + eps;
// momentum: buf = momentum buf + g / den, p -= lr buf; else p -= lr g / den.
template <typename T, bool CENTERED, bool MOM, bool SCALE>
void rmsprop_loop(T* p, T* g, T* sq, T* gavg, T* buf, int64_t lo, int64_t hi,
                  acc_t<T> scale, acc_t<T> sign, acc_t<T> lr, acc_t<T> alpha,
                  acc_t<T> one_alpha, acc_t<T> eps, acc_t<T> wd, acc_t<T> mom, bool has_wd) {
  using C = acc_t<T>;
  for (int64_t i = lo; i < hi; i++) {
    C pi = C(p[i]);
    C gi = load_grad<SCALE>(g, i, scale, sign);
    if (has_wd) gi = gi + wd * pi;
    C vi = alpha * C(sq[i]) + one_alpha * gi * gi;
    sq[i] = T(vi);
    C den;
    if (CENTERED) {
      C ai = C(gavg[i]);
      ai = ai + one_alpha * (gi - ai);
      gavg[i] = T(ai);
      den = std::sqrt(vi - ai * ai) + eps;
    } else {
      den = std::sqrt(vi) + eps;
    }
    if (MOM) {
      C bi = mom * C(buf[i]) + gi / den;
      buf[i] = T(bi);
      p[i] = T(pi - lr * bi);
    } else {
      p[i] = T(pi - lr * (gi / den));
    }
  }
}

template <typename T>
void rmsprop(const Ptrs& ps, const Ptrs& gs, const Ptrs& sqs, const Ptrs& gavgs,
             const Ptrs& bufs, const Shape& numels, double lr, double alpha, double eps,
             double wd, double momentum, bool centered, bool maximize, const float* scale) {
  using C = acc_t<T>;
  const bool mom = momentum > 0;
  with_flag(centered, [&](auto cen) {
    with_flag(mom, [&](auto mo) {
      with_flag(scale != nullptr, [&](auto sc) {
        for_chunks(numels, [&](int64_t t, int64_t lo, int64_t hi) {
          rmsprop_loop<T, FW_FLAG(cen), FW_FLAG(mo), FW_FLAG(sc)>(
              ptr<T>(ps[t]), ptr<T>(gs[t]), ptr<T>(sqs[t]),
              centered ? ptr<T>(gavgs[t]) : nullptr, mom ? ptr<T>(bufs[t]) : nullptr, lo,
              hi, C(scale ? *scale : 1.f), C(maximize ? -1 : 1), C(lr), C(alpha),
              C(1 - alpha), C(eps), C(wd), C(momentum), wd != 0);
        });
      });
    });
  });
}

// Adagrad: s += g^2; p -= clr g / (sqrt(s) + eps), clr (lr / (1 + (step - 1) lr_decay))
// per tensor.
template <typename T, bool SCALE>
void adagrad_loop(T* p, T* g, T* s, int64_t lo, int64_t hi, acc_t<T> scale, acc_t<T> sign,
                  acc_t<T> clr, acc_t<T> eps, acc_t<T> wd, bool has_wd) {
  using C = acc_t<T>;
  for (int64_t i = lo; i < hi; i++) {
    C pi = C(p[i]);
    C gi = load_grad<SCALE>(g, i, scale, sign);
    if (has_wd) gi = gi + wd * pi;
    C si = C(s[i]) + gi * gi;
    s[i] = T(si);
    p[i] = T(pi - clr * (gi / (std::sqrt(si) + eps)));
  }
}

template <typename T>
void adagrad(const Ptrs& ps, const Ptrs& gs, const Ptrs& sums, const Shape& numels,
             const std::vector<double>& clrs, double eps, double wd, bool maximize,
             const float* scale) {
  using C = acc_t<T>;
  with_flag(scale != nullptr, [&](auto sc) {
    for_chunks(numels, [&](int64_t t, int64_t lo, int64_t hi) {
      adagrad_loop<T, FW_FLAG(sc)>(ptr<T>(ps[t]), ptr<T>(gs[t]), ptr<T>(sums[t]), lo, hi,
                                   C(scale ? *scale : 1.f), C(maximize ? -1 : 1),
                                   C(clrs[t]), C(eps), C(wd), wd != 0);
    });
  });
}

// The grad_scale to divide by (nullptr: none), and whether found_inf says to skip the
// step: PyTorch's fused kernels skip exactly when found_inf == 1.
const float* scale_of(uintptr_t grad_scale) { return ptr<const float>(grad_scale); }
bool skip(uintptr_t found_inf) { return found_inf != 0 && *ptr<const float>(found_inf) == 1.f; }

}  // namespace

void register_optim(py::module_& m) {
  m.def("fused_adam", [](int dt, const Ptrs& ps, const Ptrs& gs, const Ptrs& ms, const Ptrs& vs,
                         const Ptrs& vmaxs, const Shape& numels,
                         const std::vector<double>& step_sizes,
                         const std::vector<double>& bc2_sqrts, double lr, double beta1,
                         double beta2, double eps, double wd, bool decoupled, bool amsgrad,
                         bool maximize, uintptr_t grad_scale, uintptr_t found_inf) {
    check_sizes("fused optimizer step", numels, {&ps, &gs, &ms, &vs});
    if (amsgrad) check_sizes("fused optimizer step", numels, {&vmaxs});
    if (step_sizes.size() != numels.size() || bc2_sqrts.size() != numels.size())
      fail("fused optimizer step: tensor lists differ in length");
    if (skip(found_inf)) return;
    py::gil_scoped_release nogil;
    FW_DISPATCH_FLOAT(dt, "_fused_adam", {
      adam<scalar_t>(ps, gs, ms, vs, vmaxs, numels, step_sizes, bc2_sqrts, lr, beta1, beta2,
                     eps, wd, decoupled, amsgrad, maximize, scale_of(grad_scale));
    });
  });
  m.def("fused_sgd", [](int dt, const Ptrs& ps, const Ptrs& gs, const Ptrs& bufs,
                        const Shape& numels, double lr, double momentum, double dampening,
                        double wd, bool nesterov, bool maximize, bool first,
                        uintptr_t grad_scale, uintptr_t found_inf) {
    check_sizes("fused optimizer step", numels, {&ps, &gs});
    if (momentum != 0) check_sizes("fused optimizer step", numels, {&bufs});
    if (skip(found_inf)) return;
    py::gil_scoped_release nogil;
    const float* scale = scale_of(grad_scale);
    FW_DISPATCH_FLOAT(dt, "_fused_sgd", {
      if (momentum == 0)
        sgd<scalar_t, 0>(ps, gs, bufs, numels, lr, momentum, dampening, wd, nesterov,
                         maximize, scale);
      else if (first)
        sgd<scalar_t, 1>(ps, gs, bufs, numels, lr, momentum, dampening, wd, nesterov,
                         maximize, scale);
      else
        sgd<scalar_t, 2>(ps, gs, bufs, numels, lr, momentum, dampening, wd, nesterov,
                         maximize, scale);
    });
  });
  m.def("fused_rmsprop", [](int dt, const Ptrs& ps, const Ptrs& gs, const Ptrs& sqs,
                            const Ptrs& gavgs, const Ptrs& bufs, const Shape& numels,
                            double lr, double alpha, double eps, double wd, double momentum,
                            bool centered, bool maximize, uintptr_t grad_scale,
                            uintptr_t found_inf) {
    check_sizes("fused optimizer step", numels, {&ps, &gs, &sqs});
    if (centered) check_sizes("fused optimizer step", numels, {&gavgs});
    if (momentum > 0) check_sizes("fused optimizer step", numels, {&bufs});
    if (skip(found_inf)) return;
    py::gil_scoped_release nogil;
    FW_DISPATCH_FLOAT(dt, "_fused_rmsprop", {
      rmsprop<scalar_t>(ps, gs, sqs, gavgs, bufs, numels, lr, alpha, eps, wd, momentum,
                        centered, maximize, scale_of(grad_scale));
    });
  });
  m.def("fused_adagrad", [](int dt, const Ptrs& ps, const Ptrs& gs, const Ptrs& sums,
                            const Shape& numels, const std::vector<double>& clrs, double eps,
                            double wd, bool maximize, uintptr_t grad_scale,
                            uintptr_t found_inf) {
    check_sizes("fused optimizer step", numels, {&ps, &gs, &sums});
    if (clrs.size() != numels.size())
      fail("fused optimizer step: tensor lists differ in length");
    if (skip(found_inf)) return;
    py::gil_scoped_release nogil;
    FW_DISPATCH_FLOAT(dt, "_fused_adagrad", {
      adagrad<scalar_t>(ps, gs, sums, numels, clrs, eps, wd, maximize, scale_of(grad_scale));
    });
  });
}

}  // namespace fw
