"""Advanced indexing (getitem / setitem / index_put_) against PyTorch as the oracle over
many index patterns (hypothesis), plus the error paths and edge cases of the index ops."""
import functools
import re
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st, HealthCheck

import framework as fw
from helpers import assert_close, to_np

torch = pytest.importorskip("torch")

SETTINGS = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# ---- building the same tensor and index for both libraries ----------------------------

def _layout(arr, layout, device="cpu"):
    """(framework tensor, torch tensor) with arr's values in a given memory layout."""
    if layout == "transposed" and arr.ndim >= 2:
        base = np.ascontiguousarray(np.swapaxes(arr, 0, -1))
        return (fw.tensor(base, device=device).transpose(0, -1),
                torch.tensor(base).transpose(0, -1))
    if layout == "strided" and arr.ndim >= 1:
        big = np.zeros(arr.shape[:-1] + (arr.shape[-1] * 2,), arr.dtype)
        big[..., ::2] = arr
        return fw.tensor(big, device=device)[..., ::2], torch.tensor(big)[..., ::2]
    return fw.tensor(arr, device=device), torch.tensor(arr)


def _convert(spec, lib):
    """One index item of a spec as an index for `lib` (fw or torch)."""
    kind, v = spec
    if kind == "tensor":
        return lib.tensor(v)
    if kind == "list":
        return v.tolist()
    return v


def _index(specs, lib):
    return tuple(_convert(s, lib) for s in specs)


@st.composite
def index_cases(draw):
    """A shape and an index tuple (as specs) with ints, slices, None, Ellipsis, bools,
    int tensors / lists broadcast together, and bool masks over one or more dims."""
    nd = draw(st.integers(0, 4))
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=nd, max_size=nd)))
    bshape = tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=2)))
    specs, d, used_ellipsis, n_mask = [], 0, False, 0
    while True:
        choices = ["none", "bool"]
        if d < nd:
            choices += ["int", "slice", "tensor", "tensor", "list", "mask"]
        if not used_ellipsis:
            choices.append("ellipsis")
        if draw(st.integers(0, 4)) == 0 or len(specs) > 5:
            break
        kind = draw(st.sampled_from(choices))
        size = shape[d] if d < nd else 0
        if kind == "none":
            specs.append(("raw", None))
        elif kind == "bool":
            specs.append(("raw", draw(st.booleans())))
        elif kind == "ellipsis":
            used_ellipsis = True
            specs.append(("raw", Ellipsis))
            d = nd      # treat the rest as consumed; later items index from the end
            break
        elif kind == "int":
            if size == 0:
                continue
            specs.append(("raw", draw(st.integers(-size, size - 1))))
            d += 1
        elif kind == "slice":
            start = draw(st.one_of(st.none(), st.integers(-5, 5)))
            stop = draw(st.one_of(st.none(), st.integers(-5, 5)))
            step = draw(st.one_of(st.none(), st.integers(1, 3)))
            specs.append(("raw", slice(start, stop, step)))
            d += 1
        elif kind in ("tensor", "list"):
            if size == 0:
                continue
            k = draw(st.integers(0, len(bshape)))
            ishape = tuple(draw(st.sampled_from([1, n])) for n in bshape[len(bshape) - k:])
            vals = np.array(draw(st.lists(st.integers(-size, size - 1),
                                          min_size=int(np.prod(ishape)),
                                          max_size=int(np.prod(ishape)))), np.int64)
            vals = vals.reshape(ishape)
            if kind == "list" and vals.ndim != 1:
                kind = "tensor"
            if kind == "tensor" and vals.ndim == 0 and draw(st.booleans()):
                vals = vals.reshape(1)
            specs.append((kind, vals))
            d += 1
        elif kind == "mask":
            if n_mask:
                continue    # two masks rarely broadcast; one keeps most cases valid
            k = draw(st.integers(1, nd - d))
            mshape = shape[d:d + k]
            vals = np.array(draw(st.lists(st.booleans(), min_size=int(np.prod(mshape)),
                                          max_size=int(np.prod(mshape)))), bool)
            specs.append(("tensor", vals.reshape(mshape)))
            n_mask += 1
            d += k
    return shape, specs


def _torch_or_error(fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(), None
    except (IndexError, RuntimeError, ValueError) as e:
        return None, e


def _check_same(fw_fn, torch_fn):
    expected, err = _torch_or_error(torch_fn)
    if err is not None:
        with pytest.raises(type(err)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fw_fn()
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = fw_fn()
    assert tuple(got.shape) == tuple(expected.shape)
    np.testing.assert_array_equal(to_np(got), expected.numpy())
    return got


@SETTINGS
@given(index_cases(), st.sampled_from(["contiguous", "transposed", "strided"]))
def test_getitem_matches_torch(case, layout):
    shape, specs = case
    arr = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    x, tx = _layout(arr, layout)
    _check_same(lambda: x[_index(specs, fw)], lambda: tx[_index(specs, torch)])


@SETTINGS
@given(index_cases(), st.sampled_from(["contiguous", "transposed", "strided"]),
       st.sampled_from(["scalar", "float_scalar", "tensor", "broadcast", "float_tensor"]))
def test_setitem_matches_torch(case, layout, value_kind):
    shape, specs = case
    arr = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    x, tx = _layout(arr, layout)
    pos, err = _torch_or_error(lambda: torch.arange(tx.numel()).reshape(tx.shape)[
        _index(specs, torch)])
    rshape = tuple(pos.shape) if err is None else ()
    unique = err is None and len(torch.unique(pos)) == pos.numel()
    if value_kind == "scalar" or not unique:
        v, tv = -7, -7
    elif value_kind == "float_scalar":
        v, tv = 2.75, 2.75
    else:
        vshape = rshape if value_kind != "broadcast" else tuple(
            1 if i % 2 == 0 else n for i, n in enumerate(rshape))[1:]
        varr = (np.arange(int(np.prod(vshape)), dtype=np.int64) * 3 + 100).reshape(vshape)
        if value_kind == "float_tensor":
            varr = varr.astype(np.float32) + 0.5
        v, tv = fw.tensor(varr), torch.tensor(varr)

    def fw_set():
        x[_index(specs, fw)] = v
        return x

    def torch_set():
        tx[_index(specs, torch)] = tv
        return tx
    _check_same(fw_set, torch_set)


@SETTINGS
@given(st.integers(1, 5), st.integers(1, 4), st.lists(st.integers(-5, 4), min_size=0,
                                                       max_size=12), st.booleans())
def test_index_put_accumulate_matches_torch(n, m, rows, with_cols):
    rows = [r % n for r in rows]
    arr = np.arange(n * m, dtype=np.float64).reshape(n, m)
    x, tx = fw.tensor(arr), torch.tensor(arr)
    r = np.array(rows, np.int64)
    if with_cols:
        c = (np.arange(len(rows)) % m).astype(np.int64)
        vals = np.arange(len(rows), dtype=np.float64) + 1
        x.index_put_((fw.tensor(r), fw.tensor(c)), fw.tensor(vals), accumulate=True)
        tx.index_put_((torch.tensor(r), torch.tensor(c)), torch.tensor(vals), accumulate=True)
    else:
        vals = np.ones((len(rows), m))
        x.index_put_((fw.tensor(r),), fw.tensor(vals), accumulate=True)
        tx.index_put_((torch.tensor(r),), torch.tensor(vals), accumulate=True)
    np.testing.assert_array_equal(to_np(x), tx.numpy())


# ---- specific layouts and dtypes ---------------------------------------------------------

@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64",
                                   "float16", "bfloat16", "float32", "float64"])
