"""Key-value stores (HashStore, FileStore, TCPStore, PrefixStore) in one process with
threads, against PyTorch's behaviour; the smaller parts of the group API; and, under
``mpiexec -n 2`` (store_script.py), TCPStore across processes, the stores of
``init_process_group``, subgroups, ``monitored_barrier`` and the coalesced collectives."""
import os
import re
import socket
import threading
import time
from datetime import timedelta

import pytest

import framework.distributed as dist
from tests.distributed.test_ddp import mpirun

HERE = os.path.dirname(os.path.abspath(__file__))


def _stores(tmp_path):
    return {
        "hash": dist.HashStore(),
        "file": dist.FileStore(str(tmp_path / "store"), 1),
        "tcp": dist.TCPStore("127.0.0.1", 0, 1, True, timedelta(seconds=10)),
        "prefix": dist.PrefixStore("pre", dist.HashStore()),
    }


def _exercise(s):
    """The operations whose results PyTorch's stores define; returns what they gave."""
    out = []
    out.append(s.add("c", 3))
    out.append(s.add("c", -1))
    out.append(s.get("c"))
    s.set("x", "abc")
    s.append("x", b"de")
    s.append("new", "z")
    out += [s.get("x"), s.get("new")]
    out += [s.compare_set("y", "", "v"), s.compare_set("y", "w", "z"),
            s.compare_set("y", "v", "z"), s.compare_set("nope", "q", "r")]
    out += [s.check(["x", "y"]), s.check(["x", "nope"])]
    s.multi_set(["k1", "k2"], ["1", b"2"])
    out.append(s.multi_get(["k1", "k2", "x"]))
    out += [s.delete_key("k1"), s.delete_key("k1"), s.check(["k1"])]
    s.queue_push("q", "a")
    s.queue_push("q", "b")
    out += [s.queue_len("q"), s.queue_pop("q"), s.queue_pop("q", False), s.queue_len("q")]
    out.append(s.has_extended_api())
    return out


def test_store_operations_match_torch(tmp_path):
    torch = pytest.importorskip("torch")
    want = _exercise(torch.distributed.HashStore())
    for name, s in _stores(tmp_path).items():
        assert _exercise(s) == want, name
        with pytest.raises(dist.QueueEmptyError, match="queue is empty"):
            s.queue_pop("q", False)
        with pytest.raises(ValueError, match="stoll"):
            s.add("x", 1)
    # PrefixStore: keys land under "pre/" in the store it wraps; num_keys counts them all
    inner = dist.HashStore()
    inner.set("other", "1")
    p = dist.PrefixStore("pre", inner)
    p.set("a", "1")
    assert inner.get("pre/a") == b"1" and p.num_keys() == 2 and p.underlying_store is inner
    assert p.list_keys() == ["a"]


def test_get_of_missing_key_times_out(tmp_path):
    texts = {"hash": "Wait timeout", "file": "Timeout waiting for key: nokey after 100 ms",
             "tcp": "wait timeout after 100ms, keys: /nokey",
             "prefix": "Wait timeout"}
    for name, s in _stores(tmp_path).items():
        s.set_timeout(timedelta(milliseconds=100))
        assert s.timeout == timedelta(milliseconds=100)
        start = time.monotonic()
        with pytest.raises(dist.DistStoreError) as e:
            s.get("nokey")
        assert str(e.value) == texts[name]
        assert time.monotonic() - start >= 0.09, name
        with pytest.raises(dist.DistStoreError):
            s.wait(["a", "b"], timedelta(milliseconds=50))


def test_blocking_get_sees_other_threads(tmp_path):
    """A get or wait blocked in one thread returns once another thread sets the key (the
    TCPStore's other thread is another client store on the same server)."""
    for name, s in _stores(tmp_path).items():
        writer = s
        if name == "tcp":
            writer = dist.TCPStore("127.0.0.1", s.port, None, False, timedelta(seconds=10))
        timer = threading.Timer(0.1, lambda: (writer.set("late", "v"),
                                              writer.add("late2", 2)))
        timer.start()
        assert s.get("late") == b"v", name
        s.wait(["late2"])
        assert s.get("late2") == b"2"
        assert s.num_keys() >= 2
        timer.join()
        if name == "tcp":   # the master counts the "init/" key of its workers, as PyTorch's
            assert s.get("init/") == b"2"


