"""The sort family beyond the op table: error paths (checked against PyTorch's messages),
parity with PyTorch on random inputs, out= and in-place forms, large rows that take the
radix and blocked-scan paths, extreme values, and hypothesis over random shapes."""
import math
import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import framework as fw
from helpers import assert_close, assert_refused_like, to_np

NAN = float("nan")

# (call on a module that is framework or torch, exception type, message)
ERRORS = [
    (lambda m: m.topk(m.tensor([1.0, 2.0]), 3), RuntimeError, "selected index k out of range"),
    (lambda m: m.topk(m.tensor([1.0, 2.0]), -1), RuntimeError, "selected index k out of range"),
    (lambda m: m.topk(m.tensor(1.0), 2), RuntimeError, "selected index k out of range"),
    (lambda m: m.topk(m.tensor([True]), 1), RuntimeError, "topk does not support bool dtypes on CPU"),
    (lambda m: m.kthvalue(m.tensor([[1.0, 2.0]]), 3), RuntimeError,
     "kthvalue(): selected number k out of range for dimension 1"),
    (lambda m: m.kthvalue(m.tensor([[1.0, 2.0]]), 0, 0), RuntimeError,
     "kthvalue(): selected number k out of range for dimension 0"),
    (lambda m: m.kthvalue(m.tensor([[1.0, 2.0]]), 1, 2), IndexError,
     "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    (lambda m: m.kthvalue(m.empty(2, 0), 1, 1), IndexError,
     "kthvalue(): Expected reduction dim 1 to have non-zero size."),
    (lambda m: m.median(m.empty(2, 0), 1), IndexError,
     "median(): Expected reduction dim 1 to have non-zero size."),
    (lambda m: m.nanmedian(m.empty(0, 0), 0), IndexError,
     "median(): Expected reduction dim 0 to have non-zero size."),
    (lambda m: m.mode(m.empty(3, 0)), IndexError,
     "mode(): Expected reduction dim 1 to have non-zero size."),
    (lambda m: m.median(m.tensor([True]), 0), RuntimeError,
     "\"median_out\" not implemented for 'Bool'"),
    (lambda m: m.sort(m.tensor(1.0), 1), IndexError,
     "Dimension out of range (expected to be in range of [-1, 0], but got 1)"),
    (lambda m: m.cumsum(m.tensor([1, 2]), 1), IndexError,
     "Dimension out of range (expected to be in range of [-1, 0], but got 1)"),
    (lambda m: m.logcumsumexp(m.tensor([1, 2]), 0), RuntimeError,
     "\"logcumsumexp_out_cpu\" not implemented for 'Long'"),
    (lambda m: m.bincount(m.tensor([-1, 2])), RuntimeError,
     "bincount only supports 1-d non-negative integral inputs."),
    (lambda m: m.bincount(m.tensor([[1, 2]])), RuntimeError,
     "bincount only supports 1-d non-negative integral inputs."),
    (lambda m: m.bincount(m.tensor(3)), RuntimeError,
     "bincount only supports 1-d non-negative integral inputs."),
    (lambda m: m.bincount(m.tensor([1.0])), RuntimeError,
     "\"bincount_cpu\" not implemented for 'Float'"),
    (lambda m: m.bincount(m.tensor([1, 2]), minlength=-1), RuntimeError, "minlength should be >= 0"),
    (lambda m: m.bincount(m.tensor([1, 2]), m.tensor([1.0])), RuntimeError,
     "weights should be 1-d and have the same length as input"),
    (lambda m: m.histc(m.tensor([1.0]), bins=0), RuntimeError,
     "torch.histogram(): bins must be > 0, but got 0 for dimension 0"),
    (lambda m: m.histc(m.tensor([1.0]), 3, 3, 1), RuntimeError,
     "torch.histc: max must be larger than min"),
    (lambda m: m.histc(m.tensor([1.0, math.inf]), 3), RuntimeError,
     "torch.histc: range of [1, inf] is not finite"),
    (lambda m: m.histc(m.tensor([1, 2]), 3), RuntimeError,
     "\"histogram_cpu\" not implemented for 'Long'"),
    (lambda m: m.searchsorted(m.tensor([[1.0, 2.0]]), m.tensor([[1.0], [2.0]])), RuntimeError,
     "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of "
     "boundaries tensor and input value tensor must match, but we got boundaries tensor [1, 2] "
     "and input value tensor [2, 1]"),
    (lambda m: m.searchsorted(m.tensor(3.0), m.tensor([1.0])), RuntimeError,
     "torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 dimension"),
    (lambda m: m.searchsorted(m.tensor([1.0]), m.tensor([1.0]), side="left", right=True),
     RuntimeError, "torch.searchsorted(): side and right can't be set to opposites, got side of "
     "left while right was True"),
    (lambda m: m.searchsorted(m.tensor([1.0]), m.tensor([1.0]), side="up"), RuntimeError,
     "torch.searchsorted(): side can only be 'left' or 'right' but got up"),
    (lambda m: m.searchsorted(m.tensor([1.0, 2.0]), m.tensor([1.0]), sorter=m.tensor([0])),
     RuntimeError, "torch.searchsorted(): boundary and sorter must have the same size, but got "
     "boundary tensor [2]and got sorter tensor [1]"),
    (lambda m: m.searchsorted(m.tensor([True]), m.tensor([True])), RuntimeError,
     "\"searchsorted_out_cpu\" not implemented for 'Bool'"),
    (lambda m: m.bucketize(m.tensor([1.0]), m.tensor([[1.0, 2.0]])), RuntimeError,
     "boundaries tensor must be 1 dimension, but got dim(2)"),
    (lambda m: m.unique(m.tensor(5), dim=0), IndexError,
     "Dimension specified as 0 but tensor has no dimensions"),
    (lambda m: m.median(m.tensor([True])), NotImplementedError,
     "\"median_cpu\" not implemented for 'Bool'"),
    (lambda m: m.searchsorted(m.tensor([1, 2]), m.tensor([1]), sorter=m.tensor([0, 1], dtype=m.int32)),
     RuntimeError, "torch.searchsorted(): sorter must be a tensor of long dtype but got dtype Int"),
    (lambda m: m.sort(m.tensor([2, 1]), 0, False, True), TypeError, None),  # stable is keyword-only
    (lambda m: m.unique(m.empty(2, 0), dim=0), RuntimeError,
     "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied"),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors(i):
    fn, exc, msg = ERRORS[i]
    with pytest.raises(exc, match=re.escape(msg) if msg else None):
        fn(fw)


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors_match_torch(i):
    torch = pytest.importorskip("torch")
    fn, exc, msg = ERRORS[i]
    with pytest.raises(exc, match=re.escape(msg) if msg else None):
        fn(torch)


def test_not_a_tensor():
    with pytest.raises(TypeError, match="must be Tensor"):
        fw.sort([3, 1, 2])


# ---- results: named tuples, out=, in-place ------------------------------------------------

def test_named_tuples():
    x = fw.tensor([[3.0, 1.0, 2.0]])
    for name, res in [("sort", fw.sort(x)), ("topk", fw.topk(x, 2)), ("kthvalue", x.kthvalue(1)),
                      ("median", x.median(1)), ("nanmedian", x.nanmedian(1)), ("mode", x.mode()),
                      ("cummax", x.cummax(1)), ("cummin", x.cummin(1))]:
        assert type(res).__name__ == name
        values, indices = res
        assert res.values is values and res.indices is indices
        assert indices.dtype is fw.int64


def test_out_and_inplace(device):
    x = fw.tensor([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]], device=device)
    v, i = fw.empty(0, device=device), fw.empty(0, dtype=fw.int64, device=device)
    res = fw.sort(x, 1, out=(v, i))
    assert res.values is v and res.indices is i
    assert_close(v, np.array([[1.0, 2.0, 3.0], [0.0, 4.0, 5.0]]))
    assert_close(i, np.array([[1, 2, 0], [0, 2, 1]]))
    o = fw.empty(2, 3, dtype=fw.float64, device=device)
    assert fw.cumsum(x, 1, out=o) is o
    assert_close(o, np.cumsum(to_np(x), 1))
    y = x.clone()
    assert y.cumsum_(0) is y
    assert_close(y, np.cumsum(to_np(x), 0))
    z = fw.tensor([1, 2, 3], dtype=fw.int32, device=device)
    z.cumprod_(0)
    assert z.dtype is fw.int32
    assert_close(z, np.array([1, 2, 6]))
    o = fw.empty(3, dtype=fw.int64, device=device)
    seq = fw.tensor([1.0, 2.0], device=device)
    fw.searchsorted(seq, fw.tensor([0.0, 1.5, 9.0], device=device), out=o)
    assert_close(o, np.array([0, 1, 2]))


