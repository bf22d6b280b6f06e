"""framework.cuda.memory's memory history and snapshots (_record_memory_history, _snapshot,
_dump_snapshot, memory_snapshot) and framework.cuda._memory_viz, in PyTorch's snapshot format.
torch's CPU build cannot record cuda memory: the format's keys come from its source, the
values from what the allocator did (addresses are the tensors' data_ptr(), sizes its
rounding)."""
import inspect
import pickle
import re
import sys

import pytest

import framework as fw
from framework.cuda import _memory_viz, allocator, memory
from framework.cuda.allocator import MB, CachingAllocator, HostRawBackend, OutOfMemoryError

pytestmark = pytest.mark.skipif(not fw.cuda.is_available(),
                                reason="needs cuda or TRITON_INTERPRET=1")


@pytest.fixture
def record():
    """Starts recording (with the given options); always stops at the end of the test."""
    fw.cuda.empty_cache()

    def start(**kwargs):
        memory._record_memory_history(**kwargs)
    yield start
    memory._record_memory_history(None)


def trace(actions=("alloc", "free_requested", "free_completed", "segment_alloc",
                   "segment_free", "oom")):
    return [e for e in memory._snapshot()["device_traces"][fw.cuda.current_device()]
            if e["action"] in actions]


def here(entry, line):
    """Whether the entry's stack has this test file at ``line``."""
    return any(f["filename"] == __file__ and f["line"] == line for f in entry["frames"])


def test_off_by_default_and_after_disable(record):
    assert allocator._history is None  # recording off: the one test the slow path makes
    record()
    assert allocator._history is not None
    a = fw.empty(100, device="cuda")
    assert trace()
    memory._record_memory_history(enabled=None)
    assert allocator._history is None
    snap = memory._snapshot()
    assert all(t == [] for t in snap["device_traces"])   # cleared
    b = fw.empty(100, device="cuda")   # not recorded: the native hook is off too
    del a, b
    record()
    assert trace() == []


