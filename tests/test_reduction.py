"""Reductions: error paths and messages, out=, return types, and parity with PyTorch
(including hypothesis over random shapes, layouts and dim sets)."""
import math
import re
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import framework as fw
from helpers import make, to_np, assert_close, assert_refused_like

torch = pytest.importorskip("torch")

TORCH_DT = {fw.bool: torch.bool, fw.uint8: torch.uint8, fw.int8: torch.int8,
            fw.int16: torch.int16, fw.int32: torch.int32, fw.int64: torch.int64,
            fw.float16: torch.float16, fw.bfloat16: torch.bfloat16, fw.float32: torch.float32,
            fw.float64: torch.float64}
FW_DT = {v: k for k, v in TORCH_DT.items()}


def to_torch(x):
    """A torch tensor with the values of framework tensor x."""
    if x.numel() == 0:  # (an empty view with an offset cannot be viewed by NumPy)
        return torch.empty(tuple(x.shape), dtype=TORCH_DT[x.dtype])
    return torch.from_numpy(np.array(to_np(x), copy=True)).to(TORCH_DT[x.dtype])


def same(got, ref, rtol=None):
    """A framework result equals a torch result: dtype, shape and values."""
    if isinstance(ref, tuple):
        assert len(got) == len(ref)
        for g, r in zip(got, ref):
            same(g, r, rtol)
        return
    assert FW_DT[ref.dtype] is got.dtype, f"dtype {got.dtype} != {ref.dtype}"
    assert tuple(got.shape) == tuple(ref.shape)
    # both sides round to 16 bits after accumulating in float32 in different orders: allow
    # two float16 ulps (bfloat16's tolerance already does)
    tol = 2e-3 if got.dtype is fw.float16 else None
    assert_close(got, ref.float().numpy() if ref.dtype is torch.bfloat16 else ref.numpy(),
                 rtol=rtol or tol, atol=tol)


def both(fn, x, *args):
    """fn(module, x, *args) with framework and with torch; errors must match in type and
    message."""
    rtol = None
    try:
        ref = fn(torch, to_torch(x), *args)
        if fn is ONE_DIM_OPS["prod"] and x.dtype in (fw.float16, fw.bfloat16):
            # torch rounds every partial product to 16 bits; we multiply in float32 like
            # sums do, so the reference is the float64 product, rounded once
            ref = fn(torch, to_torch(x).double(), *args).to(TORCH_DT[x.dtype])
        elif fn is ONE_DIM_OPS["prod"] and x.dtype is fw.float32:
            # a float32 product of n factors is off by up to about n roundings, in an order
            # of its own: the float64 product, with that bound
            ref = fn(torch, to_torch(x).double(), *args).float()
            rtol = max(1.3e-6, x.numel() * 2.0 ** -24)
    except Exception as e:  # noqa: BLE001 - the error itself is compared below
        with pytest.raises(type(e)) as info:
            fn(fw, x, *args)
        if not isinstance(e, TypeError):  # (argument parsing errors are worded apart)
            assert str(info.value) == str(e).split("\n")[0]
        return
    same(fn(fw, x, *args), ref, rtol)


def err(exc, msg, fn):
    with pytest.raises(exc) as info:
        fn()
    assert msg in str(info.value), str(info.value)


X = fw.arange(6.0).reshape(2, 3)
XI = fw.arange(6).reshape(2, 3)


# ---- error paths ----------------------------------------------------------------------

def test_mean_of_int_errors():
    err(RuntimeError, "mean(): could not infer output dtype. Input dtype must be either a "
        "floating point or complex dtype. Got: Long", lambda: XI.mean())
    err(RuntimeError, "Optional dtype must be either a floating point or complex dtype. Got: "
        "Long", lambda: X.mean(dtype=fw.int64))
    err(RuntimeError, "nanmean(): expected input to have floating point or complex dtype but "
        "got Long", lambda: fw.nanmean(XI))


