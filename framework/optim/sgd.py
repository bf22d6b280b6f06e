"""Stochastic gradient descent with momentum, dampening, Nesterov and weight decay
(PyTorch's ``torch.optim.SGD``)."""
import framework as _fw
from framework._tensor import Tensor

from . import _fused
from .optimizer import Optimizer, _check_fused_param, _multi_tensor, _to_scalar
from .optimizer import _add_sparse_, _has_sparse_grad

__all__ = ["SGD"]


class SGD(Optimizer):
    """SGD: buf = momentum * buf + (1 - dampening) * g; p -= lr * (g + momentum * buf
    if nesterov else buf). State: ``momentum_buffer`` (only when momentum != 0).
    A sparse COO gradient updates only its rows (its momentum buffer is sparse too)."""

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False,
                 fused=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening,
                    "weight_decay": weight_decay, "nesterov": nesterov,
                    "maximize": maximize, "foreach": foreach,
                    "differentiable": differentiable, "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        self._check_fused_foreach(defaults)
        if fused:
            # GradScaler then hands the step grad_scale and found_inf (fused kernels only)
            self._step_supports_amp_scaling = True

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)
            group.setdefault("fused", False)

    def step(self, closure=None):
        """One SGD step; returns the closure's loss (or None)."""
        loss = self._eval_closure(closure)
        with _fw.no_grad():
            for group in self.param_groups:
                sparse = _has_sparse_grad(group)
                if sparse and group["fused"]:
                    raise RuntimeError("`_fused_sgd` does not support sparse gradients")
                if not sparse and _multi_tensor(group):
                    _fused.sgd(self, group)  # one multi-tensor call per device and dtype
                else:
                    self._single_tensor_sgd(group)
        return loss

    def _single_tensor_sgd(self, group):
        lr = _to_scalar(group["lr"])
        wd = _to_scalar(group["weight_decay"])
        momentum = group["momentum"]
        dampening = group["dampening"]
        for p in group["params"]:
            if p.grad is None:
                continue
            if group["fused"]:
                _check_fused_param(p)
            grad = p.grad if not group["maximize"] else -p.grad
            if wd != 0:
                grad = grad.add(p, alpha=wd)
            if momentum != 0:
                state = self.state[p]
                buf = state.get("momentum_buffer")
                if grad.is_sparse:
                    # a coalesced buffer stays coalesced when coalesced gradients add in
                    grad = grad.coalesce()
                if buf is None:
                    buf = grad.clone().detach()
                    state["momentum_buffer"] = buf
                else:
                    buf.mul_(momentum).add_(grad, alpha=1 - dampening)
                grad = grad.add(buf, alpha=momentum) if group["nesterov"] else buf
            if grad.is_sparse:
                _add_sparse_(p, grad, -lr)
            else:
                p.add_(grad, alpha=-lr)
