"""nn.functional.grouped_mm: the four layouts (2d x 3d, 3d x 3d, 2d x 2d, 3d x 2d) against
PyTorch's CPU grouped_mm (bfloat16) and a float64 NumPy loop over the groups (float32,
float16), on cpu and simulated cuda; groups of 0, 1, 17 and 33 rows crossing the tile
edges (N=40, K=48), rows and columns past offs[-1], transposed operands, out_dtype, the
gradients of both operands (first and second order) against torch's autograd, and the
errors (PyTorch's texts)."""
import numpy as np
import pytest

import framework as fw

torch = pytest.importorskip("torch")
F = fw.nn.functional

SIZES = [0, 1, 17, 33]          # one empty group; 17 and 33 cross 16- and 32-row tiles
K, N = 48, 40
TOL = {"float32": 2e-5, "float16": 2e-3, "bfloat16": 1e-2}


def _offs(sizes):
    return np.cumsum(sizes).astype(np.int32)


def _ref(a, b, offs, extent=None):
    """float64 grouped product of NumPy arrays, by the layouts' definitions; outputs past
    offs[-1] zero."""
    a, b = a.astype(np.float64), b.astype(np.float64)
    if a.ndim == 3 and b.ndim == 3:
        return a @ b
    starts = np.concatenate([[0], offs[:-1]]).astype(int)
    if a.ndim == 2 and b.ndim == 3:
        out = np.zeros((a.shape[0], b.shape[2]))
        for g, (s, e) in enumerate(zip(starts, offs)):
            out[s:e] = a[s:e] @ b[g]
    elif a.ndim == 2:
        out = np.zeros((len(offs), a.shape[0], b.shape[1]))
        for g, (s, e) in enumerate(zip(starts, offs)):
            out[g] = a[:, s:e] @ b[s:e]
    else:
        out = np.zeros((a.shape[1], b.shape[1]))
        for g, (s, e) in enumerate(zip(starts, offs)):
            out[:, s:e] = a[g] @ b[:, s:e]
    return out


def _layouts(rng):
    """(name, a, b, offs) of each layout, float32 NumPy, the jagged dim 5 longer than
    offs[-1] (ignored past it; 56 keeps torch's 16-byte row strides)."""
    offs = _offs(SIZES)
    j = int(offs[-1])
    g = len(SIZES)
    r = rng.standard_normal
    return [("2d3d", r((j + 5, K)), r((g, K, N)), offs),
            ("3d3d", r((g, 17, K)), r((g, K, N)), None),
            ("2d2d", r((33, j + 5)), r((j + 5, N)), offs),
            ("3d2d", r((g, 17, K)), r((K, j + 5)), offs)]


def _fw(x, dtype, device):
    return None if x is None else fw.tensor(x, device=device).to(dtype)


def _torch(x, dtype):
    return None if x is None else torch.tensor(x).to(getattr(torch, dtype))


def _np(t):
    return t.detach().cpu().float().numpy()


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_values(device, dtype):
    rng = np.random.default_rng(0)
    for name, a, b, offs in _layouts(rng):
        fa, fb = _fw(a, getattr(fw, dtype), device), _fw(b, getattr(fw, dtype), device)
        fo = None if offs is None else fw.tensor(offs, device=device)
        got = F.grouped_mm(fa, fb, offs=fo)
        assert got.dtype is getattr(fw, dtype) and got.device.type == device
        # the reference multiplies the operands as rounded to dtype
        ra, rb = _np(fa).astype(np.float64), _np(fb).astype(np.float64)
        ref = _ref(ra, rb, offs)
        assert got.shape == ref.shape, name
        np.testing.assert_allclose(_np(got), ref, rtol=TOL[dtype], atol=TOL[dtype] * 8,
                                   err_msg=f"{name} {dtype} {device}")
        if dtype == "bfloat16":   # torch's own kernel, past offs[-1] (unwritten there) aside
            t = torch.nn.functional.grouped_mm(_torch(ra, dtype), _torch(rb, dtype),
                                               offs=None if offs is None else torch.tensor(offs))
            t = t.float().numpy()
            j = 0 if offs is None else int(offs[-1])
            if name == "2d3d":
                t[j:] = 0
            elif name == "3d2d":
                t[:, j:] = 0
            np.testing.assert_allclose(_np(got), t, rtol=1e-2, atol=0.1, err_msg=name)


