"""Tables for multi-tensor Triton kernels (fused optimizer steps, GradScaler's unscale).

One launch walks every tensor of some lists. The launcher builds device tables: the
tensors' addresses (int64, one table per operand), their sizes, the prefix sums of their
block counts (``start``) and, for each program, the tensor it works on (``owner``); a
program handles one BLOCK of one tensor, at block ``pid - start[owner[pid]]`` of it."""
import triton
import triton.language as tl
from .launcher import cdiv

BLOCK = 1024


def tables(params, *lists):
    """(address tables, numels, start, owner, grid) as device tensors; ``params`` decides
    the sizes and the device, each of ``lists`` is parallel to it (or empty: a dummy
    table)."""
    import framework as fw
    dev = params[0].device
    numels = [p.numel() for p in params]
    start, owner = [0], []
    for t, n in enumerate(numels):
        nb = cdiv(n, BLOCK)
        start.append(start[-1] + nb)
        owner.extend([t] * nb)

    def i64(v):
        return fw.tensor(v, dtype=fw.int64, device=dev)
    addrs = [i64([x.data_ptr() for x in ts]) if ts else i64([0]) for ts in (params, ) + lists]
    return addrs, i64(numels), i64(start), fw.tensor(owner, dtype=fw.int32, device=dev), len(owner)


@triton.jit
def at(tab, t, ref):
    """The address in table ``tab`` at ``t`` as a pointer to ``ref``'s element type."""
    return tl.load(tab + t).to(tl.pointer_type(ref.dtype.element_ty))
