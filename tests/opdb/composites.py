"""Cases for the composite ops (framework/_ops/composites.py, histogram.py, view_scatter.py,
view_copies.py) against NumPy: float64 references, int and bool inputs where the op takes
them, strided and transposed inputs, empty and 0-d inputs."""
import itertools

import numpy as np

from helpers import make
from opdb import Case

F64 = np.float64


def _in(fw, d, shape, dtype=None, kind="contig", seed=0, low=-5, high=5):
    """A tensor and its NumPy value: contiguous, strided or transposed (2-d)."""
    dtype = dtype or fw.float64
    if kind == "transposed":
        t, a = make(tuple(reversed(shape)), dtype, d, low, high, seed=seed)
        return t.t(), a.T
    return make(shape, dtype, d, low, high, noncontig=kind == "strided", seed=seed)


KINDS = ("contig", "strided", "transposed")


def _pairs(got, ref):
    return [(g, r) for g, r in zip(got, ref)]


def _diff(fw, d):
    out = []
    for k, kind in enumerate(KINDS):
        x, a = _in(fw, d, (4, 6), kind=kind, seed=k)
        for n, dim in ((1, -1), (2, 0), (3, 1), (0, 0), (9, 1)):
            out.append((x.diff(n, dim), np.diff(a, n, dim)))
        i, b = _in(fw, d, (3, 5), fw.int32, kind, seed=k)
        out.append((fw.diff(i, dim=0), np.diff(b, axis=0)))
        p, e = _in(fw, d, (4, 2), seed=9)
        out.append((fw.diff(x, prepend=p, append=p), np.diff(a, prepend=e, append=e)))
    bl, c = _in(fw, d, (7,), fw.bool)
    out.append((fw.diff(bl), np.diff(c)))
    out.append((fw.diff(fw.zeros(0, 3, device=d), dim=0), np.zeros((0, 3))))
    return out


def _gradient(fw, d):
    out = []
    for k, kind in enumerate(KINDS):
        x, a = _in(fw, d, (5, 6), kind=kind, seed=k)
        out += _pairs(fw.gradient(x, dim=k % 2), [np.gradient(a, axis=k % 2)])
    for eo in (1, 2):
        out += _pairs(fw.gradient(x, spacing=[0.5, 2.0], edge_order=eo),
                      np.gradient(a, 0.5, 2.0, edge_order=eo))
        xs = np.cumsum(np.linspace(0.5, 1.5, 6))
        out += _pairs(fw.gradient(x, spacing=(fw.tensor(xs, device=d),), dim=1,
                                  edge_order=eo),
                      [np.gradient(a, xs, axis=1, edge_order=eo)])
    i, b = _in(fw, d, (4,), fw.int64)
    out += _pairs(fw.gradient(i, spacing=3.0), [np.gradient(b.astype(F64), 3.0)])
    return out


def _trapz_ref(a, x=None, dx=1.0, axis=-1, cumulative=False):
    a = np.moveaxis(np.asarray(a, F64), axis, -1)
    if x is None:
        w = np.full(a.shape[-1] - 1 if a.shape[-1] else 0, dx)
    else:
        w = np.diff(np.moveaxis(np.asarray(x, F64), axis, -1) if np.ndim(x) > 1 else x)
    terms = (a[..., 1:] + a[..., :-1]) * w / 2
    res = np.cumsum(terms, -1) if cumulative else terms.sum(-1)
    return np.moveaxis(res, -1, axis) if cumulative else res


def _trapezoid_cases(name, cumulative=False):
    def fn(fw, d):
        op = getattr(fw, name)
        out = []
        for k, kind in enumerate(KINDS):
            y, a = _in(fw, d, (4, 6), kind=kind, seed=k)
            xs = np.cumsum(np.linspace(0.5, 1.5, 6))
            out.append((op(y), _trapz_ref(a, cumulative=cumulative)))
            out.append((op(y, fw.tensor(xs, device=d)), _trapz_ref(a, xs, cumulative=cumulative)))
            out.append((op(y, dx=0.5, dim=0), _trapz_ref(a, dx=0.5, axis=0,
                                                           cumulative=cumulative)))
            out.append((op(y, y * 2, dim=0), _trapz_ref(a, a * 2, axis=0,
                                                          cumulative=cumulative)))
        i, b = _in(fw, d, (3, 4), fw.int16)
        out.append((op(i), _trapz_ref(b, cumulative=cumulative)))
        if not cumulative:
            out.append((op(fw.zeros(3, 0, device=d)), np.zeros(3)))
        return out
    return [Case(fn)]


