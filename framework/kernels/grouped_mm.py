"""Triton grouped_mm family (the cuda backend of framework/_cpu/grouped_mm.py): one launch
multiplies every group of a grouped product (framework/_ops/grouped_mm.py's layouts).

``_grouped_mm_kernel`` is persistent: a fixed number of programs walk the output tiles of
all groups, program p taking tiles p, p + P, p + 2P, ... of the sequence group by group.
Each program reads the group ends from ``offs`` on the device (no host sync for the jagged
sizes) and counts the tiles of the groups before, so groups of any size, empty ones
included, cost no launch of their own. A group is described by its base offsets in a, b
and out (group index times the 3-d operand's group stride, plus its start along the jagged
dim times that dim's stride) and its (M, N, K): the jagged one is ``end - start``. With a
jagged M or N, one more "group" covers the rows (columns) past offs[-1] with K = 0, so
they are written as zeros; an empty K group writes zeros the same way.

The tile loop is the GEMM's (linalg.py's ``_tile_operands`` and ``_mm_loop``): ``tl.dot``
on BLOCK_M x BLOCK_K and BLOCK_K x BLOCK_N tiles (at least 16 wide) with float32
accumulation, masked on every edge that is not a multiple of its tile (always along the
jagged dim); float32 operands go through TF32 when the matmul precision allows it, as the
GEMM does. Offs are clamped to [0, the jagged dim], so no group reads or writes outside its
operands; a decreasing end empties its group and the next group starts from it (values of
rows written twice are then unspecified; the CPU launcher raises instead, which here would
need a sync).

Not yet here: autotuned tiles (one config per dtype class), TMA loads.
"""
import triton
import triton.language as tl

from .. import _matmul_precision, cuda
from .launcher import cached, cdiv
from .linalg import _INT32_MAX, _TL_DTYPE, _mm_loop, _tile_operands
from .linalg_tuning import _SMS
from .pointwise import _down

_NONE, _ROWS, _COLS, _INNER = 0, 1, 2, 3    # the jagged dim: none (3d x 3d), M, N, K


@cached
@triton.jit
def _grouped_mm_kernel(out, a, b, offs, G, M, N, K, J, sog, som, son, sag, sam, sak, sbg,
                       sbk, sbn, JAGGED: tl.constexpr, TAIL: tl.constexpr,
                       PRECISION: tl.constexpr, DOT_T: tl.constexpr, UPCAST: tl.constexpr,
                       EVEN_M: tl.constexpr, EVEN_N: tl.constexpr, EVEN_K: tl.constexpr,
                       IDX64: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                       BLOCK_K: tl.constexpr):
    """The tiles of out = a @ b for groups 0..G-1 (plus the tail past offs[-1] when TAIL)
    that fall to this program. M, N, K: the sizes of the non-jagged dims (the jagged one's
    entry is unused); J: the jagged dim's length; s<op><dim>: element strides, the group
    strides sog/sag/sbg 0 for 2-d operands. JAGGED: which of M, N, K offs cuts."""
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    done = pid * 0          # tiles of the groups before this one
    for g in range(0, G + TAIL):
        start = g * 0
        size = g * 0
        if JAGGED != 0:
            start = tl.load(offs + g - 1, mask=g > 0, other=0)
            end = tl.load(offs + g, mask=g < G, other=J)
            start = tl.minimum(tl.maximum(start, 0), J)
            end = tl.minimum(tl.maximum(end, start), J)
            size = end - start
        m_g = M
        n_g = N
        k_g = K
        if JAGGED == 1:
            m_g = size
        if JAGGED == 2:
            n_g = size
        if JAGGED == 3:
            k_g = size
        if TAIL:
            k_g = tl.where(g < G, k_g, 0)
        g64 = tl.cast(g, tl.int64)
        s64 = tl.cast(start, tl.int64)
        a_g = a + g64 * sag
        b_g = b + g64 * sbg
        o_g = out + g64 * sog
        if JAGGED == 1:
            a_g += s64 * sam
            o_g += s64 * som
        if JAGGED == 2:
            b_g += s64 * sbn
            o_g += s64 * son
        if JAGGED == 3:
            a_g += s64 * sak
            b_g += s64 * sbk
        num_m = tl.cdiv(m_g, BLOCK_M)
        tiles = num_m * tl.cdiv(n_g, BLOCK_N)
        # this program's first tile of the group: the first t >= done with t = pid mod nprog
        first = done + ((pid - done) % nprog + nprog) % nprog
        for t in range(first, done + tiles, nprog):
            local = t - done
            pid_m = local % num_m   # M fastest: programs running together share b's panel
            pid_n = local // num_m
            offs_m, offs_n, mask_m, mask_n, offs_k, a_ptrs, b_ptrs, step_a, step_b = \
                _tile_operands(a_g, b_g, pid_m, pid_n, m_g, n_g, sam, sak, sbk, sbn, IDX64,
                               BLOCK_M, BLOCK_N, BLOCK_K)
            acc, _ = _mm_loop(a_ptrs, b_ptrs, mask_m, mask_n, offs_k, k_g, step_a, step_b,
                              0, PRECISION, tl.float32, DOT_T, UPCAST, EVEN_M, EVEN_N,
                              EVEN_K, BLOCK_M, BLOCK_N, BLOCK_K, False)
            o_ptrs = o_g + offs_m[:, None] * som + offs_n[None, :] * son
            tl.store(o_ptrs, _down(acc, o_ptrs.dtype.element_ty),
                     mask=mask_m[:, None] & mask_n[None, :])
        done += tiles


