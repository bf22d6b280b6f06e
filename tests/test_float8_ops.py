"""The ops PyTorch 2.13 runs on float8 tensors (abs, eq/ne, isnan, isinf/isfinite where the
format has them, where, masked_select, indexing, fills), and its errors for the ones it
refuses (neg, lt, masked_fill, flip, out-of-range fills), on every float8 code."""
import numpy as np
import pytest

import framework as fw

torch = pytest.importorskip("torch")

# NaN codes decoded and compared warn in NumPy under the interpreter
pytestmark = [pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning"),
              pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")]

NAMES = ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz")


def _codes(device, name):
    """Every code of the format, as (framework, torch) tensors; 256 elements cross the
    interpreter's blocks."""
    ours = fw.arange(256, dtype=fw.uint8, device=device).view(getattr(fw, name))
    return ours, torch.arange(256, dtype=torch.uint8).view(getattr(torch, name))


def _bytes(t):
    if isinstance(t, fw.Tensor):
        return t.cpu().view(fw.uint8).numpy()
    return t.view(torch.uint8).numpy()


def _same_outcome(ours, theirs, device, exact=True):
    """Both calls return equal values (float8 compared bit for bit), or both raise the same
    exception type with the same text (PyTorch's "_cpu" kernel names read "_cuda" there;
    ``exact=False``: the same dtype named, the kernel's name aside)."""
    try:
        ref = theirs()
    except Exception as e:     # noqa: BLE001 - the oracle's exception is the expectation
        with pytest.raises(type(e)) as got:
            ours()
        if exact:
            assert str(got.value) == str(e).replace("_cpu\"", f"_{device}\""), str(got.value)
        else:
            assert str(got.value).endswith(str(e).split(" not implemented")[-1]), got.value
        return None
    got = ours()
    if isinstance(ref, torch.Tensor):
        assert got.dtype.name == str(ref.dtype)[6:] and tuple(got.shape) == tuple(ref.shape)
        if ref.dtype.is_floating_point:
            np.testing.assert_array_equal(_bytes(got), _bytes(ref))
        else:
            np.testing.assert_array_equal(got.cpu().numpy(), ref.numpy())
    else:
        assert got == ref
    return ref


def test_pointwise_ops(device):
    for name in NAMES:
        x, t = _codes(device, name)
        y, u = x.roll(37), t.roll(37)
        xs = x.view(16, 16).t()     # strided operands
        ts = t.view(16, 16).t()
        cases = [
            # abs in float32, rounded back: -0 becomes 0 as in PyTorch's scalar loop (its
            # vectorized loop over contiguous data keeps the -0 code)
            (lambda: x.abs(), lambda: t.float().abs().to(t.dtype)),
            (lambda: x[::2].abs(), lambda: t[::2].abs()),
            (lambda: x == y, lambda: t == u), (lambda: x.ne(y), lambda: t.ne(u)),
            (lambda: xs.eq(xs), lambda: ts.eq(ts)),
            (lambda: x.isnan(), lambda: t.isnan()), (lambda: x.isinf(), lambda: t.isinf()),
            (lambda: x.isfinite(), lambda: t.isfinite()),
            (lambda: fw.where(y.view(fw.uint8) > 100, x, y), lambda: torch.where(u.view(
                torch.uint8) > 100, t, u)),
            (lambda: fw.where(y.view(fw.uint8) > 100, xs.reshape(256), 1000.0),
             lambda: torch.where(u.view(torch.uint8) > 100, ts.reshape(256), 1000.0)),
            (lambda: -x, lambda: -t), (lambda: x < y, lambda: t < u),
            (lambda: x > 0, lambda: t > 0), (lambda: x.sign(), lambda: t.sign()),
            (lambda: fw.where(x.view(fw.uint8) > 9, x, fw.ones(256, device=device)),
             lambda: torch.where(t.view(torch.uint8) > 9, t, torch.ones(256))),
        ]
        for v in (1.1, 448.0, 1000.0, float("inf"), float("nan"), -0.0, 3):
            cases.append((lambda v=v: x == v, lambda v=v: t == v))   # v rounded to float8
        for ours, theirs in cases:
            _same_outcome(ours, theirs, device)
        # in place, into a strided view
        z, w = x.clone(), t.clone()
        z.view(16, 16)[:, ::2].abs_()
        w.view(16, 16)[:, ::2].abs_()
        np.testing.assert_array_equal(_bytes(z), _bytes(w))


def test_selection_and_casts(device):
    for name in NAMES:
        x, t = _codes(device, name)
        mask_t = (torch.arange(256) * 7 % 5) < 2
        mask = fw.tensor(mask_t.numpy(), device=device)
        idx_t = torch.tensor([255, 0, 128, 127, 3, 3])
        idx = fw.tensor(idx_t.numpy(), device=device)
        x2, t2 = x.view(8, 32), t.view(8, 32)
        cases = [
            (lambda: x.masked_select(mask), lambda: t.masked_select(mask_t)),
            (lambda: x[mask], lambda: t[mask_t]),
            (lambda: x2[mask.view(8, 32)], lambda: t2[mask_t.view(8, 32)]),
            (lambda: x2.masked_select(mask[:32]), lambda: t2.masked_select(mask_t[:32])),
            (lambda: x[idx], lambda: t[idx_t]), (lambda: x2[:, idx[:4] % 32],
                                                  lambda: t2[:, idx_t[:4] % 32]),
            (lambda: x.index_select(0, idx), lambda: t.index_select(0, idx_t)),
            (lambda: fw.cat([x2, x2[:3]]), lambda: torch.cat([t2, t2[:3]])),
            (lambda: fw.stack([x2, x2], 2), lambda: torch.stack([t2, t2], 2)),
            (lambda: x2.t().clone(), lambda: t2.t().clone()),
            (lambda: x.view(fw.int8), lambda: t.view(torch.int8)),
            (lambda: x.view(fw.int8).view(x.dtype), lambda: t.view(torch.int8).view(t.dtype)),
            (lambda: x.float(), lambda: t.float()),
            (lambda: x.float().to(x.dtype), lambda: t.float().to(t.dtype)),
            # PyTorch refuses a flip unless it moves whole rows or nothing
            (lambda: x2.flip(0), lambda: t2.flip(0)), (lambda: x2.flip(1), lambda: t2.flip(1)),
            (lambda: x2.t().flip(0), lambda: t2.t().flip(0)),
            (lambda: x2.t().flip(1), lambda: t2.t().flip(1)),
            (lambda: x2[:, ::2].flip(0), lambda: t2[:, ::2].flip(0)),
            (lambda: x2[:1].flip(0), lambda: t2[:1].flip(0)),
            (lambda: x.flip(0), lambda: t.flip(0)),
        ]
        for ours, theirs in cases:
            _same_outcome(ours, theirs, device)
        # to(device) both ways keeps every byte
        other = "cpu" if device == "cuda" else "cuda"
        if fw.cuda.is_available():
            back = x.to(other).to(device)
            assert back.device.type == device and back.dtype is x.dtype
            np.testing.assert_array_equal(_bytes(back), _bytes(t))


def test_masked_fill_refused(device):
    for name in NAMES:
        x, t = _codes(device, name)
        m_t = torch.arange(256) % 3 == 0
        m = fw.tensor(m_t.numpy(), device=device)

        def put(a, mask, v):
            a = a.clone()
            a[mask] = v
            return a
        cases = [
            (lambda: x.masked_fill(m, 2.0), lambda: t.masked_fill(m_t, 2.0)),
            (lambda: x.clone().masked_fill_(m, fw.tensor(2.0)),
             lambda: t.clone().masked_fill_(m_t, torch.tensor(2.0))),
            (lambda: put(x, m, 2.0), lambda: put(t, m_t, 2.0)),
            (lambda: put(x, m, x[:86]), lambda: put(t, m_t, t[:86])),   # an index_put
            # PyTorch's earlier errors win
            (lambda: x.clone().masked_fill_(m, fw.ones(2)),
             lambda: t.clone().masked_fill_(m_t, torch.ones(2))),
            (lambda: x.masked_fill(m.float(), 1.0), lambda: t.masked_fill(m_t.float(), 1.0)),
        ]
        for ours, theirs in cases:
            _same_outcome(ours, theirs, device)


def test_fill_range_checks(device):
    vals = (1.0, -0.0, 240.0, 448.0, 449.0, 1000.0, 57344.0, 60000.0, 1e6, float("inf"),
            float("-inf"), float("nan"), 1e-10)
    for name in NAMES:
        d, td = getattr(fw, name), getattr(torch, name)
        x, t = _codes(device, name)
        for v in vals:
            cases = [
                # PyTorch checks a fill of several elements against the range; one element,
                # a tensor value, an assignment and a cast convert unchecked (saturating)
                (lambda: fw.full((3,), v, dtype=d, device=device),
                 lambda: torch.full((3,), v, dtype=td)),
                (lambda: fw.full((1, 1), v, dtype=d, device=device),
                 lambda: torch.full((1, 1), v, dtype=td)),
                (lambda: x[:5].clone().fill_(v), lambda: t[:5].clone().fill_(v)),
                (lambda: x[:1].clone().fill_(v), lambda: t[:1].clone().fill_(v)),
                (lambda: x[:4].clone().fill_(fw.tensor(v)),
                 lambda: t[:4].clone().fill_(torch.tensor(v))),
                (lambda: fw.full_like(x[:2], v), lambda: torch.full_like(t[:2], v)),
                (lambda: x.new_full((2,), v), lambda: t.new_full((2,), v)),
                (lambda: _assigned(x, v), lambda: _assigned(t, v)),
                (lambda: fw.tensor([v], device=device).to(d), lambda: torch.tensor([v]).to(td)),
            ]
            for ours, theirs in cases:
                _same_outcome(ours, theirs, device)
        for ours, theirs in [
                (lambda: fw.zeros(2, 3, dtype=d, device=device),
                 lambda: torch.zeros(2, 3, dtype=td)),
                (lambda: fw.ones(5, dtype=d, device=device), lambda: torch.ones(5, dtype=td)),
                (lambda: fw.ones_like(x), lambda: torch.ones_like(t)),
                (lambda: x.clone().zero_(), lambda: t.clone().zero_())]:
            _same_outcome(ours, theirs, device)
    # copy_ from other dtypes rounds (and saturates) as a cast
    for src in (np.array([1e6, -3.3, 0.1, 65504.0]), np.array([300, -7, 0, 1000])):
        for name in NAMES:
            got = fw.zeros(4, dtype=getattr(fw, name), device=device)
            got.copy_(fw.tensor(src, device=device))
            ref = torch.zeros(4, dtype=getattr(torch, name)).copy_(torch.tensor(src))
            np.testing.assert_array_equal(_bytes(got), _bytes(ref))


def _assigned(x, v):
    """x with v assigned through a slice, an int and an index tensor."""
    x = x.clone()
    lib = fw if isinstance(x, fw.Tensor) else torch
    x[2:5] = v
    x[7] = v
    x[lib.tensor([9, 11], device=x.device)] = v
    return x


def test_16bit_one_element_fill_unchecked(device):
    # the rule float8 follows is PyTorch's for every 16-bit float too
    for name in ("float16", "bfloat16"):
        d, td = getattr(fw, name), getattr(torch, name)
        for ours, theirs in [
                (lambda: fw.zeros(1, dtype=d, device=device).fill_(1e39),
                 lambda: torch.zeros(1, dtype=td).fill_(1e39)),
                (lambda: fw.zeros(2, dtype=d, device=device).fill_(1e39),
                 lambda: torch.zeros(2, dtype=td).fill_(1e39)),
                (lambda: _assigned(fw.zeros(12, dtype=d, device=device), 1e39),
                 lambda: _assigned(torch.zeros(12, dtype=td), 1e39))]:
            _same_outcome(ours, theirs, device)
    # a 32-bit float and the integers still check one element
    with pytest.raises(RuntimeError, match="float without overflow"):
        fw.zeros(1, device=device).fill_(1e39)
    with pytest.raises(RuntimeError, match="int8_t without overflow"):
        fw.zeros(3, dtype=fw.int8, device=device)[1] = 1000


def test_other_ops_refused_or_run(device):
    # ops whose kernels have no float8 case raise PyTorch's NotImplementedError on every
    # device (never a Triton or lookup error); any/all reduce x != 0, as PyTorch does
    for name in ("float8_e4m3fn", "float8_e5m2fnuz"):
        x, t = _codes(device, name)
        x2, t2 = x.view(16, 16), t.view(16, 16)
        z, u = fw.zeros(5, dtype=x.dtype, device=device), torch.zeros(5, dtype=t.dtype)
        m_t = torch.arange(256) % 2 == 0
        m = fw.tensor(m_t.numpy(), device=device)
        for ours, theirs in [
                (lambda: x.any(), lambda: t.any()), (lambda: x2.all(1), lambda: t2.all(1)),
                (lambda: z.any(), lambda: u.any()), (lambda: x2.any(0, keepdim=True),
                                                     lambda: t2.any(0, keepdim=True)),
                (lambda: fw.equal(x, x[:3]), lambda: torch.equal(t, t[:3]))]:
            _same_outcome(ours, theirs, device)
        for ours, theirs in [
                (lambda: x.sum(), lambda: t.sum()), (lambda: x2.amax(1), lambda: t2.amax(1)),
                (lambda: x.max(), lambda: t.max()), (lambda: x.argmax(), lambda: t.argmax()),
                (lambda: x.mean(), lambda: t.mean()), (lambda: x.cumsum(0), lambda: t.cumsum(0)),
                (lambda: x.sort(), lambda: t.sort()), (lambda: x.topk(3), lambda: t.topk(3)),
                (lambda: x.unique(), lambda: t.unique()),
                (lambda: x2.unique(dim=0), lambda: t2.unique(dim=0)),
                (lambda: x.nonzero(), lambda: t.nonzero()),
                (lambda: x.count_nonzero(), lambda: t.count_nonzero()),
                (lambda: x2.tril(), lambda: t2.tril()), (lambda: fw.equal(x, x),
                                                         lambda: torch.equal(t, t)),
                (lambda: x.masked_scatter(m, x), lambda: t.masked_scatter(m_t, t))]:
            _same_outcome(ours, theirs, device, exact=False)


def test_repr_of_fnuz_nan():
    # the *fnuz NaN widens to a signaling float32 NaN, as in PyTorch: printing stays quiet
    import warnings
    vals = [float("nan"), 1.5, -2.0]
    for name in ("float8_e4m3fnuz", "float8_e5m2fnuz"):
        x = fw.tensor(vals, dtype=getattr(fw, name))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            text = repr(x)
        assert text.replace("framework.", "torch.") == repr(
            torch.tensor(vals, dtype=getattr(torch, name)))
