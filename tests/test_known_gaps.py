"""Known gaps against PyTorch 2.13 (the oracle): mixed-dtype einsum, RNNs under CPU
autocast, missing sparse functions, vmap over training-mode BatchNorm and .item()."""
import numpy as np
import pytest

import framework as fw

torch = pytest.importorskip("torch")


def _pair(vals, dtype, requires_grad, device=None):
    t = torch.tensor(vals, dtype=getattr(torch, dtype), requires_grad=requires_grad)
    f = fw.tensor(vals, dtype=getattr(fw, dtype), device=device)
    return t, f.requires_grad_(requires_grad)


def _np(t):
    t = t.detach()
    if t.dtype in (torch.bfloat16, fw.bfloat16):
        t = t.float()
    return t.cpu().numpy() if hasattr(t, "cpu") else t.numpy()


# ---- 1. einsum with operands of different dtypes --------------------------------------

@pytest.mark.parametrize("eq,specs", [
    ("i,j->ij", [([1.5, 2.0], "bfloat16", True), ([1.5, 2.0, 3.0], "float32", True)]),
    ("i,j->ij", [([1.5, -2.0], "float32", True), ([1 + 2j, 2.0, 3j], "complex64", True)]),
    ("ij,j->ij", [([[1.5, 2.0], [0.5, 1.0]], "float64", True), ([1.0, 3.0], "float32", True)]),
    ("i,j,k->ijk", [([1.5, 2.0], "float32", True), ([1.0, 3.0, 5.0], "float64", True),
                    ([4, 1], "int64", False)]),
])
def test_einsum_mixed_dtypes_promote_and_grad_in_own_dtype(device, eq, specs):
    if device == "cuda" and any(dt == "complex64" for _, dt, _ in specs):
        pytest.skip("complex tensors are cpu-only")
    pairs = [_pair(v, dt, rg, device) for v, dt, rg in specs]
    ref = torch.einsum(eq, *[t for t, _ in pairs])
    got = fw.einsum(eq, *[f for _, f in pairs])
    assert str(got.dtype).split(".")[-1] == str(ref.dtype).split(".")[-1]
    np.testing.assert_allclose(_np(got), _np(ref), rtol=1e-6)
    (ref.abs() if ref.is_complex() else ref).pow(2).sum().backward()
    (got.abs() if got.is_complex() else got).pow(2).sum().backward()
    for t, f in pairs:
        if t.requires_grad:
            assert f.grad.dtype is getattr(fw, str(t.grad.dtype).split(".")[-1])
            np.testing.assert_allclose(_np(f.grad), _np(t.grad), rtol=1e-2 if
                                       t.dtype == torch.bfloat16 else 1e-5)


def test_einsum_int_float_outer_and_contraction_errors():
    i, f = [1, 2], [1.5, 2.0, 3.0]
    ref = torch.einsum("i,j->ij", torch.tensor(i), torch.tensor(f))
    got = fw.einsum("i,j->ij", fw.tensor(i), fw.tensor(f))
    assert got.dtype is fw.float32
    np.testing.assert_array_equal(got.numpy(), ref.numpy())
    # a pair that really contracts is one bmm in PyTorch, which needs one dtype
    for eq, a, b in [("i,i->", [1, 2], [1.5, 2.0]), ("ij,j->i", [[1.0, 2.0]], [1.0, 3.0])]:
        ta, tb = torch.tensor(a), torch.tensor(b, dtype=torch.bfloat16)
        with pytest.raises(RuntimeError) as e_ref:
            torch.einsum(eq, ta, tb)
        with pytest.raises(RuntimeError) as e_got:
            fw.einsum(eq, fw.tensor(a), fw.tensor(b, dtype=fw.bfloat16))
        assert str(e_got.value) == str(e_ref.value)


# ---- 2. LSTM / GRU / RNN under CPU autocast to bfloat16 ---------------------------------

def _rnn_pair(name, **kw):
    torch.manual_seed(0)
    m = getattr(torch.nn, name)(3, 4, batch_first=True, **kw)
    fm = getattr(fw.nn, name)(3, 4, batch_first=True, **kw)
    fm.load_state_dict({k: fw.tensor(v.numpy()) for k, v in m.state_dict().items()})
    return m, fm


@pytest.mark.parametrize("name,kw", [("LSTM", {}), ("LSTM", {"proj_size": 2}), ("GRU", {}),
                                     ("RNN", {})])
