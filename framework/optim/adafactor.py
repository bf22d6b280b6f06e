"""Adafactor: factored second-moment estimates (PyTorch's ``torch.optim.Adafactor``)."""
import math

import framework as _fw
from framework._tensor import Tensor

from .optimizer import Optimizer, _scalar_dtype, _to_scalar
from .optimizer import _refuse_sparse_grads

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    """Adafactor (Shazeer & Stern), as PyTorch implements it.

    For step t: beta2_hat = 1 - t ** beta2_decay, rho = min(lr, 1 / sqrt(t)),
    alpha = max(eps2, RMS(p)) * rho; p *= 1 - lr * weight_decay; a parameter with more
    than one dimension keeps row / column means of g^2 over its last two dimensions
    (``row_var``: last dim reduced, ``col_var``: second to last reduced) and estimates
    v = row_var @ col_var / max(mean(row_var), eps1); a vector keeps the full ``variance``.
    u = g / sqrt(max(v, eps1^2)); p -= alpha / max(1, RMS(u) / d) * u.

    eps = (eps1, eps2); eps1=None means the machine epsilon of the parameter's dtype.
    State (created at the first step with a gradient): ``step`` (a cpu scalar tensor) and
    ``row_var``/``col_var`` or ``variance``. ``foreach`` is accepted: both settings run
    the same per-parameter arithmetic here (PyTorch's foreach path differs from its
    single-tensor one only in how ops are batched)."""

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0,
                 weight_decay=0.0, *, foreach=None, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        eps1, eps2 = eps[0], eps[1]
        if eps1 is not None and not 0.0 <= eps1:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps1}")
        if not 0.0 <= eps2:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps2}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize}
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            for p in group["params"]:
                st = self.state.get(p, {})
                if len(st) != 0 and not isinstance(st["step"], Tensor):
                    st["step"] = _fw.tensor(float(st["step"]), dtype=_scalar_dtype())

    def _state_for(self, p):
        """The state of ``p``, created (zeros) on first use, as PyTorch's _init_group."""
        state = self.state[p]
        if len(state) == 0:
            state["step"] = _fw.tensor(0.0, dtype=_scalar_dtype())
            g = p.grad
            if g.dim() > 1:
                row_shape = list(g.shape)
                row_shape[-1] = 1
                state["row_var"] = g.new_zeros(row_shape)
                col_shape = list(g.shape)
                col_shape[-2] = 1
                state["col_var"] = g.new_zeros(col_shape)
            else:
                state["variance"] = _fw.zeros_like(g)
        return state

    def step(self, closure=None):
        """One Adafactor step; returns the closure's loss (or None)."""
        loss = self._eval_closure(closure)
        with _fw.no_grad():
            for group in self.param_groups:
                _refuse_sparse_grads(group, "Adafactor does not support sparse gradients")
                params = self._params_with_grad(group, real_only="Adafactor")
                for p in params:
                    self._state_for(p)
                self._adafactor(group, params)
        return loss

    def _adafactor(self, group, params):
        if (getattr(self, "grad_scale", None) is not None
                or getattr(self, "found_inf", None) is not None):
            raise AssertionError("Grad scaling should occur outside of optimizer.step()")
        lr = _to_scalar(group["lr"])
        beta2_decay, d, wd = group["beta2_decay"], group["d"], group["weight_decay"]
        eps1, eps2 = group["eps"]
        for p in params:
            state = self.state[p]
            grad = -p.grad if group["maximize"] else p.grad
            if eps1 is None:
                # as PyTorch: the first parameter's dtype fixes eps1 for the whole group
                eps1 = _fw.finfo(p.dtype).eps
            state["step"] += 1
            t = state["step"].item()
            weight = t ** beta2_decay  # 1 - beta2_hat
            rho = min(lr, 1 / (t ** 0.5))
            alpha = max(eps2, p.norm(2).item() / math.sqrt(p.numel())) * rho
            if wd != 0:
                p.mul_(1 - lr * wd)
            if grad.dim() > 1:
                row_var, col_var = state["row_var"], state["col_var"]
                # mean of g^2 along one dim, as (norm along it)^2 / size
                row_var.lerp_(_fw.norm(grad, dim=-1, keepdim=True).square_()
                              .div_(grad.size(-1)), weight)
                col_var.lerp_(_fw.norm(grad, dim=-2, keepdim=True).square_()
                              .div_(grad.size(-2)), weight)
                v = _fw.matmul(row_var, col_var)
                v.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
            else:
                variance = state["variance"]
                variance.lerp_(grad * grad, weight)
                v = variance.clone()
            u = v.clamp_(min=eps1 * eps1).rsqrt_().mul_(grad)
            denom = max(1.0, u.norm(2).item() / (math.sqrt(u.numel()) * d))
            p.add_(u, alpha=-alpha / denom)
