"""Factory functions: ``out=`` handling and dtype inference against PyTorch."""
import pytest

import framework as fw

torch = pytest.importorskip("torch")

FACTORIES = {
    "zeros": lambda m, o: m.zeros(2, 3, out=o),
    "ones": lambda m, o: m.ones(4, out=o),
    "full": lambda m, o: m.full((2,), 3, out=o),
    "arange": lambda m, o: m.arange(5, out=o),
    "linspace": lambda m, o: m.linspace(0, 1, 3, out=o),
    "logspace": lambda m, o: m.logspace(0, 1, 2, out=o),
    "eye": lambda m, o: m.eye(2, 3, out=o),
    "empty": lambda m, o: m.empty(3, 2, out=o),
}


@pytest.mark.parametrize("name", sorted(FACTORIES))
@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_factory_out(name, dtype):
    o1, o2 = fw.zeros(0, dtype=getattr(fw, dtype)), torch.zeros(0, dtype=getattr(torch, dtype))
    r1, r2 = FACTORIES[name](fw, o1), FACTORIES[name](torch, o2)
    assert r1 is o1 and tuple(r1.shape) == tuple(r2.shape) and r1.dtype.name == dtype
    if name != "empty":
        assert r1.tolist() == r2.tolist()


@pytest.mark.parametrize("args", [(5,), (1, 4), (0, 1, 0.25), (10, 0, -3), (1.5, 4)])
def test_arange_matches_torch(args):
    a, b = fw.arange(*args), torch.arange(*args)
    assert a.dtype.name == str(b.dtype).split(".")[1] and a.tolist() == b.tolist()


def test_factory_errors():
    with pytest.raises(RuntimeError, match="negative dimension"):
        fw.zeros(2, -1)
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        fw.arange(0, 1, 0)
    with pytest.raises(RuntimeError, match="upper bound and larger bound inconsistent"):
        fw.arange(0, 5, -1)
    with pytest.raises(RuntimeError, match="number of steps must be non-negative"):
        fw.linspace(0, 1, -2)


def test_default_dtypes():
    assert fw.zeros(2).dtype is fw.float32 and fw.ones(2).dtype is fw.float32
    assert fw.full((2,), 1).dtype is fw.int64 and fw.full((2,), 1.0).dtype is fw.float32
    assert fw.full((2,), True).dtype is fw.bool and fw.eye(2).dtype is fw.float32
