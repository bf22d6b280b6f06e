"""framework.utils.data: datasets, samplers and collate functions against torch.utils.data."""
import collections
import warnings

import numpy as np
import pytest

import framework as fw
from framework.utils import data as fd

torch = pytest.importorskip("torch")
td = torch.utils.data


def _np(x):
    """Nested collate output (either library) as NumPy arrays, lists and dicts."""
    if isinstance(x, (fw.Tensor, torch.Tensor)):
        return ("tensor", str(x.dtype).split(".")[-1], x.numpy().tolist())
    if isinstance(x, dict):
        return {k: _np(v) for k, v in x.items()}
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return (type(x).__name__,) + tuple(_np(v) for v in x)
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [_np(v) for v in x])
    return x


# ---- datasets -----------------------------------------------------------------------------

def test_tensor_stack_concat_subset():
    a, b = fw.arange(12.).reshape(6, 2), fw.arange(6)
    ds = fd.TensorDataset(a, b)
    assert len(ds) == 6
    x, y = ds[4]
    assert x.tolist() == [8., 9.] and y.item() == 4
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        fd.TensorDataset(a, fw.arange(5))

    st = fd.StackDataset(ds, list(range(10, 16)))
    assert st[1][1] == 11 and st[1][0][1].item() == 1
    st = fd.StackDataset(x=list(range(6)), y=list("abcdef"))
    assert st[2] == {"x": 2, "y": "c"} and st.__getitems__([0, 5]) == [{"x": 0, "y": "a"},
                                                                        {"x": 5, "y": "f"}]
    with pytest.raises(ValueError, match="Size mismatch between datasets"):
        fd.StackDataset([1, 2], [1])
    with pytest.raises(ValueError, match="both types are given"):
        fd.StackDataset([1], y=[1])

    c = fd.ConcatDataset([list(range(3)), list(range(10, 14))])
    tc = td.ConcatDataset([list(range(3)), list(range(10, 14))])
    assert len(c) == 7 and [c[i] for i in range(-7, 7)] == [tc[i] for i in range(-7, 7)]
    assert c.cumulative_sizes == tc.cumulative_sizes
    with pytest.raises(ValueError, match="absolute value of index"):
        c[-8]
    s = fd.Subset(list(range(100, 110)), [3, 1, 4])
    assert len(s) == 3 and [s[i] for i in range(3)] == [103, 101, 104]
    assert s.__getitems__([2, 0]) == [104, 103]


def test_iterable_chain():
    class It(fd.IterableDataset):
        def __init__(self, lo, hi):
            self.lo, self.hi = lo, hi

        def __iter__(self):
            return iter(range(self.lo, self.hi))

        def __len__(self):
            return self.hi - self.lo

    ch = It(0, 3) + It(5, 7)
    assert isinstance(ch, fd.ChainDataset) and list(ch) == [0, 1, 2, 5, 6] and len(ch) == 5
    assert isinstance(fd.TensorDataset(fw.ones(2)) + fd.TensorDataset(fw.ones(3)),
                      fd.ConcatDataset)


def test_random_split():
    ds = list(range(10))
    # lengths as fractions: floor, then the remainder round-robin from the first split
    for fracs in ([0.3, 0.3, 0.4], [0.5, 0.5], [0.34, 0.33, 0.33], [0.1] * 10):
        ours = [len(s) for s in fd.random_split(ds, fracs, generator=fw.Generator())]
        ref = [len(s) for s in td.random_split(ds, fracs, generator=torch.Generator())]
        assert ours == ref
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fd.random_split(list(range(3)), [0.1, 0.1, 0.8])
    assert any("Length of split at index 1 is 0" in str(x.message) for x in w)
    with pytest.raises(ValueError, match="Sum of input lengths"):
        fd.random_split(ds, [3, 3])
    # framework.randperm is not torch's (Philox vs Mersenne Twister): determinism and coverage
    a = fd.random_split(ds, [3, 7], generator=fw.Generator().manual_seed(1))
    b = fd.random_split(ds, [3, 7], generator=fw.Generator().manual_seed(1))
    assert [list(s) for s in a] == [list(s) for s in b]
    assert sorted(list(a[0]) + list(a[1])) == ds and list(a[0]) + list(a[1]) != ds
    g = fw.Generator().manual_seed(1)
    assert a[0].indices + a[1].indices == fw.randperm(10, generator=g).tolist()


# ---- samplers -----------------------------------------------------------------------------

def test_sequential_batch_sampler():
    ds = list(range(11))
    assert list(fd.SequentialSampler(ds)) == list(td.SequentialSampler(ds))
    for bs in (1, 3, 4, 11, 12):
        for drop in (False, True):
            ours = fd.BatchSampler(fd.SequentialSampler(ds), bs, drop)
            ref = td.BatchSampler(td.SequentialSampler(ds), bs, drop)
            assert list(ours) == list(ref) and len(ours) == len(ref)
    for bad in (0, -1, True, 2.0):
        with pytest.raises(ValueError, match="batch_size should be a positive integer"):
            fd.BatchSampler(ds, bad, False)
    with pytest.raises(ValueError, match="drop_last should be a boolean"):
        fd.BatchSampler(ds, 2, 1)


