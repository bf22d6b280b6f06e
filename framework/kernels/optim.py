"""Fused multi-tensor optimizer steps (Triton), the cuda side of native/optim.cpp.

One launch updates every tensor of the lists (tables from multi_tensor.py).
16-bit floats and float32 compute in float32, float64 in float64; the state has the
params' dtype. The hyperparameters (and per-tensor step sizes) come in a float64 table
``hp`` so float64 params see them unrounded.

GradScaler (PyTorch's fused contract): ``grad_scale`` and ``found_inf`` are None or
1-element float32 tensors on the params' device. Each gradient is divided by
``grad_scale`` and written back unscaled; when ``found_inf`` is 1 every program masks all
its loads and stores off. The flag is read inside the kernel: no host sync."""
import triton
import triton.language as tl

from .._tensor import Tensor
from .launcher import cached
from .multi_tensor import (BLOCK, at as _at, block as _block, tables as _tables,
                           upload as _upload)
from .pointwise import _params_bits as _bits, from_bits as _f64
from .pointwise_math import _pow64


def _acc(t):
    return tl.float64 if t.dtype.name == "float64" else tl.float32


@triton.jit
def _start(owner, start, numels, found_inf, HAS_INF: tl.constexpr, BLOCK: tl.constexpr):
    """(tensor index, offsets, mask) of this program; the mask is all off when found_inf
    is 1."""
    t, off, numel = _block(owner, start, numels, BLOCK)
    if HAS_INF:
        numel = numel * (tl.load(found_inf) != 1.0).to(numel.dtype)
    return t, off, off < numel


@triton.jit
def _grad(tg, t, off, mask, ref, grad_scale, ACC: tl.constexpr, HAS_SCALE: tl.constexpr,
          MAXIMIZE: tl.constexpr):
    """The gradient as the update sees it: unscaled (and stored back unscaled), then
    negated for maximize."""
    gp = _at(tg, t, ref) + off
    g = tl.load(gp, mask=mask).to(ACC)
    if HAS_SCALE:
        g = g / tl.load(grad_scale).to(ACC)
        tl.store(gp, g.to(ref.dtype.element_ty), mask=mask)
    if MAXIMIZE:
        g = -g
    return g


@triton.jit
def _device_step(tsteps, t, sref):
    """Tensor t's step counter (a float32 scalar tensor on the device) as a float64 [1]."""
    return tl.load(_at(tsteps, t, sref) + tl.zeros([1], tl.int32)).to(tl.float64)


@cached
@triton.jit
def _advance_kernel(tsteps, sref, n, found_inf, HAS_INF: tl.constexpr, BLOCK: tl.constexpr):
    """step += 1 for each counter of the table (+= 1 - found_inf: a skipped step does not
    count)."""
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = i < n
    ptrs = tl.load(tsteps + i, mask=mask, other=0).to(tl.pointer_type(sref.dtype.element_ty))
    s = tl.load(ptrs, mask=mask, other=0)
    inc = 1.0
    if HAS_INF:
        inc = 1.0 - tl.load(found_inf)
    tl.store(ptrs, s + inc, mask=mask)


@cached
@triton.jit
def _adam_kernel(ref, tp, tg, tm, tv, tvmax, tsteps, sref, numels, start, owner, hp, n,
                 grad_scale, found_inf, lr_bits, beta1_bits, beta2_bits, eps_bits, wd_bits,
                 step_size_bits, bc2_sqrt_bits, ACC: tl.constexpr, HAS_WD: tl.constexpr,
                 DECOUPLED: tl.constexpr, AMSGRAD: tl.constexpr, MAXIMIZE: tl.constexpr,
                 HAS_SCALE: tl.constexpr, HAS_INF: tl.constexpr, STEPS: tl.constexpr,
                 BLOCK: tl.constexpr):
    """STEPS: where the bias corrections come from: 0 the per-tensor host values in ``hp``,
    1 the step counters on the device (``tsteps``), 2 one host value for every tensor
    (``step_size_bits``, ``bc2_sqrt_bits``: the usual case, all counters equal)."""
    t, off, mask = _start(owner, start, numels, found_inf, HAS_INF, BLOCK)
    pp = _at(tp, t, ref) + off
    mp = _at(tm, t, ref) + off
    vp = _at(tv, t, ref) + off
    ty = ref.dtype.element_ty
    lr = _f64(lr_bits)
    beta1 = _f64(beta1_bits)
    beta2 = _f64(beta2_bits)
    eps = _f64(eps_bits)
    wd = _f64(wd_bits)
    p = tl.load(pp, mask=mask).to(ACC)
    g = _grad(tg, t, off, mask, ref, grad_scale, ACC, HAS_SCALE, MAXIMIZE)
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
    if STEPS == 1:
        # PyTorch's fused step: the bias corrections from the counter on the device
        s = _device_step(tsteps, t, sref)
        one = tl.full([1], 1.0, tl.float64)     # [1]-shaped bases, as the counter
        step_size = lr / (1.0 - _pow64(one * beta1, s))
        bc2_sqrt = tl.sqrt(1.0 - _pow64(one * beta2, s))
    elif STEPS == 2:
        step_size = _f64(step_size_bits)
        bc2_sqrt = _f64(bc2_sqrt_bits)
    else:
        step_size = tl.load(hp + t)
        bc2_sqrt = tl.load(hp + n + t)
    den = tl.sqrt(den) / bc2_sqrt.to(ACC) + eps.to(ACC)
    p = p - step_size.to(ACC) * m / den
    tl.store(pp, p.to(ty), mask=mask)


