"""RMSprop with momentum and the centered variant (PyTorch's ``torch.optim.RMSprop``)."""
import framework as _fw
from framework._tensor import Tensor

from . import _fused
from .optimizer import (Optimizer, _check_fused_param, _check_lr, _check_nonneg, _multi_tensor,
                        _to_scalar)
from .optimizer import _real_views, _refuse_sparse_grads

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop: v = alpha v + (1 - alpha) g^2; avg = sqrt(v - g_avg^2 if centered else v)
    + eps; p -= lr * g / avg (through a momentum buffer when momentum > 0).
    State: ``step``, ``square_avg`` (+ ``momentum_buffer``, ``grad_avg``).

    ``fused=True`` and ``foreach=True`` run one multi-tensor call per device and dtype
    (_fused.py). ``fused`` is an extension (PyTorch's RMSprop has none); it is stored in
    the param groups only when given, and makes the step take GradScaler's grad_scale and
    found_inf as PyTorch's fused optimizers do."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False, fused=None):
        _check_lr(lr)
        _check_nonneg(epsilon=eps, momentum=momentum, weight_decay=weight_decay, alpha=alpha)
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                    "centered": centered, "weight_decay": weight_decay,
                    "capturable": capturable, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable}
        if fused is not None:
            defaults["fused"] = fused
        super().__init__(params, defaults)
        self._check_fused_foreach(defaults)
        if fused:
            # GradScaler then hands the step grad_scale and found_inf (fused kernels only)
            self._step_supports_amp_scaling = True

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("momentum", 0)
            group.setdefault("centered", False)
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("capturable", False)
            for p in group["params"]:
                st = self.state.get(p, {})
                if len(st) != 0 and not isinstance(st["step"], Tensor):
                    step = self._new_step(p, group)
                    step.fill_(float(st["step"]))
                    st["step"] = step

    def _init_state(self, p, group):
        state = self.state[p]
        if len(state) == 0:
            if group.get("fused"):
                _check_fused_param(p)
            state["step"] = self._new_step(p, group)
            state["square_avg"] = _fw.zeros_like(p)
            if group["momentum"] > 0:
                state["momentum_buffer"] = _fw.zeros_like(p)
            if group["centered"]:
                state["grad_avg"] = _fw.zeros_like(p)
        return state

    def step(self, closure=None):
        """One RMSprop step; returns the closure's loss (or None)."""
        loss = self._eval_closure(closure)
        with _fw.no_grad():
            for group in self.param_groups:
                _refuse_sparse_grads(group, "RMSprop does not support sparse gradients")
                if _multi_tensor(group):
                    _fused.rmsprop(self, group)  # one multi-tensor call per device and dtype
                else:
                    self._single_tensor_rmsprop(group)
        return loss

    def _single_tensor_rmsprop(self, group):
        lr = _to_scalar(group["lr"])
        alpha, eps, momentum = group["alpha"], group["eps"], group["momentum"]
        wd = group["weight_decay"]
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self._init_state(p, group)
            grad = p.grad if not group["maximize"] else -p.grad
            p, grad, square_avg, grad_avg, buf = _real_views(
                p, grad, state["square_avg"], state.get("grad_avg"), state.get("momentum_buffer"))
            state["step"] += 1
            if wd != 0:
                grad = grad.add(p, alpha=wd)
            square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
            if group["centered"]:
                grad_avg.lerp_(grad, 1 - alpha)
                avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
            else:
                avg = square_avg.sqrt()
            avg = avg.add_(eps)
            if momentum > 0:
                buf.mul_(momentum).addcdiv_(grad, avg)
                p.add_(buf, alpha=-lr)
            else:
                p.addcdiv_(grad, avg, value=-lr)
