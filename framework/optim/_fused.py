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
import ctypes

import framework as _fw
from framework._ops.alloc import backend
from framework._tensor import ROW_MAJOR_STRIDES as _ROW_MAJOR, Tensor

from .optimizer import _check_fused_param, _to_scalar


def _parts(rows):
    """rows (tuples whose first item is the param) grouped by (device, dtype)."""
    parts = {}
    for r in rows:
        p = r[0]
        parts.setdefault((p._storage.device, p.dtype), []).append(r)
    return parts.values()


def _run(rows, call):
    """Calls ``call(part)`` for each (device, dtype) part of ``rows`` (tuples of tensors
    updated in place, None, or plain values), with contiguous stand-ins of the strided
    tensors, copied back into them after the call. A complex param and its grad and state
    are updated as their real views (PyTorch's ``view_as_real``): the real and imaginary
    parts each have their own moments, as two real params would."""
    if any(r[0].dtype.is_complex for r in rows):
        rows = [tuple(_real_view(t) for t in r) for r in rows]
    for part in _parts(rows):
        # is_contiguous only where the strides are not the shape's row-major ones: the
        # usual part has nothing strided, and is passed as it is
        strided = [(i, j) for i, r in enumerate(part) for j, t in enumerate(r)
                   if isinstance(t, Tensor) and t._stride != _ROW_MAJOR.get(t._shape)
                   and not t.is_contiguous()]
        if not strided:
            call(part)
            continue
        dense = [list(r) for r in part]
        for i, j in strided:
            dense[i][j] = part[i][j].contiguous()
        call([tuple(r) for r in dense])
        for i, j in strided:
            part[i][j].copy_(dense[i][j])


def _real_view(t):
    return _fw.view_as_real(t) if isinstance(t, Tensor) and t.dtype.is_complex else t


_SCALARS = {"float32": ctypes.c_float, "float64": ctypes.c_double}


def _advance_on_host(steps):
    """step += 1 for each 0-d float cpu counter of ``steps``, in host memory; returns the
    new counts, or None (nothing touched) if a counter is of another kind. The foreach
    steps keep their counters on the cpu, as PyTorch's do, and one dispatched ``+= 1`` and
    ``item()`` per param cost more host time than the whole GPU update."""
    cells = []
    for s in steps:
        c = _SCALARS.get(s.dtype.name)
        if c is None or s._shape != () or s.device.type != "cpu":
            return None
        cells.append(c.from_address(s._storage.ptr + s._offset * s.dtype.itemsize))
    for s, cell in zip(steps, cells):
        cell.value += 1
        s._storage.version += 1  # an in-place update, as ``s += 1`` would count it
    return [cell.value for cell in cells]


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

    def advance(self, steps, device):
        """step += 1 for each counter of a part on ``device`` (a step skipped for found_inf
        does not count). Returns the new counts as floats, or None when the counters live
        on the params' GPU: one launch advances them there and the kernels read them, so
        the step needs no host sync (PyTorch's fused contract)."""
        if not steps:
            return []
        sdev = steps[0].device
        on_gpu = sdev.type != "cpu" and sdev == device and all(
            s.device == sdev and s.dtype == _fw.float32 for s in steps)
        if not on_gpu:
            if self.inf is None:
                counts = _advance_on_host(steps)
                if counts is not None:
                    return counts
            # the advanced counts, read before a skipped step (found_inf) takes them back:
            # its sizes are never used, but a first step's count of 0 would divide by zero
            counts = [s.item() + 1 for s in steps]
            backend(_fw.device("cpu")).optim.advance_steps(steps, self.inf)
            return counts
        backend(sdev).optim.advance_steps(steps, self._on(self.inf, sdev))
        return None


def _ops(part):
    return backend(part[0][0].device).optim


def adam(opt, group):
    """One fused Adam/AdamW step over ``group`` (``opt`` is the Adam optimizer)."""
    lr = _to_scalar(group["lr"])
    beta1, beta2 = (_to_scalar(b) for b in group["betas"])
    amsgrad = group["amsgrad"]
    amp = _Amp(opt, group)
    rows = []
    for p in group["params"]:
        if p.grad is None:
            continue
        state = opt._init_state(p, group)
        # rows: param, exp_avg, exp_avg_sq, max_exp_avg_sq, grad (unscaled in place with a
        # grad_scale), step counter
        rows.append((p, state["exp_avg"], state["exp_avg_sq"],
                     state["max_exp_avg_sq"] if amsgrad else None, p.grad, state["step"]))

    def call(part):
        dev = part[0][0].device
        counts = amp.advance(_col(part, 5), dev)
        if counts is None:       # counters on the GPU: the kernel computes the corrections
            sizes, bc2, extra = [], [], {"steps": _col(part, 5)}
        else:
            sizes = [lr / (1 - beta1 ** s) for s in counts]
            bc2 = [(1 - beta2 ** s) ** 0.5 for s in counts]
            extra = {}
        _ops(part).fused_adam(
            _col(part, 0), _col(part, 4), _col(part, 1), _col(part, 2),
            _col(part, 3) if amsgrad else [], sizes, bc2, lr, beta1, beta2, group["eps"],
            _to_scalar(group["weight_decay"]), group["decoupled_weight_decay"], amsgrad,
            group["maximize"], **amp.kwargs(dev), **extra)
    _run(rows, call)


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
    rows = []
    for p in group["params"]:
        if p.grad is None:
            continue
        state = opt._init_state(p, group)
        # rows: param, square_avg, grad_avg, momentum_buffer, grad, step counter
        rows.append((p, state["square_avg"], state["grad_avg"] if centered else None,
                     state["momentum_buffer"] if momentum > 0 else None, p.grad,
                     state["step"]))

    def call(part):
        dev = part[0][0].device
        amp.advance(_col(part, 5), dev)
        _ops(part).fused_rmsprop(
            _col(part, 0), _col(part, 4), _col(part, 1), _col(part, 2), _col(part, 3),
            _to_scalar(group["lr"]), group["alpha"], group["eps"],
            _to_scalar(group["weight_decay"]), momentum, centered, group["maximize"],
            **amp.kwargs(dev))
    _run(rows, call)


def adagrad(opt, group):
    """One fused Adagrad step over ``group`` (``opt`` is the Adagrad optimizer)."""
    lr = _to_scalar(group["lr"])
    lr_decay = group["lr_decay"]
    amp = _Amp(opt, group)
    rows = []
    for p in group["params"]:
        if p.grad is None:
            continue
        # rows: param, sum, grad, step counter
        rows.append((p, opt.state[p]["sum"], p.grad, opt.state[p]["step"]))

    def call(part):
        dev = part[0][0].device
        counts = amp.advance(_col(part, 3), dev)
        if counts is None:       # counters on the GPU: the kernel computes the rates
            clrs, extra = [], {"steps": _col(part, 3), "lr": lr, "lr_decay": lr_decay}
        else:
            clrs, extra = [lr / (1 + (s - 1) * lr_decay) for s in counts], {}
        _ops(part).fused_adagrad(
            _col(part, 0), _col(part, 2), _col(part, 1), clrs, group["eps"],
            _to_scalar(group["weight_decay"]), group["maximize"], **amp.kwargs(dev),
            **extra)
    _run(rows, call)
