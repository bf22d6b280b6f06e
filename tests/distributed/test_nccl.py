"""The "nccl" backend. Everywhere: the binding, the error without a GPU or library, and on
simulated cuda (TRITON_INTERPRET=1) the Python path over a fake libnccl.so.2 (it records the
calls and does them for one rank on host memory): routing, arguments, work, the watchdog.
With a real GPU and libnccl.so.2: every collective on a world of one, and with two GPUs on
two processes started by the launcher (this file is their script), against NumPy."""
import ctypes
import datetime
import os
import re
import subprocess
import sys
import time

import numpy as np
import pytest

import framework as fw
import framework.distributed as dist
from framework.distributed import mpi_backend
from framework.distributed import nccl_backend as nb
from tests.helpers import child_env

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


# marks' conditions are strings: evaluated at collection, so that a rank running this file
# as its script first picks its device, then starts CUDA
def _simulated():
    return fw.cuda.is_available() and fw.cuda.is_simulated()


def _real_gpu():
    return (os.environ.get("TRITON_INTERPRET", "0") in ("", "0") and fw.cuda.is_available()
            and not fw.cuda.is_simulated() and nb.find_library() is not None)


# ---- the binding --------------------------------------------------------------------------

def test_binding_types_and_constants():
    assert ctypes.sizeof(nb.ncclUniqueId) == 128 == nb.NCCL_UNIQUE_ID_BYTES
    assert ctypes.sizeof(nb.ncclComm_t) == ctypes.sizeof(nb.cudaStream_t) == \
        ctypes.sizeof(ctypes.c_void_p)
    assert [nb.ncclInt8, nb.ncclUint8, nb.ncclInt32, nb.ncclUint32, nb.ncclInt64,
            nb.ncclUint64, nb.ncclFloat16, nb.ncclFloat32, nb.ncclFloat64,
            nb.ncclBfloat16] == list(range(10))
    assert (nb.ncclSum, nb.ncclProd, nb.ncclMax, nb.ncclMin, nb.ncclAvg) == (0, 1, 2, 3, 4)
    assert nb.DATATYPES[fw.bool] == nb.DATATYPES[fw.uint8] == nb.ncclUint8
    assert nb.DATATYPES[fw.bfloat16] == 9 and nb.DATATYPES[fw.float32] == 7
    assert fw.int16 not in nb.DATATYPES
    assert set(nb.RED_OPS) == {"SUM", "PRODUCT", "MAX", "MIN", "AVG"}
    assert set(nb.SIGNATURES) == {
        "ncclGetVersion", "ncclGetUniqueId", "ncclCommInitRank", "ncclCommDestroy",
        "ncclCommAbort", "ncclCommGetAsyncError", "ncclGetErrorString", "ncclAllReduce",
        "ncclBroadcast", "ncclReduce", "ncclAllGather", "ncclReduceScatter", "ncclSend",
        "ncclRecv", "ncclGroupStart", "ncclGroupEnd"}
    # ncclUniqueId goes by value; count is size_t
    assert nb.SIGNATURES["ncclCommInitRank"][1][2] is nb.ncclUniqueId
    assert nb.SIGNATURES["ncclAllReduce"][1][2] is ctypes.c_size_t
    assert nb.decode_version(22703) == (2, 27, 3) and nb.decode_version(2804) == (2, 8, 4)
    fake = FakeNccl()
    lib = nb.Library(fake)
    assert lib.version == (2, 27, 3)
    fake.fail["ncclAllReduce"] = nb.ncclInvalidArgument
    with pytest.raises(nb.NcclError, match="ncclAllReduce, invalid argument, NCCL version "
                                           "2.27.3") as e:
        lib.all_reduce(0, 0, 1, 7, 0, 0, 0)
    assert e.value.code == 4 and isinstance(e.value, RuntimeError)


