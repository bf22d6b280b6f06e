"""CPU launchers: grouped_mm family (one native GEMM per group, on OpenBLAS)."""
from .._tensor import Tensor
from .copy import fill
from .linalg import matmul


def _view(t, shape, stride, offset):
    return Tensor._make(t._storage, shape, stride, t._offset + offset, t.dtype)


def _mm(out, a, b):
    # a float32 out of 16-bit operands: they are widened (exactly) and multiplied in float32
    compute = None if out.dtype is a.dtype else out.dtype
    matmul(out, a, a._stride, b, b._stride, compute=compute)


def _bounds(offs, total):
    """[(start, end)] of each group from the int32 ends ``offs``; raises unless they are
    non-decreasing and non-negative. Ends past ``total`` are clamped to it (as PyTorch)."""
    ends = [int(v) for v in offs.numpy()]
    for i, e in enumerate(ends):
        prev = ends[i - 1] if i else 0
        if e < prev:
            where = f"offs[{i - 1}] = {prev}" if i else "0"
            raise RuntimeError(f"grouped_mm: offs must be non-decreasing and non-negative, "
                               f"got offs[{i}] = {e} after {where}")
    ends = [min(e, total) for e in ends]
    return list(zip([0] + ends[:-1], ends))


def grouped_mm(out, a, b, offs):
    """The grouped product of a and b into out (framework/_ops/grouped_mm.py's layouts:
    2d x 3d groups a's rows, 3d x 3d is batched, 2d x 2d groups K, 3d x 2d groups b's
    columns), offs being the int32 ends of the groups (None for 3d x 3d). Outputs past
    offs[-1] and those of empty K groups are zero. float32 accumulation."""
    if out.numel() == 0:
        return
    sa, sb, so = a._stride, b._stride, out._stride
    if a.dim() == 3 and b.dim() == 3:
        _mm(out, a, b)
        return
    if a.dim() == 2 and b.dim() == 3:       # rows of a and out
        total, n, k = a._shape[0], b._shape[2], a._shape[1]
        bounds = _bounds(offs, total)
        for g, (s, e) in enumerate(bounds):
            if e > s:
                _mm(_view(out, (e - s, n), so, s * so[0]), _view(a, (e - s, k), sa, s * sa[0]),
                    _view(b, (k, n), sb[1:], g * sb[0]))
        last = bounds[-1][1] if bounds else 0
        if last < total:
            fill(_view(out, (total - last, n), so, last * so[0]), 0)
    elif a.dim() == 2:                      # 2d x 2d: K
        total, m, n = a._shape[1], a._shape[0], b._shape[1]
        for g, (s, e) in enumerate(_bounds(offs, total)):
            o = _view(out, (m, n), so[1:], g * so[0])
            if e > s:
                _mm(o, _view(a, (m, e - s), sa, s * sa[1]), _view(b, (e - s, n), sb, s * sb[0]))
            else:
                fill(o, 0)
    else:                                   # 3d x 2d: columns of b and out
        total, m, k = b._shape[1], a._shape[1], a._shape[2]
        bounds = _bounds(offs, total)
        for g, (s, e) in enumerate(bounds):
            if e > s:
                _mm(_view(out, (m, e - s), so, s * so[1]), _view(a, (m, k), sa[1:], g * sa[0]),
                    _view(b, (k, e - s), sb, s * sb[1]))
        last = bounds[-1][1] if bounds else 0
        if last < total:
            fill(_view(out, (m, total - last), so, last * so[1]), 0)
