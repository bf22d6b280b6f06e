"""Adagrad with learning-rate decay (PyTorch's ``torch.optim.Adagrad``)."""
import framework as _fw
from framework._tensor import Tensor

from . import _fused
from .optimizer import Optimizer, _check_fused_param, _check_nonneg, _multi_tensor, _to_scalar
from .optimizer import _has_sparse_grad, _real_views

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad: s += g^2; p -= lr / (1 + (t - 1) lr_decay) * g / (sqrt(s) + eps).
    State (created for every parameter at construction): ``step``, ``sum``.
    ``fused=True`` and ``foreach=True`` run one multi-tensor call per device and dtype
    (_fused.py); the fused step takes GradScaler's grad_scale and found_inf. A sparse COO
    gradient updates only its rows (no weight decay with it, as in PyTorch)."""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0,
                 initial_accumulator_value=0, eps=1e-10, foreach=None, *, maximize=False,
                 differentiable=False, fused=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        _check_nonneg(lr_decay=lr_decay, weight_decay=weight_decay)
        if not 0.0 <= initial_accumulator_value:
            raise ValueError("Invalid initial_accumulator_value value: "
                             f"{initial_accumulator_value}")
        _check_nonneg(epsilon=eps)
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps,
                    "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value,
                    "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)
        self._check_fused_foreach(defaults)
        if fused:
            # GradScaler then hands the step grad_scale and found_inf (fused kernels only)
            self._step_supports_amp_scaling = True
        for group in self.param_groups:
            for p in group["params"]:
                if group["fused"]:
                    _check_fused_param(p)
                state = self.state[p]
                state["step"] = self._new_step(p, group)
                state["sum"] = _fw.full_like(p, group["initial_accumulator_value"])

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("fused", None)
            for p in group["params"]:
                st = self.state.get(p, {})
                if "step" in st and not isinstance(st["step"], Tensor):
                    step = self._new_step(p, group)
                    step.fill_(float(st["step"]))
                    st["step"] = step

    def step(self, closure=None):
        """One Adagrad step; returns the closure's loss (or None)."""
        loss = self._eval_closure(closure)
        with _fw.no_grad():
            for group in self.param_groups:
                sparse = _has_sparse_grad(group)
                if sparse and group["fused"]:
                    raise RuntimeError("`fused` does not support sparse grad or complex param")
                if not sparse and _multi_tensor(group):
                    _fused.adagrad(self, group)  # one multi-tensor call per device and dtype
                else:
                    self._single_tensor_adagrad(group)
        return loss

    def _single_tensor_adagrad(self, group):
        lr = _to_scalar(group["lr"])
        lr_decay, eps, wd = group["lr_decay"], group["eps"], group["weight_decay"]
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self.state[p]
            grad = p.grad if not group["maximize"] else -p.grad
            state["step"] += 1
            step = state["step"].item()
            if wd != 0:
                if grad.is_sparse:
                    raise RuntimeError("weight_decay option is not compatible with sparse "
                                       "gradients")
                grad = grad.add(p, alpha=wd)
            clr = lr / (1 + (step - 1) * lr_decay)
            state_sum = state["sum"]
            if grad.is_sparse:
                # the update is not linear in the gradient: each row must appear once
                grad = grad.coalesce()
                rows, values = tuple(grad._indices().unbind(0)), grad._values()
                if values.numel():
                    state_sum.index_put_(rows, values.pow(2), accumulate=True)
                    std = state_sum[rows].sqrt_().add_(eps)
                    p.index_put_(rows, values / std * -clr, accumulate=True)
                continue
            p, grad, state_sum = _real_views(p, grad, state_sum)
            state_sum.addcmul_(grad, grad, value=1)
            std = state_sum.sqrt().add_(eps)
            p.addcdiv_(grad, std, value=-clr)