def test_empty_max_errors():
    e = fw.empty(0)
    err(RuntimeError, "max(): Expected reduction dim to be specified for input.numel() == 0. "
        "Specify the reduction dim with the 'dim' argument.", lambda: e.max())
    err(RuntimeError, "min(): Expected reduction dim to be specified", lambda: fw.min(e))
    err(RuntimeError, "amax(): Expected reduction dim to be specified", lambda: fw.amax(e))
    err(IndexError, "argmax(): Expected reduction dim to be specified for input.numel() == 0.",
        lambda: e.argmax())
    e2 = fw.empty(0, 3)
    err(IndexError, "max(): Expected reduction dim 0 to have non-zero size.",
        lambda: e2.max(0))
    err(IndexError, "amin(): Expected reduction dim 0 to have non-zero size.",
        lambda: fw.amin(e2, 0))
    err(IndexError, "argmin(): Expected reduction dim 0 to have non-zero size.",
        lambda: e2.argmin(0))
    err(RuntimeError, "aminmax(): cannot compute aminmax over an empty dimension",
        lambda: fw.aminmax(e))
    err(RuntimeError, "cannot compute the inf norm on an empty tensor",
        lambda: fw.norm(e, float("inf")))
    assert e2.max(1).values.shape == (0,) and e2.argmax(1).shape == (0,)


def test_empty_identities():
    e = fw.empty(0, 3)
    assert fw.sum(e).item() == 0 and fw.sum(e, 0).tolist() == [0.0] * 3
    assert fw.prod(e, 0).tolist() == [1.0] * 3
    assert fw.all(e).item() is True and fw.any(e).item() is False
    assert np.isnan(fw.mean(e).item())
    assert fw.logsumexp(e, 0).tolist() == [-np.inf] * 3
    assert fw.count_nonzero(e).item() == 0


def test_dim_errors():
    err(RuntimeError, "dim 0 appears multiple times in the list of dims", lambda: X.sum((0, 0)))
    err(RuntimeError, "dim 1 appears multiple times in the list of dims",
        lambda: X.sum((1, -1)))
    err(RuntimeError, "dim 0 appears multiple times", lambda: fw.count_nonzero(X, (0, 0)))
    err(RuntimeError, "dim 0 appears multiple times", lambda: fw.tensor(3.0).sum((0, 0)))
    err(IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
        lambda: X.sum(2))
    err(IndexError, "Dimension out of range", lambda: fw.amax(X, -3))
    err(IndexError, "Dimension out of range", lambda: X.argmax(5))
    err(IndexError, "Dimension out of range (expected to be in range of [-1, 0], but got 1)",
        lambda: fw.tensor(3.0).sum(1))
    assert fw.tensor(3.0).sum(0).item() == 3.0 and fw.tensor(3.0).sum(-1).item() == 3.0
    assert fw.tensor(2.0).max(0).indices.item() == 0


def test_dtype_errors():
    err(RuntimeError, "argmax(): does not support bool input", lambda: fw.ones(2).bool().argmax())
    err(RuntimeError, "std and var only support floating point and complex dtypes",
        lambda: XI.var())
    err(RuntimeError, "std and var only support floating point", lambda: XI.bool().std())
    err(RuntimeError, "linalg.vector_norm: Expected a floating point or complex tensor as "
        "input. Got Long", lambda: XI.norm())
    err(TypeError, "only one of \"unbiased\" or \"correction\" may be given",
        lambda: X.var(0, True, correction=1))
    err(RuntimeError, "var_mean only support floating point", lambda: fw.var_mean(XI))
    err(IndexError, "aminmax: Expected reduction dim 0 to have non-zero size.",
        lambda: fw.aminmax(fw.empty(0, 3), dim=0))
    err(TypeError, "must be Tensor", lambda: fw.sum([1, 2]))