def _cov(fw, d):
    out = []
    for k, kind in enumerate(KINDS):
        x, a = _in(fw, d, (3, 7), kind=kind, seed=k)
        out.append((fw.cov(x), np.cov(a)))
    fwt = np.array([1, 2, 0, 3, 1, 1, 2])
    awt = np.linspace(0.1, 1, 7)
    out.append((x.cov(correction=0), np.cov(a, ddof=0)))
    out.append((fw.cov(x, fweights=fw.tensor(fwt, device=d)), np.cov(a, fweights=fwt)))
    out.append((fw.cov(x, aweights=fw.tensor(awt, device=d)), np.cov(a, aweights=awt)))
    out.append((fw.cov(x, correction=2, fweights=fw.tensor(fwt, device=d),
                       aweights=fw.tensor(awt, device=d)),
                np.cov(a, ddof=2, fweights=fwt, aweights=awt)))
    i, b = _in(fw, d, (2, 5), fw.int32)
    out.append((fw.cov(i), np.cov(b)))
    out.append((fw.cov(i[0]), np.cov(b[0])))
    return out


def _corrcoef(fw, d):
    out = []
    for k, kind in enumerate(KINDS):
        x, a = _in(fw, d, (3, 7), kind=kind, seed=k)
        out.append((x.corrcoef(), np.corrcoef(a)))
    i, b = _in(fw, d, (6,), fw.int64)
    out.append((fw.corrcoef(i), np.corrcoef(b)))
    return out


def _cdist(fw, d):
    out = []
    x, a = _in(fw, d, (2, 3, 5), seed=1)
    y, b = _in(fw, d, (2, 4, 5), seed=2)
    diff = a[:, :, None, :] - b[:, None, :, :]
    for p in (0.0, 1.0, 2.0, 3.5, np.inf):
        if p == 0:
            ref = (diff != 0).sum(-1).astype(F64)
        elif p == np.inf:
            ref = np.abs(diff).max(-1)
        else:
            ref = (np.abs(diff) ** p).sum(-1) ** (1 / p)
        out.append((fw.cdist(x, y, p), ref))
    out.append((fw.cdist(x, y, compute_mode="use_mm_for_euclid_dist"),
                np.sqrt((diff ** 2).sum(-1))))
    t, e = _in(fw, d, (5, 3), kind="transposed")
    out.append((fw.cdist(t, t), np.sqrt(((e[:, None] - e[None]) ** 2).sum(-1))))
    return out


def _dist(fw, d):
    x, a = _in(fw, d, (4, 5), kind="strided")
    y, b = _in(fw, d, (5,), seed=1)
    return [(fw.dist(x, y), np.linalg.norm((a - b).ravel())),
            (x.dist(y, 1), np.abs(a - b).sum()),
            (fw.dist(x, y, float("inf")), np.abs(a - b).max())]


def _addr(fw, d):
    out = []
    for k, kind in enumerate(KINDS):
        m, a = _in(fw, d, (4, 3), kind=kind, seed=k)
        u, b = _in(fw, d, (4,), seed=5)
        v, c = _in(fw, d, (3,), seed=6)
        out.append((fw.addr(m, u, v), a + np.outer(b, c)))
        out.append((m.addr(u, v, beta=0.5, alpha=2), 0.5 * a + 2 * np.outer(b, c)))
        out.append((fw.addr(m[0], u, v, beta=0), np.outer(b, c)))
    i, e = _in(fw, d, (2, 3), fw.int64)
    out.append((fw.addr(i, i[:, 0], i[0], beta=2, alpha=3), 2 * e + 3 * np.outer(e[:, 0], e[0])))
    return out