def test_no_gpu_or_no_library_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(nb, "_lib", None)
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    assert not nb.is_available() and not dist.is_nccl_available()
    with pytest.raises(RuntimeError, match="needs a GPU.*TRITON_INTERPRET=1.*backend='mpi'"):
        dist.init_process_group("nccl")
    assert not dist.is_initialized()
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    monkeypatch.setattr(nb, "find_library", lambda: None)
    with pytest.raises(RuntimeError, match="libnccl.so.2 was not found"):
        nb.require()


class FakeNccl:
    """Stands in for the CDLL of libnccl.so.2: records every call and performs it as NCCL
    would for a communicator of one rank, on host memory. ``factor`` multiplies float32
    SUM all-reduces (as if that many ranks held the same data)."""
    SIZES = {0: 1, 1: 1, 2: 4, 3: 4, 4: 8, 5: 8, 6: 2, 7: 4, 8: 8, 9: 2}

    def __init__(self, version=22703):
        self.calls, self.version, self.async_error, self.factor = [], version, 0, 1
        self.fail, self.depth, self.sends, self.recvs, self.inits = {}, 0, [], [], []

    def __getattr__(self, name):
        impl = getattr(type(self), "_" + name, None)
        if not name.startswith("nccl") or impl is None:
            raise AttributeError(name)

        def fn(*args):
            self.calls.append((name, args))
            return self.fail.get(name) or impl(self, *args) or 0
        return fn

    def names(self):
        return [c[0] for c in self.calls]

    def last(self, name):
        return [a for n, a in self.calls if n == name][-1]

    def _copy(self, src, dst, count, dt):
        if src != dst and count:
            ctypes.memmove(dst, src, count * self.SIZES[dt])

    def _ncclGetVersion(self, p):
        p._obj.value = self.version

    def _ncclGetErrorString(self, code):
        return {4: b"invalid argument", 6: b"remote process exited or there was a network "
                b"error"}.get(code, b"error %d" % code)

    def _ncclGetUniqueId(self, p):
        p._obj.internal[:] = os.urandom(128)

    def _ncclCommInitRank(self, p, nranks, uid, rank):
        self.inits.append((nranks, rank, bytes(uid).hex()[:16]))
        p._obj.value = 0x1000 * len(self.inits)

    _ncclCommDestroy = _ncclCommAbort = lambda self, comm: None

    def _ncclCommGetAsyncError(self, comm, p):
        p._obj.value = self.async_error

    def _ncclAllReduce(self, s, r, n, dt, op, comm, stream):
        self._copy(s, r, n, dt)
        if dt == 7 and op == 0 and n and self.factor != 1:
            a = np.ctypeslib.as_array((ctypes.c_float * n).from_address(r))
            a *= self.factor

    def _ncclBroadcast(self, s, r, n, dt, *rest):    # for one rank: a copy
        self._copy(s, r, n, dt)

    _ncclReduce = _ncclAllGather = _ncclReduceScatter = _ncclBroadcast

    def _ncclSend(self, buf, n, dt, peer, comm, stream, queue="sends"):
        getattr(self, queue).append((buf, n * self.SIZES[dt]))
        self._match()

    def _ncclRecv(self, *args):
        self._ncclSend(*args, queue="recvs")

    def _ncclGroupStart(self, step=1):
        self.depth += step
        self._match()

    _ncclGroupEnd = lambda self: self._ncclGroupStart(-1)   # noqa: E731

    def _match(self):
        while not self.depth and self.sends and self.recvs:
            (s, n), (r, m) = self.sends.pop(0), self.recvs.pop(0)
            assert n == m, f"send of {n} bytes matched with a receive of {m}"
            ctypes.memmove(r, s, n)


sim_only = pytest.mark.skipif("not _simulated()", reason="needs simulated cuda "
                              "(TRITON_INTERPRET=1): the fake library writes host memory")


def install_fake(setattr):
    fake = FakeNccl()
    setattr(nb, "_lib", nb.Library(fake))
    setattr(nb, "_has_gpu", lambda: True)
    setattr(nb, "_device_usable", lambda: True)
    setattr(nb, "_POLL_S", 0.02)
    return fake


