"""Adadelta (PyTorch's ``torch.optim.Adadelta``)."""
import framework as _fw
from .optimizer import Optimizer, _check_lr, _check_nonneg, _scalar_dtype, _to_scalar
from .optimizer import _real_views, _refuse_sparse_grads

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Adadelta: per-element step sizes from running averages of squared gradients and
    squared updates. State: ``step``, ``square_avg``, ``acc_delta``."""

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None,
                 *, capturable=False, maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        _check_nonneg(epsilon=eps, weight_decay=weight_decay)
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay,
                        maximize=maximize, capturable=capturable, foreach=foreach,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    @_fw.no_grad()
    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns closure's loss."""
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            _refuse_sparse_grads(group, "Adadelta does not support sparse gradients")
            lr = _to_scalar(group["lr"])
            rho, eps, wd = group["rho"], group["eps"], group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _fw.zeros((), dtype=_scalar_dtype())
                    state["square_avg"] = _fw.zeros_like(p)
                    state["acc_delta"] = _fw.zeros_like(p)
                grad = p.grad if not group["maximize"] else -p.grad
                state["step"].add_(1)
                if wd != 0:
                    grad = grad.add(p, alpha=wd)
                p, grad, square_avg, acc_delta = _real_views(p, grad, state["square_avg"],
                                                             state["acc_delta"])
                square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
                std = square_avg.add(eps).sqrt_()
                delta = acc_delta.add(eps).sqrt_().div_(std).mul_(grad)
                acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
                p.add_(delta, alpha=-lr)
        return loss
