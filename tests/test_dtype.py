"""Type promotion against PyTorch: every dtype pair, and tensors mixed with Python scalars."""
import itertools

import pytest

import framework as fw
from helpers import ALL_DTYPES

torch = pytest.importorskip("torch")


def tdt(d):
    return getattr(torch, d.name)


@pytest.mark.parametrize("a,b", list(itertools.product(ALL_DTYPES, ALL_DTYPES)))
def test_promote_types_matches_torch(a, b):
    assert fw.promote_types(a, b).name == str(torch.promote_types(tdt(a), tdt(b))).split(".")[1]


@pytest.mark.parametrize("d", ALL_DTYPES)
@pytest.mark.parametrize("scalar", [True, 2, 2.5])
@pytest.mark.parametrize("zero_dim", [False, True])
def test_result_type_with_scalars(d, scalar, zero_dim):
    shape = () if zero_dim else (2,)
    ours = fw.result_type(fw.zeros(shape, dtype=d), scalar)
    ref = torch.result_type(torch.zeros(shape, dtype=tdt(d)), scalar)
    assert ours.name == str(ref).split(".")[1]


@pytest.mark.parametrize("a,b", list(itertools.product(ALL_DTYPES, ALL_DTYPES)))
def test_zero_dim_vs_dim_tensor(a, b):
    ours = fw.result_type(fw.zeros(2, dtype=a), fw.zeros((), dtype=b))
    ref = torch.result_type(torch.zeros(2, dtype=tdt(a)), torch.zeros((), dtype=tdt(b)))
    assert ours.name == str(ref).split(".")[1]


def test_dtype_str_is_triton_readable():
    assert str(fw.float32) == "framework.float32"
    assert str(fw.float32).rpartition(".")[2] == "float32"


def test_default_dtype():
    assert fw.get_default_dtype() is fw.float32
    fw.set_default_dtype(fw.float64)
    try:
        assert fw.tensor([1.0]).dtype is fw.float64
        assert fw.result_type(fw.tensor([1]), 1.0) is fw.float64
    finally:
        fw.set_default_dtype(fw.float32)
    with pytest.raises(TypeError):
        fw.set_default_dtype(fw.int32)


def test_finfo_iinfo():
    import numpy as np
    assert fw.finfo(fw.float32).eps == float(np.finfo(np.float32).eps)
    assert fw.finfo(fw.bfloat16).eps == 2.0 ** -7
    assert fw.iinfo(fw.int8).min == -128 and fw.iinfo(fw.uint8).max == 255
    with pytest.raises(TypeError):
        fw.finfo(fw.int32)
