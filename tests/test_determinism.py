"""Deterministic algorithms (use_deterministic_algorithms and its friends) and the default
device (set_default_device), against PyTorch's."""
import subprocess
import sys
import warnings

import numpy as np
import pytest

import framework as fw
import framework.utils.deterministic as fw_det
from framework import _determinism
from framework.kernels import index_scatter
from helpers import to_np

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is the oracle")


@pytest.fixture
def det():
    """Deterministic mode on for the test (framework's and, when present, torch's), off
    after it whatever happens."""
    fw.use_deterministic_algorithms(True)
    if torch is not None:
        torch.use_deterministic_algorithms(True)
    yield
    fw.use_deterministic_algorithms(False)
    fw_det.fill_uninitialized_memory = True
    if torch is not None:
        torch.use_deterministic_algorithms(False)


def _both(fn):
    """What fn(module) returns or raises (type, message), for fw and torch."""
    out = []
    for mod in (fw, torch):
        try:
            out.append(fn(mod))
        except Exception as e:  # noqa: BLE001 - the exception is what is compared
            out.append((type(e).__name__, str(e)))
    return out


@needs_torch
def test_switches_and_their_errors_are_torchs(det):
    calls = [lambda m: m.use_deterministic_algorithms(False),
             lambda m: m.use_deterministic_algorithms(True, warn_only=True),
             lambda m: m.use_deterministic_algorithms(1),
             lambda m: m.set_deterministic_debug_mode("x"),
             lambda m: m.set_deterministic_debug_mode(3),
             lambda m: m.set_deterministic_debug_mode(1.0)]
    for mode in ("default", "warn", "error", 0, 1, 2):
        calls.append(lambda m, mode=mode: m.set_deterministic_debug_mode(mode))
    for call in calls:
        a, b = _both(lambda m: (call(m), m.are_deterministic_algorithms_enabled(),
                                m.is_deterministic_algorithms_warn_only_enabled(),
                                m.get_deterministic_debug_mode()))
        assert a == b


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64", "complex64",
                                   "int32", "int64", "uint8", "int8", "bool"])
def test_empty_family_fills_as_torch(det, device, dtype):
    fd, td = getattr(fw, dtype), getattr(torch, dtype)
    made = [fw.empty(3, dtype=fd, device=device),
            fw.empty_like(fw.zeros(2, 2, dtype=fd, device=device)),
            fw.zeros(1, device=device).new_empty((2,), dtype=fd),
            fw.empty_strided((2, 2), (1, 2), dtype=fd, device=device)]
    for t in made:
        assert t.dtype is fd
        got = t.cpu().reshape(-1).tolist()
        assert repr(got) == repr(torch.empty(len(got), dtype=td).tolist())


def test_fill_switch(det):
    assert fw_det.fill_uninitialized_memory is True
    with pytest.raises(RuntimeError, match="expected a bool, but got int"):
        fw_det.fill_uninitialized_memory = 1
    fw_det.fill_uninitialized_memory = False
    assert _determinism.fill_uninitialized_memory is False
    fw.use_deterministic_algorithms(False)
    fw_det.fill_uninitialized_memory = True
    t = fw.zeros(4)
    assert _determinism.fill_uninitialized(t) is t
    np.testing.assert_array_equal(t.numpy(), 0)     # mode off: nothing filled