def test_getitem_setitem_all_dtypes(dtype, device):
    fdt, tdt = getattr(fw, dtype), getattr(torch, dtype)
    base = torch.arange(24).reshape(2, 3, 4).to(tdt)
    x = fw.tensor(base.float().numpy(), device=device).to(fdt)
    idx = ([1, 0, 1], slice(None), [3, 0, 2])
    got, exp = x[idx], base[idx]
    np.testing.assert_array_equal(to_np(got), exp.float().numpy())
    assert got.dtype is fdt
    x[x.bool()] = 1
    base[base.bool()] = 1
    np.testing.assert_array_equal(to_np(x).astype(np.float64), base.double().numpy())


def test_big_gather_and_put_threads(device):
    # large enough for the threaded paths (both "over outer" and "over index" splits)
    a = np.random.default_rng(0).standard_normal((300, 257)).astype(np.float32)
    x = fw.tensor(a, device=device)
    rows = np.random.default_rng(1).integers(-300, 300, 5000)
    assert_close(x[fw.tensor(rows)], a[rows])
    assert_close(x[:, fw.tensor(rows % 257)], a[:, rows % 257])
    assert_close(x.t()[fw.tensor(rows % 257)], a.T[rows % 257])
    ref = a.copy()
    ref[:, [5, 7]] = 0
    x[:, [5, 7]] = 0
    assert_close(x, ref)


def test_setitem_on_view_writes_base(device):
    x = fw.zeros(4, 5, device=device)
    v = x[1:, ::2]
    v[[0, 2], [1, 1]] = 3.0
    ref = np.zeros((4, 5))
    ref[1:, ::2][[0, 2], [1, 1]] = 3.0
    assert_close(x, ref)


def test_getitem_returns_copy_and_bool_scalar(device):
    x = fw.arange(6, device=device).reshape(2, 3)
    y = x[[0, 1]]
    y[0, 0] = 100
    assert x[0, 0].item() == 0
    assert x[True].shape == (1, 2, 3)
    assert x[False].shape == (0, 2, 3)
    assert x[None, True, ..., None].shape == (1, 1, 2, 3, 1)
    assert x[fw.tensor(1)].tolist() == [3, 4, 5]     # 0-d int tensor acts like an int
    assert x[fw.tensor(True)].shape == (1, 2, 3)


def test_zero_dim_tensor_indexing(device):
    s = fw.tensor(5.0, device=device)
    assert s[None].tolist() == [5.0]
    assert s[...].item() == 5.0
    assert s[True].tolist() == [5.0]
    assert s[False].shape == (0,)
    assert s[fw.tensor(True)].tolist() == [5.0]
    s[True] = 2.0
    assert s.item() == 2.0
    s[fw.tensor(False)] = 9.0
    assert s.item() == 2.0
    with pytest.raises(IndexError, match="too many indices"):
        s[fw.tensor([0])]


def test_empty_index_tensors(device):
    x = fw.arange(12, device=device).reshape(3, 4)
    assert x[[]].shape == (0, 4)
    assert x[fw.tensor([], dtype=fw.int64)].shape == (0, 4)
    assert x[:, fw.zeros(0, 2, dtype=fw.int64)].shape == (3, 0, 2)
    assert x[fw.zeros(3, 4, dtype=fw.bool)].shape == (0,)
    x[[]] = 5
    assert to_np(x).tolist() == np.arange(12).reshape(3, 4).tolist()
    e = fw.zeros(0, 3, device=device)
    assert e[[], 1].shape == (0,)
    assert e[:, [2, 0]].shape == (0, 2)


def test_sequence_as_tuple_rule(device):
    x = fw.arange(6, device=device).reshape(2, 3)
    with pytest.warns(UserWarning, match="non-tuple sequence"):
        assert x[[[0, 1], [1, 0]]].tolist() == [1, 3]
    assert x[[0, 1]].shape == (2, 3)
    assert x[[True, False]].tolist() == [[0, 1, 2]]


# ---- error paths ----------------------------------------------------------------------

@pytest.mark.parametrize("make_index, exc, msg", [
    (lambda: fw.tensor([5]), IndexError, "index 5 is out of bounds for dimension 0 with size 3"),
    (lambda: (slice(None), fw.tensor([-3])), IndexError,
     "index -3 is out of bounds for dimension 1 with size 2"),
    (lambda: fw.tensor([1.0]), IndexError,
     "tensors used as indices must be long, int, byte or bool tensors"),
    (lambda: fw.tensor([1], dtype=fw.int8), IndexError,
     "tensors used as indices must be long, int, byte or bool tensors"),
    (lambda: fw.tensor([True, False]), IndexError,
     r"The shape of the mask \[2\] at index 0 does not match the shape of the indexed tensor "
     r"\[3, 2\] at index 0"),
    (lambda: ([0, 1], [0, 1, 1]), IndexError,
     r"shape mismatch: indexing tensors could not be broadcast together with shapes \[2\], \[3\]"),
    (lambda: ([0], [0], [0]), IndexError, "too many indices for tensor of dimension 2"),
    (lambda: ("a",), TypeError, "new\\(\\): invalid data type 'str'"),
    (lambda: (1.5,), IndexError, "only integers, slices"),
])
def test_getitem_errors(make_index, exc, msg, device):
    x = fw.zeros(3, 2, device=device)
    with pytest.raises(exc, match=msg):
        x[make_index()]


def test_setitem_errors(device):
    x = fw.zeros(3, device=device)
    with pytest.raises(RuntimeError, match=r"shape mismatch: value tensor of shape \[3\] cannot "
                                           r"be broadcast to indexing result of shape \[2\]"):
        x[fw.tensor([1, 2])] = fw.ones(3)
    with pytest.raises(IndexError, match="out of bounds"):
        x[fw.tensor([3])] = 1.0
    with pytest.raises(RuntimeError, match="Index put requires the source and destination "
                                           "dtypes match, got Float for the destination and "
                                           "Double for the source"):
        x.index_put_((fw.tensor([0]),), fw.tensor([1.0], dtype=fw.float64))
    assert to_np(x).tolist() == [0, 0, 0]


