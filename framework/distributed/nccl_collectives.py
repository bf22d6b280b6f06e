"""Collectives and point-to-point operations of the ``"nccl"`` backend.

``collectives.py`` checks the arguments (PyTorch's errors, once for every backend) and sends
a group whose backend is NCCL here. Each operation is queued on the current stream of the
tensors' device: contiguous tensors are handed to NCCL in place, others through a
contiguous copy written back on the same stream. An event recorded after the NCCL call is
what ``Work.wait()`` makes the current stream wait for, and what the watchdog polls
(nccl_backend). Nothing here blocks the host, except ``barrier`` (as PyTorch's) and the
object collectives, which must read sizes back; with ``TORCH_NCCL_BLOCKING_WAIT=1`` every
operation blocks until done (raising after the group's timeout).
"""
import os
import pickle

import numpy as np

from .. import _dtype
from ..autograd import grad_mode
from . import nccl_backend as _nb
from .collectives import Work
from .mpi_backend import ReduceOp, _check_op

__all__ = ["routes", "NcclWork"]


def routes(pg, tensors):
    """Whether ``pg`` sends these tensors through NCCL: always for an ``"nccl"`` group
    (where cpu tensors are PyTorch's error), for cuda tensors under "cpu:gloo,cuda:nccl"."""
    cpu = [t for t in tensors if not t.is_cuda]
    if pg.nccl.only_cuda:
        if cpu:
            raise RuntimeError("No backend type associated with device type cpu")
        return True
    return bool(tensors) and not cpu


def _datatype(what, dtype):
    code = _nb.DATATYPES.get(dtype)
    if code is None:
        raise RuntimeError(f"{what}: Input tensor data type is not supported for NCCL "
                           f"process group: {dtype.scalar_name} ({dtype})")
    return code


def _red_op(what, op, dtype):
    """NCCL's reduction for ``op`` on ``dtype`` (bool: SUM is MAX, PRODUCT is MIN)."""
    _check_op(op)
    name = op.name
    if dtype is _dtype.bool:
        if name == "AVG":
            raise RuntimeError(f"{what}: Cannot use ReduceOp.AVG with boolean inputs")
        name = {"SUM": "MAX", "PRODUCT": "MIN"}.get(name, name)
    if name not in _nb.RED_OPS:
        raise RuntimeError(f"{what}: Cannot use ReduceOp.{name} with NCCL")
    return _nb.RED_OPS[name]


def _device_of(what, tensors):
    devs = sorted({t.get_device() for t in tensors})
    if len(devs) > 1:
        raise RuntimeError(f"{what}: Tensors must be on the same device, got "
                           f"{', '.join(f'cuda:{d}' for d in devs)}")
    return devs[0]


def _blocking():
    return os.environ.get("TORCH_NCCL_BLOCKING_WAIT", "0") not in ("", "0")


class NcclWork(Work):
    """A queued NCCL operation. ``wait()`` makes the current stream wait for it (the host
    goes on; with a ``timeout``, or TORCH_NCCL_BLOCKING_WAIT=1, the host waits too) and
    raises if the group failed; ``is_completed()`` asks without blocking."""

    def __init__(self, state, pending, result=None):
        self._state = state
        self._pg = state.pg
        self._pending = pending
        self._what = pending.what
        self._result = result
        self._done = False

    def is_completed(self):
        if not self._done:
            self._done = self._pg.broken is not None or self._pending.done()
        return self._done

    def is_success(self):
        return self.is_completed() and self._pg.broken is None

    def wait(self, timeout=None):
        self._state.check(self._what)
        if timeout is not None or _blocking():
            lim = timeout.total_seconds() if hasattr(timeout, "total_seconds") else timeout
            self._state.host_wait(self._pending, lim)
        from ..cuda import current_stream
        current_stream(self._pending.comm.device).wait_event(self._pending.event)
        return True

    synchronize = wait


