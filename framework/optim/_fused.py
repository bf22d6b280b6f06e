"""Multi-tensor (fused) Adam/AdamW, SGD, RMSprop and Adagrad steps: the params of a group
are split by (device, dtype) and each part is updated in ONE backend call,
``backend(device).optim`` (native/optim.cpp on the cpu: one threaded loop over all
tensors; framework/kernels/optim.py on cuda: one Triton launch over tables of addresses).
Used for ``fused=True`` and ``foreach=True``; the single-tensor updates in the optimizer
files stay the reference.

With ``fused=True`` the steps take GradScaler's ``opt.grad_scale`` and ``opt.found_inf``
(PyTorch's contract for optimizers with ``_step_supports_amp_scaling``): the kernels divide
the gradients by grad_scale (writing them back unscaled) and skip the update when found_inf
is 1; the step counters are incremented, then found_inf is subtracted from them, all on the
device (no host sync for the flag)."""
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


class _Amp:
    """GradScaler's grad_scale and found_inf of a fused step (None otherwise), moved once
    to each device they are needed on."""

    def __init__(self, opt, group):
        fused = group.get("fused")
        self.scale = getattr(opt, "grad_scale", None) if fused else None
        self.inf = getattr(opt, "found_inf", None) if fused else None
        self._cache = {}

    def _on(self, t, device):
        if t is None:
            return None
        key = (id(t), str(device))
        if key not in self._cache:
            self._cache[key] = t.to(device=device, dtype=_fw.float32).reshape(1)
        return self._cache[key]

    def kwargs(self, device):
        """The backend's grad_scale= and found_inf= for params on ``device``."""
        return {"grad_scale": self._on(self.scale, device),
                "found_inf": self._on(self.inf, device)}

    def undo_steps(self, steps):
        """step -= found_inf for each step counter: the skipped step does not count."""
        if self.inf is None:
            return
        for s in steps:
            s.sub_(self._on(self.inf, s.device).reshape(()).to(s.dtype))


def _ops(part):
    return backend(part[0][0].device).optim


def adam(opt, group):
    """One fused Adam/AdamW step over ``group`` (``opt`` is the Adam optimizer)."""
    lr = _to_scalar(group["lr"])
    beta1, beta2 = (_to_scalar(b) for b in group["betas"])
    amsgrad = group["amsgrad"]
    amp = _Amp(opt, group)
    rows, steps = [], []
    for p in group["params"]:
        if p.grad is None:
            continue
        state = opt._init_state(p, group)
        state["step"] += 1
        steps.append(state["step"])
        step = state["step"].item()
        # rows: param, exp_avg, exp_avg_sq, max_exp_avg_sq, grad (unscaled in place with a
        # grad_scale), step size, sqrt of the second bias correction
        rows.append((p, state["exp_avg"], state["exp_avg_sq"],
                     state["max_exp_avg_sq"] if amsgrad else None, p.grad,
                     lr / (1 - beta1 ** step), (1 - beta2 ** step) ** 0.5))
    _run(rows, lambda part: _ops(part).fused_adam(
        _col(part, 0), _col(part, 4), _col(part, 1), _col(part, 2),
        _col(part, 3) if amsgrad else [], _col(part, 5), _col(part, 6), lr, beta1, beta2,
        group["eps"], _to_scalar(group["weight_decay"]), group["decoupled_weight_decay"],
        amsgrad, group["maximize"], **amp.kwargs(part[0][0].device)))
    amp.undo_steps(steps)


def sgd(opt, group):
    """One fused SGD step over ``group`` (``opt`` is the SGD optimizer)."""
    lr = _to_scalar(group["lr"])
    wd = _to_scalar(group["weight_decay"])
    momentum, dampening = group["momentum"], group["dampening"]
    amp = _Amp(opt, group)
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
                # zeros, not empty: a first step skipped for found_inf leaves it as is
                buf = _fw.zeros_like(p) if amp.inf is not None else _fw.empty_like(p)
                state["momentum_buffer"] = buf
                first = True
        (first_rows if first else rows).append((p, buf, p.grad))
    for first, rs in ((True, first_rows), (False, rows)):
        _run(rs, lambda part, first=first: _ops(part).fused_sgd(
            _col(part, 0), _col(part, 2), _col(part, 1), lr, momentum,
            dampening, wd, group["nesterov"], group["maximize"], first,
            **amp.kwargs(part[0][0].device)))


def rmsprop(opt, group):
    """One fused RMSprop step over ``group`` (``opt`` is the RMSprop optimizer)."""
    centered, momentum = group["centered"], group["momentum"]
    amp = _Amp(opt, group)
    rows, steps = [], []
    for p in group["params"]:
        if p.grad is None:
            continue
        state = opt._init_state(p, group)
        state["step"] += 1
        steps.append(state["step"])
        # rows: param, square_avg, grad_avg, momentum_buffer, grad
        rows.append((p, state["square_avg"], state["grad_avg"] if centered else None,
                     state["momentum_buffer"] if momentum > 0 else None, p.grad))
    _run(rows, lambda part: _ops(part).fused_rmsprop(
        _col(part, 0), _col(part, 4), _col(part, 1), _col(part, 2), _col(part, 3),
        _to_scalar(group["lr"]), group["alpha"], group["eps"],
        _to_scalar(group["weight_decay"]), momentum, centered, group["maximize"],
        **amp.kwargs(part[0][0].device)))
    amp.undo_steps(steps)


def adagrad(opt, group):
    """One fused Adagrad step over ``group`` (``opt`` is the Adagrad optimizer)."""
    lr = _to_scalar(group["lr"])
    lr_decay = group["lr_decay"]
    amp = _Amp(opt, group)
    rows, steps = [], []
    for p in group["params"]:
        if p.grad is None:
            continue
        state = opt.state[p]
        state["step"] += 1
        steps.append(state["step"])
        step = state["step"].item()
        # rows: param, sum, grad, the step's learning rate
        rows.append((p, state["sum"], p.grad, lr / (1 + (step - 1) * lr_decay)))
    _run(rows, lambda part: _ops(part).fused_adagrad(
        _col(part, 0), _col(part, 2), _col(part, 1), _col(part, 3), group["eps"],
        _to_scalar(group["weight_decay"]), group["maximize"],
        **amp.kwargs(part[0][0].device)))
    amp.undo_steps(steps)
