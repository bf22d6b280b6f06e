// Host memory for CPU tensors: 64-byte aligned buffers that expose the buffer protocol, so
// NumPy arrays can share them (Tensor.numpy()). A plain CPython type rather than a pybind11
// class: every CPU op allocates one, and this keeps that under 100 ns.
#include "common.h"
#include "fastcall.h"

#include <structmember.h>

#include <cstdlib>

#include <sys/mman.h>

namespace fw {
namespace {

struct HostBuffer {
  PyObject_HEAD
  void* data;
  Py_ssize_t nbytes;
  unsigned long long ptr;  // the address, readable from Python as .ptr
};

void hb_dealloc(PyObject* self) {
  std::free(reinterpret_cast<HostBuffer*>(self)->data);
  Py_TYPE(self)->tp_free(self);
}

int hb_getbuffer(PyObject* self, Py_buffer* view, int flags) {
  auto* b = reinterpret_cast<HostBuffer*>(self);
  return PyBuffer_FillInfo(view, self, b->data, b->nbytes, 0, flags);
}

PyBufferProcs hb_as_buffer = {hb_getbuffer, nullptr};

PyMemberDef hb_members[] = {
    {"ptr", T_ULONGLONG, offsetof(HostBuffer, ptr), READONLY, "address of the first byte"},
    {"nbytes", T_PYSSIZET, offsetof(HostBuffer, nbytes), READONLY, "size in bytes"},
    {nullptr, 0, 0, 0, nullptr}};

PyTypeObject HostBufferType = [] {
  PyTypeObject t{PyVarObject_HEAD_INIT(nullptr, 0)};
  t.tp_name = "framework._C.HostBuffer";
  t.tp_basicsize = sizeof(HostBuffer);
  t.tp_dealloc = hb_dealloc;
  t.tp_as_buffer = &hb_as_buffer;
  t.tp_flags = Py_TPFLAGS_DEFAULT;
  t.tp_doc = "64-byte aligned host memory of a CPU storage";
  t.tp_members = hb_members;
  return t;
}();

// host_alloc(nbytes) -> HostBuffer (uninitialised)
PyObject* host_alloc(const FastArgs& a) {
  a.expect(1);
  int64_t n = a.i(0);
  if (n < 0) throw std::invalid_argument("host_alloc: negative size");
  size_t sz = ((size_t)(n > 0 ? n : 1) + 63) & ~(size_t)63;
  void* p = std::aligned_alloc(64, sz);
  if (!p) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  // Like NumPy: big buffers on transparent huge pages take far fewer page faults and TLB
  // misses (a 4M-float add runs ~15% faster; THP is usually in "madvise" mode).
  if (sz >= ((size_t)4 << 20)) {
    const uintptr_t start = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
    const uintptr_t end = (uintptr_t)p + sz;
    if (end > start) madvise((void*)start, end - start, MADV_HUGEPAGE);
  }
#endif
  auto* b = PyObject_New(HostBuffer, &HostBufferType);
  if (!b) { std::free(p); throw py::error_already_set(); }
  b->data = p;
  b->nbytes = (Py_ssize_t)n;
  b->ptr = (unsigned long long)(uintptr_t)p;
  return reinterpret_cast<PyObject*>(b);
}

}  // namespace

void register_alloc(py::module_& m) {
  if (PyType_Ready(&HostBufferType) < 0) throw py::error_already_set();
  Py_INCREF(&HostBufferType);
  m.attr("HostBuffer") = py::reinterpret_borrow<py::object>((PyObject*)&HostBufferType);
  def_fast_ret<host_alloc>(m, "host_alloc", "host_alloc(nbytes) -> HostBuffer");
}

}  // namespace fw
