"""Small top-level and Tensor API pieces checked against PyTorch: sym_* helpers, removed
linear-algebra functions, ATen spellings (ger, hash_tensor, grid_sampler, ...), the
SyncBatchNorm pieces, build-info flags and the version/storage/functional modules."""
import math

import numpy as np
import pytest

import framework as fw

torch = pytest.importorskip("torch")


def test_sym_helpers_match_torch():
    cases = [("sym_int", (3.7,)), ("sym_int", (-3.7,)), ("sym_float", (3,)),
             ("sym_max", (2, 3)), ("sym_max", (2.0, 3)), ("sym_min", (1, 2.5)),
             ("sym_min", (4, 2)), ("sym_not", (True,)), ("sym_ite", (False, 1, 2)),
             ("sym_sum", ([1, 2, 3],)), ("sym_sum", (1, 2, 3)), ("sym_sqrt", (4,)),
             ("sym_fresh_size", (5,))]
    for name, args in cases:
        got, want = getattr(fw, name)(*args), getattr(torch, name)(*args)
        assert got == want and type(got) is type(want), (name, args, got, want)
    for name, args, kw in [("sym_max", (fw.ones(1), 2), {}),
                           ("sym_ite", (1, 2, 3), {}), ("sym_ite", (True, 1, 2.0), {}),
                           ("sym_constrain_range", (3,), {"min": 4, "max": 5}),
                           ("sym_constrain_range", (3,), {"max": 2}),
                           ("sym_constrain_range_for_size", (-1,), {})]:
        targs = tuple(torch.ones(1) if isinstance(a, fw.Tensor) else a for a in args)
        with pytest.raises(Exception) as want:
            getattr(torch, name)(*targs, **kw)
        with pytest.raises(type(want.value)) as got:
            getattr(fw, name)(*args, **kw)
        if name != "sym_max":   # the message names the tensor class
            assert str(got.value) == str(want.value)
    assert fw.sym_constrain_range(3, min=1, max=5) is None


def test_removed_linalg_functions_raise_torchs_errors():
    a = fw.randn(3, 3)
    ta = torch.randn(3, 3)
    for name, args in [("eig", ()), ("lstsq", (a,)), ("matrix_rank", ()), ("solve", (a,)),
                       ("symeig", ())]:
        with pytest.raises(RuntimeError) as want:
            getattr(torch, name)(ta, *(ta for _ in args))
        with pytest.raises(RuntimeError) as got:
            getattr(fw, name)(a, *args)
        assert str(got.value) == str(want.value)
        if name != "matrix_rank":   # torch has no Tensor.matrix_rank
            with pytest.raises(RuntimeError, match="deprecated since version 1.9"):
                getattr(a, name)(*args)


def test_ger_addmv_conj_physical_split(device):
    x, y = np.random.randn(3), np.random.randn(4)
    a, b = fw.tensor(x, device=device), fw.tensor(y, device=device)
    np.testing.assert_allclose(fw.ger(a, b).cpu().numpy(), np.outer(x, y), rtol=1e-12)
    np.testing.assert_allclose(a.ger(b).cpu().numpy(), np.outer(x, y), rtol=1e-12)
    m, v, inp = np.random.randn(3, 4), np.random.randn(4), np.random.randn(3)
    t = fw.tensor(inp, device=device)
    out = fw.addmv_(t, fw.tensor(m, device=device), b, beta=0.5, alpha=2.0)
    assert out is t
    np.testing.assert_allclose(t.cpu().numpy(), 0.5 * inp + 2.0 * m @ y, rtol=1e-10)
    c = fw.tensor(x, device=device)
    assert fw.conj_physical_(c) is c
    pieces = fw.unsafe_split_with_sizes(fw.tensor(m, device=device), [1, 2])
    want = torch.unsafe_split_with_sizes(torch.from_numpy(m), [1, 2])
    assert len(pieces) == 2
    for p, w in zip(pieces, want):
        np.testing.assert_array_equal(p.cpu().numpy(), w.numpy())
    assert fw.tensor(m).unsafe_split_with_sizes([3, 1], 1)[1].shape == (3, 1)
    assert not fw.is_distributed(a) and not a.is_distributed()


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int8", "int32", "bool"])
def test_hash_tensor_matches_torch_bits(dtype):
    x = np.random.randn(3, 5) * 50
    tt = torch.from_numpy(x).to(getattr(torch, dtype))
    ft = fw.tensor(tt.to(torch.float64).numpy()).to(getattr(fw, dtype))
    for kwargs in [{}, {"dim": 1}, {"dim": 0, "keepdim": True}, {"dim": (0, 1)}]:
        want = torch.hash_tensor(tt, **kwargs)
        got = fw.hash_tensor(ft, **kwargs)
        # no uint64 in the framework: the same 64 bits come back as int64
        assert got.dtype == fw.int64 and tuple(got.shape) == tuple(want.shape)
        np.testing.assert_array_equal(got.numpy(), want.view(torch.int64).numpy())
    np.testing.assert_array_equal(ft.hash_tensor().numpy(),
                                  tt.hash_tensor().view(torch.int64).numpy())