def test_tcp_store_errors():
    port = dist.TCPStore("127.0.0.1", 0, None, True).port
    with pytest.raises(dist.DistStoreError,
                       match=r"Timed out after 0 seconds waiting for clients. 1/2 clients"):
        dist.TCPStore("127.0.0.1", 0, 2, True, timedelta(milliseconds=200))
    with socket.socket() as sk:       # a port nobody serves
        sk.bind(("127.0.0.1", 0))
        free = sk.getsockname()[1]
    with pytest.raises(dist.DistNetworkError, match=r"The client socket has timed out after "
                       rf"200ms while trying to connect to \(127.0.0.1, {free}\)."):
        dist.TCPStore("127.0.0.1", free, None, False, timedelta(milliseconds=200))
    assert port > 0
    # the error classes have PyTorch's hierarchy
    assert issubclass(dist.QueueEmptyError, dist.DistStoreError)
    for cls in (dist.DistBackendError, dist.DistNetworkError, dist.DistStoreError):
        assert issubclass(cls, dist.DistError) and issubclass(cls, RuntimeError)


def test_group_api_parts_match_torch(monkeypatch):
    torch = pytest.importorskip("torch")
    td = torch.distributed
    for b in ["gloo", "nccl", "mpi", "cpu:gloo,cuda:nccl"]:
        assert repr(dist.BackendConfig(b)) == repr(td.BackendConfig(td.Backend(b)))
        assert dist.BackendConfig(b).get_device_backend_map() == \
            td.BackendConfig(td.Backend(b)).get_device_backend_map()
    for name in ["AllreduceOptions", "BarrierOptions", "BroadcastOptions", "ReduceOptions",
                 "ScatterOptions", "GatherOptions", "AllToAllOptions",
                 "ReduceScatterOptions", "AllreduceCoalescedOptions"]:
        ours, theirs = getattr(dist, name)(), getattr(td, name)()
        for attr in dir(theirs):
            if not attr.startswith("_") and attr != "reduceOp":
                assert getattr(ours, attr) == getattr(theirs, attr), (name, attr)
    monkeypatch.setenv("TORCH_DISTRIBUTED_DEBUG", "detail")
    dist.set_debug_level_from_env()
    assert dist.get_debug_level() == dist.DebugLevel.DETAIL == 2
    monkeypatch.setenv("TORCH_DISTRIBUTED_DEBUG", "bad")
    with pytest.raises(ValueError, match="must be OFF, INFO, or DETAIL"):
        dist.set_debug_level_from_env()
    dist.set_debug_level(dist.DebugLevel.OFF)
    assert dist.get_debug_level() == dist.DebugLevel.OFF
    assert not dist.is_ucc_available() and not dist.is_xccl_available()
    assert dist.BuiltinCommHookType.FP16_COMPRESS.value == 2
    # init_process_group's checks of store= (before any process group is made)
    with pytest.raises(AssertionError, match="world_size must be positive if using store"):
        dist.init_process_group("mpi", store=dist.HashStore(), rank=0)
    with pytest.raises(AssertionError, match="rank must be non-negative if using store"):
        dist.init_process_group("mpi", store=dist.HashStore(), world_size=1)
    with pytest.raises(AssertionError, match="Cannot specify both init_method and store."):
        dist.init_process_group("mpi", store=dist.HashStore(), world_size=1, rank=0,
                                init_method="env://")
    assert not dist.is_initialized()


def _free_port():
    with socket.socket() as sk:
        sk.bind(("127.0.0.1", 0))
        return sk.getsockname()[1]


def test_stores_and_groups_across_two_processes(tmp_path):
    pytest.importorskip("mpi4py")
    r = mpirun(2, os.path.join(HERE, "store_script.py"), str(_free_port()),
               str(_free_port()), str(tmp_path / "filestore"))
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-5000:]
    assert "FAIL" not in r.stdout, out[-5000:]
    for rank in (0, 1):
        assert f"rank {rank} DONE failures=[]" in r.stdout, out[-5000:]
    assert len(re.findall(r"rank \d PASS", r.stdout)) == 44, out[-5000:]


def test_prefix_store_around_a_python_store():
    class DictStore(dist.Store):
        def __init__(self):
            super().__init__()
            self.kv = {}

        def set(self, key, value):
            self.kv[key] = value

        def get(self, key):
            return self.kv[key]

    inner = DictStore()
    p = dist.PrefixStore("job", inner)
    p.set("x", "1")
    assert inner.kv == {"job/x": b"1"} and p.get("x") == b"1"
    with pytest.raises(NotImplementedError, match="DictStore does not implement add"):
        p.add("y", 1)
