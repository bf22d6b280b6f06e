// Fused multi-tensor optimizer steps (framework/optim/_fused.py): one call updates every
// tensor of a list in place (multi_tensor.h). The tensors are contiguous and share one float
// dtype. 16-bit floats compute in float, float and double in themselves.
#include "multi_tensor.h"

namespace fw {
namespace {

// The per-element loop, branch-free for the compiler to vectorize: maximize is a sign, the
// decoupled decay a factor (1 when off); L2 decay and amsgrad are template flags.
template <typename T, bool L2, bool AMS>
void adam_loop(T* p, const T* g, T* m, T* v, T* vmax, int64_t lo, int64_t hi, acc_t<T> sign,
               acc_t<T> decay, acc_t<T> wd, acc_t<T> b1, acc_t<T> b2, acc_t<T> one_b1,
               acc_t<T> one_b2, acc_t<T> eps, acc_t<T> step_size, acc_t<T> bc2s) {
  using C = acc_t<T>;
  for (int64_t i = lo; i < hi; i++) {
    C pi = C(p[i]);
    C gi = sign * C(g[i]);
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
          double eps, double wd, bool decoupled, bool amsgrad, bool maximize) {
  using C = acc_t<T>;
  const bool l2 = wd != 0 && !decoupled;
  const C decay = C(wd != 0 && decoupled ? 1 - lr * wd : 1.0);
  const C sign = C(maximize ? -1 : 1);
  auto loop = l2 ? (amsgrad ? adam_loop<T, true, true> : adam_loop<T, true, false>)
                 : (amsgrad ? adam_loop<T, false, true> : adam_loop<T, false, false>);
  for_chunks(numels, [&](int64_t t, int64_t lo, int64_t hi) {
    loop(ptr<T>(ps[t]), ptr<T>(gs[t]), ptr<T>(ms[t]), ptr<T>(vs[t]),
         amsgrad ? ptr<T>(vmaxs[t]) : nullptr, lo, hi, sign, decay, C(wd), C(beta1),
         C(beta2), C(1 - beta1), C(1 - beta2), C(eps), C(step_sizes[t]), C(bc2_sqrts[t]));
  });
}

// Branch-free like adam_loop: maximize is a sign; the momentum mode (0: none, 1: first
// step, buf = grad; 2: buf = momentum buf + (1 - dampening) grad) and nesterov are flags.
template <typename T, int BUF, bool NESTEROV>
void sgd_loop(T* p, const T* g, T* buf, int64_t lo, int64_t hi, acc_t<T> sign, acc_t<T> lr,
              acc_t<T> mom, acc_t<T> damp, acc_t<T> wd, bool has_wd) {
  using C = acc_t<T>;
  for (int64_t i = lo; i < hi; i++) {
    C pi = C(p[i]);
    C gi = sign * C(g[i]);
    if (has_wd) gi = gi + wd * pi;
    if (BUF != 0) {
      C bi = BUF == 1 ? gi : mom * C(buf[i]) + damp * gi;
      buf[i] = T(bi);
      gi = NESTEROV ? gi + mom * bi : bi;
    }
    p[i] = T(pi - lr * gi);
  }
}

template <typename T>
void sgd(const Ptrs& ps, const Ptrs& gs, const Ptrs& bufs, const Shape& numels, double lr,
         double momentum, double dampening, double wd, bool nesterov, bool maximize,
         bool first) {
  using C = acc_t<T>;
  const int mode = momentum == 0 ? 0 : (first ? 1 : 2);
  auto loop = mode == 0 ? sgd_loop<T, 0, false>
              : mode == 1 ? (nesterov ? sgd_loop<T, 1, true> : sgd_loop<T, 1, false>)
                          : (nesterov ? sgd_loop<T, 2, true> : sgd_loop<T, 2, false>);
  for_chunks(numels, [&](int64_t t, int64_t lo, int64_t hi) {
    loop(ptr<T>(ps[t]), ptr<T>(gs[t]), mode ? ptr<T>(bufs[t]) : nullptr, lo, hi,
         C(maximize ? -1 : 1), C(lr), C(momentum), C(1 - dampening), C(wd), wd != 0);
  });
}

}  // namespace

void register_optim(py::module_& m) {
  m.def("fused_adam", [](int dt, const Ptrs& ps, const Ptrs& gs, const Ptrs& ms, const Ptrs& vs,
                         const Ptrs& vmaxs, const Shape& numels,
                         const std::vector<double>& step_sizes,
                         const std::vector<double>& bc2_sqrts, double lr, double beta1,
                         double beta2, double eps, double wd, bool decoupled, bool amsgrad,
                         bool maximize) {
    check_sizes("fused optimizer step", numels, {&ps, &gs, &ms, &vs});
    if (amsgrad) check_sizes("fused optimizer step", numels, {&vmaxs});
    if (step_sizes.size() != numels.size() || bc2_sqrts.size() != numels.size())
      fail("fused optimizer step: tensor lists differ in length");
    py::gil_scoped_release nogil;
    FW_DISPATCH_FLOAT(dt, "_fused_adam", {
      adam<scalar_t>(ps, gs, ms, vs, vmaxs, numels, step_sizes, bc2_sqrts, lr, beta1, beta2,
                     eps, wd, decoupled, amsgrad, maximize);
    });
  });
  m.def("fused_sgd", [](int dt, const Ptrs& ps, const Ptrs& gs, const Ptrs& bufs,
                        const Shape& numels, double lr, double momentum, double dampening,
                        double wd, bool nesterov, bool maximize, bool first) {
    check_sizes("fused optimizer step", numels, {&ps, &gs});
    if (momentum != 0) check_sizes("fused optimizer step", numels, {&bufs});
    py::gil_scoped_release nogil;
    FW_DISPATCH_FLOAT(dt, "_fused_sgd", {
      sgd<scalar_t>(ps, gs, bufs, numels, lr, momentum, dampening, wd, nesterov, maximize,
                    first);
    });
  });
}

}  // namespace fw