def _inner(fw, d):
    x, a = _in(fw, d, (4, 5), kind="transposed")
    y, b = _in(fw, d, (2, 3, 5), seed=1)
    i, e = _in(fw, d, (3, 4), fw.int32)
    return [(fw.inner(x, y), np.inner(a, b)), (x.inner(x), np.inner(a, a)),
            (fw.inner(i, i), np.inner(e, e)),
            (fw.inner(x, fw.tensor(2.0, dtype=fw.float64, device=d)), a * 2)]


def _cross(fw, d):
    x, a = _in(fw, d, (4, 3), kind="strided")
    y, b = _in(fw, d, (4, 3), seed=1)
    i, e = _in(fw, d, (3, 5), fw.int64)
    return [(fw.cross(x, y, dim=1), np.cross(a, b)), (x.cross(y, -1), np.cross(a, b)),
            (fw.cross(i, i.flip(1), dim=0), np.cross(e, e[:, ::-1], axis=0)),
            (fw.cross(x, y[:1], dim=1), np.cross(a, b[:1]))]


def _vander(fw, d):
    x, a = _in(fw, d, (5,), kind="strided")
    i, e = _in(fw, d, (4,), fw.int8)
    return [(fw.vander(x), np.vander(a)), (fw.vander(x, 3, True), np.vander(a, 3, True)),
            (fw.vander(i), np.vander(e.astype(np.int64))),
            (fw.vander(x, 0), np.zeros((5, 0)))]


def _combinations(fw, d):
    out = []
    x, a = _in(fw, d, (5,), kind="strided")
    for r, rep in ((2, False), (3, False), (2, True), (1, False), (6, False)):
        gen = itertools.combinations_with_replacement if rep else itertools.combinations
        ref = np.array([list(c) for c in gen(a, r)]).reshape(-1, r)
        out.append((fw.combinations(x, r, rep), ref))
    i, e = _in(fw, d, (3,), fw.int16)
    out.append((fw.combinations(i), np.array([list(c) for c in itertools.combinations(e, 2)])))
    return out


def _int_pair(fw, d, dtype, kind="contig"):
    # small enough that no lcm overflows the 8-bit types (where NumPy and PyTorch differ)
    big = dtype.itemsize > 1
    x, a = _in(fw, d, (3, 6), dtype, kind, low=-30 if big else -10, high=30 if big else 10)
    y, b = _in(fw, d, (6,), dtype, seed=1, low=-12 if big else -5, high=12 if big else 5)
    return x, a, y, b


def _gcd_lcm(name, ref):
    def fn(fw, d):
        out = []
        for k, dt in enumerate((fw.int64, fw.int16, fw.uint8)):
            x, a, y, b = _int_pair(fw, d, dt, KINDS[k % 2])
            res = getattr(fw, name)(x, y)
            out.append((res, ref(a, b).astype(a.dtype)))
        z = x.clone()
        getattr(z, name + "_")(y)
        out.append((z, ref(a, b).astype(a.dtype)))
        return out
    return [Case(fn)]


def _frexp(fw, d):
    out = []
    vals = np.array([0.0, -3.0, 1e-40, np.inf, -np.inf, 1.0, 0.5, -0.0, 7.9, 1e30, 3e-39])
    for dt, np_dt in ((fw.float32, np.float32), (fw.float64, F64), (fw.float16, np.float16)):
        v = vals.astype(np_dt)
        m, e = fw.frexp(fw.tensor(v, device=d))
        rm, re = np.frexp(v)
        out += [(m, rm), (e, re.astype(np.int32))]
    x, a = _in(fw, d, (4, 5), kind="transposed")
    m, e = x.frexp()
    rm, re = np.frexp(a)
    out += [(m, rm), (e, re.astype(np.int32))]
    return out