def test_rnn_modules_under_cpu_autocast_bf16(name, kw):
    m, fm = _rnn_pair(name, **kw)
    x = torch.randn(2, 5, 3)
    fx = fw.tensor(x.numpy())
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out, h = m(x)
    with fw.autocast("cpu", dtype=fw.bfloat16):
        fout, fh = fm(fx)
    hs, fhs = (h, fh) if name == "LSTM" else ((h,), (fh,))
    for r, g in zip((out,) + tuple(hs), (fout,) + tuple(fhs)):
        assert str(g.dtype).split(".")[-1] == str(r.dtype).split(".")[-1]
        np.testing.assert_allclose(_np(g), _np(r), atol=2e-2)
    if name == "LSTM" and not kw:
        # PyTorch's CPU LSTM runs as a whole in bfloat16: the same as a bfloat16 model
        fb = getattr(fw.nn, name)(3, 4, batch_first=True)
        fb.load_state_dict(fm.state_dict())
        ref, _ = fb.bfloat16()(fx.bfloat16())
        np.testing.assert_array_equal(_np(fout), _np(ref))
    fout.float().sum().backward()
    assert fm.weight_ih_l0.grad.dtype is fw.float32


# ---- 3. sparse functions: zeros_like, smm, hspmm, sspaddmm, sampled_addmm ---------------

def _coo_pair(device=None):
    # row 1 empty, row 0 with a repeated (uncoalesced) entry; 5 rows cross no kernel edge
    # worth having, the dense side has 9 columns
    i, v = [[0, 0, 2, 4, 0], [1, 3, 0, 2, 1]], [1.5, -2.0, 3.0, 0.5, 2.0]
    ts = torch.sparse_coo_tensor(torch.tensor(i), torch.tensor(v), (5, 4))
    fs = fw.sparse_coo_tensor(fw.tensor(i, device=device), fw.tensor(v, device=device),
                              (5, 4))
    d = np.random.randn(4, 9).astype(np.float32)
    return ts, fs, torch.tensor(d), fw.tensor(d, device=device)


def _same_coo(got, ref, rtol=1e-6):
    assert got.layout is fw.sparse_coo and got.is_coalesced() == ref.is_coalesced()
    assert tuple(got.shape) == tuple(ref.shape) and got.sparse_dim() == ref.sparse_dim()
    np.testing.assert_array_equal(got._indices().cpu().numpy(), ref._indices().numpy())
    np.testing.assert_allclose(got._values().cpu().numpy(), ref._values().numpy(), rtol=rtol,
                               atol=1e-6)


def test_sparse_zeros_like_and_empty_like():
    ts, fs, _, _ = _coo_pair()
    for fn in ("zeros_like", "empty_like"):
        _same_coo(getattr(fw, fn)(fs), getattr(torch, fn)(ts))
    got = fw.zeros_like(fs, dtype=fw.float64)
    assert got.layout is fw.sparse_coo and got.dtype is fw.float64 and got._nnz() == 0
    hyb = fw.sparse_coo_tensor(fw.tensor([[0, 1]]), fw.ones(2, 3), (2, 3))
    _same_coo(fw.zeros_like(hyb), torch.zeros_like(torch.sparse_coo_tensor(
        torch.tensor([[0, 1]]), torch.ones(2, 3), (2, 3))))
    dense = fw.zeros_like(fs, layout=fw.strided)
    assert dense.layout is fw.strided and tuple(dense.shape) == (5, 4)
    csr = fw.zeros_like(fs.to_sparse_csr())
    ref = torch.zeros_like(ts.to_sparse_csr())
    assert csr.layout is fw.sparse_csr and csr._nnz() == 0
    np.testing.assert_array_equal(csr.crow_indices().numpy(), ref.crow_indices().numpy())
    with pytest.raises(NotImplementedError, match="aten::ones_like"):
        fw.ones_like(fs)


def test_smm_hspmm_sspaddmm(device):
    ts, fs, td, fd = _coo_pair(device)
    _same_coo(fw.smm(fs, fd), torch.smm(ts, td))
    _same_coo(fs.smm(fd), ts.smm(td))
    _same_coo(fw.hspmm(fs, fd), torch.hspmm(ts, td))
    tm = torch.sparse_coo_tensor(torch.tensor([[1, 3], [0, 8]]), torch.tensor([1.0, 2.0]),
                                 (5, 9))
    fm = fw.sparse_coo_tensor(fw.tensor([[1, 3], [0, 8]], device=device),
                              fw.tensor([1.0, 2.0], device=device), (5, 9))
    _same_coo(fw.sspaddmm(fm, fs, fd, beta=2, alpha=0.5),
              torch.sspaddmm(tm, ts, td, beta=2, alpha=0.5))
    _same_coo(fm.sspaddmm(fs, fd), tm.sspaddmm(ts, td))


