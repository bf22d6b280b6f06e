"""Memory history of the caching allocators: what ``framework.cuda.memory._record_memory_history``
records and ``_snapshot`` returns, in PyTorch's snapshot format (pytorch.org/memory_viz
reads its pickle).

Every cuda allocation and free, on the simulator and on a GPU, goes through the native
``_C.AllocatorCore`` of framework/cuda/allocator.py: while recording, each core calls
:meth:`History.on_block` after an alloc, a free request and a completed free, and the
allocator's slow path calls :meth:`History.record` for new segments, released segments and
OOMs. Recording off, the core's hook is a null pointer and allocator.py's ``_history`` is
None: nothing else runs.
"""
import collections
import os
import sys
import time

_BLOCK_ACTIONS = ("alloc", "free_requested", "free_completed")   # the native hook's codes
_ENABLED = (None, "state", "all")
_CONTEXTS = (None, "state", "alloc", "all")
_STACKS = ("python", "all")


def _frames(depth):
    """The Python stack above the caller ``depth`` frames up, innermost first, as
    PyTorch's snapshot frames."""
    out = []
    f = sys._getframe(1)
    for _ in range(depth):   # a free at shutdown may come from no Python frame at all
        if f is None:
            return out
        f = f.f_back
    while f is not None:
        out.append({"filename": f.f_code.co_filename, "line": f.f_lineno,
                    "name": f.f_code.co_name})
        f = f.f_back
    return out


class History:
    """The recorded state of every device: a ring buffer of trace entries per device and
    the stacks of live allocations and segments."""

    def __init__(self, enabled, context, max_entries):
        self.traces = {}         # device -> deque of trace entries, the newest last
        self.block_frames = {}   # (device, ptr) -> frames of the live allocation there
        self.segment_frames = {}  # (device, base) -> frames of the segment's allocation
        self.configure(enabled, context, max_entries)

    def configure(self, enabled, context, max_entries):
        self.trace_all = enabled == "all"
        self.context = context
        self.max_entries = max_entries
        for dev, entries in self.traces.items():
            self.traces[dev] = collections.deque(entries, maxlen=max_entries)

    def _entry_frames(self, action, frames):
        """The stack a trace entry keeps: context "all" keeps every entry's, "alloc" only
        those of allocations, "state" and None none."""
        if self.context == "all" or (self.context == "alloc" and
                                     action in ("alloc", "segment_alloc")):
            return frames if frames is not None else _frames(2)
        return []

    def record(self, device, action, addr, size, stream, device_free=None):
        """One trace entry (segment_alloc, segment_free, oom) from the allocator's slow
        path; the entries of the native hook come through on_block."""
        frames = None
        if action == "segment_alloc" and self.context is not None:
            frames = self.segment_frames[(device, addr)] = _frames(1)
        elif action == "segment_free":
            self.segment_frames.pop((device, addr), None)
        if not self.trace_all:
            return
        entry = {"action": action, "addr": addr, "size": size, "stream": stream,
                 "time_us": time.time_ns() // 1000,
                 "frames": self._entry_frames(action, frames)}
        if action == "oom":   # PyTorch's: no address, the memory the driver has left
            del entry["addr"]
            entry["device_free"] = device_free
        self._append(device, entry)

    def on_block(self, device, code, addr, size, stream):
        """The native hook: ``code`` indexes _BLOCK_ACTIONS."""
        action = _BLOCK_ACTIONS[code]
        frames = None
        if action == "alloc" and self.context is not None:
            frames = self.block_frames[(device, addr)] = _frames(1)
        elif action == "free_completed":
            self.block_frames.pop((device, addr), None)
        if not self.trace_all:
            return
        self._append(device, {"action": action, "addr": addr, "size": size,
                              "stream": stream, "time_us": time.time_ns() // 1000,
                              "frames": self._entry_frames(action, frames)})

    def _append(self, device, entry):
        q = self.traces.get(device)
        if q is None:
            q = self.traces[device] = collections.deque(maxlen=self.max_entries)
        q.append(entry)


def check_args(enabled, context, stacks, max_entries):
    if enabled not in _ENABLED:
        raise ValueError(f"_record_memory_history: enabled must be None, 'state' or 'all', "
                         f"got {enabled!r}")
    if context not in _CONTEXTS:
        raise ValueError(f"_record_memory_history: context must be None, 'state', 'alloc' "
                         f"or 'all', got {context!r}")
    if stacks not in _STACKS:
        raise ValueError(f"_record_memory_history: stacks must be 'python' or 'all', got "
                         f"{stacks!r}")
    if not isinstance(max_entries, int) or max_entries < 1:
        raise ValueError(f"_record_memory_history: max_entries must be a positive int, got "
                         f"{max_entries!r}")


def segment_dicts(alloc, history):
    """The segments of one allocator in PyTorch's snapshot format, by address."""
    out = []
    dev = alloc.device
    block_frames = history.block_frames if history is not None else {}
    segment_frames = history.segment_frames if history is not None else {}
    for base, parts in alloc._core.blocks():
        blocks = []
        allocated = active = requested = 0
        small = False
        for ptr, size, stream, small, is_allocated, event_count, req in parts:
            if is_allocated:
                state = "active_allocated"
                allocated += size
                active += size
                requested += req
            elif event_count:
                state = "active_awaiting_free"
                active += size
            else:
                state = "inactive"
            blocks.append({"address": ptr, "size": size, "requested_size": req,
                           "state": state,
                           "frames": block_frames.get((dev, ptr), []) if state != "inactive"
                           else []})
        out.append({"device": dev, "address": base, "total_size": sum(b["size"] for b in blocks),
                    "allocated_size": allocated, "active_size": active,
                    "requested_size": requested, "stream": parts[0][2],
                    "segment_type": "small" if small else "large",
                    "segment_pool_id": (0, 0), "is_expandable": False,
                    "frames": segment_frames.get((dev, base), []), "blocks": blocks})
    return out


def allocator_settings(allocators):
    """PyTorch's allocator_settings entry: the PYTORCH_CUDA_ALLOC_CONF options in force."""
    max_split = next((a.max_split_size for a in allocators if a is not None), float("inf"))
    return {"PYTORCH_CUDA_ALLOC_CONF": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
            "max_split_size": -1 if max_split == float("inf") else int(max_split),
            "garbage_collection_threshold": 0.0, "expandable_segments": False,
            "pinned_num_register_threads": 1, "release_lock_on_malloc": False,
            "pinned_use_host_register": False, "roundup_power2_divisions": {}}
