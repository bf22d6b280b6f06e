"""Top-level names a PyTorch script reaches for: ``compile``, the constants,
anomaly mode's switches, and the functional ops PyTorch also exposes at the top level."""
import math
import subprocess
import sys
import warnings

import numpy as np
import pytest

import framework as fw
from helpers import skip_unless_torch

try:
    import torch
except ImportError:
    torch = None


def test_compile_wraps_a_function_and_checks_its_arguments():
    def f(x):
        return x * 2 + 1

    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        g = fw.compile(f)
        deco = fw.compile(mode="max-autotune")
    assert g.__wrapped__ is f and deco(f).__wrapped__ is f   # compiled: tests/test_inductor.py
    assert fw.compile(f, backend="eager") is f and fw.compile(f, disable=True) is f
    x = fw.tensor([1.0, 2.0])
    np.testing.assert_array_equal(g(x).numpy(), [3.0, 5.0])
    with pytest.raises(RuntimeError, match="Unrecognized mode=fast, should be one of"):
        fw.compile(f, mode="fast")
    with pytest.raises(RuntimeError, match="Either mode or options can be specified"):
        fw.compile(f, mode="default", options={"a": 1})
    with pytest.raises(AssertionError, match="A callable function is expected"):
        fw.compile(5)


def test_compile_warns_only_when_it_falls_back():
    def branchy(x):
        return x + 1 if x.sum() > 0 else x - 1

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        fw.compile(lambda x: x * 2)(fw.ones(2))
        fw.compile(lambda x: x, disable=True)
        assert seen == []
        fw.compile(branchy)(fw.ones(2))
    assert [str(w.message).split(":")[1] for w in seen] == [
        " test_compile_warns_only_when_it_falls_back.<locals>.branchy runs eagerly"]


def test_compiled_module_wraps_the_original():
    fw.manual_seed(0)
    m = fw.nn.Sequential(fw.nn.Linear(3, 4), fw.nn.Dropout(0.5))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c = fw.compile(m)
    assert isinstance(c, fw.nn.Module) and c._orig_mod is m
    assert list(c.state_dict()) == ["_orig_mod.0.weight", "_orig_mod.0.bias"]
    assert c.append.__self__ is m             # other attributes come from the original
    c.eval()
    assert not m.training and not c.training
    x = fw.randn(2, 3)
    np.testing.assert_array_equal(c(x).detach().numpy(), m(x).detach().numpy())
    assert [p is q for p, q in zip(c.parameters(), m.parameters())] == [True, True]
    c.train()
    assert m.training and m[1].training


