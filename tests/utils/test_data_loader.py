"""framework.utils.data.DataLoader in the main process (num_workers=0): every option against
torch's DataLoader on the same index-valued datasets, errors, len, epochs, seeding, pinning."""
import warnings

import numpy as np
import pytest

import framework as fw
from framework.utils import data as fd

torch = pytest.importorskip("torch")
td = torch.utils.data


class Idx:
    """A map-style dataset whose sample i is i (works for both libraries)."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return i


class FwIter(fd.IterableDataset):
    def __init__(self, n, length=None):
        self.n, self.length = n, length

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n if self.length is None else self.length


class TorchIter(td.IterableDataset):
    def __init__(self, n, length=None):
        self.n, self.length = n, length

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n if self.length is None else self.length


def _lists(loader):
    return [b.tolist() if hasattr(b, "tolist") else b for b in loader]


@pytest.mark.parametrize("kw", [
    dict(), dict(batch_size=3), dict(batch_size=3, drop_last=True), dict(batch_size=None),
    dict(batch_size=4, drop_last=False), dict(batch_size=20), dict(batch_size=20, drop_last=True),
])
def test_options_match_torch(kw):
    ds = Idx(10)
    ours, ref = fd.DataLoader(ds, **kw), td.DataLoader(ds, **kw)
    assert _lists(ours) == _lists(ref)
    assert len(ours) == len(ref)


def test_samplers_and_collate_match_torch():
    ds = Idx(10)
    order = [3, 1, 4, 1, 5, 9, 2, 6]
    ours = fd.DataLoader(ds, batch_size=3, sampler=order)
    assert _lists(ours) == _lists(td.DataLoader(ds, batch_size=3, sampler=order))
    bs = [[0, 1], [9], [2, 3, 4]]
    ours = fd.DataLoader(ds, batch_sampler=bs)
    assert _lists(ours) == _lists(td.DataLoader(ds, batch_sampler=bs)) and len(ours) == 3
    ours = fd.DataLoader(ds, batch_size=4, collate_fn=lambda b: sum(b))
    assert list(ours) == list(td.DataLoader(ds, batch_size=4, collate_fn=lambda b: sum(b)))
    ours = fd.DataLoader(ds, sampler=fd.SequentialSampler(ds), batch_size=None)
    assert list(ours) == list(range(10))
    # batch_size=None: default_convert, no batching (NumPy to tensors, numbers unchanged)
    arr = [np.full(2, i, dtype=np.float32) for i in range(3)]
    out = list(fd.DataLoader(arr, batch_size=None))
    assert all(isinstance(o, fw.Tensor) and o.dtype == fw.float32 for o in out)
    assert [o.tolist() for o in out] == [[0., 0.], [1., 1.], [2., 2.]]


def test_iterable_dataset_match_torch():
    for kw in (dict(batch_size=3), dict(batch_size=3, drop_last=True), dict(batch_size=None)):
        ours, ref = fd.DataLoader(FwIter(8), **kw), td.DataLoader(TorchIter(8), **kw)
        assert _lists(ours) == _lists(ref) and len(ours) == len(ref)


def test_iterable_len_warning():
    loader = fd.DataLoader(FwIter(5, length=3), batch_size=None)
    assert len(loader) == 3
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert list(loader) == [0, 1, 2, 3, 4]
    msgs = [str(x.message) for x in w if "Length of IterableDataset" in str(x.message)]
    assert len(msgs) == 2
    assert "was reported to be 3(when accessing len(dataloader)), but 4 samples" in msgs[0]


def test_shuffle_generator():
    ds = Idx(20)
    # framework's RNG is not torch's: check determinism and coverage
    a = [b.tolist() for b in fd.DataLoader(ds, batch_size=6, shuffle=True,
                                           generator=fw.Generator().manual_seed(1))]
    b = [b.tolist() for b in fd.DataLoader(ds, batch_size=6, shuffle=True,
                                           generator=fw.Generator().manual_seed(1))]
    assert a == b and sorted(sum(a, [])) == list(range(20)) and sum(a, []) != list(range(20))
    assert [len(x) for x in a] == [6, 6, 6, 2]
    # epochs reshuffle; __iter__ can run many times
    loader = fd.DataLoader(ds, batch_size=None, shuffle=True,
                           generator=fw.Generator().manual_seed(2))
    e1, e2 = list(loader), list(loader)
    assert sorted(e1) == sorted(e2) == list(range(20)) and e1 != e2
    fw.manual_seed(3)
    c = list(fd.DataLoader(ds, batch_size=None, shuffle=True))
    fw.manual_seed(3)
    assert list(fd.DataLoader(ds, batch_size=None, shuffle=True)) == c


def test_base_seed_drawn_each_epoch():
    # every iterator draws one int64 from the loader's generator (PyTorch's base_seed);
    # the shuffle order then comes from the same generator
    g = fw.Generator().manual_seed(9)
    loader = fd.DataLoader(Idx(4), batch_size=None, generator=g)
    ref = fw.Generator().manual_seed(9)
    for _ in range(2):
        it = iter(loader)
        seed = fw.empty((), dtype=fw.int64).random_(generator=ref).item()
        assert it._base_seed == seed
        assert list(it) == [0, 1, 2, 3]
    assert g.get_offset() == ref.get_offset()


def _raises_like_torch(kw, dataset=None, exc=ValueError):
    dataset = Idx(4) if dataset is None else dataset
    with pytest.raises(exc) as ours:
        fd.DataLoader(dataset[0] if isinstance(dataset, tuple) else dataset, **kw)
    with pytest.raises(exc) as ref:
        td.DataLoader(dataset[1] if isinstance(dataset, tuple) else dataset, **kw)
    assert str(ours.value) == str(ref.value)


@pytest.mark.parametrize("kw", [
    dict(batch_size=None, drop_last=True),
    dict(sampler=[0, 1], shuffle=True),
    dict(batch_sampler=[[0]], batch_size=2),
    dict(batch_sampler=[[0]], shuffle=True),
    dict(batch_sampler=[[0]], sampler=[0]),
    dict(batch_sampler=[[0]], drop_last=True),
    dict(num_workers=-1),
    dict(timeout=-1),
    dict(prefetch_factor=2),
    dict(num_workers=1, prefetch_factor=-1),
    dict(persistent_workers=True),
    dict(multiprocessing_context="fork"),
    dict(num_workers=1, multiprocessing_context="nope"),
])
def test_bad_options_like_torch(kw):
    _raises_like_torch(kw)


def test_bad_options_iterable_and_context():
    both = (FwIter(3), TorchIter(3))
    _raises_like_torch(dict(shuffle=True), both)
    _raises_like_torch(dict(sampler=[0]), both)
    _raises_like_torch(dict(batch_sampler=[[0]]), both)
    with pytest.raises(TypeError, match="multiprocessing_context option should be a valid"):
        fd.DataLoader(Idx(3), num_workers=1, multiprocessing_context=3)
    loader = fd.DataLoader(Idx(3))
    for attr in ("batch_size", "sampler", "dataset", "drop_last"):
        with pytest.raises(ValueError, match=f"{attr} attribute should not be set after "
                                             "DataLoader is initialized"):
            setattr(loader, attr, None)
    loader.num_workers = 0  # other attributes may change
    with pytest.raises(AssertionError, match="requires timeout == 0"):
        iter(fd.DataLoader(Idx(3), timeout=1))


def test_pin_memory():
    ds = fd.TensorDataset(fw.arange(6.), fw.arange(6))
    if fw.cuda.is_available():
        batches = list(fd.DataLoader(ds, batch_size=4, pin_memory=True))
        assert all(t.is_pinned() for b in batches for t in b)
        assert isinstance(batches[0], list)  # tuples become lists, as PyTorch pins them
        assert batches[1][0].tolist() == [4., 5.]
    else:
        with pytest.warns(UserWarning, match="'pin_memory' argument is set as true but no "
                                             "accelerator is found"):
            batches = list(fd.DataLoader(ds, batch_size=4, pin_memory=True))
        assert not batches[0][0].is_pinned()
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        list(fd.DataLoader(ds, batch_size=4, pin_memory=True, pin_memory_device="cuda"))
    assert any("pin_memory_device is deprecated" in str(w.message) for w in rec)
    assert all(w.filename == __file__ for w in rec)  # the warnings point at the caller


def test_getitems_used():
    class Batched(fd.Dataset):
        calls = []

        def __len__(self):
            return 5

        def __getitem__(self, i):
            raise AssertionError("__getitems__ should be used")

        def __getitems__(self, idx):
            self.calls.append(list(idx))
            return [10 * i for i in idx]

    out = [b.tolist() for b in fd.DataLoader(Batched(), batch_size=2)]
    assert out == [[0, 10], [20, 30], [40]] and Batched.calls == [[0, 1], [2, 3], [4]]
