"""Adam (PyTorch's ``torch.optim.Adam``), with amsgrad, maximize, L2 or decoupled weight
decay; ``AdamW`` is Adam with decoupled weight decay."""
import framework as _fw
from framework._tensor import Tensor

from . import _fused
from .optimizer import (Optimizer, _check_betas, _check_fused_param, _check_nonneg, _multi_tensor,
                        _to_scalar)
from .optimizer import _real_views, _refuse_sparse_grads

__all__ = ["Adam"]


class Adam(Optimizer):
    """Adam: m = lerp(m, g, 1 - beta1); v = beta2 v + (1 - beta2) g^2;
    p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps).
    State: ``step``, ``exp_avg``, ``exp_avg_sq`` (+ ``max_exp_avg_sq`` with amsgrad)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        if isinstance(lr, Tensor):
            if foreach and not capturable:
                raise ValueError("lr as a Tensor is not supported for capturable=False "
                                 "and foreach=True")
            if lr.numel() != 1:
                raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        _check_nonneg(epsilon=eps)
        _check_betas(betas)
        _check_nonneg(weight_decay=weight_decay)
        if not ((isinstance(betas[0], float) and isinstance(betas[1], float))
                or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))):
            raise ValueError("betas must be either both floats or both Tensors")
        for i in (0, 1):
            if isinstance(betas[i], Tensor):
                if not capturable and foreach:
                    raise ValueError(f"betas[{i}] as a Tensor is not supported for "
                                     "capturable=False and foreach=True")
                if betas[i].numel() != 1:
                    raise ValueError(f"Tensor betas[{i}] must be 1-element")
        betas = tuple(b.reshape(()) if isinstance(b, Tensor) else b for b in betas)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach,
                    "capturable": capturable, "differentiable": differentiable,
                    "fused": fused, "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)
        self._check_fused_foreach(defaults)
        if fused:
            # GradScaler then hands the step grad_scale and found_inf (fused kernels only)
            self._step_supports_amp_scaling = True

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("amsgrad", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("capturable", False)
            group.setdefault("differentiable", False)
            group.setdefault("decoupled_weight_decay", False)
            group.setdefault("fused", None)
            for p in group["params"]:
                st = self.state.get(p, {})
                if len(st) != 0 and not isinstance(st["step"], Tensor):
                    step = self._new_step(p, group)
                    step.fill_(float(st["step"]))
                    st["step"] = step

    def _init_state(self, p, group):
        state = self.state[p]
        if len(state) == 0:
            if group["fused"]:
                _check_fused_param(p)
            state["step"] = self._new_step(p, group)
            state["exp_avg"] = _fw.zeros_like(p)
            state["exp_avg_sq"] = _fw.zeros_like(p)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = _fw.zeros_like(p)
        return state

    def step(self, closure=None):
        """One Adam step; returns the closure's loss (or None)."""
        loss = self._eval_closure(closure)
        with _fw.no_grad():
            for group in self.param_groups:
                _refuse_sparse_grads(group, "Adam does not support sparse gradients, please "
                                            "consider SparseAdam instead")
                if (group["foreach"] and isinstance(group["lr"], Tensor)
                        and not group["capturable"]):
                    raise RuntimeError("lr as a Tensor is not supported for "
                                       "capturable=False and foreach=True")
                if _multi_tensor(group):
                    _fused.adam(self, group)  # one multi-tensor call per device and dtype
                else:
                    self._single_tensor_adam(group)
        return loss

    def _single_tensor_adam(self, group):
        lr = _to_scalar(group["lr"])
        beta1, beta2 = (_to_scalar(b) for b in group["betas"])
        eps = group["eps"]
        wd = _to_scalar(group["weight_decay"])
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self._init_state(p, group)
            grad = p.grad if not group["maximize"] else -p.grad
            p, grad, exp_avg, exp_avg_sq, max_sq = _real_views(
                p, grad, state["exp_avg"], state["exp_avg_sq"], state.get("max_exp_avg_sq"))
            state["step"] += 1
            if wd != 0:
                if group["decoupled_weight_decay"]:
                    p.mul_(1 - lr * wd)
                else:
                    grad = grad.add(p, alpha=wd)
            exp_avg.lerp_(grad, 1 - beta1)
            exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            step = state["step"].item()
            bias_correction1 = 1 - beta1 ** step
            bias_correction2_sqrt = (1 - beta2 ** step) ** 0.5
            step_size = lr / bias_correction1
            if group["amsgrad"]:
                max_sq.copy_(_fw.maximum(max_sq, exp_avg_sq))
                denom = (max_sq.sqrt() / bias_correction2_sqrt).add_(eps)
            else:
                denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
            p.addcdiv_(exp_avg, denom, value=-step_size)