def _fill(fw, d):
    x, a = _in(fw, d, (3, 4), kind="strided")
    i, _ = _in(fw, d, (2,), fw.int32)
    return [(fw.fill(x, 2.5), np.full((3, 4), 2.5)),
            (fw.fill(i, fw.tensor(3.7, device=d)), np.full(2, 3, np.int32)),
            (fw.fill(fw.zeros(0, device=d), 1), np.zeros(0))]


def _isin(fw, d):
    out = []
    for dt in (fw.int64, fw.uint8, fw.float32):
        x, a = _in(fw, d, (4, 5), dt, "strided", low=0, high=9)
        t, b = _in(fw, d, (3,), dt, seed=1, low=0, high=9)
        out.append((fw.isin(x, t), np.isin(a, b)))
    out.append((fw.isin(x, t, invert=True), np.isin(a, b, invert=True)))
    x, a = _in(fw, d, (6,), fw.int32, low=0, high=5)
    out.append((fw.isin(x, 3), np.isin(a, 3)))
    out.append((fw.isin(3, x), np.isin(3, a)))
    out.append((fw.isin(x, fw.tensor([1.5, 2.0], device=d)), np.isin(a, [1.5, 2.0])))
    out.append((fw.isin(x, fw.zeros(0, dtype=fw.int32, device=d)), np.zeros(6, bool)))
    return out


def _histogram(fw, d):
    out = []
    for k, (bins, rng) in enumerate(((4, None), (7, (-2.0, 3.0)), (5, None))):
        x, a = _in(fw, d, (5, 8), kind=KINDS[k], seed=k)
        h, e = fw.histogram(x, bins, range=rng)
        rh, re = np.histogram(a, bins, range=rng)
        out += [(h, rh.astype(F64)), (e, re)]
    w, wa = _in(fw, d, (5, 8), seed=7, low=0, high=2)
    h, e = x.histogram(fw.tensor([-4.0, -1.0, 0.0, 2.5, 5.0], dtype=fw.float64, device=d),
                       weight=w, density=True)
    rh, re = np.histogram(a, [-4.0, -1.0, 0.0, 2.5, 5.0], weights=wa, density=True)
    out += [(h, rh), (e, re)]
    h, e = fw.histogram(fw.ones(3, dtype=fw.float32, device=d), 3)
    rh, re = np.histogram(np.ones(3), 3)
    out += [(h, rh.astype(F64)), (e, re)]
    h, e = fw.histogram(fw.zeros(0, device=d), 2)
    out += [(h, np.zeros(2)), (e, np.array([0.0, 0.5, 1.0]))]
    return out


def _histogramdd(fw, d):
    out = []
    x, a = _in(fw, d, (20, 2), seed=3)
    h, es = fw.histogramdd(x, [3, 4])
    rh, res = np.histogramdd(a, [3, 4])
    out += [(h, rh)] + _pairs(es, res)
    w, wa = _in(fw, d, (20,), seed=4, low=0, high=2)
    h, es = fw.histogramdd(x, 3, range=[-1.0, 1.0, -2.0, 2.0], weight=w, density=True)
    rh, res = np.histogramdd(a, 3, range=[(-1, 1), (-2, 2)], weights=wa, density=True)
    out += [(h, rh)] + _pairs(es, res)
    b0, b1 = np.array([-5.0, 0.0, 5.0]), np.array([-3.0, 1.0, 2.0, 3.0])
    y, c = _in(fw, d, (2, 5, 3), seed=5)
    h, es = fw.histogramdd(y, [fw.tensor(b0, device=d), fw.tensor(b1, device=d),
                               fw.tensor(b0, device=d)])
    rh, res = np.histogramdd(c.reshape(-1, 3), [b0, b1, b0])
    out += [(h, rh)] + _pairs(es, res)
    return out


_METHODS = {"linear": "linear", "lower": "lower", "higher": "higher", "midpoint": "midpoint",
            "nearest": "nearest"}