def test_transposed_and_strided_operands(device):
    """Column-major mat_b (the forward's weight.T), a column-major mat_a and a padded row
    stride are read through their strides."""
    rng = np.random.default_rng(1)
    offs = _offs(SIZES)
    j = int(offs[-1])
    a = fw.tensor(rng.standard_normal((K, j)), dtype=fw.float32, device=device).t()
    w = fw.tensor(rng.standard_normal((4, N, K)), dtype=fw.float32, device=device)
    fo = fw.tensor(offs, device=device)
    got = F.grouped_mm(a, w.transpose(-2, -1), offs=fo)
    ref = _ref(_np(a), _np(w).transpose(0, 2, 1), offs)
    np.testing.assert_allclose(_np(got), ref, rtol=2e-5, atol=2e-4)
    padded = fw.tensor(rng.standard_normal((j, K + 8)), dtype=fw.float32, device=device)[:, :K]
    got = F.grouped_mm(padded, w.transpose(-2, -1), offs=fo)
    np.testing.assert_allclose(_np(got), _ref(_np(padded), _np(w).transpose(0, 2, 1), offs),
                               rtol=2e-5, atol=2e-4)


def test_out_dtype_float32(device):
    """bfloat16 operands with out_dtype=float32: the float32 accumulator unrounded."""
    rng = np.random.default_rng(2)
    offs = _offs(SIZES)
    a = fw.tensor(rng.standard_normal((int(offs[-1]), K)), device=device).to(fw.bfloat16)
    b = fw.tensor(rng.standard_normal((4, K, N)), device=device).to(fw.bfloat16)
    got = F.grouped_mm(a, b, offs=fw.tensor(offs, device=device), out_dtype=fw.float32)
    assert got.dtype is fw.float32
    ref = _ref(_np(a).astype(np.float64), _np(b).astype(np.float64), offs)
    np.testing.assert_allclose(got.cpu().numpy(), ref, rtol=1e-5, atol=1e-4)
    same = F.grouped_mm(a, b, offs=fw.tensor(offs, device=device), out_dtype=fw.bfloat16)
    assert same.dtype is fw.bfloat16


def test_tf32_precision(device, monkeypatch):
    """float32 follows the matmul precision: tl.dot in TF32 under "high" (the interpreter
    does not round to TF32, so the launch's PRECISION is what is checked), IEEE under
    "highest"; 16-bit operands take tl.dot's default."""
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((51, K)), rng.standard_normal((4, K, N))
    offs = _offs(SIZES)
    seen = []
    if device == "cuda":
        from framework.kernels import grouped_mm as gk
        kernel = gk._grouped_mm_kernel

        class Spy:
            def __getitem__(self, grid):
                def launch(*args, **kw):
                    seen.append(kw["PRECISION"])
                    return kernel[grid](*args, **kw)
                return launch
        monkeypatch.setattr(gk, "_grouped_mm_kernel", Spy())
    old = fw.get_float32_matmul_precision()
    try:
        for precision in ("high", "highest"):
            fw.set_float32_matmul_precision(precision)
            got = F.grouped_mm(_fw(a, fw.float32, device), _fw(b, fw.float32, device),
                               offs=fw.tensor(offs, device=device))
            np.testing.assert_allclose(_np(got), _ref(a, b, offs), rtol=1e-2, atol=5e-2)
        F.grouped_mm(_fw(a, fw.float16, device), _fw(b, fw.float16, device),
                     offs=fw.tensor(offs, device=device))
    finally:
        fw.set_float32_matmul_precision(old)
    if device == "cuda":
        assert seen == ["tf32", "ieee", None]