@pytest.fixture
def fake_world(monkeypatch):
    """A world of one on the "nccl" backend, over the fake library."""
    pytest.importorskip("mpi4py")
    fake = install_fake(monkeypatch.setattr)
    dist.init_process_group("nccl", init_method="env://")
    yield fake
    if dist.is_initialized():
        dist.destroy_process_group()
    mpi_backend.failed = False        # a failure we caused must not fail pytest's exit


def cuda(a, dtype=None):
    return fw.tensor(np.asarray(a), dtype=dtype, device="cuda")


@sim_only
def test_all_reduce_calls_nccl_on_the_current_stream(fake_world):
    fake = fake_world
    assert dist.get_backend() == "nccl"
    assert dist.default_pg_timeout != dist.GroupMember.WORLD.timeout   # NCCL's 10 minutes
    t = cuda(np.arange(10, dtype=np.float32))
    s = fw.cuda.Stream()
    with fw.cuda.stream(s):
        assert dist.all_reduce(t) is None
    send, recv, count, dt, op, comm, stream = fake.last("ncclAllReduce")
    assert (send, recv, count, dt, op, stream) == (t.data_ptr(), t.data_ptr(), 10,
                                                    nb.ncclFloat32, nb.ncclSum, s.cuda_stream)
    assert fake.names()[:2] == ["ncclGetVersion", "ncclGetUniqueId"] and comm == 0x1000
    assert [i[:2] for i in fake.inits] == [(1, 0)]
    dist.all_reduce(t, dist.ReduceOp.AVG)
    assert fake.last("ncclAllReduce")[4] == nb.ncclAvg      # NCCL's own average
    b = cuda([True, False, True])
    dist.all_reduce(b)                                      # bool: uint8, SUM as MAX
    assert fake.last("ncclAllReduce")[2:5] == (3, nb.ncclUint8, nb.ncclMax)
    dist.all_reduce(b, dist.ReduceOp.PRODUCT)
    assert fake.last("ncclAllReduce")[4] == nb.ncclMin
    with pytest.raises(RuntimeError, match="Cannot use ReduceOp.BAND with NCCL"):
        dist.all_reduce(cuda([1, 2]), dist.ReduceOp.BAND)
    with pytest.raises(RuntimeError, match="Cannot use ReduceOp.AVG with boolean inputs"):
        dist.all_reduce(b, dist.ReduceOp.AVG)
    with pytest.raises(RuntimeError, match="not supported for NCCL process group: Short"):
        dist.all_reduce(cuda([1, 2], fw.int16))
    with pytest.raises(RuntimeError, match="No backend type associated with device type cpu"):
        dist.all_reduce(fw.ones(3))
    with pytest.raises(RuntimeError, match="No backend type associated with device type cpu"):
        dist.all_gather_into_tensor(cuda(np.ones(1, np.float32)), fw.ones(1))
    n = len(fake.calls)
    with pytest.raises(ValueError, match="output tensor size must be equal to world_size"):
        dist.all_gather_into_tensor(cuda([1.0, 2.0]), cuda([1.0]))
    assert len(fake.calls) == n                             # checked before NCCL


@sim_only
def test_reduce_scatter_checks_sizes_and_passes_recvcount(fake_world):
    fake = fake_world
    out, inp = cuda(np.zeros(4, np.float64)), cuda(np.arange(4.0))
    dist.reduce_scatter_tensor(out, inp, dist.ReduceOp.MAX)
    assert fake.last("ncclReduceScatter")[2:5] == (4, nb.ncclFloat64, nb.ncclMax)
    assert out.cpu().tolist() == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(ValueError, match="input tensor must be the same size as output size "
                                         "times world size"):
        dist.reduce_scatter_tensor(cuda(np.zeros(2)), cuda(np.zeros(3)))
    with pytest.raises(RuntimeError, match="same dtype"):
        dist.reduce_scatter_tensor(cuda(np.zeros(2, np.float32)), cuda(np.zeros(2)))


