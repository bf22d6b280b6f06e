"""Shared pieces of the sort family's Triton kernels (sort.py and sort_scan.py, as
native/sort_keys.h is for native/sort.cpp and native/sort_scan.cpp): the dtype checks that
raise the CPU's dispatch errors, block-size and row-layout helpers, and the order-preserving
int64 keys with the in-register bitonic sort of (key, position) pairs on which sort.py
builds its chunk sort and merge (described there)."""
import triton
import triton.language as tl

from .._ops import alloc
from .pointwise import MAX_DIMS, collapse

BLOCK = 1024        # elements per program of the element-wise kernels
_KEY_MAX = 2**63 - 1


# ---- dtype checks (the CPU's dispatch errors, named like PyTorch's CUDA kernels) ----------

def _type_name(dt):
    return dt.scalar_name


def _is_float(t):
    return t.dtype.is_floating_point


def _require(t, op, kinds):
    """NotImplementedError unless t's dtype is one of kinds ("b" bool, "i" int, "f" float)."""
    name = t.dtype.name
    kind = "b" if name == "bool" else "f" if t.dtype.is_floating_point else "i"
    if kind not in kinds or t.dtype.is_float8:
        raise NotImplementedError(f"\"{op}_cuda\" not implemented for '{_type_name(t.dtype)}'")


def _pow2(n, lo=1):
    p = lo
    while p < n:
        p *= 2
    return p


def _outer(outer, strides):
    """Collapsed outer shape and strides (at least one dim) for row-offset math."""
    shape, strides = collapse(tuple(outer), [tuple(s) for s in strides])
    if len(shape) > MAX_DIMS:
        raise RuntimeError(f"sort kernel: {len(shape)} non-mergeable dims, at most {MAX_DIMS}")
    return shape, strides


def _device(t):
    return t._storage.device


def _empty(shape, dtype, device):
    return alloc.empty(shape, dtype, device)


# ---- keys and the in-register pair sort ---------------------------------------------------

@triton.jit
def _key(x, IS_FLOAT: tl.constexpr, DESC: tl.constexpr):
    """int64 keys whose signed order is PyTorch's order of x: NaN largest, -0.0 == 0.0."""
    if IS_FLOAT:
        if x.dtype == tl.float64:
            xf = tl.where(x == 0, 0.0, x)
            b = xf.to(tl.int64, bitcast=True)
            k = tl.where(b < 0, b ^ 0x7FFFFFFFFFFFFFFF, b)
        else:
            xf = x.to(tl.float32)
            xf = tl.where(xf == 0, 0.0, xf)
            b = xf.to(tl.int32, bitcast=True)
            k = tl.where(b < 0, b ^ 0x7FFFFFFF, b).to(tl.int64)
        k = tl.where(xf != xf, 0x7FFFFFFFFFFFFFFF, k)
    else:
        k = x.to(tl.int64)
    if DESC:
        k = ~k
    return k


@triton.jit
def _indicator(n_dims: tl.constexpr, j: tl.constexpr):
    """0, 1 along hypercube axis j (counted from the innermost), with a leading row axis."""
    ar = tl.arange(0, 2)
    ar = tl.reshape(ar, [1] + [1] * (n_dims - j - 1) + [2] + [1] * j)
    return ar


@triton.jit
def _cas(k, i, flip, dim: tl.constexpr, n_dims: tl.constexpr):
    """Compare-and-swap of (key, index) pairs along the dim-th innermost hypercube axis."""
    axis: tl.constexpr = n_dims - dim
    # the partner along the axis: the pair's sum minus self (int64 wraps exactly); tl.sum
    # rather than an xor reduction, which Triton's interpreter runs element by element
    pk = tl.sum(k, axis, keep_dims=True) - k
    pi = tl.sum(i, axis, keep_dims=True) - i
    is_right = _indicator(n_dims, dim)
    gt = (k > pk) | ((k == pk) & (i > pi))
    swap = gt != (flip ^ is_right).to(tl.int1)
    return tl.where(swap, pk, k), tl.where(swap, pi, i)


@triton.jit
def _sort_pairs(k, i, R: tl.constexpr, LOG: tl.constexpr):
    """Sorts each row of the [R, 2**LOG] pairs (k, i) ascending by (k, i): a bitonic
    network on a [R, 2, ..., 2] hypercube (the construction of tl.sort, on pairs)."""
    shape: tl.constexpr = k.shape
    h = tl.reshape(k, [R] + [2] * LOG)
    g = tl.reshape(i, [R] + [2] * LOG)
    for stage in tl.static_range(1, LOG + 1):
        if stage < LOG:
            flip = _indicator(LOG, stage)
        else:
            flip = 0
        for j in tl.static_range(stage):
            h, g = _cas(h, g, flip, stage - 1 - j, LOG)
    return tl.reshape(h, shape), tl.reshape(g, shape)
