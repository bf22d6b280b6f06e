"""Cases for the sort family against NumPy: every dim, 0-d, empty, strided inputs,
duplicates and NaNs, over int, bool and float dtypes."""
import collections

import numpy as np

from helpers import to_np, FLOAT_DTYPES, INT_DTYPES
from opdb import Case

SHAPES = [(), (0,), (1,), (7,), (3, 5), (4, 0, 3), (2, 3, 4), (33, 2)]


def sample(fw, device, shape, dtype, layout=0, nan=False, seed=0, low=-3, high=4):
    """A tensor with many duplicates (and NaNs if asked) and its NumPy value. layout 0:
    contiguous, 1: every other element of the last dim, 2: a transposed view."""
    rng = np.random.default_rng(seed)
    if dtype is fw.bool:
        a = np.asarray(rng.random(shape) > 0.5)
    elif dtype is fw.uint8:
        a = np.asarray(rng.integers(0, high - low, shape))
    else:
        kind = np.float64 if dtype.is_floating_point else np.int64
        a = np.asarray(rng.integers(low, high, shape), kind)
        if dtype.is_floating_point:
            a = np.asarray(a + rng.choice([0.0, 0.25, 0.5], shape))
            if nan and a.size:
                a[rng.random(shape) < 0.2] = np.nan
    if layout == 1 and len(shape) >= 1:
        big = np.zeros(tuple(shape[:-1]) + (shape[-1] * 2,), a.dtype)
        big[..., ::2] = a
        t = fw.tensor(big, dtype=dtype, device=device)[..., ::2]
    elif layout == 2 and len(shape) >= 2:
        t = fw.tensor(np.ascontiguousarray(np.swapaxes(a, 0, -1)), dtype=dtype, device=device)
        t = t.transpose(0, -1)
    else:
        t = fw.tensor(a, dtype=dtype, device=device)
    return t, to_np(t)


def inputs(fw, device, dtypes, shapes=SHAPES, nan=True):
    """(tensor, array, dim) over shapes, layouts and every dim (and -1)."""
    out = []
    for dt in dtypes:
        for i, shape in enumerate(shapes):
            layout = i % 3
            t, a = sample(fw, device, shape, dt, layout, nan=nan, seed=i)
            for d in list(range(len(shape))) + [-1]:
                out.append((t, a, d))
    return out


def along(a, d, f, reduce=False):
    """Applies f to every 1-d row of ``a`` along axis ``d``: f returns a row of the same
    length, or (reduce=True) a number that replaces the axis."""
    a = np.asarray(a)
    if a.ndim == 0:
        return np.asarray(f(a.reshape(1))).reshape(())
    m = np.moveaxis(a, d, -1)
    if a.size == 0:
        res = np.zeros(m.shape[:-1] if reduce else m.shape, np.int64)
        return res if reduce else np.moveaxis(res, -1, d)
    res = np.array([f(r) for r in m.reshape(-1, m.shape[-1])])
    if reduce:
        return res.reshape(m.shape[:-1])
    return np.moveaxis(res.reshape(m.shape), -1, d)


def stable_desc(r):
    n = len(r)
    return (n - 1 - np.argsort(r[::-1], kind="stable"))[::-1]


def dtypes_of(fw, kinds):
    out = []
    if "b" in kinds:
        out.append(fw.bool)
    if "i" in kinds:
        out += INT_DTYPES
    if "f" in kinds:
        out += FLOAT_DTYPES
    return out


# ---- sort family ---------------------------------------------------------------------------

def _sort(fw, device):
    out = []
    for t, a, d in inputs(fw, device, dtypes_of(fw, "bif")):
        v, i = fw.sort(t, d)
        out += [(v, np.sort(a, axis=d) if a.ndim else a),
                (i, along(a, d, lambda r: np.argsort(r, kind="stable")))]
        v, i = t.sort(dim=d, descending=True, stable=True)
        ref = along(a, d, stable_desc)
        out += [(i, ref), (v, np.take_along_axis(a, ref, d) if a.ndim else a)]
    return out