@sim_only
def test_async_work_waits_on_an_event(fake_world, monkeypatch):
    waited = []
    monkeypatch.setattr(fw.cuda.Stream, "wait_event",
                        lambda self, ev: waited.append((self.cuda_stream, ev)))
    t = cuda(np.ones(5, np.float32))
    s = fw.cuda.Stream()
    with fw.cuda.stream(s):
        w = dist.all_reduce(t, async_op=True)
    assert isinstance(w, dist.Work) and w.is_completed() and w.is_success()
    assert w.wait() is True
    # the current stream (the default one now) waits on the event recorded after the call
    assert waited == [(0, w._pending.event)] and w._pending.event._handle is not None
    ws = dist.batch_isend_irecv([dist.P2POp(dist.isend, t, 0),
                                 dist.P2POp(dist.irecv, cuda(np.zeros(5, np.float32)), 0)])
    assert len(ws) == 2 and ws[0] is ws[1]
    names = fake_world.names()
    assert names[-4:] == ["ncclGroupStart", "ncclSend", "ncclRecv", "ncclGroupEnd"]


@sim_only
def test_non_contiguous_tensors_go_through_a_copy(fake_world):
    fake_world.factor = 2.0           # as if two ranks held the same data
    base = cuda(np.arange(12, dtype=np.float32).reshape(3, 4))
    v = base[:, 1::2]
    dist.all_reduce(v)
    want = np.arange(12, dtype=np.float32).reshape(3, 4)
    want[:, 1::2] *= 2
    assert np.array_equal(base.cpu().numpy(), want)


@sim_only
@pytest.mark.parametrize("cause", ["timeout", "async error"])
def test_watchdog_aborts_a_stuck_operation(fake_world, monkeypatch, cause):
    pg = dist.GroupMember.WORLD
    pg.timeout = datetime.timedelta(seconds=0.3 if cause == "timeout" else 60)
    t = cuda(np.ones(3, np.float32))
    dist.all_reduce(t)                 # makes the communicator
    monkeypatch.setattr(nb._Pending, "done", lambda self: False)    # never finishes
    if cause != "timeout":
        fake_world.async_error = nb.ncclRemoteError
    start = time.monotonic()
    w = dist.all_reduce(t, async_op=True)
    while pg.broken is None and time.monotonic() - start < 5:
        time.sleep(0.02)
    assert "ncclCommAbort" in fake_world.names() and mpi_backend.failed
    if cause == "timeout":
        assert 0.25 < time.monotonic() - start < 5
        assert "Timeout(ms)=300" in pg.broken and "OpType=ALLREDUCE" in pg.broken
    else:
        assert "remote process exited" in pg.broken
    with pytest.raises(RuntimeError, match="unusable after an earlier failure.*" +
                       ("timed out" if cause == "timeout" else "remote process exited")):
        w.wait()
    with pytest.raises(RuntimeError, match="unusable after an earlier failure"):
        dist.barrier()


@sim_only
def test_blocking_wait_raises_after_the_timeout(fake_world, monkeypatch):
    monkeypatch.setenv("TORCH_NCCL_BLOCKING_WAIT", "1")
    dist.GroupMember.WORLD.timeout = datetime.timedelta(seconds=0.2)
    t = cuda(np.ones(3, np.float32))
    dist.all_reduce(t)
    monkeypatch.setattr(nb._Pending, "done", lambda self: False)
    with pytest.raises(RuntimeError, match="timed out.*Timeout\\(ms\\)=200"):
        dist.all_reduce(t)


@sim_only
def test_mpi_group_does_not_touch_nccl(monkeypatch):
    pytest.importorskip("mpi4py")
    fake = FakeNccl()
    monkeypatch.setattr(nb, "_lib", nb.Library(fake))
    dist.init_process_group("mpi")
    try:
        t = cuda(np.ones(3, np.float32))
        dist.all_reduce(t)
        dist.barrier()
        assert fake.names() == ["ncclGetVersion"] and dist.GroupMember.WORLD.nccl is None
    finally:
        dist.destroy_process_group()


