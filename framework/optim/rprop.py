"""Rprop (PyTorch's ``torch.optim.Rprop``): resilient backpropagation."""
import framework as _fw
from .optimizer import Optimizer, _check_lr, _scalar_dtype, _to_scalar
from .optimizer import _real_views, _refuse_sparse_grads

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """Rprop: per-element step sizes grown by ``etas[1]`` while the gradient keeps its
    sign and shrunk by ``etas[0]`` when it flips. State: ``step``, ``prev``,
    ``step_size``."""

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach,
                        maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)

    @_fw.no_grad()
    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns closure's loss."""
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            _refuse_sparse_grads(group, "Rprop does not support sparse gradients")
            etaminus, etaplus = group["etas"]
            step_size_min, step_size_max = group["step_sizes"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _fw.zeros((), dtype=_scalar_dtype())
                    state["prev"] = _fw.zeros_like(p)
                    lr = _to_scalar(group["lr"])
                    # a complex param is two real ones: its imaginary part steps too
                    state["step_size"] = _fw.full_like(
                        p.grad, complex(lr, lr) if p.is_complex() else lr)
                grad = p.grad if not group["maximize"] else -p.grad
                p, grad, prev, step_size = _real_views(p, grad, state["prev"],
                                                       state["step_size"])
                state["step"].add_(1)
                sign = grad.mul(prev).sign()
                sign[sign.gt(0)] = etaplus
                sign[sign.lt(0)] = etaminus
                sign[sign.eq(0)] = 1
                step_size.mul_(sign).clamp_(step_size_min, step_size_max)
                # where the sign flipped, skip this step and forget the gradient
                grad = grad.clone()
                grad[sign.eq(etaminus)] = 0
                p.addcmul_(grad.sign(), step_size, value=-1)
                prev.copy_(grad)
        return loss
