"""ATen-level ops that torch exposes at the top level, composed of framework ops:
``grid_sampler_2d`` and ``grid_sampler_3d`` (grid_sample with integer modes),
``native_batch_norm`` (batch norm that returns its saved statistics), ``geqrf`` and
``ormqr`` (QR in LAPACK's Householder form), ``svd_lowrank`` and ``pca_lowrank`` (randomized
low-rank SVD and PCA, Halko et al. 2009)."""
import framework as _fw
from ..return_types import _structseq

geqrf_result = _structseq("geqrf", ("a", "tau"))

_MODES = ("bilinear", "nearest", "bicubic")
_PADDINGS = ("zeros", "border", "reflection")


def _grid_sampler(name, input, grid, interpolation_mode, padding_mode, align_corners, nd):
    if input.dim() != nd + 2:
        raise RuntimeError(f"{name}(): expected {nd + 2}D input, got {input.dim()}D input of "
                           f"shape {tuple(input.shape)}")
    if not 0 <= interpolation_mode < len(_MODES) or not 0 <= padding_mode < len(_PADDINGS):
        raise RuntimeError(f"{name}(): invalid interpolation_mode {interpolation_mode} or "
                           f"padding_mode {padding_mode}")
    return _fw.nn.functional.grid_sample(input, grid, mode=_MODES[interpolation_mode],
                                         padding_mode=_PADDINGS[padding_mode],
                                         align_corners=bool(align_corners))


def grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    """grid_sample of a 4-D input; modes as integers (0: bilinear, 1: nearest, 2: bicubic;
    padding 0: zeros, 1: border, 2: reflection)."""
    return _grid_sampler("grid_sampler_2d", input, grid, interpolation_mode, padding_mode,
                         align_corners, 2)


def grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    """grid_sample of a 5-D input; modes as integers (as grid_sampler_2d)."""
    return _grid_sampler("grid_sampler_3d", input, grid, interpolation_mode, padding_mode,
                         align_corners, 3)


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
                      eps):
    """Batch norm over every dim but 1: (output, save_mean, save_invstd). In training the
    batch statistics are used, returned, and blended into the running ones in place
    (``running = (1 - momentum) running + momentum batch``, unbiased variance); otherwise
    the running statistics are used and the saved ones are empty."""
    if input.dim() < 2:
        raise RuntimeError(f"native_batch_norm: input must have at least 2 dimensions, got "
                           f"shape {tuple(input.shape)}")
    dims = [d for d in range(input.dim()) if d != 1]
    view = [1] * input.dim()
    view[1] = input.shape[1]
    acc = input if input.dtype in (_fw.float32, _fw.float64) else input.float()
    if training:
        mean = acc.mean(dims)
        var = acc.var(dims, correction=0)
        invstd = (var + eps).rsqrt()
        if running_mean is not None or running_var is not None:
            with _fw.no_grad():
                n = input.numel() // max(input.shape[1], 1)
                if running_mean is not None:
                    running_mean.copy_(running_mean * (1 - momentum) + mean.detach() * momentum)
                if running_var is not None:
                    unbiased = var.detach() * (n / max(n - 1, 1))
                    running_var.copy_(running_var * (1 - momentum) + unbiased * momentum)
        # PyTorch's derivative reads only the output's gradient: the saved statistics are
        # returned without history
        save_mean = mean.detach().to(input.dtype)
        save_invstd = invstd.detach().to(input.dtype)
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("native_batch_norm: running_mean and running_var must be "
                               "defined in evaluation mode")
        mean, invstd = running_mean.to(acc.dtype), (running_var.to(acc.dtype) + eps).rsqrt()
        save_mean = _fw.empty(0, dtype=input.dtype, device=input.device)
        save_invstd = _fw.empty(0, dtype=input.dtype, device=input.device)
    out = (acc - mean.reshape(view)) * invstd.reshape(view)
    if weight is not None:
        out = out * weight.reshape(view)
    if bias is not None:
        out = out + bias.reshape(view)
    return out.to(input.dtype), save_mean, save_invstd


