"""GradScaler's kernels: the ``amp`` launchers (framework/_cpu/amp.py over native/amp.cpp,
framework/kernels/amp.py in Triton) and the ops over them
(framework.amp._ops._amp_foreach_non_finite_check_and_unscale_ and _amp_update_scale_),
against NumPy: every float dtype, lists of tensors of sizes crossing the cuda BLOCK and the
CPU chunk, infs and NaNs in different tensors at block edges, empty tensors."""
import numpy as np
import pytest

import framework as fw
from framework._ops.alloc import backend
from framework.amp._ops import _amp_foreach_non_finite_check_and_unscale_, _amp_update_scale_

SIZES = (0, 1, 7, 1025, 16385)       # 1025 > the Triton BLOCK, 16385 > the CPU chunk
DTYPES = ("float16", "bfloat16", "float32", "float64")
INV = float(np.float32(1 / 3))       # an inv_scale whose products round


def _f64(t):
    return np.array(t.cpu().double().numpy(), dtype=np.float64)


def _grads(dtype, device, sizes=SIZES, seed=0):
    """Tensors of ``sizes`` in ``dtype`` on ``device``, with values up to 1e3 in size."""
    rng = np.random.default_rng(seed)
    return [fw.tensor(rng.standard_normal(n) * 1e3, dtype=fw.float64).to(getattr(fw, dtype))
            .to(device) for n in sizes]


def _expected(grads, dtype):
    """What unscaling by INV gives: the product in float32 (float64 for float64 grads),
    rounded once to the grads' dtype (with framework's cast, which NumPy lacks for
    bfloat16)."""
    out = []
    for g in grads:
        if dtype == "float64":
            out.append(_f64(g) * INV)
        else:
            p = _f64(g).astype(np.float32) * np.float32(INV)
            out.append(_f64(fw.tensor(p, dtype=fw.float32).to(getattr(fw, dtype))))
    return out


def _scalars(device, found=0.0):
    return (fw.full((), found, dtype=fw.float32, device=device),
            fw.full((), INV, dtype=fw.float32, device=device))


@pytest.mark.parametrize("dtype", DTYPES)
def test_unscale_finite(device, dtype):
    grads = _grads(dtype, device)
    want = _expected(grads, dtype)
    found_inf, inv = _scalars(device)
    backend(fw.device(device)).amp.non_finite_check_and_unscale(grads, found_inf, inv)
    assert found_inf.item() == 0.0
    for g, w in zip(grads, want):
        np.testing.assert_array_equal(_f64(g), w)


# (tensor, element): the first and last element, both sides of a cuda block edge (1024)
# and of a CPU chunk edge (16384)
PLACES = [(1, 0), (2, 6), (3, 1023), (3, 1024), (4, 16383), (4, 16384)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bad", [float("inf"), -float("inf"), float("nan")],
                         ids=["inf", "-inf", "nan"])
def test_unscale_non_finite(device, dtype, bad):
    for k, (t, i) in enumerate(PLACES):
        grads = _grads(dtype, device, seed=k)
        grads[t][i] = bad
        want = _expected(grads, dtype)
        found_inf, inv = _scalars(device)
        backend(fw.device(device)).amp.non_finite_check_and_unscale(grads, found_inf, inv)
        assert found_inf.item() == 1.0, (t, i)
        for g, w in zip(grads, want):
            np.testing.assert_array_equal(_f64(g), w)   # equal_nan: the bad value stays
        assert np.isnan(_f64(grads[t])[i]) if bad != bad else _f64(grads[t])[i] == bad


def test_unscale_several_bad_and_sticky_flag(device):
    """Non-finite values in several tensors and blocks set the flag once; a flag already
    set stays set when every value is finite; empty lists and tensors are fine."""
    grads = _grads("float32", device)
    grads[3][5] = float("nan")
    grads[4][1030] = float("inf")
    grads[4][0] = -float("inf")
    found_inf, inv = _scalars(device)
    backend(fw.device(device)).amp.non_finite_check_and_unscale(grads, found_inf, inv)
    assert found_inf.item() == 1.0
    grads = _grads("float32", device)
    want = _expected(grads, "float32")
    found_inf, inv = _scalars(device, found=1.0)
    backend(fw.device(device)).amp.non_finite_check_and_unscale(grads, found_inf, inv)
    assert found_inf.item() == 1.0
    for g, w in zip(grads, want):
        np.testing.assert_array_equal(_f64(g), w)
    found_inf, inv = _scalars(device)
    backend(fw.device(device)).amp.non_finite_check_and_unscale([], found_inf, inv)
    empty = [fw.empty(0, device=device), fw.empty(0, 3, device=device)]
    backend(fw.device(device)).amp.non_finite_check_and_unscale(empty, found_inf, inv)
    assert found_inf.item() == 0.0


def _update_model(scale, tracker, found, growth, backoff, interval):
    """PyTorch's rule, in float32 on cuda and in float64 rounded to float32 on the cpu
    (the two differ only for factors that float32 cannot hold)."""
    if found:
        return np.float32(np.float64(scale) * backoff), 0
    if tracker + 1 == interval:
        grown = np.float32(np.float64(scale) * growth)
        return (grown if np.isfinite(grown) else scale), 0
    return scale, tracker + 1