def test_empty_and_clamped_groups(device):
    """No groups at all, every group empty, and offs past the jagged dim (clamped to it,
    as PyTorch's CPU kernel does)."""
    rng = np.random.default_rng(4)
    a = fw.tensor(rng.standard_normal((20, 16)), dtype=fw.float32, device=device)
    b = fw.tensor(rng.standard_normal((3, 16, 16)), dtype=fw.float32, device=device)
    got = F.grouped_mm(a, b[:0], offs=fw.tensor(np.zeros(0, np.int32), device=device))
    assert got.shape == (20, 16) and not _np(got).any()
    zeros = fw.tensor(np.zeros(3, np.int32), device=device)
    assert not _np(F.grouped_mm(a, b, offs=zeros)).any()
    kk = F.grouped_mm(a.t(), a, offs=zeros)          # 2d x 2d, every K group empty
    assert kk.shape == (3, 16, 16) and not _np(kk).any()
    past = np.array([4, 9, 30], np.int32)
    got = F.grouped_mm(a, b, offs=fw.tensor(past, device=device))
    t = torch.nn.functional.grouped_mm(torch.tensor(_np(a)), torch.tensor(_np(b)),
                                       offs=torch.tensor(past))
    np.testing.assert_allclose(_np(got), t.numpy(), rtol=1e-5, atol=1e-5)
    assert F.grouped_mm(a[:0], b, offs=zeros).shape == (0, 16)


def _torch_grads(a, b, offs, g, create_graph=False):
    ta = torch.tensor(a, requires_grad=True)
    tb = torch.tensor(b, requires_grad=True)
    out = torch.nn.functional.grouped_mm(ta, tb, offs=None if offs is None else
                                         torch.tensor(offs))
    return ta, tb, torch.autograd.grad(out, (ta, tb), torch.tensor(g),
                                       create_graph=create_graph)


