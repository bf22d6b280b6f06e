"""Sparse CSC, BSR and BSC tensors, and CSR with batch/dense dims (framework.sparse.compressed)
against PyTorch: conversions, constructors, accessors, repr, products, gradients."""
import os
import tempfile

import numpy as np
import pytest

import framework as fw

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:Sparse (invariant checks|CSR|CSC|BSR|BSC)")

LAYOUTS = {"csr": (fw.sparse_csr, torch.sparse_csr), "csc": (fw.sparse_csc, torch.sparse_csc),
           "bsr": (fw.sparse_bsr, torch.sparse_bsr), "bsc": (fw.sparse_bsc, torch.sparse_bsc)}
INDEX_NAMES = {"csr": ("crow_indices", "col_indices"), "bsr": ("crow_indices", "col_indices"),
               "csc": ("ccol_indices", "row_indices"), "bsc": ("ccol_indices", "row_indices")}


def fwt(t, device="cpu"):
    return fw.from_numpy(t.detach().numpy().copy()).to(device)


def npy(t):
    return t.detach().cpu().numpy()


def pattern(shape, seed=0, dtype=torch.float64):
    """A dense tensor with about half its elements zero (whole 2 x 2 blocks among them)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g, dtype=dtype)
    keep = torch.rand(shape, generator=g) > 0.5
    x = x * keep
    x[..., :2, 2:4] = 0
    return x


def assert_same(ours, ref, name):
    """Same layout, shape, indices, values and dense form as PyTorch's ``ref``."""
    assert ours.layout is LAYOUTS[name][0]
    assert tuple(ours.shape) == tuple(ref.shape)
    for acc in INDEX_NAMES[name]:
        np.testing.assert_array_equal(npy(getattr(ours, acc)()), getattr(ref, acc)().numpy())
    assert ours._nnz() == ref._nnz()
    assert (ours.dense_dim(), ours.sparse_dim()) == (ref.dense_dim(), ref.sparse_dim())
    np.testing.assert_allclose(npy(ours.values()), ref.values().detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(npy(ours.to_dense()), ref.to_dense().detach().numpy(),
                               rtol=1e-6)


def convert(x, name, blocksize=None, dense_dim=None):
    if name in ("csr", "csc"):
        return getattr(x, f"to_sparse_{name}")(dense_dim=dense_dim)
    return getattr(x, f"to_sparse_{name}")(blocksize, dense_dim)


def test_dense_roundtrip(device):
    _roundtrip(pattern((4, 6)), None, device)


def test_dense_roundtrip_batched_hybrid():
    ref = pattern((4, 6))
    _roundtrip(torch.stack([ref, 2 * ref]), None, "cpu")    # the same nnz in every batch
    _roundtrip(pattern((4, 6, 3)), 1, "cpu")
    _roundtrip(pattern((2, 4, 6, 2)).abs() + 1, 1, "cpu")
    _roundtrip(torch.zeros(4, 6, dtype=torch.float64), None, "cpu")
    _roundtrip(torch.ones(0, 6, dtype=torch.float64), None, "cpu")


def _roundtrip(ref, dense_dim, device):
    x = fwt(ref, device)
    for name, bs in (("csr", None), ("csc", None), ("bsr", (2, 3)), ("bsc", (2, 1))):
        ours = convert(x, name, bs, dense_dim)
        assert ours.device == x.device
        assert_same(ours, convert(ref, name, bs, dense_dim), name)
        lay_fw, lay_t = LAYOUTS[name]
        assert_same(x.to_sparse(layout=lay_fw, blocksize=bs, dense_dim=dense_dim),
                    ref.to_sparse(layout=lay_t, blocksize=bs, dense_dim=dense_dim), name)


def test_dtypes_and_int_values():
    for dt, tdt in ((fw.complex64, torch.complex64), (fw.int32, torch.int32),
                    (fw.bool, torch.bool)):
        ref = (pattern((4, 4)) * 3).to(tdt)
        x = fwt(ref)
        for name, bs in (("csc", None), ("bsr", (2, 2))):
            ours = convert(x, name, bs)
            assert ours.dtype is dt
            assert_same(ours, convert(ref, name, bs), name)


def test_sparse_to_sparse_conversions():
    ref = pattern((4, 6))
    x = fwt(ref)
    tx = {"csr": ref.to_sparse_csr(), "csc": ref.to_sparse_csc(), "coo": ref.to_sparse()}
    ox = {"csr": x.to_sparse_csr(), "csc": x.to_sparse_csc(), "coo": x.to_sparse()}
    for src in ("csr", "csc", "coo"):
        assert_same(ox[src].to_sparse_csr(), tx[src].to_sparse_csr(), "csr")
        assert_same(ox[src].to_sparse_csc(), tx[src].to_sparse_csc(), "csc")
        assert_same(ox[src].to_sparse_bsr((2, 2)), tx[src].to_sparse_bsr((2, 2)), "bsr")
        assert_same(ox[src].to_sparse_bsc((2, 3)), tx[src].to_sparse_bsc((2, 3)), "bsc")
    bsr, tbsr = x.to_sparse_bsr((2, 3)), ref.to_sparse_bsr((2, 3))
    assert_same(bsr.to_sparse_bsc((2, 3)), tbsr.to_sparse_bsc((2, 3)), "bsc")
    assert_same(bsr.to_sparse_bsc((2, 3)).to_sparse_bsr((2, 3)), tbsr, "bsr")
    assert bsr.to_sparse_bsr((2, 3)) is bsr and ox["csc"].to_sparse_csc() is ox["csc"]
    # to COO: blocks become their elements, zeros included, in block order
    for o, t in ((bsr, tbsr), (x.to_sparse_bsc((2, 1)), ref.to_sparse_bsc((2, 1))),
                 (ox["csc"], tx["csc"]), (ox["csr"], tx["csr"])):
        c, tc = o.to_sparse_coo(), t.to_sparse_coo()
        np.testing.assert_array_equal(npy(c._indices()), tc._indices().numpy())
        np.testing.assert_allclose(npy(c._values()), tc._values().numpy())
        assert c.is_coalesced() == tc.is_coalesced()
    # explicit zeros of a CSR survive the reordering to CSC
    tz = torch.sparse_csr_tensor([0, 2, 3], [0, 2, 1], [1., 0., 2.], (2, 3))
    z = fw.sparse_csr_tensor([0, 2, 3], [0, 2, 1], [1., 0., 2.], (2, 3))
    assert_same(z.to_sparse_csc(), tz.to_sparse_csc(), "csc")
    # batched and hybrid
    tb = torch.stack([ref, -ref])
    assert_same(fwt(tb).to_sparse_csr().to_sparse_csc(), tb.to_sparse_csr().to_sparse_csc(),
                "csc")
    c, tc = fwt(tb).to_sparse_csc().to_sparse_coo(), tb.to_sparse_csc().to_sparse_coo()
    np.testing.assert_array_equal(npy(c._indices()), tc._indices().numpy())
    th = pattern((4, 6, 2))
    h = fwt(th)
    assert_same(h.to_sparse(2).to_sparse_csc(), th.to_sparse(2).to_sparse_csc(), "csc")
    assert_same(h.to_sparse_csr(dense_dim=1).to_sparse_bsr((2, 2)),
                th.to_sparse_csr(dense_dim=1).to_sparse_bsr((2, 2)), "bsr")


def _raises_like(fn_fw, fn_torch):
    with pytest.raises(Exception) as want:
        fn_torch()
    with pytest.raises(type(want.value)) as got:
        fn_fw()
    assert str(got.value) == str(want.value).split("\n")[0]


def test_errors_match_pytorch():
    ref = pattern((3, 4))
    x = fwt(ref)
    cases = [
        lambda m, L: m.to_sparse_bsr((2, 2)),
        lambda m, L: m.to_sparse_bsc((2,)),
        lambda m, L: m.to_sparse_bsr((0, 1)),
        lambda m, L: m.to_sparse(layout=L.sparse_bsr),
        lambda m, L: m.to_sparse(layout=L.sparse_csr, blocksize=(3, 1)),
        lambda m, L: m.to_sparse_csc(dense_dim=1),
        lambda m, L: m.to_sparse_csr().to_sparse_bsr((2, 2)),
        lambda m, L: m.to_sparse_bsr((1, 2)).to_sparse_csr(),
        lambda m, L: m.to_sparse_bsr((1, 2)).to_sparse_csc(),
        lambda m, L: m.to_sparse_bsr((1, 2)).to_sparse_bsr((1, 1)),
        lambda m, L: m.to_sparse_bsc((1, 2)).to_sparse_bsr((3, 2)),
        lambda m, L: m.to_sparse_csr().to_sparse(layout=L.sparse_csr, dense_dim=0),
        lambda m, L: m.to_sparse_csr().to_sparse_bsr((1, 2), 1),
        lambda m, L: m.to_sparse_csr().to_sparse(layout=L.sparse_bsr),
        lambda m, L: m.to_sparse().to_sparse_csr(1),
        lambda m, L: m.to_sparse_csc().to_sparse(1),
        lambda m, L: m.to_sparse_csc().crow_indices(),
        lambda m, L: m.to_sparse_csr().row_indices(),
        lambda m, L: m.to_sparse_bsr((1, 1)).ccol_indices(),
        lambda m, L: m.to_sparse_bsc((1, 1)).col_indices(),
        lambda m, L: m.unsqueeze(0).expand(2, 3, 4).to_sparse_csr().t(),
        lambda m, L: m.unsqueeze(0).expand(2, 3, 4).to_sparse_csr().transpose(0, 1),
        lambda m, L: L.stack([m, m * (m > 0)]).to_sparse_bsr((1, 1)),
        lambda m, L: L.stack([m, m]).to_sparse().to_sparse_csc(),
        lambda m, L: L.stack([m, m]).to_sparse_csr().to_sparse_bsr((1, 1)),
        lambda m, L: m.reshape(0, 4, 3).to_sparse_bsc((1, 1)),
        lambda m, L: m.to_sparse(2, layout=L.sparse_coo),
        lambda m, L: m.to_sparse_csr().to_sparse(layout=L.sparse_coo, blocksize=(1, 1)),
        lambda m, L: m.unsqueeze(0).to_sparse().to_sparse(layout=L.sparse_csc,
                                                          blocksize=(1, 1)),
        lambda m, L: m.to_sparse().to_sparse(layout=L.sparse_csc, dense_dim=1),
    ]
    for case in cases:
        _raises_like(lambda: case(x, fw), lambda: case(ref, torch))
    for name in ("csr", "csc"):      # a vector (PyTorch's text depends on the size)
        with pytest.raises(IndexError):
            convert(ref[0], name)
        with pytest.raises(IndexError):
            convert(x[0], name)


def test_constructors():
    for name in ("csr", "csc", "bsr", "bsc"):
        block = name.startswith("b")
        vals = torch.arange(1., 1 + 2 * (6 if block else 1)).reshape((2, 2, 3) if block else 2)
        args = ([0, 1, 2], [1, 0], vals)
        ref = getattr(torch, f"sparse_{name}_tensor")(*args)
        ours = getattr(fw, f"sparse_{name}_tensor")([0, 1, 2], [1, 0], fwt(vals))
        assert_same(ours, ref, name)     # size inferred from the indices and blocks
        size = (4, 6) if block else (2, 3) if name == "csr" else (3, 2)
        ref = torch.sparse_compressed_tensor(*args, size, layout=LAYOUTS[name][1],
                                             dtype=torch.float64)
        ours = fw.sparse_compressed_tensor([0, 1, 2], [1, 0], fwt(vals), size,
                                           layout=LAYOUTS[name][0], dtype=fw.float64)
        assert ours.dtype is fw.float64
        assert_same(ours, ref, name)
    # batched CSC, hybrid CSR, int32 indices kept
    ci, pi = torch.tensor([[0, 1, 2], [0, 0, 2]]), torch.tensor([[1, 0], [0, 1]])
    v = torch.tensor([[1., 2.], [3., 4.]])
    assert_same(fw.sparse_csc_tensor(fwt(ci), fwt(pi), fwt(v)),
                torch.sparse_csc_tensor(ci, pi, v), "csc")
    assert_same(fw.sparse_csr_tensor([0, 1, 2], [1, 0], fwt(v)),
                torch.sparse_csr_tensor([0, 1, 2], [1, 0], v), "csr")
    i32 = fw.sparse_csc_tensor(fw.tensor([0, 1, 2], dtype=fw.int32),
                               fw.tensor([1, 0], dtype=fw.int32), [1., 2.])
    assert i32.ccol_indices().dtype is fw.int32 and i32.row_indices().dtype is fw.int32
    assert_same(i32.to_sparse_csr(), torch.sparse_csc_tensor(
        torch.tensor([0, 1, 2], dtype=torch.int32), torch.tensor([1, 0], dtype=torch.int32),
        [1., 2.]).to_sparse_csr(), "csr")
    assert i32.to_sparse_csr().crow_indices().dtype is fw.int32


def test_constructor_errors_match_pytorch():
    cases = [
        lambda L: L.sparse_bsr_tensor([0, 1, 2], [1, 0], L.ones(2, 2)),
        lambda L: L.sparse_csc_tensor([0, 1, 2], [1, 0], L.tensor(1.)),
        lambda L: L.sparse_csc_tensor([[0, 1, 2]], [1, 0], [1., 2.]),
        lambda L: L.sparse_compressed_tensor([0, 1, 2], [1, 0], [1., 2.]),
        lambda L: L.sparse_compressed_tensor([0, 1], [0], [1.], layout=L.sparse_coo),
        lambda L: L.sparse_csc_tensor([0, 1, 2], [1, 0], [1., 2.], layout=L.sparse_csr),
        lambda L: L.sparse_csc_tensor([0, 1, 2], [1, 0], [1., 2.], (2, 2, 3),
                                      check_invariants=True),
        lambda L: L.sparse_bsr_tensor([0, 1, 2], [1, 0], L.ones(2, 2, 3), (4, 5),
                                      check_invariants=True),
        lambda L: L.sparse_csr_tensor([0, 1, 2], [1, 0], [1, 2], requires_grad=True),
        lambda L: L.sparse_csc_tensor([0, 1, 2], [1, 0], [1., 2.], (3, 3),
                                      check_invariants=True),
        lambda L: L.sparse_csc_tensor([0, 1, 2], [1, 5], [1., 2.], (2, 2),
                                      check_invariants=True),
        lambda L: L.sparse_csr_tensor([1, 1, 2], [1, 0], [1., 2.], (2, 2),
                                      check_invariants=True),
        lambda L: L.sparse_csc_tensor([0, 2, 1], [1, 0], [1., 2.], (2, 2),
                                      check_invariants=True),
        lambda L: L.sparse_csc_tensor([0, 1, 2], [1, 0], [1., 2., 3.], (2, 2),
                                      check_invariants=True),
        lambda L: L.sparse_bsc_tensor([0, 2, 2], [1, 1], L.ones(2, 1, 1), (2, 2),
                                      check_invariants=True),
    ]
    for case in cases:
        _raises_like(lambda: case(fw), lambda: case(torch))


def test_repr(device):
    dense = torch.zeros(4, 3, 1)
    dense[0:2, 0] = dense[0:2, 2] = dense[2:4, 1] = 1
    ref = pattern((2, 4), dtype=torch.float32).round(decimals=2)
    cases = [(ref.to_sparse_csc(), fwt(ref, device).to_sparse_csc()),
             (ref.double().to_sparse_bsr((1, 2)), fwt(ref, device).double().to_sparse_bsr((1, 2))),
             (dense.to_sparse_bsc((2, 1), 1), fwt(dense, device).to_sparse_bsc((2, 1), 1)),
             (torch.stack([ref, ref]).to_sparse_csr(),
              fwt(torch.stack([ref, ref]), device).to_sparse_csr()),
             (ref.to(torch.int32).to_sparse_csc(), fwt(ref, device).to(fw.int32).to_sparse_csc())]
    for t, o in cases:
        text, want = repr(o).replace("framework.", "torch."), repr(t)
        if device == "cpu":
            assert text == want
        else:     # the device suffix moves the line breaks
            dev = f"device='{o.device}',"
            assert dev in text and text.replace(dev, "").split() == want.split()


def test_products(device):
    ref = pattern((4, 6), dtype=torch.float32)
    m = torch.randn(6, 3)
    x, mm = fwt(ref, device), fwt(m, device)
    want = (ref @ m).numpy()
    for name, bs in (("csr", None), ("csc", None), ("bsr", (2, 2)), ("bsc", (2, 3))):
        s = convert(x, name, bs)
        np.testing.assert_allclose(npy(s @ mm), want, rtol=1e-5, atol=1e-5)
        if device != "cpu":    # the same code on both devices: the rest on cpu only
            continue
        np.testing.assert_allclose(npy(fw.mm(s, mm)), want, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(npy(fw.sparse.mm(s, mm)), want, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(npy(s @ mm[:, 0]), want[:, 0], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(npy(mm.t() @ s.t()), want.T, rtol=1e-5, atol=1e-5)
        c = fw.ones(4, 3, device=device)
        np.testing.assert_allclose(npy(fw.sparse.addmm(c, s, mm, beta=2., alpha=3.)),
                                   2 + 3 * want, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(npy(fw.addmm(c, s, mm)), 1 + want, rtol=1e-5, atol=1e-5)
    if device != "cpu":
        return
    for name, bs in (("csr", None), ("csc", None), ("bsr", (2, 2))):
        s, ts = convert(x, name, bs), convert(ref, name, bs)
        assert_same(s * 2, ts * 2, name)
        assert_same(3 * s, 3 * ts, name)
        assert_same(fw.zeros_like(s), torch.zeros_like(ts), name)
        assert float(s.sum()) == pytest.approx(float(ts.sum()), rel=1e-5)
        for case in (lambda a, L: a @ L.ones(3, 3), lambda a, L: L.mm(a, L.ones(5, 2)),
                     lambda a, L: L.sparse.mm(a, L.ones(3, 3)),
                     lambda a, L: a @ L.ones(6, 3, dtype=L.float64),
                     lambda a, L: L.ones(3, 3) @ a, lambda a, L: a @ L.ones(3),
                     lambda a, L: L.addmm(L.ones(4, 3), a, L.ones(3, 3))):
            _raises_like(lambda: case(s, fw), lambda: case(ts, torch))


def test_transpose_clone_detach_to(device):
    ref = pattern((4, 6))
    x = fwt(ref, device)
    assert_same(x.to_sparse_csr().t(), ref.to_sparse_csr().t(), "csc")
    assert_same(x.to_sparse_csc().t(), ref.to_sparse_csc().t(), "csr")
    assert_same(x.to_sparse_csc().transpose(0, 1), ref.to_sparse_csc().transpose(0, 1), "csr")
    # blocks are transposed with the matrix
    assert_same(x.to_sparse_bsr((2, 3)).t(), ref.to_sparse_bsr((2, 3)).t(), "bsc")
    tb = torch.stack([ref, 3 * ref])
    assert_same(fwt(tb, device).to_sparse_csc().mT, tb.to_sparse_csc().mT, "csr")
    assert_same(fwt(tb, device).to_sparse_csr().transpose(1, 2), tb.to_sparse_csr()
                .transpose(1, 2), "csc")
    s = x.to_sparse_bsc((2, 2))
    c = s.clone()
    assert c.values() is not s.values() and c.ccol_indices() is not s.ccol_indices()
    assert_same(c, ref.to_sparse_bsc((2, 2)), "bsc")
    assert_same(s.detach(), ref.to_sparse_bsc((2, 2)), "bsc")
    moved = s.to("cpu").to(fw.float32)
    assert moved.device.type == "cpu" and moved.dtype is fw.float32
    assert moved.values().device.type == "cpu" and moved.row_indices().device.type == "cpu"
    assert_same(moved, ref.float().to_sparse_bsc((2, 2)), "bsc")
    assert s.to(device) is s


def test_gradients(device):
    # to_dense: the gradient of the values is the incoming gradient at the stored entries
    v = fw.tensor([1., 2., 3.], dtype=fw.float64, device=device, requires_grad=True)
    c = fw.sparse_csc_tensor([0, 1, 1, 3], [0, 0, 1], v, (2, 3))
    w = fw.arange(6., dtype=fw.float64, device=device).view(2, 3)
    (c.to_dense() * w).sum().backward()
    np.testing.assert_allclose(npy(v.grad), [0., 2., 5.])
    vb = fw.ones(2, 1, 2, dtype=fw.float64, device=device, requires_grad=True)
    b = fw.sparse_bsr_tensor([0, 1, 2], [0, 1], vb, (2, 4))
    (b.to_dense() * fw.arange(8., dtype=fw.float64, device=device).view(2, 4)).sum() \
        .backward()
    np.testing.assert_allclose(npy(vb.grad).reshape(-1), [0., 1., 6., 7.])
    # dense -> BSC -> dense: a masked gradient, as PyTorch's
    td = torch.tensor([[1., 0, 0], [0, 0, 2.]], dtype=torch.float64, requires_grad=True)
    td.to_sparse_bsc((1, 1)).to_dense().pow(2).sum().backward()
    d = fwt(td, device).requires_grad_()
    d.to_sparse_bsc((1, 1)).to_dense().pow(2).sum().backward()
    np.testing.assert_allclose(npy(d.grad), td.grad.numpy())
    # a product's gradient reaches the values
    vb.grad = None
    (b @ fw.ones(4, 3, dtype=fw.float64, device=device)).sum().backward()
    np.testing.assert_allclose(npy(vb.grad).reshape(-1), [3.] * 4)


def test_as_sparse_gradcheck():
    gradcheck = fw.sparse.as_sparse_gradcheck(fw.autograd.gradcheck)
    x = fw.tensor([[0, 1], [2, 3]], dtype=fw.float64).to_sparse_coo().requires_grad_(True)
    assert gradcheck(lambda x: x.to_sparse_csr(), x) is True
    d = fw.tensor([[0., 1, 0, 2], [3, 0, 0, 4]], dtype=fw.float64)
    for s in (d.detach().to_sparse_csc(), d.detach().to_sparse_bsr((1, 2))):
        assert gradcheck(lambda x: x.to_dense() * 2, s.requires_grad_())
    # the wrapped function is checked: a wrong gradient fails
    bad = fw.sparse.as_sparse_gradcheck(fw.autograd.gradcheck)
    with pytest.raises(Exception):
        bad(lambda x: x.to_dense().detach() + x.to_dense() * 0, d.detach().to_sparse_csc()
            .requires_grad_())


def test_sparse_mask_and_save():
    ref = pattern((4, 6))
    x = fwt(ref)
    other = torch.randn(4, 6, dtype=torch.float64)
    for name, bs in (("csc", None), ("bsr", (2, 3)), ("bsc", (2, 2))):
        mask, tmask = convert(x, name, bs), convert(ref, name, bs)
        assert_same(fwt(other).sparse_mask(mask), other.sparse_mask(tmask), name)
    path = os.path.join(tempfile.mkdtemp(), "s.pt")
    for s in (x.to_sparse_csc(), x.to_sparse_bsr((2, 3)), fwt(torch.stack([ref, ref]))
              .to_sparse_csr()):
        fw.save(s, path)
        t = torch.load(path, weights_only=True)       # PyTorch reads what we write
        assert t.layout is LAYOUTS[s.layout.name[len("sparse_"):]][1]
        np.testing.assert_allclose(t.to_dense().numpy(), npy(s.to_dense()))
        back = fw.load(path)
        assert back.layout is s.layout
        np.testing.assert_allclose(npy(back.to_dense()), npy(s.to_dense()))