def test_unique_returns(device):
    x = fw.tensor([2, 1, 2, 5], device=device)
    assert isinstance(fw.unique(x), fw.Tensor)
    u, inv = fw.unique(x, return_inverse=True)
    assert_close(inv, np.array([1, 0, 1, 2]))
    u, cnt = x.unique(return_counts=True)
    assert_close(cnt, np.array([1, 2, 1]))
    seven = fw.tensor(7, device=device)
    u, inv, cnt = fw.unique(seven, return_inverse=True, return_counts=True)
    assert u.shape == (1,) and inv.shape == () and cnt.shape == (1,)
    # sorted=False still returns sorted values (as PyTorch does on the CPU)
    x = fw.tensor([3, 1, 2, 1], device=device)
    assert_close(fw.unique(x, sorted=False), np.array([1, 2, 3]))


# ---- large rows and extreme values ---------------------------------------------------------

@pytest.mark.parametrize("dtype", [fw.float32, fw.float64, fw.float16, fw.bfloat16, fw.int8,
                                   fw.int16, fw.int32, fw.int64, fw.uint8, fw.bool])
def test_large_rows(dtype, device):
    rng = np.random.default_rng(3)
    if dtype is fw.bool:
        a = rng.random((3, 5000)) > 0.5
    elif dtype.is_floating_point:
        a = rng.standard_normal((3, 5000)) * 100
        a[rng.random(a.shape) < 0.01] = np.nan
        a[0, :4] = [np.inf, -np.inf, -0.0, 0.0]
    else:
        info = np.iinfo(dtype.np)
        a = rng.integers(info.min, info.max, (3, 5000), endpoint=True)
        a[0, :2] = [info.min, info.max]
    t = fw.tensor(a, dtype=dtype, device=device)
    a = to_np(t)
    v, i = t.sort(stable=True)
    ref = np.argsort(a, axis=1, kind="stable")
    assert_close(i, ref)
    assert_close(v, np.take_along_axis(a, ref, 1))
    vd, idd = t.t().sort(0, descending=True, stable=True)
    refd = np.stack([(4999 - np.argsort(r[::-1], kind="stable"))[::-1] for r in a]).T
    assert_close(idd, refd)
    if dtype is not fw.bool:
        tv, ti = t.topk(17)
        assert_close(tv, np.flip(np.sort(a, 1), 1)[:, :17])
        kv, _ = t.kthvalue(2500)
        assert_close(kv, np.sort(a, 1)[:, 2499])


