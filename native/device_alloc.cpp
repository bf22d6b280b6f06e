// The CUDA caching allocator's block bookkeeping (framework/cuda/allocator.py holds the
// policy around it: new segments from the raw backend, OOM retries, the stats' names).
//
// Every cuda op result allocates a block and every dropped tensor frees one: in Python that
// cost about 5 us of host time a tensor, a tenth of a training step's. Here a cache hit
// (best fit, split, stats) and the free (coalescing) take well under a microsecond, and the
// block handle that owns the memory frees it in its tp_dealloc, without a Python __del__.
//
// Semantics are PyTorch's: blocks rounded to 512 bytes; requests up to 1 MiB from a small
// pool of 2 MiB segments, larger ones from a large pool; best fit by (stream, size, ptr);
// tails split off (large blocks keep only tails over 1 MiB); freed neighbours coalesce; a
// block used on other streams (record_stream) is reused only after events recorded on
// those streams at its free have completed; max_split_size keeps oversize blocks whole.
//
// Thread safety: every entry point runs with the GIL held and does not release it, except
// inside the event callbacks, which are called with no pool iterator or block in flight.
#include "common.h"
#include "fastcall.h"

#include <structmember.h>

#include <map>
#include <set>
#include <unordered_map>

namespace fw {
namespace {

// PyTorch's sizes (framework/cuda/allocator.py reads them from here)
constexpr int64_t kMinBlockSize = 512;              // every size a multiple of this
constexpr int64_t kSmallSize = (int64_t)1 << 20;    // requests up to this: small pool
constexpr int64_t kSmallBuffer = (int64_t)2 << 20;  // the small pool's segments
constexpr int64_t kLargeBuffer = (int64_t)20 << 20; // segments of large requests below...
constexpr int64_t kMinLargeAlloc = (int64_t)10 << 20;  // ...this; from here on, their own
constexpr int64_t kRoundLarge = (int64_t)2 << 20;   // segment, a multiple of this

int64_t round_size(int64_t n) {
  return n < kMinBlockSize ? kMinBlockSize
                           : kMinBlockSize * ((n + kMinBlockSize - 1) / kMinBlockSize);
}

// The segment allocated for a rounded request of `size` bytes.
int64_t segment_size(int64_t size) {
  if (size <= kSmallSize) return kSmallBuffer;
  if (size < kMinLargeAlloc) return kLargeBuffer;
  return kRoundLarge * ((size + kRoundLarge - 1) / kRoundLarge);
}

struct Block {
  uint64_t ptr;
  int64_t size;
  int64_t stream;
  bool small;
  bool allocated = false;
  int64_t requested = 0;
  uint64_t id = 0;           // which allocation of this memory a handle refers to
  Block* prev = nullptr;     // neighbours in the segment, by address
  Block* next = nullptr;
  int event_count = 0;       // events still pending before it may be reused
  std::vector<int64_t> stream_uses;  // other streams it was used on (record_stream)

  Block(uint64_t p, int64_t s, int64_t st, bool sm) : ptr(p), size(s), stream(st), small(sm) {}
  bool is_split() const { return prev || next; }
};

struct ByKey {  // best-fit order: stream, then size, then address
  bool operator()(const Block* a, const Block* b) const {
    if (a->stream != b->stream) return a->stream < b->stream;
    if (a->size != b->size) return a->size < b->size;
    return a->ptr < b->ptr;
  }
};
using Pool = std::set<Block*, ByKey>;

// current / peak / allocated (total increase) / freed (total decrease)
struct Stat {
  int64_t current = 0, peak = 0, allocated = 0, freed = 0;
  void update(int64_t amount) {
    current += amount;
    if (amount > 0) {
      allocated += amount;
      if (current > peak) peak = current;
    } else {
      freed -= amount;
    }
  }
};
// the order of allocator.py's _STAT_NAMES; pools: 0 all, 1 small, 2 large
enum { kAllocation, kSegment, kActive, kAllocatedBytes, kReservedBytes, kActiveBytes,
       kRequestedBytes, kNumStats };

struct Event {
  PyObject* ev;  // owned reference (None without an event hook)
  Block* block;
};

struct Core {
  PyObject_HEAD
  Pool* pools[2];                           // [0] large, [1] small
  std::map<uint64_t, Block*>* segments;     // base address -> first block
  std::unordered_map<uint64_t, Block*>* active;
  std::vector<Event>* events;
  Stat stats[kNumStats][3];
  int64_t max_split_size;
  uint64_t next_id;
  PyObject* record_event;  // callables or None
  PyObject* query_event;
  PyObject* sync_event;
  PyObject* trace;         // memory history hook (framework/cuda/_memory_history.py), or
                           // nullptr: recording off costs one pointer test
  long long num_alloc_retries, num_ooms, num_device_alloc, num_device_free;

