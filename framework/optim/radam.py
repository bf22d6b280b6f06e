"""RAdam (PyTorch's ``torch.optim.RAdam``): Adam with a rectified adaptive step."""
import framework as _fw
from .optimizer import Optimizer, _check_betas, _check_lr, _check_nonneg, _scalar_dtype, _to_scalar
from .optimizer import _refuse_sparse_grads

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """RAdam. State: ``step``, ``exp_avg``, ``exp_avg_sq``."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        _check_lr(lr)
        _check_nonneg(epsilon=eps)
        _check_betas(betas)
        _check_nonneg(weight_decay=weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    @_fw.no_grad()
    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns closure's loss."""
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            _refuse_sparse_grads(group, "RAdam does not support sparse gradients")
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
                    state["exp_avg_sq"] = _fw.zeros_like(p)
                grad = p.grad if not group["maximize"] else -p.grad
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                step = state["step"].add_(1).item()
                if wd != 0:
                    if group["decoupled_weight_decay"]:
                        p.mul_(1 - lr * wd)
                    else:
                        grad = grad.add(p, alpha=wd)
                exp_avg.lerp_(grad, 1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                bias_correction1 = 1 - beta1 ** step
                bias_correction2 = 1 - beta2 ** step
                corrected = exp_avg / bias_correction1
                rho_inf = 2 / (1 - beta2) - 1
                rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
                if rho_t > 5.0:
                    rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                            / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                    # scalar / tensor as torch computes it: reciprocal, then scale
                    adaptive = exp_avg_sq.sqrt().add_(eps).reciprocal() * bias_correction2 ** 0.5
                    p.add_(corrected * lr * adaptive * rect, alpha=-1.0)
                else:
                    p.add_(corrected * lr, alpha=-1.0)
        return loss