def test_negative_zero_and_nan_order(device):
    x = fw.tensor([0.0, -0.0, NAN, -math.inf, math.inf, -0.0, 1.0], device=device)
    v, i = x.sort(stable=True)
    assert_close(i, np.array([3, 0, 1, 5, 6, 4, 2]))
    v, i = x.sort(descending=True, stable=True)
    assert_close(i, np.array([2, 4, 6, 0, 1, 5, 3]))
    assert_close(fw.topk(x, 2).values, np.array([NAN, math.inf]))


@pytest.mark.parametrize("shape,dim", [((300, 700), 0), ((5, 3, 1000), 1), ((4000,), 0),
                                       ((2, 600, 3), 1), ((70, 40), 1)])
def test_large_scans(shape, dim, device):
    if device == "cuda" and np.prod(shape) > 3000 and fw.cuda.is_simulated():
        pytest.skip("Triton's interpreter runs these scans element by element; "
                    "tests/kernels/test_sort_kernels.py covers long rows on cuda")
    rng = np.random.default_rng(4)
    a = rng.uniform(-1, 1, shape)
    t = fw.tensor(a, dtype=fw.float32, device=device)
    a = to_np(t).astype(np.float64)
    assert_close(t.cumsum(dim), np.cumsum(a, dim), rtol=1e-5, atol=1e-4)
    assert_close(t.logcumsumexp(dim), np.logaddexp.accumulate(a, dim), rtol=1e-5, atol=1e-5)
    assert_close(t.cummax(dim).values, np.maximum.accumulate(a, dim))
    assert_close(t.cummin(dim).values, np.minimum.accumulate(a, dim))
    ti = fw.tensor(rng.integers(-3, 4, shape), dtype=fw.int32, device=device)
    assert_close(ti.cumsum(dim), np.cumsum(to_np(ti).astype(np.int64), dim))