class _Launch:
    """One operation: ``with _Launch(pg, what, tensors) as L:`` makes the tensors' device
    current, gives the communicator (``L.comm``, ``L.c``) and stream (``L.stream``, ``L.s``),
    runs on exit what must follow the NCCL calls on that stream (``L.after``), records the
    event and hands it to the watchdog; ``L.work`` is then the Work or None."""

    def __init__(self, pg, what, tensors, device=None, peer=None, async_op=False):
        self.state = pg.nccl
        self.state.check(what)
        self.pg, self.what, self.peer, self.async_op = pg, what, peer, async_op
        self.device = _device_of(what, tensors) if device is None else device
        self.lib = self.state.lib
        self.used, self.outs, self.after = list(tensors), [], []
        self.numel = (-1, -1)
        self.result = None
        self.work = None

    def __enter__(self):
        from .. import cuda
        self._dev = cuda.device(self.device)
        self._dev.__enter__()
        self._ng = grad_mode.no_grad()
        self._ng.__enter__()
        try:
            self.comm = self.state.comm(self.device, self.peer)
            self.c = self.comm.handle
            self.stream = cuda.current_stream(self.device)
            self.s = self.stream.cuda_stream
        except BaseException:
            self._leave()
            raise
        return self

    def _leave(self):
        self._ng.__exit__(None, None, None)
        self._dev.__exit__(None, None, None)

    def __exit__(self, et, e, tb):
        try:
            if et is None:
                self._finish()
        finally:
            self._leave()
        if isinstance(e, _nb.NcclError) and e.code not in (
                _nb.ncclInvalidArgument, _nb.ncclInvalidUsage):
            self.state.fail(f"{self.what} failed: {e}")   # the communicator is not usable
        return False

    def dense(self, t, out=False):
        """``t`` when contiguous, else a contiguous copy (copied back after, for an
        output): NCCL reads and writes flat memory."""
        if t.is_contiguous():
            if out:
                self.outs.append(t)
            return t
        c = t.contiguous()
        self.used.append(c)
        if out:
            self.after.append(lambda: t.copy_(c))
        return c

    def peer_index(self, group_rank):
        """``group_rank`` as a rank of this communicator (a two-rank one, or the group's)."""
        if self.comm.size == self.pg.size():
            return group_rank
        return 0 if self.comm.size == 1 else 1 - self.comm.rank

    def grouped(self):
        return _Grouped(self.lib)

    def _finish(self):
        from ..cuda import Event
        from ..cuda import _runtime
        for f in self.after:
            f()
        for t in self.outs:
            t._storage.version += 1       # written in place: autograd must see it
        for t in self.used:
            # memory that another stream allocated must outlive this stream's use of it
            _runtime.record_stream(t._storage, self.stream)
        ev = Event()
        ev.record(self.stream)
        p = self.state.track(ev, self.comm, self.what, *self.numel)
        if self.async_op:
            self.work = NcclWork(self.state, p, self.result)
        elif _blocking():
            self.state.host_wait(p)


class _Grouped:
    """``ncclGroupStart`` ... ``ncclGroupEnd`` (ended even when a call inside raised, so
    NCCL's group depth stays right)."""

    def __init__(self, lib):
        self.lib = lib

    def __enter__(self):
        self.lib.group_start()

    def __exit__(self, et, e, tb):
        if et is None:
            self.lib.group_end()
        else:
            try:
                self.lib.group_end()
            except Exception:   # noqa: BLE001 - the first error is the one to report
                pass
        return False


def _ptr(t, offset=0):
    return t.data_ptr() + offset * t.dtype.itemsize


# ---- collectives (arguments already checked by collectives.py) --------------------------

def all_reduce(pg, tensor, op, async_op, what="allreduce"):
    dt, nop = _datatype("all_reduce", tensor.dtype), _red_op("all_reduce", op, tensor.dtype)
    with _Launch(pg, what, [tensor], async_op=async_op) as L:
        b = L.dense(tensor, out=True)
        n = b.numel()
        L.numel = (n, n)
        if n:
            L.lib.all_reduce(_ptr(b), _ptr(b), n, dt, nop, L.c, L.s)
    return L.work


def broadcast(pg, tensor, root, async_op):
    dt = _datatype("broadcast", tensor.dtype)
    with _Launch(pg, "broadcast", [tensor], async_op=async_op) as L:
        b = L.dense(tensor, out=pg.rank() != root)
        n = b.numel()
        L.numel = (n, n)
        if n:
            L.lib.broadcast(_ptr(b), _ptr(b), n, dt, root, L.c, L.s)
    return L.work


def reduce(pg, tensor, root, op, async_op):
    dt, nop = _datatype("reduce", tensor.dtype), _red_op("reduce", op, tensor.dtype)
    with _Launch(pg, "reduce", [tensor], async_op=async_op) as L:
        b = L.dense(tensor, out=pg.rank() == root)
        n = b.numel()
        L.numel = (n, n)
        if n:
            L.lib.reduce(_ptr(b), _ptr(b), n, dt, nop, root, L.c, L.s)
    return L.work


def all_gather_into_tensor(pg, output, input, async_op):
    dt = _datatype("all_gather_into_tensor", input.dtype)
    with _Launch(pg, "_allgather_base", [output, input], async_op=async_op) as L:
        src, out = L.dense(input), L.dense(output, out=True)
        L.numel = (src.numel(), out.numel())
        if src.numel():
            L.lib.all_gather(_ptr(src), _ptr(out), src.numel(), dt, L.c, L.s)
    return L.work


