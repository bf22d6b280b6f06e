"""Fused multi-tensor optimizer steps (Triton), the cuda side of native/optim.cpp.

One launch updates every tensor of the lists (tables from multi_tensor.py).
16-bit floats and float32 compute in float32, float64 in float64; the state has the
params' dtype. The hyperparameters (and per-tensor step sizes) come in a float64 table
``hp`` so float64 params see them unrounded."""
import triton
import triton.language as tl

from .multi_tensor import BLOCK, at as _at, tables as _tables


def _acc(t):
    return tl.float64 if t.dtype.name == "float64" else tl.float32


@triton.jit
def _adam_kernel(ref, tp, tg, tm, tv, tvmax, numels, start, owner, hp, n, ACC: tl.constexpr,
                 HAS_WD: tl.constexpr,
                 DECOUPLED: tl.constexpr, AMSGRAD: tl.constexpr, MAXIMIZE: tl.constexpr,
                 BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    t = tl.load(owner + pid)
    off = (pid - tl.load(start + t)) * BLOCK + tl.arange(0, BLOCK)
    mask = off < tl.load(numels + t)
    pp = _at(tp, t, ref) + off
    mp = _at(tm, t, ref) + off
    vp = _at(tv, t, ref) + off
    ty = ref.dtype.element_ty
    lr = tl.load(hp)
    beta1 = tl.load(hp + 1)
    beta2 = tl.load(hp + 2)
    eps = tl.load(hp + 3)
    wd = tl.load(hp + 4)
    p = tl.load(pp, mask=mask).to(ACC)
    g = tl.load(_at(tg, t, ref) + off, mask=mask).to(ACC)
    if MAXIMIZE:
        g = -g
    if HAS_WD:
        if DECOUPLED:
            p = p * (1 - lr * wd).to(ACC)
        else:
            g = g + wd.to(ACC) * p
    m = beta1.to(ACC) * tl.load(mp, mask=mask).to(ACC) + (1 - beta1).to(ACC) * g
    v = beta2.to(ACC) * tl.load(vp, mask=mask).to(ACC) + (1 - beta2).to(ACC) * g * g
    tl.store(mp, m.to(ty), mask=mask)
    tl.store(vp, v.to(ty), mask=mask)
    den = v
    if AMSGRAD:
        xp = _at(tvmax, t, ref) + off
        den = tl.maximum(tl.load(xp, mask=mask).to(ACC), v)
        tl.store(xp, den.to(ty), mask=mask)
    den = tl.sqrt(den) / tl.load(hp + 5 + n + t).to(ACC) + eps.to(ACC)
    p = p - tl.load(hp + 5 + t).to(ACC) * m / den
    tl.store(pp, p.to(ty), mask=mask)


@triton.jit
def _sgd_kernel(ref, tp, tg, tb, numels, start, owner, hp,
                ACC: tl.constexpr, HAS_WD: tl.constexpr, HAS_BUF: tl.constexpr,
                FIRST: tl.constexpr, NESTEROV: tl.constexpr, MAXIMIZE: tl.constexpr,
                BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    t = tl.load(owner + pid)
    off = (pid - tl.load(start + t)) * BLOCK + tl.arange(0, BLOCK)
    mask = off < tl.load(numels + t)
    pp = _at(tp, t, ref) + off
    ty = ref.dtype.element_ty
    lr = tl.load(hp)
    momentum = tl.load(hp + 1)
    dampening = tl.load(hp + 2)
    wd = tl.load(hp + 3)
    p = tl.load(pp, mask=mask).to(ACC)
    g = tl.load(_at(tg, t, ref) + off, mask=mask).to(ACC)
    if MAXIMIZE:
        g = -g
    if HAS_WD:
        g = g + wd.to(ACC) * p
    if HAS_BUF:
        bp = _at(tb, t, ref) + off
        if FIRST:
            b = g
        else:
            b = momentum.to(ACC) * tl.load(bp, mask=mask).to(ACC) + (1 - dampening).to(ACC) * g
        tl.store(bp, b.to(ty), mask=mask)
        if NESTEROV:
            g = g + momentum.to(ACC) * b
        else:
            g = b
    tl.store(pp, (p - lr.to(ACC) * g).to(ty), mask=mask)


def fused_adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, step_sizes, bc2_sqrts,
               lr, beta1, beta2, eps, weight_decay, decoupled, amsgrad, maximize):
    """Adam/AdamW over the lists in one launch (see framework/_cpu/optim.py)."""
    if not params or sum(p.numel() for p in params) == 0:
        return
    import framework as fw
    (tp, tg, tm, tv, tx), numels, start, owner, grid = _tables(
        params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs if amsgrad else [])
    hp = [float(x) for x in (lr, beta1, beta2, eps, weight_decay, *step_sizes, *bc2_sqrts)]
    hp = fw.tensor(hp, dtype=fw.float64, device=params[0].device)
    _adam_kernel[(grid,)](params[0], tp, tg, tm, tv, tx, numels, start, owner, hp,
                          len(params), ACC=_acc(params[0]),
                          HAS_WD=weight_decay != 0, DECOUPLED=bool(decoupled),
                          AMSGRAD=bool(amsgrad), MAXIMIZE=bool(maximize), BLOCK=BLOCK)


def fused_sgd(params, grads, bufs, lr, momentum, dampening, weight_decay, nesterov, maximize,
              first):
    """SGD over the lists in one launch (see framework/_cpu/optim.py)."""
    if not params or sum(p.numel() for p in params) == 0:
        return
    import framework as fw
    (tp, tg, tb), numels, start, owner, grid = _tables(
        params, grads, bufs if momentum != 0 else [])
    hp = fw.tensor([float(x) for x in (lr, momentum, dampening, weight_decay)],
                   dtype=fw.float64, device=params[0].device)
    _sgd_kernel[(grid,)](params[0], tp, tg, tb, numels, start, owner, hp,
                         ACC=_acc(params[0]), HAS_WD=weight_decay != 0,
                         HAS_BUF=momentum != 0, FIRST=bool(first),
                         NESTEROV=bool(nesterov), MAXIMIZE=bool(maximize), BLOCK=BLOCK)