  void update(int stat, bool small, int64_t amount) {
    stats[stat][small ? 1 : 2].update(amount);
    stats[stat][0].update(amount);
  }
};

struct Handle {  // framework._C.DeviceBlock: one allocation of a block
  PyObject_HEAD
  Core* core;       // strong reference
  unsigned long long ptr;
  long long size, requested, stream;
  uint64_t id;
  int owned;        // frees the block when collected (a storage's); malloc()'s do not
};

extern PyTypeObject HandleType;

[[noreturn]] void invalid_pointer(uint64_t ptr) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "invalid device pointer: %#llx", (unsigned long long)ptr);
  throw std::runtime_error(buf);
}

enum TraceAction { kTraceAlloc, kTraceFreeRequested, kTraceFreeCompleted };

// Tells the history hook trace(action, ptr, size, stream). Called only where the pools are
// consistent (the hook runs Python, which may let other threads in); its errors are
// reported as unraisable, never thrown into the allocator.
void trace_event(Core* c, int action, uint64_t ptr, int64_t size, int64_t stream) {
  PyObject* fn = c->trace;  // held: a hook may turn recording off (set_trace) while it runs
  if (!fn) return;
  Py_INCREF(fn);
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyObject* r = PyObject_CallFunction(fn, "iKLL", action, (unsigned long long)ptr,
                                      (long long)size, (long long)stream);
  if (r) Py_DECREF(r);
  else PyErr_WriteUnraisable(fn);
  PyErr_Restore(type, value, tb);
  Py_DECREF(fn);
}

// Puts an inactive block back in its pool, merged with free neighbours; `requested`: the
// free was asked for just now (not after waiting for events), for the history's order.
void free_block(Core* c, Block* b, bool requested = false) {
  const uint64_t freed_ptr = b->ptr;
  const int64_t freed_size = b->size, freed_stream = b->stream;
  Pool& pool = *c->pools[b->small];
  c->update(kActive, b->small, -1);
  c->update(kActiveBytes, b->small, -b->size);
  Block* prev = b->prev;
  if (prev && !prev->allocated && prev->event_count == 0) {
    pool.erase(prev);
    b->ptr = prev->ptr;  // the merged block starts where the previous one did
    b->size += prev->size;
    b->prev = prev->prev;
    if (b->prev) b->prev->next = b;
    else (*c->segments)[b->ptr] = b;
    delete prev;
  }
  Block* next = b->next;
  if (next && !next->allocated && next->event_count == 0) {
    pool.erase(next);
    b->size += next->size;
    b->next = next->next;
    if (b->next) b->next->prev = b;
    delete next;
  }
  pool.insert(b);
  if (c->trace) {
    if (requested) trace_event(c, kTraceFreeRequested, freed_ptr, freed_size, freed_stream);
    trace_event(c, kTraceFreeCompleted, freed_ptr, freed_size, freed_stream);
  }
}

// Calls fn(arg); a new reference, or throws with the Python error set.
PyObject* call1(PyObject* fn, PyObject* arg) {
  PyObject* r = PyObject_CallOneArg(fn, arg);
  if (!r) throw py::error_already_set();
  return r;
}

