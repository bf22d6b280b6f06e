"""Cases for the softmax and pooling rows of ops.yaml (softmax, log_softmax,
nn.functional.max_pool{1,2,3}d_with_indices, nn.functional.adaptive_max_pool{1,2,3}d_with_indices)
against NumPy float64 references. (Draft by helper B for tests/opdb/nn.py; the full checks
against torch are tests/nn/test_softmax.py and tests/nn/test_pooling.py.)"""
import numpy as np

from helpers import to_np
from opdb import Case


def _softmax_ref(a, d, log):
    a = a.astype(np.float64)
    m = a.max(axis=d, keepdims=True)
    z = a - m
    s = np.exp(z).sum(axis=d, keepdims=True)
    return z - np.log(s) if log else np.exp(z) / s


def _softmax_case(name, log):
    def fn(fw, device):
        out = []
        rng = np.random.default_rng(0)
        for shape, d in [((), 0), ((7,), 0), ((3, 5), 1), ((3, 5), 0), ((2, 3, 4), 1),
                         ((2, 1300), 1), ((0, 3), 1)]:
            t = fw.tensor(rng.standard_normal(shape) * 3, dtype=fw.float32, device=device)
            out.append((getattr(fw, name)(t, d), _softmax_ref(to_np(t), d, log)))
            out.append((getattr(t, name)(d, dtype=fw.float64),
                        _softmax_ref(to_np(t), d, log)))
        return out
    return [Case(fn)]


def _softmax_backward_case():
    def fn(fw, device):
        out = []
        rng = np.random.default_rng(1)
        for shape, d in [((), 0), ((3, 5), 1), ((3, 5), 0), ((2, 3, 4), 1), ((2, 1300), 1)]:
            for log in (False, True):
                t = fw.tensor(rng.standard_normal(shape) * 3, dtype=fw.float32, device=device)
                g = fw.tensor(rng.standard_normal(shape), dtype=fw.float32, device=device)
                y = (fw.log_softmax if log else fw.softmax)(t, d)
                yn, gn = to_np(y).astype(np.float64), to_np(g).astype(np.float64)
                ref = (gn - np.exp(yn) * gn.sum(axis=d, keepdims=True) if log else
                       yn * (gn - (gn * yn).sum(axis=d, keepdims=True)))
                out.append((fw._softmax_backward_data(g, y, d, log), ref))
        return out
    return [Case(fn)]


