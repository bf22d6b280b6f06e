"""Cases for the loss rows of ops.yaml (_cross_entropy_loss, _cross_entropy_loss_backward)
against NumPy float64 references. (The full checks against torch are
tests/nn/test_cross_entropy_fused.py.)"""
import numpy as np

from helpers import to_np
from opdb import Case


def _reference(x, t, w, reduction, ignore, eps):
    """Loss, stats (the rows' max, their log-sum, the total target weight) and input
    gradient (for a unit upstream gradient) of cross entropy over rows of x (rows, C), in
    float64."""
    C = x.shape[1]
    w = np.ones(C) if w is None else w
    m = x.max(1)
    log_s = np.log(np.exp(x - m[:, None]).sum(1))
    logp = x - m[:, None] - log_s[:, None]
    keep = t != ignore
    tc = np.where(keep, t, 0)
    wy = np.where(keep, w[tc], 0.0)
    loss = (1 - eps) * wy * -logp[np.arange(len(t)), tc] + eps / C * -(logp * w).sum(1)
    loss = np.where(keep, loss, 0.0)
    g = np.ones(len(t)) if reduction != "mean" else np.full(len(t), 1 / wy.sum())
    p = np.exp(logp)
    a = (1 - eps) * wy + eps / C * w.sum()
    grad = p * a[:, None] - eps / C * w[None, :]
    grad[np.arange(len(t)), tc] -= (1 - eps) * wy
    grad = np.where(keep[:, None], grad * g[:, None], 0.0)
    out = {"none": loss, "sum": loss.sum(), "mean": loss.sum() / wy.sum()}[reduction]
    return out, np.concatenate([m, log_s, [wy.sum()]]), grad


_CASES = [((4, 5), "mean", False, -100, 0.0), ((3, 1100), "sum", True, 1, 0.2),
          ((6, 3), "none", True, 2, 0.1), ((2, 7), "mean", False, 0, 0.3)]


def _data(fw, device, shape, weighted, ignore):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape) * 3
    t = rng.integers(0, shape[1], shape[0])
    t[0] = ignore if ignore >= 0 else t[0]
    w = rng.random(shape[1]) + 0.5 if weighted else None
    fx = fw.tensor(x, dtype=fw.float32, device=device)
    fw_w = None if w is None else fw.tensor(w, dtype=fw.float32, device=device)
    return fx, fw.tensor(t, device=device), fw_w, to_np(fx).astype(np.float64), t, (
        None if fw_w is None else to_np(fw_w).astype(np.float64))


def _forward(fw, device):
    out = []
    for shape, reduction, weighted, ignore, eps in _CASES:
        fx, ft, fwt, x, t, w = _data(fw, device, shape, weighted, ignore)
        loss, stats = fw._cross_entropy_loss(fx, ft, fwt, reduction, ignore, eps)
        ref_loss, ref_stats, _ = _reference(x, t, w, reduction, ignore, eps)
        out += [(loss, ref_loss), (stats, ref_stats)]
    return out


def _backward(fw, device):
    out = []
    for shape, reduction, weighted, ignore, eps in _CASES:
        fx, ft, fwt, x, t, w = _data(fw, device, shape, weighted, ignore)
        _, stats = fw._cross_entropy_loss(fx, ft, fwt, reduction, ignore, eps)
        ones = fw.ones(shape[0] if reduction == "none" else (), device=device)
        grad = fw._cross_entropy_loss_backward(ones, fx, ft, fwt, reduction, ignore, eps,
                                               stats)
        out.append((grad, _reference(x, t, w, reduction, ignore, eps)[2]))
    return out


CASES = {
    "_cross_entropy_loss": [Case(_forward)],
    "_cross_entropy_loss_backward": [Case(_backward)],
}