def _raises(exc, msg, fn):
    with pytest.raises(exc, match=msg):
        fn()


def test_index_op_errors(device):
    T = functools.partial(fw.tensor, device=device)   # index tensors on x's device
    x = fw.zeros(3, device=device)
    m = fw.zeros(3, 3, device=device)
    i5 = T([5], device=device)
    _raises(IndexError, "index out of range in self", lambda: fw.index_select(x, 0, i5))
    _raises(IndexError, "index out of range in self",
            lambda: fw.index_select(x, 0, T([-1])))
    _raises(RuntimeError, "index_select\\(\\): Expected dtype int32 or int64 for index",
            lambda: fw.index_select(x, 0, T([1.0])))
    _raises(IndexError, "Index is supposed to be a vector",
            lambda: fw.index_select(x, 0, T([[1]])))
    _raises(RuntimeError, "index 5 is out of bounds for dimension 0 with size 3",
            lambda: fw.gather(x, 0, i5))
    _raises(RuntimeError, "index -1 is out of bounds for dimension 0 with size 3",
            lambda: fw.gather(x, 0, T([-1])))
    _raises(RuntimeError, "Index tensor must have the same number of dimensions as input tensor",
            lambda: fw.gather(m, 0, T([1])))
    _raises(RuntimeError, "gather\\(\\): Expected dtype int32/int64 for index",
            lambda: fw.gather(m, 0, T([[1.0]])))
    _raises(RuntimeError, "Size does not match at dimension 0 expected index \\[4, 1\\] to be "
            "no larger than self \\[3, 3\\] apart from dimension 1",
            lambda: fw.gather(m, 1, T([[1]] * 4)))
    _raises(RuntimeError, "index 5 is out of bounds for dimension 0 with size 3",
            lambda: x.scatter_(0, i5, 1.0))
    _raises(RuntimeError, "scatter\\(\\): Expected self.dtype to be equal to src.dtype",
            lambda: x.scatter(0, T([0]), fw.ones(1, dtype=fw.float64, device=device)))
    _raises(RuntimeError, "reduce argument must be either add or multiply.",
            lambda: x.scatter(0, T([0]), 1.0, reduce="max"))
    _raises(RuntimeError, "reduce argument must be either sum, prod, mean, amax or amin, got foo",
            lambda: x.scatter_reduce(0, T([0]), fw.ones(1, device=device), "foo"))
    _raises(RuntimeError, "Expected index \\[2, 2\\] to be no larger than self \\[3, 3\\] apart "
            "from dimension 0 and to be no larger size than src \\[1, 1\\]",
            lambda: m.scatter(0, T([[1, 1], [1, 1]]), fw.ones(1, 1, device=device)))
    _raises(IndexError, "index out of range in self",
            lambda: x.index_add_(0, i5, fw.ones(1, device=device)))
    _raises(RuntimeError, "index_add_\\(\\): self \\(Float\\) and source \\(Double\\) must have "
            "the same scalar type",
            lambda: x.index_add(0, T([1]), fw.ones(1, dtype=fw.float64, device=device)))
    _raises(RuntimeError, "source tensor shape must match self tensor shape",
            lambda: fw.zeros(3, 4, device=device).index_add(0, T([1]), fw.ones(1, 3, device=device)))
    _raises(IndexError, "index_copy_\\(\\): index 5 is out of bounds for dimension 0 with size 3",
            lambda: x.index_copy_(0, i5, fw.ones(1, device=device)))
    _raises(IndexError, "index_copy_\\(\\): Number of indices \\(1\\) should be equal to "
            "source.size\\(dim\\) \\(2\\)", lambda: m.index_copy(0, T([1]), fw.ones(2, 3, device=device)))
    _raises(IndexError, "index 5 is out of bounds for dimension 0 with size 3",
            lambda: x.index_fill_(0, i5, 1))
    _raises(IndexError, "index_fill_\\(\\): Expected dtype int64 for index.",
            lambda: x.index_fill_(0, T([0], dtype=fw.int32), 1))
    _raises(IndexError, "out of range: tried to access index 5 on a tensor of 3 elements.",
            lambda: x.take(i5))
    _raises(IndexError, "out of range: tried to access index -4 on a tensor of 3 elements.",
            lambda: x.put_(T([-4]), fw.ones(1, device=device)))
    _raises(RuntimeError, "take\\(\\): Expected a long tensor for index, but got Int",
            lambda: x.take(T([1], dtype=fw.int32)))
    _raises(IndexError, "put_\\(\\): Expected source and index to have the same number of "
            "elements", lambda: x.put_(T([0]), fw.ones(2, device=device)))
    _raises(RuntimeError, "masked_fill_ only supports boolean masks, but got mask with dtype "
            "long int", lambda: x.masked_fill(T([1, 0, 1]), 1.0))
    _raises(RuntimeError, "masked_fill_ only supports a 0-dimensional value tensor, but got "
            "tensor with 1 dimension\\(s\\).",
            lambda: x.masked_fill(T([True, False, True]), fw.ones(3, device=device)))
    _raises(RuntimeError, "doesn't match the broadcast shape \\[1, 3\\]",
            lambda: x.masked_fill_(T([[True, False, True]]), 1.0))
    _raises(RuntimeError, "masked_select: expected BoolTensor for mask",
            lambda: x.masked_select(T([1, 0, 1])))
    _raises(RuntimeError, "Number of elements of source < number of ones in mask",
            lambda: x.masked_scatter_(T([True, False, True]), fw.ones(1, device=device)))
    _raises(RuntimeError, "masked_scatter_ only supports boolean masks, but got mask with dtype "
            "Long", lambda: x.masked_scatter(T([1, 0, 1]), fw.ones(3, device=device)))
    _raises(RuntimeError, "torch.take_along_dim\\(\\): input and indices should have the same "
            "number of dimensions", lambda: fw.take_along_dim(m, T([1]), 0))
    _raises(RuntimeError, "torch.take_along_dim\\(\\): dtype of indices should be Long but got "
            "Int", lambda: fw.take_along_dim(m, T([[1]], dtype=fw.int32), 0))
    _raises(RuntimeError, "tril: input tensor must have at least 2 dimensions", lambda: x.tril())
    _raises(RuntimeError, "row must be non-negative", lambda: fw.tril_indices(-1, 3))
    assert to_np(x).tolist() == [0, 0, 0]