@pytest.mark.skipif(torch is None, reason="torch is the oracle")
def test_compiled_module_state_dict_keys_and_disable_are_torchs():
    # in a child process: torch.compile's import turns off torch.distributions' argument
    # validation for the whole process, which the distribution tests compare against
    code = ("import torch; m = torch.nn.Sequential(torch.nn.Linear(3, 4)); "
            "print(list(torch.compile(m).state_dict())); "
            "print(torch.compile(m, disable=True) is m)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, check=True).stdout
    keys, disabled_is_module = out.split("\n")[:2]
    m = fw.nn.Sequential(fw.nn.Linear(3, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fm = fw.compile(m)
    assert str(list(fm.state_dict())) == keys
    # disable=True: the module itself, not a wrapper (PyTorch's)
    assert str(fw.compile(m, disable=True) is m) == disabled_is_module == "True"


def test_constants():
    assert fw.pi == math.pi and fw.e == math.e and fw.inf == math.inf
    assert math.isnan(fw.nan) and fw.newaxis is None
    x = fw.arange(6.0).reshape(2, 3)
    assert x[:, fw.newaxis].shape == (2, 1, 3)


def test_anomaly_switches_and_the_nan_check():
    assert not fw.is_anomaly_enabled() and fw.is_anomaly_check_nan_enabled()
    with fw.autograd.set_detect_anomaly(True, check_nan=False):
        assert fw.is_anomaly_enabled() and not fw.is_anomaly_check_nan_enabled()
        x = fw.tensor([0.0], requires_grad=True)
        (fw.sqrt(x) * 0).sum().backward()     # NaN, unchecked
        assert math.isnan(x.grad.item())
    assert not fw.is_anomaly_enabled() and fw.is_anomaly_check_nan_enabled()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with fw.autograd.detect_anomaly():
            x = fw.tensor([0.0], requires_grad=True)
            fw.sqrt(x).sum().backward()       # inf is no anomaly (PyTorch checks NaN only)
            assert x.grad.item() == math.inf
            x = fw.tensor([0.0], requires_grad=True)
            with pytest.raises(RuntimeError, match="returned nan values in its 0th output"):
                (fw.sqrt(x) * 0).sum().backward()
    fw.set_anomaly_enabled(True, check_nan=False)
    try:
        assert fw.is_anomaly_enabled() and not fw.is_anomaly_check_nan_enabled()
    finally:
        fw.set_anomaly_enabled(False)
    assert not fw.is_anomaly_enabled() and fw.is_anomaly_check_nan_enabled()


@pytest.mark.parametrize("name, args", [
    ("cosine_similarity", lambda m: (m.ones(2, 3), m.arange(6.0).reshape(2, 3))),
    ("pairwise_distance", lambda m: (m.ones(2, 3), m.arange(6.0).reshape(2, 3))),
    ("pdist", lambda m: (m.arange(6.0).reshape(3, 2),)),
    ("pixel_shuffle", lambda m: (m.arange(16.0).reshape(1, 4, 2, 2), 2)),
    ("pixel_unshuffle", lambda m: (m.arange(16.0).reshape(1, 1, 4, 4), 2)),
    ("channel_shuffle", lambda m: (m.arange(16.0).reshape(1, 4, 2, 2), 2)),
    ("selu", lambda m: (m.linspace(-2, 2, 5),)),
    ("celu", lambda m: (m.linspace(-2, 2, 5), 0.5)),
    ("hardshrink", lambda m: (m.linspace(-2, 2, 5), 0.7)),
    ("prelu", lambda m: (m.linspace(-2, 2, 5), m.tensor([0.25]))),
])
def test_top_level_functional_ops_match_torch(name, args):
    skip_unless_torch(torch, name)
    got = getattr(fw, name)(*args(fw))
    want = getattr(torch, name)(*args(torch))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def test_typename():
    assert fw.typename(fw.zeros(2)) == fw.zeros(2).type() == "framework.FloatTensor"
    assert fw.typename(fw.nn.Linear) == "framework.nn.modules.linear.Linear"


def test_sdpa_backend_switches():
    from framework.backends import cuda as bc
    from framework.nn.attention import SDPBackend, sdpa_kernel
    q = fw.randn(1, 2, 3, 4)
    want = fw.nn.functional.scaled_dot_product_attention(q, q, q)
    assert bc.flash_sdp_enabled() and bc.math_sdp_enabled()
    with sdpa_kernel(SDPBackend.MATH):
        assert bc.math_sdp_enabled() and not bc.flash_sdp_enabled()
        assert not bc.mem_efficient_sdp_enabled() and not bc.cudnn_sdp_enabled()
        np.testing.assert_array_equal(
            fw.nn.functional.scaled_dot_product_attention(q, q, q).numpy(), want.numpy())
    assert bc.flash_sdp_enabled() and bc.mem_efficient_sdp_enabled()
    with sdpa_kernel([]):
        with pytest.raises(RuntimeError, match="No viable backend for scaled_dot_product_"):
            fw.nn.functional.scaled_dot_product_attention(q, q, q)
    with pytest.raises(AssertionError, match="Backend must be an instance of SDPBackend"):
        with sdpa_kernel("flash"):
            pass
    bc.enable_flash_sdp(False)
    try:
        assert not bc.flash_sdp_enabled()
        with pytest.raises(RuntimeError, match="set_sdp_use_math expects a bool, but got int"):
            bc.enable_math_sdp(1)
    finally:
        bc.enable_flash_sdp(True)
    with pytest.warns(FutureWarning, match="sdp_kernel\\(\\)` is deprecated"):
        with bc.sdp_kernel(enable_flash=False, enable_math=True):
            assert bc.math_sdp_enabled() and not bc.flash_sdp_enabled()
    assert bc.flash_sdp_enabled()


@pytest.mark.skipif(torch is None, reason="torch is the oracle")
def test_sdp_backend_values_are_torchs():
    from framework.nn.attention import SDPBackend
    from torch.nn.attention import SDPBackend as T
    assert {k: int(v) for k, v in SDPBackend.__members__.items()} == \
        {k: int(v) for k, v in T.__members__.items()}
