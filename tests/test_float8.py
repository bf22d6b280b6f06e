"""float8 dtypes (float8_e4m3fn, float8_e5m2 and the fnuz pair) against PyTorch: dtype
entries, bit-exact casts both ways, the byte-moving ops, errors of the arithmetic ones,
``_scaled_mm`` and serialization."""
import io

import numpy as np
import pytest

import framework as fw

torch = pytest.importorskip("torch")

# NaN inputs cast to integers, and signaling NaNs added in the interpreter, warn in NumPy
pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")

NAMES = ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz")


def _bits(t, width=32):
    """The raw bits of a framework or torch tensor as a NumPy integer array."""
    ints = {8: "uint8", 16: "int16", 32: "int32"}[width]
    if isinstance(t, fw.Tensor):
        return t.cpu().view(getattr(fw, ints)).numpy().copy()
    return t.view(getattr(torch, ints)).numpy().copy()


def _sweep(n_step):
    """float32 inputs: a stride through all bit patterns, every float8 tie (midpoints of
    neighbouring values, and one float32 ulp either side), inf, NaN, huge and tiny values."""
    bits = np.arange(0, 2**32, n_step, dtype=np.uint64).astype(np.uint32)
    extra = [bits.view(np.float32)]
    for name in NAMES:
        v = torch.arange(256, dtype=torch.uint8).view(getattr(torch, name)).float().numpy()
        v = np.sort(v[np.isfinite(v)])
        mid = ((v[:-1].astype(np.float64) + v[1:]) / 2).astype(np.float32)
        inf = np.float32(np.inf)
        extra += [mid, np.nextafter(mid, inf), np.nextafter(mid, -inf)]
        top = np.float32(v[-1])
        extra.append(np.array([top * 1.0625, top * 1.125, top * 1.5, top * 2], np.float32))
    extra.append(np.array([np.inf, -np.inf, np.nan, -np.nan, 0.0, -0.0, 1e-45, -1e-45, 3e38],
                          np.float32))
    return np.concatenate(extra)


# ---- dtype entries --------------------------------------------------------------------------

def test_dtype_entries_match_torch():
    for name in NAMES:
        d, td = getattr(fw, name), getattr(torch, name)
        assert str(d) == "framework." + name
        assert d.itemsize == td.itemsize == 1
        assert d.is_floating_point == td.is_floating_point
        assert d.is_signed == td.is_signed
        fi, tfi = fw.finfo(d), torch.finfo(td)
        for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
            assert getattr(fi, attr) == getattr(tfi, attr), (name, attr)
    # promotion: float8 promotes with nothing but itself (PyTorch's error text)
    e4, e5 = fw.float8_e4m3fn, fw.float8_e5m2
    assert fw.promote_types(e4, e4) is e4
    for other in (fw.float32, fw.bfloat16, fw.int32, fw.bool, e5):
        tother = getattr(torch, other.name)
        with pytest.raises(RuntimeError) as ours:
            fw.promote_types(e4, other)
        with pytest.raises(RuntimeError) as theirs:
            torch.promote_types(torch.float8_e4m3fn, tother)
        assert str(ours.value) == str(theirs.value)
    x = fw.zeros(2, dtype=e4)
    assert fw.result_type(x, 1.0) is e4 and fw.result_type(x, fw.tensor(1.0)) is e4


# ---- casts ----------------------------------------------------------------------------------

def test_decode_all_bit_patterns(device):
    codes = torch.arange(256, dtype=torch.uint8)
    ours = fw.arange(256, dtype=fw.uint8, device=device)
    for name in NAMES:
        tx, x = codes.view(getattr(torch, name)), ours.view(getattr(fw, name))
        # float32: bit for bit, NaN payloads included
        np.testing.assert_array_equal(_bits(x.float()), _bits(tx.float()), err_msg=name)
        for dt in ("float64", "float16", "bfloat16"):
            got = x.to(getattr(fw, dt)).cpu().double().numpy()
            ref = tx.to(getattr(torch, dt)).double().numpy()
            np.testing.assert_array_equal(got, ref, err_msg=f"{name} -> {dt}")
        # to integers and bool (NaN to an integer is undefined: left out)
        fin = np.isfinite(tx.float().numpy())
        for dt in ("int64", "int32", "uint8", "bool"):
            got = x.to(getattr(fw, dt)).cpu().numpy()
            ref = tx.to(getattr(torch, dt)).numpy()
            np.testing.assert_array_equal(got[fin], ref[fin], err_msg=f"{name} -> {dt}")
        # host values
        ref_list = tx.float().tolist()
        np.testing.assert_array_equal(np.array(x.tolist()), np.array(ref_list))
        assert x[56].item() == tx[56].item()