def _windows(size, out, k, s, p, d, adaptive):
    res = []
    for o in range(out):
        if adaptive:
            res.append(list(range((o * size) // out, -(-((o + 1) * size) // out))))
        else:
            res.append([q for q in (o * s - p + j * d for j in range(k)) if 0 <= q < size])
    return res


def _maxpool_ref(a, nd, out, k, s, p, d, adaptive):
    """values and indices over the last nd dims of a (NaN-free input, distinct values)."""
    lead = a.shape[:a.ndim - nd]
    sp = a.shape[a.ndim - nd:]
    flat = a.reshape((-1,) + sp)
    wins = [_windows(sp[i], out[i], k[i], s[i], p[i], d[i], adaptive) for i in range(nd)]
    vals = np.zeros((flat.shape[0],) + tuple(out))
    inds = np.zeros((flat.shape[0],) + tuple(out), np.int64)
    for pl in range(flat.shape[0]):
        for o in np.ndindex(*out):
            best, at = -np.inf, 0
            for pos in np.ndindex(*[len(wins[i][o[i]]) for i in range(nd)]):
                q = tuple(wins[i][o[i]][pos[i]] for i in range(nd))
                if flat[(pl,) + q] > best:
                    best, at = flat[(pl,) + q], int(np.ravel_multi_index(q, sp))
            vals[(pl,) + o], inds[(pl,) + o] = best, at
    return vals.reshape(lead + tuple(out)), inds.reshape(lead + tuple(out))


def _max_pool_case(nd):
    def fn(fw, device):
        rng = np.random.default_rng(nd)
        shape = (2, 3) + (7, 6, 5)[:nd]
        t = fw.tensor(rng.permutation(int(np.prod(shape))).reshape(shape) * 0.5,
                      dtype=fw.float32, device=device)
        k, s, p = (3,) * nd, (2,) * nd, (1,) * nd
        out = tuple((n + 2 - 3) // 2 + 1 for n in shape[2:])
        v, i = getattr(fw.nn.functional, f"max_pool{nd}d_with_indices")(t, 3, 2, 1)
        rv, ri = _maxpool_ref(to_np(t), nd, out, k, s, p, (1,) * nd, False)
        return [(v, rv), (i, ri)]
    return [Case(fn)]


def _adaptive_max_case(nd):
    def fn(fw, device):
        rng = np.random.default_rng(nd)
        shape = (2, 3) + (7, 6, 5)[:nd]
        t = fw.tensor(rng.permutation(int(np.prod(shape))).reshape(shape) * 0.5,
                      dtype=fw.float32, device=device)
        out = (3, 4, 2)[:nd]
        v, i = getattr(fw.nn.functional, f"adaptive_max_pool{nd}d_with_indices")(t, out)
        rv, ri = _maxpool_ref(to_np(t), nd, out, (1,) * nd, (1,) * nd, (0,) * nd, (1,) * nd,
                              True)
        return [(v, rv), (i, ri)]
    return [Case(fn)]


def _dropout_case(add):
    """_fused_dropout(_add) at p = 0 (identity), p = 1 (zeros) and p = 0.5, whose mask is
    read back from the same call on ones (tests/nn/test_dropout_fused.py checks the mask
    itself against a Philox reference)."""
    def fn(fw, device):
        rng = np.random.default_rng(3)
        x = fw.tensor(rng.standard_normal((5, 7)), dtype=fw.float32, device=device)
        r = fw.tensor(rng.standard_normal((5, 7)), dtype=fw.float32, device=device)
        xn = to_np(x).astype(np.float64)
        rn = to_np(r).astype(np.float64) if add else 0.0
        out = []
        for p in (0.0, 1.0, 0.5):
            got = fw._fused_dropout_add(x, r, p, 5, 9) if add else fw._fused_dropout(x, p, 5, 9)
            m = to_np(fw._fused_dropout(fw.ones(5, 7, device=device), p, 5, 9))
            out.append((got, rn + xn * m))
        return out
    return [Case(fn)]


def _embedding_cases():
    """embedding: rows at int32/int64 indices of every shape (0-d, empty, 2-d, odd D);
    embedding_dense_backward: grad rows summed per index, with padding_idx (in and out of
    the table) and scale_grad_by_freq (tests/nn/test_embedding_fused.py checks both against
    torch)."""
    def forward(fw, device):
        rng = np.random.default_rng(4)
        out = []
        for ishape, idt in (((), fw.int64), ((20,), fw.int32), ((4, 7), fw.int64),
                            ((0,), fw.int64)):
            idx = rng.integers(0, 11, ishape)
            for wdt in (fw.float32, fw.float64):
                w = fw.tensor(rng.standard_normal((11, 33)), dtype=wdt, device=device)
                got = fw.embedding(w, fw.tensor(idx, dtype=idt, device=device))
                out.append((got, to_np(w).astype(np.float64)[idx]))
        return out

    def backward(fw, device):
        rng = np.random.default_rng(5)
        out = []
        for ishape, pad, scale in (((3, 9), -1, False), ((30,), 2, True), ((0,), 1, True),
                                   ((), 20, False)):
            idx = rng.integers(0, 6, ishape)
            g = rng.standard_normal(ishape + (5,))
            flat = idx.reshape(-1)
            ref = np.zeros((6, 5))
            np.add.at(ref, flat, g.reshape(flat.size, 5))
            if scale:
                ref /= np.maximum(np.bincount(flat, minlength=6), 1)[:, None]
            if 0 <= pad < 6:
                ref[pad] = 0
            got = fw.embedding_dense_backward(fw.tensor(g, device=device),
                                              fw.tensor(idx, device=device), 6, pad, scale)
            out.append((got, ref))
        return out
    return {"embedding": [Case(forward)], "embedding_dense_backward": [Case(backward)]}


CASES = {
    "_fused_dropout": _dropout_case(False),
    "_fused_dropout_add": _dropout_case(True),
    "softmax": _softmax_case("softmax", False),
    "log_softmax": _softmax_case("log_softmax", True),
    "_softmax_backward_data": _softmax_backward_case(),
    **{f"nn.functional.max_pool{n}d_with_indices": _max_pool_case(n) for n in (1, 2, 3)},
    **{f"nn.functional.adaptive_max_pool{n}d_with_indices": _adaptive_max_case(n)
       for n in (1, 2, 3)},
    **_embedding_cases(),
}
