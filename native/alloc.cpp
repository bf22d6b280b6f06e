// Host memory for CPU tensors: 64-byte aligned buffers that expose the buffer protocol, so
// NumPy arrays can share them (Tensor.numpy()). A plain CPython type rather than a pybind11
// class: every CPU op allocates one, and this keeps that under 100 ns.
//
// Freed blocks of 128 KiB and more are kept in a small cache keyed by size (up to a total of
// FRAMEWORK_CPU_CACHE_MB, default 256): a chain of ops on large tensors then reuses warm
// pages instead of taking fresh page faults on every temporary, as a GPU caching allocator
// does. (glibc maps blocks this size on their own and unmaps them when freed, or trims
// them off the heap: a 256 KiB GEMM output took twice as long with those page faults.)
// Small blocks go straight back to malloc, which is fast for them.
#include "common.h"
#include "fastcall.h"

#include <structmember.h>

#include <cstdlib>
#include <map>
#include <mutex>

#include <sys/mman.h>

namespace fw {
namespace {

struct HostBuffer {
  PyObject_HEAD
  void* data;
  Py_ssize_t nbytes;
  unsigned long long ptr;  // the address, readable from Python as .ptr
};

constexpr size_t kCacheMin = (size_t)128 << 10;

struct BlockCache {
  std::mutex mu;
  std::multimap<size_t, void*> blocks;  // rounded size -> block
  size_t bytes = 0;
  size_t limit = 0;
  uint64_t hits = 0, misses = 0;

  BlockCache() {
    const char* s = std::getenv("FRAMEWORK_CPU_CACHE_MB");
    limit = (size_t)(s ? std::atoll(s) : 256) << 20;
  }
  void* take(size_t sz) {
    std::lock_guard<std::mutex> g(mu);
    auto it = blocks.find(sz);
    if (it == blocks.end()) { misses++; return nullptr; }
    void* p = it->second;
    blocks.erase(it);
    bytes -= sz;
    hits++;
    return p;
  }
  bool give(void* p, size_t sz) {
    std::lock_guard<std::mutex> g(mu);
    if (bytes + sz > limit) return false;
    blocks.emplace(sz, p);
    bytes += sz;
    return true;
  }
  void clear() {
    std::lock_guard<std::mutex> g(mu);
    for (auto& kv : blocks) std::free(kv.second);
    blocks.clear();
    bytes = 0;
  }
};

BlockCache& cache() {
  static BlockCache* c = new BlockCache();  // leaked: blocks may be freed at exit in any order
  return *c;
}

// Size actually allocated for a request: 64-byte multiple; cached sizes round to 16 KiB
// (64 KiB from 1 MiB) so that tensors of nearly the same size share blocks.
size_t block_size(int64_t n) {
  size_t sz = ((size_t)(n > 0 ? n : 1) + 63) & ~(size_t)63;
  if (sz >= ((size_t)1 << 20)) return (sz + 65535) & ~(size_t)65535;
  if (sz >= kCacheMin) return (sz + 16383) & ~(size_t)16383;
  return sz;
}

void hb_dealloc(PyObject* self) {
  auto* b = reinterpret_cast<HostBuffer*>(self);
  size_t sz = block_size(b->nbytes);
  if (!(sz >= kCacheMin && cache().give(b->data, sz))) std::free(b->data);
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

// A new block from malloc (after emptying the cache if memory is short).
void* fresh_block(size_t sz) {
  void* p = std::aligned_alloc(64, sz);
  if (!p) {
    cache().clear();
    p = std::aligned_alloc(64, sz);
  }
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
  return p;
}

// host_alloc(nbytes) -> HostBuffer (uninitialised)
PyObject* host_alloc(const FastArgs& a) {
  a.expect(1);
  int64_t n = a.i(0);
  if (n < 0) throw std::invalid_argument("host_alloc: negative size");
  const size_t sz = block_size(n);
  void* p = sz >= kCacheMin ? cache().take(sz) : nullptr;
  if (!p) p = fresh_block(sz);
  auto* b = PyObject_New(HostBuffer, &HostBufferType);
  if (!b) { std::free(p); throw py::error_already_set(); }
  b->data = p;
  b->nbytes = (Py_ssize_t)n;
  b->ptr = (unsigned long long)(uintptr_t)p;
  return reinterpret_cast<PyObject*>(b);
}

// writable_address(obj) -> int: the address of a writable C-contiguous buffer (a NumPy
// array's data) through the buffer protocol; NumPy's own accessors cost about a microsecond.
PyObject* writable_address(const FastArgs& a) {
  a.expect(1);
  a.gil();
  Py_buffer view;
  if (PyObject_GetBuffer(a.a[0], &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0)
    throw py::error_already_set();
  PyObject* r = PyLong_FromUnsignedLongLong((unsigned long long)(uintptr_t)view.buf);
  PyBuffer_Release(&view);
  return r;
}

}  // namespace

void register_alloc(py::module_& m) {
  def_fast_ret<writable_address>(m, "writable_address", "writable_address(buffer) -> int");
  if (PyType_Ready(&HostBufferType) < 0) throw py::error_already_set();
  Py_INCREF(&HostBufferType);
  m.attr("HostBuffer") = py::reinterpret_borrow<py::object>((PyObject*)&HostBufferType);
  def_fast_ret<host_alloc>(m, "host_alloc", "host_alloc(nbytes) -> HostBuffer");
  m.def("host_cache_clear", [] { cache().clear(); }, "frees the cached host blocks");
  m.def("host_cache_stats", [] {
    auto& c = cache();
    std::lock_guard<std::mutex> g(c.mu);
    return py::dict(py::arg("cached_bytes") = c.bytes, py::arg("blocks") = c.blocks.size(),
                    py::arg("hits") = c.hits, py::arg("misses") = c.misses,
                    py::arg("limit") = c.limit);
  }, "statistics of the host block cache");
}

}  // namespace fw
