// Pointwise kernels of the CPU backend: the Python entry points of the unary, binary and
// ternary tables (pointwise_unary.cpp, pointwise_binary.cpp, pointwise_ternary.cpp).
// The loops and the dtype dispatch live in pointwise.h. The entries are METH_FASTCALL
// builtins (fastcall.h) and release the GIL while a large kernel runs.
#include "pointwise.h"

#include "fastcall.h"

namespace fw {
namespace pw {

void not_implemented_as(const char* kernel, int dtype) {
  // NotImplemented becomes NotImplementedError (a RuntimeError subclass), as in PyTorch;
  // thrown as a C++ exception, it is safe without the GIL.
  throw NotImplemented(std::string("\"") + kernel + "\" not implemented for '" +
                       dtype_name(dtype) + "'");
}

namespace {

template <typename K>
py::dict names(const std::vector<K>& ks) {
  py::dict d;
  for (size_t i = 0; i < ks.size(); i++) d[ks[i].name] = (int)i;
  return d;
}

template <typename K>
const K& lookup(const std::vector<K>& ks, int64_t code, const char* what) {
  if (code < 0 || (size_t)code >= ks.size())
    fail(std::string("internal: bad ") + what + " kernel code");
  return ks[code];
}

int dtype_arg(const FastArgs& a, Py_ssize_t k) {
  const int64_t dt = a.i(k);
  if (dt < 0 || dt > 11) fail("internal: bad dtype code " + std::to_string(dt));
  return (int)dt;
}

constexpr int64_t kNoGilNumel = 1 << 16;

// unary(code, dt, dt_out, out, x, shape, so, sx, p0, p1, p2)
void unary_fast(const FastArgs& a) {
  a.expect(11);
  const auto& k = lookup(unary_kernels(), a.i(0), "unary");
  const int dt = dtype_arg(a, 1);
  const Shape s = a.shape(5), so = a.shape(6), sx = a.shape(7);
  const Params p{a.d(8), a.d(9), a.d(10)};
  const uintptr_t out = a.ptr(3), x = a.ptr(4);
  NoGil nogil(shape_numel(s) > kNoGilNumel);  // no Python object may be read after this
  k.fn(dt, out, x, s, so, sx, p);
}

// binary(code, dt, dt_out, out, a, b, shape, so, sa, sb, p0, p1, p2)
void binary_fast(const FastArgs& a) {
  a.expect(13);
  const auto& k = lookup(binary_kernels(), a.i(0), "binary");
  const int dt = dtype_arg(a, 1);
  const Shape s = a.shape(6), so = a.shape(7), sa = a.shape(8), sb = a.shape(9);
  const Params p{a.d(10), a.d(11), a.d(12)};
  const uintptr_t out = a.ptr(3), x = a.ptr(4), y = a.ptr(5);
  NoGil nogil(shape_numel(s) > kNoGilNumel);
  k.fn(dt, out, x, y, s, so, sa, sb, p);
}

// ternary(code, dt_a, dt, dt_out, out, a, b, c, shape, so, sa, sb, sc, p0)
void ternary_fast(const FastArgs& a) {
  a.expect(14);
  const auto& k = lookup(ternary_kernels(), a.i(0), "ternary");
  const int dt_a = dtype_arg(a, 1), dt = dtype_arg(a, 2);
  const Shape s = a.shape(8), so = a.shape(9), sa = a.shape(10), sb = a.shape(11),
              sc = a.shape(12);
  const Params p{a.d(13), 0.0, 0.0};
  const uintptr_t out = a.ptr(4), x = a.ptr(5), y = a.ptr(6), z = a.ptr(7);
  NoGil nogil(shape_numel(s) > kNoGilNumel);
  k.fn(dt_a, dt, out, x, y, z, s, so, sa, sb, sc, p);
}

}  // namespace
}  // namespace pw

void register_pointwise(py::module_& m) {
  using namespace pw;
  m.def("unary_ops", [] { return names(unary_kernels()); });
  m.def("binary_ops", [] { return names(binary_kernels()); });
  m.def("ternary_ops", [] { return names(ternary_kernels()); });
  def_fast<unary_fast>(m, "unary", "unary(code, dt, dt_out, out, x, shape, so, sx, p0, p1, p2)");
  def_fast<binary_fast>(m, "binary",
                        "binary(code, dt, dt_out, out, a, b, shape, so, sa, sb, p0, p1, p2)");
  def_fast<ternary_fast>(m, "ternary", "ternary(code, dt_a, dt, dt_out, out, a, b, c, shape, "
                                       "so, sa, sb, sc, p0)");
}

}  // namespace fw