// Whether event `ev` has completed (the query hook); with `wait`, waits for it first (the
// synchronize hook). No hook: recorded work counts as done (the simulator's).
bool event_done(Core* c, PyObject* ev, bool wait) {
  PyObject* hook = wait ? c->sync_event : c->query_event;
  if (hook == Py_None) return true;
  PyObject* r = call1(hook, ev);
  int t = wait ? 1 : PyObject_IsTrue(r);
  Py_DECREF(r);
  if (t < 0) throw py::error_already_set();
  return t;
}

// Frees the blocks whose recorded events have all completed; with `wait`, after waiting
// for every event. What stays pending keeps its order, an error from a hook included.
void finish_events(Core* c, bool wait) {
  std::vector<Event> evs, pending;
  evs.swap(*c->events);  // hooks may let other threads' frees in, which append
  size_t k = 0;
  try {
    for (; k < evs.size(); k++) {
      Event& e = evs[k];
      if (!event_done(c, e.ev, wait)) {
        pending.push_back(e);
        continue;
      }
      Py_DECREF(e.ev);
      if (--e.block->event_count == 0) free_block(c, e.block);
    }
  } catch (...) {
    pending.insert(pending.end(), evs.begin() + k, evs.end());
    c->events->insert(c->events->begin(), pending.begin(), pending.end());
    throw;
  }
  c->events->insert(c->events->begin(), pending.begin(), pending.end());
}

// Marks a free block allocated for `nbytes` (rounded: `size`), splitting off the tail it
// does not need, and returns its handle. A large block keeps its tail only if the tail is
// large too, so that the large pool does not fill up with slivers small requests never use.
PyObject* take(Core* c, Block* b, int64_t size, int64_t nbytes, bool owned) {
  const bool small = b->small;
  const int64_t remaining = b->size - size;
  if (small ? remaining >= kMinBlockSize
            : size < c->max_split_size && remaining > kSmallSize) {
    Block* rest = new Block(b->ptr + size, remaining, b->stream, small);
    rest->prev = b;
    rest->next = b->next;
    if (rest->next) rest->next->prev = rest;
    b->next = rest;
    b->size = size;
    c->pools[small]->insert(rest);
  }
  b->allocated = true;
  b->requested = nbytes;
  b->id = ++c->next_id;
  (*c->active)[b->ptr] = b;
  c->update(kAllocation, small, 1);
  c->update(kAllocatedBytes, small, b->size);
  c->update(kActive, small, 1);
  c->update(kActiveBytes, small, b->size);
  c->update(kRequestedBytes, small, nbytes);
  Handle* h = PyObject_New(Handle, &HandleType);
  if (!h) throw py::error_already_set();
  Py_INCREF(c);
  h->core = c;
  h->ptr = b->ptr;
  h->size = b->size;
  h->requested = nbytes;
  h->stream = b->stream;
  h->id = b->id;
  h->owned = owned;
  if (c->trace) trace_event(c, kTraceAlloc, b->ptr, b->size, b->stream);
  return reinterpret_cast<PyObject*>(h);
}

Block* active_block(Core* c, uint64_t ptr, uint64_t id) {
  auto it = c->active->find(ptr);
  if (it == c->active->end() || (id && it->second->id != id)) return nullptr;
  return it->second;
}