def test_encode_float32_sweep(device):
    src = _sweep(4099 if device == "cpu" else 2**20 + 7)
    tsrc = torch.from_numpy(src)
    x = fw.tensor(src, device=device)
    for name in NAMES:
        ref = _bits(tsrc.to(getattr(torch, name)), 8)
        got = _bits(x.to(getattr(fw, name)), 8)
        bad = np.nonzero(got != ref)[0]
        assert bad.size == 0, (name, src[bad[:5]], got[bad[:5]], ref[bad[:5]])


def test_encode_from_other_dtypes(device):
    src = _sweep(2**22 + 5)
    src = src[np.isfinite(src) | np.isnan(src)]
    for dt in ("float64", "float16", "bfloat16", "int64", "int32", "bool", "uint8"):
        tsrc = torch.from_numpy(src.astype(np.float64))
        if dt in ("int64", "int32", "uint8"):
            tsrc = torch.from_numpy(np.nan_to_num(src, posinf=0, neginf=0)
                                    .clip(-3e5, 3e5).astype(np.int64))
        tsrc = tsrc.to(getattr(torch, dt))
        if dt == "bfloat16":    # torch's own bits (NaN signs included)
            x = fw.tensor(tsrc.view(torch.int16).numpy(), device=device).view(fw.bfloat16)
        else:
            x = fw.tensor(tsrc.numpy(), device=device)
        for name in NAMES:
            ref = _bits(tsrc.to(getattr(torch, name)), 8)
            got = _bits(x.to(getattr(fw, name)), 8)
            np.testing.assert_array_equal(got, ref, err_msg=f"{dt} -> {name}")
    # between float8 dtypes and from Python numbers (tensor(), full, fill_)
    codes = torch.arange(256, dtype=torch.uint8)
    ours = fw.arange(256, dtype=fw.uint8, device=device)
    for a in ("float8_e4m3fn", "float8_e5m2fnuz"):
        for b in ("float8_e5m2", "float8_e4m3fnuz"):
            ref = _bits(codes.view(getattr(torch, a)).to(getattr(torch, b)), 8)
            got = _bits(ours.view(getattr(fw, a)).to(getattr(fw, b)), 8)
            np.testing.assert_array_equal(got, ref, err_msg=f"{a} -> {b}")
    vals = [3.3, -500.0, 1e-3, float("nan"), float("inf"), 7, 464.0]
    for name in ("float8_e4m3fn", "float8_e5m2"):
        d, td = getattr(fw, name), getattr(torch, name)
        assert _bits(fw.tensor(vals, dtype=d, device=device), 8).tolist() == \
            _bits(torch.tensor(vals, dtype=td), 8).tolist()
        # (PyTorch's fill of more than one element refuses values beyond the finite
        # range, its one-element fill and casts do not: only values in range here)
        for v in (3.3, -300.0, 1e-3, float("nan"), 7):
            assert _bits(fw.full((3,), v, dtype=d, device=device), 8).tolist() == \
                _bits(torch.full((3,), v, dtype=td), 8).tolist()


# ---- byte-moving ops, host values, errors -----------------------------------------------------