def test_scatter_ops_match_torch_random(device):
    rng = np.random.default_rng(3)
    for trial in range(20):
        shape = tuple(rng.integers(1, 5, 3))
        dim = int(rng.integers(-3, 3))
        ishape = tuple(int(rng.integers(1, n + 1)) for n in shape)
        idx = rng.integers(0, shape[dim], ishape)
        a = rng.integers(-3, 4, shape).astype(np.float64)
        s = rng.integers(-3, 4, ishape).astype(np.float64)
        x, tx = fw.tensor(a, device=device), torch.tensor(a)
        i, ti = fw.tensor(idx, device=device), torch.tensor(idx)
        src, tsrc = fw.tensor(s, device=device), torch.tensor(s)
        for reduce in ("sum", "prod", "mean", "amax", "amin"):
            for inc in (True, False):
                got = x.scatter_reduce(dim, i, src, reduce, include_self=inc)
                exp = tx.scatter_reduce(dim, ti, tsrc, reduce, include_self=inc)
                np.testing.assert_allclose(to_np(got), exp.numpy())
        np.testing.assert_array_equal(to_np(x.scatter_add(dim, i, src)),
                                      tx.scatter_add(dim, ti, tsrc).numpy())
        np.testing.assert_array_equal(to_np(fw.gather(x, dim, i)),
                                      torch.gather(tx, dim, ti).numpy())


def test_scatter_reduce_int_mean_floors_and_nan_max(device):
    T = functools.partial(fw.tensor, device=device)   # index tensors on x's device
    x = T([-1, 3], device=device)
    got = x.scatter_reduce(0, T([0, 0]), T([-2, -6]), "mean")
    assert got.tolist() == [-3, 3]
    f = T([1.0, 2.0], device=device)
    got = f.scatter_reduce(0, T([0, 0]), T([float("nan"), 5.0]), "amax")
    assert np.isnan(got.tolist()[0]) and got.tolist()[1] == 2.0


def test_out_and_inplace_variants(device):
    T = functools.partial(fw.tensor, device=device)   # index tensors on x's device
    x = fw.arange(12.0, device=device).reshape(3, 4)
    out = fw.zeros(2, 4, device=device)
    r = fw.index_select(x, 0, T([2, 0]), out=out)
    assert r is out and out.tolist() == x[[2, 0]].tolist()
    out = fw.empty(0, device=device)
    fw.gather(x, 1, T([[0], [1], [3]]), out=out)
    assert out.tolist() == [[0.0], [5.0], [11.0]]
    out = fw.empty(0, dtype=fw.int64, device=device)
    fw.nonzero(x, out=out)
    assert out.shape == (11, 2)
    y = x.clone()
    v0 = y._version
    y.triu_(1)
    assert y._version > v0
    np.testing.assert_array_equal(to_np(y), np.triu(np.arange(12.0).reshape(3, 4), 1))
    t = x.clone().t()          # non-contiguous in-place
    t.tril_()
    np.testing.assert_array_equal(to_np(t), np.tril(np.arange(12.0).reshape(3, 4).T))
    p = x.clone().t()
    p.put_(T([0, 5]), T([-1.0, -2.0]))
    ref = np.arange(12.0).reshape(3, 4).T.copy()
    ref.reshape(-1)[[0, 5]] = [-1, -2]
    np.testing.assert_array_equal(to_np(p), ref)


def test_where_condition_and_argwhere(device):
    from framework._ops.masked import where_condition
    a = np.array([[0, 2, 0], [1, 0, 3]])
    x = fw.tensor(a, device=device).t()
    rows, cols = where_condition(x)
    er, ec = np.nonzero(a.T)
    assert rows.tolist() == er.tolist() and cols.tolist() == ec.tolist()
    assert fw.argwhere(x).tolist() == np.argwhere(a.T).tolist()
    big = np.random.default_rng(0).random((300, 301)) > 0.7
    assert_close(fw.nonzero(fw.tensor(big)), np.argwhere(big))


def test_take_put_any_layout(device):
    T = functools.partial(fw.tensor, device=device)   # index tensors on x's device
    a = np.arange(12.0).reshape(3, 4)
    x = T(a, device=device).t()
    idx = [0, 1, -1, 5]
    assert x.take(T(idx)).tolist() == a.T.ravel()[idx].tolist()
    x.put_(T([0, 1]), T([-1.0, -2.0], dtype=fw.float64))
    ref = a.T.copy()
    ref.reshape(-1)[[0, 1]] = [-1, -2]
    np.testing.assert_array_equal(to_np(x), ref)
    _raises(IndexError, "take\\(\\): tried to take from an empty tensor",
            lambda: fw.zeros(0, device=device).take(T([0])))
    assert fw.zeros(0, device=device).take(T([], dtype=fw.int64)).shape == (0,)


def test_uint8_mask_is_deprecated_but_works(device):
    x = fw.arange(4, device=device)
    with pytest.warns(UserWarning, match="uint8"):
        assert x[fw.tensor([1, 0, 1, 0], dtype=fw.uint8)].tolist() == [0, 2]


def test_mask_setitem_dispatches_to_masked_fill(device):
    # a one-element value with a single bool mask converts dtype (PyTorch's masked_fill path)
    x = fw.zeros(2, 3, dtype=fw.int64, device=device)
    tx = torch.zeros(2, 3, dtype=torch.int64)
    m = np.array([True, False])
    x[fw.tensor(m)] = fw.tensor([2.5])
    tx[torch.tensor(m)] = torch.tensor([2.5])
    np.testing.assert_array_equal(to_np(x), tx.numpy())
    with pytest.raises(RuntimeError, match="Index put requires the source and destination"):
        x[fw.tensor([0])] = fw.tensor([2.5])


def test_setitem_rejects_non_numbers(device):
    x = fw.zeros(3, device=device)
    for v in ([1.0, 2.0], (1, 2), None, "a"):
        with pytest.raises(TypeError, match="can't assign a"):
            x[fw.tensor([0, 1])] = v
    with pytest.raises(TypeError, match=re.escape(f"can't assign a list to a {x.type()}")):
        x[0:2] = [1.0, 2.0]


def test_index_select_out_variants(device):
    T = functools.partial(fw.tensor, device=device)   # index tensors on x's device
    a = np.arange(12.0).reshape(3, 4)
    x = T(a, dtype=fw.float32, device=device)
    big = fw.zeros(3, 8, device=device)
    out = big[:, ::2]                       # non-contiguous out
    fw.index_select(x, 0, T([2, 0, 1]), out=out)
    np.testing.assert_array_equal(to_np(out), a[[2, 0, 1]])
    y = x.clone()
    with pytest.raises(RuntimeError, match="refer to a single memory location"):
        fw.index_select(y, 0, T([2, 2, 0]), out=y)
    s = T(7.0, device=device)
    o = fw.zeros((), device=device)
    fw.index_select(s, 0, T([0]), out=o)
    assert o.item() == 7.0 and fw.index_select(s, 0, T(0)).shape == ()
    with pytest.raises(RuntimeError, match="same scalar type"):
        fw.index_select(x, 0, T([0]), out=fw.zeros(1, 4, dtype=fw.float64, device=device))