def _same_error(fn_ref, fn_got, exc=RuntimeError):
    with pytest.raises(exc) as e_ref:
        fn_ref()
    with pytest.raises(exc) as e_got:
        fn_got()
    # PyTorch's "could not run" texts go on about custom builds: compare the first sentence
    got = str(e_got.value).replace("CUDA' backend", "CPU' backend")
    assert got.split(". ")[0] == str(e_ref.value).split(". ")[0]


def test_sparse_product_errors():
    ts, fs, td, fd = _coo_pair()
    _same_error(lambda: torch.smm(td, td), lambda: fw.smm(fd, fd))
    _same_error(lambda: torch.smm(ts, ts), lambda: fw.smm(fs, fs))
    _same_error(lambda: torch.smm(ts, td[:3]), lambda: fw.smm(fs, fd[:3]))
    _same_error(lambda: torch.smm(ts, td[0]), lambda: fw.smm(fs, fd[0]))
    _same_error(lambda: torch.smm(ts, td.double()), lambda: fw.smm(fs, fd.double()))
    _same_error(lambda: torch.hspmm(ts, td[:2]), lambda: fw.hspmm(fs, fd[:2]))
    _same_error(lambda: torch.hspmm(td, td), lambda: fw.hspmm(fd, fd), NotImplementedError)
    _same_error(lambda: torch.hspmm(ts.to_sparse_csr(), td),
                lambda: fw.hspmm(fs.to_sparse_csr(), fd), NotImplementedError)
    tm = torch.sparse_coo_tensor(torch.zeros(2, 0, dtype=torch.long), torch.ones(0), (5, 8))
    fm = fw.sparse_coo_tensor(fw.zeros(2, 0, dtype=fw.int64), fw.ones(0), (5, 8))
    _same_error(lambda: torch.sspaddmm(tm, ts, td), lambda: fw.sspaddmm(fm, fs, fd))
    # index_select on CSR has no kernel in PyTorch 2.13
    _same_error(lambda: ts.to_sparse_csr().index_select(0, torch.tensor([1])),
                lambda: fs.to_sparse_csr().index_select(0, fw.tensor([1])),
                NotImplementedError)