@cached
@triton.jit
def _sgd_kernel(ref, tp, tg, tb, numels, start, owner, hp, grad_scale, found_inf,
                ACC: tl.constexpr, HAS_WD: tl.constexpr, HAS_BUF: tl.constexpr,
                FIRST: tl.constexpr, NESTEROV: tl.constexpr, MAXIMIZE: tl.constexpr,
                HAS_SCALE: tl.constexpr, HAS_INF: tl.constexpr, BLOCK: tl.constexpr):
    t, off, mask = _start(owner, start, numels, found_inf, HAS_INF, BLOCK)
    pp = _at(tp, t, ref) + off
    ty = ref.dtype.element_ty
    lr = tl.load(hp)
    momentum = tl.load(hp + 1)
    dampening = tl.load(hp + 2)
    wd = tl.load(hp + 3)
    p = tl.load(pp, mask=mask).to(ACC)
    g = _grad(tg, t, off, mask, ref, grad_scale, ACC, HAS_SCALE, MAXIMIZE)
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


@cached
@triton.jit
def _rmsprop_kernel(ref, tp, tg, tsq, tga, tb, numels, start, owner, hp, grad_scale,
                    found_inf, ACC: tl.constexpr, HAS_WD: tl.constexpr,
                    CENTERED: tl.constexpr, HAS_MOM: tl.constexpr, MAXIMIZE: tl.constexpr,
                    HAS_SCALE: tl.constexpr, HAS_INF: tl.constexpr, BLOCK: tl.constexpr):
    t, off, mask = _start(owner, start, numels, found_inf, HAS_INF, BLOCK)
    pp = _at(tp, t, ref) + off
    sp = _at(tsq, t, ref) + off
    ty = ref.dtype.element_ty
    lr = tl.load(hp).to(ACC)
    alpha = tl.load(hp + 1)
    eps = tl.load(hp + 2).to(ACC)
    wd = tl.load(hp + 3).to(ACC)
    momentum = tl.load(hp + 4).to(ACC)
    one_alpha = (1 - alpha).to(ACC)
    p = tl.load(pp, mask=mask).to(ACC)
    g = _grad(tg, t, off, mask, ref, grad_scale, ACC, HAS_SCALE, MAXIMIZE)
    if HAS_WD:
        g = g + wd * p
    v = alpha.to(ACC) * tl.load(sp, mask=mask).to(ACC) + one_alpha * g * g
    tl.store(sp, v.to(ty), mask=mask)
    if CENTERED:
        ap = _at(tga, t, ref) + off
        a = tl.load(ap, mask=mask).to(ACC)
        a = a + one_alpha * (g - a)
        tl.store(ap, a.to(ty), mask=mask)
        den = tl.sqrt(v - a * a) + eps
    else:
        den = tl.sqrt(v) + eps
    if HAS_MOM:
        bp = _at(tb, t, ref) + off
        b = momentum * tl.load(bp, mask=mask).to(ACC) + g / den
        tl.store(bp, b.to(ty), mask=mask)
        p = p - lr * b
    else:
        p = p - lr * (g / den)
    tl.store(pp, p.to(ty), mask=mask)