def test_unique_id_reaches_every_rank_through_mpi():
    # three processes: a send between ranks 0 and 2 first makes a two-rank communicator,
    # then an all_reduce the group's; point to point then uses the group's
    mpiexec = __import__("shutil").which("mpiexec", path=os.path.dirname(sys.executable))
    if mpiexec is None or __import__("importlib").util.find_spec("mpi4py") is None:
        pytest.skip("needs mpiexec and mpi4py")
    r = subprocess.run([mpiexec, "-n", "3", sys.executable, os.path.abspath(__file__),
                        "rendezvous"], capture_output=True, text=True, timeout=120, cwd=ROOT,
                       env=child_env(ROOT, TRITON_INTERPRET="1"))
    assert r.returncode == 0, r.stdout + r.stderr
    inits = {int(r): [(int(a), int(b), c) for a, b, c in (i.split(",") for i in v.split(";"))]
             for r, v in re.findall(r"rank (\d) INITS ([0-9a-f,;]+)", r.stdout)}
    assert sorted(inits) == [0, 1, 2], r.stdout + r.stderr
    assert [i[:2] for i in inits[0]] == [(2, 0), (3, 0)] and \
        [i[:2] for i in inits[2]] == [(2, 1), (3, 2)] and [i[:2] for i in inits[1]] == [(3, 1)]
    assert inits[0][0][2] == inits[2][0][2]                  # the pair's id
    assert inits[0][1][2] == inits[1][0][2] == inits[2][1][2] != inits[0][0][2]


@sim_only
def test_every_collective_on_a_world_of_one(fake_world):
    failures = run_checks(0, 1, "cuda", big=False) + ddp_check(0, 1)
    assert not failures, failures


# ---- the checks, shared by the fake world, a real GPU and the two-process run ------------

DTYPES = [fw.float32, fw.float64, fw.float16, fw.bfloat16, fw.int32, fw.int64, fw.int8,
          fw.uint8, fw.bool]
FLOATS = (fw.float32, fw.float64, fw.float16, fw.bfloat16)


def data(rank, dtype, n, kind="any"):
    """Rank ``rank``'s input, as float64 values exact in ``dtype``."""
    rng = np.random.default_rng([rank, DTYPES.index(dtype), n])
    if dtype is fw.bool:
        return rng.integers(0, 2, n).astype(np.float64)
    if kind == "prod":
        return rng.integers(1, 3, n).astype(np.float64)
    if dtype in FLOATS:
        return fw.tensor(rng.standard_normal(n), dtype=dtype).to(fw.float64).numpy()
    return rng.integers(0 if dtype is fw.uint8 else -40, 40, n).astype(np.float64)


def on(a, dtype, device):
    """A ``dtype`` tensor on ``device`` holding ``a`` (converted on the host)."""
    return fw.tensor(np.asarray(a, np.float64), dtype=fw.float64).to(dtype).to(device)


def host(t):
    return t.cpu().to(fw.float64).numpy().reshape(-1)


def close(a, b, dtype):
    if a.shape != b.shape:
        return False
    if dtype in (fw.float16, fw.bfloat16):
        return np.allclose(a, b, rtol=2.0 ** -7, atol=1e-3)
    return np.allclose(a, b, rtol=1e-6, atol=1e-6) if dtype in FLOATS else \
        np.array_equal(a, b)


def expected(op, dtype, n, world, kind):
    xs = np.stack([data(r, dtype, n, kind) for r in range(world)])
    if dtype is fw.bool:
        return (xs.max(0) if op in ("SUM", "MAX") else xs.min(0))
    if op == "AVG":
        s = xs.sum(0)
        return s / world if dtype in FLOATS else np.trunc(s / world)
    f = {"SUM": np.sum, "PRODUCT": np.prod, "MIN": np.min, "MAX": np.max}[op]
    out = f(xs, 0)
    return out if dtype in FLOATS else out.astype(dtype.np).astype(np.float64)