def _pair(arr, transposed):
    """(framework, torch) tensors with arr's values, optionally in a transposed layout."""
    if transposed and arr.ndim >= 2:
        base = np.ascontiguousarray(np.swapaxes(arr, 0, -1))
        return fw.tensor(base).transpose(0, -1), torch.tensor(base).transpose(0, -1)
    return fw.tensor(arr), torch.tensor(arr)


@pytest.mark.parametrize("seed", range(12))
def test_dim_ops_match_torch_random(seed):
    rng = np.random.default_rng(seed)
    nd = int(rng.integers(1, 4))
    shape = tuple(int(n) for n in rng.integers(1, 5, nd))
    dim = int(rng.integers(-nd, nd))
    n_idx = int(rng.integers(0, 6))
    idx = rng.integers(0, shape[dim], n_idx)
    a = rng.integers(-5, 6, shape).astype(np.float32)
    sshape = list(shape)
    sshape[dim] = n_idx
    s = rng.integers(-5, 6, sshape).astype(np.float32)
    tr = bool(seed % 2)
    x, tx = _pair(a, tr)
    src, tsrc = _pair(s, not tr)
    i, ti = fw.tensor(idx), torch.tensor(idx)
    checks = [
        (fw.index_select(x, dim, i), torch.index_select(tx, dim, ti)),
        (x.index_add(dim, i, src, alpha=3), tx.index_add(dim, ti, tsrc, alpha=3)),
        (x.index_fill(dim, i, -1.5), tx.index_fill(dim, ti, -1.5)),
    ]
    uniq = np.unique(idx)
    su = np.take(s, np.arange(len(uniq)), axis=dim) if len(uniq) else np.take(s, [], axis=dim)
    sux, tsux = _pair(np.ascontiguousarray(su), tr)
    checks.append((x.index_copy(dim, fw.tensor(uniq), sux),
                   tx.index_copy(dim, torch.tensor(uniq), tsux)))
    for got, exp in checks:
        assert tuple(got.shape) == tuple(exp.shape)
        np.testing.assert_array_equal(to_np(got), exp.numpy())


@pytest.mark.parametrize("seed", range(8))
def test_masked_ops_match_torch_random(seed):
    rng = np.random.default_rng(seed)
    shape = tuple(int(n) for n in rng.integers(1, 5, int(rng.integers(1, 4))))
    mshape = tuple(1 if rng.random() < 0.3 else n for n in shape)[int(rng.integers(0, 2)):]
    a = rng.standard_normal(shape).astype(np.float32)
    m = rng.random(mshape) > 0.5
    x, tx = _pair(a, bool(seed % 2))
    mk, tmk = fw.tensor(m), torch.tensor(m)
    src = rng.standard_normal(a.size).astype(np.float32)
    pairs = [
        (x.masked_fill(mk, 7.0), tx.masked_fill(tmk, 7.0)),
        (x.masked_select(mk), tx.masked_select(tmk)),
        (x.masked_scatter(mk, fw.tensor(src)), tx.masked_scatter(tmk, torch.tensor(src))),
        (x[mk.expand(x.shape) if mk.shape != x.shape else mk],
         tx[tmk.expand(tx.shape) if tmk.shape != tx.shape else tmk]),
    ]
    for got, exp in pairs:
        assert tuple(got.shape) == tuple(exp.shape)
        np.testing.assert_array_equal(to_np(got), exp.numpy())


def test_numpy_array_indices(device):
    a = np.arange(24).reshape(2, 3, 4)
    x = fw.tensor(a, device=device)
    m = a[:, :, 0] % 4 == 0
    np.testing.assert_array_equal(to_np(x[m, ...]), a[m, ...])
    np.testing.assert_array_equal(to_np(x[..., np.array([3, 0])]), a[..., [3, 0]])
    np.testing.assert_array_equal(to_np(x[np.array([1, 0])]), a[[1, 0]])


def test_accumulate_with_duplicates_on_threads(device):
    # large problems take the threaded paths; duplicates must never lose an update
    T = functools.partial(fw.tensor, device=device)   # index tensors on x's device
    rng = np.random.default_rng(5)
    rows = rng.integers(0, 50, 20000)
    vals = rng.integers(-3, 4, (20000, 130)).astype(np.float64)
    ref = np.zeros((50, 130))
    np.add.at(ref, rows, vals)
    x = fw.zeros(50, 130, dtype=fw.float64, device=device)
    x.index_put_((T(rows),), T(vals), accumulate=True)
    np.testing.assert_array_equal(to_np(x), ref)
    y = fw.zeros(50, 130, dtype=fw.float64, device=device)
    y.index_add_(0, T(rows), T(vals))
    np.testing.assert_array_equal(to_np(y), ref)
    z = fw.zeros(50, 130, dtype=fw.float64, device=device)
    z.scatter_add_(0, T(np.repeat(rows[:, None], 130, 1)), T(vals))
    np.testing.assert_array_equal(to_np(z), ref)
    zt = fw.zeros(130, 50, dtype=fw.float64, device=device)
    zt.scatter_add_(1, T(np.repeat(rows[None, :], 130, 0)), T(vals.T.copy()))
    np.testing.assert_array_equal(to_np(zt), ref.T)


def test_tri_indices_dtypes(device):
    assert fw.tril_indices(3, 3, dtype=fw.int32, device=device).dtype is fw.int32
    with pytest.raises(NotImplementedError, match="\"tril_indices\" not implemented for 'Float'"):
        fw.tril_indices(3, 3, dtype=fw.float32)
    with pytest.raises(RuntimeError, match="col must be non-negative"):
        fw.triu_indices(3, -1)


# ---- bad indices and devices (issue 9): PyTorch's error, and nothing written -----------------

def _x(lib, device="cpu"):
    return lib.arange(12.0, device=device).reshape(3, 4)


