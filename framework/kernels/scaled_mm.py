"""Triton ``_scaled_mm``: out = (a @ b) * scale_a * scale_b (+ bias) for float8 a (M, K)
and b (K, N), accumulated in float32.

On a GPU of compute capability 8.9 or higher, tiles of equal float8 dtypes go to tl.dot as
float8 (tensor cores); otherwise (the interpreter has no float8 dot, older GPUs, mixed
e4m3/e5m2) each tile is widened to float32 with the bit manipulation of kernels/float8.py
(exact) and multiplied in IEEE float32."""
import triton
import triton.language as tl

from .. import cuda
from .float8 import _decode, as_bytes
from .launcher import cached, cdiv

# the float8 formats _widen and _as_fp8 take
_FMT = {"float8_e4m3fn": 0, "float8_e5m2": 1}
_SIM_BLOCKS = (16, 16, 16)
_GPU_BLOCKS = (128, 128, 64)


@triton.jit
def _widen(x, FMT: tl.constexpr):
    if FMT == 0:
        return _decode(x, 4, 3, 7, 0, 0.001953125)
    else:
        return _decode(x, 5, 2, 15, 1, 1.52587890625e-05)


@triton.jit
def _as_fp8(x, FMT: tl.constexpr):
    if FMT == 0:
        return x.to(tl.float8e4nv, bitcast=True)
    else:
        return x.to(tl.float8e5, bitcast=True)


@cached
@triton.jit
def _scaled_mm_kernel(out, a, b, sa, sb, bias, M, N, K, sam, sak, sbk, sbn, som, son,
                      FMT_A: tl.constexpr, FMT_B: tl.constexpr, FP8_DOT: tl.constexpr,
                      ROWWISE: tl.constexpr, HAS_BIAS: tl.constexpr, BLOCK_M: tl.constexpr,
                      BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    mask_m, mask_n = rm < M, rn < N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        ta = tl.load(a + rm[:, None] * sam + kk[None, :] * sak,
                     mask=mask_m[:, None] & (kk[None, :] < K), other=0)
        tb = tl.load(b + kk[:, None] * sbk + rn[None, :] * sbn,
                     mask=(kk[:, None] < K) & mask_n[None, :], other=0)
        if FP8_DOT:
            acc = tl.dot(_as_fp8(ta, FMT_A), _as_fp8(tb, FMT_B), acc, out_dtype=tl.float32)
        else:
            acc = tl.dot(_widen(ta, FMT_A), _widen(tb, FMT_B), acc, input_precision="ieee")
    if ROWWISE:
        acc = acc * tl.load(sa + rm, mask=mask_m, other=0.0)[:, None]
        acc = acc * tl.load(sb + rn, mask=mask_n, other=0.0)[None, :]
    else:
        acc = acc * (tl.load(sa) * tl.load(sb))
    if HAS_BIAS:
        acc = acc + tl.load(bias + rn, mask=mask_n, other=0.0)[None, :]
    tl.store(out + rm[:, None] * som + rn[None, :] * son, acc,
             mask=mask_m[:, None] & mask_n[None, :])


def scaled_mm(out, a, b, scale_a, scale_b, bias, rowwise):
    """out (float32, M x N) = (a @ b) * scale_a * scale_b (+ bias): a, b float8 (e4m3fn or
    e5m2); scales and bias float32 (scales: one element each, or (M,) and (N,) when
    ``rowwise``)."""
    m, k = a._shape
    n = b._shape[1]
    if out.numel() == 0:
        return
    simulated = cuda.is_simulated()
    fp8_dot = (not simulated and a.dtype is b.dtype
               and cuda.get_device_capability(out.device) >= (8, 9))
    bm, bn, bk = _SIM_BLOCKS if simulated else _GPU_BLOCKS
    ua, ub = as_bytes(a), as_bytes(b)
    grid = (cdiv(m, bm), cdiv(n, bn))
    _scaled_mm_kernel[grid](
        out, ua, ub, scale_a, scale_b, out if bias is None else bias, m, n, k,
        ua._stride[0], ua._stride[1], ub._stride[0], ub._stride[1], out._stride[0],
        out._stride[1], FMT_A=_FMT[a.dtype.name], FMT_B=_FMT[b.dtype.name], FP8_DOT=fp8_dot,
        ROWWISE=rowwise, HAS_BIAS=bias is not None, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
        num_warps=8 if not simulated else 4)

