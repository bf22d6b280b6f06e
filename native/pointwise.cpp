// Pointwise kernels of the CPU backend: the Python entry points of the unary, binary and
// ternary tables (pointwise_unary.cpp, pointwise_binary.cpp, pointwise_ternary.cpp).
// The loops and the dtype dispatch live in pointwise.h.
#include "pointwise.h"
#include "fastcall.h"

namespace fw {
namespace pw {

void not_implemented_as(const char* kernel, int dtype) {
  // NotImplementedError, as PyTorch raises it (thrown as C++: the GIL may be released)
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

namespace pw {
namespace {

constexpr int64_t kReleaseGil = 1 << 16;  // elements; below this the GIL round trip costs more

// unary(code, dt, dt_out, out, x, shape, out_strides, x_strides, p0, p1, p2)
void unary_fast(const FastArgs& a) {
  a.expect(11);
  const int dt = (int)a.i(1);
  check_dtype(dt);
  const auto& k = lookup(unary_kernels(), (int)a.i(0), "unary");
  Shape s = a.shape(5), so = a.shape(6), sx = a.shape(7);
  Params p{a.d(8), a.d(9), a.d(10)};
  NoGil nogil(shape_numel(s) > kReleaseGil);
  k.fn(dt, a.ptr(3), a.ptr(4), s, so, sx, p);
}

// binary(code, dt, dt_out, out, a, b, shape, out_strides, a_strides, b_strides, p0, p1, p2)
void binary_fast(const FastArgs& a) {
  a.expect(13);
  const int dt = (int)a.i(1);
  check_dtype(dt);
  const auto& k = lookup(binary_kernels(), (int)a.i(0), "binary");
  Shape s = a.shape(6), so = a.shape(7), sa = a.shape(8), sb = a.shape(9);
  Params p{a.d(10), a.d(11), a.d(12)};
  NoGil nogil(shape_numel(s) > kReleaseGil);
  k.fn(dt, a.ptr(3), a.ptr(4), a.ptr(5), s, so, sa, sb, p);
}

// ternary(code, dt_a, dt, dt_out, out, a, b, c, shape, so, sa, sb, sc, p0)
void ternary_fast(const FastArgs& a) {
  a.expect(14);
  const int dt_a = (int)a.i(1), dt = (int)a.i(2);
  check_dtype(dt);
  check_dtype(dt_a);
  const auto& k = lookup(ternary_kernels(), (int)a.i(0), "ternary");
  Shape s = a.shape(8), so = a.shape(9), sa = a.shape(10), sb = a.shape(11), sc = a.shape(12);
  Params p{a.d(13), 0.0, 0.0};
  NoGil nogil(shape_numel(s) > kReleaseGil);
  k.fn(dt_a, dt, a.ptr(4), a.ptr(5), a.ptr(6), a.ptr(7), s, so, sa, sb, sc, p);
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
  def_fast<ternary_fast>(m, "ternary",
                         "ternary(code, dt_a, dt, dt_out, out, a, b, c, shape, so, sa, sb, sc, p0)");
}

}  // namespace fw