# (call(lib, x, device) that writes into x, exception, message fragment). PyTorch may have
# written part of x when it raises; the framework checks every index first.
_BAD_WRITES = {
    "scatter_": (lambda L, x, d: x.scatter_(1, L.tensor([[0, 1], [2, 4]], device=d),
                                            L.ones(2, 2, device=d)),
                 RuntimeError, "index 4 is out of bounds for dimension 1 with size 4"),
    "scatter_value": (lambda L, x, d: x.scatter_(0, L.tensor([[0, -1]], device=d), 5.0),
                      RuntimeError, "index -1 is out of bounds for dimension 0 with size 3"),
    "scatter_add_": (lambda L, x, d: x.scatter_add_(0, L.tensor([[1], [3]], device=d),
                                                    L.ones(2, 1, device=d)),
                     RuntimeError, "index 3 is out of bounds for dimension 0 with size 3"),
    "scatter_reduce_": (lambda L, x, d: x.scatter_reduce_(
        1, L.tensor([[0, 9]], device=d), L.ones(1, 2, device=d), "mean", include_self=False),
        RuntimeError, "index 9 is out of bounds for dimension 1 with size 4"),
    "scatter_int32": (lambda L, x, d: x.scatter_(1, L.tensor([[3, 2, -5]], dtype=L.int32,
                                                             device=d), -1.0),
                      RuntimeError, "index -5 is out of bounds for dimension 1 with size 4"),
    "index_add_": (lambda L, x, d: x.index_add_(0, L.tensor([0, 3], device=d),
                                                L.ones(2, 4, device=d)),
                   RuntimeError, "index 3 is out of bounds for dimension 0 with size 3"),
    "index_add_alpha": (lambda L, x, d: x.index_add_(1, L.tensor([-1], device=d),
                                                     L.ones(3, 1, device=d), alpha=2),
                        IndexError, "index out of range in self"),
    "index_add_3d": (lambda L, x, d: x.view(3, 2, 2).index_add_(1, L.tensor([2], device=d),
                                                                L.ones(3, 1, 2, device=d)),
                     IndexError, "index out of range in self"),
    "index_copy_": (lambda L, x, d: x.index_copy_(1, L.tensor([1, -5], device=d),
                                                  L.ones(3, 2, device=d)),
                    IndexError, "index_copy_\\(\\): index -5 is out of bounds for dimension 1"),
    "index_fill_": (lambda L, x, d: x.index_fill_(0, L.tensor([1, 3], device=d), -1.0),
                    IndexError, "index 3 is out of bounds for dimension 0 with size 3"),
    "index_put_": (lambda L, x, d: x.index_put_((L.tensor([0, 2], device=d),
                                                 L.tensor([1, 4], device=d)), L.tensor(-1.0)),
                   IndexError, "index 4 is out of bounds for dimension 1 with size 4"),
    "index_put_accumulate": (lambda L, x, d: x.index_put_(
        (L.tensor([0, 2], device=d), L.tensor([1, 4], device=d)), L.ones(2, device=d),
        accumulate=True), IndexError, "index 4 is out of bounds for dimension 1 with size 4"),
    "setitem": (lambda L, x, d: x.__setitem__((L.tensor([1, -4], device=d), slice(None)), 7.0),
                IndexError, "index -4 is out of bounds for dimension 0 with size 3"),
    "put_": (lambda L, x, d: x.put_(L.tensor([0, 12], device=d), L.ones(2, device=d)),
             IndexError, "out of range: tried to access index 12 on a tensor of 12 elements"),
    "put_accumulate": (lambda L, x, d: x.put_(L.tensor([0, -13], device=d),
                                              L.ones(2, device=d), accumulate=True),
                       IndexError, "tried to access index -13 on a tensor of 12 elements"),
    "masked_scatter_": (lambda L, x, d: x.masked_scatter_(x > 2, L.ones(5, device=d)),
                        RuntimeError, "Number of elements of source < number of ones in mask"),
}


@pytest.mark.parametrize("name", list(_BAD_WRITES))
def test_bad_index_raises_before_writing(name, device):
    call, exc, msg = _BAD_WRITES[name]
    with pytest.raises(exc, match=msg):
        call(torch, _x(torch), "cpu")
    x = _x(fw, device)
    with pytest.raises(exc, match=msg):
        call(fw, x, device)
    assert x.tolist() == _x(torch).tolist()


def test_scatter_bad_index_after_many_good_ones_writes_nothing(device):
    # the bad index comes last, in another program block than the good ones
    x = fw.zeros(5000, device=device)
    idx = fw.arange(5000, device=device)
    idx[-1] = 5000
    with pytest.raises(RuntimeError, match="index 5000 is out of bounds"):
        x.scatter_(0, idx, 1.0)
    assert x.sum().item() == 0


@pytest.mark.parametrize("call", [
    lambda L: L.histc(_x(L), bins=2.5),
    lambda L: _x(L).index_select(0.0, L.tensor([0])),
    lambda L: _x(L).gather(1.5, L.tensor([[0]])),
])
def test_float_dim_or_bins_is_a_type_error(call):
    with pytest.raises(TypeError, match="must be int, not float"):
        call(torch)
    with pytest.raises(TypeError, match="must be int, not float"):
        call(fw)


@pytest.mark.parametrize("call", [
    lambda L, x, d: x.index_select(L.tensor(1), L.tensor([0, 3], device=d)),
    lambda L, x, d: x.index_fill_(L.tensor(1), L.tensor([0], device=d), -1.0),
    lambda L, x, d: x.index_add(L.tensor(1), L.tensor([2], device=d), L.ones(3, 1, device=d)),
    lambda L, x, d: x.index_copy(L.tensor(-1), L.tensor([2], device=d), L.ones(3, 1, device=d)),
    lambda L, x, d: x.gather(L.tensor(1), L.tensor([[0], [3], [1]], device=d)),
    lambda L, x, d: x.scatter(L.tensor(1), L.tensor([[0], [3], [1]], device=d), -1.0),
    lambda L, x, d: L.take_along_dim(x, L.tensor([[0], [3], [1]], device=d), L.tensor(1)),
])
def test_zero_dim_tensor_as_dim(call, device):
    assert call(fw, _x(fw, device), device).tolist() == call(torch, _x(torch), "cpu").tolist()


