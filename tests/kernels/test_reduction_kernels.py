"""framework/kernels/reduction.py (Triton) against the CPU launcher (native/reduction.cpp)
on the same data: every kernel name, float/int/bool dtypes, contiguous, transposed and
strided inputs, several dim sets, NaNs, ties, empty kept and reduced dims, and the split
(two-launch) path forced on small shapes."""
import numpy as np
import pytest

import framework as fw
from framework._cpu import reduction as C
from framework._ops.reduction import _geometry

pytestmark = [pytest.mark.skipif(not fw.cuda.is_available(),
                                 reason="needs cuda or TRITON_INTERPRET=1"),
              # masked-off lanes take log(0) and inf - inf; they are never stored
              pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning",
                                         "ignore:invalid value:RuntimeWarning")]

K = pytest.importorskip("framework.kernels.reduction")

# (rtol, atol): the two sides add in different orders
TOL = {fw.float16: (2e-3, 2e-3), fw.bfloat16: (1.6e-2, 1e-2), fw.float32: (2e-6, 1e-5),
       fw.float64: (1e-12, 1e-12)}
FLOATS = [fw.float32, fw.float16, fw.bfloat16, fw.float64]
ALL = [fw.bool, fw.uint8, fw.int32, fw.int64] + FLOATS
# integer and bool sums and products are int64
WIDE = {fw.bool: fw.int64, fw.uint8: fw.int64, fw.int32: fw.int64, fw.int64: fw.int64}


def _outs(kernel, dt, values=True, mean=False):
    same = dt
    if kernel in ("sum", "nansum", "prod"):
        return WIDE.get(dt, dt), None
    if kernel == "count_nonzero":
        return fw.int64, None
    if kernel in ("all", "any"):
        return (fw.uint8 if dt is fw.uint8 else fw.bool), None
    if kernel in ("argmax", "argmin"):
        return (same if values else None), fw.int64
    if kernel == "aminmax":
        return same, same
    if kernel == "var":
        return same, (same if mean else None)
    return same, None


def sample(shape, dt, layout, seed=0, nan=False, ties=False):
    """(cpu tensor, cuda tensor) with the same values and layout: contiguous, transposed
    (memory in reversed dim order) or strided (every other element of the last dim)."""
    rng = np.random.default_rng(seed)
    mshape = tuple(shape[::-1]) if layout == "transposed" else tuple(shape)
    if layout == "strided" and shape:
        mshape = mshape[:-1] + (2 * mshape[-1],)
    if dt is fw.bool:
        a = rng.random(mshape) > 0.4
    elif dt.is_floating_point:
        a = (rng.integers(-3, 4, mshape).astype(np.float64) if ties
             else rng.standard_normal(mshape))
        if nan:
            a[rng.random(mshape) < 0.1] = np.nan
    else:
        a = rng.integers(0 if dt is fw.uint8 else -4, 5, mshape)

    def view(t):
        if layout == "transposed":
            return t.permute(*range(len(shape) - 1, -1, -1))
        if layout == "strided" and shape:
            return t[..., ::2]
        return t
    return view(fw.tensor(a, dtype=dt)), view(fw.tensor(a, dtype=dt, device="cuda"))


def run(kernel, xs, dims, keepdim=False, p0=0.0, p1=0.0, values=True, mean=False):
    """[cpu outputs, cuda outputs] of the two launchers on the same data."""
    x = xs[0]
    d0, d1 = _outs(kernel, x.dtype, values, mean)
    if keepdim:
        shape = tuple(1 if d in dims else n for d, n in enumerate(x.shape))
    else:
        shape = tuple(n for d, n in enumerate(x.shape) if d not in dims)
    res = []
    for xd, backend in zip(xs, (C, K)):
        dev = xd.device
        o0 = None if d0 is None else fw.zeros(shape, dtype=d0, device=dev)
        o1 = None if d1 is None else fw.zeros(shape, dtype=d1, device=dev)
        geom = _geometry(xd, dims, keepdim, o0, o1, kernel in ("argmax", "argmin"))
        backend.reduce(kernel, xd, o0, o1, geom, p0, p1)
        res.append([None if o is None else o.cpu() for o in (o0, o1)])
    return res


def check(kernel, xs, dims, **kw):
    cpu, gpu = run(kernel, xs, dims, **kw)
    for c, g in zip(cpu, gpu):
        if c is None:
            assert g is None
            continue
        assert c.dtype is g.dtype and tuple(c.shape) == tuple(g.shape)
        a, b = to_np(c), to_np(g)
        if c.dtype.is_floating_point:
            rtol, atol = TOL[c.dtype]
            np.testing.assert_allclose(b, a, rtol=rtol, atol=atol, equal_nan=True,
                                       err_msg=f"{kernel} {c.dtype} {dims}")
        else:
            np.testing.assert_array_equal(b, a, err_msg=f"{kernel} {c.dtype} {dims}")


def to_np(t):
    return np.array(t._host_array(), dtype=np.float64 if t.dtype.is_floating_point else None)


