"""Cases for the index family against NumPy references (fancy indexing, np.take_along_axis,
np.add.at, ...), over dtypes, strided inputs, duplicates, 0-d and empty tensors."""
import numpy as np

from helpers import make, ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES
from opdb import Case

NUM = INT_DTYPES + FLOAT_DTYPES


def _idx(fw, device, values):
    return fw.tensor(np.asarray(values, dtype=np.int64), device=device)


def _make_iv(shape, dt, device, noncontig=False, seed=None, low=-4, high=5):
    """Like make, with integer values so that sums are exact in every dtype."""
    fw = __import__("framework")
    if dt is fw.bool or dt is fw.uint8:
        return make(shape, dt, device, noncontig=noncontig, seed=seed)
    arr = np.random.default_rng(seed).integers(low, high, shape)
    if noncontig:
        big = np.zeros(tuple(shape[:-1]) + (shape[-1] * 2,), arr.dtype)
        big[..., ::2] = arr
        t = fw.tensor(big, dtype=dt, device=device)[..., ::2]
    else:
        t = fw.tensor(arr, dtype=dt, device=device)
    return t, arr


def _over(dtypes, body):
    """A Case running body(fw, device, dtype, noncontig) for each dtype and layout."""
    def fn(fw, device):
        out = []
        for i, dt in enumerate(dtypes):
            for nc in (False, True):
                out.extend(body(fw, device, dt, nc, i))
        return out
    return [Case(fn)]


def _index_select(fw, device, dt, nc, seed):
    t, a = make((4, 5), dt, device, noncontig=nc, seed=seed)
    idx = [3, 0, 3, 1]
    i64, i32 = _idx(fw, device, idx), _idx(fw, device, idx).int()
    out = fw.empty(0, dtype=dt, device=device)
    fw.index_select(t, 0, i64, out=out)
    e, ea = make((0, 3), dt, device)
    return [(fw.index_select(t, 1, i32), a[:, idx]), (t.index_select(0, i64), a[idx]),
            (out, a[idx]), (t.index_select(-1, _idx(fw, device, [])), a[:, []]),
            (fw.index_select(e, 1, _idx(fw, device, [2, 0])), ea[:, [2, 0]])]


def _gather(fw, device, dt, nc, seed):
    t, a = make((3, 4), dt, device, noncontig=nc, seed=seed)
    i0 = np.array([[2, 0, 1, 1], [0, 0, 2, 1]])
    i1 = np.array([[3, 3], [0, 1], [2, 2]])
    idx_t = fw.tensor(i1.T.copy(), device=device).t()   # a transposed index
    return [(fw.gather(t, 0, _idx(fw, device, i0)), np.take_along_axis(a, i0, 0)),
            (t.gather(1, idx_t), np.take_along_axis(a, i1, 1)),
            (fw.gather(t, -1, _idx(fw, device, i1[:2, :1]).int()),
             np.take_along_axis(a[:2], i1[:2, :1], 1))]


def _scatter_ref(a, dim, idx, src, op=None):
    ref = a.astype(np.float64).copy()
    for pos in np.ndindex(*idx.shape):
        tgt = list(pos)
        tgt[dim] = idx[pos]
        v = src if np.isscalar(src) else src[pos]
        if op is None:
            ref[tuple(tgt)] = v
        elif op == "add":
            ref[tuple(tgt)] += v
        else:
            ref[tuple(tgt)] *= v
    return ref


# a permutation-free index (no duplicates along dim 0) so plain scatter is deterministic
_SC_IDX = np.array([[1, 0, 2, 2], [0, 2, 1, 0]])


def _scatter(fw, device, dt, nc, seed):
    t, a = make((3, 4), dt, device, noncontig=nc, seed=seed)
    s, sa = make((2, 5), dt, device, seed=seed + 1)
    idx = _idx(fw, device, _SC_IDX)
    sa4 = sa[:, :4]
    out = [(fw.scatter(t, 0, idx, s), _scatter_ref(a, 0, _SC_IDX, sa4)),
           (t.scatter(0, idx, 1), _scatter_ref(a, 0, _SC_IDX, 1)),
           (t.scatter(0, idx, value=0), _scatter_ref(a, 0, _SC_IDX, 0))]
    c = t.clone()
    c.scatter_(0, idx, s)
    out.append((c, _scatter_ref(a, 0, _SC_IDX, sa4)))
    if dt is not fw.bool:
        dup = np.array([[0, 0, 1, 1], [0, 2, 1, 1]])
        out.append((t.scatter(0, _idx(fw, device, dup), 2, reduce="add"),
                    _scatter_ref(a, 0, dup, 2, "add")))
        out.append((t.scatter(0, _idx(fw, device, dup), 2, reduce="multiply"),
                    _scatter_ref(a, 0, dup, 2, "mul")))
    return out


