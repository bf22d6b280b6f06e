"""Index family kernels that update elements several index positions may hit (Triton; the
cuda side of index_loop and scatter in native/index.cpp): ``index_loop`` (advanced
indexing's gather / put / accumulate through precomputed element offsets) and ``scatter``
(with or without a reduction) along a dim. framework/kernels/index.py imports the
launchers (the family's module); the error reporting and helpers they share with it are in
index_common.py.

Write conflicts (duplicate indices; see _how): PUT and scatter without reduction store in
parallel (one of the writes wins, as on PyTorch's CUDA backend). ACCUMULATE and the
reducing scatters use Triton's atomics where it has them for the dtype (add: float16,
float32, float64, int32, int64; amax/amin: int32, int64), a compare-and-swap loop on the
element's bits for the other 16/32/64-bit cases (bfloat16 add, multiply, float amax/amin
with the CPU's NaN rule), and for 8-bit dtypes (bool, int8, uint8) programs that own a
block of the conflict-free ("outer") positions and walk the conflicting ones in order.
"""
import triton
import triton.language as tl

from .. import _determinism
from .._ops import alloc
from .index_common import (STYLE_RUNTIME, _block, _check_index_dtype, _error_slot, _pow2,
                           _record_error, _scalar, check_range)
from .pointwise import _down, _offset, _params_bits, _up, collapse
from .launcher import cached, cdiv

GATHER, PUT, ACCUMULATE = range(3)
REDUCE = {None: 0, "add": 1, "sum": 1, "multiply": 2, "prod": 2, "amax": 3, "amin": 4}
R_ASSIGN, R_ADD, R_MUL, R_MAX, R_MIN = range(5)

_ATOMIC_ADD = ("float16", "float32", "float64", "int32", "int64")
_ATOMIC_MINMAX = ("int32", "int64")


# ---- host helpers ---------------------------------------------------------------------