def run_checks(rank, world, device, big):
    """Every collective against NumPy; returns the names of those that failed."""
    fails = []

    def check(name, ok):
        if not ok:
            fails.append(name)

    sizes = [0, 7, 1001] + ([3 * 2 ** 18 + 3] if big else [])
    for dtype in DTYPES:
        for n in sizes:
            for op in ["SUM", "AVG", "PRODUCT", "MIN", "MAX"]:
                if op == "AVG" and dtype is fw.bool:
                    continue
                kind = "prod" if op == "PRODUCT" else "any"
                t = on(data(rank, dtype, n, kind), dtype, device)
                w = dist.all_reduce(t, getattr(dist.ReduceOp, op), async_op=n == 7)
                if w is not None:
                    check("work wait", w.wait())
                want = on(expected(op, dtype, n, world, kind), dtype, "cpu")
                check(f"all_reduce {op} {dtype} n={n}", close(host(t), host(want), dtype))
            mine = data(rank, dtype, n)
            allx = [data(r, dtype, n) for r in range(world)]
            t = on(mine, dtype, device)
            dist.broadcast(t, src=world - 1)
            check(f"broadcast {dtype} {n}", close(host(t), allx[-1], dtype))
            t = on(mine, dtype, device)
            dist.reduce(t, dst=0, op=dist.ReduceOp.MAX)
            want = host(on(expected("MAX", dtype, n, world, "any"), dtype, "cpu"))
            check(f"reduce {dtype} {n}", rank != 0 or close(host(t), want, dtype))
            outs = [on(np.zeros(n), dtype, device) for _ in range(world)]
            dist.all_gather(outs, on(mine, dtype, device))
            check(f"all_gather {dtype} {n}",
                  all(close(host(o), x, dtype) for o, x in zip(outs, allx)))
            flat = on(np.zeros(world * n), dtype, device)
            dist.all_gather_into_tensor(flat, on(mine, dtype, device))
            check(f"all_gather_into_tensor {dtype} {n}",
                  close(host(flat), np.concatenate(allx), dtype))
        if dtype is not fw.bool:
            n = 6
            inputs = [data(r, dtype, world * n) for r in range(world)]
            out = on(np.zeros(n), dtype, device)
            dist.reduce_scatter_tensor(out, on(inputs[rank], dtype, device))
            want = host(on(np.sum(inputs, 0), dtype, "cpu"))[rank * n:(rank + 1) * n]
            check(f"reduce_scatter_tensor {dtype}", close(host(out), want, dtype))
            out = on(np.zeros(n), dtype, device)
            dist.reduce_scatter(out, [on(inputs[rank][i * n:(i + 1) * n], dtype, device)
                                      for i in range(world)])
            check(f"reduce_scatter {dtype}", close(host(out), want, dtype))
    # all_to_all_single with uneven splits: rank r sends r + j + 1 rows to rank j
    row = 3
    split = [[r + j + 1 for j in range(world)] for r in range(world)]
    src = [data(r, fw.float32, sum(split[r]) * row) for r in range(world)]
    out = on(np.zeros((sum(split[r][rank] for r in range(world)), row)), fw.float32, device)
    dist.all_to_all_single(out, on(src[rank].reshape(-1, row), fw.float32, device),
                           [split[r][rank] for r in range(world)], split[rank])
    want = np.concatenate([src[r].reshape(-1, row)[sum(split[r][:rank]):
                                                   sum(split[r][:rank + 1])]
                           for r in range(world)])
    check("all_to_all_single", close(host(out), want.reshape(-1), fw.float32))
    ins = [on(data(rank * world + j, fw.int64, 4 + j), fw.int64, device)
           for j in range(world)]
    outs = [on(np.zeros(4 + rank), fw.int64, device) for _ in range(world)]
    dist.all_to_all(outs, ins)
    check("all_to_all", all(close(host(o), data(r * world + rank, fw.int64, 4 + rank),
                                  fw.int64) for r, o in enumerate(outs)))
    mine = data(rank, fw.float64, 9)
    gl = [on(np.zeros(9), fw.float64, device) for _ in range(world)] if rank == 0 else None
    dist.gather(on(mine, fw.float64, device), gl, dst=0)
    check("gather", rank != 0 or all(close(host(g), data(r, fw.float64, 9), fw.float64)
                                      for r, g in enumerate(gl)))
    t = on(np.zeros(9), fw.float64, device)
    sl = [on(data(100 + r, fw.float64, 9), fw.float64, device) for r in range(world)]
    dist.scatter(t, sl if rank == world - 1 else None, src=world - 1)
    check("scatter", close(host(t), data(100 + rank, fw.float64, 9), fw.float64))
    # a ring of point-to-point operations, batched (a world of one sends to itself)
    nxt, prv = (rank + 1) % world, (rank - 1) % world
    got = on(np.zeros(5), fw.int32, device)
    for w in dist.batch_isend_irecv([dist.P2POp(dist.isend, on(data(rank, fw.int32, 5),
                                                                fw.int32, device), nxt),
                                     dist.P2POp(dist.irecv, got, prv)]):
        w.wait()
    check("batch_isend_irecv", close(host(got), data(prv, fw.int32, 5), fw.int32))
    if world > 1:
        t = on(data(rank, fw.float32, 5) if rank == 0 else np.zeros(5), fw.float32, device)
        if rank == 0:
            dist.send(t, dst=1)
        elif rank == 1:
            check("recv source", dist.recv(t, src=0) == 0)
            check("send/recv", close(host(t), data(0, fw.float32, 5), fw.float32))
    # non-contiguous, in place
    base = on(np.arange(24.0), fw.float32, device).view(4, 6)
    dist.all_reduce(base[:, ::3])
    want = np.arange(24.0).reshape(4, 6)
    want[:, ::3] *= world
    check("non-contiguous", close(host(base), want.reshape(-1), fw.float32))
    dist.barrier()
    dist.barrier(async_op=True).wait()
    objs = [{"rank": rank}, "x" * (rank + 1)] if rank == world - 1 else [None, None]
    dist.broadcast_object_list(objs, src=world - 1)
    check("broadcast_object_list", objs == [{"rank": world - 1}, "x" * world])
    everyone = [None] * world
    dist.all_gather_object(everyone, ("obj", rank, list(range(rank))))
    check("all_gather_object", everyone == [("obj", r, list(range(r))) for r in range(world)])
    gathered = [None] * world if rank == 0 else None
    dist.gather_object(rank * 10, gathered, dst=0)
    check("gather_object", rank != 0 or gathered == [r * 10 for r in range(world)])
    box = [None]
    dist.scatter_object_list(box, [f"to {r}" for r in range(world)] if rank == 0 else None,
                             src=0)
    check("scatter_object_list", box == [f"to {rank}"])
    return fails