@needs_torch
def test_put_without_accumulate_alerts_as_torch(det, device):
    def put(m, accumulate=False):
        dev = device if m is fw else "cpu"
        x = m.zeros(3, device=dev)
        x.put_(m.tensor([0, 0], device=dev), m.tensor([1.0, 2.0], device=dev),
               accumulate=accumulate)
        return x.tolist()

    a, b = _both(put)
    assert a == b and a[0] == "RuntimeError"
    assert put(fw, True) == [3.0, 0.0, 0.0]
    fw.use_deterministic_algorithms(True, warn_only=True)
    torch.use_deterministic_algorithms(True, warn_only=True)
    seen = []
    for m in (fw, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            assert put(m) == [2.0, 0.0, 0.0]
        seen.append([str(x.message).split(" (Triggered internally")[0] for x in w])
    assert seen[0] == seen[1] and len(seen[0]) == 1


def test_bincount_with_weights_alerts_on_cuda_only(det, device):
    x = fw.tensor([0, 1, 1], device=device)
    np.testing.assert_array_equal(fw.bincount(x).cpu().numpy(), [1, 2])
    w = fw.tensor([1.0, 2.0, 3.0], device=device)
    if device == "cpu":
        np.testing.assert_array_equal(fw.bincount(x, w).numpy(), [1.0, 5.0])
    else:
        with pytest.raises(RuntimeError, match="^_bincount_cuda does not have a deterministic "
                                               "implementation, but you set"):
            fw.bincount(x, w)


def test_cuda_index_writes_walk_positions_in_order(det):
    # float sums and products, and plain writes, through the serial kernels in deterministic
    # mode (atomics otherwise); integer sums keep their atomics (exact in any order)
    assert index_scatter._how(fw.float32, index_scatter.R_ADD) == index_scatter.SERIAL
    assert index_scatter._how(fw.bfloat16, index_scatter.R_MUL) == index_scatter.SERIAL
    assert index_scatter._how(fw.float16, index_scatter.R_ASSIGN) == index_scatter.SERIAL
    assert index_scatter._how(fw.int64, index_scatter.R_ADD) == index_scatter.ATOMIC
    fw.use_deterministic_algorithms(False)
    assert index_scatter._how(fw.float32, index_scatter.R_ADD) == index_scatter.ATOMIC
    assert index_scatter._how(fw.float32, index_scatter.R_ASSIGN) == index_scatter.STORE


@pytest.mark.parametrize("dtype", [fw.float32, fw.bfloat16])
def test_cuda_index_writes_equal_the_cpus_bits(det, dtype):
    # many duplicates of values whose float sum depends on the order: cuda's result is the
    # CPU's (sequential) to the bit, and the last of duplicate writes wins as on the CPU
    rng = np.random.default_rng(0)
    idx = rng.integers(0, 3, 67)
    src = (rng.standard_normal((67, 5)) * 10.0 ** rng.integers(-3, 4, (67, 1)))
    res = {}
    for dev in ("cpu", "cuda"):
        i = fw.tensor(idx, device=dev)
        s = fw.tensor(src, dtype=dtype, device=dev)
        base = fw.ones(3, 5, dtype=dtype, device=dev)
        sc_idx = i[:, None].expand(67, 5).contiguous()
        res[dev] = [base.clone().index_add_(0, i, s),
                    base.clone().index_put_((i,), s, accumulate=True),
                    base.clone().index_put_((i,), s),
                    base.clone().scatter_add_(0, sc_idx, s),
                    base.clone().scatter_(0, sc_idx, s),
                    base.clone().scatter_reduce_(0, sc_idx, s / 8 + 1, "prod"),
                    base.clone().scatter_reduce_(0, sc_idx, s, "mean")]
    for a, b in zip(res["cpu"], res["cuda"]):
        np.testing.assert_array_equal(to_np(a), to_np(b.cpu()))


def test_default_device():
    assert fw.get_default_device() == fw.device("cpu")
    try:
        fw.set_default_device("cuda")
        cuda0 = fw.device("cuda", 0)
        assert fw.get_default_device() == cuda0
        assert fw.zeros(2).device == cuda0 and fw.randn(2).device == cuda0
        assert fw.nn.Linear(2, 3).weight.device == cuda0
        assert fw.zeros_like(fw.zeros(1, device="cpu")).device.type == "cpu"
        with fw.device("cpu"):          # a block still wins
            assert fw.get_default_device() == fw.device("cpu")
            assert fw.arange(3).device.type == "cpu"
        assert fw.tensor([1.0]).device == cuda0
    finally:
        fw.set_default_device(None)
    assert fw.get_default_device() == fw.device("cpu") and fw.ones(1).device.type == "cpu"


@needs_torch
def test_cudnn_switches_are_torchs():
    # torch's side in a child process: a test helper of torch's that another test may import
    # (torch.testing._internal) freezes torch.backends' flags for the whole process
    code = ("import torch; c = torch.backends.cudnn\n"
            "print([c.enabled, c.benchmark, c.deterministic, c.allow_tf32])\n"
            "for name, bad in (('enabled', 1), ('benchmark', 1), ('deterministic', 'x'),"
            " ('allow_tf32', 1)):\n"
            "    try:\n        setattr(c, name, bad)\n"
            "    except RuntimeError as e:\n        print(e)\n")
    lines = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=300, check=True).stdout.splitlines()
    fc = fw.backends.cudnn
    mine = {n: getattr(fc, n) for n in ("enabled", "benchmark", "deterministic",
                                          "allow_tf32", "benchmark_limit")}
    try:
        # conftest turns allow_tf32 off for the suite; PyTorch's default is on, as here
        assert str([mine["enabled"], mine["benchmark"], mine["deterministic"], True]) == \
            lines[0]
        assert fc.is_available() is False and fc.version() is None
        errs = []
        for name, bad in (("enabled", 1), ("benchmark", 1), ("deterministic", "x"),
                          ("allow_tf32", 1)):
            with pytest.raises(RuntimeError) as info:
                setattr(fc, name, bad)
            errs.append(str(info.value))
        assert errs == lines[1:]
        fc.benchmark = fc.deterministic = True
        assert fc.benchmark and fc.deterministic
        with fc.flags(enabled=True, benchmark=False, deterministic=False, allow_tf32=True):
            assert not fc.benchmark and fc.allow_tf32 and fc.enabled
        assert fc.benchmark and fc.deterministic and not fc.allow_tf32
    finally:
        for n, v in mine.items():
            setattr(fc, n, v)