def _warps(elems):
    """Warps for a tile of ``elems`` elements: no more than it has rows of 32, so that
    small tiles (the serial paths, short outer dims) are not replicated over threads."""
    return max(1, min(4, elems // 32))


# ---- jit helpers ----------------------------------------------------------------------

@triton.jit
def _accumulate(old, v, alpha):
    """old + alpha * v as the CPU computes it (16-bit floats in float32, bool: or)."""
    if old.dtype == tl.int1:
        r = old | v
    else:
        a = _up(old)
        r = a + alpha.to(a.dtype) * _up(v)
    return r


@triton.jit
def _combine(d, s, R: tl.constexpr):
    """The scatter reduction of destination d with source s (native reduce_into)."""
    if R == 0:
        r = s
    elif d.dtype == tl.int1:
        if R == 1 or R == 3:
            r = d | s
        else:
            r = d & s
    elif R == 1:
        r = _up(d) + _up(s)
    elif R == 2:
        r = _up(d) * _up(s)
    elif R == 3:
        a = _up(d)
        b = _up(s)
        r = tl.where(b != b, b, tl.where(a < b, b, a))
    else:
        a = _up(d)
        b = _up(s)
        r = tl.where(b != b, b, tl.where(b < a, b, a))
    return r


# ---- index_loop: gather / put / accumulate through offsets ----------------------------

# How a kernel updates elements that several positions may hit (HOW):
STORE, ATOMIC, CAS, SERIAL = range(4)


def _how(dtype, r):
    """STORE for plain writes (duplicates: one of them wins), ATOMIC where Triton has the
    read-modify-write for the dtype, CAS (a compare-and-swap loop on the element's bits)
    for other 16/32/64-bit dtypes, SERIAL (a program walks the conflicting positions in
    order) for 8-bit ones, and in deterministic mode for float sums and products and for
    plain writes."""
    if _determinism._enabled and (r == R_ASSIGN or (r in (R_ADD, R_MUL) and (
            dtype.is_floating_point or dtype.is_complex))):
        # the same bits on every run: positions in order, the last write wins
        return SERIAL
    if r == R_ASSIGN:
        return STORE
    if (r == R_ADD and dtype.name in _ATOMIC_ADD) or \
            (r in (R_MAX, R_MIN) and dtype.name in _ATOMIC_MINMAX):
        return ATOMIC
    return CAS if dtype.itemsize >= 2 else SERIAL


@triton.jit
def _update(ptr, s, m, safe, R: tl.constexpr, HOW: tl.constexpr):
    """*ptr = combine(*ptr, s) (_combine's R) where m, correct when pointers repeat. ``safe``
    is any valid address of the tensor (what the CAS loop's idle lanes point at)."""
    ty = ptr.dtype.element_ty
    if HOW == 0:
        tl.store(ptr, _down(s, ty), mask=m)
    elif HOW == 1:
        if R == 1:
            tl.atomic_add(ptr, _down(s, ty), mask=m)
        elif R == 3:
            tl.atomic_max(ptr, _down(s, ty), mask=m)
        else:
            tl.atomic_min(ptr, _down(s, ty), mask=m)
    else:
        if ty.primitive_bitwidth == 16:
            ity = tl.int16
        elif ty.primitive_bitwidth == 32:
            ity = tl.int32
        else:
            ity = tl.int64
        iptr = ptr.to(tl.pointer_type(ity), bitcast=True)
        isafe = safe.to(tl.pointer_type(ity), bitcast=True)
        old = tl.load(ptr, mask=m, other=0)
        pending = m
        while tl.max(pending.to(tl.int32)) > 0:
            want = old.to(ity, bitcast=True)
            new = tl.where(pending, _down(_combine(old, s, R), ty).to(ity, bitcast=True), want)
            # finished lanes swap their value for itself (a no-op; atomic_cas takes no
            # mask), lanes outside the tile do so at a valid address
            seen = tl.atomic_cas(tl.where(m, iptr, isafe), want, new)
            lost = pending & (seen != want)
            old = tl.where(lost, seen.to(ty, bitcast=True), old)
            pending = lost


@cached
@triton.jit(do_not_specialize=["alpha_arg"])
def _index_loop_kernel(x, xs, xoff, y, ys, yoff, y_step, P, O, oshape, alpha_arg,
                       MODE: tl.constexpr, YOFF: tl.constexpr, HOW: tl.constexpr,
                       ALPHA_FLOAT: tl.constexpr, ONDIM: tl.constexpr, BP: tl.constexpr,
                       BO: tl.constexpr):
    """Element (o, p) of the index space: x[xbase(o) + xoff[p]] and y[ybase(o) + yoff[p]]
    (yoff[p] = p * y_step without a yoff tensor). A program takes a tile of BP index
    positions by BO outer positions (o fastest: runs of the outer dims are contiguous), or
    with HOW == SERIAL BO outer positions and every p in order."""
    pid = tl.program_id(0)
    n_ot = tl.cdiv(O, BO)
    o = (pid % n_ot).to(tl.int64) * BO + tl.arange(0, BO).to(tl.int64)
    omask = o < O
    xb = _offset(o, oshape, xs, ONDIM, False)
    yb = _offset(o, oshape, ys, ONDIM, False)
    alpha = _scalar(alpha_arg, ALPHA_FLOAT)
    ty = x.dtype.element_ty
    if HOW == 3:
        for p in range(0, P):
            xo = tl.load(xoff + p)
            if YOFF:
                yo = tl.load(yoff + p)
            else:
                yo = (p + tl.zeros([], tl.int64)) * y_step
            xp = x + (xb + xo)
            yv = tl.load(y + (yb + yo), mask=omask)
            if MODE == 1:
                tl.store(xp, yv, mask=omask)
            else:
                tl.store(xp, _down(_accumulate(tl.load(xp, mask=omask), yv, alpha), ty),
                         mask=omask)
    else:
        p = (pid // n_ot).to(tl.int64) * BP + tl.arange(0, BP).to(tl.int64)
        pmask = p < P
        xo = tl.load(xoff + p, mask=pmask, other=0)
        if YOFF:
            yo = tl.load(yoff + p, mask=pmask, other=0)
        else:
            yo = p * y_step
        m = pmask[:, None] & omask[None, :]
        xp = x + (xo[:, None] + xb[None, :])
        yp = y + (yo[:, None] + yb[None, :])
        if MODE == 0:
            tl.store(yp, tl.load(xp, mask=m), mask=m)
        elif MODE == 1:
            tl.store(xp, tl.load(yp, mask=m), mask=m)
        else:
            v = _up(tl.load(yp, mask=m, other=0))
            _update(xp, v * alpha.to(v.dtype), m, x, 1, HOW)


def index_loop(mode, x, x_strides, x_off, y, y_strides, y_off, outer, alpha=1):
    """Moves elements between x (indexed through x_off) and y (at y_off: an int64 tensor of
    offsets, or an int stride between index positions) over ``outer`` dims:
    GATHER y = x, PUT x = y, ACCUMULATE x += alpha * y."""
    if mode == ACCUMULATE and x.dtype.is_float8:     # float8 holds values, never sums
        raise NotImplementedError(f"\"index_put_with_sort_kernel\" not implemented for "
                                  f"'{x.dtype.scalar_name}'")
    P = x_off.numel()
    O = alloc.numel(outer)
    if P == 0 or O == 0:
        return
    oshape, (xs, ys) = collapse(tuple(outer), [tuple(x_strides), tuple(y_strides)])
    r = R_ADD if mode == ACCUMULATE else R_ASSIGN
    how = STORE if mode == GATHER else _how(x.dtype, r)
    alpha_float = x.dtype.is_floating_point
    alpha_arg = _params_bits(alpha)[0] if alpha_float else int(alpha)
    if isinstance(y_off, int):
        yoff, y_step, has_yoff = x_off, y_off, False   # yoff unused
    else:
        yoff, y_step, has_yoff = y_off, 0, True
    bo, bp, grid = _tiles(O, P, how == SERIAL)
    _index_loop_kernel[grid](x, xs, x_off, y, ys, yoff, y_step, P, O, oshape, alpha_arg,
                             MODE=mode, YOFF=has_yoff, HOW=how, ALPHA_FLOAT=alpha_float,
                             ONDIM=len(oshape), BP=bp, BO=bo, num_warps=_warps(bo * bp))


def _tiles(O, P, serial):
    """(BO, BP, grid) of a tile launch over O outer by P conflicting positions."""
    if serial:
        bo = _pow2(O, 256)
        return bo, 1, (cdiv(O, bo),)
    bo = _pow2(O, _block())
    bp = _pow2(P, max(1, _block() // bo))
    return bo, bp, (cdiv(O, bo) * cdiv(P, bp),)


# ---- scatter along a dim --------------------------------------------------------------

@cached
@triton.jit
def _scatter_kernel(self, ss, idx, si, src, sr, di, dr, sd, size, P, O, oshape, err,
                    R: tl.constexpr, HOW: tl.constexpr, ONDIM: tl.constexpr,
                    BP: tl.constexpr, BO: tl.constexpr):
    """self[selfbase(o) + idx[o, p] * sd] op= src[o, p], with p along the scatter dim
    (strides di, dr; self's is 0) and o over the other dims. Tiles as _index_loop_kernel."""
    pid = tl.program_id(0)
    n_ot = tl.cdiv(O, BO)
    o = (pid % n_ot).to(tl.int64) * BO + tl.arange(0, BO).to(tl.int64)
    omask = o < O
    sb = _offset(o, oshape, ss, ONDIM, False)
    ib = _offset(o, oshape, si, ONDIM, False)
    rb = _offset(o, oshape, sr, ONDIM, False)
    ty = self.dtype.element_ty
    if HOW == 3:
        for p32 in range(0, P):
            p = p32 + tl.zeros([], tl.int64)
            v = tl.load(idx + (ib + p * di), mask=omask, other=0).to(tl.int64)
            bad = omask & ((v < 0) | (v >= size))
            _record_error(err, bad, o * P + p)
            ok = omask & ~bad
            dp = self + (sb + v * sd)
            r = _combine(tl.load(dp, mask=ok), tl.load(src + (rb + p * dr), mask=ok), R)
            tl.store(dp, _down(r, ty), mask=ok)
    else:
        p = (pid // n_ot).to(tl.int64) * BP + tl.arange(0, BP).to(tl.int64)
        m = (p < P)[:, None] & omask[None, :]
        v = tl.load(idx + (p[:, None] * di + ib[None, :]), mask=m, other=0).to(tl.int64)
        bad = m & ((v < 0) | (v >= size))
        _record_error(err, bad, o[None, :] * P + p[:, None])
        ok = m & ~bad
        s = tl.load(src + (p[:, None] * dr + rb[None, :]), mask=ok)
        _update(self + (sb[None, :] + v * sd), s, ok, self, R, HOW)


def scatter(reduce, self, self_strides, index, index_strides, src, src_strides, shape, dim,
            dim_stride, dim_size):
    """self[e with index[e] at dim] op= src[e] over ``shape`` (index's shape, ``dim`` moved
    last; self_strides has 0 there, dim_stride is self's real stride at dim)."""
    _check_index_dtype("scatter", index)
    if self.dtype.is_float8:
        raise NotImplementedError(f"\"scatter_cuda\" not implemented for "
                                  f"'{self.dtype.scalar_name}'")
    r = REDUCE[reduce]
    n = alloc.numel(shape)
    if n == 0:
        return
    # every index checked before the scatter writes anything (self stays untouched); the
    # kernel masks bad indices all the same, so its error slot needs no read-back
    check_range(index, shape, index_strides, dim_size, STYLE_RUNTIME, dim)
    P = shape[-1]
    O = n // P
    oshape, (ss, si, sr) = collapse(tuple(shape[:-1]), [tuple(self_strides[:-1]),
                                                        tuple(index_strides[:-1]),
                                                        tuple(src_strides[:-1])])
    how = _how(self.dtype, r)
    bo, bp, grid = _tiles(O, P, how == SERIAL)
    err = _error_slot(self._storage.device)
    _scatter_kernel[grid](self, ss, index, si, src, sr, index_strides[-1], src_strides[-1],
                          dim_stride, dim_size, P, O, oshape, err, R=r, HOW=how,
                          ONDIM=len(oshape), BP=bp, BO=bo, num_warps=_warps(bo * bp))
