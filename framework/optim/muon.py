"""Muon: momentum SGD whose update is orthogonalized by a Newton-Schulz iteration
(PyTorch's ``torch.optim.Muon``); for 2-D parameters only."""
import math

import framework as _fw
from framework._tensor import Tensor

from .optimizer import Optimizer, _to_scalar
from .optimizer import _refuse_sparse_grads

__all__ = ["Muon"]

# Keller Jordan's constants (https://kellerjordan.github.io/posts/muon/), as PyTorch's
EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.7750
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5


def _zeropower_via_newtonschulz(grad, ns_coefficients, ns_steps, eps):
    """Approximately orthogonalize the 2-D ``grad`` (U S V^T -> about U V^T) with
    ``ns_steps`` quintic Newton-Schulz steps X <- a X + (b A + c A^2) X, A = X X^T, run in
    bfloat16 on the wide orientation (rows <= columns) after scaling X to Frobenius norm
    1 (at least ``eps`` in the divisor). Returns a bfloat16 tensor of grad's shape."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(grad.shape) != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    tall = grad.size(0) > grad.size(1)
    x = grad.bfloat16()
    if tall:
        x = x.T
    x.div_(x.norm().clamp(min=eps))
    for _ in range(ns_steps):
        gram = x @ x.T
        poly = _fw.addmm(gram, gram, gram, beta=b, alpha=c)
        x = _fw.addmm(x, poly, x, beta=a)
    return x.T if tall else x


def _adjust_lr(lr, adjust_lr_fn, param_shape):
    """lr scaled for a param of shape (A, B): by sqrt(max(1, A / B)) ("original", the
    default) or by 0.2 sqrt(max(A, B)) ("match_rms_adamw")."""
    rows, cols = param_shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, rows / cols))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(rows, cols))
    else:
        ratio = 1.0
    return lr * ratio


class Muon(Optimizer):
    """Muon: buf = momentum * buf + (1 - momentum) * g (a lerp); the update is
    g + momentum * (buf - g) (nesterov) or buf, orthogonalized by Newton-Schulz;
    p *= 1 - lr * weight_decay; p -= adjusted_lr * update.
    State (created at the first step with a gradient): ``momentum_buffer``."""

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C), eps=EPS,
                 ns_steps=DEFAULT_NS_STEPS, adjust_lr_fn=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {"lr": lr, "weight_decay": weight_decay, "momentum": momentum,
                    "nesterov": nesterov, "ns_coefficients": ns_coefficients, "eps": eps,
                    "ns_steps": ns_steps, "adjust_lr_fn": adjust_lr_fn}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError("Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {p.size()}")

    def step(self, closure=None):
        """One Muon step; returns the closure's loss (or None)."""
        loss = self._eval_closure(closure)
        with _fw.no_grad():
            for group in self.param_groups:
                _refuse_sparse_grads(group, "Muon does not support sparse gradients")
                params = self._params_with_grad(group, real_only="Muon")
                for p in params:
                    if "momentum_buffer" not in self.state[p]:
                        self.state[p]["momentum_buffer"] = _fw.zeros_like(p.grad)
                self._muon(group, params)
        return loss

    def _muon(self, group, params):
        lr = _to_scalar(group["lr"])
        wd, momentum = group["weight_decay"], group["momentum"]
        for p in params:
            grad = p.grad
            if grad.ndim != 2:
                raise ValueError("Param gradient must be a 2D matrix")
            buf = self.state[p]["momentum_buffer"]
            buf.lerp_(grad, 1 - momentum)
            update = grad.lerp(buf, momentum) if group["nesterov"] else buf
            update = _zeropower_via_newtonschulz(update, group["ns_coefficients"],
                                                 group["ns_steps"], group["eps"])
            adjusted_lr = _adjust_lr(lr, group["adjust_lr_fn"], p.shape)
            p.mul_(1 - lr * wd)
            p.add_(update, alpha=-adjusted_lr)