def _quantile_cases(name):
    np_fn = getattr(np, name)

    def fn(fw, d):
        out = []
        op = getattr(fw, name)
        q = np.array([0.0, 0.25, 0.5, 0.9, 1.0])
        for k, kind in enumerate(KINDS):
            x, a = _in(fw, d, (5, 6), kind=kind, seed=k)
            if name == "nanquantile" or k == 2:
                a = a.copy()
                a[a > 3] = np.nan
                x = fw.tensor(a, device=d)
            out.append((op(x, 0.3, dim=k % 2), np_fn(a, 0.3, axis=k % 2)))
        out.append((op(x, 0.7), np_fn(a, 0.7)))
        methods = list(_METHODS) if name == "quantile" else ["lower", "midpoint"]
        for k, interp in enumerate(methods):
            out.append((op(x, fw.tensor(q, device=d), dim=k % 2, keepdim=True,
                           interpolation=interp),
                        np_fn(a, q, axis=k % 2, keepdims=True, method=interp)))
        out.append((op(fw.tensor(2.5, device=d), 0.5), np.float64(2.5)))
        f, g = _in(fw, d, (7,), fw.float32)
        out.append((op(f, fw.tensor([0.2, 0.8], device=d)), np_fn(g.astype(F64), [0.2, 0.8])))
        return out
    return [Case(fn)]


def _slice_ref(a, src, dim, start, end, step):
    r = a.copy()
    key = [slice(None)] * a.ndim
    key[dim] = slice(start, end, step)
    r[tuple(key)] = src
    return r


def _slice_scatter(fw, d):
    out = []
    for k, kind in enumerate(KINDS):
        x, a = _in(fw, d, (4, 6), kind=kind, seed=k)
        s, b = _in(fw, d, (4, 3), seed=5)
        out.append((fw.slice_scatter(x, s, 1, 0, 6, 2), _slice_ref(a, b, 1, 0, 6, 2)))
        out.append((x.slice_scatter(x[:2] * 2, 0, -2), _slice_ref(a, a[:2] * 2, 0, -2, None, 1)))
    i, e = _in(fw, d, (3, 4), fw.int32)
    out.append((fw.slice_scatter(i, i[:1] * 2, 0, 1, 2), _slice_ref(e, e[:1] * 2, 0, 1, 2, 1)))
    return out


def _select_scatter(fw, d):
    out = []
    for k, kind in enumerate(KINDS):
        x, a = _in(fw, d, (4, 6), kind=kind, seed=k)
        r = a.copy()
        r[:, -1] = a[:, 0] * 3
        out.append((fw.select_scatter(x, x[:, 0] * 3, 1, -1), r))
    b, c = _in(fw, d, (3,), fw.bool)
    r = np.zeros((2, 3), bool)
    r[1] = c
    out.append((fw.zeros(2, 3, dtype=fw.bool, device=d).select_scatter(b, 0, 1), r))
    return out


def _diagonal_scatter(fw, d):
    out = []
    for k, kind in enumerate(KINDS):
        x, a = _in(fw, d, (4, 6), kind=kind, seed=k)
        for off in (0, 2, -1):
            n = len(np.diagonal(a, off))
            s, b = _in(fw, d, (n,), seed=9)
            r = a.copy()
            rows = np.arange(n) + max(-off, 0)
            r[rows, rows + off] = b
            out.append((fw.diagonal_scatter(x, s, off), r))
    y, c = _in(fw, d, (2, 3, 4), seed=3)
    r = c.copy()
    for i in range(3):
        r[:, i, i] = 1.0
    out.append((y.diagonal_scatter(fw.ones(2, 3, dtype=fw.float64, device=d), 0, 1, 2), r))
    return out


def _as_strided_scatter(fw, d):
    out = []
    x, a = _in(fw, d, (4, 6))
    s, b = _in(fw, d, (2, 2), seed=1)
    r = a.copy().ravel()
    r[[1, 3, 7, 9]] = b.ravel()
    out.append((fw.as_strided_scatter(x, s, (2, 2), (6, 2), 1), r.reshape(4, 6)))
    r = a.copy().ravel()
    r[[0, 5]] = b[0]
    out.append((x.as_strided_scatter(s[0], (2,), (5,)), r.reshape(4, 6)))
    # a transposed input keeps its layout in the copy, and the strides read that layout
    t = x.t()
    r = a.copy().ravel()
    r[[2, 3]] = b[1]
    out.append((fw.as_strided_scatter(t, s[1], (2,), (1,), 2), r.reshape(4, 6).T))
    return out


