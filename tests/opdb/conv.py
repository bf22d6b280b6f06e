"""Cases for the conv family against NumPy float64: _im2col / _col2im (columns laid out
(C*KK, N, *grid)) over 1, 2 and 3 spatial dims (stride, padding, dilation, a wider grid), nn.functional.unfold / fold, and
the convolutions (groups, 'same' padding, transposed with output_padding), and the
implicit-GEMM ops _conv_gemm / _conv_gemm_input / _conv_gemm_weight. Gradients and
PyTorch parity are in tests/nn/test_conv.py, test_fold.py and tests/kernels/test_conv_kernels.py."""
import itertools

import numpy as np

import framework as fw
from opdb import Case


def _im2col(x, k, d, p, s, grid=None):
    n, c, sp = x.shape[0], x.shape[1], x.shape[2:]
    if grid is None:
        grid = [(i + 2 * pp - dd * (kk - 1) - 1) // ss + 1
                for i, kk, dd, pp, ss in zip(sp, k, d, p, s)]
    right = [max(0, (g - 1) * ss - pp + (kk - 1) * dd - (i - 1))
             for g, ss, pp, kk, dd, i in zip(grid, s, p, k, d, sp)]
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pp, r) for pp, r in zip(p, right)])
    rows = [xp[(slice(None), slice(None)) + tuple(
        slice(o * dd, o * dd + (g - 1) * ss + 1, ss) for o, dd, g, ss in zip(off, d, grid, s))]
        for off in itertools.product(*[range(kk) for kk in k])]
    return np.stack(rows, 2).reshape((n, c * len(rows)) + tuple(grid))


def _col2im(cols, size, k, d, p, s):
    n, kk, grid = cols.shape[0], int(np.prod(k)), cols.shape[2:]
    c = cols.shape[1] // kk
    out = np.zeros((n, c) + tuple(size))
    cols = cols.reshape((n, c, kk) + tuple(grid))
    for r, off in enumerate(itertools.product(*[range(x) for x in k])):
        for g in itertools.product(*[range(x) for x in grid]):
            idx = [gi * ss - pp + o * dd for gi, ss, pp, o, dd in zip(g, s, p, off, d)]
            if all(0 <= i < m for i, m in zip(idx, size)):
                out[(slice(None), slice(None)) + tuple(idx)] += \
                    cols[(slice(None), slice(None), r) + g]
    return out