// Returns an allocated block to the cache (after events on its other streams, if any).
void free_allocated(Core* c, Block* b) {
  c->active->erase(b->ptr);
  b->allocated = false;
  c->update(kAllocation, b->small, -1);
  c->update(kAllocatedBytes, b->small, -b->size);
  c->update(kRequestedBytes, b->small, -b->requested);
  b->requested = 0;
  if (b->stream_uses.empty()) {
    free_block(c, b, true);
    return;
  }
  std::vector<int64_t> uses;
  uses.swap(b->stream_uses);
  std::sort(uses.begin(), uses.end());
  // counted before the hook runs: it may let another thread in (empty_cache), which must
  // not take this block for a free one
  b->event_count += (int)uses.size();
  size_t k = 0;
  try {
    for (; k < uses.size(); k++) {
      PyObject* ev;
      if (c->record_event != Py_None) {
        PyObject* st = PyLong_FromLongLong(uses[k]);
        if (!st) throw py::error_already_set();
        ev = PyObject_CallOneArg(c->record_event, st);
        Py_DECREF(st);
        if (!ev) throw py::error_already_set();
      } else {
        ev = Py_NewRef(Py_None);
      }
      c->events->push_back({ev, b});
    }
  } catch (...) {
    // the streams left without an event: not waited for
    b->event_count -= (int)(uses.size() - k);
    if (b->event_count == 0) free_block(c, b);
    throw;
  }
  if (c->trace) trace_event(c, kTraceFreeRequested, b->ptr, b->size, b->stream);
}

// Takes a whole free segment out of the pools; false if `b` is not one.
bool remove_segment(Core* c, Block* b) {
  if (b->allocated || b->event_count || b->is_split()) return false;
  c->pools[b->small]->erase(b);
  c->segments->erase(b->ptr);
  c->num_device_free++;
  c->update(kSegment, b->small, -1);
  c->update(kReservedBytes, b->small, -b->size);
  delete b;
  return true;
}

Core* core_of(PyObject* self) { return reinterpret_cast<Core*>(self); }

Handle* handle_arg(PyObject* o) {
  if (Py_TYPE(o) != &HandleType) throw std::invalid_argument("expected a DeviceBlock");
  return reinterpret_cast<Handle*>(o);
}

// ---- methods -----------------------------------------------------------------------------

// alloc(nbytes, stream, owned) -> DeviceBlock, or None when no cached block fits
PyObject* m_alloc(PyObject* self, const FastArgs& a) {
  a.expect(3);
  Core* c = core_of(self);
  const int64_t nbytes = a.i(0), stream = a.i(1);
  const bool owned = a.b(2);
  if (nbytes < 0)
    throw std::runtime_error("Trying to create tensor with negative dimension: " +
                             std::to_string(nbytes));
  if (!c->events->empty()) finish_events(c, false);  // blocks wait for other streams: rare
  const int64_t size = round_size(nbytes);
  const bool small = size <= kSmallSize;
  Pool& pool = *c->pools[small];
  // the first block from (stream, size) on is the smallest that holds size bytes, lowest
  // address on ties. One over max_split_size serves only an oversize request (oversize
  // blocks are kept for those) it does not exceed by kLargeBuffer (that would waste it);
  // being the smallest fit, if it breaks a rule every larger one does
  Block probe(0, size, stream, small);
  auto it = pool.lower_bound(&probe);
  if (it == pool.end() || (*it)->stream != stream) return nullptr;
  Block* b = *it;
  if (!(b->size < c->max_split_size ||
        (c->max_split_size <= size && b->size < size + kLargeBuffer)))
    return nullptr;
  pool.erase(it);
  return take(c, b, size, nbytes, owned);
}

// alloc_in_segment(ptr, segment_size, nbytes, stream, owned) -> DeviceBlock: a new segment
// from the raw backend, allocated from at once
PyObject* m_alloc_in_segment(PyObject* self, const FastArgs& a) {
  a.expect(5);
  Core* c = core_of(self);
  const uint64_t ptr = a.ptr(0);
  const int64_t seg = a.i(1), nbytes = a.i(2), stream = a.i(3);
  const bool owned = a.b(4);
  const int64_t size = round_size(nbytes);
  const bool small = size <= kSmallSize;
  if (seg < size) throw std::invalid_argument("alloc_in_segment: segment smaller than request");
  Block* b = new Block(ptr, seg, stream, small);
  (*c->segments)[ptr] = b;
  c->num_device_alloc++;
  c->update(kSegment, small, 1);
  c->update(kReservedBytes, small, seg);
  return take(c, b, size, nbytes, owned);
}