def test_out_errors_and_results():
    r = fw.empty(3, dtype=fw.float64)
    assert fw.sum(X, 0, out=r) is r and r.tolist() == [3.0, 5.0, 7.0]
    err(RuntimeError, "Expected out tensor to have dtype double, but got float instead",
        lambda: fw.sum(X, 0, dtype=fw.float64, out=fw.empty(3)))
    err(RuntimeError, "Expected the dtype for input and out to match, but got Float for "
        "input's dtype and Double for out's dtype.",
        lambda: fw.amax(X, 0, out=fw.empty(3, dtype=fw.float64)))
    err(RuntimeError, "Expected out tensor to have dtype long int, but got int instead",
        lambda: fw.argmax(X, 0, out=fw.empty(3, dtype=fw.int32)))
    err(RuntimeError, "result type Float can't be cast to the desired output type Long",
        lambda: fw.mean(X, 0, out=fw.empty(3, dtype=fw.int64)))
    err(RuntimeError, "all only supports bool tensor for result, got: Float",
        lambda: fw.all(X, 0, out=fw.empty(3)))
    v, i = fw.empty(3), fw.empty(3, dtype=fw.int64)
    res = fw.max(X, 0, out=(v, i))
    assert res.values is v and res.indices is i and i.tolist() == [1, 1, 1]
    # strided out: the kernel writes through the output strides
    big = fw.zeros(2, 4)
    fw.sum(X, 1, out=big[:, 1])
    assert big.tolist() == [[0.0, 3.0, 0.0, 0.0], [0.0, 12.0, 0.0, 0.0]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning, match="resized"):
            fw.sum(X, 0, out=fw.empty(5))


def test_var_dof_warning():
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        v = fw.var(fw.ones(1))
    assert np.isnan(v.item())


def test_return_types():
    r = X.max(1)
    assert isinstance(r, fw.return_types.max) and isinstance(r, tuple)
    values, indices = r
    assert values.tolist() == [2.0, 5.0] and r[1] is indices
    assert "framework.return_types.max(" in repr(r)
    m = fw.aminmax(X)
    assert isinstance(m, fw.return_types.aminmax) and m.min.item() == 0 and m.max.item() == 5
    assert type(X.min(0)).__name__ == "min"


def test_no_copy_of_strided_input():
    # a transposed view reduces in place of its storage: results match the contiguous copy
    x, a = make((64, 48), fw.float32, "cpu", seed=1)
    t = x.t()
    assert not t.is_contiguous()
    assert_close(t.sum(1), a.T.astype(np.float64).sum(1))
    assert_close(t[::2, 3::5].sum(0), a.T[::2, 3::5].astype(np.float64).sum(0))


# ---- parity with torch ----------------------------------------------------------------

DTYPES = [fw.bool, fw.uint8, fw.int32, fw.int64, fw.float16, fw.bfloat16, fw.float32,
          fw.float64]

OPS = {
    "sum": lambda m, x, d, k: m.sum(x, d, k),
    "nansum": lambda m, x, d, k: m.nansum(x, d, k),
    "mean": lambda m, x, d, k: m.mean(x, d, k),
    "nanmean": lambda m, x, d, k: m.nanmean(x, d, k),
    "amax": lambda m, x, d, k: m.amax(x, d if d is not None else (), k),
    "amin": lambda m, x, d, k: m.amin(x, d if d is not None else (), k),
    "var": lambda m, x, d, k: m.var(x, d, keepdim=k),
    "std_c0": lambda m, x, d, k: m.std(x, d, keepdim=k, correction=0),
    "var_mean": lambda m, x, d, k: m.var_mean(x, d, keepdim=k),
    "logsumexp": lambda m, x, d, k: m.logsumexp(x, d if d else tuple(range(x.dim())), k),
    "norm2": lambda m, x, d, k: m.norm(x, 2, d, k),
    "norm1": lambda m, x, d, k: m.norm(x, 1, d, k),
    "norm3": lambda m, x, d, k: m.norm(x, 3, d, k),
    "all": lambda m, x, d, k: m.all(x, d, k) if d is not None else m.all(x),
    "any": lambda m, x, d, k: m.any(x, d, k) if d is not None else m.any(x),
    "count_nonzero": lambda m, x, d, k: m.count_nonzero(x, d),
}

ONE_DIM_OPS = {
    "max": lambda m, x, d, k: m.max(x, d, k) if d is not None else m.max(x),
    "min": lambda m, x, d, k: m.min(x, d, k) if d is not None else m.min(x),
    "argmax": lambda m, x, d, k: m.argmax(x, d, k),
    "argmin": lambda m, x, d, k: m.argmin(x, d, k),
    "prod": lambda m, x, d, k: m.prod(x, d, k) if d is not None else m.prod(x),
    "aminmax": lambda m, x, d, k: tuple(m.aminmax(x, dim=d, keepdim=k)),
}