def geqrf(input, *, out=None):
    """The QR decomposition in LAPACK's form: (a, tau), R in the upper triangle of ``a`` and
    the Householder vectors below it (LAPACK's geqrf, through NumPy, on the host)."""
    import numpy as np
    if input.dim() < 2:
        raise RuntimeError(f"geqrf: input must have at least 2 dimensions, got shape "
                           f"{tuple(input.shape)}")
    if input.dtype.is_complex:
        raise NotImplementedError(f"\"geqrf_cpu\" not implemented for '{input.dtype.scalar_name}'")
    if not input.dtype.is_floating_point or input.dtype not in (_fw.float32, _fw.float64):
        raise RuntimeError(f"geqrf: expected a float32 or float64 input, got {input.dtype}")
    a = input.detach().cpu().numpy()
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    h = np.zeros(a.shape, a.dtype)
    tau = np.zeros(batch + (k,), a.dtype)
    if a.size and k:
        flat = a.reshape((-1, m, n))
        hs = h.reshape((-1, m, n))
        ts = tau.reshape((-1, k))
        for i, mat in enumerate(flat):
            hr, tr = np.linalg.qr(mat, mode="raw")
            hs[i] = hr.T
            ts[i] = tr
    res = geqrf_result(_fw.tensor(h, device=input.device),
                       _fw.tensor(tau, device=input.device))
    if out is not None:
        out[0].copy_(res[0])
        out[1].copy_(res[1])
        return geqrf_result(*out)
    return res


def ormqr(input, input2, input3, left=True, transpose=False, *, out=None):
    """``input3`` multiplied by Q (or Q^H with ``transpose``; on the left, or on the right
    with ``left=False``), Q given as geqrf's Householder vectors ``input`` and ``input2``."""
    if input.dim() < 2 or input3.dim() < 2:
        raise RuntimeError(f"ormqr: input and input3 must have at least 2 dimensions, got "
                           f"shapes {tuple(input.shape)} and {tuple(input3.shape)}")
    m = input.shape[-2]
    k = input2.shape[-1]
    # the full m x m Q: the reflectors extended by identity columns
    a = input
    if a.shape[-1] < m:
        pad = _fw.zeros(*a.shape[:-1], m - a.shape[-1], dtype=a.dtype, device=a.device)
        a = _fw.cat([a, pad], -1)
    else:
        a = a[..., :m]
    tau = input2
    if k < m:
        tz = _fw.zeros(*tau.shape[:-1], m - k, dtype=tau.dtype, device=tau.device)
        tau = _fw.cat([tau, tz], -1)
    q = _fw.linalg.householder_product(a, tau)
    if transpose:   # the conjugate transpose for complex, as LAPACK's ormqr
        q = q.mH
    res = q @ input3 if left else input3 @ q
    if out is not None:
        return out.copy_(res)
    return res


def _lowrank(A, q, niter, M):
    """U, S, V of A - M by Halko et al.'s randomized range finder with ``niter`` power
    iterations."""
    X = A if M is None else A - M
    m, n = X.shape[-2:]
    Xt = X.mT
    if m < n:
        X, Xt = Xt, X
    R = _fw.randn(*X.shape[:-2], X.shape[-1], q, dtype=X.dtype, device=X.device)
    Q = _fw.linalg.qr(X @ R).Q
    for _ in range(niter):
        Q = _fw.linalg.qr(Xt @ Q).Q
        Q = _fw.linalg.qr(X @ Q).Q
    B = Q.mT @ X
    U, S, Vh = _fw.linalg.svd(B, full_matrices=False)
    U = Q @ U
    V = Vh.mT
    if m < n:
        U, V = V, U
    return U, S, V


def svd_lowrank(A, q=6, niter=2, M=None):
    """An approximate rank-``q`` SVD (U, S, V) of ``A`` (of ``A - M``): randomized, so each
    call differs; ``A ~ U diag(S) V^T``."""
    q = 6 if q is None else q
    if min(A.shape[-2:]) < q:
        q = min(A.shape[-2:])
    return _lowrank(A, q, niter, M)


def pca_lowrank(A, q=None, center=True, niter=2):
    """The principal components (U, S, V) of ``A`` from a randomized rank-``q`` SVD of the
    centered data (``q`` defaults to min(6, m, n))."""
    m, n = A.shape[-2:]
    q = min(6, m, n) if q is None else q
    if not 0 <= q <= min(m, n):
        raise ValueError(f"pca_lowrank: q(={q}) must be non-negative integer and not greater "
                         f"than min(m, n)={min(m, n)}")
    if niter < 0:
        raise ValueError(f"pca_lowrank: niter(={niter}) must be non-negative integer")
    M = A.mean(-2, keepdim=True) if center else None
    return _lowrank(A, q, niter, M)