// free(block): returns a block to the cache
PyObject* m_free(PyObject* self, const FastArgs& a) {
  a.expect(1);
  a.gil();
  Core* c = core_of(self);
  Handle* h = handle_arg(a.a[0]);
  Block* b = h->core == c ? active_block(c, h->ptr, h->id) : nullptr;
  if (!b) invalid_pointer(h->ptr);
  free_allocated(c, b);
  return nullptr;
}

// free_ptr(ptr): frees the allocated block that starts at ptr
PyObject* m_free_ptr(PyObject* self, const FastArgs& a) {
  a.expect(1);
  Core* c = core_of(self);
  const uint64_t ptr = a.ptr(0);
  Block* b = active_block(c, ptr, 0);
  if (!b) invalid_pointer(ptr);
  free_allocated(c, b);
  return nullptr;
}

// record_stream(block, stream)
PyObject* m_record_stream(PyObject* self, const FastArgs& a) {
  a.expect(2);
  a.gil();
  Core* c = core_of(self);
  Handle* h = handle_arg(a.a[0]);
  const int64_t stream = a.i(1);
  Block* b = h->core == c ? active_block(c, h->ptr, h->id) : nullptr;
  if (!b) invalid_pointer(h->ptr);
  if (stream != b->stream &&
      std::find(b->stream_uses.begin(), b->stream_uses.end(), stream) == b->stream_uses.end())
    b->stream_uses.push_back(stream);
  return nullptr;
}

// set_trace(fn or None): fn(action, ptr, size, stream) after each alloc (0), free request
// (1) and completed free (2)
PyObject* m_set_trace(PyObject* self, const FastArgs& a) {
  a.expect(1);
  Core* c = core_of(self);
  PyObject* old = c->trace;
  c->trace = a.a[0] == Py_None ? nullptr : Py_NewRef(a.a[0]);
  Py_XDECREF(old);
  return nullptr;
}

PyObject* m_process_events(PyObject* self, const FastArgs& a) {
  a.expect(0);
  finish_events(core_of(self), false);
  return nullptr;
}

PyObject* m_sync_events(PyObject* self, const FastArgs& a) {
  a.expect(0);
  finish_events(core_of(self), true);
  return nullptr;
}

// release_free_segments() -> [ptr]: takes every whole free segment out (for raw_free)
PyObject* m_release_free_segments(PyObject* self, const FastArgs& a) {
  a.expect(0);
  Core* c = core_of(self);
  std::vector<Block*> heads;  // remove_segment erases from the map: not while walking it
  for (auto& kv : *c->segments) heads.push_back(kv.second);
  py::list out;
  for (Block* b : heads) {
    const uint64_t ptr = b->ptr;
    if (remove_segment(c, b)) out.append(py::int_(ptr));
  }
  return out.release().ptr();
}

// release_segment(ptr) -> bool: takes one whole free segment out (for raw_free)
PyObject* m_release_segment(PyObject* self, const FastArgs& a) {
  a.expect(1);
  Core* c = core_of(self);
  auto it = c->segments->find(a.ptr(0));
  return PyBool_FromLong(it != c->segments->end() && remove_segment(c, it->second));
}

// oversize_segments(small, stream, min_size) -> [(ptr, size)]: whole free segments of that
// pool and stream of at least min_size bytes, by size
PyObject* m_oversize_segments(PyObject* self, const FastArgs& a) {
  a.expect(3);
  Core* c = core_of(self);
  const bool small = a.b(0);
  const int64_t stream = a.i(1), min_size = a.i(2);
  py::list out;
  for (Block* b : *c->pools[small])
    if (b->stream == stream && !b->is_split() && b->size >= min_size)
      out.append(py::make_tuple(b->ptr, b->size));
  return out.release().ptr();
}

// stats() -> per stat (allocator.py's _STAT_NAMES), per pool (all, small, large):
// (current, peak, allocated, freed)
PyObject* m_stats(PyObject* self, const FastArgs& a) {
  a.expect(0);
  Core* c = core_of(self);
  py::list out;
  for (auto& row : c->stats) {
    py::list pools;
    for (auto& s : row) pools.append(py::make_tuple(s.current, s.peak, s.allocated, s.freed));
    out.append(py::tuple(pools));
  }
  return py::tuple(out).release().ptr();
}

