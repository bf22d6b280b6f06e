"""Tables for multi-tensor Triton kernels (fused optimizer steps, GradScaler's unscale).

One launch walks every tensor of some lists. The launcher builds device tables: the
tensors' addresses (int64, one table per operand), their sizes, the prefix sums of their
block counts (``start``) and, for each program, the tensor it works on (``owner``); a
program handles one BLOCK of one tensor, at block ``pid - start[owner[pid]]`` of it.

A step of a large model has hundreds of thousands of programs, so the size tables
(``numels``, ``start``, ``owner``) are built with NumPy and kept on the device per
(device, sizes), the same model's sizes every step. The address tables go up in one
host-to-device copy, kept by value for a loop whose tensors keep their addresses (the
demo's gradients, freed and reallocated each step, do not: it uploads them every step). An
upload is queued on the stream without waiting for it: a driver call, no stall."""
import numpy as np
import triton
import triton.language as tl

from ..cuda import graphs as _graphs

BLOCK = 1024
_PLANS = {}        # (device, numels) -> (numels, start, owner, grid), device tensors
_TABLES = {}       # (device, dtype, values) -> a device tensor holding them
_MAX_CACHED = 32


def _upload(arr, dev):
    """``arr`` on ``dev``, queued on its stream without waiting for it (the stream's kernels
    read the table in order)."""
    import framework as fw
    return fw.from_numpy(arr).to(dev, non_blocking=True)


def _remember(cache, key, value):
    if _graphs._captures:
        # an upload captured into a CUDA graph runs only at replay: not for eager calls
        return value
    if len(cache) >= _MAX_CACHED:
        cache.pop(next(iter(cache)))
    cache[key] = value
    return value


def _plan(dev, numels):
    key = (str(dev), numels)
    plan = _PLANS.get(key)
    if plan is None:
        n = np.array(numels, dtype=np.int64)
        nb = -(-n // BLOCK)
        start = np.zeros(len(n) + 1, dtype=np.int64)
        np.cumsum(nb, out=start[1:])
        sizes = _upload(np.concatenate([n, start]), dev)
        owner = _upload(np.repeat(np.arange(len(n), dtype=np.int32), nb), dev)
        plan = _remember(_PLANS, key, (sizes[:len(n)], sizes[len(n):], owner, int(start[-1])))
    return plan


def tables(params, *lists):
    """(address tables, numels, start, owner, grid) as device tensors; ``params`` decides
    the sizes and the device, each of ``lists`` is parallel to it (or empty: a dummy
    table)."""
    dev = params[0].device
    numels, start, owner, grid = _plan(dev, tuple(p.numel() for p in params))
    k = len(params)
    zeros = (0, ) * k
    addrs = []
    for ts in (params, ) + lists:
        addrs.extend([x.data_ptr() for x in ts] if ts else zeros)
    tab = upload(addrs, "int64", dev)
    return [tab[i * k:(i + 1) * k] for i in range(1 + len(lists))], numels, start, owner, grid


def upload(values, dtype, dev):
    """A 1-d device tensor holding ``values`` (a host list), uploaded in one copy the first
    time these values are asked for (read-only: it is shared by later calls)."""
    key = (str(dev), dtype, tuple(values))
    t = _TABLES.get(key)
    if t is None or t._storage.version:
        t = _remember(_TABLES, key, _upload(np.asarray(values, dtype=dtype), dev))
    return t


@triton.jit
def block(owner, start, numels, BLOCK: tl.constexpr):
    """(tensor index, offsets in it, its numel) of this program's BLOCK."""
    pid = tl.program_id(0)
    t = tl.load(owner + pid)
    return t, (pid - tl.load(start + t)) * BLOCK + tl.arange(0, BLOCK), tl.load(numels + t)


@triton.jit
def at(tab, t, ref):
    """The address in table ``tab`` at ``t`` as a pointer to ``ref``'s element type."""
    return tl.load(tab + t).to(tl.pointer_type(ref.dtype.element_ty))
