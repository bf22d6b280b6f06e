"""Cases for the elementwise loss rows of ops.yaml (_mse_loss, _smooth_l1_loss,
_huber_loss, _binary_cross_entropy, _binary_cross_entropy_with_logits, _soft_margin_loss,
_nll_loss, _nll_loss2d) against NumPy float64 references. (The checks against torch,
gradients included, are tests/nn/test_loss_ops.py.)"""
import numpy as np

from helpers import to_np
from opdb import Case

_RED = ("none", "mean", "sum")


def _reduce(loss, reduction):
    return {"none": loss, "mean": loss.mean(), "sum": loss.sum()}[reduction]


def _pair(fw, device, shape, lo, hi, seed):
    rng = np.random.default_rng(seed)
    a = rng.uniform(lo, hi, shape)
    t = fw.tensor(a, dtype=fw.float32, device=device)
    return t, to_np(t).astype(np.float64)


def _regression(op, ref, **kw):
    def case(fw, device):
        out = []
        # target (5,) broadcasts against input (3, 5); 37 columns cross a kernel block edge
        for (si, st), red in zip((((3, 5), (5,)), ((4, 37), (4, 37)), ((2, 3), (2, 3))),
                                 _RED):
            x, xn = _pair(fw, device, si, -2, 2, 0)
            t, tn = _pair(fw, device, st, -2, 2, 1)
            out.append((getattr(fw, op)(x, t, red, **kw), _reduce(ref(xn - tn), red)))
        return out
    return Case(case)


def _smooth_l1(d, beta=0.5):
    z = np.abs(d)
    return np.where(z < beta, 0.5 * d * d / beta, z - 0.5 * beta)


def _huber(d, delta=0.7):
    z = np.abs(d)
    return np.where(z < delta, 0.5 * d * d, delta * (z - 0.5 * delta))


def _bce(fw, device):
    out = []
    for shape, red in zip(((3, 5), (4, 37), (2, 3)), _RED):
        x, xn = _pair(fw, device, shape, 0.02, 0.98, 0)
        t, tn = _pair(fw, device, shape, 0, 1, 1)
        w, wn = _pair(fw, device, shape[-1:], 0.5, 2, 2)
        loss = -(tn * np.log(xn) + (1 - tn) * np.log1p(-xn)) * wn
        out.append((fw._binary_cross_entropy(x, t, w, red), _reduce(loss, red)))
    # the logs are clamped at -100: x = 0 and 1 give 100, not inf
    e = fw.tensor([0.0, 1.0], device=device)
    out.append((fw._binary_cross_entropy(e, fw.tensor([1.0, 0.0], device=device), None,
                                         "none"), np.array([100.0, 100.0])))
    return out


def _bce_logits(fw, device):
    out = []
    for shape, red in zip(((3, 5), (4, 37), (2, 3)), _RED):
        x, xn = _pair(fw, device, shape, -30, 30, 0)
        t, tn = _pair(fw, device, shape, 0, 1, 1)
        pw, pwn = _pair(fw, device, shape[-1:], 0.5, 3, 2)
        w, wn = _pair(fw, device, shape, 0.5, 2, 3)
        sp = np.logaddexp(0, -xn)
        loss = ((1 - tn) * xn + (1 + (pwn - 1) * tn) * sp) * wn
        out.append((fw._binary_cross_entropy_with_logits(x, t, w, pw, red),
                    _reduce(loss, red)))
        out.append((fw._binary_cross_entropy_with_logits(x, t, None, None, red),
                    _reduce((1 - tn) * xn + sp, red)))
    return out


def _soft_margin(fw, device):
    out = []
    for shape, red in zip(((3, 5), (4, 37), (2, 3)), _RED):
        x, xn = _pair(fw, device, shape, -3, 3, 0)
        tn = np.where(np.random.default_rng(1).random(shape) < 0.5, -1.0, 1.0)
        t = fw.tensor(tn, dtype=fw.float32, device=device)
        out.append((fw._soft_margin_loss(x, t, red), _reduce(np.logaddexp(0, -tn * xn), red)))
    return out


def _nll_ref(x, t, w, ignore, red):
    """nll over class dim 1 of x (N, C, ...) in float64."""
    w = np.ones(x.shape[1]) if w is None else w
    keep = t != ignore
    tc = np.where(keep, t, 0)
    picked = np.take_along_axis(x, tc[:, None], 1)[:, 0]
    wy = np.where(keep, w[tc], 0.0)
    loss = -picked * wy
    return {"none": loss, "sum": loss.sum(), "mean": loss.sum() / wy.sum()}[red]


def _nll(op, shapes):
    def case(fw, device):
        out = []
        for shape, red, weighted in zip(shapes, _RED, (True, False, True)):
            x, xn = _pair(fw, device, shape, -3, 0, 0)
            rng = np.random.default_rng(1)
            tn = rng.integers(0, shape[1], (shape[0],) + shape[2:])
            tn.reshape(-1)[0] = 1 if weighted else -100
            t = fw.tensor(tn, device=device)
            w, wn = _pair(fw, device, (shape[1],), 0.5, 2, 2) if weighted else (None, None)
            ignore = 1 if weighted else -100
            out.append((getattr(fw, op)(x, t, w, red, ignore), _nll_ref(xn, tn, wn, ignore, red)))
        return out
    return Case(case)


CASES = {
    "_mse_loss": [_regression("_mse_loss", lambda d: d * d)],
    "_smooth_l1_loss": [_regression("_smooth_l1_loss", _smooth_l1, beta=0.5)],
    "_huber_loss": [_regression("_huber_loss", _huber, delta=0.7)],
    "_binary_cross_entropy": [Case(_bce)],
    "_binary_cross_entropy_with_logits": [Case(_bce_logits)],
    "_soft_margin_loss": [Case(_soft_margin)],
    "_nll_loss": [_nll("_nll_loss", ((4, 5), (3, 37), (6, 3)))],
    "_nll_loss2d": [_nll("_nll_loss2d", ((2, 3, 2, 3), (2, 4, 5, 1), (1, 3, 2, 2)))],
}
