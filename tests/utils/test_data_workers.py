"""framework.utils.data.DataLoader with worker processes: same batches as in the main process,
seeding, order, sharding, errors, killed workers, timeouts, shutdown, persistent workers.
Every loader here has a timeout and every test a watchdog, so that none can hang."""
import faulthandler
import gc
import multiprocessing
import os
import random
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import framework as fw
from framework.utils import data as fd
from framework.utils.data import _worker

T = 20  # the loaders' timeout (s): a hang fails the test instead of stalling the suite
CTX = "fork"


@pytest.fixture(autouse=True)
def _watchdog():
    # a last resort: dump the stacks and exit if a test runs for far too long
    faulthandler.dump_traceback_later(120, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


def _children():
    """Pids of this process's live children (from /proc, psutil not being available)."""
    me, out = os.getpid(), []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == me and fields[0] != "Z":
            try:
                with open(f"/proc/{d}/cmdline", "rb") as f:
                    cmd = f.read()
            except OSError:
                continue
            # multiprocessing's resource tracker (started with spawn) outlives the loaders
            if b"resource_tracker" not in cmd:
                out.append(int(d))
    return out


def _assert_no_workers(before=()):
    gc.collect()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        left = [p for p in _children() if p not in before]
        if not left and not multiprocessing.active_children():
            return
        time.sleep(0.05)
    raise AssertionError(f"worker processes left: {left}")


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _loader(ds, **kw):
    kw.setdefault("timeout", T if kw.get("num_workers") else 0)
    if kw.get("num_workers"):
        kw.setdefault("multiprocessing_context", CTX)
    return fd.DataLoader(ds, **kw)


class Items(fd.Dataset):
    """Nested samples of tensors, NumPy arrays and numbers."""

    def __len__(self):
        return 13

    def __getitem__(self, i):
        return {"x": fw.arange(6, dtype=fw.float32).reshape(2, 3) + i,
                "np": np.full(3, i, dtype=np.int32), "i": i, "f": i / 2, "s": str(i)}


class Augment(fd.Dataset):
    """Random augmentations from the global generators (framework, NumPy, random)."""

    def __len__(self):
        return 12

    def __getitem__(self, i):
        info = fd.get_worker_info()
        return {"i": i, "fw": fw.rand(2), "np": np.random.rand(2), "py": random.random(),
                "wid": -1 if info is None else info.id}


def _flat(batches):
    out = []
    for b in batches:
        out.append({k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in b.items()})
    return out


def test_workers_match_main_process():
    ref = _flat(_loader(Items(), batch_size=4))
    for nw in (1, 2):
        for kw in (dict(), dict(prefetch_factor=1), dict(in_order=False)):
            got = _flat(_loader(Items(), batch_size=4, num_workers=nw, **kw))
            if kw.get("in_order") is False:
                got = sorted(got, key=lambda b: b["i"][0])
            assert got == ref
    # shuffled with a fixed generator: the sampler runs in the main process, same order
    for nw in (0, 1, 2):
        got = _flat(_loader(Items(), batch_size=5, shuffle=True, num_workers=nw,
                            generator=fw.Generator().manual_seed(4)))
        if nw == 0:
            ref = got
        assert got == ref
    _assert_no_workers()


def test_worker_batches_in_shared_memory():
    from framework import _shared_memory
    batches = list(_loader(fd.TensorDataset(fw.arange(24.).reshape(12, 2)), batch_size=5,
                           num_workers=2))
    assert all(_shared_memory.is_shared(b[0]._storage) for b in batches)
    assert [b[0][:, 0].tolist() for b in batches] == [[0., 2., 4., 6., 8.],
                                                      [10., 12., 14., 16., 18.], [20., 22.]]
    if fw.cuda.is_available():
        pinned = list(_loader(fd.TensorDataset(fw.arange(6.)), batch_size=4, num_workers=2,
                              pin_memory=True))
        assert all(b[0].is_pinned() for b in pinned)
        assert [b[0].tolist() for b in pinned] == [[0., 1., 2., 3.], [4., 5.]]


def _open_fds():
    return len(os.listdir("/proc/self/fd"))


class Many(fd.Dataset):
    """Samples of ``n`` tensors each (a batch with more fds than one socket message takes)."""

    def __init__(self, n, items=6):
        self.n, self.items = n, items

    def __len__(self):
        return self.items

    def __getitem__(self, i):
        return [fw.full((2,), float(i * 1000 + k)) for k in range(self.n)]


def test_worker_fds_come_on_their_channel(monkeypatch):
    # forked workers inherit the patch: a batch that crossed by multiprocessing's DupFd
    # round trip (resource sharer) instead of the loader's own socket would raise there
    from multiprocessing import reduction

    def no_round_trip(fd):
        raise AssertionError("a batch's fd went through the resource sharer")
    monkeypatch.setattr(reduction, "DupFd", no_round_trip)
    before = _open_fds()
    loader = _loader(Many(3, items=20), batch_size=4, num_workers=2)
    for _ in range(2):
        got = [b[k][:, 1].tolist() for b in loader for k in range(3)]
        assert got == [[float(i * 1000 + k) for i in range(j, j + 4)]
                       for j in range(0, 20, 4) for k in range(3)]
    del loader
    _assert_no_workers()
    assert _open_fds() <= before    # sockets and every received fd closed


def test_worker_fds_many_per_batch_and_queue_full():
    # 300 tensors a sample: one batch's fds need two socket messages; prefetch 12 with one
    # worker: 3,600 fds in flight
    before = _open_fds()
    loader = _loader(Many(300, items=16), batch_size=None, num_workers=1, prefetch_factor=12)
    it = iter(loader)
    time.sleep(1.0)   # the worker runs ahead and fills the queue
    for i, sample in enumerate(it):
        assert [t[1].item() for t in sample] == [float(i * 1000 + k) for k in range(300)]
    assert i == 15
    # dropped early with batches in flight: their fds go with the socket
    it = iter(loader)
    next(it)
    time.sleep(0.5)
    del it, loader, sample
    _assert_no_workers()
    assert _open_fds() <= before


def test_fd_channel_in_one_process(monkeypatch):
    # the channel's two ends in one process: what arrives, what is closed, the fallback
    from framework import _fd_channel
    import framework.multiprocessing  # noqa: F401 - the tensor reducers
    receiver, sender = _fd_channel.channel()
    try:
        a, b = fw.arange(4.), fw.arange(3) * 7
        first = _fd_channel.dumps([a, a[1:]], sender)   # never loaded: a dropped batch
        second = _fd_channel.dumps((b,), sender)
        assert sender.next_seq == 3
        (got,) = _fd_channel.Pickled(second).load()
        assert got.tolist() == [0, 7, 14] and got._storage is b._storage
        assert receiver.pending == {}    # the dropped batch's two fds were closed
        # too many storages in one batch, or a receiver gone: DupFd handles instead
        def nothing_to_take(token, seq):
            raise AssertionError("a fallback handle read the channel")
        monkeypatch.setattr(_fd_channel, "take", nothing_to_take)
        monkeypatch.setattr(_fd_channel, "_MAX_BATCH_FDS", 2)
        third = _fd_channel.dumps([b * 2, b * 3, b * 4], sender)
        assert [t.tolist() for t in _fd_channel.Pickled(third).load()] == \
            [[0, 14, 28], [0, 21, 42], [0, 28, 56]]
        receiver.sock.close()
        fourth = _fd_channel.dumps([b * 5], sender)
        assert _fd_channel.Pickled(fourth).load()[0].tolist() == [0, 35, 70]
        del first
    finally:
        receiver.close()
        sender.sock.close()


def test_generate_state_matches_torch():
    torch = pytest.importorskip("torch")
    from torch.utils.data._utils.worker import _generate_state
    for base in (0, 1, 2**32 - 1, 2**32, 6302733161693666986, 2**63 - 1):
        for wid in (0, 1, 7):
            assert _worker._generate_state(base, wid) == _generate_state(base, wid)


def test_worker_seeding_reproducible():
    """Workers seed framework, random and NumPy from base_seed as PyTorch does, so random
    augmentations are the same for the same generator seed, and can be recomputed."""
    def run(nw):
        return _flat(_loader(Augment(), batch_size=2, num_workers=nw,
                             generator=fw.Generator().manual_seed(11)))
    for nw in (1, 2):
        a, b = run(nw), run(nw)
        assert a == b
        # recompute: batch k goes to worker k % nw; each worker draws in its own order
        base = fw.empty((), dtype=fw.int64).random_(
            generator=fw.Generator().manual_seed(11)).item()
        state = {}
        for k, batch in enumerate(a):
            w = k % nw
            if w not in state:
                fw.manual_seed(base + w)
                random.seed(base + w)
                state[w] = (fw.get_rng_state(), random.getstate(),
                            np.random.RandomState(_worker._generate_state(base, w)))
            fw.set_rng_state(state[w][0])
            random.setstate(state[w][1])
            rs = state[w][2]
            for j, i in enumerate(batch["i"]):
                assert batch["wid"][j] == w
                assert batch["fw"][j] == fw.rand(2).tolist()
                assert np.allclose(batch["np"][j], rs.rand(2))
                assert batch["py"][j] == random.random()
            state[w] = (fw.get_rng_state(), random.getstate(), rs)
    _assert_no_workers()


class Shards(fd.IterableDataset):
    """Each worker yields its own share: start + id, step num_workers."""

    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = fd.get_worker_info()
        if info is None:
            return iter(range(self.n))
        assert info.dataset is not self or info.num_workers >= 1
        return iter(range(info.id, self.n, info.num_workers))


def test_iterable_sharding_matches_torch():
    torch = pytest.importorskip("torch")
    td = torch.utils.data

    class TShards(td.IterableDataset):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            info = td.get_worker_info()
            return iter(range(info.id, self.n, info.num_workers))

    for kw in (dict(batch_size=2), dict(batch_size=None), dict(batch_size=3, drop_last=True)):
        got = [b.tolist() if hasattr(b, "tolist") else b
               for b in _loader(Shards(11), num_workers=2, **kw)]
        ref = [b.tolist() if hasattr(b, "tolist") else b
               for b in td.DataLoader(TShards(11), num_workers=2, timeout=T,
                                      multiprocessing_context=CTX, **kw)]
        assert got == ref
    _assert_no_workers()


class Failing(fd.Dataset):
    def __init__(self, bad, exc=ValueError, sleep=None):
        self.bad, self.exc, self.sleep = bad, exc, sleep

    def __len__(self):
        return 10

    def __getitem__(self, i):
        if self.sleep is not None and i in self.sleep:
            time.sleep(1.5)
        if i == self.bad:
            if self.exc == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            raise self.exc(f"bad index {i}")
        return i


def test_worker_exception():
    # index 5 is in batch 2 (batch_size 2), which worker 2 % 2 = 0 loads
    loader = _loader(Failing(5), batch_size=2, num_workers=2)
    it = iter(loader)
    assert next(it).tolist() == [0, 1] and next(it).tolist() == [2, 3]
    with pytest.raises(ValueError) as e:
        next(it)
    msg = str(e.value)
    assert msg.startswith("Caught ValueError in DataLoader worker process 0.\n"
                          "Original Traceback (most recent call last):")
    assert "in __getitem__" in msg and "ValueError: bad index 5" in msg
    # the loader goes on after a worker's error, as PyTorch's does
    assert next(it).tolist() == [6, 7]
    del it, e  # the traceback holds the iterator
    with pytest.raises(KeyError, match="Caught KeyError in DataLoader worker process 1"):
        list(_loader(Failing(3, KeyError), batch_size=None, num_workers=2))

    def bad_init(worker_id):
        raise RuntimeError(f"init {worker_id}")
    with pytest.raises(RuntimeError, match="Caught RuntimeError in DataLoader worker process 0"):
        list(_loader(Failing(-1), batch_size=2, num_workers=1, worker_init_fn=bad_init))
    _assert_no_workers()


def test_worker_killed():
    loader = _loader(Failing(4, "kill"), batch_size=2, num_workers=2)
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited "
                                           "unexpectedly") as e:
        list(loader)
    assert time.monotonic() - start < 10
    assert isinstance(e.value.__cause__, RuntimeError)
    assert "is killed by signal: Killed." in str(e.value.__cause__)
    _assert_no_workers()