_DUP = np.array([[0, 0, 2, 2], [0, 1, 1, 0], [2, 2, 2, 2]])


def _scatter_add(fw, device, dt, nc, seed):
    t, a = _make_iv((3, 4), dt, device, noncontig=nc, seed=seed)
    s, sa = _make_iv((3, 4), dt, device, seed=seed + 1)
    idx = _idx(fw, device, _DUP)
    c = t.clone()
    c.scatter_add_(1, idx.t()[:3, :3], s[:, :3])
    out = [(fw.scatter_add(t, 0, idx, s), _scatter_ref(a, 0, _DUP, sa, "add")),
           (c, _scatter_ref(a, 1, _DUP.T[:3, :3], sa[:, :3], "add"))]
    if dt in (fw.int32, fw.int64, fw.float32, fw.float64):
        # many duplicates over a large problem: the threaded kernel must not lose updates
        many = np.random.default_rng(seed).integers(0, 1000, 50000)
        big = fw.zeros(1000, dtype=dt, device=device)
        ones = fw.ones(50000, dtype=dt, device=device)
        out.append((big.scatter_add(0, _idx(fw, device, many), ones),
                    np.bincount(many, minlength=1000).astype(np.float64)))
    return out


def _reduce_ref(a, dim, idx, src, reduce, include_self, is_float):
    ref = a.astype(np.float64).copy()
    groups = {}
    for pos in np.ndindex(*idx.shape):
        tgt = list(pos)
        tgt[dim] = idx[pos]
        groups.setdefault(tuple(tgt), []).append(float(src[pos]))
    for tgt, vals in groups.items():
        if include_self:
            vals = vals + [ref[tgt]]
        if reduce == "sum":
            ref[tgt] = np.sum(vals)
        elif reduce == "prod":
            ref[tgt] = np.prod(vals)
        elif reduce == "amax":
            ref[tgt] = np.max(vals)
        elif reduce == "amin":
            ref[tgt] = np.min(vals)
        else:
            m = np.sum(vals) / len(vals)
            ref[tgt] = m if is_float else np.floor(m)
    return ref


def _scatter_reduce(fw, device, dt, nc, seed):
    t, a = _make_iv((3, 4), dt, device, nc, seed, low=1, high=4)
    s, sa = _make_iv((3, 4), dt, device, False, seed + 1, low=1, high=4)
    idx = _idx(fw, device, _DUP)
    out = []
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        for inc in (True, False):
            out.append((fw.scatter_reduce(t, 0, idx, s, reduce, include_self=inc),
                        _reduce_ref(a, 0, _DUP, sa, reduce, inc, dt.is_floating_point)))
    c = t.clone()
    c.scatter_reduce_(1, idx, s, "amax", include_self=False)
    out.append((c, _reduce_ref(a, 1, _DUP, sa, "amax", False, dt.is_floating_point)))
    return out


def _index_add(fw, device, dt, nc, seed):
    t, a = _make_iv((4, 3), dt, device, noncontig=nc, seed=seed)
    s, sa = _make_iv((5, 3), dt, device, seed=seed + 1)
    idx = [1, 3, 1, 0, 1]
    ref0 = a.astype(np.float64).copy()
    np.add.at(ref0, idx, 2 * sa.astype(np.float64))
    s1, sa1 = _make_iv((4, 5), dt, device, noncontig=True, seed=seed + 2)
    ref1 = a.astype(np.float64).copy()
    for i, j in enumerate([2, 0, 2, 2, 1]):
        ref1[:, j] += sa1[:, i]
    c = t.clone()
    c.index_add_(1, _idx(fw, device, [2, 0, 2, 2, 1]).int(), s1)
    return [(fw.index_add(t, 0, _idx(fw, device, idx), s, alpha=2), ref0), (c, ref1)]


def _index_copy(fw, device, dt, nc, seed):
    t, a = make((4, 3), dt, device, noncontig=nc, seed=seed)
    s, sa = make((2, 3), dt, device, seed=seed + 1)
    ref = a.copy()
    ref[[3, 0]] = sa
    s1, sa1 = make((4, 2), dt, device, seed=seed + 2)
    ref1 = a.copy()
    ref1[:, [2, 1]] = sa1
    c = t.clone()
    c.index_copy_(1, _idx(fw, device, [2, 1]), s1)
    return [(fw.index_copy(t, 0, _idx(fw, device, [3, 0]), s), ref), (c, ref1)]