@pytest.mark.parametrize("interval", [1, 3])
def test_update_scale(device, interval):
    scale = fw.full((), 1024.0, dtype=fw.float32, device=device)
    tracker = fw.zeros((), dtype=fw.int32, device=device)
    s, t = np.float32(1024.0), 0
    founds = [0, 0, 0, 1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0]   # 2: two optimizers
    for f in founds:
        found = fw.full((), float(f), device=device)
        out = backend(fw.device(device)).amp.update_scale(scale, tracker, found, 2.0, 0.25,
                                                          interval)
        assert out is None
        s, t = _update_model(s, t, f, 2.0, 0.25, interval)
        assert (scale.item(), tracker.item()) == (float(s), t)


@pytest.mark.filterwarnings("ignore:overflow encountered")  # NumPy, in the interpreter
def test_update_scale_no_overflow(device):
    """A grown scale that overflows float32 is dropped (the tracker restarts anyway)."""
    scale = fw.full((), 3e38, dtype=fw.float32, device=device)
    tracker = fw.full((), 1, dtype=fw.int32, device=device)
    found = fw.zeros((), device=device)
    _amp_update_scale_(scale, tracker, found, 2.0, 0.5, 2)
    assert scale.item() == float(np.float32(3e38)) and tracker.item() == 0


# ---- the ops: checks and what they add to the launchers ---------------------------------

def test_op_mixed_dtypes_and_views(device):
    """One call with grads of several dtypes and a non-contiguous one."""
    grads = _grads("float32", device, sizes=(5, 1100)) + _grads("float16", device, sizes=(9, ))
    t = fw.tensor(np.arange(12.0).reshape(3, 4), dtype=fw.float64).to(device).t()
    grads.append(t)
    want = _expected(grads[:2], "float32") + _expected(grads[2:3], "float16") + \
        [np.arange(12.0).reshape(3, 4).T * INV]
    grads[2][4] = float("inf")
    want[2][4] = float("inf")
    found_inf, inv = _scalars(device)
    r = _amp_foreach_non_finite_check_and_unscale_(grads, found_inf, inv)
    assert r is None and found_inf.item() == 1.0
    for g, w in zip(grads, want):
        np.testing.assert_array_equal(_f64(g), w)


def test_op_errors_like_torch(device):
    torch = pytest.importorskip("torch")
    grads = [fw.ones(3, device=device)]
    tgrads = [torch.ones(3)]
    f1, i1 = _scalars(device)
    cases = [  # (framework args, torch args)
        ((grads, fw.zeros(2, device=device), i1), (tgrads, torch.zeros(2), torch.ones(()))),
        ((grads, f1, fw.ones(2, device=device)), (tgrads, torch.zeros(()), torch.ones(2))),
        ((grads, f1.double(), i1), (tgrads, torch.zeros(()).double(), torch.ones(()))),
        ((grads, f1, i1.half()), (tgrads, torch.zeros(()), torch.ones(()).half())),
    ]
    for (a, b) in cases:
        with pytest.raises(RuntimeError) as want:
            torch._amp_foreach_non_finite_check_and_unscale_(*b)
        with pytest.raises(RuntimeError, match=str(want.value).replace(".", r"\.")):
            _amp_foreach_non_finite_check_and_unscale_(*a)
    with pytest.raises(NotImplementedError,
                       match=f"\"_amp_foreach_non_finite_check_and_unscale_{device}\" not "
                       "implemented for 'Int'"):
        _amp_foreach_non_finite_check_and_unscale_([fw.ones(3, dtype=fw.int32, device=device)],
                                                   f1, i1)
    s = fw.ones((), device=device)
    tr = fw.zeros((), dtype=fw.int32, device=device)
    ts, ttr = torch.ones(()), torch.zeros((), dtype=torch.int32)
    cases = [
        ((s, tr.long(), f1), (ts, ttr.long(), torch.zeros(()))),
        ((s.double(), tr, f1), (ts.double(), ttr, torch.zeros(()))),
        ((s, tr, f1.double()), (ts, ttr, torch.zeros(()).double())),
        ((fw.ones(2, device=device), tr, f1), (torch.ones(2), ttr, torch.zeros(()))),
        ((s, fw.zeros(2, dtype=fw.int32, device=device), f1),
         (ts, torch.zeros(2, dtype=torch.int32), torch.zeros(()))),
    ]
    for (a, b) in cases:
        with pytest.raises(RuntimeError) as want:
            torch._amp_update_scale_(*b, 2.0, 0.5, 3)
        with pytest.raises(RuntimeError, match=str(want.value).replace(".", r"\.")):
            _amp_update_scale_(*a, 2.0, 0.5, 3)
    if device == "cuda":
        with pytest.raises(RuntimeError, match="_amp_foreach_non_finite_check_and_unscale_"):
            _amp_foreach_non_finite_check_and_unscale_([fw.ones(3)], f1, i1)


def test_op_matches_torch_values():
    """Same values and flag as torch's CPU op on a list with a NaN, in every dtype."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    for dtype in DTYPES:
        arrs = [rng.standard_normal(n) * 1e3 for n in (3, 1030)]
        arrs[1][1029] = np.nan
        tg = [torch.tensor(a).to(getattr(torch, dtype)) for a in arrs]
        g = [fw.tensor(a).to(getattr(fw, dtype)) for a in arrs]
        tf, f = torch.zeros(()), fw.zeros(())
        torch._amp_foreach_non_finite_check_and_unscale_(tg, tf, torch.tensor(INV))
        _amp_foreach_non_finite_check_and_unscale_(g, f, fw.tensor(INV))
        assert f.item() == tf.item() == 1.0
        for a, b in zip(g, tg):
            np.testing.assert_array_equal(_f64(a), b.double().numpy())
