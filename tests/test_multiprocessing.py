"""framework.multiprocessing: tensors cross processes through shared memory (both sharing
strategies, fork and spawn), spawn's errors, no segment left behind, hogwild training."""
import gc
import os
import pathlib
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import framework as fw
import framework.multiprocessing as mp
from framework import _shared_memory
from multiprocessing.reduction import ForkingPickler

ROOT = pathlib.Path(__file__).resolve().parents[1]
TIMEOUT = 60
STRATEGIES = ["file_descriptor", "file_system"]


def _ours():
    return {n for n in os.listdir("/dev/shm") if n.startswith(_shared_memory.PREFIX)}


@pytest.fixture
def strategy(request):
    old = mp.get_sharing_strategy()
    mp.set_sharing_strategy(request.param)
    yield request.param
    mp.set_sharing_strategy(old)


def _start(ctx, target, *args):
    p = ctx.Process(target=target, args=args, daemon=True)
    p.start()
    return p


def _finish(p):
    p.join(TIMEOUT)
    alive = p.is_alive()
    if alive:
        p.kill()
        p.join()
    assert not alive, "child process hung"
    assert p.exitcode == 0, p.exitcode


# ---- share_memory_ / is_shared / empty_shared -------------------------------------------

def test_share_memory_in_place():
    base = fw.arange(12.0)
    view = base.view(3, 4)[1:, 1:]
    arr = np.arange(12.0, dtype=np.float32)
    assert not base.is_shared()
    assert base.share_memory_() is base
    assert base.is_shared() and view.is_shared()
    assert view._storage is base._storage
    ptr = base.data_ptr()
    base.share_memory_()                          # already shared: no move
    assert base.data_ptr() == ptr
    assert view.data_ptr() == ptr + 5 * 4
    np.testing.assert_array_equal(view.numpy(), arr.reshape(3, 4)[1:, 1:])
    base.numpy()[5] = -1.0                        # numpy shares the shared memory
    assert view[0, 0].item() == -1.0
    view.add_(1)
    assert base[6].item() == 7.0


@pytest.mark.parametrize("strategy", STRATEGIES, indirect=True)
def test_empty_shared(strategy):
    t = _shared_memory.empty_shared((3, 5), fw.float64)
    assert t.is_shared() and t.shape == (3, 5) and t.dtype is fw.float64
    assert t.is_contiguous() and t.data_ptr() % 64 == 0
    t.copy_(fw.ones(3, 5, dtype=fw.float64))
    np.testing.assert_array_equal(t.numpy(), np.ones((3, 5)))
    e = _shared_memory.empty_shared((0, 4), fw.int32)
    assert e.is_shared() and e.numel() == 0


def test_cuda_is_shared():
    if not fw.cuda.is_available():
        pytest.skip("no cuda")
    t = fw.ones(3, device="cuda")
    assert t.is_shared() and t.share_memory_() is t and t.device.type == "cuda"


def test_sharing_strategies():
    assert mp.get_all_sharing_strategies() == {"file_descriptor", "file_system"}
    assert mp.get_sharing_strategy() == "file_descriptor"
    with pytest.raises(ValueError):
        mp.set_sharing_strategy("bogus")
    assert mp.get_sharing_strategy() == "file_descriptor"


def test_drop_in():
    import multiprocessing
    for name in ("Process", "Queue", "SimpleQueue", "Pool", "get_context", "cpu_count",
                 "set_start_method", "Manager", "Event", "Lock", "Pipe", "current_process"):
        assert hasattr(mp, name), name
    assert mp.Process is multiprocessing.Process
    assert fw.multiprocessing is mp


def test_module_share_memory():
    m = fw.nn.Sequential(fw.nn.Linear(3, 4), fw.nn.BatchNorm1d(4))
    m(fw.randn(5, 3)).sum().backward()
    params = list(m.parameters())
    assert m.share_memory() is m
    assert all(a is b for a, b in zip(params, m.parameters()))
    assert all(p.is_shared() and p.grad.is_shared() and p.requires_grad for p in params)
    assert all(b.is_shared() for b in m.buffers())
    opt = fw.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    for _ in range(2):        # updates happen in place: the storage stays shared
        opt.zero_grad()
        m(fw.randn(5, 3)).sum().backward()
        opt.step()
    assert all(p.is_shared() for p in m.parameters())
    assert all(b.is_shared() for b in m.buffers())