def test_random_samplers():
    ds = list(range(10))
    g = fw.Generator().manual_seed(3)
    perm = list(fd.RandomSampler(ds, generator=g))
    assert sorted(perm) == ds
    assert list(fd.RandomSampler(ds, generator=fw.Generator().manual_seed(3))) == perm
    # num_samples beyond the dataset: whole permutations back to back, then a part of one
    s = list(fd.RandomSampler(ds, num_samples=25, generator=g))
    assert len(s) == 25 and sorted(s[:10]) == ds and sorted(s[10:20]) == ds
    s = fd.RandomSampler(ds, replacement=True, num_samples=70, generator=g)
    vals = list(s)
    assert len(s) == 70 and len(vals) == 70 and set(vals) <= set(ds) and len(set(vals)) > 5
    # no generator: seeded from the default generator, so manual_seed makes it reproducible
    fw.manual_seed(5)
    a = list(fd.RandomSampler(ds))
    fw.manual_seed(5)
    assert list(fd.RandomSampler(ds)) == a
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        fd.RandomSampler(ds, num_samples=0)
    with pytest.raises(TypeError, match="replacement should be a boolean"):
        fd.RandomSampler(ds, replacement=1)

    sub = list(fd.SubsetRandomSampler([7, 3, 9], generator=g))
    assert sorted(sub) == [3, 7, 9]

    w = fd.WeightedRandomSampler([0., 1., 0., 3.], 200, generator=g)
    draws = list(w)
    assert len(w) == 200 and set(draws) == {1, 3}
    assert 0.6 < draws.count(3) / 200 < 0.9
    nr = list(fd.WeightedRandomSampler([1., 1., 1., 1.], 4, replacement=False, generator=g))
    assert sorted(nr) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="weights should be a 1d sequence"):
        fd.WeightedRandomSampler([[1., 2.]], 2)
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        fd.WeightedRandomSampler([1., 2.], 0)


@pytest.mark.parametrize("n,replicas,drop", [(10, 3, False), (10, 3, True), (2, 5, False),
                                             (12, 4, False), (12, 4, True), (7, 2, True)])
def test_distributed_sampler(n, replicas, drop):
    ds = list(range(n))
    for rank in range(replicas):
        ours = fd.DistributedSampler(ds, replicas, rank, shuffle=False, drop_last=drop)
        ref = td.DistributedSampler(ds, replicas, rank, shuffle=False, drop_last=drop)
        assert list(ours) == list(ref) and len(ours) == len(ref)
    # shuffled: every rank sees the same permutation; padding/coverage as torch's
    for epoch in (0, 1):
        parts = []
        for rank in range(replicas):
            s = fd.DistributedSampler(ds, replicas, rank, shuffle=True, seed=4, drop_last=drop)
            s.set_epoch(epoch)
            parts.append(list(s))
        ref_len = len(td.DistributedSampler(ds, replicas, 0, drop_last=drop))
        assert all(len(p) == ref_len for p in parts)
        g = fw.Generator().manual_seed(4 + epoch)
        perm = fw.randperm(n, generator=g).tolist()
        total = ref_len * replicas
        padded = (perm * (total // n + 1))[:total]
        assert [padded[r::replicas] for r in range(replicas)] == parts
    with pytest.raises(ValueError, match=r"Invalid rank 3, rank should be in the interval"):
        fd.DistributedSampler(ds, 3, 3)


def test_distributed_sampler_needs_dist():
    try:
        import framework.distributed  # noqa: F401
        pytest.skip("framework.distributed exists")
    except ImportError:
        pass
    with pytest.raises(RuntimeError, match="Requires distributed package to be available"):
        fd.DistributedSampler(list(range(4)))


# ---- collate ------------------------------------------------------------------------------

Point = collections.namedtuple("Point", ["x", "y"])


def _samples(lib):
    t = fw if lib == "fw" else torch
    out = []
    for i in range(3):
        out.append({
            "t": t.arange(4, dtype=t.float32) + i,
            "n": (i, float(i) / 2, i % 2 == 0),
            "s": f"s{i}",
            "np": np.arange(3, dtype=np.int16) * i,
            "nps": np.float32(i) / 4,
            "npb": np.bool_(i == 1),
            "pt": Point(i, [i, 2 * i]),
            "l": [t.ones(2, dtype=t.int32) * i, b"b"],
        })
    return out


def test_default_collate_nested():
    ours = fd.default_collate(_samples("fw"))
    ref = td.default_collate(_samples("torch"))
    assert _np(ours) == _np(ref)
    # dtypes: Python float -> float64, int -> int64, bool -> bool
    assert ours["n"][0].dtype == fw.int64 and ours["n"][1].dtype == fw.float64
    assert ours["n"][2].dtype == fw.bool
    assert ours["np"].dtype == fw.int16 and ours["nps"].dtype == fw.float32


def test_default_collate_errors():
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal"):
        fd.default_collate([[1, 2], [1]])
    with pytest.raises(TypeError, match="default_collate: batch must contain tensors"):
        fd.default_collate([object(), object()])
    with pytest.raises(TypeError, match="default_collate: batch must contain tensors"):
        fd.default_collate([np.array(["a"]), np.array(["b"])])


def test_default_convert():
    sample = {"a": np.arange(3.), "b": (np.int64(2), "x"), "c": Point(np.ones(2), 1),
              "d": [np.zeros((2, 2), dtype=np.uint8)], "e": 1.5, "s": np.array(["x"])}
    ours = fd.default_convert(sample)
    ref = td.default_convert({"a": np.arange(3.), "b": (np.int64(2), "x"),
                              "c": Point(np.ones(2), 1),
                              "d": [np.zeros((2, 2), dtype=np.uint8)], "e": 1.5,
                              "s": np.array(["x"])})
    s_ours, s_ref = ours.pop("s"), ref.pop("s")
    assert _np(ours) == _np(ref)
    assert isinstance(s_ours, np.ndarray) and isinstance(s_ref, np.ndarray)
    t = fw.ones(2)
    assert fd.default_convert(t) is t