def _sample(dtype, shape, layout, seed):
    """A tensor of ``shape`` in one of several layouts: contiguous, strided (step 2 on the
    last dim), transposed (memory in reversed order), or with an offset."""
    low, high = (-3, 3) if dtype.is_floating_point or dtype is not fw.uint8 else (0, 3)
    if layout == "transposed" and len(shape) >= 2:
        x, _ = make(shape[::-1], dtype, "cpu", low, high, seed=seed)
        return x.permute(*range(len(shape) - 1, -1, -1))
    if layout == "offset" and shape and shape[0] > 0:
        x, _ = make((shape[0] + 1,) + tuple(shape[1:]), dtype, "cpu", low, high, seed=seed)
        return x[1:]
    x, _ = make(shape, dtype, "cpu", low, high, noncontig=layout == "strided", seed=seed)
    return x


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_torch_parity_fixed(op, dtype):
    for i, (shape, dim) in enumerate([((4, 5), None), ((4, 5), 1), ((3, 4, 5), (0, 2)),
                                      ((3, 4, 5), -2), ((), 0), ((0, 4), 1), ((6,), None)]):
        for layout in ("contiguous", "strided", "transposed"):
            x = _sample(dtype, shape, layout, i)
            for keepdim in (False, True):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    both(OPS[op], x, dim, keepdim)


@pytest.mark.parametrize("op", sorted(ONE_DIM_OPS))
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_torch_parity_one_dim(op, dtype):
    for i, (shape, dim) in enumerate([((4, 5), None), ((4, 5), 0), ((4, 5), -1),
                                      ((3, 4, 5), 1), ((), 0), ((0, 4), 1), ((0, 4), 0)]):
        for layout in ("contiguous", "strided", "transposed"):
            x = _sample(dtype, shape, layout, i)
            for keepdim in (False, True):
                both(ONE_DIM_OPS[op], x, dim, keepdim)


def test_torch_parity_nan():
    a = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, 0.0], [2.0, 5.0, -1.0]])
    x = fw.tensor(a)
    for op in ("sum", "nansum", "mean", "nanmean", "amax", "amin", "var", "logsumexp", "norm2"):
        for dim in (None, 0, 1):
            both(OPS[op], x, dim, False)
    for op in ("max", "min", "argmax", "argmin", "aminmax"):
        for dim in (None, 0, 1):
            both(ONE_DIM_OPS[op], x, dim, False)


@st.composite
def problems(draw):
    nd = draw(st.integers(0, 4))
    shape = tuple(draw(st.lists(st.integers(0, 6), min_size=nd, max_size=nd)))
    dims = draw(st.one_of(st.none(), st.lists(st.integers(-nd, nd - 1) if nd else st.just(0),
                                             unique_by=lambda d: d % builtins_max(nd, 1),
                                             max_size=builtins_max(nd, 1))))
    layout = draw(st.sampled_from(["contiguous", "strided", "transposed", "offset"]))
    dtype = draw(st.sampled_from(DTYPES))
    keepdim = draw(st.booleans())
    return shape, dims, layout, dtype, keepdim, draw(st.integers(0, 1000))


def builtins_max(a, b):
    return a if a > b else b


@settings(max_examples=150, deadline=None)
@given(problems(), st.sampled_from(sorted(OPS)))
def test_torch_parity_hypothesis(problem, op):
    shape, dims, layout, dtype, keepdim, seed = problem
    x = _sample(dtype, shape, layout, seed)
    dim = None if dims is None else tuple(dims)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        both(OPS[op], x, dim, keepdim)


@settings(max_examples=100, deadline=None)
@given(problems(), st.sampled_from(sorted(ONE_DIM_OPS)))
def test_torch_parity_hypothesis_one_dim(problem, op):
    shape, dims, layout, dtype, keepdim, seed = problem
    x = _sample(dtype, shape, layout, seed)
    dim = None if not dims else dims[0]
    both(ONE_DIM_OPS[op], x, dim, keepdim)


@settings(max_examples=30, deadline=None)
@given(st.sampled_from([(70001,), (3, 40001), (40001, 3), (40001, 6), (9, 9000), (300, 301)]),
       st.sampled_from(["contiguous", "strided", "transposed"]),
       st.sampled_from(["sum", "amax", "var", "count_nonzero", "logsumexp", "norm2"]),
       st.sampled_from([None, 0, -1]))