def test_byte_moving_ops(device):
    src = np.linspace(-300, 300, 60, dtype=np.float32).reshape(3, 4, 5)
    t = torch.from_numpy(src).to(torch.float8_e4m3fn)
    x = fw.tensor(src, device=device).to(fw.float8_e4m3fn)
    idx_t, idx = torch.tensor([2, 0, 3]), fw.tensor([2, 0, 3], device=device)
    cases = [
        (lambda a: a.clone(), lambda a: a.clone()),
        (lambda a: a.transpose(0, 2).contiguous(), lambda a: a.transpose(0, 2).contiguous()),
        (lambda a: a.permute(2, 0, 1).reshape(5, 12), lambda a: a.permute(2, 0, 1).reshape(5, 12)),
        (lambda a: a[1:, ::2, 1], lambda a: a[1:, ::2, 1]),
        (lambda a: a.index_select(1, idx), lambda a: a.index_select(1, idx_t)),
        (lambda a: fw.cat([a, a[:1]]), lambda a: torch.cat([a, a[:1]])),
        (lambda a: fw.stack([a[0], a[2]], 1), lambda a: torch.stack([a[0], a[2]], 1)),
        (lambda a: a.view(12, 5).t().contiguous(), lambda a: a.view(12, 5).t().contiguous()),
        (lambda a: a[:, None].expand(3, 2, 4, 5).contiguous(),
         lambda a: a[:, None].expand(3, 2, 4, 5).contiguous()),
        (lambda a: fw.zeros_like(a), lambda a: torch.zeros_like(a)),
        (lambda a: fw.ones(2, 3, dtype=a.dtype, device=a.device),
         lambda a: torch.ones(2, 3, dtype=a.dtype)),
    ]
    for ours, theirs in cases:
        got, ref = ours(x), theirs(t)
        assert got.dtype is fw.float8_e4m3fn and tuple(got.shape) == tuple(ref.shape)
        np.testing.assert_array_equal(_bits(got, 8), _bits(ref, 8))
    # copy_ into a float8 view from float32 and from float8 of the other format
    y, ty = x.clone(), t.clone()
    y[1].copy_(fw.tensor(src[0] * 3, device=device))
    ty[1].copy_(torch.from_numpy(src[0] * 3))
    y[2, :2] = x[0, :2].to(fw.float8_e5m2)
    ty[2, :2] = t[0, :2].to(torch.float8_e5m2)
    np.testing.assert_array_equal(_bits(y, 8), _bits(ty, 8))
    # view(uint8) reinterprets bits, both ways
    u = x.view(fw.uint8)
    assert u.dtype is fw.uint8 and u.view(fw.float8_e4m3fn).dtype is fw.float8_e4m3fn
    np.testing.assert_array_equal(u.cpu().numpy(), _bits(t, 8))


def test_host_values_and_printing():
    vals = [1.5, -0.0, 448.0, float("nan"), 0.001953125]
    x = fw.tensor(vals, dtype=fw.float8_e4m3fn)
    t = torch.tensor(vals, dtype=torch.float8_e4m3fn)
    np.testing.assert_array_equal(np.array(x.tolist()), np.array(t.tolist()))
    assert x[0].item() == 1.5 and isinstance(x[0].item(), float)
    assert repr(x).replace("framework.", "torch.") == repr(t)
    with pytest.raises(TypeError, match="Got unsupported ScalarType Float8_e4m3fn"):
        x.numpy()


def test_arithmetic_raises(device):
    x = fw.ones(3, dtype=fw.float8_e4m3fn, device=device)
    with pytest.raises(NotImplementedError, match="Float8_e4m3fn"):
        x + x
    with pytest.raises(NotImplementedError, match="Float8_e4m3fn"):
        x * 2
    with pytest.raises(NotImplementedError, match="Float8_e4m3fn"):
        x > 0
    with pytest.raises(NotImplementedError, match="Float8_e4m3fn"):
        x.exp()
    with pytest.raises(RuntimeError, match="Promotion for Float8 Types is not supported"):
        x + fw.ones(3, device=device)
    idx = fw.tensor([1], device=device)
    with pytest.raises(NotImplementedError, match="Float8_e4m3fn"):
        x.index_add(0, idx, x[:1])
    with pytest.raises(NotImplementedError, match="Float8_e4m3fn"):
        x.scatter(0, idx, x[:1])


# ---- _scaled_mm ------------------------------------------------------------------------------

def _fp8_operands(m, k, n, seed=0):
    g = torch.Generator().manual_seed(seed)
    a = (torch.randn(m, k, generator=g) * 4).to(torch.float8_e4m3fn)
    b = (torch.randn(n, k, generator=g) * 4).to(torch.float8_e5m2).t()   # column-major
    return a, b


def _fw(t, device):
    """A torch tensor's copy as a framework tensor, float8 bits and strides kept."""
    if t.dtype in (torch.float8_e4m3fn, torch.float8_e5m2):
        u = t.view(torch.uint8)
        # as_strided keeps a column-major operand column-major
        base = fw.tensor(u.contiguous().numpy() if t.is_contiguous() else
                         u.t().contiguous().numpy(), device=device)
        base = base.view(getattr(fw, str(t.dtype).split(".")[1]))
        return base if t.is_contiguous() else base.t()
    return fw.tensor(t.float().numpy(), device=device).to(getattr(fw, str(t.dtype)[6:]))