def test_hash_tensor_errors_and_device(device):
    with pytest.raises(RuntimeError, match="Unknown hash_tensor mode: 1"):
        fw.hash_tensor(fw.ones(2), mode=1)
    with pytest.raises(RuntimeError, match="Expected reduction dim to be specified"):
        fw.hash_tensor(fw.empty(0))
    with pytest.raises(IndexError, match="Expected reduction dim 0 to have non-zero size"):
        fw.hash_tensor(fw.empty(0, 3), dim=0)
    x = torch.randn(7, 3, dtype=torch.float64)
    got = fw.hash_tensor(fw.tensor(x.numpy(), device=device), dim=0)
    np.testing.assert_array_equal(got.cpu().numpy(),
                                  torch.hash_tensor(x, dim=0).view(torch.int64).numpy())


def test_nn_spellings_match_torch(device):
    v = np.random.randn(3, 4, 5)
    for p, d in [(2, 1), (1, 0), (2, -1), (3, 2)]:
        got = fw.norm_except_dim(fw.tensor(v, device=device), p, d)
        want = torch.norm_except_dim(torch.from_numpy(v), p, d)
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-10)
    a, p, n = (np.random.randn(4, 6) for _ in range(3))
    for kw in [{}, {"reduction": 1}, {"reduction": 2, "swap": True, "p": 1.0}]:
        got = fw.triplet_margin_loss(*(fw.tensor(z, device=device) for z in (a, p, n)), **kw)
        want = torch.triplet_margin_loss(*(torch.from_numpy(z) for z in (a, p, n)), **kw)
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-10)
    w = np.random.randn(5, 3) * 3
    fw_w, t_w = fw.tensor(w, device=device), torch.from_numpy(w.copy())
    idx = [0, 2, 2]
    assert fw.embedding_renorm_(fw_w, fw.tensor(idx, device=device), 1.0, 2.0) is fw_w
    torch.embedding_renorm_(t_w, torch.tensor(idx), 1.0, 2.0)
    np.testing.assert_allclose(fw_w.cpu().numpy(), t_w.numpy(), rtol=1e-10)


def test_grid_sampler_and_affine_grid_generator():
    theta = np.random.randn(2, 2, 3) * 0.5
    inp = np.random.randn(2, 3, 4, 5)
    grid = fw.affine_grid_generator(fw.tensor(theta), [2, 3, 3, 4], False)
    tgrid = torch.affine_grid_generator(torch.from_numpy(theta), [2, 3, 3, 4], False)
    np.testing.assert_allclose(grid.numpy(), tgrid.numpy(), rtol=1e-10, atol=1e-12)
    for mode, pad, align in [(0, 0, False), (1, 1, True), (0, 2, True)]:
        got = fw.grid_sampler(fw.tensor(inp), grid, mode, pad, align)
        want = torch.grid_sampler(torch.from_numpy(inp), tgrid, mode, pad, align)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-9, atol=1e-12)


def test_slice_inverse_views_the_base():
    base = fw.arange(10.0)
    s = base[2:8:2]
    inv = fw.slice_inverse(s, base, 0, 2, 8, 2)
    tb = torch.arange(10.0)
    tinv = torch.slice_inverse(tb[2:8:2], tb, 0, 2, 8, 2)
    np.testing.assert_array_equal(inv.numpy(), tinv.numpy())
    inv[0] = 42.0   # a view of the base's storage
    assert base[0].item() == 42.0