def test_searchsorted_sorter_out_of_range_in_subprocess():
    # once a segfault: run where a crash fails the test instead of ending the run
    import subprocess
    import sys
    code = (
        "import framework as fw\n"
        "from framework import _cpu\n"
        "devs = ['cpu'] + (['cuda'] if fw.cuda.is_available() else [])\n"
        "for d in devs:\n"
        "    for s in ([2**40, 0], [-1, 0], [0, 2]):\n"
        "        try:\n"
        "            fw.searchsorted(fw.tensor([1.0, 2.0], device=d), fw.tensor([1.5, 0.5],"
        " device=d), sorter=fw.tensor(s, device=d))\n"
        "        except RuntimeError as e:\n"
        "            assert 'torch.searchsorted(): sorter index out of range' in str(e), e\n"
        "        else:\n"
        "            raise AssertionError(s)\n"
        "# the native kernel checks the sorter itself too\n"
        "b, v = fw.tensor([1.0, 2.0]), fw.tensor([1.5])\n"
        "out, srt = fw.empty(1, dtype=fw.int64), fw.tensor([0, 2**40])\n"
        "try:\n"
        "    _cpu.sort.searchsorted((), 2, 1, False, b, ((), 1), srt, ((), 1), v, ((), 1),"
        " out, ((), 1))\n"
        "except RuntimeError as e:\n"
        "    assert 'sorter index out of range' in str(e)\n"
        "else:\n"
        "    raise AssertionError('native searchsorted took a bad sorter')\n"
        "print('ok')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-2000:]
    with pytest.raises(RuntimeError, match="sorter index out of range"):
        torch.searchsorted(torch.tensor([1.0, 2.0]), torch.tensor([1.5]),
                           sorter=torch.tensor([2, 0]))


@pytest.mark.parametrize("call,exc,msg", [
    (lambda L: L.bincount(L.tensor([0, -2]), L.ones(2)), RuntimeError,
     "bincount only supports 1-d non-negative integral inputs"),
    (lambda L: L.histc(L.zeros(3), bins=0), RuntimeError, "bins must be > 0"),
    (lambda L: L.histc(L.zeros(3), bins=-1), RuntimeError, "bins must be > 0"),
    (lambda L: L.histc(L.zeros(3), bins=3, min=2, max=1), RuntimeError,
     "max must be larger than min"),
    (lambda L: L.take_along_dim(L.zeros(3), L.tensor([3])), RuntimeError,
     "index 3 is out of bounds for dimension 0 with size 3"),
    (lambda L: L.zeros(3).scatter_(0, L.tensor([0], dtype=L.int16), 1.0), RuntimeError,
     "scatter\\(\\): Expected dtype int32/int64 for index"),
    (lambda L: L.zeros(3).index_put_((L.tensor([0.0]),), L.ones(1)), IndexError,
     "tensors used as indices must be long, int, byte or bool tensors"),
])
def test_counting_and_dtype_errors(call, exc, msg):
    with pytest.raises(exc, match=msg):
        call(torch)
    with pytest.raises(exc, match=msg):
        call(fw)


@pytest.mark.parametrize("call,raises", [
    (lambda L, e: e.put_(L.tensor([0]), L.ones(1)), True),
    (lambda L, e: e.masked_scatter_(L.ones(3, 4, dtype=L.bool), L.ones(12)), True),
    (lambda L, e: e.scatter_add_(1, L.tensor([[0], [1], [2]]), L.ones(3, 1)), True),
    (lambda L, e: e.index_copy_(1, L.tensor([0]), L.ones(3, 1)), True),
    (lambda L, e: e.masked_fill_(L.ones(3, 4, dtype=L.bool), 1.0), False),
    (lambda L, e: e.index_fill_(1, L.tensor([0]), 1.0), False),
    (lambda L, e: e.index_put_((L.tensor([0]),), L.tensor(1.0)), False),
])
def test_in_place_index_ops_on_expanded_tensors(call, raises):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # PyTorch warns where it lets these through
        for L in (torch, fw):
            e = L.zeros(4)[None].expand(3, 4)
            if raises:
                with pytest.raises(RuntimeError, match="more than one element of the "
                                                       "written-to tensor refers to a single"):
                    call(L, e)
                assert e.tolist() == [[0.0] * 4] * 3
            else:
                call(L, e)


_SAME = "Expected all tensors to be on the same device, but found at least two devices"
# (call(self's device, the other device), exception, fragment): one tensor on the other device
_BAD_DEVICES = [
    (lambda a, b: fw.zeros(3, device=a).index_select(0, fw.tensor([0], device=b)), _SAME),
    (lambda a, b: fw.zeros(3, device=a).gather(0, fw.tensor([0], device=b)), _SAME),
    (lambda a, b: fw.zeros(3, device=a).scatter_(0, fw.tensor([0], device=b), 1.0), _SAME),
    (lambda a, b: fw.zeros(3, device=a).scatter_add_(0, fw.tensor([0], device=a),
                                                     fw.ones(1, device=b)), _SAME),
    (lambda a, b: fw.zeros(3, device=a).index_add_(0, fw.tensor([0], device=b),
                                                   fw.ones(1, device=a)), _SAME),
    (lambda a, b: fw.zeros(3, device=a).index_copy_(0, fw.tensor([0], device=a),
                                                    fw.ones(1, device=b)), _SAME),
    (lambda a, b: fw.zeros(3, device=a).index_fill_(0, fw.tensor([0], device=b), 1.0), _SAME),
    (lambda a, b: fw.zeros(3, device=a).take(fw.tensor([0], device=b)), _SAME),
    (lambda a, b: fw.zeros(3, device=a).put_(fw.tensor([0], device=b), fw.ones(1, device=a)),
     _SAME),
    (lambda a, b: fw.take_along_dim(fw.zeros(3, device=a), fw.tensor([0], device=b)), _SAME),
    (lambda a, b: fw.zeros(3, device=a).masked_fill_(fw.ones(3, dtype=fw.bool, device=b), 1.0),
     "expected self and mask to be on the same device, but got mask on"),
    (lambda a, b: fw.zeros(3, device=a).masked_select(fw.ones(3, dtype=fw.bool, device=b)),
     _SAME),
    (lambda a, b: fw.zeros(3, device=a).masked_scatter_(fw.ones(3, dtype=fw.bool, device=a),
                                                        fw.ones(3, device=b)), _SAME),
    (lambda a, b: fw.zeros(3, device=a).index_put_((fw.tensor([0], device=a),),
                                                   fw.ones(1, device=b)), _SAME),
    (lambda a, b: fw.searchsorted(fw.zeros(3, device=a), fw.zeros(2, device=b)),
     "boundaries and input value tensors should have same device type"),
    (lambda a, b: fw.searchsorted(fw.zeros(3, device=a), fw.zeros(2, device=a),
                                  sorter=fw.tensor([0, 1, 2], device=b)),
     "sorter and boundary tensors should have same device type"),
    (lambda a, b: fw.bincount(fw.tensor([0, 1], device=a), fw.ones(2, device=b)), _SAME),
]


@pytest.mark.skipif(not fw.cuda.is_available(), reason="needs cuda")
@pytest.mark.parametrize("case", range(len(_BAD_DEVICES)))
@pytest.mark.parametrize("devices", [("cuda", "cpu"), ("cpu", "cuda")])
def test_tensors_on_two_devices(case, devices):
    call, msg = _BAD_DEVICES[case]
    with pytest.raises(RuntimeError, match=msg):
        call(*devices)


@pytest.mark.skipif(not fw.cuda.is_available(), reason="needs cuda")
def test_device_forms_pytorch_accepts():
    x = fw.arange(6.0, device="cuda").reshape(2, 3)
    # indices on the cpu index a cuda tensor; cpu 0-d values fill one
    assert x[fw.tensor([1, 0])].tolist() == [[3, 4, 5], [0, 1, 2]]
    assert x[fw.tensor([True, False]), 1:].tolist() == [[1, 2]]
    assert x[:, fw.tensor([[2]])].tolist() == [[[2]], [[5]]]
    y = x.clone()
    y[fw.tensor([0]), fw.tensor([2])] = fw.tensor(-1.0)
    y.masked_fill_(y > 4, fw.tensor(-2.0))
    y.index_fill_(1, fw.tensor([0], device="cuda"), fw.tensor(-3.0))
    y.index_put_((fw.tensor([1]),), fw.tensor(9.0), accumulate=True)
    assert y.tolist() == [[-3, 1, -1], [6, 13, 7]]
    # index_put_ moves indices from any device; reading a cpu tensor through cuda ones fails
    z = fw.zeros(3)
    z[fw.tensor([2], device="cuda")] = 1.0
    assert z.tolist() == [0, 0, 1]
    with pytest.raises(RuntimeError, match="indices should be either on cpu or on the same "
                                           "device as the indexed tensor \\(cpu\\)"):
        z[fw.tensor([2], device="cuda")]
    with pytest.raises(RuntimeError, match="masked_fill_: Expected inputs to be on same device"):
        z.masked_fill_(z > 0, fw.tensor(1.0, device="cuda"))
    assert z.tolist() == [0, 0, 1]


def _outcome(call, L, device):
    """("ok", values) or (exception class, message) of call(L, device)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = call(L, device)
    except Exception as e:      # noqa: BLE001 (the outcome is what is compared)
        return type(e).__name__, str(e)
    return "ok", r.tolist() if hasattr(r, "tolist") else r


# each call's outcome (its value, or its exception class and the start of its message) as
# PyTorch's on the cpu
_LIKE_TORCH = {
    "index_select_dim1": lambda L, d: _x(L, d).index_select(1, L.tensor([4], device=d)),
    "index_select_dim1_neg": lambda L, d: _x(L, d).index_select(-1, L.tensor([-1], device=d)),
    "index_select_dim0": lambda L, d: _x(L, d).index_select(0, L.tensor([3], device=d)),
    "index_select_3d_dim2": lambda L, d: L.zeros(2, 3, 4, device=d).index_select(
        2, L.tensor([4], device=d)),
    "index_add_int16": lambda L, d: _x(L, d).index_add_(0, L.tensor([0], dtype=L.int16,
                                                                    device=d), L.ones(1, 4)),
    "index_add_count": lambda L, d: _x(L, d).index_add_(0, L.tensor([0, 1], device=d),
                                                        L.ones(1, 4, device=d)),
    "index_copy_int32": lambda L, d: _x(L, d).index_copy_(0, L.tensor([0], dtype=L.int32,
                                                                      device=d), L.ones(1, 4)),
    "index_copy_count": lambda L, d: _x(L, d).index_copy_(0, L.tensor([0, 1], device=d),
                                                          L.ones(1, 4, device=d)),
    "take_along_dim_wraps": lambda L, d: L.take_along_dim(
        _x(L, d), L.tensor([[4], [-1], [2**40 + 1]], device=d), 1),
    "take_along_dim_none": lambda L, d: L.take_along_dim(_x(L, d), L.tensor([12], device=d)),
    "masked_fill_shapes": lambda L, d: L.zeros(2, 3, device=d).masked_fill(
        L.ones(2, dtype=L.bool, device=d), 1.0),
    "masked_fill__shapes": lambda L, d: L.zeros(2, 3, device=d).masked_fill_(
        L.ones(2, dtype=L.bool, device=d), 1.0),
    "masked_select_shapes": lambda L, d: L.zeros(6, device=d).masked_select(
        L.ones(4, dtype=L.bool, device=d)),
    "masked_fill_str": lambda L, d: _x(L, d).masked_fill(_x(L, d) > 2, "a"),
    "masked_fill_int8_300": lambda L, d: L.zeros(3, dtype=L.int8, device=d).masked_fill(
        L.ones(3, dtype=L.bool, device=d), 300),
    "masked_fill_int8_0d_300": lambda L, d: L.zeros(3, dtype=L.int8, device=d).masked_fill_(
        L.ones(3, dtype=L.bool, device=d), L.tensor(300, device=d)),
    "index_fill_int8_300": lambda L, d: L.zeros(3, dtype=L.int8, device=d).index_fill_(
        0, L.tensor([0], device=d), 300),
    "gather_out_dtype": lambda L, d: L.gather(_x(L, d), 0, L.tensor([[0]], device=d),
                                              out=L.zeros(1, 1, dtype=L.int64, device=d)),
    "scatter_out_dtype": lambda L, d: L.scatter(_x(L, d), 0, L.tensor([[0]], device=d), 1.0,
                                                out=L.zeros(3, 4, dtype=L.int64, device=d)),
    "gather_out_overlaps_self": lambda L, d: (lambda t: L.gather(
        t[:-1], 0, L.tensor([0, 1, 2, 3], device=d), out=t[1:]))(L.arange(5.0, device=d)),
    "getitem_0d_int": lambda L, d: L.tensor(3.0, device=d)[0],
    "getitem_0d_slice": lambda L, d: L.tensor(3.0, device=d)[0:1],
    "setitem_0d_int": lambda L, d: L.tensor(3.0, device=d).__setitem__(0, 1.0),
    "getitem_step_0": lambda L, d: _x(L, d)[::0],
    "getitem_step_neg": lambda L, d: _x(L, d)[::-1],
    "getitem_str": lambda L, d: _x(L, d)["a"],
    "getitem_str_in_tuple": lambda L, d: _x(L, d)[0, "a"],
    "setitem_expand": lambda L, d: _x(L, d)[0].__setitem__(slice(None), L.ones(3, device=d)),
    "setitem_leading_ones": lambda L, d: (lambda t: (t.__setitem__(
        slice(1, 3), L.ones(1, 1, 4, device=d)), t)[1])(_x(L, d)),
    "histc_long": lambda L, d: L.histc(L.tensor([1, 2], device=d), 3),
    "bincount_float": lambda L, d: L.bincount(L.tensor([1.0], device=d)),
}


@pytest.mark.parametrize("name", list(_LIKE_TORCH))
def test_outcome_like_torch(name, device):
    want = _outcome(_LIKE_TORCH[name], torch, "cpu")
    got = _outcome(_LIKE_TORCH[name], fw, device)
    if want[0] == "ok":
        assert got == want
    else:
        assert got[0] == want[0] and got[1].startswith(want[1].split("\n")[0][:70]), (got, want)


# ---- PyTorch's corner cases (issue 15) ------------------------------------------------------

def test_empty_index_of_any_dtype(device):
    """gather and the scatters return before checking the dtype of an empty index, as
    PyTorch's; a non-empty one must still be int32/int64."""
    x = fw.arange(5.0, device=device)
    for dt in (fw.uint8, fw.float32, fw.bool):
        i = fw.zeros(0, dtype=dt, device=device)
        assert x.gather(0, i).shape == (0,)
        src = fw.zeros(0, device=device)
        for r in (x.scatter(0, i, src), x.scatter_add(0, i, src),
                  x.scatter_reduce(0, i, src, "sum"), x.scatter(0, i, 1.0)):
            np.testing.assert_array_equal(to_np(r), to_np(x))
    with pytest.raises(RuntimeError, match="Expected dtype int32/int64 for index"):
        x.gather(0, fw.zeros(1, dtype=fw.uint8, device=device))