@pytest.mark.parametrize("layout", ["2d3d", "3d3d", "2d2d", "3d2d"])
def test_gradients(device, layout):
    """Both operands' gradients (float32) against torch's autograd, first and second order
    (the backward runs grouped_mm again); the jagged dim ends at offs[-1] here, where
    torch's gradients are defined."""
    rng = np.random.default_rng(5)
    sizes = [3, 0, 17]
    offs = _offs(sizes)
    j = int(offs[-1])
    r = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    a, b = {"2d3d": (r(j, 16), r(3, 16, 24)), "3d3d": (r(3, 5, 16), r(3, 16, 24)),
            "2d2d": (r(8, j), r(j, 24)), "3d2d": (r(3, 8, 16), r(16, j))}[layout]
    if layout == "3d3d":
        offs = None
    fa = fw.tensor(a, device=device).requires_grad_()
    fb = fw.tensor(b, device=device).requires_grad_()
    fo = None if offs is None else fw.tensor(offs, device=device)
    out = F.grouped_mm(fa, fb, offs=fo)
    g = r(*out.shape)
    ga, gb = fw.autograd.grad(out, (fa, fb), fw.tensor(g, device=device), create_graph=True)
    ta, tb, (tga, tgb) = _torch_grads(a, b, offs, g, create_graph=True)
    np.testing.assert_allclose(_np(ga), tga.detach().numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(_np(gb), tgb.detach().numpy(), rtol=1e-4, atol=1e-4)
    va, vb = r(*a.shape), r(*b.shape)
    s = (ga * fw.tensor(va, device=device)).sum() + (gb * fw.tensor(vb, device=device)).sum()
    gga, ggb = fw.autograd.grad(s, (fa, fb))
    ts = (tga * torch.tensor(va)).sum() + (tgb * torch.tensor(vb)).sum()
    tgga, tggb = torch.autograd.grad(ts, (ta, tb))
    np.testing.assert_allclose(_np(gga), tgga.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(_np(ggb), tggb.numpy(), rtol=1e-4, atol=1e-4)


def test_gradients_past_offs_and_bf16(device):
    """Rows of mat_a past offs[-1] get zero gradient; bfloat16 operands with
    out_dtype=float32 get bfloat16 gradients; an expanded (stride 0) incoming gradient
    works (torch's CPU kernel refuses it)."""
    rng = np.random.default_rng(6)
    offs = _offs([5, 0, 20])
    a = fw.tensor(rng.standard_normal((30, 16)), device=device).to(fw.bfloat16)
    b = fw.tensor(rng.standard_normal((3, 16, 24)), device=device).to(fw.bfloat16)
    a.requires_grad_()
    b.requires_grad_()
    out = F.grouped_mm(a, b, offs=fw.tensor(offs, device=device), out_dtype=fw.float32)
    out.sum().backward()
    assert a.grad.dtype is fw.bfloat16 and b.grad.dtype is fw.bfloat16
    ra, rb = _np(a).astype(np.float64), _np(b).astype(np.float64)
    ones = np.ones((30, 24))
    ref_a = _ref(ones, rb.transpose(0, 2, 1), offs)
    ref_b = _ref(ra.T, ones, offs)
    np.testing.assert_allclose(_np(a.grad), ref_a, rtol=1e-2, atol=5e-2)
    np.testing.assert_allclose(_np(b.grad), ref_b, rtol=1e-2, atol=5e-2)
    assert not _np(a.grad)[25:].any()


def _errors():
    z = np.zeros
    o2 = np.array([0, 8], np.int32)
    return [
        ("mat_a 1d", (z(16), z((2, 16, 16)), o2), {}),
        ("mat_b 4d", (z((8, 16)), z((1, 2, 16, 16)), o2), {}),
        ("K", (z((8, 16)), z((2, 24, 16)), o2), {}),
        ("K 3d3d", (z((2, 8, 16)), z((2, 24, 16)), None), {}),
        ("no offs", (z((8, 16)), z((2, 16, 16)), None), {}),
        ("offs for 3d3d", (z((2, 8, 16)), z((2, 16, 16)), o2), {}),
        ("offs int64", (z((8, 16)), z((2, 16, 16)), o2.astype(np.int64)), {}),
        ("offs 2d", (z((8, 16)), z((2, 16, 16)), o2[None]), {}),
        ("offs length", (z((8, 16)), z((3, 16, 16)), o2), {}),
        ("batch", (z((3, 8, 16)), z((2, 16, 16)), None), {}),
        ("bias", (z((8, 16)), z((2, 16, 16)), o2), {"bias": z(16)}),
        ("out_dtype", (z((8, 16)), z((2, 16, 16)), o2), {"out_dtype": "float16"}),
        ("float64", (z((8, 16)), z((2, 16, 16)), o2), {"dtype": "float64"}),
        ("int32", (z((8, 16)), z((2, 16, 16)), o2), {"dtype": "int32"}),
        ("mixed", (z((8, 16)), z((2, 16, 16)), o2), {"dtype_b": "float32"}),
    ]


@pytest.mark.parametrize("case", _errors(), ids=[c[0] for c in _errors()])
def test_errors_match_torch(device, case):
    name, (a, b, offs), kw = case
    kw = dict(kw)
    dtype = kw.pop("dtype", "bfloat16")
    dtype_b = kw.pop("dtype_b", dtype)
    tkw, fkw = {}, {}
    if "bias" in kw:
        tkw["bias"] = torch.tensor(kw["bias"]).to(torch.bfloat16)
        fkw["bias"] = fw.tensor(kw["bias"], device=device).to(fw.bfloat16)
    if "out_dtype" in kw:
        tkw["out_dtype"], fkw["out_dtype"] = getattr(torch, kw["out_dtype"]), \
            getattr(fw, kw["out_dtype"])
    with pytest.raises(RuntimeError) as want:
        torch.nn.functional.grouped_mm(
            torch.tensor(a).to(getattr(torch, dtype)), torch.tensor(b).to(getattr(torch, dtype_b)),
            offs=None if offs is None else torch.tensor(offs), **tkw)
    with pytest.raises(RuntimeError) as got:
        F.grouped_mm(fw.tensor(a, device=device).to(getattr(fw, dtype)),
                     fw.tensor(b, device=device).to(getattr(fw, dtype_b)),
                     offs=None if offs is None else fw.tensor(offs, device=device), **fkw)
    # PyTorch's sentence; ours may add the shapes after it
    assert str(got.value).startswith(str(want.value).split("\n")[0].rstrip(".")), \
        (str(got.value), str(want.value))


def test_decreasing_offs():
    """A decreasing offs raises on the CPU (no sync there); on cuda it is an empty group
    and never reads or writes out of bounds."""
    a, b = fw.zeros(20, 16), fw.zeros(3, 16, 16)
    with pytest.raises(RuntimeError, match="offs must be non-decreasing"):
        F.grouped_mm(a, b, offs=fw.tensor([4, 2, 9], dtype=fw.int32))
    with pytest.raises(RuntimeError, match="offs must be non-decreasing"):
        F.grouped_mm(a, b, offs=fw.tensor([-1, 2, 9], dtype=fw.int32))
    if fw.cuda.is_available():
        out = F.grouped_mm(a.cuda(), b.cuda(), offs=fw.tensor([4, 2, 9], dtype=fw.int32,
                                                                device="cuda"))
        assert out.shape == (20, 16)


@pytest.mark.parametrize("kind", ["16bit", "tf32", "ieee"])
def test_gpu_tile_configs(kind, monkeypatch):
    """The GPU's tile configs (launched here in the interpreter: with FW_COMPILE_CHECK=1
    they also compile for sm_90) give the same values, a jagged M crossing their tiles."""
    if not fw.cuda.is_available():
        pytest.skip("needs cuda or TRITON_INTERPRET=1")
    from framework.kernels import grouped_mm as gk
    monkeypatch.setattr(gk, "_SIM_CONFIG", gk._CONFIGS[kind])
    dtype = fw.bfloat16 if kind == "16bit" else fw.float32
    rng = np.random.default_rng(7)
    offs = _offs([0, 130, 3])
    a = fw.tensor(rng.standard_normal((140, 72)), device="cuda").to(dtype)
    b = fw.tensor(rng.standard_normal((3, 72, 136)), device="cuda").to(dtype)
    old = fw.get_float32_matmul_precision()
    fw.set_float32_matmul_precision("high" if kind == "tf32" else "highest")
    try:
        got = F.grouped_mm(a, b, offs=fw.tensor(offs, device="cuda"))
    finally:
        fw.set_float32_matmul_precision(old)
    ref = _ref(_np(a).astype(np.float64), _np(b).astype(np.float64), offs)
    np.testing.assert_allclose(_np(got), ref, rtol=1e-2, atol=0.1)


def test_launchers_write_only_out(device):
    """Each backend's launcher, given an out that is a window of a larger buffer and offs
    past the jagged dim, writes that window only (offs clamped, as PyTorch's CPU kernel
    clamps them), for a grouped M and a grouped N."""
    from framework._ops import alloc
    launcher = alloc.backend(fw.device(device)).grouped_mm.grouped_mm
    rng = np.random.default_rng(8)
    past = np.array([4, 9, 30], np.int32)
    fo = fw.tensor(past, device=device)
    a = fw.tensor(rng.standard_normal((20, 16)), dtype=fw.float32, device=device)
    b = fw.tensor(rng.standard_normal((3, 16, 16)), dtype=fw.float32, device=device)
    buf = fw.full((40, 16), 7.0, device=device)
    launcher(buf[5:25], a, b, fo)
    got = _np(buf)
    assert (got[:5] == 7).all() and (got[25:] == 7).all()
    np.testing.assert_allclose(got[5:25], _ref(_np(a), _np(b), np.minimum(past, 20)),
                               rtol=1e-5, atol=1e-5)
    a3 = fw.tensor(rng.standard_normal((3, 8, 16)), dtype=fw.float32, device=device)
    b2 = fw.tensor(rng.standard_normal((16, 20)), dtype=fw.float32, device=device)
    buf = fw.full((8, 40), 7.0, device=device)
    launcher(buf[:, 5:25], a3, b2, fo)
    got = _np(buf)
    assert (got[:, :5] == 7).all() and (got[:, 25:] == 7).all()
    np.testing.assert_allclose(got[:, 5:25], _ref(_np(a3), _np(b2), np.minimum(past, 20)),
                               rtol=1e-5, atol=1e-5)
