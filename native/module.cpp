// framework._C: the CPU kernels. One register_* function per kernel family, each in the
// file of that name.
#include "common.h"

namespace fw {
void register_alloc(py::module_& m);
void register_device_alloc(py::module_& m);
void register_copy(py::module_& m);
void register_pointwise(py::module_& m);
void register_reduction(py::module_& m);
void register_sort(py::module_& m);
void register_index(py::module_& m);
void register_linalg(py::module_& m);
void register_lapack(py::module_& m);
void register_random(py::module_& m);
void register_shape(py::module_& m);
void register_conv(py::module_& m);
void register_softmax(py::module_& m);
void register_pool(py::module_& m);
void register_optim(py::module_& m);
void register_amp(py::module_& m);
void register_grad_norm(py::module_& m);
void register_attention(py::module_& m);
void register_norm(py::module_& m);
void register_loss(py::module_& m);
void register_dropout(py::module_& m);
void register_embedding(py::module_& m);
void register_sampling(py::module_& m);
void register_fused_linear(py::module_& m);
void register_launch_bind(py::module_& m);
void register_engine(py::module_& m);
}  // namespace fw

PYBIND11_MODULE(_C, m) {
  m.doc() = "CPU kernels of the framework";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const fw::NotImplemented& e) {
      PyErr_SetString(PyExc_NotImplementedError, e.what());
    }
  });
  m.def("num_threads", &fw::num_threads);
  m.def("set_num_threads", &fw::set_num_threads);
  fw::register_alloc(m);
  fw::register_device_alloc(m);
  fw::register_copy(m);
  fw::register_pointwise(m);
  fw::register_reduction(m);
  fw::register_sort(m);
  fw::register_index(m);
  fw::register_linalg(m);
  fw::register_lapack(m);
  fw::register_random(m);
  fw::register_shape(m);
  fw::register_conv(m);
  fw::register_softmax(m);
  fw::register_pool(m);
  fw::register_optim(m);
  fw::register_amp(m);
  fw::register_grad_norm(m);
  fw::register_attention(m);
  fw::register_norm(m);
  fw::register_loss(m);
  fw::register_dropout(m);
  fw::register_embedding(m);
  fw::register_sampling(m);
  fw::register_fused_linear(m);
  fw::register_launch_bind(m);
  fw::register_engine(m);
}