def test_timeout():
    loader = _loader(Failing(-1, sleep={4}), batch_size=2, num_workers=1, timeout=0.5)
    it = iter(loader)
    assert next(it).tolist() == [0, 1]
    with pytest.raises(RuntimeError, match="DataLoader timed out after 0.5 seconds"):
        next(it)
        next(it)
    del it
    _assert_no_workers()


def test_early_exit_and_worker_init_fn():
    seen = []

    def init(worker_id):
        # runs in the worker after seeding: get_worker_info is set
        info = fd.get_worker_info()
        assert info.id == worker_id and info.num_workers == 2
        assert info.seed == fw.initial_seed()

    loader = _loader(Items(), batch_size=2, num_workers=2, worker_init_fn=init)
    for b in loader:
        seen.append(b["i"].tolist())
        break
    assert seen == [[0, 1]]
    _assert_no_workers()
    it = iter(loader)
    next(it)
    del it
    _assert_no_workers()
    it = iter(loader)
    next(it)
    it = None
    gc.collect()
    _assert_no_workers()


class Pid(fd.Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        return i, os.getpid()


def test_persistent_workers():
    loader = _loader(Pid(), batch_size=2, num_workers=2, persistent_workers=True)
    epochs = []
    for _ in range(3):
        epochs.append([(b[0].tolist(), b[1].tolist()) for b in loader])
    pids = {p for e in epochs for _, ps in e for p in ps}
    assert len(pids) == 2 and os.getpid() not in pids
    assert all([x for x, _ in e] == [[0, 1], [2, 3], [4, 5]] for e in epochs)
    # an epoch abandoned half way: the next one starts cleanly with the same workers
    it = iter(loader)
    next(it)
    assert [b[0].tolist() for b in loader] == [[0, 1], [2, 3], [4, 5]]
    assert all(_alive(p) for p in pids)
    del loader, it
    _assert_no_workers()
    assert not any(_alive(p) for p in pids)


def test_persistent_iterable_workers():
    loader = _loader(Shards(7), batch_size=2, num_workers=2, persistent_workers=True)
    for _ in range(2):
        got = sorted(sum((b.tolist() for b in loader), []))
        assert got == list(range(7))
    del loader
    _assert_no_workers()


def _run_script(code, timeout=60):
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, timeout=timeout, cwd=os.path.dirname(fw.__path__[0]))
    assert r.returncode == 0, r.stderr
    return r.stdout


