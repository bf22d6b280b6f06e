"""Normalization kernels (Triton): the cuda side of native/norm.cpp, with the same
launchers and semantics.

Inputs are contiguous tensors of one floating dtype; weight, bias, statistics and
per-channel coefficients are contiguous vectors of the accumulation dtype (float32, or
float64 for float64 inputs); an absent one is None. 16-bit inputs load and compute in
float32.

Row kernels (layer/rms/group norm): R rows of D = K * S contiguous elements, one program
per row; the row's element i belongs to channel (r % G) * K + i // S. A row that fits in
one block is loaded once; a longer one is walked in blocks (two passes for the
statistics, one to write). Layer/rms norm's weight and bias gradients: each program sums
a block of rows into partial rows, a second kernel adds the partial rows column by
column. Channel kernels (batch norm, group norm's parameter gradients) see (N, C, S), one
program per channel walking its N * S elements.
"""
import triton
import triton.language as tl

from .pointwise import _down
from .launcher import cached, cdiv, next_pow2

_MAX_BLOCK = 4096
_MIN_BLOCK = 16
_ROW_PROGRAMS = 512  # programs of the fused row backward: about 4 per H100/H200 SM


def _pow2(n, lo=_MIN_BLOCK):
    return next_pow2(n, lo)


def _acc(x):
    return tl.float64 if x.dtype.name == "float64" else tl.float32


def _or(t, default):
    # a stand-in pointer for an absent tensor; the kernel's HAS_* flag keeps it unread
    return default if t is None else t


@cached
@triton.jit
def _rows_fwd_kernel(x, w, b, y, mean, rstd, D, K, S, G, eps, RMS: tl.constexpr,
                     HAS_W: tl.constexpr, HAS_B: tl.constexpr, ACC: tl.constexpr,
                     BLOCK: tl.constexpr, ONE: tl.constexpr):
    r = tl.program_id(0).to(tl.int64)
    base = r * D
    c0 = (r % G) * K
    cols = tl.arange(0, BLOCK).to(tl.int64)
    if ONE:
        mask = cols < D
        v = tl.load(x + base + cols, mask=mask, other=0).to(ACC)
        if RMS:
            m = 0.0
        else:
            m = tl.sum(v, axis=0) / D
        d = tl.where(mask, v - m, 0.0)
        var = tl.sum(d * d, axis=0) / D
    else:
        if RMS:
            m = 0.0
        else:
            s = tl.zeros([BLOCK], ACC)
            for i0 in range(0, D, BLOCK):
                c = i0 + cols
                s += tl.load(x + base + c, mask=c < D, other=0).to(ACC)
            m = tl.sum(s, axis=0) / D
        q = tl.zeros([BLOCK], ACC)
        for i0 in range(0, D, BLOCK):
            c = i0 + cols
            mask = c < D
            v = tl.load(x + base + c, mask=mask, other=0).to(ACC)
            d = tl.where(mask, v - m, 0.0)
            q += d * d
        var = tl.sum(q, axis=0) / D
    rs = 1.0 / tl.sqrt(var + eps)
    if not RMS:
        tl.store(mean + r, m)
    tl.store(rstd + r, rs)
    if ONE:
        # the row is still in registers
        out = (v - m) * rs
        ch = c0 + cols // S
        if HAS_W:
            out = out * tl.load(w + ch, mask=mask, other=0)
        if HAS_B:
            out = out + tl.load(b + ch, mask=mask, other=0)
        tl.store(y + base + cols, _down(out, y.dtype.element_ty), mask=mask)
    else:
        for i0 in range(0, D, BLOCK):
            c = i0 + cols
            mask = c < D
            v = tl.load(x + base + c, mask=mask, other=0).to(ACC)
            out = (v - m) * rs
            ch = c0 + c // S
            if HAS_W:
                out = out * tl.load(w + ch, mask=mask, other=0)
            if HAS_B:
                out = out + tl.load(b + ch, mask=mask, other=0)
            tl.store(y + base + c, _down(out, y.dtype.element_ty), mask=mask)