// current(stat) -> the stat's current value, all pools
PyObject* m_current(PyObject* self, const FastArgs& a) {
  a.expect(1);
  const int64_t k = a.i(0);
  if (k < 0 || k >= kNumStats) throw std::invalid_argument("current: no such stat");
  return PyLong_FromLongLong(core_of(self)->stats[k][0].current);
}

PyObject* m_peak(PyObject* self, const FastArgs& a) {
  a.expect(1);
  const int64_t k = a.i(0);
  if (k < 0 || k >= kNumStats) throw std::invalid_argument("peak: no such stat");
  return PyLong_FromLongLong(core_of(self)->stats[k][0].peak);
}

PyObject* m_reset_peak(PyObject* self, const FastArgs& a) {
  a.expect(0);
  for (auto& row : core_of(self)->stats)
    for (auto& s : row) s.peak = s.current;
  return nullptr;
}

PyObject* m_reset_accumulated(PyObject* self, const FastArgs& a) {
  a.expect(0);
  Core* c = core_of(self);
  for (auto& row : c->stats)
    for (auto& s : row) s.allocated = s.freed = 0;
  c->num_alloc_retries = c->num_ooms = c->num_device_alloc = c->num_device_free = 0;
  return nullptr;
}

// inactive_split() -> ((count, bytes) of all, small, large): free blocks of split segments
PyObject* m_inactive_split(PyObject* self, const FastArgs& a) {
  a.expect(0);
  Core* c = core_of(self);
  int64_t n[3] = {0, 0, 0}, bytes[3] = {0, 0, 0};
  for (int small = 0; small < 2; small++)
    for (Block* b : *c->pools[small])
      if (b->is_split()) {
        n[small ? 1 : 2]++;
        bytes[small ? 1 : 2] += b->size;
      }
  n[0] = n[1] + n[2];
  bytes[0] = bytes[1] + bytes[2];
  return py::make_tuple(py::make_tuple(n[0], bytes[0]), py::make_tuple(n[1], bytes[1]),
                        py::make_tuple(n[2], bytes[2])).release().ptr();
}

// blocks() -> [(base, [(ptr, size, stream, small, allocated, event_count, requested), ...]),
// ...] by address
PyObject* m_blocks(PyObject* self, const FastArgs& a) {
  a.expect(0);
  Core* c = core_of(self);
  py::list out;
  for (auto& kv : *c->segments) {
    py::list parts;
    for (Block* b = kv.second; b; b = b->next)
      parts.append(
          py::make_tuple(b->ptr, b->size, b->stream, b->small, b->allocated, b->event_count,
                         b->requested));
    out.append(py::make_tuple(kv.first, parts));
  }
  return out.release().ptr();
}

// pool_keys() -> [(stream, size, ptr, small), ...]: the pools' entries, in their order
PyObject* m_pool_keys(PyObject* self, const FastArgs& a) {
  a.expect(0);
  Core* c = core_of(self);
  py::list out;
  for (int small = 1; small >= 0; small--)
    for (Block* b : *c->pools[small])
      out.append(py::make_tuple(b->stream, b->size, b->ptr, (bool)small));
  return out.release().ptr();
}

template <PyObject* (*F)(PyObject*, const FastArgs&)>
PyObject* method_entry(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  try {
    PyObject* r = F(self, FastArgs{args, nargs, "AllocatorCore"});
    if (r) return r;
  } catch (...) {
    set_python_error();
    return nullptr;
  }
  Py_RETURN_NONE;
}

