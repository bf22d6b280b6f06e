"""Shared test helpers: references in float64 and per-dtype tolerances."""
import numpy as np

import framework as fw

# (rtol, atol) per dtype for results compared with a float64 reference
TOL = {
    fw.float16: (1e-3, 1e-3), fw.bfloat16: (1.6e-2, 1e-2), fw.float32: (1.3e-6, 1e-5),
    fw.float64: (1e-12, 1e-12),
}

NP_OF = {fw.bool: np.bool_, fw.uint8: np.uint8, fw.int8: np.int8, fw.int16: np.int16,
         fw.int32: np.int32, fw.int64: np.int64, fw.float16: np.float16,
         fw.bfloat16: np.float32, fw.float32: np.float32, fw.float64: np.float64,
         fw.complex64: np.complex64, fw.complex128: np.complex128}

FLOAT_DTYPES = [fw.float16, fw.bfloat16, fw.float32, fw.float64]
INT_DTYPES = [fw.uint8, fw.int8, fw.int16, fw.int32, fw.int64]
ALL_DTYPES = [fw.bool] + INT_DTYPES + FLOAT_DTYPES


def to_np(t):
    """A host NumPy copy of a tensor (bfloat16 widened to float32)."""
    return np.array(t.detach().cpu()._host_array())


def make(shape, dtype, device, low=-5, high=5, noncontig=False, seed=None):
    """A random tensor and its NumPy value; noncontig gives a strided (every other column)
    view with the same values."""
    rng = np.random.default_rng(seed)
    if dtype is fw.bool:
        arr = rng.random(shape) > 0.5
    elif dtype.is_floating_point:
        arr = rng.uniform(low, high, shape)
    elif dtype.is_complex:
        arr = rng.uniform(low, high, shape) + 1j * rng.uniform(low, high, shape)
    else:
        lo = 0 if dtype is fw.uint8 else low
        arr = rng.integers(lo, high, shape)
    if noncontig and len(shape) >= 1:
        big = np.zeros(tuple(shape[:-1]) + (shape[-1] * 2,), arr.dtype)
        big[..., ::2] = arr
        t = fw.tensor(big, dtype=dtype, device=device)[..., ::2]
    else:
        t = fw.tensor(arr, dtype=dtype, device=device)
    return t, to_np(t)


def assert_close(actual, expected, dtype=None, rtol=None, atol=None, equal_nan=True):
    """Compares a tensor with a NumPy reference using the dtype's tolerance."""
    dtype = dtype or actual.dtype
    a = to_np(actual)
    e = np.asarray(expected)
    assert a.shape == e.shape, f"shape {a.shape} != expected {e.shape}"
    if dtype.is_floating_point or dtype.is_complex:
        r, t = TOL[dtype.to_real()]
        wide = np.complex128 if dtype.is_complex else np.float64
        np.testing.assert_allclose(a.astype(wide), e.astype(wide),
                                   rtol=rtol if rtol is not None else r,
                                   atol=atol if atol is not None else t, equal_nan=equal_nan)
    else:
        np.testing.assert_array_equal(a, e)


def assert_refused_like(torch, fn, device):
    """``fn(module, device)`` raises RuntimeError with torch (on cpu) and with the
    framework (on ``device``), and the first sentences of the two messages agree."""
    import pytest
    with pytest.raises(RuntimeError) as want:
        fn(torch, "cpu")
    with pytest.raises(RuntimeError) as got:
        fn(fw, device)
    assert str(got.value).split(".")[0] == str(want.value).split(".")[0]


# The torch oracle `make install` pins (Makefile). Older releases (the GPU
# machines' image has 2.11) lack some behaviour the tests compare against.
PINNED_TORCH = (2, 13)


def torch_grad(torch, what, *args, **kwargs):
    """torch.autograd.grad(*args, **kwargs), skipping the test on a torch older than the
    pinned one when it has no derivative for ``what``."""
    try:
        return torch.autograd.grad(*args, **kwargs)
    except (RuntimeError, NotImplementedError) as e:
        if "not implemented" in str(e):
            skip_unless_torch(torch, f"the derivative of {what}")
        raise


def torch_older_than(torch, version=PINNED_TORCH):
    """Whether the installed torch predates ``version`` (major, minor)."""
    import re
    return tuple(int(p) for p in re.findall(r"\d+", torch.__version__)[:2]) < version


def skip_unless_torch(torch, what, version=PINNED_TORCH):
    """Skips the test when the installed torch predates ``version``, saying that ``what``
    (a feature or message the test checks against that torch) needs it; a no-op otherwise,
    so the check still runs (and can fail) with the pinned oracle."""
    import pytest
    if torch_older_than(torch, version):
        pytest.skip(f"torch {torch.__version__} predates {what} "
                    f"(torch {'.'.join(map(str, version))})")


def child_env(root, **extra):
    """``os.environ`` for a test's subprocess, with ``root`` first on PYTHONPATH and what was
    there kept (the GPU machines install wheels with ``--target`` and point PYTHONPATH at
    them), then ``extra``."""
    import os
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)
    return dict(os.environ, PYTHONPATH=path, **extra)


def launched_kernels(monkeypatch):
    """The names of the Triton kernels launched from now on (interpreted or compiled; the
    cached launcher is turned off so that every launch goes through ``run``, and the
    compile-only ``warmup`` runs are not counted)."""
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction
    from framework.kernels import launcher
    monkeypatch.setattr(launcher, "enabled", False)
    names = []
    for cls in (InterpretedFunction, JITFunction):
        def counted(self, *args, _run=cls.run, **kwargs):
            if not kwargs.get("warmup"):
                names.append(self.fn.__name__)
            return _run(self, *args, **kwargs)
        monkeypatch.setattr(cls, "run", counted)
    return names