# ---- pickling ---------------------------------------------------------------------------

def test_non_leaf_refused():
    a = fw.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf tensor "
                                           "which requires_grad"):
        ForkingPickler.dumps(a * 2)
    ForkingPickler.dumps((a * 2).detach())


@pytest.mark.parametrize("strategy", STRATEGIES, indirect=True)
def test_same_process_roundtrip(strategy):
    import pickle
    base = fw.arange(10.0)
    p = fw.nn.Parameter(fw.ones(2, 2))
    b, v, q = pickle.loads(ForkingPickler.dumps((base, base[3:7], p)))
    # received in the process that sent it: the very same storage again
    assert b._storage is base._storage and v._storage is base._storage
    assert v.storage_offset() == 3 and v.tolist() == [3.0, 4.0, 5.0, 6.0]
    assert isinstance(q, fw.nn.Parameter) and q.requires_grad and q._storage is p._storage


def _child_modify(q, r):
    t, v, p = q.get(timeout=TIMEOUT)
    same = t._storage is v._storage and v.data_ptr() == t.data_ptr() + 4 * 4
    r.put((same, type(p).__name__, p.requires_grad, t.is_shared()))
    t.add_(1)            # in place, in the shared memory
    v[0] = 100.0         # through the view
    p.data.mul_(3)
    mine = fw.zeros(3)
    r.put(mine)
    assert q.get(timeout=TIMEOUT) == "changed"
    r.put(mine.tolist())  # what the parent wrote into it


@pytest.mark.parametrize("strategy", STRATEGIES, indirect=True)
def test_queue_shares_both_ways_fork(strategy):
    _roundtrip(mp.get_context("fork"))


@pytest.mark.parametrize("strategy", ["file_system"], indirect=True)
def test_queue_shares_both_ways_spawn(strategy):
    _roundtrip(mp.get_context("spawn"))


def _roundtrip(ctx):
    before = _ours()
    q, r = ctx.Queue(), ctx.Queue()
    t = fw.zeros(8)
    p = fw.nn.Parameter(fw.ones(2))
    proc = _start(ctx, _child_modify, q, r)
    try:
        q.put((t, t[4:], p))
        assert r.get(timeout=TIMEOUT) == (True, "Parameter", True, True)
        back = r.get(timeout=TIMEOUT)
        # the child's writes are seen here
        assert t.tolist() == [1.0] * 4 + [100.0] + [1.0] * 3
        assert p.tolist() == [3.0, 3.0] and p.requires_grad
        # and ours there
        assert back.is_shared()
        back.fill_(5.0)
        q.put("changed")
        assert r.get(timeout=TIMEOUT) == [5.0, 5.0, 5.0]
    finally:
        _finish(proc)
    del back, t, p, q, r
    gc.collect()
    assert _ours() <= before


def _child_cuda(q, r):
    t = q.get(timeout=TIMEOUT)
    r.put((str(t.device), t.tolist()))
    t.mul_(2)
    r.put(fw.full((2,), 7.0, device="cuda"))
    q.get(timeout=TIMEOUT)


def test_simulated_cuda_shares():
    if not fw.cuda.is_available() or fw.cuda._runtime.mode() != "sim":
        pytest.skip("needs simulated cuda")
    ctx = mp.get_context("fork")
    q, r = ctx.Queue(), ctx.Queue()
    t = fw.arange(5.0, device="cuda")
    proc = _start(ctx, _child_cuda, q, r)
    try:
        q.put(t)
        assert r.get(timeout=TIMEOUT) == ("cuda:0", [0.0, 1.0, 2.0, 3.0, 4.0])
        c = r.get(timeout=TIMEOUT)
        assert c.device.type == "cuda" and (c + 1).tolist() == [8.0, 8.0]
        assert t.device.type == "cuda" and t.tolist() == [0.0, 2.0, 4.0, 6.0, 8.0]
        q.put(None)
    finally:
        _finish(proc)


def _pool_fn(t):
    t.add_(10)
    return t.sum().item()


def test_pool_fork():
    ctx = mp.get_context("fork")
    ts = [fw.full((4,), float(i)) for i in range(3)]
    with ctx.Pool(2) as pool:
        sums = pool.map(_pool_fn, ts, chunksize=1)
    assert sums == [40.0, 44.0, 48.0]
    assert [t[0].item() for t in ts] == [10.0, 11.0, 12.0]   # updated in place, shared