#define FW_METHOD(name, doc) \
  {#name, (PyCFunction)(void (*)(void))method_entry<m_##name>, METH_FASTCALL, doc}

PyMethodDef core_methods[] = {
    FW_METHOD(alloc, "alloc(nbytes, stream, owned) -> DeviceBlock or None (no cached fit)"),
    FW_METHOD(alloc_in_segment,
              "alloc_in_segment(ptr, segment_size, nbytes, stream, owned) -> DeviceBlock"),
    FW_METHOD(free, "free(block): returns an allocated block to the cache"),
    FW_METHOD(free_ptr, "free_ptr(ptr): frees the allocated block starting at ptr"),
    FW_METHOD(record_stream, "record_stream(block, stream)"),
    FW_METHOD(set_trace, "set_trace(fn or None): the memory history hook"),
    FW_METHOD(process_events, "frees the blocks whose events have completed"),
    FW_METHOD(sync_events, "waits for every pending event and frees its blocks"),
    FW_METHOD(release_free_segments, "release_free_segments() -> [ptr]"),
    FW_METHOD(release_segment, "release_segment(ptr) -> bool"),
    FW_METHOD(oversize_segments, "oversize_segments(small, stream, min_size) -> [(ptr, size)]"),
    FW_METHOD(stats, "stats() -> per stat, per pool: (current, peak, allocated, freed)"),
    FW_METHOD(current, "current(stat) -> int"),
    FW_METHOD(peak, "peak(stat) -> int"),
    FW_METHOD(reset_peak, "peaks back to the current values"),
    FW_METHOD(reset_accumulated, "allocated/freed totals and the counters to 0"),
    FW_METHOD(inactive_split, "inactive_split() -> ((count, bytes) all, small, large)"),
    FW_METHOD(blocks, "blocks() -> [(base, [(ptr, size, stream, small, allocated, events)])]"),
    FW_METHOD(pool_keys, "pool_keys() -> [(stream, size, ptr, small)] of the free blocks"),
    {nullptr, nullptr, 0, nullptr}};

PyMemberDef core_members[] = {
    {"num_alloc_retries", T_LONGLONG, offsetof(Core, num_alloc_retries), 0, nullptr},
    {"num_ooms", T_LONGLONG, offsetof(Core, num_ooms), 0, nullptr},
    {"num_device_alloc", T_LONGLONG, offsetof(Core, num_device_alloc), READONLY, nullptr},
    {"num_device_free", T_LONGLONG, offsetof(Core, num_device_free), READONLY, nullptr},
    {"max_split_size", T_LONGLONG, offsetof(Core, max_split_size), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr}};

// AllocatorCore(max_split_size, record_event, query_event, synchronize_event)
PyObject* core_new(PyTypeObject* type, PyObject* args, PyObject* kwds) {
  long long max_split;
  PyObject *rec, *query, *sync;
  if (!PyArg_ParseTuple(args, "LOOO:AllocatorCore", &max_split, &rec, &query, &sync))
    return nullptr;
  Core* c = reinterpret_cast<Core*>(type->tp_alloc(type, 0));
  if (!c) return nullptr;
  c->pools[0] = new Pool();
  c->pools[1] = new Pool();
  c->segments = new std::map<uint64_t, Block*>();
  c->active = new std::unordered_map<uint64_t, Block*>();
  c->events = new std::vector<Event>();
  // tp_alloc zeroed the stats and counters
  c->max_split_size = max_split;
  c->next_id = 0;
  c->record_event = Py_NewRef(rec);
  c->query_event = Py_NewRef(query);
  c->sync_event = Py_NewRef(sync);
  c->trace = nullptr;
  c->num_alloc_retries = c->num_ooms = c->num_device_alloc = c->num_device_free = 0;
  return reinterpret_cast<PyObject*>(c);
}

void core_dealloc(PyObject* self) {
  Core* c = core_of(self);
  for (auto& e : *c->events) Py_DECREF(e.ev);
  for (auto& kv : *c->segments)
    for (Block* b = kv.second; b;) {
      Block* n = b->next;
      delete b;
      b = n;
    }
  delete c->pools[0];
  delete c->pools[1];
  delete c->segments;
  delete c->active;
  delete c->events;
  Py_DECREF(c->record_event);
  Py_DECREF(c->query_event);
  Py_DECREF(c->sync_event);
  Py_XDECREF(c->trace);
  Py_TYPE(self)->tp_free(self);
}

PyTypeObject CoreType = [] {
  PyTypeObject t{PyVarObject_HEAD_INIT(nullptr, 0)};
  t.tp_name = "framework._C.AllocatorCore";
  t.tp_basicsize = sizeof(Core);
  t.tp_dealloc = core_dealloc;
  t.tp_flags = Py_TPFLAGS_DEFAULT;
  t.tp_doc = "the caching allocator's blocks, pools and stats (framework.cuda.allocator)";
  t.tp_methods = core_methods;
  t.tp_members = core_members;
  t.tp_new = core_new;
  return t;
}();

// An owned handle frees its block when collected: a tensor's memory goes back to the cache
// when its last storage reference dies. Not an error if it was freed already (free_ptr).
void handle_dealloc(PyObject* self) {
  Handle* h = reinterpret_cast<Handle*>(self);
  if (h->owned) {
    Block* b = active_block(h->core, h->ptr, h->id);
    if (b) {
      PyObject *type, *value, *tb;
      PyErr_Fetch(&type, &value, &tb);
      // quiet, as a __del__ at interpreter shutdown must be (the event hook's driver may
      // be gone); the block then stays out of the cache
      try {
        free_allocated(h->core, b);
      } catch (py::error_already_set& e) {
        e.restore();
        PyErr_Clear();
      } catch (std::exception&) {
      }
      PyErr_Restore(type, value, tb);
    }
  }
  Py_DECREF(h->core);
  Py_TYPE(self)->tp_free(self);
}

PyObject* handle_repr(PyObject* self) {
  Handle* h = reinterpret_cast<Handle*>(self);
  return PyUnicode_FromFormat("DeviceBlock(ptr=%#llx, size=%lld, stream=%lld)", h->ptr,
                              h->size, h->stream);
}

PyMemberDef handle_members[] = {
    {"ptr", T_ULONGLONG, offsetof(Handle, ptr), READONLY, "address of the first byte"},
    {"size", T_LONGLONG, offsetof(Handle, size), READONLY, "bytes of the block (rounded)"},
    {"requested", T_LONGLONG, offsetof(Handle, requested), READONLY, "bytes asked for"},
    {"stream", T_LONGLONG, offsetof(Handle, stream), READONLY, "the stream it belongs to"},
    {nullptr, 0, 0, 0, nullptr}};

PyTypeObject HandleType = [] {
  PyTypeObject t{PyVarObject_HEAD_INIT(nullptr, 0)};
  t.tp_name = "framework._C.DeviceBlock";
  t.tp_basicsize = sizeof(Handle);
  t.tp_dealloc = handle_dealloc;
  t.tp_repr = handle_repr;
  t.tp_flags = Py_TPFLAGS_DEFAULT;
  t.tp_doc = "one allocation of the cuda caching allocator";
  t.tp_members = handle_members;
  return t;
}();

// alloc_sizes(nbytes) -> (rounded size, its segment's size, small pool)
PyObject* alloc_sizes(const FastArgs& a) {
  a.expect(1);
  const int64_t size = round_size(a.i(0));
  return py::make_tuple(size, segment_size(size), size <= kSmallSize).release().ptr();
}

}  // namespace

void register_device_alloc(py::module_& m) {
  def_fast_ret<alloc_sizes>(m, "alloc_sizes",
                            "alloc_sizes(nbytes) -> (rounded, segment size, small pool)");
  for (PyTypeObject* t : {&CoreType, &HandleType}) {
    if (PyType_Ready(t) < 0) throw py::error_already_set();
    Py_INCREF(t);
  }
  m.attr("AllocatorCore") = py::reinterpret_borrow<py::object>((PyObject*)&CoreType);
  m.attr("DeviceBlock") = py::reinterpret_borrow<py::object>((PyObject*)&HandleType);
}

}  // namespace fw
