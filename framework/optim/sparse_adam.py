"""SparseAdam (PyTorch's ``torch.optim.SparseAdam``): Adam for sparse gradients, such as
those of ``nn.Embedding(..., sparse=True)``."""
import math

import framework as _fw

from .optimizer import Optimizer

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """Adam that updates only the rows a sparse COO gradient holds: their moments and
    their parameter values (the moments of other rows are left as they are, not decayed).
    The gradients must be sparse and the parameters dense.
    State: ``step`` (an int), ``exp_avg``, ``exp_avg_sq``."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize}
        super().__init__(params, defaults)
        sparse_params, complex_params = [], []
        for i, group in enumerate(self.param_groups):
            for j, p in enumerate(group["params"]):
                if p.is_sparse:
                    sparse_params.append([i, j])
                if p.is_complex():
                    complex_params.append([i, j])
        if sparse_params:
            raise ValueError(f"Sparse params at indices {sparse_params}: SparseAdam requires "
                             "dense parameter tensors")
        if complex_params:
            raise ValueError(f"Complex params at indices {complex_params}: SparseAdam does not "
                             "support complex parameters")

    def step(self, closure=None):
        """One SparseAdam step; returns the closure's loss (or None)."""
        loss = self._eval_closure(closure)
        with _fw.no_grad():
            for group in self.param_groups:
                for p in self._params_with_grad(group):
                    if not p.grad.is_sparse:
                        raise RuntimeError("SparseAdam does not support dense gradients, "
                                           "please consider Adam instead")
                    state = self.state[p]
                    if len(state) == 0:
                        state["step"] = 0
                        state["exp_avg"] = _fw.zeros_like(p)
                        state["exp_avg_sq"] = _fw.zeros_like(p)
                    state["step"] += 1
                    self._update(p, state, group)
        return loss

    @staticmethod
    def _update(p, state, group):
        beta1, beta2 = group["betas"]
        grad = -p.grad if group["maximize"] else p.grad
        # the update is not linear in the gradient: each row must appear once
        grad = grad.coalesce()
        values = grad._values()
        if values.numel() == 0:
            return
        rows = tuple(grad._indices().unbind(0))
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        # m += (1 - beta1) (g - m) and v += (1 - beta2) (g^2 - v), on the gradient's rows
        old_avg = exp_avg[rows]
        avg_update = (values - old_avg).mul_(1 - beta1)
        exp_avg.index_put_(rows, avg_update, accumulate=True)
        old_sq = exp_avg_sq[rows]
        sq_update = values.pow(2).sub_(old_sq).mul_(1 - beta2)
        exp_avg_sq.index_put_(rows, sq_update, accumulate=True)
        # the new moments of those rows, from the updates (no second gather)
        numer = avg_update.add_(old_avg)
        denom = sq_update.add_(old_sq).sqrt_().add_(group["eps"])
        step = state["step"]
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        step_size = group["lr"] * math.sqrt(bias_correction2) / bias_correction1
        p.index_put_(rows, numer.div_(denom).mul_(-step_size), accumulate=True)