def _conv(x, w, b, s, p, d, groups, grid=None):
    n, c = x.shape[:2]
    o, k = w.shape[0], w.shape[2:]
    cols = _im2col(x, k, d, p, s, grid)
    g = cols.shape[2:]
    cols = cols.reshape(n, groups, -1, int(np.prod(g)))
    out = np.einsum("gok,ngkl->ngol", w.reshape(groups, o // groups, -1), cols)
    out = out.reshape((n, o) + g)
    return out if b is None else out + b.reshape((o,) + (1,) * len(k))


def _conv_t(x, w, b, s, p, op, groups, d):
    n, c, sp = x.shape[0], x.shape[1], x.shape[2:]
    og, k = w.shape[1], w.shape[2:]
    size = [(i - 1) * ss - 2 * pp + dd * (kk - 1) + o + 1
            for i, ss, pp, dd, kk, o in zip(sp, s, p, d, k, op)]
    cols = np.einsum("gck,ngcl->ngkl", w.reshape(groups, c // groups, -1),
                     x.reshape(n, groups, c // groups, -1))
    out = _col2im(cols.reshape((n, og * groups * int(np.prod(k))) + sp), size, k, d, p, s)
    return out if b is None else out + b.reshape((og * groups,) + (1,) * len(k))


def _t(a, device, dtype=fw.float64):
    return fw.tensor(a, dtype=dtype, device=device)


GEOMS = [((9,), (3,), (2,), (1,), (2,)), ((5, 6), (2, 3), (1, 2), (1, 0), (2, 1)),
         ((3, 4, 3), (2, 1, 2), (1, 1, 2), (1, 0, 1), (1, 2, 1))]


def _im2col_case(fw_, device):
    rng = np.random.default_rng(0)
    out = []
    for sp, k, d, p, s in GEOMS:
        x = rng.standard_normal((2, 3) + sp)
        out.append((fw_._im2col(_t(x, device), k, d, p, s),
                    _im2col(x, k, d, p, s).swapaxes(0, 1)))
    x = rng.standard_normal((1, 2, 5, 4))        # a grid past the right edge
    out.append((fw_._im2col(_t(x, device), (4, 2), (1, 1), (1, 0), (1, 1), (5, 4)),
                _im2col(x, (4, 2), (1, 1), (1, 0), (1, 1), (5, 4)).swapaxes(0, 1)))
    xi = rng.integers(-3, 4, (1, 2, 4, 5)).astype(np.float64)
    for dt in (fw.float32, fw.float16, fw.int64, fw.uint8):
        v = np.abs(xi) if dt is fw.uint8 else xi
        out.append((fw_._im2col(_t(v, device, dt), (2, 2), (1, 1), (1, 1), (1, 1)),
                    _im2col(v, (2, 2), (1, 1), (1, 1), (1, 1)).swapaxes(0, 1)))
    return out


def _col2im_case(fw_, device):
    rng = np.random.default_rng(1)
    out = []
    for sp, k, d, p, s in GEOMS:
        c = _im2col(np.zeros((2, 3) + sp), k, d, p, s)
        cols = rng.standard_normal(c.shape)
        out.append((fw_._col2im(_t(cols.swapaxes(0, 1), device), sp, k, d, p, s),
                    _col2im(cols, sp, k, d, p, s)))
    return out


def _unfold_case(fw_, device):
    x = np.random.default_rng(2).standard_normal((2, 3, 6, 7))
    kw = dict(kernel_size=(2, 3), dilation=(2, 1), padding=1, stride=(1, 2))
    ref = _im2col(x, (2, 3), (2, 1), (1, 1), (1, 2))
    return [(fw_.nn.functional.unfold(_t(x, device), **kw), ref.reshape(2, 18, -1)),
            (fw_.nn.functional.unfold(_t(x[0], device), **kw), ref[0].reshape(18, -1))]


def _fold_case(fw_, device):
    cols = np.random.default_rng(3).standard_normal((2, 12, 20))
    ref = _col2im(cols.reshape(2, 12, 4, 5), (5, 6), (2, 2), (1, 1), (0, 0), (1, 1))
    return [(fw_.nn.functional.fold(_t(cols, device), (5, 6), 2), ref),
            (fw_.nn.functional.fold(_t(cols[1], device), (5, 6), 2), ref[1])]


def _conv_cases(nsp):
    def case(fw_, device):
        rng = np.random.default_rng(4 + nsp)
        sp = (7, 6, 5)[:nsp]
        x = rng.standard_normal((2, 4) + sp)
        w = rng.standard_normal((6, 2) + (3, 2, 2)[:nsp])
        b = rng.standard_normal(6)
        fn = getattr(fw_, f"conv{nsp}d")
        s, p, d = (2, 1, 1)[:nsp], (1, 0, 1)[:nsp], (1, 2, 1)[:nsp]
        out = [(fn(_t(x, device), _t(w, device), _t(b, device), s, p, d, 2),
                _conv(x, w, b, s, p, d, 2))]
        # 'same' (an even kernel pads one more on the right) and a 1x1 kernel
        w2 = rng.standard_normal((3, 4) + (4, 3, 2)[:nsp])
        left = [(k - 1) // 2 for k in w2.shape[2:]]
        out.append((fn(_t(x, device), _t(w2, device), padding="same"),
                    _conv(x, w2, None, (1,) * nsp, left, (1,) * nsp, 1, sp)))
        w3 = rng.standard_normal((5, 4) + (1,) * nsp)
        out.append((fn(_t(x[0], device), _t(w3, device)),
                    _conv(x[:1], w3, None, (1,) * nsp, (0,) * nsp, (1,) * nsp, 1)[0]))
        return out
    return [Case(case)]


def _conv_t_cases(nsp):
    def case(fw_, device):
        rng = np.random.default_rng(8 + nsp)
        sp = (4, 3, 3)[:nsp]
        x = rng.standard_normal((2, 4) + sp)
        w = rng.standard_normal((4, 3) + (3, 2, 2)[:nsp])
        b = rng.standard_normal(6)
        fn = getattr(fw_, f"conv_transpose{nsp}d")
        s, p, op, d = (2, 1, 2)[:nsp], (1, 0, 0)[:nsp], (1, 0, 1)[:nsp], (1, 2, 1)[:nsp]
        return [(fn(_t(x, device), _t(w, device), _t(b, device), s, p, op, 2, d),
                 _conv_t(x, w, b, s, p, op, 2, d)),
                (fn(_t(x[0], device), _t(w, device), None, 1, 0, 0, 2, 1),
                 _conv_t(x[:1], w, None, (1,) * nsp, (0,) * nsp, (0,) * nsp, 2, (1,) * nsp)[0])]
    return [Case(case)]


def _conv_gemm_case(fw_, device):
    """The internal implicit-GEMM ops (forward, input and weight gradients: each the
    adjoint of the forward in one argument) in 1-d and 2-d, groups and a wider grid."""
    rng = np.random.default_rng(12)
    out = []
    for sp, k, s, p, d, grid in (((7, 6), (3, 2), (2, 1), (1, 0), (1, 2), None),
                                 ((9,), (3,), (1,), (2,), (2,), (7,))):
        x = rng.standard_normal((2, 4) + sp)
        w = rng.standard_normal((6, 2) + k)
        b = rng.standard_normal(6)
        y = _conv(x, w, b, s, p, d, 2, grid)
        g = y.shape[2:]
        gy = rng.standard_normal(y.shape)
        cols = _im2col(x, k, d, p, s, g).reshape(2, 2, 2 * int(np.prod(k)), -1)
        dw = np.einsum("ngol,ngkl->gok", gy.reshape(2, 2, 3, -1), cols).reshape(w.shape)
        dcols = np.einsum("gok,ngol->ngkl", w.reshape(2, 3, -1), gy.reshape(2, 2, 3, -1))
        dx = _col2im(dcols.reshape((2, -1) + g), sp, k, d, p, s)
        tx, tw, tg = _t(x, device), _t(w, device), _t(gy, device)
        out += [(fw_._conv_gemm(tx, tw, _t(b, device), s, p, d, 2, g), y),
                (fw_._conv_gemm_input(tg, tw, sp, s, p, d, 2), dx),
                (fw_._conv_gemm_weight(tg, tx, k, s, p, d, 2), dw)]
    return out


def _conv_gemm_op(i):
    return [Case(lambda fw_, device: _conv_gemm_case(fw_, device)[i::3])]


CASES = {
    "_conv_gemm": _conv_gemm_op(0), "_conv_gemm_input": _conv_gemm_op(1),
    "_conv_gemm_weight": _conv_gemm_op(2),
    "_im2col": [Case(_im2col_case)],
    "_col2im": [Case(_col2im_case)],
    "nn.functional.unfold": [Case(_unfold_case)],
    "nn.functional.fold": [Case(_fold_case)],
    "conv1d": _conv_cases(1), "conv2d": _conv_cases(2), "conv3d": _conv_cases(3),
    "conv_transpose1d": _conv_t_cases(1), "conv_transpose2d": _conv_t_cases(2),
    "conv_transpose3d": _conv_t_cases(3),
}