@triton.jit
def _row_dx(g, xh, rs, D, RMS: tl.constexpr):
    """One row's input gradient from its upstream gradient times the weight, g, and its
    normalised input xh, both in one block and zero past the row's end."""
    cx = tl.sum(g * xh, axis=0) / D
    if RMS:
        out = rs * (g - xh * cx)
    else:
        out = rs * (g - tl.sum(g, axis=0) / D - xh * cx)
    return out


@cached
@triton.jit
def _rows_bwd_kernel(dy, x, w, mean, rstd, dx, D, K, S, G, RMS: tl.constexpr,
                     HAS_W: tl.constexpr, ACC: tl.constexpr, BLOCK: tl.constexpr,
                     ONE: tl.constexpr):
    r = tl.program_id(0).to(tl.int64)
    base = r * D
    c0 = (r % G) * K
    cols = tl.arange(0, BLOCK).to(tl.int64)
    if RMS:
        m = 0.0
    else:
        m = tl.load(mean + r)
    rs = tl.load(rstd + r)
    if ONE:
        # the row fits one block: load it once, keep it in registers
        mask = cols < D
        g = tl.load(dy + base + cols, mask=mask, other=0).to(ACC)
        if HAS_W:
            g = g * tl.load(w + c0 + cols // S, mask=mask, other=0)
        xh = (tl.load(x + base + cols, mask=mask, other=0).to(ACC) - m) * rs
        xh = tl.where(mask, xh, 0.0)
        out = _row_dx(g, xh, rs, D, RMS)
        tl.store(dx + base + cols, _down(out, dx.dtype.element_ty), mask=mask)
    else:
        sg = tl.zeros([BLOCK], ACC)
        sgx = tl.zeros([BLOCK], ACC)
        for i0 in range(0, D, BLOCK):
            c = i0 + cols
            mask = c < D
            g = tl.load(dy + base + c, mask=mask, other=0).to(ACC)
            if HAS_W:
                g = g * tl.load(w + c0 + c // S, mask=mask, other=0)
            xh = (tl.load(x + base + c, mask=mask, other=0).to(ACC) - m) * rs
            sg += g
            sgx += tl.where(mask, g * xh, 0.0)
        cg = tl.sum(sg, axis=0) / D
        if RMS:
            cg = cg * 0
        cx = tl.sum(sgx, axis=0) / D
        for i0 in range(0, D, BLOCK):
            c = i0 + cols
            mask = c < D
            g = tl.load(dy + base + c, mask=mask, other=0).to(ACC)
            if HAS_W:
                g = g * tl.load(w + c0 + c // S, mask=mask, other=0)
            xh = (tl.load(x + base + c, mask=mask, other=0).to(ACC) - m) * rs
            out = rs * (g - cg - xh * cx)
            tl.store(dx + base + c, _down(out, dx.dtype.element_ty), mask=mask)


@cached
@triton.jit
def _rows_params_kernel(dy, x, mean, rstd, pw, pb, R, K, per, RMS: tl.constexpr,
                        HAS_DW: tl.constexpr, HAS_DB: tl.constexpr, ACC: tl.constexpr,
                        BR: tl.constexpr, BK: tl.constexpr):
    p = tl.program_id(0).to(tl.int64)
    k = tl.program_id(1).to(tl.int64) * BK + tl.arange(0, BK).to(tl.int64)
    kmask = k < K
    rows = tl.arange(0, BR).to(tl.int64)
    aw = tl.zeros([BR, BK], ACC)
    ab = tl.zeros([BR, BK], ACC)
    r0 = p * per
    for i0 in range(0, per, BR):
        r = r0 + i0 + rows
        rmask = (r < R) & (i0 + rows < per)
        mask = rmask[:, None] & kmask[None, :]
        off = r[:, None] * K + k[None, :]
        g = tl.load(dy + off, mask=mask, other=0).to(ACC)
        if HAS_DW:
            rs = tl.load(rstd + r, mask=rmask, other=0)
            if RMS:
                m = tl.zeros([BR], ACC)
            else:
                m = tl.load(mean + r, mask=rmask, other=0)
            v = tl.load(x + off, mask=mask, other=0).to(ACC)
            aw += g * ((v - m[:, None]) * rs[:, None])
        if HAS_DB:
            ab += g
    if HAS_DW:
        tl.store(pw + p * K + k, tl.sum(aw, axis=0), mask=kmask)
    if HAS_DB:
        tl.store(pb + p * K + k, tl.sum(ab, axis=0), mask=kmask)


@cached
@triton.jit
def _rows_bwd_fused_kernel(dy, x, w, mean, rstd, dx, part, pb_off, R, D, per,
                           RMS: tl.constexpr,
                           HAS_W: tl.constexpr, HAS_DX: tl.constexpr, HAS_DW: tl.constexpr,
                           HAS_DB: tl.constexpr, ACC: tl.constexpr, BLOCK: tl.constexpr):
    """Layer/rms norm's backward for rows that fit one block: program p takes rows
    [p * per, p * per + per), writes their input gradients (HAS_DX) and its partial rows
    of the weight and bias gradients, sum(dy * xhat) and sum(dy), at part + p * D and
    part + pb_off + p * D."""
    p = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK).to(tl.int64)
    cmask = cols < D
    if HAS_W:
        wv = tl.load(w + cols, mask=cmask, other=0)
    aw = tl.zeros([BLOCK], ACC)
    ab = tl.zeros([BLOCK], ACC)
    for i in range(0, per):
        r = p * per + i
        # the last program's rows past R load zeros and store nothing (their statistics
        # are read from the last row: a scalar load takes no mask in every Triton)
        mask = cmask & (r + cols * 0 < R)
        g = tl.load(dy + r * D + cols, mask=mask, other=0).to(ACC)
        rs = tl.load(rstd + tl.minimum(r, R - 1))
        if RMS:
            m = 0.0
        else:
            m = tl.load(mean + tl.minimum(r, R - 1))
        xh = tl.where(mask, (tl.load(x + r * D + cols, mask=mask, other=0).to(ACC) - m) * rs,
                      0.0)
        if HAS_DW:
            aw += g * xh
        if HAS_DB:
            ab += g
        if HAS_DX:
            if HAS_W:
                g = g * wv
            out = _row_dx(g, xh, rs, D, RMS)
            tl.store(dx + r * D + cols, _down(out, dx.dtype.element_ty), mask=mask)
    if HAS_DW:
        tl.store(part + p * D + cols, aw, mask=cmask)
    if HAS_DB:
        tl.store(part + pb_off + p * D + cols, ab, mask=cmask)


@cached
@triton.jit
def _col_sum_kernel(part, out, out2, P, K, BP: tl.constexpr, BK: tl.constexpr):
    """out = the column sums of part (P x K); programs of program_id(1) == 1 sum the next
    P x K block into out2 (dw and db in one launch)."""
    which = tl.program_id(1)
    part += which.to(tl.int64) * P * K
    k = tl.program_id(0).to(tl.int64) * BK + tl.arange(0, BK).to(tl.int64)
    kmask = k < K
    rows = tl.arange(0, BP).to(tl.int64)
    acc = tl.zeros([BP, BK], part.dtype.element_ty)
    for i0 in range(0, P, BP):
        r = i0 + rows
        mask = (r < P)[:, None] & kmask[None, :]
        acc += tl.load(part + r[:, None] * K + k[None, :], mask=mask, other=0)
    total = tl.sum(acc, axis=0)
    if which == 0:
        tl.store(out + k, total, mask=kmask)
    else:
        tl.store(out2 + k, total, mask=kmask)


@cached
@triton.jit
def _channel_stats_kernel(x, mean, var, N, C, S, ACC: tl.constexpr, BLOCK: tl.constexpr):
    c = tl.program_id(0).to(tl.int64)
    M = N * S
    idx = tl.arange(0, BLOCK).to(tl.int64)
    s = tl.zeros([BLOCK], ACC)
    for i0 in range(0, M, BLOCK):
        i = i0 + idx
        off = ((i // S) * C + c) * S + i % S
        s += tl.load(x + off, mask=i < M, other=0).to(ACC)
    m = tl.sum(s, axis=0) / M
    q = tl.zeros([BLOCK], ACC)
    for i0 in range(0, M, BLOCK):
        i = i0 + idx
        mask = i < M
        off = ((i // S) * C + c) * S + i % S
        d = tl.where(mask, tl.load(x + off, mask=mask, other=0).to(ACC) - m, 0.0)
        q += d * d
    tl.store(mean + c, m)
    tl.store(var + c, tl.sum(q, axis=0) / M)


@cached
@triton.jit
def _channel_params_kernel(dy, x, mean, rstd, dw, db, N, C, S, sn, cdiv,
                           HAS_DW: tl.constexpr, HAS_DB: tl.constexpr, ACC: tl.constexpr,
                           BLOCK: tl.constexpr):
    c = tl.program_id(0).to(tl.int64)
    M = N * S
    idx = tl.arange(0, BLOCK).to(tl.int64)
    sg = tl.zeros([BLOCK], ACC)
    sgx = tl.zeros([BLOCK], ACC)
    for i0 in range(0, M, BLOCK):
        i = i0 + idx
        mask = i < M
        n = i // S
        off = (n * C + c) * S + i % S
        g = tl.load(dy + off, mask=mask, other=0).to(ACC)
        sg += g
        if HAS_DW:
            st = n * sn + c // cdiv
            m = tl.load(mean + st, mask=mask, other=0)
            rs = tl.load(rstd + st, mask=mask, other=0)
            v = tl.load(x + off, mask=mask, other=0).to(ACC)
            sgx += g * ((v - m) * rs)
    if HAS_DW:
        tl.store(dw + c, tl.sum(sgx, axis=0))
    if HAS_DB:
        tl.store(db + c, tl.sum(sg, axis=0))


@cached
@triton.jit
def _channel_affine_kernel(x, kx, z, kz, k0, y, numel, C, S, HAS_Z: tl.constexpr,
                           HAS_K0: tl.constexpr, ACC: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    mask = i < numel
    c = (i // S) % C
    out = tl.load(x + i, mask=mask, other=0).to(ACC) * tl.load(kx + c, mask=mask, other=0)
    if HAS_Z:
        zv = tl.load(z + i, mask=mask, other=0).to(ACC)
        out += zv * tl.load(kz + c, mask=mask, other=0)
    if HAS_K0:
        out += tl.load(k0 + c, mask=mask, other=0)
    tl.store(y + i, _down(out, y.dtype.element_ty), mask=mask)


def _warps(block):
    return 8 if block >= 2048 else 4


def rows_forward(x, w, b, y, mean, rstd, R, K, S, G, eps, rms):
    """Rows of K * S elements: y = (x - mean) * rstd * w[c] + b[c], c = (r % G) * K + k;
    writes mean (not for ``rms``) and rstd per row."""
    D = K * S
    if R == 0:
        return
    block = min(_pow2(D), _MAX_BLOCK)
    _rows_fwd_kernel[(R,)](x, _or(w, rstd), _or(b, rstd), y, _or(mean, rstd), rstd, D, K, S,
                           G, float(eps), RMS=bool(rms), HAS_W=w is not None,
                           HAS_B=b is not None, ACC=_acc(x), BLOCK=block, ONE=D <= block,
                           num_warps=_warps(block))


def rows_backward_input(dy, x, w, mean, rstd, dx, R, K, S, G, rms):
    """The input gradient of rows_forward, a row at a time."""
    D = K * S
    if R == 0 or D == 0:
        return
    block = min(_pow2(D), _MAX_BLOCK)
    _rows_bwd_kernel[(R,)](dy, x, _or(w, rstd), _or(mean, rstd), rstd, dx, D, K, S, G,
                           RMS=bool(rms), HAS_W=w is not None, ACC=_acc(x), BLOCK=block,
                           ONE=D <= block, num_warps=_warps(block))


def rows_backward(dy, x, w, mean, rstd, dx, dw, db, R, K, rms):
    """Layer/rms norm's backward over R > 0 rows of K > 0: the input gradient into dx and
    the parameter gradients into dw and db (each may be None). Rows that fit one block take
    two launches: the input gradients with partial parameter rows, then their column sums."""
    if K > _MAX_BLOCK:
        if dx is not None:
            rows_backward_input(dy, x, w, mean, rstd, dx, R, K, 1, 1, rms)
        rows_backward_params(dy, x, mean, rstd, dw, db, R, K, rms)
        return
    from .._ops import alloc
    block = _pow2(K)
    outs = [t for t in (dw, db) if t is not None]
    if dx is None and not outs:
        return
    # a few programs per multiprocessor, each walking `per` rows: the partial rows stay few
    per = cdiv(R, _ROW_PROGRAMS)
    parts = cdiv(R, per)
    # the partial rows of dw then db, one block each: one column-sum launch for both
    part = rstd
    if outs:
        part = alloc.empty((len(outs), parts, K), outs[0].dtype, outs[0]._storage.device)
    _rows_bwd_fused_kernel[(parts,)](
        dy, x, _or(w, rstd), _or(mean, rstd), rstd, _or(dx, dy), part,
        parts * K if len(outs) == 2 else 0, R, K, per, RMS=bool(rms), HAS_W=w is not None,
        HAS_DX=dx is not None, HAS_DW=dw is not None, HAS_DB=db is not None, ACC=_acc(x),
        BLOCK=block, num_warps=_warps(block))
    if outs:
        bk = min(block, 128)
        _col_sum_kernel[(cdiv(K, bk), len(outs))](part, outs[0], outs[-1], parts, K, BP=16,
                                                  BK=bk)


def rows_backward_params(dy, x, mean, rstd, dw, db, R, K, rms):
    """Column sums over R rows of K: dw = sum(dy * xhat), db = sum(dy) (either may be None)."""
    # (with R == 0 the op passes zeroed outputs)
    if K == 0 or R == 0 or (dw is None and db is None):
        return
    from .._ops import alloc
    out = dw if dw is not None else db
    bk = min(_pow2(K), 128)
    br = 16
    # enough partial rows to fill the device, each summing `per` rows
    parts = max(1, min(cdiv(R, br), 256))
    per = cdiv(R, parts)
    parts = cdiv(R, per)
    outs = [t for t in (dw, db) if t is not None]
    # the partial sums of dw then db, one block each: one column-sum launch for both
    part = alloc.empty((len(outs), parts, K), out.dtype, out._storage.device)
    pw = part[0] if dw is not None else None
    pb = part[-1] if db is not None else None
    _rows_params_kernel[(parts, cdiv(K, bk))](
        dy, x, _or(mean, rstd), rstd, _or(pw, pb), _or(pb, pw), R, K, per, RMS=bool(rms),
        HAS_DW=dw is not None, HAS_DB=db is not None, ACC=_acc(x), BR=br, BK=bk)
    _col_sum_kernel[(cdiv(K, bk), len(outs))](part, outs[0], outs[-1], parts, K, BP=16,
                                              BK=bk)


def channel_stats(x, mean, var, N, C, S):
    """Mean and biased variance per channel of (N, C, S)."""
    if C == 0:
        return
    block = min(_pow2(N * S), 1024)
    _channel_stats_kernel[(C,)](x, mean, var, N, C, S, ACC=_acc(x), BLOCK=block)


def channel_param_grads(dy, x, mean, rstd, dw, db, N, C, S, sn, cdiv):
    """Per channel of (N, C, S): dw = sum(dy * (x - mean) * rstd), db = sum(dy), statistics
    of (n, c) at n * sn + c // cdiv."""
    if C == 0 or (dw is None and db is None):
        return
    block = min(_pow2(N * S), 1024)
    _channel_params_kernel[(C,)](dy, x, mean, rstd, _or(dw, db), _or(db, dw), N, C, S, sn,
                                 cdiv, HAS_DW=dw is not None, HAS_DB=db is not None,
                                 ACC=_acc(x), BLOCK=block)


def channel_affine(x, kx, z, kz, k0, y, N, C, S):
    """y = x * kx[c] + z * kz[c] + k0[c] over (N, C, S); z, kz, k0 may be None."""
    numel = N * C * S
    if numel == 0:
        return
    block = 1024
    _channel_affine_kernel[(cdiv(numel, block),)](
        x, kx, _or(z, x), _or(kz, kx), _or(k0, kx), y, numel, C, S, HAS_Z=z is not None,
        HAS_K0=k0 is not None, ACC=_acc(x), BLOCK=block)