def test_scaled_mm(device):
    m, k, n = 20, 48, 32       # crosses the interpreter's 16-wide tiles, K over 3 steps
    a, b = _fp8_operands(m, k, n)
    fa, fb = _fw(a, device), _fw(b, device)
    sa, sb = torch.tensor(0.37), torch.tensor(1.9)
    ref64 = (a.double() * 0.37) @ (b.double() * 1.9)
    for out_dtype in (torch.float32, torch.bfloat16):
        got = fw._scaled_mm(fa, fb, _fw(sa, device), _fw(sb, device),
                            out_dtype=getattr(fw, str(out_dtype)[6:]))
        ref = torch._scaled_mm(a, b, sa, sb, out_dtype=out_dtype)
        assert got.dtype.name == str(out_dtype)[6:]
        tol = 1e-5 if out_dtype is torch.float32 else 1e-2
        np.testing.assert_allclose(got.cpu().float().numpy(), ref.float().numpy(),
                                   rtol=tol, atol=tol)
        np.testing.assert_allclose(got.cpu().double().numpy(), ref64.numpy(), rtol=tol,
                                   atol=tol * 10)
    # default out dtype (mat1's) and row-wise scales with a bias
    got = fw._scaled_mm(fa, fb, _fw(sa, device), _fw(sb, device))
    assert got.dtype is fw.float8_e4m3fn
    rsa, rsb = torch.rand(m, 1) + 0.5, torch.rand(1, n) + 0.5
    bias = torch.randn(n).bfloat16()
    got = fw._scaled_mm(fa, fb, _fw(rsa, device), _fw(rsb, device), bias=_fw(bias, device),
                        out_dtype=fw.bfloat16)
    ref = torch._scaled_mm(a, b, rsa, rsb, bias=bias, out_dtype=torch.bfloat16)
    np.testing.assert_allclose(got.cpu().float().numpy(), ref.float().numpy(), rtol=1e-2,
                               atol=1e-1)
    # PyTorch's errors
    one = fw.tensor(1.0, device=device)
    with pytest.raises(RuntimeError, match="Expected mat1 to be Float8 matrix got Float"):
        fw._scaled_mm(fa.float(), fb, one, one)
    with pytest.raises(RuntimeError, match="shapes cannot be multiplied"):
        fw._scaled_mm(fa, fb[:16], one, one)
    with pytest.raises(ValueError, match="Invalid scaling configuration"):
        fw._scaled_mm(fa, fb, fw.ones(m, device=device), fw.ones(n, device=device))
    with pytest.raises(RuntimeError, match="Bias must be size 32 but got 31"):
        fw._scaled_mm(fa, fb, one, one, bias=fw.ones(31, device=device))
    if device == "cuda":      # cuBLASLt's layouts
        with pytest.raises(RuntimeError, match="mat2 must be col_major"):
            fw._scaled_mm(fa, fb.contiguous(), one, one)
        with pytest.raises(RuntimeError, match="divisible by 16"):
            fw._scaled_mm(fa[:, :40], fb[:40], one, one)


# ---- serialization ---------------------------------------------------------------------------

def test_save_load_interop(tmp_path):
    vals = [1.5, -2.0, 448.0, float("nan"), 3e-3, 0.0]
    ours = {"a": fw.tensor(vals, dtype=fw.float8_e4m3fn),
            "b": fw.tensor(vals, dtype=fw.float8_e5m2).view(2, 3).t()}
    buf = io.BytesIO()
    fw.save(ours, buf)
    buf.seek(0)
    theirs = torch.load(buf, weights_only=True)
    assert theirs["a"].dtype is torch.float8_e4m3fn and theirs["b"].dtype is torch.float8_e5m2
    assert theirs["b"].shape == (3, 2) and theirs["b"].stride() == (1, 3)
    for k in ours:
        np.testing.assert_array_equal(_bits(theirs[k], 8), _bits(ours[k], 8))
    buf = io.BytesIO()
    torch.save({k: v for k, v in theirs.items()}, buf)
    buf.seek(0)
    back = fw.load(buf)
    for k in ours:
        assert back[k].dtype is ours[k].dtype
        np.testing.assert_array_equal(_bits(back[k], 8), _bits(ours[k], 8))
    # safetensors: F8_E4M3 / F8_E5M2, read by the safetensors package
    from framework.utils import safetensors as st
    path = str(tmp_path / "f8.safetensors")
    st.save_file({"a": ours["a"], "b": ours["b"].contiguous()}, path)
    sp = pytest.importorskip("safetensors.torch")
    loaded = sp.load_file(path)
    assert loaded["a"].dtype is torch.float8_e4m3fn and loaded["b"].dtype is torch.float8_e5m2
    np.testing.assert_array_equal(_bits(loaded["a"], 8), _bits(ours["a"], 8))
    sp.save_file({"c": theirs["a"]}, str(tmp_path / "t.safetensors"))
    c = st.load_file(str(tmp_path / "t.safetensors"))["c"]
    assert c.dtype is fw.float8_e4m3fn
    np.testing.assert_array_equal(_bits(c, 8), _bits(theirs["a"], 8))