def _index_reduce(fw, d):
    out = []
    src, b = _in(fw, d, (3, 6), seed=7)
    idx = np.array([0, 2, 0])
    for k, red in enumerate(("prod", "mean", "amax", "amin")):
        x, a = _in(fw, d, (4, 6), kind=KINDS[k % 3], seed=k)
        for inc in (True, False):
            r = a.copy()
            groups = {j: ([a[j]] if inc else []) + [b[n] for n in range(3) if idx[n] == j]
                      for j in set(idx.tolist())}
            for j, vals in groups.items():
                v = np.stack(vals)
                r[j] = {"prod": v.prod(0), "mean": v.mean(0), "amax": v.max(0),
                        "amin": v.min(0)}[red]
            got = fw.index_reduce(x, 0, fw.tensor(idx, device=d), src, red, include_self=inc)
            out.append((got, r))
    i, e = _in(fw, d, (2, 5), fw.int64)
    got = i.clone().index_reduce_(1, fw.tensor([4, 4], dtype=fw.int32, device=d), i[:, :2],
                                  "amax")
    r = e.copy()
    r[:, 4] = np.maximum(e[:, 4], np.maximum(e[:, 0], e[:, 1]))
    out.append((got, r))
    return out


def _split_cases(name, np_name):
    def fn(fw, d):
        out = []
        x, a = _in(fw, d, (4, 6, 4), kind="strided")
        for ios in (2, [1, 3], [3, 1]):
            if name == "tensor_split":
                got = fw.tensor_split(x, ios, 1)
                ref = np.array_split(a, ios, 1)
            else:
                got = getattr(fw, name)(x, ios)
                ref = getattr(np, np_name)(a, ios)
            out += _pairs(got, ref)
        if name == "tensor_split":
            out += _pairs(x.tensor_split(3, -1), np.array_split(a, 3, -1))
            out += _pairs(fw.tensor_split(x, fw.tensor([1, 5]), 1), np.array_split(a, [1, 5], 1))
            out += _pairs(fw.tensor_split(x, fw.tensor(3)), np.array_split(a, 3))
        return out
    return [Case(fn)]


def _copy_case(name, fn_np, call):
    def fn(fw, d):
        out = []
        for k, kind in enumerate(KINDS):
            x, a = _in(fw, d, (4, 6), kind=kind, seed=k)
            got = call(fw, x)
            ref = fn_np(a)
            if isinstance(got, (list, tuple)):
                assert all(g.is_contiguous() for g in got)
                out += _pairs(got, ref)
            else:
                assert got.is_contiguous() and got._storage is not x._storage
                out.append((got, ref))
        return out
    return [Case(fn)]


def _strided_ref(a, size, stride, offset):
    flat = np.ascontiguousarray(a).ravel()
    return np.lib.stride_tricks.as_strided(flat[offset:], size,
                                           [s * flat.itemsize for s in stride]).copy()