def test_int_wraparound(device):
    t = fw.tensor([2 ** 62, 2 ** 62, 2 ** 62], device=device)
    assert_close(t.cumsum(0), np.cumsum(np.array([2 ** 62] * 3, np.int64)))
    t = fw.tensor([100, 100, 100], dtype=fw.int8, device=device)
    assert_close(t.cumsum(0, dtype=fw.int8), np.array([100, -56, 44]))


def test_logcumsumexp_infinities(device):
    t = fw.tensor([-math.inf, -math.inf, 0.0, math.inf, 1.0, NAN, 2.0], device=device)
    assert_close(t.logcumsumexp(0), np.array([-math.inf, -math.inf, 0.0, math.inf, math.inf, NAN, NAN]))


# ---- parity with PyTorch ------------------------------------------------------------------

def _torch_of(torch, t):
    dt = getattr(torch, t.dtype.name)
    return torch.from_numpy(np.ascontiguousarray(to_np(t))).to(dt)


def _same(got, want):
    w = want.double().numpy() if want.dtype.is_floating_point else want.numpy()
    assert_close(got, w)


PARITY_DTYPES = [fw.float32, fw.float64, fw.float16, fw.bfloat16, fw.int64, fw.int32, fw.int8,
                 fw.uint8, fw.bool]