@cached
@triton.jit
def _adagrad_kernel(ref, tp, tg, ts, tsteps, sref, numels, start, owner, hp, grad_scale,
                    found_inf, ACC: tl.constexpr, HAS_WD: tl.constexpr,
                    MAXIMIZE: tl.constexpr, HAS_SCALE: tl.constexpr, HAS_INF: tl.constexpr,
                    DEVICE_STEPS: tl.constexpr, BLOCK: tl.constexpr):
    t, off, mask = _start(owner, start, numels, found_inf, HAS_INF, BLOCK)
    pp = _at(tp, t, ref) + off
    sp = _at(ts, t, ref) + off
    ty = ref.dtype.element_ty
    eps = tl.load(hp).to(ACC)
    wd = tl.load(hp + 1).to(ACC)
    if DEVICE_STEPS:
        # hp: eps, weight_decay, lr, lr_decay
        clr = (tl.load(hp + 2) / (1.0 + (_device_step(tsteps, t, sref) - 1.0)
                                 * tl.load(hp + 3))).to(ACC)
    else:
        clr = tl.load(hp + 2 + t).to(ACC)
    p = tl.load(pp, mask=mask).to(ACC)
    g = _grad(tg, t, off, mask, ref, grad_scale, ACC, HAS_SCALE, MAXIMIZE)
    if HAS_WD:
        g = g + wd * p
    s = tl.load(sp, mask=mask).to(ACC) + g * g
    tl.store(sp, s.to(ty), mask=mask)
    tl.store(pp, (p - clr * (g / (tl.sqrt(s) + eps))).to(ty), mask=mask)


def _launch_args(params, hp, grad_scale, found_inf):
    """(hp table, grad_scale, found_inf, HAS_SCALE, HAS_INF): ``hp`` host values go up as
    a float64 table (or ``hp`` is a device tensor the kernel does not read); the table
    stands in for an absent flag tensor (never read then)."""
    dev = params[0].device
    if not isinstance(hp, Tensor):
        hp = _upload(hp, "float64", dev)
    for name, x in (("grad_scale", grad_scale), ("found_inf", found_inf)):
        _check_flag(name, x, dev)
    return (hp, hp if grad_scale is None else grad_scale,
            hp if found_inf is None else found_inf, grad_scale is not None,
            found_inf is not None)


def _check_flag(name, x, dev):
    import framework as fw
    if x is not None and (x.numel() != 1 or x.dtype != fw.float32 or x.device != dev):
        raise RuntimeError(f"fused optimizer step: {name} must be a 1-element float32 "
                           f"tensor on {dev}, got {x.dtype} of shape {tuple(x.shape)} "
                           f"on {x.device}")


def _check_steps(steps, n, dev):
    import framework as fw
    if len(steps) != n or any(s.numel() != 1 or s.dtype != fw.float32 or s.device != dev
                              for s in steps):
        raise RuntimeError("fused optimizer step: steps must be float32 scalar tensors on "
                           f"{dev}, one per param")


def _steps(params, steps):
    """(steps list for the tables, a scalar ref, DEVICE_STEPS): with ``steps`` (the step
    counters as float32 scalar tensors on the params' device) the kernels compute the
    per-tensor step sizes from them, else they read the host's from ``hp``."""
    if steps is None:
        return [], params[0], False
    _check_steps(steps, len(params), params[0].device)
    return steps, steps[0], True