def test_torch_parity_large(shape, layout, op, dim):
    # long float32 reductions: torch's own float32 result is a rounding away from the exact
    # value, so the reference is torch in float64
    # (non-negative values: float32 cannot promise 1e-6 relative after heavy cancellation)
    x = fw.abs(_sample(fw.float32, shape, layout, 7))
    got = OPS[op](fw, x, dim, False)
    ref = OPS[op](torch, to_torch(x).double(), dim, False)
    assert got.dtype is (fw.int64 if op == "count_nonzero" else fw.float32)
    assert_close(got, ref.numpy(), dtype=fw.float32)
    both(ONE_DIM_OPS["argmax"], x, dim, False)


@pytest.mark.parametrize("n", [7, 100, 1000, 5000, 70001])
@pytest.mark.parametrize("dtype", [fw.float16, fw.float32, fw.float64], ids=str)
def test_nan_and_inf_in_long_runs(n, dtype):
    # NaNs and infinities reach the vector lanes, the block search of argmax and the split
    # of long reductions, not only the scalar tails
    rng = np.random.default_rng(n)
    for first, second in ((0, n - 1), (n // 3, n // 2), (n - 1, n - 1)):
        a = rng.standard_normal((3, n))
        a[1, first] = a[1, second] = np.nan
        a[2, second] = np.inf
        a[0, first] = -np.inf
        x = fw.tensor(a, dtype=dtype)
        for op in ("amax", "amin", "sum", "nansum"):
            both(OPS[op], x, 1, False)
            both(OPS[op], x, None, False)
        for op in ("max", "min", "argmax", "argmin"):
            both(ONE_DIM_OPS[op], x, 1, False)
            both(ONE_DIM_OPS[op], x, None, False)
        flat = x.reshape(-1)
        assert flat.argmax().item() == n + first and flat.argmin().item() == n + first
        assert np.isnan(flat.amax().item()) and np.isnan(fw.amin(x[1]).item())
        assert x[2].argmax().item() == second and x[0].argmin().item() == first


# ---- issue 9: NaN semantics and memory overlap ---------------------------------------------

NAN = float("nan")
NAN_REDUCTIONS = {
    "max": lambda L, x: x.max(), "min": lambda L, x: x.min(),
    "max_dim": lambda L, x: x.max(1), "min_dim": lambda L, x: x.min(1),
    "max_dim0": lambda L, x: x.max(0), "amax": lambda L, x: x.amax(1),
    "amin": lambda L, x: x.amin(1), "argmax": lambda L, x: x.argmax(),
    "argmin": lambda L, x: x.argmin(), "argmax_dim": lambda L, x: x.argmax(1),
    "argmin_dim": lambda L, x: x.argmin(1), "aminmax": lambda L, x: x.aminmax(dim=1),
    "nansum": lambda L, x: x.nansum(1), "nanmean": lambda L, x: x.nanmean(1),
}


@pytest.mark.parametrize("op", list(NAN_REDUCTIONS))
@pytest.mark.parametrize("dt", [fw.float32, fw.float16, fw.bfloat16], ids=str)
def test_nan_in_reductions_as_torch(op, dt, device):
    v = [[1.0, NAN, 3.0, NAN], [2.0, 5.0, 4.0, 5.0], [NAN, NAN, NAN, NAN], [-1.0, 0.0, -1.0, 7.0]]
    got = NAN_REDUCTIONS[op](fw, fw.tensor(v, dtype=dt, device=device))
    want = NAN_REDUCTIONS[op](torch, torch.tensor(v, dtype=TORCH_DT[dt]))
    got, want = (tuple(got), tuple(want)) if isinstance(want, tuple) else ((got,), (want,))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.array(g.tolist(), dtype=float),
                                      np.array(w.tolist(), dtype=float))


def _sq(L, d):
    return L.arange(9.0, device=d).reshape(3, 3)


REDUCTION_OVERLAP = {   # refused as torch does
    "max_dim_values_expanded": lambda L, d: L.max(_sq(L, d), 0, out=(
        L.zeros(1, device=d).expand(3), L.zeros(3, dtype=L.int64, device=d))),
    "max_dim_into_input": lambda L, d: (lambda a: L.max(a, 0, out=(
        a[0], L.zeros(3, dtype=L.int64, device=d))))(_sq(L, d)),
    "mean_expanded": lambda L, d: L.mean(_sq(L, d), 0, out=L.zeros(1, device=d).expand(3)),
    "logsumexp_expanded": lambda L, d: L.logsumexp(_sq(L, d), 0,
                                                   out=L.zeros(1, device=d).expand(3)),
}


@pytest.mark.parametrize("name", list(REDUCTION_OVERLAP))
def test_overlapping_reduction_outputs_refused_as_torch(name, device):
    assert_refused_like(torch, REDUCTION_OVERLAP[name], device)


@pytest.mark.parametrize("out", ["expanded", "into_input"])
def test_overlapping_reduction_outputs_refused_where_torch_is_order_dependent(out, device):
    # PyTorch's sum/amax/argmax write such outputs and return loop-order-dependent values;
    # refusing them is the one safe answer
    a = _sq(fw, device)
    target = fw.zeros(1, device=device).expand(3) if out == "expanded" else a[0]
    with pytest.raises(RuntimeError, match="unsupported operation"):
        fw.sum(a, 0, out=target)
    assert a.tolist() == _sq(fw, device).tolist()


def test_inf_norm_of_empty_tensor_over_a_nonempty_dim(device):
    """An inf norm has no identity, but reducing a non-empty dim of an empty tensor needs
    none: torch returns an empty result; reducing the empty dim is refused."""
    x = fw.zeros(0, 3, device=device)
    for p in (float("inf"), float("-inf")):
        assert tuple(x.norm(p, 1).shape) == (0,)
        assert tuple(fw.linalg.vector_norm(x, p, 1).shape) == (0,)
        with pytest.raises(RuntimeError, match="cannot compute the"):
            x.norm(p, 0)


# ---- PyTorch's corner cases (issue 15) ------------------------------------------------------

def test_positional_unbiased_overloads(device):
    """x.std(True) / torch.var(x, False): PyTorch's (input, unbiased) overloads, forward
    and backward (the bool is not a dim)."""
    a = np.random.default_rng(0).standard_normal((3, 5))
    for name in ("std", "var", "std_mean", "var_mean"):
        for unbiased in (True, False):
            x = fw.tensor(a, device=device, requires_grad=True)
            t = torch.tensor(a, requires_grad=True)
            got, want = getattr(fw, name)(x, unbiased), getattr(torch, name)(t, unbiased)
            got = fw.stack(got) if isinstance(got, tuple) else got
            want = torch.stack(want) if isinstance(want, tuple) else want
            np.testing.assert_allclose(to_np(got), want.detach().numpy(), rtol=1e-12)
            got.sum().backward()
            want.sum().backward()
            np.testing.assert_allclose(to_np(x.grad), t.grad.numpy(), rtol=1e-10, atol=1e-12)
    x = fw.tensor(a, device=device)
    np.testing.assert_allclose(to_np(x.std(False)), a.std(), rtol=1e-12)


def test_sum_to_size_scalar_target(device):
    """A 0-d target is the full sum (bool becomes int64, as PyTorch's sum_to)."""
    t = fw.tensor(True, device=device)
    r = t.sum_to_size(())
    assert r.dtype is fw.int64 and r.item() == 1
    b = fw.tensor([True, False, True], device=device)
    assert b.sum_to_size(1).dtype is fw.int64 and b.sum_to_size(3).dtype is fw.bool
    assert b.sum_to_size(()).item() == 2


@pytest.mark.parametrize("shape,ord,dim", [
    ((0, 3), math.inf, 0), ((0, 3), math.inf, None), ((2, 0), -1, 1), ((2, 0), -2.5, (0, 1)),
    ((3, 0), math.inf, (1, 0)), ((2, 0), -math.inf, -1)])
def test_vector_norm_empty_errors_like_torch(device, shape, ord, dim):
    with pytest.raises(RuntimeError) as want:
        torch.linalg.vector_norm(torch.zeros(shape), ord, dim=dim)
    with pytest.raises(RuntimeError, match=re.escape(str(want.value))):
        fw.linalg.vector_norm(fw.zeros(shape, device=device), ord, dim=dim)