@pytest.mark.parametrize("dtype", PARITY_DTYPES)
def test_torch_parity(dtype, device):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    a = rng.integers(-3, 4, (6, 9)).astype(np.float64)
    if dtype.is_floating_point:
        a[rng.random(a.shape) < 0.15] = np.nan
    if dtype is fw.uint8:
        a = np.abs(np.nan_to_num(a))
    t = fw.tensor(a, dtype=dtype, device=device)
    tt = _torch_of(torch, t)
    m = fw.tensor(np.nan_to_num(a, nan=0.5), dtype=dtype, device=device)
    tm = _torch_of(torch, m)
    for d in (0, 1, -1):
        for f, g, fm, gm in [(t, tt, m, tm), (t.t(), tt.t(), m.t(), tm.t())]:
            for desc in (False, True):
                r, q = f.sort(d, desc, stable=True), g.sort(dim=d, descending=desc, stable=True)
                _same(r.values, q.values)
                _same(r.indices, q.indices)
            _same(f.cumsum(d), g.cumsum(d))
            _same(f.cumprod(d), g.cumprod(d))
            for name in ("cummax", "cummin"):
                r, q = getattr(f, name)(d), getattr(g, name)(d)
                _same(r.values, q.values)
                _same(r.indices, q.indices)
            # PyTorch's mode has no defined result for rows with NaN; compare without them
            r, q = fm.mode(d), gm.mode(d)
            _same(r.values, q.values)
            _same(r.indices, q.indices)
            if dtype is not fw.bool:
                _same(f.topk(3, d).values, g.topk(3, d).values)
                _same(f.topk(3, d, largest=False).values, g.topk(3, d, largest=False).values)
                _same(f.kthvalue(2, d).values, g.kthvalue(2, d).values)
                for name in ("median", "nanmedian"):
                    r, q = getattr(f, name)(d), getattr(g, name)(d)
                    _same(r.values, q.values)
                    _same(r.indices, q.indices)
                _same(f.median(), g.median())
                _same(f.nanmedian(), g.nanmedian())
            if dtype.is_floating_point:
                _same(f.logcumsumexp(d), g.logcumsumexp(d))
                _same(fm.histc(5), gm.histc(5))
                _same(f.histc(6, -2, 2), g.histc(6, -2, 2))
    r = fw.unique(t, return_inverse=True, return_counts=True)
    q = torch.unique(tt, return_inverse=True, return_counts=True)
    for x, y in zip(r, q):
        _same(x, y)
    for d in (0, 1):  # PyTorch orders slices holding NaN arbitrarily: compare without NaN
        r = fw.unique(m, dim=d, return_inverse=True, return_counts=True)
        q = torch.unique(tm, dim=d, return_inverse=True, return_counts=True)
        for x, y in zip(r, q):
            _same(x, y)
        r = fw.unique_consecutive(t, dim=d, return_inverse=True, return_counts=True)
        q = torch.unique_consecutive(tt, dim=d, return_inverse=True, return_counts=True)
        for x, y in zip(r, q):
            _same(x, y)
    r = fw.unique_consecutive(t, return_inverse=True, return_counts=True)
    q = torch.unique_consecutive(tt, return_inverse=True, return_counts=True)
    for x, y in zip(r, q):
        _same(x, y)
    if dtype is not fw.bool:
        bnd = fw.tensor([-2, 0, 0, 1, 3], dtype=dtype if dtype is not fw.uint8 else fw.int16, device=device)
        for right in (False, True):
            _same(fw.searchsorted(bnd, t, right=right),
                  torch.searchsorted(_torch_of(torch, bnd), tt, right=right))
            _same(fw.bucketize(t, bnd, right=right),
                  torch.bucketize(tt, _torch_of(torch, bnd), right=right))
    if dtype.category == 1:
        x = fw.tensor(rng.integers(0, 7, 30), dtype=dtype, device=device)
        w = fw.tensor(rng.uniform(0, 1, 30), dtype=fw.float32, device=device)
        _same(fw.bincount(x, minlength=9), torch.bincount(_torch_of(torch, x), minlength=9))
        _same(fw.bincount(x, w), torch.bincount(_torch_of(torch, x), _torch_of(torch, w)))


# ---- hypothesis ---------------------------------------------------------------------------

shapes = st.lists(st.integers(0, 12), min_size=0, max_size=3).map(tuple)
dtypes = st.sampled_from([fw.float32, fw.float64, fw.int64, fw.int16, fw.uint8, fw.float16])


@settings(max_examples=60, deadline=None)
@given(shape=shapes, dtype=dtypes, seed=st.integers(0, 2 ** 16), dim=st.integers(-3, 2),
       transpose=st.booleans())
def test_random_shapes(shape, dtype, seed, dim, transpose):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 6, shape).astype(np.float64)
    if dtype.is_floating_point and a.size:
        a[rng.random(shape) < 0.1] = np.nan
    t = fw.tensor(a, dtype=dtype)
    if transpose and len(shape) >= 2:
        t = t.transpose(0, -1)
    a = to_np(t)
    nd = max(a.ndim, 1)
    if not -nd <= dim < nd:
        with pytest.raises(IndexError):
            fw.sort(t, dim)
        return
    d = dim % nd
    if a.ndim == 0:
        assert_close(fw.sort(t, dim).values, a)
        assert_close(fw.cumsum(t, dim), a.astype(np.float64 if dtype.is_floating_point else np.int64))
        return
    v, i = fw.sort(t, d, stable=True)
    assert_close(i, np.argsort(a, axis=d, kind="stable"))
    assert_close(v, np.sort(a, axis=d))
    ref = np.cumsum(a.astype(np.float64 if dtype.is_floating_point else np.int64), axis=d)
    assert_close(fw.cumsum(t, d), ref, rtol=1e-3 if dtype is fw.float16 else None,
                 atol=0.1 if dtype is fw.float16 else None)
    k = a.shape[d] // 2
    assert_close(fw.topk(t, k, d).values, np.take(np.flip(np.sort(a, axis=d), d), np.arange(k), axis=d))
    kw = {"equal_nan": False} if dtype.is_floating_point else {}
    u, cnt = fw.unique(t, return_counts=True)
    ru, rc = np.unique(a, return_counts=True, **kw)
    assert_close(u, ru)
    assert_close(cnt, rc)


