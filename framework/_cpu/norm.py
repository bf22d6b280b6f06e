"""CPU launchers: normalization kernels (native/norm.cpp).

Inputs are contiguous tensors of one floating dtype; weight, bias, statistics and
per-channel coefficients are contiguous vectors of the accumulation dtype (float32, or
float64 for float64 inputs). An absent optional tensor is None (a null pointer)."""
from .. import _C


def _p(t):
    return 0 if t is None else t.data_ptr()


def rows_forward(x, w, b, y, mean, rstd, R, K, S, G, eps, rms):
    """Rows of K * S elements: y = (x - mean) * rstd * w[c] + b[c], c = (r % G) * K + k;
    writes mean (not for ``rms``) and rstd per row."""
    _C.norm_rows_forward(x.dtype.code, x.data_ptr(), _p(w), _p(b), y.data_ptr(), _p(mean),
                         rstd.data_ptr(), R, K, S, G, float(eps), bool(rms))


def rows_backward_input(dy, x, w, mean, rstd, dx, R, K, S, G, rms):
    """The input gradient of rows_forward, a row at a time."""
    _C.norm_rows_backward_input(x.dtype.code, dy.data_ptr(), x.data_ptr(), _p(w), _p(mean),
                                rstd.data_ptr(), dx.data_ptr(), R, K, S, G, bool(rms))


def rows_backward(dy, x, w, mean, rstd, dx, dw, db, R, K, rms):
    """Layer/rms norm's backward over R > 0 rows of K > 0: the input gradient into dx and
    the parameter gradients into dw and db (each may be None)."""
    if dx is not None:
        rows_backward_input(dy, x, w, mean, rstd, dx, R, K, 1, 1, rms)
    if dw is not None or db is not None:
        rows_backward_params(dy, x, mean, rstd, dw, db, R, K, rms)


def rows_backward_params(dy, x, mean, rstd, dw, db, R, K, rms):
    """Column sums over R rows of K: dw = sum(dy * xhat), db = sum(dy) (either may be None)."""
    _C.norm_rows_backward_params(x.dtype.code, dy.data_ptr(), x.data_ptr(), _p(mean),
                                 rstd.data_ptr(), _p(dw), _p(db), R, K, bool(rms))


def channel_stats(x, mean, var, N, C, S):
    """Mean and biased variance per channel of (N, C, S)."""
    _C.norm_channel_stats(x.dtype.code, x.data_ptr(), mean.data_ptr(), var.data_ptr(), N, C, S)


def channel_param_grads(dy, x, mean, rstd, dw, db, N, C, S, sn, cdiv):
    """Per channel of (N, C, S): dw = sum(dy * (x - mean) * rstd), db = sum(dy), statistics
    of (n, c) at n * sn + c // cdiv."""
    _C.norm_channel_param_grads(x.dtype.code, dy.data_ptr(), x.data_ptr(), mean.data_ptr(),
                                rstd.data_ptr(), _p(dw), _p(db), N, C, S, sn, cdiv)


def channel_affine(x, kx, z, kz, k0, y, N, C, S):
    """y = x * kx[c] + z * kz[c] + k0[c] over (N, C, S); z, kz, k0 may be None."""
    _C.norm_channel_affine(x.dtype.code, x.data_ptr(), kx.data_ptr(), _p(z), _p(kz), _p(k0),
                           y.data_ptr(), N, C, S)