_SCRIPT_HEAD = """
    import os, sys, time
    import framework as fw
    from framework.utils import data as fd

    class Pid(fd.Dataset):
        def __len__(self):
            return 40
        def __getitem__(self, i):
            return fw.full((16,), float(i)), os.getpid()
"""


def _pids_from(out):
    return [int(p) for p in out.split()]


def test_workers_exit_with_the_program():
    # normal exit while an iterator holds live workers: the exit handler stops them
    out = _run_script(_SCRIPT_HEAD + """
    it = iter(fd.DataLoader(Pid(), batch_size=2, num_workers=2, timeout=20))
    pids = set(int(p) for _ in range(3) for p in next(it)[1])
    print(*pids)
    """)
    pids = _pids_from(out)
    assert len(pids) == 2
    time.sleep(0.2)
    assert not any(_alive(p) for p in pids)


def test_workers_exit_when_parent_dies():
    # the parent vanishes without any cleanup (os._exit): workers notice and exit
    out = _run_script(_SCRIPT_HEAD + """
    it = iter(fd.DataLoader(Pid(), batch_size=2, num_workers=2, timeout=20))
    pids = set(int(p) for _ in range(3) for p in next(it)[1])
    print(*pids, flush=True)
    os._exit(0)
    """)
    pids = _pids_from(out)
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(p) for p in pids)


