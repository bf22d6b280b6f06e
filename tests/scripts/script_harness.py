"""Run one PyTorch script body under the framework and under PyTorch, and compare.

A workload is a function ``run(torch, ...)`` written in plain PyTorch, which reaches every
name through the module it is given (``nn = torch.nn``, ``F = torch.nn.functional``). It is
called once with ``framework`` and once with PyTorch itself; data and initial weights come
from NumPy (``data`` and ``init_params``), so both runs start from the same numbers and their
results (tensors, numbers, nested lists/tuples/dicts of them) must agree.
"""
import numpy as np
import pytest

import framework


def oracle():
    """PyTorch, or a skip when it is not installed. Scripts set global flags
    (``torch.backends.cudnn.benchmark = True``): PyTorch's own test utilities, imported by
    other test files in the same process, freeze them (``disable_global_flags``); unfreeze."""
    torch = pytest.importorskip("torch")
    torch.backends.disable_global_flags.__globals__["__allow_nonbracketed_mutation_flag"] = True
    return torch


def data(torch, seed, *shape, kind="normal", high=None, dtype=None):
    """The same random tensor in either library: NumPy draws it (normal, uniform in [0, 1),
    or integers in [0, high) with kind="int")."""
    rng = np.random.default_rng(seed)
    if kind == "int":
        return torch.tensor(rng.integers(0, high, size=shape), dtype=dtype or torch.int64)
    arr = rng.standard_normal(shape) if kind == "normal" else rng.random(shape)
    return torch.tensor(arr, dtype=dtype or torch.float32)


def init_params(torch, module, seed=0):
    """Give every parameter of ``module`` the same values in either library: uniform in
    +-1/sqrt(fan_in), drawn by NumPy in ``named_parameters`` order."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for _, p in module.named_parameters():
            fan_in = int(np.prod(p.shape[1:])) if p.dim() > 1 else p.shape[0]
            bound = 1.0 / np.sqrt(max(fan_in, 1))
            p.copy_(torch.tensor(rng.uniform(-bound, bound, size=tuple(p.shape)),
                                 dtype=p.dtype))
    return module


def _to_numpy(x):
    if hasattr(x, "detach") and hasattr(x, "shape"):
        x = x.detach().cpu()
        if hasattr(x, "_host_array"):  # a framework tensor (bfloat16 widened)
            return np.array(x._host_array())
        if str(x.dtype) == "torch.bfloat16":
            x = x.float()
        return x.numpy()
    return x


def assert_same(got, want, rtol=1e-4, atol=1e-5, path="result"):
    """``got`` (from the framework) equals ``want`` (from PyTorch) leaf by leaf: numbers and
    tensors within tolerances, strings, bools and None exactly."""
    if isinstance(want, (str, bool)) or want is None:
        assert got == want, f"{path}: {got!r} vs {want!r}"
    elif isinstance(want, dict):
        assert isinstance(got, dict) and set(got) == set(want), f"{path}: keys differ"
        for k in want:
            assert_same(got[k], want[k], rtol, atol, f"{path}[{k!r}]")
    elif isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(want), \
            f"{path}: {type(got).__name__} of {len(got) if hasattr(got, '__len__') else '?'}"\
            f" vs {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, rtol, atol, f"{path}[{i}]")
    else:
        g, w = _to_numpy(got), _to_numpy(want)
        if isinstance(w, np.ndarray):
            assert isinstance(g, np.ndarray), f"{path}: {type(got).__name__}, not a tensor"
            assert g.shape == w.shape, f"{path}: shape {g.shape} vs {w.shape}"
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=path)


def compare(run, *args, rtol=1e-4, atol=1e-5, **kwargs):
    """Run ``run(module, *args, **kwargs)`` under the framework and under PyTorch and
    assert that the results agree; returns the framework's result."""
    torch = oracle()
    want = run(torch, *args, **kwargs)
    got = run(framework, *args, **kwargs)
    assert_same(got, want, rtol, atol)
    return got