def _index_fill(fw, device, dt, nc, seed):
    t, a = make((4, 3), dt, device, noncontig=nc, seed=seed)
    ref = a.copy()
    ref[:, [0, 2]] = 1
    ref2 = a.copy()
    ref2[[3, 1]] = 0
    c = t.clone()
    c.index_fill_(0, _idx(fw, device, [-1, 1]), fw.tensor(0, device=device))
    return [(fw.index_fill(t, 1, _idx(fw, device, [0, 2]), 1), ref), (c, ref2)]


def _index_put(fw, device, dt, nc, seed):
    t, a = _make_iv((4, 3), dt, device, noncontig=nc, seed=seed)
    v, va = _make_iv((3,), dt, device, seed=seed + 1)
    rows, cols = [0, 2, 3], [1, 1, 0]
    ref = a.copy()
    ref[rows, cols] = va
    out = [(fw.index_put(t, (_idx(fw, device, rows), _idx(fw, device, cols)), v), ref)]
    if dt is not fw.bool:
        acc = a.astype(np.float64).copy()
        np.add.at(acc, ([1, 1, 1], [2, 2, 2]), va.astype(np.float64))
        c = t.clone()
        c.index_put_((_idx(fw, device, [1, 1, 1]), _idx(fw, device, [2, 2, 2])), v,
                     accumulate=True)
        out.append((c, acc))
        row = a.astype(np.float64).copy()
        np.add.at(row, [2, 2], va.astype(np.float64))
        out.append((t.index_put((_idx(fw, device, [2, 2]), None), v, accumulate=True), row))
    return out


def _masked_fill(fw, device, dt, nc, seed):
    t, a = make((3, 4), dt, device, noncontig=nc, seed=seed)
    m, ma = make((4,), fw.bool, device, seed=seed + 7)
    c = t.clone()
    c.masked_fill_(m, fw.tensor(1, device=device))
    m2, ma2 = make((2, 1, 4), fw.bool, device, seed=seed + 8)
    return [(t.masked_fill(m, 0), np.where(ma, 0, a)), (c, np.where(ma, 1, a)),
            (fw.masked_fill(t, m2, 1), np.where(ma2, 1, a))]


def _masked_select(fw, device, dt, nc, seed):
    t, a = make((3, 4), dt, device, noncontig=nc, seed=seed)
    m, ma = make((3, 4), fw.bool, device, seed=seed + 3)
    m1, ma1 = make((2, 1, 4), fw.bool, device, seed=seed + 4)
    out = fw.empty(0, dtype=dt, device=device)
    fw.masked_select(t, m, out=out)
    ab, mb = np.broadcast_arrays(a, ma1)
    return [(fw.masked_select(t, m), a[ma]), (t.masked_select(m1), ab[mb]), (out, a[ma])]


def _masked_scatter_ref(a, m, src):
    ref = a.copy()
    ref[m] = src.reshape(-1)[:int(m.sum())]
    return ref


def _masked_scatter(fw, device, dt, nc, seed):
    t, a = make((3, 4), dt, device, noncontig=nc, seed=seed)
    m, ma = make((3, 4), fw.bool, device, seed=seed + 5)
    s, sa = make((4, 4), dt, device, seed=seed + 6)
    c = t.clone()
    m1, ma1 = make((4,), fw.bool, device, seed=seed + 9)
    c.masked_scatter_(m1, s)
    return [(fw.masked_scatter(t, m, s), _masked_scatter_ref(a, ma, sa)),
            (c, _masked_scatter_ref(a, np.broadcast_to(ma1, a.shape), sa))]


def _take(fw, device, dt, nc, seed):
    t, a = make((3, 4), dt, device, noncontig=nc, seed=seed)
    idx = np.array([[0, 11, -1], [5, 5, 2]])
    return [(fw.take(t, _idx(fw, device, idx)), np.take(a.ravel(), idx)),
            (t.take(_idx(fw, device, [])), a.ravel()[[]])]


def _take_along_dim(fw, device, dt, nc, seed):
    t, a = make((3, 4), dt, device, noncontig=nc, seed=seed)
    i1 = np.array([[3], [0], [1]])
    i0 = np.array([[2, 0, 1, 1]])
    flat = np.array([11, 0, 4])
    return [(fw.take_along_dim(t, _idx(fw, device, i1), 1), np.take_along_axis(a, i1, 1)),
            (t.take_along_dim(_idx(fw, device, i0), dim=0), np.take_along_axis(a, i0, 0)),
            (fw.take_along_dim(t, _idx(fw, device, flat)), a.ravel()[flat]),
            (fw.take_along_dim(t, _idx(fw, device, [[1]]), 1),
             np.take_along_axis(a, np.array([[1]] * 3), 1))]


