// Pointwise kernels of the CPU backend: the Python entry points of the unary, binary and
// ternary tables (pointwise_unary.cpp, pointwise_binary.cpp, pointwise_ternary.cpp).
// The loops and the dtype dispatch live in pointwise.h.
#include "pointwise.h"

namespace fw {
namespace pw {

void not_implemented_as(const char* kernel, int dtype) {
  // NotImplementedError is a subclass of RuntimeError, as PyTorch raises it.
  std::string msg = std::string("\"") + kernel + "\" not implemented for '" +
                    dtype_name(dtype) + "'";
  PyErr_SetString(PyExc_NotImplementedError, msg.c_str());
  throw py::error_already_set();
}

namespace {

template <typename K>
py::dict names(const std::vector<K>& ks) {
  py::dict d;
  for (size_t i = 0; i < ks.size(); i++) d[ks[i].name] = (int)i;
  return d;
}

template <typename K>
const K& lookup(const std::vector<K>& ks, int code, const char* what) {
  if (code < 0 || (size_t)code >= ks.size())
    fail(std::string("internal: bad ") + what + " kernel code");
  return ks[code];
}

void check_dtype(int dt) {
  if (dt < 0 || dt > 9) fail("internal: bad dtype code " + std::to_string(dt));
}

}  // namespace
}  // namespace pw

void register_pointwise(py::module_& m) {
  using namespace pw;
  m.def("unary_ops", [] { return names(unary_kernels()); });
  m.def("binary_ops", [] { return names(binary_kernels()); });
  m.def("ternary_ops", [] { return names(ternary_kernels()); });
  m.def("unary", [](int code, int dt, int dto, uintptr_t o, uintptr_t x, const Shape& s,
                    const Shape& so, const Shape& sx, double p0, double p1, double p2) {
    check_dtype(dt);
    (void)dto;
    lookup(unary_kernels(), code, "unary").fn(dt, o, x, s, so, sx, Params{p0, p1, p2});
  });
  m.def("binary", [](int code, int dt, int dto, uintptr_t o, uintptr_t a, uintptr_t b,
                     const Shape& s, const Shape& so, const Shape& sa, const Shape& sb,
                     double p0, double p1, double p2) {
    check_dtype(dt);
    (void)dto;
    lookup(binary_kernels(), code, "binary").fn(dt, o, a, b, s, so, sa, sb,
                                                Params{p0, p1, p2});
  });
  m.def("ternary", [](int code, int dt_a, int dt, int dto, uintptr_t o, uintptr_t a,
                      uintptr_t b, uintptr_t c, const Shape& s, const Shape& so,
                      const Shape& sa, const Shape& sb, const Shape& sc, double p0) {
    check_dtype(dt);
    check_dtype(dt_a);
    (void)dto;
    lookup(ternary_kernels(), code, "ternary").fn(dt_a, dt, o, a, b, c, s, so, sa, sb, sc,
                                                  Params{p0, 0.0, 0.0});
  });
}

}  // namespace fw
