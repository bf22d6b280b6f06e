"""The padding layers (ZeroPad, ConstantPad, ReflectionPad, ReplicationPad, CircularPad;
1d/2d/3d) against PyTorch: values and input gradients, batched and unbatched inputs,
asymmetric and negative (cropping) padding, repr, and PyTorch's errors."""
import numpy as np
import pytest

import framework as fw
import framework.nn as nn
from tests.nn.common import compare_module

torch = pytest.importorskip("torch")

# (class, constructor args, input shape)
CASES = [
    ("ZeroPad1d", (2,), (2, 3, 5)),
    ("ZeroPad1d", ((1, -2),), (3, 5)),
    ("ZeroPad2d", ((1, 2, 0, 3),), (2, 3, 4, 5)),
    ("ZeroPad2d", (1,), (4, 5)),                                # any rank for constant pads
    ("ZeroPad3d", ((1, 0, 2, 1, 0, 1),), (1, 2, 3, 4, 2)),
    ("ConstantPad1d", (2, 3.5), (2, 3, 5)),
    ("ConstantPad2d", ((0, 1, 2, -1), -1.0), (3, 4, 5)),
    ("ConstantPad3d", (1, 2), (2, 2, 3, 2)),
    ("ReflectionPad1d", ((2, 3),), (2, 3, 5)),
    ("ReflectionPad1d", (1,), (3, 4)),
    ("ReflectionPad2d", ((1, 2, 3, 0),), (2, 3, 4, 5)),
    ("ReflectionPad2d", (2,), (3, 4, 5)),
    ("ReflectionPad3d", (1,), (1, 2, 3, 4, 3)),
    ("ReplicationPad1d", ((3, 1),), (2, 3, 5)),
    ("ReplicationPad2d", ((1, 2, 3, 4),), (1, 2, 3, 4)),
    ("ReplicationPad2d", (1,), (2, 3, 3)),
    ("ReplicationPad3d", ((1, 0, 2, 1, 0, 2),), (2, 3, 2, 3)),
    ("CircularPad1d", ((2, 1),), (2, 3, 5)),
    ("CircularPad2d", ((1, 2, 2, 0),), (2, 2, 3, 4)),
    ("CircularPad2d", (1,), (2, 3, 3)),
    ("CircularPad3d", ((1, 1, 0, 2, 1, 0),), (1, 2, 3, 3, 2)),
    ("ReflectionPad2d", (1,), (0, 2, 3, 3)),                    # 0-size batch
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}")
def test_padding_modules(device, case):
    cls, args, shape = case
    m, tm = getattr(nn, cls)(*args), getattr(torch.nn, cls)(*args)
    assert repr(m) == repr(tm)
    assert m.padding == tm.padding
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    compare_module(torch, m, tm, [x], device, rtol=1e-6, atol=1e-6)


def test_float64_and_integer():
    x = np.random.default_rng(1).standard_normal((2, 3, 4))
    compare_module(torch, nn.ReflectionPad1d(2), torch.nn.ReflectionPad1d(2), [x], "cpu",
                   rtol=0, atol=0)
    xi = np.arange(24).reshape(2, 3, 4)
    for cls, args in (("ConstantPad1d", (1, 7)), ("ReplicationPad1d", (2,)),
                      ("CircularPad1d", (1,))):
        a = getattr(nn, cls)(*args)(fw.tensor(xi))
        b = getattr(torch.nn, cls)(*args)(torch.tensor(xi))
        assert a.dtype is fw.int64
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_reprs():
    for m, tm in ((nn.ConstantPad1d(2, 3), torch.nn.ConstantPad1d(2, 3)),
                  (nn.ConstantPad3d((1, 2, 3, 4, 5, 6), -1.0),
                   torch.nn.ConstantPad3d((1, 2, 3, 4, 5, 6), -1.0)),
                  (nn.ZeroPad3d(1), torch.nn.ZeroPad3d(1)),
                  (nn.CircularPad3d(2), torch.nn.CircularPad3d(2)),
                  (nn.ReplicationPad3d((1, 2, 3, 4, 5, 6)),
                   torch.nn.ReplicationPad3d((1, 2, 3, 4, 5, 6)))):
        assert repr(m) == repr(tm)
    s = nn.Sequential(nn.ReflectionPad2d(1), nn.ZeroPad2d((1, 0, 0, 1)))
    t = torch.nn.Sequential(torch.nn.ReflectionPad2d(1), torch.nn.ZeroPad2d((1, 0, 0, 1)))
    assert repr(s) == repr(t)
    assert list(s.state_dict()) == []
    assert nn.ConstantPad1d(2, 3).value == 3 and nn.ZeroPad1d(1).value == 0.0


@pytest.mark.parametrize("cls,args,shape", [
    ("CircularPad2d", (1,), (3, 3)),
    ("CircularPad1d", (1,), (1, 2, 3, 3)),
    ("CircularPad3d", (1,), (3, 3, 3)),
])
def test_circular_rank_errors(cls, args, shape):
    with pytest.raises(ValueError) as te:
        getattr(torch.nn, cls)(*args)(torch.zeros(shape))
    with pytest.raises(ValueError) as fe:
        getattr(nn, cls)(*args)(fw.zeros(shape))
    assert str(fe.value) == str(te.value)


@pytest.mark.parametrize("cls,args,shape", [
    ("ReflectionPad2d", (1,), (3,)),
    ("ZeroPad2d", (1,), (3,)),
    ("ReflectionPad1d", (3,), (1, 2, 3)),
    ("ReplicationPad2d", ((-3, -3, 0, 0),), (1, 2, 3)),
])
def test_errors(cls, args, shape):
    with pytest.raises(RuntimeError) as te:
        getattr(torch.nn, cls)(*args)(torch.zeros(shape))
    with pytest.raises(RuntimeError) as fe:
        getattr(nn, cls)(*args)(fw.zeros(shape))
    assert str(fe.value) == str(te.value)