# (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages): tensor-core tiles for 16-bit and TF32,
# CUDA-core sized ones for IEEE float32 (as linalg_tuning prunes its configs); the
# interpreter takes small tiles that still cross edges
_CONFIGS = {"16bit": (128, 128, 64, 8, 3), "tf32": (128, 128, 32, 8, 3),
            "ieee": (64, 64, 32, 4, 3)}
_SIM_CONFIG = (32, 32, 32, 4, 1)
_SIM_PROGRAMS = 3     # a few programs, so that the interpreter walks the persistent loop
_RESIDENT = 2         # programs per SM (the 16-bit config's pipeline fits twice)


def _extent(rows, cols, rs, cs, block):
    return (rows + block) * rs + (cols + block) * cs + 1


def grouped_mm(out, a, b, offs):
    """The grouped product of a and b into out (framework/_ops/grouped_mm.py's layouts:
    2d x 3d groups a's rows, 3d x 3d is batched, 2d x 2d groups K, 3d x 2d groups b's
    columns), offs being the int32 ends of the groups (None for 3d x 3d). Outputs past
    offs[-1] and those of empty K groups are zero. float32 accumulation."""
    if out.numel() == 0:
        return
    sa, sb, so = a._stride, b._stride, out._stride
    da, db = a.dim(), b.dim()
    sag, sam, sak = (sa if da == 3 else (0,) + tuple(sa))
    sbg, sbk, sbn = (sb if db == 3 else (0,) + tuple(sb))
    sog, som, son = (so if out.dim() == 3 else (0,) + tuple(so))
    m, k = a._shape[-2], a._shape[-1]
    n = b._shape[-1]
    if da == 3 and db == 3:
        jagged, groups, j = _NONE, a._shape[0], 0
    elif da == 2 and db == 3:
        jagged, groups, j = _ROWS, b._shape[0], m
    elif da == 2:
        jagged, groups, j = _INNER, offs._shape[0], k
    else:
        jagged, groups, j = _COLS, a._shape[0], n
    tail = int(jagged in (_ROWS, _COLS))
    name = a.dtype.name
    precision = None   # tl.dot's default: only float32 operands have a choice
    kind = "16bit"
    if name == "float32":
        precision = kind = "tf32" if _matmul_precision.allow_tf32() else "ieee"
    simulated = cuda.is_simulated()
    bm, bn, bk, warps, stages = _SIM_CONFIG if simulated else _CONFIGS[kind]
    if jagged == _ROWS:
        upper = (cdiv(m, bm) + groups + tail) * cdiv(n, bn)
    elif jagged == _COLS:
        upper = cdiv(m, bm) * (cdiv(n, bn) + groups + tail)
    else:
        upper = groups * cdiv(m, bm) * cdiv(n, bn)
    programs = max(1, min(upper, _SIM_PROGRAMS if simulated else _RESIDENT * _SMS))
    blk = max(bm, bn, bk)
    idx64 = max(_extent(m, k, sam, sak, blk), _extent(k, n, sbk, sbn, blk),
                _extent(m, n, som, son, blk)) > _INT32_MAX
    _grouped_mm_kernel[(programs,)](
        out, a, b, out if offs is None else offs, groups, m, n, k, j, sog, som, son, sag,
        sam, sak, sbg, sbk, sbn, JAGGED=jagged, TAIL=tail, PRECISION=precision,
        DOT_T=_TL_DTYPE[name], UPCAST=simulated and name == "bfloat16",
        EVEN_M=jagged != _ROWS and m % bm == 0, EVEN_N=jagged != _COLS and n % bn == 0,
        EVEN_K=jagged != _INNER and k % bk == 0, IDX64=idx64, BLOCK_M=bm, BLOCK_N=bn,
        BLOCK_K=bk, num_warps=warps, num_stages=stages)
