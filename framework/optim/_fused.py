"""Multi-tensor (fused) Adam/AdamW and SGD steps: the params of a group are split by
(device, dtype) and each part is updated in ONE backend call, ``backend(device).optim``
(native/optim.cpp on the cpu: one threaded loop over all tensors; framework/kernels/optim.py
on cuda: one Triton launch over tables of addresses). Used for ``fused=True`` and
``foreach=True``; the single-tensor updates in adam.py and sgd.py stay the reference."""
import framework as _fw
from framework._ops.alloc import backend
from framework._tensor import Tensor

from .optimizer import _check_fused_param, _to_scalar


def _dense(t):
    """t itself when contiguous, else a contiguous copy."""
    return t if t.is_contiguous() else t.contiguous()


def _parts(rows):
    """rows (tuples whose first item is the param) grouped by (device, dtype)."""
    parts = {}
    for r in rows:
        parts.setdefault((str(r[0].device), r[0].dtype), []).append(r)
    return parts.values()


def _run(rows, call):
    """Calls ``call(part)`` for each (device, dtype) part of ``rows`` (tuples of tensors
    updated in place, None, or plain values), with contiguous stand-ins of the tensors, and
    copies the stand-ins back into the non-contiguous ones."""
    for part in _parts(rows):
        dense = [tuple(_dense(t) if isinstance(t, Tensor) else t for t in r) for r in part]
        call(dense)
        for r, d in zip(part, dense):
            for t, c in zip(r, d):
                if isinstance(t, Tensor) and c is not t:
                    t.copy_(c)


def _col(part, i):
    return [r[i] for r in part]


def adam(opt, group):
    """One fused Adam/AdamW step over ``group`` (``opt`` is the Adam optimizer)."""
    lr = _to_scalar(group["lr"])
    beta1, beta2 = (_to_scalar(b) for b in group["betas"])
    amsgrad = group["amsgrad"]
    rows = []
    for p in group["params"]:
        if p.grad is None:
            continue
        state = opt._init_state(p, group)
        state["step"] += 1
        step = state["step"].item()
        # rows: param, exp_avg, exp_avg_sq, max_exp_avg_sq, grad (only read), step size,
        # sqrt of the second bias correction
        rows.append((p, state["exp_avg"], state["exp_avg_sq"],
                     state["max_exp_avg_sq"] if amsgrad else None, p.grad,
                     lr / (1 - beta1 ** step), (1 - beta2 ** step) ** 0.5))
    _run(rows, lambda part: backend(part[0][0].device).optim.fused_adam(
        _col(part, 0), _col(part, 4), _col(part, 1), _col(part, 2),
        _col(part, 3) if amsgrad else [], _col(part, 5), _col(part, 6), lr, beta1, beta2,
        group["eps"], _to_scalar(group["weight_decay"]), group["decoupled_weight_decay"],
        amsgrad, group["maximize"]))


def sgd(opt, group):
    """One fused SGD step over ``group`` (``opt`` is the SGD optimizer)."""
    lr = _to_scalar(group["lr"])
    wd = _to_scalar(group["weight_decay"])
    momentum, dampening = group["momentum"], group["dampening"]
    first_rows, rows = [], []
    for p in group["params"]:
        if p.grad is None:
            continue
        if group["fused"]:
            _check_fused_param(p)
        buf = None
        first = False
        if momentum != 0:
            state = opt.state[p]
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = _fw.empty_like(p)
                state["momentum_buffer"] = buf
                first = True
        (first_rows if first else rows).append((p, buf, p.grad))
    for first, rs in ((True, first_rows), (False, rows)):
        _run(rs, lambda part, first=first: backend(part[0][0].device).optim.fused_sgd(
            _col(part, 0), _col(part, 2), _col(part, 1), lr, momentum,
            dampening, wd, group["nesterov"], group["maximize"], first))