def test_long_scan_in_parallel_chunks():
    """One long row takes the CPU's chunked parallel scan when there are 4+ threads."""
    device = "cpu"
    before = fw.get_num_threads()
    fw.set_num_threads(4)
    try:
        rng = np.random.default_rng(6)
        a = rng.standard_normal(1 << 19)
        t = fw.tensor(a, device=device)
        assert_close(t.cumsum(0), np.cumsum(a), rtol=1e-10, atol=1e-9)
        assert_close(t.logcumsumexp(0), np.logaddexp.accumulate(a), rtol=1e-10, atol=1e-10)
        b = rng.uniform(0.999, 1.001, 1 << 19)
        assert_close(fw.tensor(b, device=device).cumprod(0), np.cumprod(b), rtol=1e-9)
        i = rng.integers(-9, 9, 1 << 19)
        assert_close(fw.tensor(i, device=device).cumsum(0), np.cumsum(i))
    finally:
        fw.set_num_threads(before)


def test_broadcast_and_offset_inputs(device):
    """Inputs with stride-0 dims and a storage offset read the same values."""
    base = fw.tensor([[9.0, 3.0, 1.0, 2.0], [5.0, 4.0, 7.0, 0.0]], device=device)
    x = base[1, 1:].expand(3, 3)  # rows [4, 7, 0], offset 5, row stride 0
    a = np.broadcast_to(np.array([4.0, 7.0, 0.0]), (3, 3))
    v, i = x.sort(1)
    assert_close(v, np.sort(a, 1))
    assert_close(i, np.argsort(a, 1, kind="stable"))
    v, i = x.sort(0, stable=True)
    assert_close(i, np.zeros((3, 3), np.int64) + np.arange(3)[:, None])
    assert_close(x.topk(2).values, np.flip(np.sort(a, 1), 1)[:, :2])
    assert_close(x.cumsum(0), np.cumsum(a, 0))
    assert_close(x.cummax(1).indices, np.array([[0, 1, 1]] * 3))
    assert_close(fw.unique(x, dim=0), a[:1])
    assert_close(fw.searchsorted(fw.tensor([1.0, 5.0], device=device), x), np.searchsorted([1.0, 5.0], a))
    assert_close(x.median(1).values, np.array([4.0] * 3))


# ---- issue 9: NaN semantics and memory overlap as PyTorch ----------------------------------

torch = pytest.importorskip("torch")

NAN_ROWS = [[1.0, NAN, 3.0, -1.0, NAN, 2.0, math.inf], [NAN, NAN, NAN], [2.0, NAN, NAN],
            [NAN, 2.0, 2.0], [1.0, 1.0, NAN, NAN, NAN, 2.0], [-0.0, 0.0, NAN, -math.inf]]
NAN_OPS = {   # NaN sorts last in ascending order; the order of ties in topk and kthvalue
    # (which of equal values' indices comes first) is unspecified in PyTorch
    "sort": lambda L, x: x.sort(), "sort_desc": lambda L, x: x.sort(descending=True),
    "sort_stable": lambda L, x: x.sort(stable=True), "argsort": lambda L, x: x.argsort(),
    "msort": lambda L, x: L.msort(x), "topk_values": lambda L, x: x.topk(2).values,
    "topk_smallest": lambda L, x: x.topk(2, largest=False).values,
    "kthvalue": lambda L, x: x.kthvalue(2).values,
    "kthvalue_last": lambda L, x: x.kthvalue(x.numel()).values,
    "median": lambda L, x: x.median(), "median_dim": lambda L, x: x.median(0),
    "nanmedian": lambda L, x: x.nanmedian(), "nanmedian_dim": lambda L, x: x.nanmedian(0),
    "mode": lambda L, x: x.mode(), "unique": lambda L, x: x.unique(),
    "unique_counts": lambda L, x: x.unique(return_counts=True)[1],
    "cummax": lambda L, x: x.cummax(0), "cummin": lambda L, x: x.cummin(0),
    "max_dim": lambda L, x: x.max(0), "argmin": lambda L, x: x.argmin(),
}


