"""Cases for framework/_ops/aten_composites.py (grid_sampler_2d/3d, native_batch_norm, geqrf,
ormqr, svd_lowrank, pca_lowrank): NumPy references where short (batch norm, the QR
identities, low-rank reconstruction), torch's grid_sample otherwise."""
import numpy as np

from opdb import Case


def _grid(fw, d, nd):
    try:
        import torch
    except ImportError:
        return None
    rng = np.random.default_rng(nd)
    x = rng.uniform(-1, 1, (2, 2) + (4,) * nd)
    g = rng.uniform(-1.2, 1.2, (2,) + (3,) * nd + (nd,))
    fn = fw.grid_sampler_2d if nd == 2 else fw.grid_sampler_3d
    tfn = torch.grid_sampler_2d if nd == 2 else torch.grid_sampler_3d
    out = []
    for mode, pad, ac in ((0, 0, False), (1, 1, True), (0, 2, False)):
        got = fn(fw.tensor(x, device=d), fw.tensor(g, device=d), mode, pad, ac)
        out.append((got, tfn(torch.tensor(x), torch.tensor(g), mode, pad, ac).numpy()))
    return out


def _batch_norm(fw, d):
    rng = np.random.default_rng(0)
    x = rng.uniform(-2, 2, (4, 3, 5))
    w, b = rng.uniform(0.5, 1.5, 3), rng.uniform(-1, 1, 3)
    rm, rv = rng.uniform(-1, 1, 3), rng.uniform(0.5, 2, 3)
    T = fw.tensor
    frm, frv = T(rm, device=d), T(rv, device=d)
    out, sm, si = fw.native_batch_norm(T(x, device=d), T(w, device=d), T(b, device=d), frm,
                                       frv, True, 0.1, 1e-5)
    mean, var = x.mean((0, 2)), x.var((0, 2))
    inv = 1 / np.sqrt(var + 1e-5)
    ref = (x - mean[:, None]) * inv[:, None] * w[:, None] + b[:, None]
    ev = fw.native_batch_norm(T(x, device=d), None, None, T(rm, device=d), T(rv, device=d),
                              False, 0.1, 1e-5)
    return [(out, ref), (sm, mean), (si, inv), (frm, 0.9 * rm + 0.1 * mean),
            (frv, 0.9 * rv + 0.1 * x.var((0, 2), ddof=1)),
            (ev[0], (x - rm[:, None]) / np.sqrt(rv[:, None] + 1e-5)),
            (ev[1], np.zeros(0))]


def _geqrf(fw, d):
    a = np.random.default_rng(1).uniform(-1, 1, (2, 5, 3))
    h, tau = fw.geqrf(fw.tensor(a, device=d))
    q = fw.linalg.householder_product(h, tau)
    r = h.triu()[..., :3, :]
    return [(q @ r, a), (q.mT @ q, np.broadcast_to(np.eye(3), (2, 3, 3)))]


def _ormqr(fw, d):
    rng = np.random.default_rng(2)
    a = rng.uniform(-1, 1, (4, 4))
    c = rng.uniform(-1, 1, (4, 3))
    h, tau = fw.geqrf(fw.tensor(a, device=d))
    q = np.linalg.qr(a)[0]
    sign = np.sign(np.diag(np.linalg.qr(a)[1])) * np.sign(np.diag(h.triu().cpu().numpy()))
    q = q * sign
    C = fw.tensor(c, device=d)
    return [(fw.ormqr(h, tau, C), q @ c), (fw.ormqr(h, tau, C, transpose=True), q.T @ c),
            (fw.ormqr(h, tau, C.mT, left=False), c.T @ q)]


def _lowrank(fw, d):
    rng = np.random.default_rng(3)
    a = rng.uniform(-1, 1, (7, 2)) @ rng.uniform(-1, 1, (2, 5))
    U, S, V = fw.svd_lowrank(fw.tensor(a, device=d), q=3)
    u, s, v = fw.pca_lowrank(fw.tensor(a, device=d), q=3)
    c = a - a.mean(0)
    return [((U * S) @ V.mT, a), ((u * s) @ v.mT, c)]


CASES = {
    "grid_sampler_2d": [Case(lambda fw, d: _grid(fw, d, 2))],
    "grid_sampler_3d": [Case(lambda fw, d: _grid(fw, d, 3))],
    "native_batch_norm": [Case(_batch_norm)], "geqrf": [Case(_geqrf)], "ormqr": [Case(_ormqr)],
    "svd_lowrank": [Case(_lowrank)], "pca_lowrank": [Case(_lowrank)],
}
