"""Triton fused_linear family (the cuda backend of framework/_cpu/fused_linear.py): linear
with the bias add and the activation in the GEMM's epilogue.

``linear(out, pre, input, weight, bias, activation)`` computes
``out = activation(input @ weight^T + bias)`` for input (M, K), weight (N, K) and bias (N,)
with any (non-negative) strides, into a contiguous out (M, N), and also stores the
pre-activation ``input @ weight^T + bias`` into a contiguous ``pre`` when one is given (the
backward of gelu and silu reads it). Activations: none, relu, gelu (erf), gelu_tanh (the
tanh approximation) and silu, with the formulas of the pointwise kernels.

One kernel, ``_linear_kernel``: the tiling of linalg.py's ``_mm_kernel`` (one BLOCK_M x
BLOCK_N tile of out per program, tiles walked in groups of GROUP_M rows, the K loop masked
only along the dims that need it, weight read as the (K, N) operand through its strides), and
an epilogue that adds the bias to the float32 (float64) accumulator, stores it into pre
when asked, applies the activation and rounds once into out. Products by dtype as in
linalg.py: float16/bfloat16 with ``tl.dot`` and float32 accumulation, float32 in IEEE float32
or TF32 per ``framework.get_float32_matmul_precision()``, float64 as a multiply and
``tl.sum`` in float64. On a GPU the tensor-core configs of linalg.py are autotuned per
(M, N, K, layout, precision); under the interpreter one small config is used.

Not here: split-K (linear layers with few output tiles and a long K run unsplit), a fused
backward (the derivatives are GEMMs over framework ops: framework/_ops/fused_linear.py).
"""
import triton
import triton.language as tl

from . import linalg
from .linalg import (MODE_DOT, MODE_FMA, _ACC_DTYPE, _INT32_MAX, _extent, _mm_loop,
                     _tile_ids, _tile_operands)
from .pointwise import _down, _up
from .pointwise_unary import _gelu, _gelu_tanh, _relu, _silu
from .launcher import cached, cdiv

# activation name -> the kernels' code (as framework/_cpu/fused_linear.py)
ACTIVATIONS = {"none": 0, "relu": 1, "gelu": 2, "gelu_tanh": 3, "silu": 4}


@triton.jit
def _activate(x, ACT: tl.constexpr):
    """The activation of code ACT, in x's (the accumulator's) type."""
    if ACT == 1:
        y = _relu(x, 0.0, 0.0, 0.0)
    elif ACT == 2:
        y = _gelu(x, 0.0, 0.0, 0.0)
    elif ACT == 3:
        y = _gelu_tanh(x, 0.0, 0.0, 0.0)
    elif ACT == 4:
        y = _silu(x, 0.0, 0.0, 0.0)
    else:
        y = x
    return y


