"""Triton convolution family (the cuda backend of framework/_cpu/conv.py, native/conv.cpp):
im2col and col2im over 1, 2 or 3 spatial dims, made 3-d by the launchers with leading
size-1 spatial dims.

The columns (N, C*K0*K1*K2, G0, G1, G2) have strides CS0 (batch) and CS1 (row) of the
caller's choice and a contiguous grid (framework/_cpu/conv.py).

im2col: one program per BLOCK elements of the columns (in their logical order); each
element unravels its index into (n, c, k0, k1, k2, g0, g1, g2) and loads the input element
at i_d = g_d * stride_d - pad_d + k_d * dilation_d (masked to zero outside the input), from
the input's own strides.

col2im: one program per BLOCK elements of the contiguous output (N, C, I0, I1, I2); each
element gathers the column entries that read it: for every kernel offset (k0, k1, k2), the
grid position g_d = (i_d + pad_d - k_d * dilation_d) / stride_d when that division is exact
and g_d lies in the grid. A gather needs no atomics, so results are deterministic. Sums
are kept in float32 for 16-bit floats and float32, float64 for float64, int64 for
integers.
"""
import triton
import triton.language as tl

from .pointwise import _down, type_name
from .launcher import cached, cdiv

BLOCK = 1024


def _lead(values, fill):
    """``values`` (one per spatial dim) preceded by ``fill`` up to 3 dims."""
    return [fill] * (3 - len(values)) + list(values)


def _require(t, op):
    if t.dtype.name == "bool":
        raise NotImplementedError(f"\"{op}_cuda\" not implemented for '{type_name('bool')}'")


def _acc(t):
    name = t.dtype.name
    if name == "float64":
        return tl.float64
    if t.dtype.is_floating_point:
        return tl.float32
    return tl.int64


@cached
@triton.jit
def _im2col_kernel(x, cols, total, C, I0, I1, I2, XS0, XS1, XS2, XS3, XS4, CS0, CS1, G0, G1,
                   G2, K0, K1, K2, D0, D1, D2, P0, P1, P2, S0, S1, S2, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    mask = i < total
    t = i
    g2 = t % G2
    t = t // G2
    g1 = t % G1
    t = t // G1
    g0 = t % G0
    t = t // G0
    k2 = t % K2
    t = t // K2
    k1 = t % K1
    t = t // K1
    k0 = t % K0
    t = t // K0
    c = t % C
    n = t // C
    row = (c * K0 + k0) * K1 * K2 + k1 * K2 + k2
    dst = n * CS0 + row * CS1 + (g0 * G1 + g1) * G2 + g2
    i0 = g0 * S0 - P0 + k0 * D0
    i1 = g1 * S1 - P1 + k1 * D1
    i2 = g2 * S2 - P2 + k2 * D2
    inside = (i0 >= 0) & (i0 < I0) & (i1 >= 0) & (i1 < I1) & (i2 >= 0) & (i2 < I2)
    src = n * XS0 + c * XS1 + i0 * XS2 + i1 * XS3 + i2 * XS4
    v = tl.load(x + tl.where(inside & mask, src, 0), mask=inside & mask, other=0)
    tl.store(cols + dst, v, mask=mask)


def im2col(x, cols, kernel_size, dilation, padding, stride):
    """cols (N, C*prod(kernel_size), *grid) = the sliding blocks of x (N, C, *spatial), any
    strides; zero where a block reads padding."""
    _require(x, "im2col_out")
    total = cols.numel()
    if total == 0:
        return
    i0, i1, i2 = _lead(x._shape[2:], 1)
    xs = list(x._stride[:2]) + _lead(x._stride[2:], 0)
    g0, g1, g2 = _lead(cols._shape[2:], 1)
    k, d = _lead(kernel_size, 1), _lead(dilation, 1)
    p, s = _lead(padding, 0), _lead(stride, 1)
    _im2col_kernel[(cdiv(total, BLOCK),)](
        x, cols, total, x._shape[1], i0, i1, i2, *xs, *cols._stride[:2], g0, g1, g2, *k, *d, *p,
        *s, BLOCK=BLOCK)


@triton.jit
def _grid_index(i, P, K, D, S, G):
    """(grid position, valid) of input index i read by kernel offset K."""
    num = i + P - K * D
    ok = (num >= 0) & (num < G * S)
    num = tl.where(ok, num, 0)
    g = num // S
    return g, ok & (g * S == num)


@cached
@triton.jit
def _col2im_kernel(cols, CS0, CS1, out, total, C, I0, I1, I2, G0, G1, G2, K0, K1, K2, D0, D1,
                   D2, P0, P1, P2, S0, S1, S2, ACC: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    mask = i < total
    t = i
    i2 = t % I2
    t = t // I2
    i1 = t % I1
    t = t // I1
    i0 = t % I0
    t = t // I0
    c = t % C
    n = t // C
    kk = K0 * K1 * K2
    acc = tl.zeros([BLOCK], dtype=ACC)
    for k0 in range(0, K0):
        g0, ok0 = _grid_index(i0, P0, k0, D0, S0, G0)
        for k1 in range(0, K1):
            g1, ok1 = _grid_index(i1, P1, k1, D1, S1, G1)
            for k2 in range(0, K2):
                g2, ok2 = _grid_index(i2, P2, k2, D2, S2, G2)
                ok = mask & ok0 & ok1 & ok2
                row = c * kk + (k0 * K1 + k1) * K2 + k2
                src = n * CS0 + row * CS1 + (g0 * G1 + g1) * G2 + g2
                v = tl.load(cols + tl.where(ok, src, 0), mask=ok, other=0)
                acc += v.to(ACC)
    tl.store(out + i, _down(acc, out.dtype.element_ty), mask=mask)


def col2im(cols, out, kernel_size, dilation, padding, stride):
    """out (N, C, *spatial), contiguous = the columns cols (N, C*prod(kernel_size), *grid)
    each added back onto the element im2col read it from."""
    _require(cols, "col2im_out")
    total = out.numel()
    if total == 0:
        return
    i0, i1, i2 = _lead(out._shape[2:], 1)
    g0, g1, g2 = _lead(cols._shape[2:], 1)
    k, d = _lead(kernel_size, 1), _lead(dilation, 1)
    p, s = _lead(padding, 0), _lead(stride, 1)
    _col2im_kernel[(cdiv(total, BLOCK),)](
        cols, *cols._stride[:2], out, total, out._shape[1], i0, i1, i2, g0, g1, g2, *k, *d, *p, *s,
        ACC=_acc(out), BLOCK=BLOCK)