def advance_steps(steps, found_inf=None):
    """step += 1 for every float32 scalar counter of ``steps`` in one launch; with
    ``found_inf`` (a 1-element float32 tensor) += 1 - found_inf, so a step skipped for
    inf/NaN gradients does not count."""
    if not steps:
        return
    dev = steps[0].device
    _check_steps(steps, len(steps), dev)
    _check_flag("found_inf", found_inf, dev)
    tab = _upload([s.data_ptr() for s in steps], "int64", dev)
    nb = 1024
    _advance_kernel[(-(-len(steps) // nb), )](
        tab, steps[0], len(steps), tab if found_inf is None else found_inf,
        HAS_INF=found_inf is not None, BLOCK=nb)


def _empty(params):
    return not params or sum(p.numel() for p in params) == 0


def fused_adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, step_sizes, bc2_sqrts,
               lr, beta1, beta2, eps, weight_decay, decoupled, amsgrad, maximize,
               grad_scale=None, found_inf=None, steps=None):
    """Adam/AdamW over the lists in one launch (see framework/_cpu/optim.py). With
    ``steps`` (counters on the device, already advanced) the bias corrections are computed
    in the kernel and ``step_sizes``/``bc2_sqrts`` are not read: no host sync, and in a
    training loop nothing uploaded (multi_tensor.py keeps the tables)."""
    if _empty(params):
        return
    steps, sref, on_dev = _steps(params, steps)
    (tp, tg, tm, tv, tx, ts), numels, start, owner, grid = _tables(
        params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs if amsgrad else [], steps)
    # one host value for all (the counters of a group advance together): arguments, so a
    # step with counters on the host uploads nothing either
    uniform = not on_dev and len(set(step_sizes)) == 1 and len(set(bc2_sqrts)) == 1
    mode = 1 if on_dev else 2 if uniform else 0
    hp, gs, fi, has_scale, has_inf = _launch_args(
        params, tp if mode else (*step_sizes, *bc2_sqrts), grad_scale, found_inf)
    one = (step_sizes[0], bc2_sqrts[0]) if uniform else (0.0, 0.0)
    _adam_kernel[(grid,)](params[0], tp, tg, tm, tv, tx, ts, sref, numels, start, owner, hp,
                          len(params), gs, fi, *_bits(lr, beta1, beta2, eps, weight_decay, *one),
                          ACC=_acc(params[0]), HAS_WD=weight_decay != 0,
                          DECOUPLED=bool(decoupled), AMSGRAD=bool(amsgrad),
                          MAXIMIZE=bool(maximize), HAS_SCALE=has_scale, HAS_INF=has_inf,
                          STEPS=mode, BLOCK=BLOCK)


def fused_sgd(params, grads, bufs, lr, momentum, dampening, weight_decay, nesterov, maximize,
              first, grad_scale=None, found_inf=None):
    """SGD over the lists in one launch (see framework/_cpu/optim.py)."""
    if _empty(params):
        return
    (tp, tg, tb), numels, start, owner, grid = _tables(
        params, grads, bufs if momentum != 0 else [])
    hp, gs, fi, has_scale, has_inf = _launch_args(
        params, (lr, momentum, dampening, weight_decay), grad_scale, found_inf)
    _sgd_kernel[(grid,)](params[0], tp, tg, tb, numels, start, owner, hp, gs, fi,
                         ACC=_acc(params[0]), HAS_WD=weight_decay != 0,
                         HAS_BUF=momentum != 0, FIRST=bool(first),
                         NESTEROV=bool(nesterov), MAXIMIZE=bool(maximize),
                         HAS_SCALE=has_scale, HAS_INF=has_inf, BLOCK=BLOCK)


def fused_rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffers, lr, alpha, eps,
                  weight_decay, momentum, centered, maximize, grad_scale=None,
                  found_inf=None):
    """RMSprop over the lists in one launch (see framework/_cpu/optim.py)."""
    if _empty(params):
        return
    (tp, tg, tsq, tga, tb), numels, start, owner, grid = _tables(
        params, grads, square_avgs, grad_avgs if centered else [],
        momentum_buffers if momentum > 0 else [])
    hp, gs, fi, has_scale, has_inf = _launch_args(
        params, (lr, alpha, eps, weight_decay, momentum), grad_scale, found_inf)
    _rmsprop_kernel[(grid,)](params[0], tp, tg, tsq, tga, tb, numels, start, owner, hp, gs,
                             fi, ACC=_acc(params[0]), HAS_WD=weight_decay != 0,
                             CENTERED=bool(centered), HAS_MOM=momentum > 0,
                             MAXIMIZE=bool(maximize), HAS_SCALE=has_scale,
                             HAS_INF=has_inf, BLOCK=BLOCK)


def fused_adagrad(params, grads, state_sums, clrs, eps, weight_decay, maximize,
                  grad_scale=None, found_inf=None, steps=None, lr=None, lr_decay=None):
    """Adagrad over the lists in one launch (see framework/_cpu/optim.py). With ``steps``
    (counters on the device, already advanced), ``lr`` and ``lr_decay`` the kernel computes
    each tensor's learning rate and ``clrs`` is not read."""
    if _empty(params):
        return
    steps, sref, on_dev = _steps(params, steps)
    (tp, tg, ts, tst), numels, start, owner, grid = _tables(params, grads, state_sums, steps)
    per_tensor = (lr, lr_decay) if on_dev else tuple(clrs)
    hp, gs, fi, has_scale, has_inf = _launch_args(
        params, (eps, weight_decay, *per_tensor), grad_scale, found_inf)
    _adagrad_kernel[(grid,)](params[0], tp, tg, ts, tst, sref, numels, start, owner, hp, gs,
                             fi, ACC=_acc(params[0]), HAS_WD=weight_decay != 0,
                             MAXIMIZE=bool(maximize), HAS_SCALE=has_scale,
                             HAS_INF=has_inf, DEVICE_STEPS=on_dev, BLOCK=BLOCK)