@pytest.mark.parametrize("strategy", ["file_descriptor", "file_system"])
def test_no_shared_memory_left(strategy):
    # early exit with batches still in flight must not leave segments in /dev/shm
    out = _run_script(_SCRIPT_HEAD + f"""
    import gc, framework.multiprocessing as fmp
    fmp.set_sharing_strategy({strategy!r})
    loader = fd.DataLoader(Pid(), batch_size=4, num_workers=2, timeout=20, prefetch_factor=4)
    it = iter(loader)
    batch = next(it)
    pids = set(int(p) for p in batch[1]) | set(int(p) for p in next(it)[1])
    live = [f for f in os.listdir("/dev/shm") if any(f.startswith(f"fw_shm_{{p}}_") for p in pids)]
    print(len(live))
    del it, batch
    gc.collect()
    pids |= set(int(p) for b in loader for p in b[1])
    print(os.getpid(), *pids)
    """)
    live, out = out.split("\n", 1)
    assert int(live) > 0 if strategy == "file_system" else int(live) == 0
    pids = _pids_from(out)
    assert len(pids) >= 3
    time.sleep(0.2)
    left = [f for f in os.listdir("/dev/shm")
            if any(f.startswith(f"fw_shm_{p}_") for p in pids)]
    assert left == []


def test_spawn_context_and_prefetch():
    ds = fd.TensorDataset(fw.arange(20.).reshape(10, 2), fw.arange(10))
    loader = fd.DataLoader(ds, batch_size=3, num_workers=1, multiprocessing_context="spawn",
                           timeout=60, prefetch_factor=3)
    it = iter(loader)
    # prefetch_factor * num_workers tasks are sent ahead
    assert it._tasks_outstanding == 3 and it._send_idx == 3
    got = [(x[:, 0].tolist(), y.tolist()) for x, y in it]
    assert got == [([0., 2., 4.], [0, 1, 2]), ([6., 8., 10.], [3, 4, 5]),
                   ([12., 14., 16.], [6, 7, 8]), ([18.], [9])]
    del it
    _assert_no_workers()


def test_unpicklable_results_raise():
    class Local(Exception):
        pass

    class Bad(fd.Dataset):
        def __len__(self):
            return 6

        def __getitem__(self, i):
            if i == 2:
                raise Local("local exception class")
            if i == 4:
                return lambda: i  # cannot be pickled to the main process
            info = fd.get_worker_info()
            with pytest.raises(RuntimeError, match="Cannot assign attributes to WorkerInfo"):
                info.id = 5
            return i

    it = iter(_loader(Bad(), batch_size=None, num_workers=2))
    assert [next(it), next(it)] == [0, 1]
    # an exception class the main process cannot unpickle arrives as a RuntimeError
    with pytest.raises(RuntimeError, match="Caught Local in DataLoader worker process 0"):
        next(it)
    assert next(it) == 3
    # an unpicklable sample is an error, not a lost batch that the main process waits for
    with pytest.raises(AttributeError, match="(?s)Caught AttributeError in DataLoader worker "
                                             "process 0.*Can't pickle local object"):
        next(it)
    assert next(it) == 5
    with pytest.raises(StopIteration):
        next(it)
    del it
    _assert_no_workers()