def test_sampled_addmm(device):
    dense = np.array([[0, 2, 0, 1, 0], [3, 0, 4, 0, 0], [0, 0, 0, 0, 0]], np.float32)
    a = np.random.randn(3, 6).astype(np.float32)
    b = np.random.randn(6, 5).astype(np.float32)
    tc = torch.tensor(dense).to_sparse_csr()
    fc = fw.tensor(dense, device=device).to_sparse_csr()
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    fa = fw.tensor(a, device=device, requires_grad=True)
    fb = fw.tensor(b, device=device, requires_grad=True)
    ref = torch.sparse.sampled_addmm(tc, ta, tb, beta=0.5, alpha=2.0)
    got = fw.sparse.sampled_addmm(fc, fa, fb, beta=0.5, alpha=2.0)
    assert got.layout is fw.sparse_csr
    np.testing.assert_array_equal(got.crow_indices().cpu().numpy(),
                                  ref.crow_indices().numpy())
    np.testing.assert_array_equal(got.col_indices().cpu().numpy(), ref.col_indices().numpy())
    np.testing.assert_allclose(got.values().detach().cpu().numpy(),
                               ref.values().detach().numpy(), rtol=1e-5, atol=1e-6)
    w = np.arange(1.0, 5.0, dtype=np.float32)
    (ref.values() * torch.tensor(w)).sum().backward()
    (got.values() * fw.tensor(w, device=device)).sum().backward()
    np.testing.assert_allclose(fa.grad.cpu().numpy(), ta.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(fb.grad.cpu().numpy(), tb.grad.numpy(), rtol=1e-5, atol=1e-6)
    ta_, tb_ = ta.detach(), tb.detach()
    fa_, fb_ = fa.detach(), fb.detach()
    _same_error(lambda: torch.sparse.sampled_addmm(tc.to_sparse_coo(), ta_, tb_),
                lambda: fw.sparse.sampled_addmm(fc.to_sparse_coo(), fa_, fb_),
                NotImplementedError)
    _same_error(lambda: torch.sparse.sampled_addmm(tc, ta_, tb_[:4]),
                lambda: fw.sparse.sampled_addmm(fc, fa_, fb_[:4]))
    _same_error(lambda: torch.sparse.sampled_addmm(tc, ta_.double(), tb_),
                lambda: fw.sparse.sampled_addmm(fc, fa_.double(), fb_))
    _same_error(lambda: torch.sparse.sampled_addmm(tc, ta_.double(), tb_.double()),
                lambda: fw.sparse.sampled_addmm(fc, fa_.double(), fb_.double()))
    _same_error(lambda: torch.sparse.sampled_addmm(tc, ta_, tb_[:, :2]),
                lambda: fw.sparse.sampled_addmm(fc, fa_, fb_[:, :2]))
    _same_error(lambda: torch.sparse.sampled_addmm(tc.long(), ta_.long(), tb_.long()),
                lambda: fw.sparse.sampled_addmm(fc.to(fw.int64), fa_.long(), fb_.long()))


# ---- 4. vmap over training-mode BatchNorm, and .item() on a vmapped tensor -------------

def _vmap_error(fn_ref, fn_got):
    with pytest.raises(RuntimeError) as e_ref:
        fn_ref()
    with pytest.raises(RuntimeError) as e_got:
        fn_got()
    assert str(e_got.value) == str(e_ref.value)


def test_vmap_batch_norm_training_raises_and_keeps_running_stats():
    from torch.func import functional_call as t_call, vmap as t_vmap
    x = np.random.randn(4, 2, 3).astype(np.float32)
    tbn, fbn = torch.nn.BatchNorm1d(3), fw.nn.BatchNorm1d(3)
    tp = ({k: v for k, v in tbn.named_parameters()}, {k: v for k, v in tbn.named_buffers()})
    fp = ({k: v for k, v in fbn.named_parameters()}, {k: v for k, v in fbn.named_buffers()})
    _vmap_error(lambda: t_vmap(lambda a: t_call(tbn, tp, (a,)))(torch.tensor(x)),
                lambda: fw.func.vmap(lambda a: fw.func.functional_call(fbn, fp, (a,)))(
                    fw.tensor(x)))
    tm = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.BatchNorm1d(3))
    fm = fw.nn.Sequential(fw.nn.Linear(3, 3), fw.nn.BatchNorm1d(3))
    _vmap_error(lambda: t_vmap(tm)(torch.tensor(x)), lambda: fw.func.vmap(fm)(fw.tensor(x)))
    np.testing.assert_array_equal(fm[1].running_mean.numpy(), np.zeros(3, np.float32))
    # instance norm with running stats is refused the same way
    tin = torch.nn.InstanceNorm1d(2, track_running_stats=True)
    fin = fw.nn.InstanceNorm1d(2, track_running_stats=True)
    _vmap_error(lambda: t_vmap(tin)(torch.tensor(x)), lambda: fw.func.vmap(fin)(fw.tensor(x)))
    # eval mode, no running stats, or batched running stats: allowed, per-slice results
    fbn.eval()
    tbn.eval()
    np.testing.assert_allclose(fw.func.vmap(fbn)(fw.tensor(x)).detach().numpy(),
                               t_vmap(tbn)(torch.tensor(x)).detach().numpy(), rtol=1e-5)
    tns = torch.nn.BatchNorm1d(3, track_running_stats=False)
    fns = fw.nn.BatchNorm1d(3, track_running_stats=False)
    np.testing.assert_allclose(fw.func.vmap(fns)(fw.tensor(x)).detach().numpy(),
                               t_vmap(tns)(torch.tensor(x)).detach().numpy(), rtol=1e-4,
                               atol=1e-5)
    rm, rv = np.zeros((4, 3), np.float32), np.ones((4, 3), np.float32)
    tr_m, tr_v = torch.tensor(rm), torch.tensor(rv)
    fr_m, fr_v = fw.tensor(rm), fw.tensor(rv)
    ref = t_vmap(lambda a, m, v: torch.nn.functional.batch_norm(a, m, v, training=True))(
        torch.tensor(x), tr_m, tr_v)
    got = fw.func.vmap(lambda a, m, v: fw.nn.functional.batch_norm(a, m, v, training=True))(
        fw.tensor(x), fr_m, fr_v)
    np.testing.assert_allclose(got.numpy(), ref.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(fr_m.numpy(), tr_m.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(fr_v.numpy(), tr_v.numpy(), rtol=1e-5, atol=1e-6)


def test_vmap_item_and_control_flow_on_a_slice():
    from torch.func import vmap as t_vmap
    y = np.array([0.5, -1.0, 2.0], np.float32)
    ty, fy = torch.tensor(y), fw.tensor(y)
    for fn in (lambda t: t.item(), lambda t: float(t), lambda t: int(t),
               lambda t: t if t else -t):
        _vmap_error(lambda: t_vmap(fn)(ty), lambda: fw.func.vmap(fn)(fy))
    # an unmapped argument is a plain tensor: .item() works, as in PyTorch
    ref = t_vmap(lambda t, z: t * z.item(), in_dims=(0, None))(ty, torch.tensor(2.0))
    got = fw.func.vmap(lambda t, z: t * z.item(), in_dims=(0, None))(fy, fw.tensor(2.0))
    np.testing.assert_array_equal(got.numpy(), ref.numpy())
    assert fy[0].item() == 0.5 and bool(fy[2])     # outside vmap: plain tensors again