def _argsort(fw, device):
    out = []
    for t, a, d in inputs(fw, device, dtypes_of(fw, "bif")):
        out.append((fw.argsort(t, d, stable=True), along(a, d, lambda r: np.argsort(r, kind="stable"))))
        out.append((t.argsort(d, True), along(a, d, stable_desc)))
    return out


def _msort(fw, device):
    return [(fw.msort(t), np.sort(a, axis=0) if a.ndim else a)
            for t, a, d in inputs(fw, device, dtypes_of(fw, "if"))
            if d == -1]


def _topk(fw, device):
    out = []
    for t, a, d in inputs(fw, device, dtypes_of(fw, "if")):
        n = a.shape[d] if a.ndim else 1
        for k in {0, min(1, n), n // 2, n}:
            for largest in (True, False):
                v, i = fw.topk(t, k, d, largest=largest)
                ref = np.sort(a, axis=d) if a.ndim else a
                if largest and a.ndim:
                    ref = np.flip(ref, d)
                ref = np.take(ref, np.arange(k), axis=d) if a.ndim else ref
                got = np.take_along_axis(a, to_np(i), d) if a.ndim else a
                out += [(v, ref), (got, ref)]
        v, i = t.topk(n // 2, d, sorted=False)
        got = np.sort(to_np(v), axis=d) if a.ndim else to_np(v)
        ref = np.take(np.sort(a, axis=d), np.arange(n - n // 2, n), axis=d) if a.ndim else a
        out.append((got, ref))
    return out


def _kth_ref(a, d, k):
    return np.take(np.sort(a, axis=d), k, axis=d) if a.ndim else a


def _kthvalue(fw, device):
    out = []
    for t, a, d in inputs(fw, device, dtypes_of(fw, "if")):
        n = a.shape[d] if a.ndim else 1
        if n == 0:
            continue
        for k in {1, (n + 1) // 2, n}:
            v, i = fw.kthvalue(t, k, d)
            ref = _kth_ref(a, d, k - 1)
            got = np.take_along_axis(a, np.expand_dims(to_np(i), d), d).squeeze(d) if a.ndim else a
            out += [(v, ref), (got, ref)]
        v, i = t.kthvalue(n, d, keepdim=True)
        out.append((v, np.expand_dims(_kth_ref(a, d, n - 1), d) if a.ndim else a))
    return out


def _median_row(r, skip_nan):
    if skip_nan:
        r = r[~np.isnan(r)] if r.dtype.kind == "f" else r
        if r.size == 0:
            return np.nan
    elif r.dtype.kind == "f" and np.isnan(r).any():
        return np.nan
    return np.sort(r)[(len(r) - 1) // 2]


def _median_case(name, skip_nan):
    def fn(fw, device):
        out = []
        op = getattr(fw, name)
        for t, a, d in inputs(fw, device, dtypes_of(fw, "if")):
            if a.size:
                out.append((op(t), np.asarray(_median_row(a.reshape(-1), skip_nan))))
            n = a.shape[d] if a.ndim else 1
            if n == 0:
                continue
            v, i = op(t, d)
            ref = along(a, d, lambda r: _median_row(r, skip_nan), True)
            got = np.take_along_axis(a, np.expand_dims(to_np(i), d), d).squeeze(d) if a.ndim else a
            out += [(v, ref), (got, ref)]
            v, i = getattr(t, name)(d, keepdim=True)
            out.append((v, np.expand_dims(ref, d) if a.ndim else ref))
        # a float row that is all NaN: nanmedian gives NaN at index 0
        t = fw.tensor([[np.nan, np.nan], [1.0, np.nan]], device=device)
        v, i = op(t, 1)
        if skip_nan:
            out += [(v, np.array([np.nan, 1.0])), (i, np.array([0, 0]))]
        else:
            out += [(v, np.array([np.nan, np.nan])), (i, np.array([0, 1]))]
        out.append((op(fw.empty(0, device=device)), np.array(np.nan)))
        return out
    return [Case(fn)]


def _mode_row(r):
    cnt = collections.Counter(r.tolist())
    best = max(cnt.values())
    val = min(v for v, c in cnt.items() if c == best)
    return val, max(j for j, v in enumerate(r.tolist()) if v == val)


def _mode(fw, device):
    out = []
    for t, a, d in inputs(fw, device, dtypes_of(fw, "bif"), nan=False):
        n = a.shape[d] if a.ndim else 1
        if n == 0:
            continue
        v, i = fw.mode(t, d)
        out += [(v, along(a, d, lambda r: _mode_row(r)[0], True)),
                (i, along(a, d, lambda r: _mode_row(r)[1], True))]
    return out


# ---- scans ------------------------------------------------------------------------------

def _scan_case(name, ref, kinds, low=-3, high=4):
    def fn(fw, device):
        out = []
        for dt in dtypes_of(fw, kinds):
            for i, shape in enumerate(SHAPES):
                t, a = sample(fw, device, shape, dt, i % 3, nan=i == 4, seed=i, low=low, high=high)
                for d in list(range(len(shape))) + [-1]:
                    got = getattr(fw, name)(t, d)
                    exp = ref(a, d) if a.ndim else ref(a.reshape(1), 0).reshape(())
                    out.append((got, exp))
        return out
    return [Case(fn)]


def _cumsum_ref(a, d):
    return np.cumsum(a.astype(np.float64 if a.dtype.kind == "f" else np.int64), axis=d)


def _cumprod_ref(a, d):
    return np.cumprod(a.astype(np.float64 if a.dtype.kind == "f" else np.int64), axis=d)


def _logcumsumexp_ref(a, d):
    with np.errstate(invalid="ignore"):
        return np.logaddexp.accumulate(a.astype(np.float64), axis=d)


def _dtype_arg(fw, device):
    t = fw.tensor([1, 2, 3], dtype=fw.int8, device=device)
    return [(fw.cumsum(t, 0, dtype=fw.float16), np.array([1.0, 3.0, 6.0])),
            (fw.cumprod(t, 0, dtype=fw.int32), np.array([1, 2, 6])),
            (fw.cumsum(fw.tensor([100, 100], dtype=fw.int8, device=device), 0), np.array([100, 200]))]


def _cum_ext_row(r, is_max):
    vals, idx = [], []
    cur, at = r[0], 0
    for j, x in enumerate(r):
        isnan = r.dtype.kind == "f" and np.isnan(x)
        curnan = r.dtype.kind == "f" and np.isnan(cur)
        if isnan or (not curnan and ((x >= cur) if is_max else (x <= cur))):
            cur, at = x, j
        vals.append(cur)
        idx.append(at)
    return np.array(vals), np.array(idx)


def _cum_ext_case(name, is_max):
    def fn(fw, device):
        out = []
        for t, a, d in inputs(fw, device, dtypes_of(fw, "bif")):
            v, i = getattr(fw, name)(t, d)
            if a.size == 0:
                out += [(v, a), (i, np.zeros(a.shape, np.int64))]
                continue
            out += [(v, along(a, d, lambda r: _cum_ext_row(r, is_max)[0])),
                    (i, along(a, d, lambda r: _cum_ext_row(r, is_max)[1]))]
        return out
    return [Case(fn)]


# ---- unique -----------------------------------------------------------------------------

def _np_unique(a):
    kw = {"equal_nan": False} if a.dtype.kind == "f" else {}
    u, inv, cnt = np.unique(a.reshape(-1), return_inverse=True, return_counts=True, **kw)
    return u, inv.reshape(a.shape), cnt


def _unique(fw, device):
    out = []
    for t, a, d in inputs(fw, device, dtypes_of(fw, "bif")):
        if d != -1:
            continue
        u, inv, cnt = _np_unique(a)
        got = fw.unique(t, return_inverse=True, return_counts=True)
        out += [(got[0], u), (got[2], cnt), (t.unique(), u), (to_np(got[0])[to_np(got[1])], a)]
        if a.dtype.kind != "f":  # NumPy's order among NaNs is not stable
            out.append((got[1], inv))
    # unique slices along a dim
    for dt in dtypes_of(fw, "bif"):
        for shape in [(6, 3), (5, 2, 2), (0, 3), (4, 1)]:
            t, a = sample(fw, device, shape, dt, 2 if len(shape) > 1 else 0, low=-1, high=1)
            for d in range(len(shape)):
                if a.shape[d] == 0 or a.size:
                    u, inv, cnt = np.unique(a, axis=d, return_inverse=True, return_counts=True)
                    got = fw.unique(t, dim=d, return_inverse=True, return_counts=True)
                    out += [(got[0], u), (got[1], inv.reshape(-1)), (got[2], cnt)]
    return out


def _consecutive_ref(a, d=None):
    if d is None:
        rows = list(a.reshape(-1))
    else:
        rows = list(np.moveaxis(a, d, 0))
    keep, inv, cnt = [], [], []
    for j, r in enumerate(rows):
        if j == 0 or not np.array_equal(r, rows[j - 1]):
            keep.append(j)
            cnt.append(0)
        cnt[-1] += 1
        inv.append(len(keep) - 1)
    if d is None:
        vals = a.reshape(-1)[keep]
        inv = np.array(inv, np.int64).reshape(a.shape)
    else:
        vals = np.moveaxis(np.moveaxis(a, d, 0)[keep], 0, d)
        inv = np.array(inv, np.int64)
    return vals, inv, np.array(cnt, np.int64)


def _unique_consecutive(fw, device):
    out = []
    for t, a, d in inputs(fw, device, dtypes_of(fw, "bif"), shapes=[(), (0,), (9,), (4, 3)]):
        if d != -1:
            continue
        v, inv, cnt = _consecutive_ref(a)
        got = fw.unique_consecutive(t, return_inverse=True, return_counts=True)
        out += [(got[0], v), (got[1], inv), (got[2], cnt)]
    t = fw.tensor([[1, 1, 2, 2, 2], [1, 1, 3, 3, 2]], device=device)
    a = to_np(t)
    for d in (0, 1):
        v, inv, cnt = _consecutive_ref(a, d)
        got = t.unique_consecutive(return_inverse=True, return_counts=True, dim=d)
        out += [(got[0], v), (got[1], inv), (got[2], cnt)]
    return out


# ---- counting -----------------------------------------------------------------------------

def _bincount(fw, device):
    out = []
    rng = np.random.default_rng(0)
    for dt in INT_DTYPES:
        a = rng.integers(0, 9, 40)
        t = fw.tensor(a, dtype=dt, device=device)
        out.append((fw.bincount(t), np.bincount(a)))
        out.append((t[::3].bincount(minlength=20), np.bincount(a[::3], minlength=20)))
        for wdt in (fw.float32, fw.float64, fw.int64, fw.float16):
            w = rng.uniform(-1, 1, 40) if wdt.is_floating_point else rng.integers(-5, 5, 40)
            tw = fw.tensor(w, dtype=wdt, device=device)
            res = fw.bincount(t, tw)
            assert res.dtype is (fw.float32 if wdt is fw.float32 else fw.float64)
            out.append((res, np.bincount(a, to_np(tw).astype(np.float64))))
    out.append((fw.bincount(fw.tensor([], dtype=fw.int64, device=device)), np.zeros(0)))
    out.append((fw.bincount(fw.tensor([], dtype=fw.int64, device=device), minlength=3), np.zeros(3)))
    return out


def _histc(fw, device):
    out = []
    rng = np.random.default_rng(1)
    for dt in FLOAT_DTYPES:
        a = rng.uniform(-4, 4, (6, 7))
        t = fw.tensor(a, dtype=dt, device=device)
        a = to_np(t).astype(np.float64)
        out.append((fw.histc(t, 8, -4, 4), np.histogram(a, 8, (-4, 4))[0]))
        out.append((t.t().histc(bins=4, min=-2, max=2), np.histogram(a, 4, (-2, 2))[0]))
        out.append((fw.histc(t[:, ::2], 16), np.histogram(a[:, ::2], 16)[0]))
    t = fw.tensor([1.0, np.nan, 5.0, 3.0], device=device)
    out.append((fw.histc(t, 3, 0, 6), np.array([1.0, 1.0, 1.0])))
    out.append((fw.histc(fw.tensor([5.0], device=device), 3), np.array([0.0, 1.0, 0.0])))
    out.append((fw.histc(fw.empty(0, device=device), 2), np.zeros(2)))
    return out


def _searchsorted(fw, device):
    out = []
    rng = np.random.default_rng(2)
    for dt in INT_DTYPES + FLOAT_DTYPES:
        seq = np.sort(rng.integers(0, 10, 12))
        vals = rng.integers(-1, 12, (3, 5)) + (0.5 if dt.is_floating_point else 0)
        ts = fw.tensor(seq, dtype=dt, device=device)
        tv = fw.tensor(vals, dtype=dt, device=device)
        s, v = to_np(ts), to_np(tv)
        for right in (False, True):
            side = "right" if right else "left"
            out.append((fw.searchsorted(ts, tv, right=right), np.searchsorted(s, v, side)))
            out.append((fw.searchsorted(ts, tv.t(), side=side), np.searchsorted(s, v.T, side)))
            out.append((fw.searchsorted(ts[::2], tv, right=right, out_int32=True),
                        np.searchsorted(s[::2], v, side)))
        # N-d boundaries: one sorted row per row of values
        b2 = np.sort(rng.integers(0, 10, (3, 6)), axis=1)
        tb = fw.tensor(b2, dtype=dt, device=device)
        ref = np.stack([np.searchsorted(to_np(tb)[r], v[r]) for r in range(3)])
        out.append((fw.searchsorted(tb, tv), ref))
    seq = fw.tensor([5.0, 1.0, 3.0, 8.0], device=device)
    srt = fw.tensor([1, 2, 0, 3], device=device)
    q = fw.tensor([0.0, 1.0, 4.0, 9.0, np.nan], device=device)
    out.append((fw.searchsorted(seq, q, sorter=srt), np.array([0, 0, 2, 4, 4])))
    out.append((fw.searchsorted(seq, 3, sorter=srt, right=True), np.array(2)))
    ints = fw.tensor([1, 2, 3], device=device)
    out.append((fw.searchsorted(ints, fw.tensor([1.5, 2.0], device=device)), np.array([1, 1])))
    out.append((fw.searchsorted(seq, fw.empty(0, device=device)), np.zeros(0)))
    return out


def _bucketize(fw, device):
    out = []
    b = fw.tensor([1.0, 3.0, 5.0, 7.0], device=device)
    x, a = sample(fw, device, (4, 6), fw.float32, 2, low=0, high=9)
    bn = to_np(b)
    out.append((fw.bucketize(x, b), np.searchsorted(bn, a, "left")))
    out.append((fw.bucketize(x, b, right=True), np.searchsorted(bn, a, "right")))
    out.append((fw.bucketize(3, b), np.array(1)))
    out.append((fw.bucketize(fw.tensor(3, device=device), b, right=True, out_int32=True), np.array(2)))
    return out


CASES = {
    "sort": [Case(_sort)],
    "argsort": [Case(_argsort)],
    "msort": [Case(_msort)],
    "topk": [Case(_topk)],
    "kthvalue": [Case(_kthvalue)],
    "median": _median_case("median", False),
    "nanmedian": _median_case("nanmedian", True),
    "mode": [Case(_mode)],
    "cumsum": _scan_case("cumsum", _cumsum_ref, "bif") + [Case(_dtype_arg)],
    "cumprod": _scan_case("cumprod", _cumprod_ref, "bif", -2, 3),
    "logcumsumexp": _scan_case("logcumsumexp", _logcumsumexp_ref, "f"),
    "cummax": _cum_ext_case("cummax", True),
    "cummin": _cum_ext_case("cummin", False),
    "unique": [Case(_unique)],
    "unique_consecutive": [Case(_unique_consecutive)],
    "bincount": [Case(_bincount)],
    "histc": [Case(_histc)],
    "searchsorted": [Case(_searchsorted)],
    "bucketize": [Case(_bucketize)],
}