def _lists(r):
    r = tuple(r) if isinstance(r, tuple) else (r,)
    return [np.array(t.tolist(), dtype=float) for t in r]


@pytest.mark.parametrize("op", list(NAN_OPS))
@pytest.mark.parametrize("row", range(len(NAN_ROWS)))
@pytest.mark.parametrize("dt", ["float32", "float16"])
def test_nan_semantics_as_torch(op, row, dt, device):
    v = NAN_ROWS[row]
    got = NAN_OPS[op](fw, fw.tensor(v, dtype=getattr(fw, dt), device=device))
    want = NAN_OPS[op](torch, torch.tensor(v, dtype=getattr(torch, dt)))
    for g, w in zip(_lists(got), _lists(want)):
        np.testing.assert_array_equal(g, w)


def test_mode_counts_each_nan_once(device):
    # NaN != NaN: three NaNs are three values seen once, so 1.0 (twice) is the mode
    v, i = fw.tensor([1.0, NAN, 1.0, NAN, NAN], device=device).mode()
    assert (v.item(), i.item()) == (1.0, 2)
    v, i = fw.tensor([[NAN, 3.0, 3.0, NAN], [NAN, NAN, 5.0, 6.0]], device=device).mode(1)
    assert v.tolist()[0] == 3.0 and i.tolist() == [2, 2]


def _flat(L, d):
    return L.arange(9.0, device=d).flip(0).contiguous()


def _idx(L, d, n):
    return L.zeros(n, dtype=L.int64, device=d)


SORT_OVERLAP = {   # (call on framework or torch with the device) -> written-to tensors
    "sort_values_expanded": lambda L, d: L.sort(_flat(L, d), out=(
        L.zeros(1, device=d).expand(9), _idx(L, d, 9))),
    "sort_indices_expanded": lambda L, d: L.sort(_flat(L, d), out=(
        L.zeros(9, device=d), L.zeros(1, dtype=L.int64, device=d).expand(9))),
    "sort_shifted": lambda L, d: (lambda a: L.sort(a[:8], out=(a[1:], _idx(L, d, 8))))(
        _flat(L, d)),
    "topk_into_input": lambda L, d: (lambda a: L.topk(a, 2, out=(a[:2], _idx(L, d, 2))))(
        _flat(L, d)),
    "kthvalue_expanded": lambda L, d: L.kthvalue(_flat(L, d).reshape(3, 3), 2, 0, out=(
        L.zeros(1, device=d).expand(3), _idx(L, d, 3))),
    "msort_shifted": lambda L, d: (lambda a: L.msort(a[:8], out=a[1:]))(_flat(L, d)),
    "cumsum_shifted": lambda L, d: (lambda a: L.cumsum(a[:8], 0, out=a[1:]))(_flat(L, d)),
    "cumsum_expanded": lambda L, d: L.zeros(1, 3, device=d).expand(3, 3).cumsum_(0),
    "mode_expanded": lambda L, d: L.mode(_flat(L, d).reshape(3, 3), 0, out=(
        L.zeros(1, device=d).expand(3), _idx(L, d, 3))),
}


@pytest.mark.parametrize("name", list(SORT_OVERLAP))
def test_overlapping_outputs_refused_as_torch(name, device):
    assert_refused_like(torch, SORT_OVERLAP[name], device)


def test_outputs_aliasing_their_input_exactly_are_allowed(device):
    a = _flat(fw, device)
    fw.sort(a, out=(a, _idx(fw, device, 9)))
    assert a.tolist() == list(range(9))
    fw.cumsum(a, 0, out=a)
    assert a.tolist()[-1] == 36.0