def test_trace_alloc_free_order_sizes_addresses_frames(record):
    record()
    line_a, a = sys._getframe().f_lineno, fw.empty(1000, device="cuda")   # 4000 bytes
    line_b, b = sys._getframe().f_lineno, fw.empty(3 * MB // 4, device="cuda", dtype=fw.int32)
    # over the 17 MiB b's segment has left, and over 10 MiB: a segment of its own
    line_c, c = sys._getframe().f_lineno, fw.empty(24 * MB, device="cuda", dtype=fw.uint8)
    pa, pb, pc = a.data_ptr(), b.data_ptr(), c.data_ptr()
    line_del = sys._getframe().f_lineno + 1
    del a
    del c
    fw.cuda.empty_cache()   # c's segment is given back
    got = [(e["action"], e["addr"], e["size"]) for e in trace()
           if e["action"] not in ("segment_alloc", "segment_free") or e["addr"] == pc]
    assert got == [("alloc", pa, 4096), ("alloc", pb, 3 * MB),
                   ("segment_alloc", pc, 24 * MB), ("alloc", pc, 24 * MB),
                   ("free_requested", pa, 4096), ("free_completed", pa, 4096),
                   ("free_requested", pc, 24 * MB), ("free_completed", pc, 24 * MB),
                   ("segment_free", pc, 24 * MB)]
    entries = trace()
    allocs = [e for e in entries if e["action"] == "alloc"]
    assert [here(e, ln) for e, ln in zip(allocs, (line_a, line_b, line_c))] == [True] * 3
    assert not here(allocs[0], line_b)
    frees = [e for e in entries if e["action"] == "free_requested"]
    assert here(frees[0], line_del) and here(frees[1], line_del + 1)
    assert allocs[0]["frames"][0]["name"] != "on_block"   # the recorder's own frames are left out
    assert [f["name"] for f in allocs[0]["frames"] if f["filename"] == __file__][0] == \
        "test_trace_alloc_free_order_sizes_addresses_frames"
    times = [e["time_us"] for e in entries]
    assert times == sorted(times)
    assert {e["stream"] for e in entries} == {fw.cuda.current_stream().cuda_stream}
    del b


def test_segments_and_blocks(record):
    record()
    line, a = sys._getframe().f_lineno, fw.empty(1000, device="cuda")
    b = fw.empty(3 * MB // 4, device="cuda", dtype=fw.int32)
    segs = memory._snapshot()["segments"]
    assert segs == memory.memory_snapshot() == fw.cuda.memory_snapshot()
    assert sum(s["allocated_size"] for s in segs) == fw.cuda.memory_allocated()
    assert sum(s["total_size"] for s in segs) == fw.cuda.memory_reserved()
    blocks = {blk["address"]: (blk, s) for s in segs for blk in s["blocks"]}
    blk, seg = blocks[a.data_ptr()]
    assert (blk["size"], blk["requested_size"], blk["state"]) == (4096, 4000, "active_allocated")
    assert here(blk, line) and seg["segment_type"] == "small"
    blk, seg = blocks[b.data_ptr()]
    assert (blk["size"], blk["requested_size"], blk["state"]) == \
        (3 * MB, 3 * MB, "active_allocated")
    assert seg["segment_type"] == "large" and seg["total_size"] == 20 * MB
    for s in segs:
        assert s["address"] == s["blocks"][0]["address"]
        assert s["total_size"] == sum(blk["size"] for blk in s["blocks"])
        assert s["allocated_size"] == s["active_size"] == sum(
            blk["size"] for blk in s["blocks"] if blk["state"] == "active_allocated")
        assert s["device"] == fw.cuda.current_device()
        assert s["requested_size"] == sum(blk["requested_size"] for blk in s["blocks"])
    assert blocks[a.data_ptr()][1]["requested_size"] >= 4000
    pa = a.data_ptr()
    del a
    blk = {blk["address"]: blk for s in memory.memory_snapshot() for blk in s["blocks"]}[pa]
    assert blk["state"] == "inactive" and blk["frames"] == [] and blk["requested_size"] == 0
    del b


def test_context_and_state_options(record):
    record(context="alloc")
    line, a = sys._getframe().f_lineno, fw.empty(10, device="cuda")
    del a
    alloc_e, req, done = trace(("alloc", "free_requested", "free_completed"))
    assert here(alloc_e, line) and req["frames"] == [] and done["frames"] == []
    memory._record_memory_history(None)
    record(context=None)
    a = fw.empty(10, device="cuda")
    assert trace()[-1]["frames"] == []
    assert all(blk["frames"] == [] for s in memory.memory_snapshot() for blk in s["blocks"])
    memory._record_memory_history(None)
    record(enabled="state", context="state")
    line, b = sys._getframe().f_lineno, fw.empty(10, device="cuda")
    assert memory._snapshot()["device_traces"][fw.cuda.current_device()] == []
    blk = {blk["address"]: blk for s in memory.memory_snapshot() for blk in s["blocks"]}
    assert here(blk[b.data_ptr()], line) and blk[a.data_ptr()]["frames"] == []
    del a, b


def test_max_entries_keeps_the_newest(record):
    record(max_entries=4)
    ptrs = []
    for _ in range(3):
        t = fw.empty(1000, device="cuda")
        ptrs.append(t.data_ptr())
        del t
    got = [(e["action"], e["addr"]) for e in trace()]
    assert got == [("free_completed", ptrs[1]), ("alloc", ptrs[2]),
                   ("free_requested", ptrs[2]), ("free_completed", ptrs[2])]
    # re-enabled without clear_history the entries stay; with it they go
    memory._record_memory_history(max_entries=10)
    assert len(trace()) == 4
    memory._record_memory_history(max_entries=10, clear_history=True)
    assert trace() == []


def test_dump_snapshot_pickle(record, tmp_path):
    record()
    a = fw.empty(1000, device="cuda")
    path = tmp_path / "snap.pickle"
    memory._dump_snapshot(str(path))
    with open(path, "rb") as f:
        loaded = pickle.load(f)
    assert loaded == memory._snapshot()
    assert any(e["action"] == "alloc" and e["addr"] == a.data_ptr()
               for e in loaded["device_traces"][fw.cuda.current_device()])
    del a


def test_stats_unaffected(record):
    def run():
        fw.cuda.reset_peak_memory_stats()   # peaks depend on what ran before
        before = fw.cuda.memory_stats()
        a = fw.empty(1000, device="cuda")
        b = fw.empty(300000, device="cuda")
        mid = fw.cuda.memory_allocated()
        del a, b
        after = fw.cuda.memory_stats()
        return mid, {k: after[k] - before[k] for k in after}
    fw.cuda.empty_cache()
    off = run()
    record()
    fw.cuda.empty_cache()
    on = run()
    assert on == off
    assert on[1]["allocation.all.allocated"] == 2


def _torch_keys():
    """The keys and literals of torch.cuda.memory._snapshot's documented format."""
    torch = pytest.importorskip("torch")
    doc = inspect.getdoc(torch.cuda.memory._snapshot).split("Args:")[0]
    keys, cls = {}, None
    for ln in doc.splitlines():
        m = re.match(r"\s*class (\w+)\(TypedDict\)", ln)
        if m:
            cls = keys.setdefault(m.group(1), set())
        elif cls is not None and re.match(r"\s+\w+: ", ln):
            cls.add(ln.split(":")[0].strip())
    literals = set(re.findall(r'"(\w+)"', doc))
    return keys, literals


def test_keys_match_torch_format(record):
    keys, literals = _torch_keys()
    # 32 MiB: a segment of its own whatever earlier tests of this worker left in the cache
    n = (32 << 20) // 4
    fw.cuda.empty_cache()
    record()
    a = fw.empty(n, device="cuda")
    del a
    fw.cuda.empty_cache()
    b = fw.empty(n, device="cuda")
    snap = memory._snapshot()
    assert keys["Snapshot"] == {"segments", "device_traces"}
    assert set(snap) == keys["Snapshot"] | {"allocator_settings", "external_annotations"}
    seg = snap["segments"][0]
    # documented, and the fields torch's snapshot also fills in (memory_viz reads them)
    assert set(seg) == keys["Segment"] | {"device", "requested_size", "is_expandable", "frames"}
    assert set(seg["blocks"][0]) == keys["Block"]
    assert {s for s in ("small", "large")} <= literals and seg["segment_type"] in literals
    entries = snap["device_traces"][fw.cuda.current_device()]
    assert {e["action"] for e in entries} == {"alloc", "free_requested", "free_completed",
                                              "segment_free", "segment_alloc"}
    assert {e["action"] for e in entries} <= literals
    for e in entries:
        assert set(e) == keys["TraceEntry"] - {"device_free", "pool_id"} | {"time_us"}
    frame = entries[0]["frames"][0]
    assert set(frame) == {"filename", "line", "name"} and set(frame) <= keys["Frame"]
    states = {blk["state"] for s in snap["segments"] for blk in s["blocks"]}
    assert states <= literals and "active_allocated" in states
    del b


def test_awaiting_free_and_oom():
    """A private allocator whose events complete when told: a block used on another stream
    waits (active_awaiting_free) between free_requested and free_completed; an OOM has no
    address but the memory left."""
    done = [False]
    backend = HostRawBackend(capacity=8 * MB)
    memory._record_memory_history()
    try:
        alloc = CachingAllocator(backend, device=0, record_event=lambda s: object(),
                                 query_event=lambda e: done[0],
                                 synchronize_event=lambda e: None)  # made while recording
        blk = alloc.malloc(1000, 0)
        alloc.record_stream(blk, 7)
        alloc.free(blk)
        h = allocator._history
        mine = [e for e in h.traces[0] if e.get("addr") in (blk.ptr,)]
        assert [e["action"] for e in mine] == ["segment_alloc", "alloc", "free_requested"]
        from framework.cuda._memory_history import segment_dicts
        seg, = segment_dicts(alloc, h)
        assert seg["blocks"][0]["state"] == "active_awaiting_free"
        assert seg["active_size"] == 512 * 2 and seg["allocated_size"] == 0
        done[0] = True
        alloc._core.process_events()
        assert h.traces[0][-1]["action"] == "free_completed"
        assert h.traces[0][-1]["addr"] == blk.ptr
        with pytest.raises(OutOfMemoryError):
            alloc.malloc(64 * MB, 0)
        oom = h.traces[0][-1]
        assert oom["action"] == "oom" and "addr" not in oom
        assert oom["size"] == 64 * MB and oom["device_free"] == 6 * MB
    finally:
        memory._record_memory_history(None)


def test_memory_viz_html_matches_torch(record):
    torch = pytest.importorskip("torch")
    record()
    a = fw.empty(1000, device="cuda")
    snap = memory._snapshot()
    assert _memory_viz.trace_plot(snap) == torch.cuda._memory_viz.trace_plot(snap)
    assert _memory_viz.trace_plot(snap, plot_segments=True) == \
        torch.cuda._memory_viz.trace_plot(snap, plot_segments=True)
    assert _memory_viz.segment_plot(snap) == torch.cuda._memory_viz.segment_plot(snap)
    del a
    snap = memory._snapshot()
    assert _memory_viz.trace_plot(snap, filter_freed=True) == \
        torch.cuda._memory_viz.trace_plot(pickle.loads(pickle.dumps(snap)), filter_freed=True)


def test_bad_arguments():
    with pytest.raises(ValueError, match="enabled"):
        memory._record_memory_history("everything")
    with pytest.raises(ValueError, match="context"):
        memory._record_memory_history(context="some")
    with pytest.raises(ValueError, match="stacks"):
        memory._record_memory_history(stacks="cpp")
    with pytest.raises(ValueError, match="max_entries"):
        memory._record_memory_history(max_entries=0)
    assert allocator._history is None


def test_hook_may_stop_recording_while_it_runs():
    """A hook that turns recording off mid-call (another thread could) leaves the allocator
    and its stats intact."""
    memory._record_memory_history()
    h = allocator._history
    calls = []

    def on_block(device, code, addr, size, stream):
        calls.append(code)
        memory._record_memory_history(None)
    h.on_block = on_block
    alloc = fw.cuda._runtime.state().allocator(fw.cuda.current_device())
    alloc._set_trace(h)
    before = fw.cuda.memory_allocated()
    a = fw.empty(1000, device="cuda")
    assert fw.cuda.memory_allocated() == before + 4096
    del a
    assert calls == [0] and allocator._history is None
    assert fw.cuda.memory_allocated() == before
