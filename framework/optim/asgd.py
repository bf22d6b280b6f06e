"""ASGD (PyTorch's ``torch.optim.ASGD``): averaged stochastic gradient descent."""
import framework as _fw
from .optimizer import Optimizer, _check_lr, _check_nonneg, _scalar_dtype, _to_scalar
from .optimizer import _refuse_sparse_grads

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """ASGD. State: ``step``, ``eta`` (current step size), ``mu`` (averaging
    coefficient), ``ax`` (the averaged parameter)."""

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        _check_lr(lr)
        _check_nonneg(weight_decay=weight_decay)
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)

    @_fw.no_grad()
    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns closure's loss."""
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            _refuse_sparse_grads(group, "ASGD does not support sparse gradients")
            lr = _to_scalar(group["lr"])
            lambd, alpha, t0 = group["lambd"], group["alpha"], group["t0"]
            wd = group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    sdt = _scalar_dtype()
                    state["step"] = _fw.zeros((), dtype=sdt, device=p.device)
                    state["eta"] = _fw.tensor(lr, dtype=sdt, device=p.device)
                    state["mu"] = _fw.ones((), dtype=sdt, device=p.device)
                    state["ax"] = _fw.zeros_like(p)
                grad = p.grad if not group["maximize"] else -p.grad
                eta, mu, ax = state["eta"], state["mu"], state["ax"]
                step = state["step"].add_(1).item()
                if wd != 0:
                    grad = grad.add(p, alpha=wd)
                eta_value = eta.item()
                p.mul_(1 - lambd * eta_value)
                p.add_(grad, alpha=-eta_value)
                if mu.item() != 1:
                    ax.add_(p.sub(ax).mul_(mu.item()))
                else:
                    ax.copy_(p)
                # new values go through a default-dtype tensor (rounded), as torch's do
                eta.copy_(_fw.as_tensor(lr / ((1 + lambd * lr * step) ** alpha)))
                mu.copy_(_fw.as_tensor(1 / max(1, step - t0)))
        return loss