CASES = {
    "diff": [Case(_diff)],
    "gradient": [Case(_gradient)],
    "trapezoid": _trapezoid_cases("trapezoid"),
    "trapz": _trapezoid_cases("trapz"),
    "cumulative_trapezoid": _trapezoid_cases("cumulative_trapezoid", True),
    "cov": [Case(_cov)],
    "corrcoef": [Case(_corrcoef)],
    "cdist": [Case(_cdist)],
    "dist": [Case(_dist)],
    "addr": [Case(_addr)],
    "inner": [Case(_inner)],
    "cross": [Case(_cross)],
    "vander": [Case(_vander)],
    "combinations": [Case(_combinations)],
    "gcd": _gcd_lcm("gcd", np.gcd),
    "lcm": _gcd_lcm("lcm", np.lcm),
    "frexp": [Case(_frexp)],
    "fill": [Case(_fill)],
    "isin": [Case(_isin)],
    "histogram": [Case(_histogram)],
    "histogramdd": [Case(_histogramdd)],
    "quantile": _quantile_cases("quantile"),
    "nanquantile": _quantile_cases("nanquantile"),
    "slice_scatter": [Case(_slice_scatter)],
    "select_scatter": [Case(_select_scatter)],
    "diagonal_scatter": [Case(_diagonal_scatter)],
    "as_strided_scatter": [Case(_as_strided_scatter)],
    "index_reduce": [Case(_index_reduce)],
    "tensor_split": _split_cases("tensor_split", "array_split"),
    "hsplit": _split_cases("hsplit", "hsplit"),
    "vsplit": _split_cases("vsplit", "vsplit"),
    "dsplit": _split_cases("dsplit", "dsplit"),
    "view_copy": _copy_case("view_copy", lambda a: a.reshape(-1),
                            lambda fw, x: fw.view_copy(x.contiguous(), [-1])),
    "permute_copy": _copy_case("permute_copy", lambda a: a.T,
                               lambda fw, x: fw.permute_copy(x, (1, 0))),
    "transpose_copy": _copy_case("transpose_copy", lambda a: a.T,
                                 lambda fw, x: fw.transpose_copy(x, 0, -1)),
    "t_copy": _copy_case("t_copy", lambda a: a.T, lambda fw, x: fw.t_copy(x)),
    "expand_copy": _copy_case("expand_copy", lambda a: np.broadcast_to(a[:1], (3, 4, 6))[:, 0],
                              lambda fw, x: fw.expand_copy(x[:1], (3, 1, 6))[:, 0]),
    "diagonal_copy": _copy_case("diagonal_copy", lambda a: np.diagonal(a, 1),
                                lambda fw, x: fw.diagonal_copy(x, 1)),
    "select_copy": _copy_case("select_copy", lambda a: a[:, 2],
                              lambda fw, x: fw.select_copy(x, 1, 2)),
    "slice_copy": _copy_case("slice_copy", lambda a: a[:, 1::2],
                             lambda fw, x: fw.slice_copy(x, 1, 1, None, 2)),
    "narrow_copy": _copy_case("narrow_copy", lambda a: a[:, 1:4],
                              lambda fw, x: x.narrow_copy(1, 1, 3)),
    "unsqueeze_copy": _copy_case("unsqueeze_copy", lambda a: a[:, None],
                                 lambda fw, x: fw.unsqueeze_copy(x, 1)),
    "squeeze_copy": _copy_case("squeeze_copy", lambda a: a,
                               lambda fw, x: fw.squeeze_copy(x.unsqueeze(0), [0, 2])),
    "unfold_copy": _copy_case("unfold_copy",
                              lambda a: np.stack([a[:, j:j + 2] for j in range(0, 5, 2)], 1),
                              lambda fw, x: fw.unfold_copy(x, 1, 2, 2)),
    "as_strided_copy": _copy_case("as_strided_copy",
                                  lambda a: _strided_ref(a, (2, 2), (1, 2), 1),
                                  lambda fw, x: fw.as_strided_copy(x.contiguous(), (2, 2),
                                                                   (1, 2), 1)),
    "alias_copy": _copy_case("alias_copy", lambda a: a, lambda fw, x: fw.alias_copy(x)),
    "detach_copy": _copy_case("detach_copy", lambda a: a, lambda fw, x: fw.detach_copy(x)),
    "split_copy": _copy_case("split_copy", lambda a: np.split(a, [4], 1),
                             lambda fw, x: fw.split_copy(x, 4, 1)),
    "split_with_sizes_copy": _copy_case("split_with_sizes_copy", lambda a: np.split(a, [1]),
                                        lambda fw, x: fw.split_with_sizes_copy(x, [1, 3])),
    "unbind_copy": _copy_case("unbind_copy", lambda a: list(a.T),
                              lambda fw, x: fw.unbind_copy(x, 1)),
}