# ---- a real GPU -----------------------------------------------------------------------------

gpu_only = pytest.mark.skipif("not _real_gpu()", reason="needs a GPU (not simulated) and "
                              "libnccl.so.2 (pip install nvidia-nccl-cu12)")


@gpu_only
def test_real_world_of_one():
    pytest.importorskip("mpi4py")
    lib = nb.require()
    assert lib.version >= (2, 10, 0) and nb.version() == lib.version
    assert any(bytes(lib.unique_id()))
    assert "invalid argument" in lib.error_string(nb.ncclInvalidArgument)
    dist.init_process_group("nccl", device_id=fw.cuda.current_device())
    try:
        failures = run_checks(0, 1, "cuda", big=True)
        assert not failures, failures
        t = fw.ones(2 ** 20, device="cuda")
        w = dist.all_reduce(t, async_op=True)
        w.wait()
        fw.cuda.synchronize()
        assert w.is_completed() and w.is_success() and t.sum().item() == 2 ** 20
        failures = ddp_check(0, 1)
        assert not failures, failures
    finally:
        dist.destroy_process_group()


def launch(mode, timeout=600):
    cmd = [sys.executable, "-m", "framework.distributed.run", "--nproc-per-node", "2",
           os.path.abspath(__file__), mode]
    env = child_env(ROOT)
    env.pop("TRITON_INTERPRET", None)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                          env=env)