# ---- spawn ------------------------------------------------------------------------------

def _fill(i, t):
    t[i] = i + 1.0


def _raise(i):
    if i == 1:
        raise ValueError("boom from the child")
    time.sleep(30)


def _exit3(i):
    os._exit(3)


def _sigkill(i):
    os.kill(os.getpid(), signal.SIGKILL)


def test_spawn_shares_args():
    t = fw.zeros(2)
    assert mp.spawn(_fill, args=(t,), nprocs=2) is None        # start_method="spawn"
    assert t.tolist() == [1.0, 2.0]


def test_spawn_raised():
    with pytest.raises(mp.ProcessRaisedException) as e:
        mp.spawn(_raise, nprocs=2, start_method="fork")
    msg = str(e.value)
    assert "-- Process 1 terminated with the following error:" in msg
    assert "Traceback" in msg and "_raise" in msg and "ValueError: boom from the child" in msg
    assert e.value.error_index == 1


def test_spawn_exited():
    with pytest.raises(mp.ProcessExitedException, match="process 0 terminated with exit "
                                                        "code 3") as e:
        mp.spawn(_exit3, nprocs=1, start_method="fork")
    assert e.value.exit_code == 3
    ctx = mp.spawn(_sigkill, nprocs=1, join=False, start_method="fork")
    assert isinstance(ctx, mp.ProcessContext) and len(ctx.pids()) == 1
    with pytest.raises(mp.ProcessExitedException, match="process 0 terminated with signal "
                                                        "SIGKILL") as e:
        while not ctx.join(TIMEOUT):
            pass
    assert e.value.signal_name == "SIGKILL" and e.value.exit_code == -signal.SIGKILL


# ---- nothing left in /dev/shm -----------------------------------------------------------

_LEAKY = textwrap.dedent("""
    import os, signal, sys
    import framework as fw
    import framework.multiprocessing as mp

    def hold(q, r):
        t = q.get()
        r.put(fw.ones(3))          # made here, received by the parent
        q.get()
        os.kill(os.getpid(), signal.SIGKILL)   # dies holding its references

    if __name__ == "__main__":
        mp.set_sharing_strategy(sys.argv[1])
        ctx = mp.get_context("fork")
        q, r = ctx.Queue(), ctx.Queue()
        p = ctx.Process(target=hold, args=(q, r))
        p.start()
        q.put(fw.zeros(4))
        got = r.get(timeout=60)
        q.put("received")
        p.join(60)
        q.put(fw.zeros(5))         # in flight, never received
        lost = ctx.SimpleQueue()
        lost.put(fw.zeros(6))
        print("ok", got.tolist(), p.exitcode, flush=True)
""")


@pytest.mark.parametrize("strat", STRATEGIES)
def test_no_segment_left(tmp_path, strat):
    before = _ours()
    script = tmp_path / "leaky.py"
    script.write_text(_LEAKY)
    out = subprocess.run([sys.executable, str(script), strat], capture_output=True,
                         text=True, timeout=TIMEOUT, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr
    assert "ok [1.0, 1.0, 1.0] -9" in out.stdout
    deadline = time.monotonic() + 10    # the resource tracker may finish just after
    while _ours() - before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _ours() - before


def test_own_segments_released():
    mp.set_sharing_strategy("file_system")
    try:
        before = _ours()
        t = fw.arange(6.0).share_memory_()
        made = _ours() - before
        assert len(made) == 1
        import pickle
        u = pickle.loads(ForkingPickler.dumps(t[2:]))
        assert u.tolist() == [2.0, 3.0, 4.0, 5.0]
        del t, u
        gc.collect()
        assert not _ours() & made
    finally:
        mp.set_sharing_strategy("file_descriptor")


# ---- the hogwild example ----------------------------------------------------------------

def test_hogwild_example():
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "hogwild.py"),
                          "--num-processes", "2", "--epochs", "2", "--train-size", "4000"],
                         capture_output=True, text=True, timeout=120, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr
    acc = {}
    for line in out.stdout.splitlines():
        key = line.split(":")[0].split(",")[0].strip()
        acc[key] = float(line.split("accuracy")[1].split()[0])
    assert acc["untrained"] < 0.3
    assert acc["single process"] > 0.5
    assert acc["hogwild"] > acc["single process"] - 0.05