def _put(fw, device, dt, nc, seed):
    t, a = _make_iv((3, 4), dt, device, noncontig=nc, seed=seed)
    s, sa = _make_iv((2, 2), dt, device, seed=seed + 1)
    idx = np.array([[11, 0], [-2, 5]])
    ref = a.copy().ravel()
    ref[idx.ravel()] = sa.ravel()
    c = t.clone()
    c.put_(_idx(fw, device, idx), s)
    out = [(c, ref.reshape(3, 4)), (fw.put(t, _idx(fw, device, idx), s), ref.reshape(3, 4))]
    if dt is not fw.bool:
        acc = a.astype(np.float64).ravel()
        np.add.at(acc, [1, 1, 1, 0], sa.ravel().astype(np.float64))
        out.append((t.put(_idx(fw, device, [1, 1, 1, 0]), s, accumulate=True), acc.reshape(3, 4)))
    return out


def _nonzero(fw, device, dt, nc, seed):
    t, a = make((3, 4, 2), dt, device, low=0, high=2, noncontig=nc, seed=seed)
    tup = fw.nonzero(t, as_tuple=True)
    ref = np.nonzero(a)
    out = [(fw.nonzero(t), np.argwhere(a)), (t.nonzero(), np.argwhere(a))]
    out += list(zip(tup, ref))
    out.append((fw.nonzero(fw.zeros((), dtype=dt, device=device)), np.zeros((0, 0), np.int64)))
    out.append((fw.nonzero(fw.ones((), dtype=dt, device=device)), np.zeros((1, 0), np.int64)))
    one = fw.ones((), dtype=dt, device=device)
    out.append((fw.nonzero(one, as_tuple=True)[0], np.zeros(1, np.int64)))
    return out


def _argwhere(fw, device, dt, nc, seed):
    t, a = make((5, 3), dt, device, low=0, high=2, noncontig=nc, seed=seed)
    e, ea = make((0, 3), dt, device)
    return [(fw.argwhere(t), np.argwhere(a)), (t.argwhere(), np.argwhere(a)),
            (fw.argwhere(e), np.argwhere(ea))]


def _tri(name):
    ref = getattr(np, name)

    def body(fw, device, dt, nc, seed):
        t, a = make((2, 4, 5), dt, device, noncontig=nc, seed=seed)
        out = []
        for k in (0, 2, -1, -7, 9):
            out.append((getattr(fw, name)(t, k), ref(a, k)))
        c = t.clone()
        getattr(c, name + "_")(diagonal=1)
        out.append((c, ref(a, 1)))
        o = fw.empty(0, dtype=dt, device=device)
        getattr(fw, name)(t[0], -1, out=o)
        out.append((o, ref(a[0], -1)))
        return out
    return body


def _tri_indices(name, np_name):
    def fn(fw, device):
        out = []
        for r, c, k in [(3, 4, 0), (4, 3, 1), (5, 5, -2), (0, 3, 0), (3, 0, 1), (2, 6, 7)]:
            got = getattr(fw, name)(r, c, k, device=device)
            ref = np.stack(getattr(np, np_name)(r, k, c)).astype(np.int64).reshape(2, -1)
            out.append((got, ref))
        got = getattr(fw, name)(4, 4, dtype=fw.int32, device=device)
        assert got.dtype is fw.int32
        out.append((got, np.stack(getattr(np, np_name)(4, 0, 4))))
        return out
    return [Case(fn)]


CASES = {
    "index_select": _over(ALL_DTYPES, _index_select),
    "gather": _over(ALL_DTYPES, _gather),
    "scatter": _over(ALL_DTYPES, _scatter),
    "scatter_add": _over(NUM, _scatter_add),
    "scatter_reduce": _over(NUM, _scatter_reduce),
    "index_add": _over(NUM, _index_add),
    "index_copy": _over(ALL_DTYPES, _index_copy),
    "index_fill": _over(ALL_DTYPES, _index_fill),
    "index_put": _over(ALL_DTYPES, _index_put),
    "masked_fill": _over(ALL_DTYPES, _masked_fill),
    "masked_select": _over(ALL_DTYPES, _masked_select),
    "masked_scatter": _over(ALL_DTYPES, _masked_scatter),
    "take": _over(ALL_DTYPES, _take),
    "take_along_dim": _over(ALL_DTYPES, _take_along_dim),
    "put": _over(ALL_DTYPES, _put),
    "nonzero": _over(ALL_DTYPES, _nonzero),
    "argwhere": _over(ALL_DTYPES, _argwhere),
    "tril": _over(ALL_DTYPES, _tri("tril")),
    "triu": _over(ALL_DTYPES, _tri("triu")),
    "tril_indices": _tri_indices("tril_indices", "tril_indices"),
    "triu_indices": _tri_indices("triu_indices", "triu_indices"),
}
