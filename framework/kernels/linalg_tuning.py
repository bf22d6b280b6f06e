"""The GEMM's tile configs and their autotuning (framework/kernels/linalg.py's ``_tuned``):
which tile shapes are worth timing for a problem, and how they are timed on the device."""
import triton

from .. import cuda
from .launcher import cdiv, next_pow2

GROUP_M = 8  # tile rows walked together (neighbouring programs share panels in L2)
_SMEM_LIMIT = 227 * 1024  # H100 shared memory per block; configs beyond it are pruned
_SMS = 132  # H100 SXM multiprocessors: how many tiles fill the GPU (a tuning hint only)


def _config(bm, bn, bk, stages, warps):
    return triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": GROUP_M},
                         num_stages=stages, num_warps=warps)


# tensor-core tiles for H100-class GPUs (big square problems favour 128x256 / 256x128 with 8
# warps; the smaller ones serve skinny or small products)
_DOT_CONFIGS = [
    _config(128, 256, 64, 3, 8),
    _config(256, 128, 64, 3, 8),
    _config(128, 256, 64, 4, 8),
    _config(128, 128, 64, 4, 8),
    _config(128, 128, 64, 3, 4),
    _config(128, 128, 32, 4, 4),
    _config(128, 128, 32, 3, 8),
    _config(128, 256, 32, 3, 8),
    _config(256, 128, 32, 3, 8),
    _config(64, 128, 64, 4, 4),
    _config(128, 64, 64, 4, 4),
    _config(64, 128, 32, 4, 4),
    _config(64, 64, 64, 4, 4),
    _config(64, 64, 32, 5, 4),
    _config(32, 64, 32, 5, 2),
]
# float64 / integers: the broadcast product holds BLOCK_M * BLOCK_N * BLOCK_K values
_FMA_CONFIG = _config(32, 32, 8, 2, 4)
# the interpreter: one small config (tests run fast, edges and several tiles exercised)
_SIM_DOT_CONFIG = _config(32, 32, 32, 1, 4)
_SIM_FMA_CONFIG = _config(32, 32, 8, 1, 4)


def _prune(configs, named_args, **kwargs):
    """The configs worth timing for this problem (at least one): those whose pipeline fits
    in shared memory for the dtype, whose tiles are not far bigger than the problem, of at
    least 128x128 when the problem has enough such tiles to fill the GPU twice, and for
    IEEE float32 (a CUDA-core dot, no tensor cores) with BLOCK_K 32 and at most 64
    accumulators per thread (more spill registers)."""
    itemsize = named_args["a"].dtype.itemsize
    m, n, k = named_args["M"], named_args["N"], named_args["K"]
    many_tiles = cdiv(m, 128) * cdiv(n, 128) * named_args["nbatch"] >= 2 * _SMS
    ieee = kwargs.get("PRECISION") == "ieee"
    keep = []
    for c in configs:
        bm, bn, bk = c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"], c.kwargs["BLOCK_K"]
        if (c.num_stages * (bm + bn) * bk * itemsize > _SMEM_LIMIT
                or bm > max(64, next_pow2(m)) or bn > max(64, next_pow2(n))
                or bk > max(32, next_pow2(k)) or (many_tiles and bm * bn < 128 * 128)
                or (ieee and (bm * bn > 64 * 32 * c.num_warps or bk != 32))):
            continue
        keep.append(c)
    return keep or configs[-1:]


def _do_bench(kernel_call, quantiles):
    """Milliseconds of kernel_call at the given quantiles, timed with framework.cuda.Event
    on the current stream (Triton's autotuner interface; no torch)."""
    kernel_call()  # compiles; the first launch is not timed
    start, end = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
    start.record()
    for _ in range(3):
        kernel_call()
    end.record()
    end.synchronize()
    estimate = max(start.elapsed_time(end) / 3, 1e-3)
    reps = max(5, min(100, int(30.0 / estimate)))  # about 30 ms per config
    events = [(cuda.Event(enable_timing=True), cuda.Event(enable_timing=True))
              for _ in range(reps)]
    for s, e in events:
        s.record()
        kernel_call()
        e.record()
    events[-1][1].synchronize()
    times = sorted(s.elapsed_time(e) for s, e in events)
    return [times[min(len(times) - 1, int(q * len(times)))] for q in quantiles]
