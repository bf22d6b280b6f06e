"""Adamax (PyTorch's ``torch.optim.Adamax``): Adam with the infinity norm."""
import framework as _fw
from .optimizer import Optimizer, _check_betas, _check_lr, _check_nonneg, _scalar_dtype, _to_scalar
from .optimizer import _real_views, _refuse_sparse_grads

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """Adamax. State: ``step``, ``exp_avg``, ``exp_inf``."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        _check_lr(lr)
        _check_nonneg(epsilon=eps)
        _check_betas(betas)
        _check_nonneg(weight_decay=weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)

    @_fw.no_grad()
    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns closure's loss."""
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            _refuse_sparse_grads(group, "Adamax does not support sparse gradients")
            lr = _to_scalar(group["lr"])
            beta1, beta2 = group["betas"]
            eps, wd = group["eps"], group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _fw.zeros((), dtype=_scalar_dtype())
                    state["exp_avg"] = _fw.zeros_like(p)
                    state["exp_inf"] = _fw.zeros_like(p)
                grad = p.grad if not group["maximize"] else -p.grad
                state["step"].add_(1)
                if wd != 0:
                    grad = grad.add(p, alpha=wd)
                p, grad, exp_avg, exp_inf = _real_views(p, grad, state["exp_avg"],
                                                        state["exp_inf"])
                exp_avg.lerp_(grad, 1 - beta1)
                _fw.maximum(exp_inf.mul_(beta2), grad.abs().add_(eps), out=exp_inf)
                clr = lr / (1 - beta1 ** state["step"].item())
                p.addcdiv_(exp_avg, exp_inf, value=-clr)
        return loss
