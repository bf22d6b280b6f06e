"""NAdam (PyTorch's ``torch.optim.NAdam``): Adam with Nesterov momentum."""
import framework as _fw
from .optimizer import Optimizer, _check_betas, _check_lr, _check_nonneg, _scalar_dtype, _to_scalar
from .optimizer import _real_views, _refuse_sparse_grads

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """NAdam. State: ``step``, ``mu_product``, ``exp_avg``, ``exp_avg_sq``."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        _check_lr(lr)
        _check_nonneg(epsilon=eps)
        _check_betas(betas)
        _check_nonneg(weight_decay=weight_decay, momentum_decay=momentum_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize,
                        foreach=foreach, capturable=capturable,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    @_fw.no_grad()
    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns closure's loss."""
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            _refuse_sparse_grads(group, "NAdam does not support sparse gradients")
            lr = _to_scalar(group["lr"])
            beta1, beta2 = group["betas"]
            eps, wd, md = group["eps"], group["weight_decay"], group["momentum_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _fw.zeros((), dtype=_scalar_dtype())
                    state["mu_product"] = _fw.ones((), dtype=_scalar_dtype())
                    state["exp_avg"] = _fw.zeros_like(p)
                    state["exp_avg_sq"] = _fw.zeros_like(p)
                grad = p.grad if not group["maximize"] else -p.grad
                p, grad, exp_avg, exp_avg_sq = _real_views(p, grad, state["exp_avg"],
                                                           state["exp_avg_sq"])
                step = state["step"].add_(1).item()
                bias_correction2 = 1 - beta2 ** step
                if wd != 0:
                    if group["decoupled_weight_decay"]:
                        p.mul_(1 - lr * wd)
                    else:
                        grad = grad.add(p, alpha=wd)
                mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * md))
                mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * md))
                # mu_product is kept in its own (scalar) dtype, as torch does
                mu_product = state["mu_product"].mul_(mu).item()
                exp_avg.lerp_(grad, 1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                denom = exp_avg_sq.div(bias_correction2).sqrt().add_(eps)
                mu_product_next = mu_product * mu_next
                p.addcdiv_(grad, denom, value=-lr * (1.0 - mu) / (1.0 - mu_product))
                p.addcdiv_(exp_avg, denom, value=(-lr * mu_next) / (1.0 - mu_product_next))
        return loss
