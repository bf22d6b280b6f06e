"""Tables for multi-tensor Triton kernels (fused optimizer steps, GradScaler's unscale).

One launch walks every tensor of some lists. The launcher builds device tables: the
tensors' addresses (int64, one table per operand), their sizes, the prefix sums of their
block counts (``start``) and, for each program, the tensor it works on (``owner``); a
program handles one BLOCK of one tensor, at block ``pid - start[owner[pid]]`` of it.

A step of a large model has hundreds of thousands of programs, so the size tables
(``numels``, ``start``, ``owner``) are built with NumPy and kept on the device per
(device, sizes) — the same model's sizes every step — and the address tables, which change
when gradients are reallocated, go up in one host-to-device copy."""
import numpy as np
import triton
import triton.language as tl

BLOCK = 1024
_PLANS = {}        # (device, numels) -> (numels, start, owner, grid), device tensors
_MAX_PLANS = 32


def _upload(arr, dev):
    import framework as fw
    return fw.from_numpy(arr).to(dev)


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
        plan = (sizes[:len(n)], sizes[len(n):], owner, int(start[-1]))
        if len(_PLANS) >= _MAX_PLANS:
            _PLANS.pop(next(iter(_PLANS)))
        _PLANS[key] = plan
    return plan


def tables(params, *lists):
    """(address tables, numels, start, owner, grid) as device tensors; ``params`` decides
    the sizes and the device, each of ``lists`` is parallel to it (or empty: a dummy
    table)."""
    dev = params[0].device
    numels, start, owner, grid = _plan(dev, tuple(p.numel() for p in params))
    k = len(params)
    addrs = np.zeros((1 + len(lists), k), dtype=np.int64)
    for row, ts in zip(addrs, (params, ) + lists):
        if ts:
            row[:] = [x.data_ptr() for x in ts]
    tab = _upload(addrs, dev)
    return [tab[i] for i in range(len(addrs))], numels, start, owner, grid


def upload(values, dtype, dev):
    """A 1-d device tensor of ``values`` (a host list) in one copy."""
    return _upload(np.asarray(values, dtype=dtype), dev)


@triton.jit
def at(tab, t, ref):
    """The address in table ``tab`` at ``t`` as a pointer to ``ref``'s element type."""
    return tl.load(tab + t).to(tl.pointer_type(ref.dtype.element_ty))