def _bn_reference(x, eps):
    dims = (0,) + tuple(range(2, x.ndim))
    mean = x.mean(dims)
    var = x.var(dims)
    return mean, var, 1 / np.sqrt(var + eps), dims


def test_sync_batch_norm_pieces_against_numpy(device):
    eps, mom = 1e-5, 0.1
    parts = [np.random.randn(n, 3, 5) for n in (2, 4)]   # two "processes"
    full = np.concatenate(parts)
    stats = [_bn_reference(p, eps) for p in parts]
    counts = [p.shape[0] * p.shape[2] for p in parts]
    mean = fw.tensor(np.stack([s[0] for s in stats]), device=device)
    invstd = fw.tensor(np.stack([s[2] for s in stats]), device=device)
    rm, rv = fw.zeros(3, device=device, dtype=fw.float64), fw.ones(3, device=device,
                                                                    dtype=fw.float64)
    x = fw.tensor(full, device=device)
    gm, gi = fw.batch_norm_gather_stats_with_counts(x, mean, invstd, rm, rv, mom, eps,
                                                    fw.tensor(counts, device=device))
    wm, wv, wi, dims = _bn_reference(full, eps)
    np.testing.assert_allclose(gm.cpu().numpy(), wm, rtol=1e-10)
    np.testing.assert_allclose(gi.cpu().numpy(), wi, rtol=1e-10)
    n = full.shape[0] * full.shape[2]
    np.testing.assert_allclose(rm.cpu().numpy(), mom * wm, rtol=1e-10)
    np.testing.assert_allclose(rv.cpu().numpy(), (1 - mom) + mom * wv * n / (n - 1),
                               rtol=1e-10)
    # equal counts: batch_norm_gather_stats
    same = [np.random.randn(2, 3, 5) for _ in range(2)]
    st = [_bn_reference(p, eps) for p in same]
    gm2, gi2 = fw.batch_norm_gather_stats(
        x, fw.tensor(np.stack([s[0] for s in st])), fw.tensor(np.stack([s[2] for s in st])),
        None, None, mom, eps, 10)
    np.testing.assert_allclose(gi2.numpy(), _bn_reference(np.concatenate(same), eps)[2],
                               rtol=1e-10)
    # backward: reduce then elemt gives batch norm's input gradient
    dy = np.random.randn(*full.shape)
    w = np.random.randn(3)
    sum_dy, sum_dy_xmu, gw, gb = fw.batch_norm_backward_reduce(
        fw.tensor(dy, device=device), x, gm, gi, fw.tensor(w, device=device), True, True, True)
    xmu = full - wm[None, :, None]
    np.testing.assert_allclose(sum_dy.cpu().numpy(), dy.sum(dims), rtol=1e-10)
    np.testing.assert_allclose(gw.cpu().numpy(), (dy * xmu).sum(dims) * wi, rtol=1e-10)
    np.testing.assert_allclose(gb.cpu().numpy(), dy.sum(dims), rtol=1e-10)
    assert fw.batch_norm_backward_reduce(fw.tensor(dy), fw.tensor(full), gm.cpu(), gi.cpu(),
                                         None, False, False, True)[0] is None
    gx = fw.batch_norm_backward_elemt(fw.tensor(dy, device=device), x, gm, gi,
                                      fw.tensor(w, device=device), sum_dy, sum_dy_xmu,
                                      fw.tensor(counts, device=device, dtype=fw.int32))
    tx = torch.from_numpy(full).requires_grad_()
    torch.nn.functional.batch_norm(tx, None, None, torch.from_numpy(w), None, True, 0.0,
                                   eps).backward(torch.from_numpy(dy))
    np.testing.assert_allclose(gx.cpu().numpy(), tx.grad.numpy(), rtol=1e-8, atol=1e-10)