SHAPE = (6, 5, 37)
DIMS = [[0, 1, 2], [2], [0], [1], [0, 2]]
LAYOUTS = ["contiguous", "transposed", "strided"]


@pytest.mark.parametrize("kernel", ["sum", "prod", "count_nonzero", "all", "any", "amax",
                                    "amin", "aminmax"])
@pytest.mark.parametrize("dt", ALL, ids=str)
def test_every_dtype(kernel, dt):
    for i, layout in enumerate(LAYOUTS):
        xs = sample(SHAPE, dt, layout, seed=i, ties=True)
        for dims in DIMS[i::2]:
            check(kernel, xs, dims)


@pytest.mark.parametrize("kernel", ["argmax", "argmin"])
@pytest.mark.parametrize("dt", [fw.uint8, fw.int64, fw.float32, fw.float16], ids=str)
def test_arg_first_index_and_nan(kernel, dt):
    # few distinct values: many ties, the first index must win; NaNs win over everything
    for i, layout in enumerate(LAYOUTS):
        xs = sample(SHAPE, dt, layout, seed=i, ties=True, nan=dt.is_floating_point and i > 0)
        for dims in ([2], [0], [0, 1, 2], [1]):
            check(kernel, xs, dims, values=i != 1)


@pytest.mark.parametrize("dt", FLOATS, ids=str)
def test_float_kernels(dt):
    for i, layout in enumerate(LAYOUTS):
        xs = sample(SHAPE, dt, layout, seed=i, nan=i == 2)
        for dims in DIMS[i::2]:
            for kernel in ("sum", "nansum", "mean", "logsumexp", "amax", "argmin"):
                check(kernel, xs, dims)
            check("var", xs, dims, p0=1.0, p1=0.0)
            check("var", xs, dims, p0=0.0, p1=1.0, mean=True)
            for p in (2.0, 1.0, 0.0, float("inf"), float("-inf"), 3.0, 0.5):
                check("norm", xs, dims, p0=p)


def test_keepdim_and_strided_outputs():
    xs = sample((4, 7, 9), fw.float32, "transposed", seed=3)
    for kernel in ("sum", "argmax", "aminmax", "var"):
        check(kernel, xs, [1], keepdim=True, mean=True)


def test_infinities_in_logsumexp_and_max():
    a = np.array([[-np.inf, -np.inf, -np.inf], [np.inf, 1.0, 2.0], [np.nan, 1.0, np.inf],
                  [-np.inf, 0.0, 1.0]])
    xs = fw.tensor(a, dtype=fw.float32), fw.tensor(a, dtype=fw.float32, device="cuda")
    for kernel in ("logsumexp", "amax", "amin", "argmax", "argmin", "sum", "nansum"):
        check(kernel, xs, [1])
        check(kernel, xs, [0])


def test_empty():
    # empty kept dims: nothing runs; empty reduced dims: the identities (mean: NaN)
    for shape, dims in (((0, 5), [1]), ((5, 0), [1]), ((3, 0, 2), [1]), ((0,), [0])):
        xs = sample(shape, fw.float32, "contiguous")
        for kernel in ("sum", "prod", "mean", "count_nonzero", "all", "any", "logsumexp"):
            check(kernel, xs, dims)
        check("var", xs, dims, p0=1.0)
    xs = sample((), fw.float64, "contiguous")
    for kernel in ("sum", "amax", "argmax", "var"):
        check(kernel, xs, [])


def test_unsupported_dtype_raises():
    x = fw.ones(3, dtype=fw.int32, device="cuda")
    o = fw.empty((), dtype=fw.int32, device="cuda")
    with pytest.raises(NotImplementedError, match="\"mean_cuda\" not implemented for 'Int'"):
        K.reduce("mean", x, o, None, _geometry(x, [0], False, o, None))


@pytest.mark.parametrize("shape,layout", [((3, 5000), "contiguous"), ((5000, 3), "contiguous")])
def test_split_reductions(monkeypatch, shape, layout):
    # few outputs and long reductions: partial states, then a combining launch
    monkeypatch.setattr(K, "_MIN_WORK", 256)
    monkeypatch.setattr(K, "_TARGET", 8)
    splits = []
    launch = K._launch

    def spy(*args):
        splits.append(args[-3])
        launch(*args)
    monkeypatch.setattr(K, "_launch", spy)
    xs = sample(shape, fw.float32, layout, seed=5, ties=True)
    xn = sample(shape, fw.float16, layout, seed=6, nan=True)
    xi = sample(shape, fw.int32, layout, seed=7)
    dims = [[0, 1], [1 if shape[1] > shape[0] else 0]]
    for d in dims:
        for kernel in ("sum", "mean", "argmax", "argmin", "aminmax", "logsumexp"):
            check(kernel, xs, d)
        check("var", xs, d, p0=1.0, p1=1.0, mean=True)
        check("norm", xs, d, p0=3.0)
        for kernel in ("argmax", "amin", "nansum", "count_nonzero"):
            check(kernel, xn, d)
        for kernel in ("sum", "prod", "all", "any", "argmin", "aminmax"):
            check(kernel, xi, d)
    assert max(splits) > 1