def all_gather(pg, tensor_list, tensor, async_op):
    from .._ops import creation
    dt = _datatype("all_gather", tensor.dtype)
    with _Launch(pg, "allgather", [tensor, *tensor_list], async_op=async_op) as L:
        src = L.dense(tensor)
        n = src.numel()
        flat = creation.empty((pg.size() * n,), dtype=tensor.dtype, device=tensor.device)
        L.used.append(flat)
        L.numel = (n, flat.numel())
        if n:
            L.lib.all_gather(_ptr(src), _ptr(flat), n, dt, L.c, L.s)
        for i, t in enumerate(tensor_list):
            L.after.append(lambda t=t, i=i: t.copy_(flat[i * n:(i + 1) * n].view(t.shape)))
    return L.work


def reduce_scatter_tensor(pg, output, input, op, async_op):
    what = "reduce_scatter_tensor"
    dt, nop = _datatype(what, input.dtype), _red_op(what, op, input.dtype)
    with _Launch(pg, "_reduce_scatter_base", [output, input], async_op=async_op) as L:
        src, out = L.dense(input), L.dense(output, out=True)
        L.numel = (src.numel(), out.numel())
        if out.numel():
            L.lib.reduce_scatter(_ptr(src), _ptr(out), out.numel(), dt, nop, L.c, L.s)
    return L.work


def _exchange(L, sends, recvs, dt):
    """Grouped sends and receives: ``(tensor, offset, count, group rank)`` each."""
    with L.grouped():
        for t, off, count, r in sends:
            if count:
                L.lib.send(_ptr(t, off), count, dt, L.peer_index(r), L.c, L.s)
        for t, off, count, r in recvs:
            if count:
                L.lib.recv(_ptr(t, off), count, dt, L.peer_index(r), L.c, L.s)


def _offsets(counts):
    return np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64).tolist()


def all_to_all_single(pg, output, input, send_counts, recv_counts, async_op):
    """``send_counts``/``recv_counts``: elements to and from each rank."""
    dt = _datatype("all_to_all_single", input.dtype)
    with _Launch(pg, "alltoall_base", [output, input], async_op=async_op) as L:
        src, out = L.dense(input), L.dense(output, out=True)
        L.numel = (src.numel(), out.numel())
        n = pg.size()
        so, ro = _offsets(send_counts), _offsets(recv_counts)
        _exchange(L, [(src, so[r], send_counts[r], r) for r in range(n)],
                  [(out, ro[r], recv_counts[r], r) for r in range(n)], dt)
    return L.work


def all_to_all(pg, output_tensor_list, input_tensor_list, async_op):
    dt = _datatype("all_to_all", input_tensor_list[0].dtype)
    with _Launch(pg, "alltoall", [*output_tensor_list, *input_tensor_list],
                 async_op=async_op) as L:
        ins = [L.dense(t) for t in input_tensor_list]
        outs = [L.dense(t, out=True) for t in output_tensor_list]
        L.numel = (sum(t.numel() for t in ins), sum(t.numel() for t in outs))
        _exchange(L, [(t, 0, t.numel(), r) for r, t in enumerate(ins)],
                  [(t, 0, t.numel(), r) for r, t in enumerate(outs)], dt)
    return L.work


def gather(pg, tensor, gather_list, root, async_op):
    dt = _datatype("gather", tensor.dtype)
    me = pg.rank()
    with _Launch(pg, "gather", [tensor, *(gather_list or ())], async_op=async_op) as L:
        src = L.dense(tensor)
        outs = [L.dense(t, out=True) for t in gather_list] if me == root else []
        L.numel = (src.numel(), sum(t.numel() for t in outs))
        _exchange(L, [(src, 0, src.numel(), root)],
                  [(t, 0, t.numel(), r) for r, t in enumerate(outs)], dt)
    return L.work


def scatter(pg, tensor, scatter_list, root, async_op):
    dt = _datatype("scatter", tensor.dtype)
    me = pg.rank()
    with _Launch(pg, "scatter", [tensor, *(scatter_list or ())], async_op=async_op) as L:
        out = L.dense(tensor, out=True)
        ins = [L.dense(t) for t in scatter_list] if me == root else []
        L.numel = (sum(t.numel() for t in ins), out.numel())
        _exchange(L, [(t, 0, t.numel(), r) for r, t in enumerate(ins)],
                  [(out, 0, out.numel(), root)], dt)
    return L.work


