"""MPI plumbing for the collectives: tensors as MPI buffers, reductions, waiting with a
deadline.

A contiguous CPU tensor is handed to MPI as a NumPy view over its own memory (no copy).
Other tensors (non-contiguous ones, simulated ``cuda`` tensors whose storage is not a host
array) go through a contiguous host copy that is written back when the operation ends.
MPI has no bfloat16 or float16 reduction: those are reduced in float32 copies and rounded
back (bool as uint8 with MAX for SUM and MIN for PRODUCT, as PyTorch's logical meaning).
"""
import time

import numpy as np

from .. import _dtype


class ReduceOp:
    """Reduction operations for ``all_reduce``, ``reduce``, ``reduce_scatter``."""

    class RedOpType:
        def __init__(self, name):
            self.name = name

        def __repr__(self):
            return f"<RedOpType.{self.name}>"

    SUM = RedOpType("SUM")
    AVG = RedOpType("AVG")
    PRODUCT = RedOpType("PRODUCT")
    MIN = RedOpType("MIN")
    MAX = RedOpType("MAX")
    BAND = RedOpType("BAND")
    BOR = RedOpType("BOR")
    BXOR = RedOpType("BXOR")


def _check_op(op):
    if not isinstance(op, ReduceOp.RedOpType):
        raise ValueError(f"Invalid reduce op: {op!r} (expected a ReduceOp)")
    return op


_OPS = {}


def mpi_op(MPI, op, dtype):
    """The MPI operation for ``op`` on data of framework ``dtype`` (as reduced)."""
    if not _OPS:
        base = {"SUM": MPI.SUM, "AVG": MPI.SUM, "PRODUCT": MPI.PROD, "MIN": MPI.MIN,
                "MAX": MPI.MAX, "BAND": MPI.BAND, "BOR": MPI.BOR, "BXOR": MPI.BXOR}
        _OPS.update({(k, False): v for k, v in base.items()})
        # bool: SUM is a logical or, PRODUCT a logical and (PyTorch's meaning)
        _OPS.update({(k, True): v for k, v in base.items()})
        _OPS.update({("SUM", True): MPI.MAX, ("AVG", True): MPI.MAX,
                     ("PRODUCT", True): MPI.MIN})
    if op.name in ("BAND", "BOR", "BXOR") and dtype.is_floating_point:
        raise RuntimeError(f"Cannot use ReduceOp.{op.name} with {dtype}")
    return _OPS[op.name, dtype is _dtype.bool]


def _raw(t):
    """A flat NumPy view over a contiguous CPU tensor's memory, in its storage dtype
    (bfloat16: uint16 bits; bool: uint8)."""
    npd = np.uint8 if t.dtype is _dtype.bool else t.dtype.np
    n = t.numel()
    if n == 0:
        return np.empty(0, npd)
    return np.ndarray((n,), npd, buffer=t._storage.buf, offset=t._offset * t.dtype.itemsize)


def _to_f32(raw, dtype):
    if dtype is _dtype.bfloat16:
        return (raw.astype(np.uint32) << 16).view(np.float32)
    return raw.astype(np.float32)


def _from_f32(f32, dtype, out):
    """Rounds float32 values into ``out`` (raw storage of ``dtype``)."""
    if dtype is _dtype.bfloat16:
        b = f32.view(np.uint32)
        r = ((b + np.uint32(0x7FFF) + ((b >> 16) & np.uint32(1))) >> 16).astype(np.uint16)
        r[np.isnan(f32)] = 0x7FC0     # rounding must not turn a NaN into an infinity
        out[...] = r
    else:
        out[...] = f32.astype(out.dtype)


class Buffer:
    """A tensor as an MPI buffer. ``arr``: the flat NumPy array MPI reads or writes;
    ``finish()`` writes it back into the tensor when it is a copy (call it for outputs)."""

    def __init__(self, t, reduce=False):
        self.t = t
        self.dtype = t.dtype
        self.staged = None
        if t._storage.device.type == "cpu" and t.is_contiguous():
            raw = _raw(t)
        else:
            # a host copy: simulated cuda storage is not a NumPy-able host array, and MPI
            # wants contiguous memory
            self.staged = t.detach().contiguous().cpu()
            raw = _raw(self.staged)
        self.raw = raw
        # half types are reduced in float32 (MPI has no such reduction)
        self.wide = reduce and t.dtype in (_dtype.bfloat16, _dtype.float16)
        self.arr = _to_f32(raw, t.dtype) if self.wide else raw

    def finish(self):
        if self.wide:
            _from_f32(self.arr, self.dtype, self.raw)
        if self.staged is not None:
            with _no_grad():
                self.t.copy_(self.staged)
        else:
            # MPI wrote the tensor in place: autograd must see the change
            self.t._storage.version += 1


def _no_grad():
    from ..autograd import grad_mode
    return grad_mode.no_grad()


def average(arr, n, dtype):
    """``arr /= n`` in place (integer types truncate, as NCCL's average does)."""
    if n == 1:
        return
    if arr.dtype.kind == "f":
        arr /= n
    elif dtype is not _dtype.bool:
        np.copyto(arr, np.trunc(arr / n).astype(arr.dtype), casting="unsafe")


# set when a collective was left unfinished: MPI cannot finalize cleanly after that
failed = False


def wait(MPI, requests, pg, what, timeout=None, statuses=None):
    """Waits for every request, making MPI progress, until the group's timeout; then raises
    (a rank that died or never called the collective must not hang the others)."""
    if pg.broken is not None:
        raise RuntimeError(f"{what}: the process group is unusable after an earlier "
                           f"failure: {pg.broken}")
    limit = (timeout if timeout is not None else pg.timeout).total_seconds()
    start = time.monotonic()
    spins = 0
    try:
        while not MPI.Request.Testall(requests, statuses):
            spins += 1
            if spins & 63:
                continue
            elapsed = time.monotonic() - start
            if elapsed > limit:
                ms = int(limit * 1000)
                err = (f"{what} timed out: WorkMPI(OpType={what.upper()}, Timeout(ms)={ms})"
                       f" ran for {int(elapsed * 1000)} milliseconds before timing out. A "
                       f"rank may have died or not called this collective.")
                pg.broken = err
                _fail()
                for r in requests:
                    try:
                        r.Cancel()
                    except Exception:
                        pass
                raise RuntimeError(err)
            # give the CPU away once the wait is long: the peer may share our core; MPI
            # only progresses inside our calls, so keep polling often
            time.sleep(0 if elapsed < 1.0 else 0.0005)
    except MPI.Exception as e:
        pg.broken = f"{what} failed: {e}"
        _fail()
        raise RuntimeError(f"{what} failed: MPI error: {e}") from None


def _fail():
    global failed
    failed = True


def excepthook(hook):
    """``sys.excepthook`` that marks the process failed: a rank leaving on an uncaught
    exception must not wait in MPI_Finalize for ranks still waiting for it."""
    def marked(*exc_info):
        _fail()
        hook(*exc_info)
    return marked


def exit_guard():
    """At exit after a failed collective or on an uncaught exception: leave without
    MPI_Finalize, which would wait for the ranks still in a collective (a deadlock); the
    exit status is then 1 and the launcher stops the other ranks."""
    if failed:
        import os
        import sys
        for f in (sys.stdout, sys.stderr):
            try:
                f.flush()
            except Exception:
                pass
        os._exit(1)