@triton.jit(do_not_specialize=["layout"])
def _linear_kernel(out, pre, a, w, bias, M, N, K, sam, sak, swn, swk, sbias, layout,
                   ACT: tl.constexpr, HAS_BIAS: tl.constexpr, SAVE_PRE: tl.constexpr,
                   MODE: tl.constexpr, PRECISION: tl.constexpr, ACC: tl.constexpr,
                   IDX64: tl.constexpr, UPCAST: tl.constexpr, EVEN_M: tl.constexpr,
                   EVEN_N: tl.constexpr, EVEN_K: tl.constexpr, BLOCK_M: tl.constexpr,
                   BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    """One BLOCK_M x BLOCK_N tile of out = act(a @ w^T + bias) (and of pre = a @ w^T + bias
    when SAVE_PRE).

    out, pre: contiguous (M, N) (pre: any pointer when not SAVE_PRE). a: (M, K) with element
    strides sam, sak; w: (N, K) with strides swn, swk; bias: (N,) with stride sbias (any
    pointer when not HAS_BIAS). layout: only a key of the autotuner. ACT: the activation's
    code (ACTIVATIONS). MODE, PRECISION, ACC, UPCAST, EVEN_M/N/K: as linalg._mm_kernel."""
    pid_m, pid_n = _tile_ids(M, N, BLOCK_M, BLOCK_N, GROUP_M)

    # w^T is the (K, N) operand: strides (swk, swn)
    offs_m, offs_n, mask_m, mask_n, offs_k, a_ptrs, w_ptrs, step_a, step_w = _tile_operands(
        a, w, pid_m, pid_n, M, N, sam, sak, swk, swn, IDX64, BLOCK_M, BLOCK_N, BLOCK_K)

    acc, _ = _mm_loop(a_ptrs, w_ptrs, mask_m, mask_n, offs_k, K, step_a, step_w, MODE,
                      PRECISION, ACC, a.dtype.element_ty, UPCAST, EVEN_M, EVEN_N, EVEN_K,
                      BLOCK_M, BLOCK_N, BLOCK_K, False)

    # epilogue: bias and activation on the accumulator, one rounding per stored value
    if HAS_BIAS:
        b = _up(tl.load(bias + offs_n * sbias, mask=mask_n, other=0)).to(ACC)
        acc += b[None, :]
    mask = mask_m[:, None] & mask_n[None, :]
    offs = offs_m[:, None] * N + offs_n[None, :]
    if SAVE_PRE:
        tl.store(pre + offs, _down(acc, pre.dtype.element_ty), mask=mask)
    y = _activate(acc, ACT)
    tl.store(out + offs, _down(y, out.dtype.element_ty), mask=mask)


_linear = triton.heuristics({
    "EVEN_M": lambda args: args["M"] % args["BLOCK_M"] == 0,
    "EVEN_N": lambda args: args["N"] % args["BLOCK_N"] == 0,
    "EVEN_K": lambda args: args["K"] % args["BLOCK_K"] == 0,
})(cached(_linear_kernel))  # tuned launches go through the cache too


def _prune(configs, named_args, **kwargs):
    """linalg's pruning of the tensor-core configs (one matrix, no batch)."""
    return linalg._prune(configs, dict(named_args, nbatch=1), **kwargs)


# out and pre are only written: benchmark runs need not restore them
_tuned = triton.autotune(linalg._DOT_CONFIGS, key=["M", "N", "K", "layout", "PRECISION"],
                         prune_configs_by={"early_config_prune": _prune},
                         do_bench=linalg._do_bench, cache_results=True)(_linear)


def linear(out, pre, input, weight, bias, activation):
    """out = activation(input @ weight^T + bias) and, when ``pre`` is given, pre = input @
    weight^T + bias. input (M, K), weight (N, K) and bias (N,) (or None) with any strides;
    out and pre (or None) contiguous (M, N) of input's floating dtype."""
    m, k = input._shape
    n = weight._shape[0]
    if m == 0 or n == 0:
        return
    sam, sak = input._stride
    swn, swk = weight._stride
    sb = 0 if bias is None else bias._stride[0]
    if min(sam, sak, swn, swk, sb) < 0:
        raise RuntimeError("fused_linear: negative strides are not supported")
    if max(m, n, k) > _INT32_MAX:
        raise RuntimeError("fused_linear: matrix dimensions must be below 2^31")
    name = out.dtype.name
    if name not in ("float16", "bfloat16", "float32", "float64"):
        raise NotImplementedError(f"\"fused_linear_cuda\" not implemented for '{name}'")
    dot = name != "float64"
    precision = None
    if name == "float32":
        from .. import _matmul_precision
        precision = "tf32" if _matmul_precision.allow_tf32() else "ieee"
    idx64 = max(_extent(m, n, n, 1), _extent(m, k, sam, sak), _extent(k, n, swk, swn),
                _extent(0, n, 0, sb)) > _INT32_MAX
    layout = int(sak == 1) | int(sam == 1) << 1 | int(swn == 1) << 2 | int(swk == 1) << 3
    from .. import cuda
    simulated = cuda.is_simulated()
    if simulated or not dot:
        fn = _linear
        cfg = (linalg._SIM_DOT_CONFIG if dot else linalg._SIM_FMA_CONFIG) if simulated \
            else linalg._FMA_CONFIG
        meta = dict(cfg.kwargs, num_warps=cfg.num_warps, num_stages=cfg.num_stages)
    else:
        fn, meta = _tuned, {}

    def grid(meta):
        return (cdiv(m, meta["BLOCK_M"]) * cdiv(n, meta["BLOCK_N"]),)

    fn[grid](out, out if pre is None else pre, input, weight, out if bias is None else bias,
             m, n, k, sam, sak, swn, swk, sb, layout,
             ACT=ACTIVATIONS[activation], HAS_BIAS=bias is not None, SAVE_PRE=pre is not None,
             MODE=MODE_DOT if dot else MODE_FMA, PRECISION=precision,
             ACC=_ACC_DTYPE["float32" if dot else "float64"], IDX64=idx64,
             UPCAST=simulated and name == "bfloat16", **meta)