two_gpus = pytest.mark.skipif("not _real_gpu() or fw.cuda.device_count() < 2",
                              reason="needs two GPUs and libnccl.so.2")


@two_gpus
def test_two_processes_against_numpy():
    pytest.importorskip("mpi4py")
    r = launch("checks")
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-5000:]
    done = re.findall(r"rank (\d) DONE failures=(\d+)", r.stdout)
    assert sorted(done) == [("0", "0"), ("1", "0")], out[-5000:]


@two_gpus
def test_two_processes_stuck_rank_makes_the_other_raise():
    pytest.importorskip("mpi4py")
    start = time.monotonic()
    r = launch("stuck", timeout=120)
    m = re.search(r"rank 0 raised after ([\d.]+)s: (.*)", r.stdout)
    assert r.returncode != 0 and m, r.stdout + r.stderr
    assert "timed out" in m.group(2) and "Timeout(ms)=3000" in m.group(2), m.group(0)
    assert 2.5 < float(m.group(1)) < 30 and time.monotonic() - start < 100


def ddp_check(rank, world):
    """One DistributedDataParallel step on half the batch each equals one process on the
    whole batch."""
    from framework.nn.parallel import DistributedDataParallel as DDP
    fw.manual_seed(0)
    model = fw.nn.Linear(8, 4).to("cuda")
    ref = fw.nn.Linear(8, 4).to("cuda")
    ref.load_state_dict(model.state_dict())
    ddp = DDP(model)
    x = on(np.random.default_rng(7).standard_normal((4 * world, 8)), fw.float32, "cuda")
    y = ddp(x[rank * 4:(rank + 1) * 4])
    (y * y).mean().backward()
    z = ref(x)
    (z * z).mean().backward()
    return [f"ddp grad {name}" for (name, p), q in zip(model.named_parameters(),
                                                       ref.parameters())
            if not close(host(p.grad), host(q.grad), fw.float32)]


def _worker(mode):
    """One rank of the two-process run (``python -m framework.distributed.run``)."""
    if mode == "rendezvous":   # simulated cuda, fake library (see the test above)
        fake = install_fake(setattr)
        dist.init_process_group("nccl")
        rank, t = dist.get_rank(), fw.ones(4, device="cuda")
        if rank in (0, 2):
            (dist.isend(t, 2) if rank == 0 else dist.irecv(t, 0)).wait()
        dist.all_reduce(t)
        if rank in (0, 2):
            (dist.isend(t, 2) if rank == 0 else dist.irecv(t, 0)).wait()
        # one write (print writes the newline apart): the ranks share the pipe
        sys.stdout.write(f"rank {rank} INITS {';'.join('%d,%d,%s' % i for i in fake.inits)}\n")
        sys.stdout.flush()
        dist.destroy_process_group()
        return
    fw.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    if mode == "stuck":        # rank 1 never calls the next collective
        dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=3))
        rank = dist.get_rank()
        t = fw.ones(1000, device="cuda")
        dist.all_reduce(t)
        fw.cuda.synchronize()
        if rank == 1:
            time.sleep(90)
            sys.exit(0)
        start = time.monotonic()
        try:
            for _ in range(3):
                dist.all_reduce(t)
                dist.barrier()
        except RuntimeError as e:
            print(f"rank {rank} raised after {time.monotonic() - start:.2f}s: {e}",
                  flush=True)
            sys.exit(3)
        print(f"rank {rank} did not raise", flush=True)
        sys.exit(0)
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    fails = run_checks(rank, world, "cuda", big=True) + ddp_check(rank, world)
    sys.stdout.write(f"rank {rank} DONE failures={len(fails)} {fails[:20]}\n")
    sys.stdout.flush()
    dist.destroy_process_group()
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    _worker(sys.argv[1] if len(sys.argv) > 1 else "checks")