def test_batch_norm_update_stats_matches_torch():
    x = np.random.randn(4, 3, 5)
    rm, rv = fw.zeros(3, dtype=fw.float64), fw.ones(3, dtype=fw.float64)
    trm, trv = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    got = fw.batch_norm_update_stats(fw.tensor(x), rm, rv, 0.1)
    want = torch.batch_norm_update_stats(torch.from_numpy(x), trm, trv, 0.1)
    for g, w in zip(got + (rm, rv), want + (trm, trv)):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-10)


def test_build_info_and_device_module():
    assert fw.has_lapack and fw.has_spectral and not fw.has_mkl
    assert fw.legacy_contiguous_format is fw.contiguous_format
    assert fw.compiled_with_cxx11_abi() is True
    assert fw.prepare_multiprocessing_environment("x") is None
    assert fw.get_file_path("a", "b").endswith("a/b")
    assert fw.get_device_module("cpu") is fw.cpu
    assert fw.get_device_module(fw.device("cuda")) is fw.cuda
    if fw.cuda.is_available():   # no device: the current accelerator's module
        assert fw.get_device_module() is fw.cuda
    with pytest.raises(RuntimeError, match="Invalid value of device '3'"):
        fw.get_device_module(3)
    assert fw.fork is fw.jit.fork and fw.wait is fw.jit.wait
    assert fw.wait(fw.fork(lambda a: a + 1, 2)) == 3


def test_tensor_storage_type_and_module_load(device):
    t = fw.zeros(2, device=device, dtype=fw.float64)
    want = fw.cuda.DoubleStorage if device == "cuda" else fw.DoubleStorage
    assert t.storage_type() is want
    other = fw.ones(2, device=device, dtype=fw.float64)
    out = t.module_load(other)
    assert out is not t and out is not other and t.tolist() == [1.0, 1.0]
    assert t.module_load(other, assign=True) is not other


def test_dlpack_round_trip():
    x = fw.arange(6.0).reshape(2, 3)
    y = torch.from_dlpack(fw.to_dlpack(x))
    np.testing.assert_array_equal(y.numpy(), x.numpy())
    z = fw.from_dlpack(fw.to_dlpack(x))
    z[0, 0] = 7.0
    assert x[0, 0].item() == 7.0


def test_version_storage_functional_modules():
    import framework.functional as F
    import framework.storage as S
    import framework.torch_version as TV
    import framework.version as V
    from torch.torch_version import TorchVersion
    for a, b in [("2.13.0", "2.1"), ("2.1.0a0", "2.1.0"), ("2.1.0", "2.1.0+cpu"),
                 ("2.1.0", (2, 1)), ("1.10", "1.9.9")]:
        for op in ("__lt__", "__le__", "__gt__", "__ge__", "__eq__"):
            assert getattr(TV.TorchVersion(a), op)(b) == getattr(TorchVersion(a), op)(b), \
                (a, op, b)
    assert isinstance(fw.__version__, str) and fw.__version__ >= (0, 1)
    assert V.__version__ == fw.__version__ and V.cuda is None
    assert S.TypedStorage is fw.TypedStorage and S.UntypedStorage is fw.UntypedStorage
    assert set(F.__all__) == set(torch.functional.__all__)
    assert F.einsum is fw.einsum and all(hasattr(F, n) for n in F.__all__)


def test_dense_sparse_accessors_raise_torchs_errors():
    x, tx = fw.randn(2, 2), torch.randn(2, 2)
    for name in ["indices", "values", "crow_indices", "col_indices", "ccol_indices",
                 "row_indices", "coalesce", "is_coalesced"]:
        with pytest.raises(RuntimeError) as want:
            getattr(tx, name)()
        with pytest.raises(RuntimeError) as got:
            getattr(x, name)()
        assert str(got.value) == str(want.value)
    with pytest.raises(NotImplementedError, match="aten::_nnz"):
        x._nnz()
    assert (x.sparse_dim(), x.dense_dim()) == (tx.sparse_dim(), tx.dense_dim())
    s = x.to_sparse_csr()
    with pytest.raises(RuntimeError, match="expected sparse coordinate tensor layout but got "
                                           "SparseCsr"):
        s.indices()
    assert s.crow_indices().tolist() == [0, 2, 4]
    assert math.isclose(float(x.to_sparse().values().sum()), float(x.sum()), rel_tol=1e-6)