def barrier(pg, async_op, device_ids):
    """An all-reduce of one element; without ``async_op`` the host waits for it (as
    PyTorch's barrier does)."""
    from .. import cuda
    from .._ops import creation
    dev = device_ids[0] if device_ids else pg.nccl.last_device
    if dev is None:
        dev = cuda.current_device()
    t = creation.zeros((1,), dtype=_dtype.uint8, device=f"cuda:{cuda._device_index(dev)}")
    w = all_reduce(pg, t, ReduceOp.SUM, True, "barrier")
    if async_op:
        return w
    pg.nccl.host_wait(w._pending)
    return None


# ---- point to point -----------------------------------------------------------------------

def isend(pg, tensor, peer):
    dt = _datatype("isend", tensor.dtype)
    with _Launch(pg, "send", [tensor], peer=peer, async_op=True) as L:
        b = L.dense(tensor)
        L.numel = (b.numel(), 0)
        _exchange(L, [(b, 0, b.numel(), peer)], [], dt)
    return L.work


def irecv(pg, tensor, peer):
    if peer is None:
        raise RuntimeError("irecv: the NCCL backend cannot receive from any source: give "
                           "src (ProcessGroupNCCL does not support recvAnysource)")
    dt = _datatype("irecv", tensor.dtype)
    with _Launch(pg, "recv", [tensor], peer=peer, async_op=True) as L:
        L.result = pg.ranks[peer]
        b = L.dense(tensor, out=True)
        L.numel = (0, b.numel())
        _exchange(L, [], [(b, 0, b.numel(), peer)], dt)
    return L.work


def batch_isend_irecv(pg, ops):
    """``ops``: ``(is_send, tensor, group rank)``; one NCCL group on the group's
    communicator (all its ranks must take part the first time, as in PyTorch)."""
    tensors = [t for _, t, _ in ops]
    for t in tensors:
        _datatype("batch_isend_irecv", t.dtype)
    with _Launch(pg, "batch_isend_irecv", tensors, async_op=True) as L:
        bufs = [L.dense(t, out=not is_send) for is_send, t, _ in ops]
        with L.grouped():
            for (is_send, t, r), b in zip(ops, bufs):
                if b.numel():
                    (L.lib.send if is_send else L.lib.recv)(
                        _ptr(b), b.numel(), _nb.DATATYPES[t.dtype], r, L.c, L.s)
        L.numel = (sum(t.numel() for s, t, _ in ops if s),
                   sum(t.numel() for s, t, _ in ops if not s))
    return [L.work] * len(ops)


# ---- Python objects, pickled into uint8 tensors on the GPU -----------------------------------

def _object_device(pg, device):
    """``device``, else the device this group last used, else the current one."""
    from .. import cuda
    if device is not None:
        return cuda._device_index(device)
    last = pg.nccl.last_device
    return cuda.current_device() if last is None else last


def _fetch(pg, work, t):
    """``t`` as a NumPy array once ``work`` is done (raising on a failure or timeout)."""
    pg.nccl.host_wait(work._pending)
    return t.cpu().numpy()


def broadcast_object_list(pg, object_list, root, device=None):
    from .._ops import creation
    dev = f"cuda:{_object_device(pg, device)}"
    me = pg.rank()
    data = pickle.dumps(list(object_list)) if me == root else b""
    size = creation.tensor(np.array([len(data)], np.int64), device=dev)
    n = int(_fetch(pg, broadcast(pg, size, root, True), size)[0])
    buf = creation.tensor(np.frombuffer(data, np.uint8), device=dev) if me == root else \
        creation.empty((n,), dtype=_dtype.uint8, device=dev)
    got = _fetch(pg, broadcast(pg, buf, root, True), buf)
    if me != root:
        objs = pickle.loads(got.tobytes())
        for i, o in enumerate(objs[:len(object_list)]):
            object_list[i] = o


def gather_bytes(pg, data, root=None):
    """Every rank's bytes (on every rank when ``root`` is None, else on ``root`` only):
    sizes first, then the bytes padded to the largest, all-gathered."""
    from .._ops import creation
    dev = f"cuda:{_object_device(pg, None)}"
    n = pg.size()
    mine = creation.tensor(np.array([len(data)], np.int64), device=dev)
    sizes_t = creation.empty((n,), dtype=_dtype.int64, device=dev)
    sizes = _fetch(pg, all_gather_into_tensor(pg, sizes_t, mine, True), sizes_t).tolist()
    width = max(sizes)
    padded = np.zeros(width, np.uint8)
    padded[:len(data)] = np.frombuffer(data, np.uint8)
    src = creation.tensor(padded, device=dev)
    out = creation.empty((n * width,), dtype=_dtype.uint8, device=dev)
    got = _fetch(pg, all_gather_into_tensor(pg, out, src, True), out)
    if root is not None and pg.rank() != root:
        return None
    return [got[i * width:i * width + s].tobytes() for i, s in enumerate(sizes)]

