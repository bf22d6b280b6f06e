"""Tests of the linalg family: products against NumPy float64 (batched, broadcast,
transposed and sliced inputs, empty and K=0 cases, every dtype, 1-d rules), einsum,
decompositions, norms, and every error message against PyTorch's."""
import math
import re

import numpy as np
import pytest

import framework as fw
from helpers import to_np

torch = pytest.importorskip("torch")

DTYPES = [fw.float32, fw.float64, fw.float16, fw.bfloat16, fw.int8, fw.uint8, fw.int16,
          fw.int32, fw.int64]
# relative tolerance of a K-term sum in each dtype, against a float64 reference
RTOL = {fw.float32: 1e-5, fw.float64: 1e-12, fw.float16: 2e-3, fw.bfloat16: 1.6e-2}


def rand(shape, dtype, device, seed=0, layout="contig"):
    """Random values exactly representable in ``dtype``; ``layout`` gives the same values
    as a transposed view ("T"), a view with step-2 columns ("step") or one contiguous."""
    rng = np.random.default_rng(seed)
    if dtype.is_floating_point:
        arr = rng.standard_normal(shape)
        arr = to_np(fw.tensor(arr, dtype=dtype)).astype(np.float64)  # round to dtype
    else:
        lo, hi = (0, 7) if dtype is fw.uint8 else (-6, 7)
        arr = rng.integers(lo, hi, shape).astype(np.float64)
    if layout == "T" and len(shape) >= 2:
        t = fw.tensor(np.ascontiguousarray(np.swapaxes(arr, -1, -2)), dtype=dtype,
                      device=device).mT
    elif layout == "step" and len(shape) >= 1:
        big = np.zeros(shape[:-1] + (2 * shape[-1],))
        big[..., ::2] = arr
        t = fw.tensor(big, dtype=dtype, device=device)[..., ::2]
    else:
        t = fw.tensor(arr, dtype=dtype, device=device)
    return t, arr


def check(got, expect, dtype):
    """Compares with a float64 reference; integer results wrap like the dtype."""
    g = to_np(got).astype(np.float64)
    assert g.shape == np.shape(expect), f"{g.shape} != {np.shape(expect)}"
    assert got.dtype is dtype
    if dtype.is_floating_point:
        scale = max(1.0, float(np.abs(expect).max())) if np.size(expect) else 1.0
        np.testing.assert_allclose(g, expect, rtol=RTOL[dtype], atol=RTOL[dtype] * scale)
    else:
        bits = 8 * dtype.itemsize
        wrapped = np.asarray(expect).astype(np.int64) if bits == 64 else \
            np.asarray(expect).astype(np.int64) % (1 << bits)
        if bits < 64 and dtype.is_signed:
            wrapped = np.where(wrapped >= 1 << (bits - 1), wrapped - (1 << bits), wrapped)
        np.testing.assert_array_equal(g.astype(np.int64), wrapped)


# ---- matmul and friends -------------------------------------------------------------------

MATMUL_SHAPES = [
    ((3, 4), (4, 5)), ((1, 1), (1, 1)), ((7,), (7,)), ((3, 4), (4,)), ((4,), (4, 6)),
    ((2, 3, 4), (4, 5)), ((2, 3, 4), (4,)), ((4,), (2, 4, 3)), ((3, 4), (2, 4, 5)),
    ((2, 1, 3, 4), (5, 4, 2)), ((0, 3, 4), (4, 2)), ((3, 0), (0, 5)), ((0,), (0,)),
    ((2, 3, 0), (2, 0, 4)), ((33, 65), (65, 17)),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES)
def test_matmul_shapes_dtypes(device, dtype, sa, sb):
    a, na = rand(sa, dtype, device, 1)
    b, nb = rand(sb, dtype, device, 2)
    check(fw.matmul(a, b), np.matmul(na, nb), dtype)
    check(a @ b, np.matmul(na, nb), dtype)


@pytest.mark.parametrize("dtype", [fw.float32, fw.float64, fw.float16, fw.int32], ids=str)
@pytest.mark.parametrize("la", ["contig", "T", "step"])
@pytest.mark.parametrize("lb", ["contig", "T", "step"])
def test_matmul_layouts(device, dtype, la, lb):
    a, na = rand((2, 5, 6), dtype, device, 3, la)
    b, nb = rand((6, 7), dtype, device, 4, lb)
    assert la == "contig" or not a.is_contiguous()
    check(fw.matmul(a, b), np.matmul(na, nb), dtype)
    check(fw.mm(a[1], b), na[1] @ nb, dtype)
    check(fw.mv(a[0], b[:, 2]), na[0] @ nb[:, 2], dtype)
    check(fw.dot(a[0, 1], b[:, 3]), na[0, 1] @ nb[:, 3], dtype)


def test_matmul_broadcast_stride0(device):
    a, na = rand((1, 4, 3), fw.float32, device, 5)
    b, nb = rand((3, 2), fw.float32, device, 6)
    ae = a.expand(5, 4, 3)              # batch stride 0
    be = b[None].expand(5, 3, 2)
    check(fw.matmul(ae, be), np.matmul(np.broadcast_to(na, (5, 4, 3)), nb), fw.float32)
    check(fw.bmm(ae, be), np.matmul(np.broadcast_to(na, (5, 4, 3)), nb), fw.float32)


def test_matmul_k_zero_gives_zeros(device):
    a = fw.ones(3, 0, device=device)
    b = fw.ones(0, 4, device=device)
    check(fw.mm(a, b), np.zeros((3, 4)), fw.float32)
    c = fw.full((3, 4), 2.0, device=device)
    check(fw.addmm(c, a, b, beta=3), np.full((3, 4), 6.0), fw.float32)


def test_matmul_large_and_many_small(device):
    a, na = rand((300, 257), fw.float32, device, 7)
    b, nb = rand((257, 190), fw.float32, device, 8)
    check(fw.mm(a, b), na @ nb, fw.float32)
    a, na = rand((200, 3, 5), fw.float64, device, 9, "T")
    b, nb = rand((200, 5, 4), fw.float64, device, 10)
    check(fw.bmm(a, b), np.matmul(na, nb), fw.float64)


def test_int_matmul_wraps(device):
    a = fw.full((2, 40), 100, dtype=fw.int8, device=device)
    b = fw.full((40, 3), 3, dtype=fw.int8, device=device)
    check(fw.mm(a, b), np.full((2, 3), 12000.0), fw.int8)
    big = fw.full((1, 2), 2 ** 62, dtype=fw.int64, device=device)
    two = fw.full((2, 1), 2, dtype=fw.int64, device=device)
    assert fw.mm(big, two).item() == 0  # 2 * 2^62 * 2 wraps to 0 mod 2^64


@pytest.mark.parametrize("dtype", [fw.float32, fw.float64, fw.bfloat16, fw.int64], ids=str)
def test_add_products(device, dtype):
    c, nc = rand((4, 5), dtype, device, 11)
    a, na = rand((4, 3), dtype, device, 12, "T")
    b, nb = rand((3, 5), dtype, device, 13)
    check(fw.addmm(c, a, b), nc + na @ nb, dtype)
    check(fw.addmm(c[0], a, b, beta=2, alpha=3), 2 * nc[0] + 3 * (na @ nb), dtype)
    check(c.addmm(a, b, alpha=2), nc + 2 * (na @ nb), dtype)
    v, nv = rand((3,), dtype, device, 14)
    check(fw.addmv(c[:, 0], a, v, beta=2), 2 * nc[:, 0] + na @ nv, dtype)
    b1, n1 = rand((2, 4, 3), dtype, device, 15)
    b2, n2 = rand((2, 3, 5), dtype, device, 16, "T")
    check(fw.baddbmm(c, b1, b2), nc + np.matmul(n1, n2), dtype)
    check(fw.baddbmm(c, b1, b2, beta=0, alpha=2), 2 * np.matmul(n1, n2), dtype)
    check(fw.addbmm(c, b1, b2, alpha=2), nc + 2 * np.matmul(n1, n2).sum(0), dtype)
    t = c.clone()
    r = t.addmm_(a, b)
    assert r is t
    check(t, nc + na @ nb, dtype)
    t = c[None].clone()
    t.baddbmm_(b1[:1], b2[:1])
    check(t, nc + n1[:1] @ n2[:1], dtype)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        c.clone().baddbmm_(b1, b2)


def test_beta_zero_ignores_nan(device):
    c = fw.full((2, 2), float("nan"), device=device)
    a = fw.ones(2, 3, device=device)
    check(fw.addmm(c, a, a.t(), beta=0), np.full((2, 2), 3.0), fw.float32)


def test_out_argument(device):
    a, na = rand((3, 4), fw.float32, device, 17)
    b, nb = rand((4, 2), fw.float32, device, 18)
    out = fw.empty(0, device=device)
    r = fw.mm(a, b, out=out)
    assert r is out
    check(out, na @ nb, fw.float32)
    out = fw.empty(3, 2, device=device)
    assert fw.matmul(a, b, out=out) is out
    check(out, na @ nb, fw.float32)


def test_vdot_outer_kron_trace_tensordot(device):
    a, na = rand((5,), fw.float32, device, 19)
    b, nb = rand((5,), fw.float32, device, 20, "step")
    check(fw.vdot(a, b), na @ nb, fw.float32)
    i, ni = rand((4,), fw.int64, device, 21)
    check(fw.outer(a, i), np.outer(na, ni), fw.float32)  # promotes like mul
    m, nm = rand((2, 3), fw.float32, device, 22, "T")
    k, nk = rand((3, 1, 2), fw.float32, device, 23)
    check(fw.kron(m, k), np.kron(nm, nk), fw.float32)
    check(fw.trace(m), np.trace(nm), fw.float32)
    mi, nmi = rand((4, 3), fw.int32, device, 24)
    check(fw.trace(mi), np.trace(nmi), fw.int64)
    x, nx = rand((2, 3, 4), fw.float64, device, 25)
    y, ny = rand((4, 3, 5), fw.float64, device, 26, "T")
    check(fw.tensordot(x, y, dims=([1, 2], [1, 0])), np.tensordot(nx, ny, ([1, 2], [1, 0])),
          fw.float64)
    check(fw.tensordot(x, y, dims=0), np.tensordot(nx, ny, 0), fw.float64)


# ---- einsum -------------------------------------------------------------------------------

EINSUM = [
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("ij,jk", [(3, 4), (4, 5)]), ("ba", [(3, 4)]),
    ("ii->i", [(4, 4)]), ("ii", [(4, 4)]), ("i,i->", [(5,), (5,)]), ("i,j->ij", [(3,), (4,)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("bij,bjk->bik", [(1, 3, 4), (2, 4, 5)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]), ("i...->...", [(2, 3, 4)]),
    ("...i,...i->...", [(2, 1, 3), (4, 3)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ijk,ikl->", [(2, 3, 4), (2, 4, 5)]), ("iij,jk->ik", [(3, 3, 4), (4, 2)]),
    ("ij,kj->ikj", [(2, 3), (4, 3)]), ("Ab,bc->cA", [(2, 3), (3, 4)]), ("ij,j->i", [(2, 3), (1,)]),
    ("ijk->kji", [(2, 3, 4)]), ("ij->", [(0, 3)]),
]


@pytest.mark.parametrize("eq,shapes", EINSUM)
@pytest.mark.parametrize("dtype", [fw.float64, fw.int64], ids=str)
def test_einsum(device, eq, shapes, dtype):
    ts, ns = zip(*[rand(s, dtype, device, 30 + i, "T" if i == 1 else "contig")
                   for i, s in enumerate(shapes)])
    got = fw.einsum(eq, *ts)
    check(got, np.einsum(eq, *ns), dtype)
    ref = torch.einsum(eq, *[torch.from_numpy(n.astype(np.int64 if dtype is fw.int64 else
                                                         np.float64)) for n in ns])
    assert got.shape == tuple(ref.shape)


def test_einsum_list_and_int_promotion(device):
    a, na = rand((2, 3), fw.int32, device, 40)
    b, nb = rand((3, 4), fw.int32, device, 41)
    check(fw.einsum("ij,jk", [a, b]), na @ nb, fw.int32)
    check(fw.einsum("ij->i", a), na.sum(1), fw.int64)  # a plain sum promotes, as torch
    check(fw.einsum("ii->i", fw.ones(3, 3, dtype=fw.int32, device=device)), np.ones(3), fw.int32)


# ---- decompositions and norms -------------------------------------------------------------

def spd(n, batch=(), seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


@pytest.mark.parametrize("dtype", [fw.float32, fw.float64], ids=str)
def test_decompositions(device, dtype):
    tol = 1e-4 if dtype is fw.float32 else 1e-10
    a = spd(4, (2,), 1)
    ta = fw.tensor(a, dtype=dtype, device=device)
    np.testing.assert_allclose(to_np(fw.linalg.inv(ta)), np.linalg.inv(a), rtol=tol, atol=tol)
    np.testing.assert_allclose(to_np(fw.inverse(ta)), np.linalg.inv(a), rtol=tol, atol=tol)
    np.testing.assert_allclose(to_np(fw.linalg.det(ta)), np.linalg.det(a), rtol=tol)
    np.testing.assert_allclose(to_np(ta.det()), np.linalg.det(a), rtol=tol)
    b = np.random.default_rng(2).standard_normal((2, 4, 3))
    tb = fw.tensor(b, dtype=dtype, device=device)
    np.testing.assert_allclose(to_np(fw.linalg.solve(ta, tb)), np.linalg.solve(a, b), rtol=tol,
                               atol=tol)
    np.testing.assert_allclose(to_np(fw.linalg.solve(ta, tb[:, :, 0])),
                               np.linalg.solve(a, b[:, :, :1])[..., 0], rtol=tol, atol=tol)
    xl = to_np(fw.linalg.solve(ta, tb.mT, left=False))
    np.testing.assert_allclose(np.matmul(xl, a), np.swapaxes(b, -1, -2), rtol=tol, atol=tol)
    L = fw.linalg.cholesky(ta)
    np.testing.assert_allclose(to_np(L), np.linalg.cholesky(a), rtol=tol, atol=tol)
    U = fw.linalg.cholesky(ta, upper=True)
    np.testing.assert_allclose(to_np(U.mT @ U), a, rtol=tol, atol=tol * 10)
    w, v = fw.linalg.eigh(ta)
    np.testing.assert_allclose(to_np(w), np.linalg.eigvalsh(a), rtol=tol)
    np.testing.assert_allclose(to_np((v * w.unsqueeze(1)) @ v.mT), a, rtol=tol, atol=tol * 10)
    q, r = fw.linalg.qr(tb)
    assert q.shape == (2, 4, 3) and r.shape == (2, 3, 3)
    np.testing.assert_allclose(to_np(q @ r), b, rtol=tol, atol=tol)
    q, r = fw.linalg.qr(tb, mode="complete")
    assert q.shape == (2, 4, 4)
    u, s, vh = fw.linalg.svd(tb, full_matrices=False)
    np.testing.assert_allclose(to_np(s), np.linalg.svd(b, compute_uv=False), rtol=tol)
    np.testing.assert_allclose(to_np((u * s.unsqueeze(1)) @ vh), b, rtol=tol, atol=tol)
    u, s, v = fw.svd(tb[0])
    np.testing.assert_allclose(to_np((u * s) @ v.mT), b[0], rtol=tol, atol=tol)
    # the default driver (gelsy) returns no residuals, as PyTorch's
    sol = fw.linalg.lstsq(tb, ta[:, :, :2], driver="gelsd")
    ref = np.linalg.lstsq(b[0], a[0, :, :2], rcond=None)
    np.testing.assert_allclose(to_np(sol.solution[0]), ref[0], rtol=tol * 10, atol=tol * 10)
    np.testing.assert_allclose(to_np(sol.residuals[0]), ref[1], rtol=tol * 10, atol=tol * 10)
    assert sol.rank.tolist() == [3, 3]


@pytest.mark.parametrize("ord", [2, 1, 0, 3, 0.5, math.inf, -math.inf])
def test_vector_norm(device, ord):
    a = np.random.default_rng(3).standard_normal((3, 4, 5))
    a[0, 0, 0] = 0.0
    t = fw.tensor(a, dtype=fw.float64, device=device)[:, ::2]
    ref = torch.linalg.vector_norm(torch.from_numpy(a[:, ::2]), ord=ord, dim=(0, 2),
                                   keepdim=True)
    got = fw.linalg.vector_norm(t, ord=ord, dim=(0, 2), keepdim=True)
    np.testing.assert_allclose(to_np(got), ref.numpy(), rtol=1e-12)
    full = fw.linalg.vector_norm(t, ord=ord)
    assert full.shape == ()
    np.testing.assert_allclose(full.item(), torch.linalg.vector_norm(
        torch.from_numpy(a[:, ::2]), ord=ord).item(), rtol=1e-12)


@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf])
def test_matrix_norm_and_norm(device, ord):
    a = np.random.default_rng(4).standard_normal((2, 3, 4))
    t = fw.tensor(a, dtype=fw.float32, device=device)
    ta = torch.from_numpy(a.astype(np.float32))
    got = fw.linalg.matrix_norm(t, ord=ord, dim=(0, 2), keepdim=True)
    ref = torch.linalg.matrix_norm(ta, ord=ord, dim=(0, 2), keepdim=True)
    assert got.dtype is fw.float32 and got.shape == tuple(ref.shape)
    np.testing.assert_allclose(to_np(got), ref.numpy(), rtol=1e-5)
    np.testing.assert_allclose(to_np(fw.linalg.norm(t[0], ord=ord)),
                               torch.linalg.norm(ta[0], ord=ord).numpy(), rtol=1e-5)
    np.testing.assert_allclose(to_np(fw.linalg.norm(t)), torch.linalg.norm(ta).numpy(),
                               rtol=1e-5)


# ---- errors: the same call in framework and torch raises the same type and message ----

ERRORS = [
    "m.mm(m.ones(4, 3), m.ones(5, 2))",
    "m.mm(m.ones(4, 3), m.ones(3, 2, dtype=m.float64))",
    "m.mm(m.ones(4, 3, dtype=m.int64), m.ones(3, 2))",
    "m.mm(m.ones(4), m.ones(4, 2))",
    "m.mm(m.ones(4, 3), m.ones(3))",
    "m.mm(m.ones(2, 3), 3)",
    "m.mm(m.ones(3, 4, dtype=m.bool), m.ones(4, 2, dtype=m.bool))",
    "m.mm(m.ones(2, 3), m.ones(3, 2), out=m.empty(2, 2, dtype=m.float64))",
    "m.bmm(m.ones(2, 4, 3), m.ones(2, 5, 2))",
    "m.bmm(m.ones(4, 3), m.ones(2, 3, 2))",
    "m.bmm(m.ones(2, 4, 3), m.ones(3, 2))",
    "m.bmm(m.ones(2, 4, 3), m.ones(2, 3, 2, dtype=m.float64))",
    "m.bmm(m.ones(2, 4, 3, dtype=m.bool), m.ones(2, 3, 2, dtype=m.bool))",
    "m.mv(m.ones(4, 3), m.ones(5))",
    "m.mv(m.ones(4), m.ones(4))",
    "m.mv(m.ones(4, 3), m.ones(3, 1))",
    "m.mv(m.ones(4, 3), m.ones(3, dtype=m.float64))",
    "m.dot(m.ones(4), m.ones(5))",
    "m.dot(m.ones(4, 1), m.ones(4))",
    "m.dot(m.ones(4), m.ones(4, dtype=m.float64))",
    "m.dot(m.ones(4, dtype=m.bool), m.ones(4, dtype=m.bool))",
    "m.vdot(m.ones(4), m.ones(5))",
    "m.matmul(m.ones(4, 3), m.ones(5, 2))",
    "m.matmul(m.ones(3), m.ones(4))",
    "m.matmul(m.ones(2, 4, 3), m.ones(5, 2))",
    "m.matmul(m.ones(2, 4, 3), m.ones(3, 3, 2))",
    "m.matmul(m.ones(()), m.ones(3))",
    "m.matmul(m.ones(3), m.ones(()))",
    "m.matmul(m.ones(4, 3), m.ones(3, dtype=m.float64))",
    "m.matmul(m.ones(2, 4, 3), m.ones(2, 3, 2, dtype=m.float64))",
    "m.matmul(m.ones(5, 4, 3), m.ones(4))",
    "m.matmul(m.ones(4), m.ones(5, 3, 2))",
    "m.matmul(m.ones(2, 3), m.ones(5, 4, 2))",
    "m.matmul(m.ones(2, 3), 3)",
    "m.matmul(m.ones(2, 3), m.ones(3, 2), out=m.empty(2, 2, dtype=m.int64))",
    "m.outer(m.ones(4, 1), m.ones(3))",
    "m.addmm(m.ones(4, 2), m.ones(4, 3), m.ones(5, 2))",
    "m.addmm(m.ones(3, 2), m.ones(4, 3), m.ones(3, 2))",
    "m.addmm(m.ones(4, 2, dtype=m.float64), m.ones(4, 3), m.ones(3, 2))",
    "m.addmv(m.ones(3), m.ones(4, 3), m.ones(3))",
    "m.addmv(m.ones(4, dtype=m.float64), m.ones(4, 3), m.ones(3))",
    "m.addbmm(m.ones(4, 2), m.ones(2, 4, 3), m.ones(3, 3, 2))",
    "m.addbmm(m.ones(4, 2), m.ones(2, 4, 3), m.ones(2, 3, 2, dtype=m.float64))",
    "m.baddbmm(m.ones(3, 4, 2), m.ones(2, 4, 3), m.ones(2, 3, 2))",
    "m.baddbmm(m.ones(4, 2), m.ones(2, 4, 3), m.ones(2, 3, 2, dtype=m.float64))",
    "m.baddbmm(m.ones(4, 2, dtype=m.float64), m.ones(2, 4, 3), m.ones(2, 3, 2))",
    "m.trace(m.ones(3))",
    "m.trace(m.ones(3, 4, dtype=m.bool))",
    "m.tensordot(m.ones(2, 3, 4), m.ones(3, 4, 5), dims=([1], [1]))",
    "m.tensordot(m.ones(2, 3, 4), m.ones(3, 4, 5), dims=-1)",
    "m.tensordot(m.ones(2, 3, 4), m.ones(3, 4, 5), dims=4)",
    "m.tensordot(m.ones(2, 3, 4), m.ones(3, 4, 5), dims=([1, 2], [0]))",
    "m.tensordot(m.ones(2, 3, 4), m.ones(3, 4, 5, dtype=m.float64), dims=2)",
    "m.einsum('ij,jk->ik', m.ones(2, 3), m.ones(4, 5))",
    "m.einsum('ij,jk', m.ones(2, 3))",
    "m.einsum('ij->', m.ones(2, 3), m.ones(3))",
    "m.einsum('ij->ijk', m.ones(2, 3))",
    "m.einsum('ii->i', m.ones(2, 3))",
    "m.einsum('ij,jk->ik', m.ones(2, 3), m.ones(3, 5, dtype=m.float64))",
    "m.einsum('ijk', m.ones(2, 3))",
    "m.einsum('i,i->ii', m.ones(3), m.ones(3))",
    "m.einsum('1->', m.ones(3))",
    "m.einsum('a.b', m.ones(2, 3))",
    "m.einsum('i->i->i', m.ones(2))",
    "m.einsum('ij,ij->', m.ones(3, 4, dtype=m.bool), m.ones(3, 4, dtype=m.bool))",
    "m.linalg.vector_norm(m.ones(3, dtype=m.int64))",
    "m.linalg.vector_norm(m.ones(3, 3), dim=(0, 0))",
    "m.linalg.vector_norm(m.ones(0), ord=float('inf'))",
    "m.linalg.vector_norm(m.ones(3, 3), ord='fro')",
    "m.linalg.norm(m.ones(3, dtype=m.int64))",
    "m.linalg.norm(m.ones(3, 3, 3), ord=2)",
    "m.linalg.norm(m.ones(3, 3), ord='nuc', dim=0)",
    "m.linalg.matrix_norm(m.ones(3))",
    "m.linalg.matrix_norm(m.ones(3, 3), ord=3)",
    "m.linalg.matrix_norm(m.ones(2, 3, 3), dim=(0, 0))",
    "m.linalg.vecdot(m.ones(3), m.ones(3, dtype=m.float64))",
    "m.linalg.vecdot(m.ones(3, dtype=m.int32), m.ones(3, dtype=m.int32))",
    "m.linalg.solve(m.ones(3, 3), m.ones(3))",
    "m.linalg.solve(m.ones(2, 2, 2), m.ones(2, 2))",
    "m.linalg.solve(m.ones(3, 4), m.ones(3))",
    "m.linalg.solve(m.eye(3), m.ones(4))",
    "m.linalg.inv(m.ones(3, 3))",
    "m.linalg.inv(m.ones(3, 4))",
    "m.linalg.inv(m.ones(3, 3, dtype=m.int64))",
    "m.linalg.inv(m.ones(3, 3, dtype=m.float16))",
    "m.linalg.inv(m.ones(3))",
    "m.inverse(m.ones(2, 2, 2))",
    "m.linalg.det(m.ones(3, 4))",
    "m.det(m.ones(3, 3, dtype=m.int64))",
    "m.linalg.det(m.ones(3, 3, dtype=m.float16))",
    "m.linalg.cholesky(m.ones(3, 3) - m.eye(3) * 2)",
    "m.linalg.cholesky(m.ones(2, 3, 3) - m.eye(3) * 2)",
    "m.linalg.cholesky(m.ones(3, 3, dtype=m.float16))",
    "m.linalg.eigh(m.ones(3, 4))",
    "m.linalg.svd(m.ones(3))",
    "m.linalg.svd(m.ones(3, 3, dtype=m.float16))",
    "m.linalg.lstsq(m.ones(3, 2), m.ones(4, 1))",
    "m.linalg.qr(m.ones(3, 2), mode='bad')",
    "m.linalg.multi_dot([m.ones(2, 3)])",
    "m.linalg.multi_dot([m.ones(2, 3), m.ones(4, 4)])",
    "m.linalg.multi_dot([m.ones(2, 3, 3), m.ones(3, 4)])",
    "m.linalg.multi_dot([m.ones(2, 3), m.ones(3, 4, dtype=m.float64)])",
    "m.linalg.matrix_power(m.ones(3, 4), 3)",
    "m.linalg.matrix_power(m.eye(3, dtype=m.int64), -1)",
    "m.linalg.matrix_rank(m.ones(3, 2), hermitian=True)",
    "m.linalg.solve_triangular(m.eye(3), m.ones(3), upper=True)",
    "m.linalg.solve_triangular(m.eye(3), m.ones(4, 2), upper=True)",
]


def _error(m, expr, a=None, b=None):
    """The exception ``expr`` raises with module ``m`` (or its value if none)."""
    try:
        return eval(expr, {"m": m, "a": a, "b": b})
    except Exception as e:  # noqa: BLE001 - the type is what the test compares
        return e


@pytest.mark.parametrize("expr", ERRORS)
def test_errors_match_torch(expr):
    ref = _error(torch, expr)
    got = _error(fw, expr)
    assert isinstance(ref, Exception), "torch accepted " + expr
    assert isinstance(got, Exception), "framework accepted " + expr
    assert str(got).split("\n")[0] == str(ref).split("\n")[0]
    kinds = (NotImplementedError, TypeError, RuntimeError)
    assert next(k for k in kinds if isinstance(ref, k)) is next(k for k in kinds
                                                               if isinstance(got, k))
    if isinstance(ref, torch.linalg.LinAlgError):
        assert isinstance(got, fw.linalg.LinAlgError)


def test_more_lapack(device):
    a = spd(4, (2,), 5)
    ta = fw.tensor(a, dtype=fw.float64, device=device)
    sign, logabs = fw.linalg.slogdet(-ta)
    ref = np.linalg.slogdet(-a)
    np.testing.assert_allclose(to_np(sign), ref[0])
    np.testing.assert_allclose(to_np(logabs), ref[1], rtol=1e-12)
    assert math.isnan(fw.logdet(fw.tensor(-spd(3), device=device)).item())  # det < 0
    r = np.random.default_rng(6).standard_normal((2, 5, 3))
    tr = fw.tensor(r, dtype=fw.float64, device=device)
    np.testing.assert_allclose(to_np(fw.linalg.pinv(tr)), np.linalg.pinv(r), rtol=1e-10,
                               atol=1e-12)
    np.testing.assert_allclose(to_np(fw.linalg.svdvals(tr)), np.linalg.svd(r, compute_uv=False))
    np.testing.assert_allclose(to_np(fw.linalg.eigvalsh(ta, UPLO="U")), np.linalg.eigvalsh(a))
    low = r[0] @ r[0].T  # rank 3 of 5
    assert fw.linalg.matrix_rank(fw.tensor(low, device=device)).item() == 3
    assert fw.linalg.matrix_rank(fw.tensor(low, device=device), hermitian=True).item() == 3
    b = np.random.default_rng(7).standard_normal((2, 4, 3))
    tb = fw.tensor(b, dtype=fw.float64, device=device)
    for upper in (True, False):
        t = np.triu(a) if upper else np.tril(a)
        x = fw.linalg.solve_triangular(ta, tb, upper=upper)
        np.testing.assert_allclose(to_np(x), np.linalg.solve(t, b), rtol=1e-10)
        x = fw.linalg.solve_triangular(ta, tb.mT, upper=upper, left=False)
        np.testing.assert_allclose(to_np(x) @ t, np.swapaxes(b, -1, -2), rtol=1e-10,
                                   atol=1e-12)
        u = t - np.einsum("...ii->...i", t)[..., None] * np.eye(4) + np.eye(4)
        x = fw.linalg.solve_triangular(ta, tb, upper=upper, unitriangular=True)
        np.testing.assert_allclose(to_np(x), np.linalg.solve(u, b), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("n", [0, 1, 2, 5, -2])
def test_matrix_power(device, n):
    a = spd(3, (2,), 8) / 4
    got = fw.linalg.matrix_power(fw.tensor(a, device=device), n)
    ref = np.stack([np.linalg.matrix_power(m, n) for m in a])
    np.testing.assert_allclose(to_np(got), ref, rtol=1e-4, atol=1e-5)
    i = fw.tensor([[1, 1], [1, 0]], dtype=fw.int64, device=device)
    assert fw.matrix_power(i, 10).tolist() == [[89, 55], [55, 34]]


def test_multi_dot_order_and_vectors(device):
    a, na = rand((30,), fw.float64, device, 50)
    b, nb = rand((30, 2), fw.float64, device, 51, "T")
    c, nc = rand((2, 40), fw.float64, device, 52)
    d, nd = rand((40,), fw.float64, device, 53)
    check(fw.linalg.multi_dot([a, b, c, d]), na @ nb @ nc @ nd, fw.float64)
    check(fw.linalg.multi_dot([b, c]), nb @ nc, fw.float64)


def test_tuple_out(device):
    a = fw.tensor(spd(3, (), 9), device=device)
    w, v = fw.empty(0, device=device), fw.empty(0, device=device)
    r = fw.linalg.eigh(a, out=(w, v))
    assert r.eigenvalues is w and r[1] is v
    np.testing.assert_allclose(to_np(w), np.linalg.eigvalsh(spd(3, (), 9)), rtol=1e-5)
    u, s, vt = fw.svd(a, compute_uv=False)
    assert u.shape == (3, 3) and to_np(u).max() == 0 and to_np(vt).max() == 0


def _random_equation(rng):
    """A random einsum equation over 1-3 operands with repeated, shared, summed and
    broadcast (size-1) subscripts, and sizes for each label."""
    letters = "abcdeF"
    sizes = {c: int(rng.integers(1, 4)) for c in letters}
    n_ops = int(rng.integers(1, 4))
    terms, shapes = [], []
    for _ in range(n_ops):
        k = int(rng.integers(0, 4))
        term = "".join(rng.choice(list(letters), k))
        terms.append(term)
        shapes.append(tuple(1 if rng.random() < 0.15 else sizes[c] for c in term))
    # repeated subscripts within a term must have equal sizes
    shapes = [tuple(sizes[c] if term.count(c) > 1 else s for c, s in zip(term, shp))
              for term, shp in zip(terms, shapes)]
    used = sorted(set("".join(terms)))
    out = "".join(c for c in used if rng.random() < 0.5)
    return ",".join(terms) + "->" + out, shapes


@pytest.mark.parametrize("seed", range(40))
def test_einsum_random(device, seed):
    rng = np.random.default_rng(seed)
    eq, shapes = _random_equation(rng)
    arrs = [rng.integers(-3, 4, s).astype(np.float64) for s in shapes]
    ts = [fw.tensor(a, device=device).mT if a.ndim >= 2 and i % 2 else
          fw.tensor(a, device=device) for i, a in enumerate(arrs)]
    # the transposed operands need the transposed subscripts
    terms = eq.split("->")[0].split(",")
    terms = [t[:-2] + t[-1] + t[-2] if len(t) >= 2 and i % 2 else t for i, t in enumerate(terms)]
    eq2 = ",".join(terms) + "->" + eq.split("->")[1]
    ref = torch.einsum(eq2, *[torch.from_numpy(np.array(t.cpu().numpy())) for t in ts])
    check(fw.einsum(eq2, *ts), ref.numpy(), fw.float64)


@pytest.mark.parametrize("seed", range(8))
def test_matmul_random_against_torch(seed):
    """Random ranks 1-4, sizes 0-3 (often mismatched), some transposed operands: the same
    shape, values, or error message as torch.matmul (whose folding rules decide which)."""
    rng = np.random.default_rng(seed)
    for _ in range(60):
        da, db = rng.integers(1, 5, 2)
        sa, sb = list(rng.integers(0, 4, da)), list(rng.integers(0, 4, db))
        if rng.random() < 0.7:
            sb[0 if db == 1 else -2] = sa[-1]
        ta = torch.from_numpy(rng.integers(-3, 4, sa).astype(np.float32))
        tb = torch.from_numpy(rng.integers(-3, 4, sb).astype(np.float32))
        if rng.random() < 0.3 and da >= 2:
            ta = ta.mT.contiguous().mT
        fa, fb = fw.from_numpy(ta.numpy()), fw.from_numpy(tb.numpy())
        assert fa.stride() == ta.stride()
        ref, got = _error(torch, "m.matmul(a, b)", ta, tb), _error(fw, "m.matmul(a, b)", fa, fb)
        if isinstance(ref, Exception):
            assert str(got) == str(ref).split("\n")[0], (sa, sb)
        else:
            assert got.shape == tuple(ref.shape), (sa, sb)
            np.testing.assert_array_equal(got.numpy(), ref.numpy())


# ---- bad inputs, judged against PyTorch --------------------------------------------------

nan, inf = math.nan, math.inf
NOT_PD = "The factorization could not be completed because the input is not positive-definite"


def _with(m, d, i, j, v, base=((4., 1., 0.), (1., 4., 1.), (0., 1., 4.))):
    """A 3x3 symmetric positive-definite matrix with entry (i, j) replaced by v."""
    rows = [list(r) for r in base]
    rows[i][j] = v
    return m.tensor(rows, device=d)


def _sq(m, d, rows):
    return m.tensor(rows, device=d)


LINALG_CASES = [
    ("cholesky_nan", lambda m, d: m.linalg.cholesky(_with(m, d, 0, 0, nan)),
     "(the leading minor of order 1 is not positive-definite)"),
    ("cholesky_inf", lambda m, d: m.linalg.cholesky(_with(m, d, 0, 0, inf)),
     "leading minor of order 2"),
    ("cholesky_neg_inf", lambda m, d: m.linalg.cholesky(_with(m, d, 0, 0, -inf)),
     "leading minor of order 1"),
    ("cholesky_mid_nan", lambda m, d: m.linalg.cholesky(_with(m, d, 1, 1, nan)),
     "leading minor of order 2"),
    ("cholesky_mid_inf", lambda m, d: m.linalg.cholesky(_with(m, d, 1, 1, inf)),
     "leading minor of order 3"),
    ("cholesky_last_nan", lambda m, d: m.linalg.cholesky(_with(m, d, 2, 2, nan)),
     "leading minor of order 3"),
    ("cholesky_offdiag_nan", lambda m, d: m.linalg.cholesky(_with(m, d, 2, 0, nan)),
     "leading minor of order 3"),
    ("cholesky_offdiag_inf", lambda m, d: m.linalg.cholesky(_with(m, d, 1, 0, inf)),
     "leading minor of order 2"),
    ("cholesky_upper_nan_ignored", lambda m, d: m.linalg.cholesky(
        _sq(m, d, [[1.0, nan], [0.0, 1.0]])), None),
    ("cholesky_not_pd", lambda m, d: m.linalg.cholesky(_sq(m, d, [[1.0, 2.0], [2.0, 1.0]])),
     NOT_PD + " (the leading minor of order 2"),
    ("cholesky_batch", lambda m, d: m.linalg.cholesky(
        _sq(m, d, [[[1.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [2.0, 1.0]]])), "(Batch element 1)"),
    ("cholesky_zero", lambda m, d: m.linalg.cholesky(m.zeros(2, 2, device=d)),
     "leading minor of order 1"),
    ("cholesky_int", lambda m, d: m.linalg.cholesky(_sq(m, d, [[1, 0], [0, 1]])),
     "Expected a floating point or complex tensor as input. Got Long"),
    ("cholesky_not_square", lambda m, d: m.linalg.cholesky(m.ones(2, 3, device=d)),
     "A must be batches of square matrices, but they are 2 by 3 matrices"),
    ("cholesky_1d", lambda m, d: m.linalg.cholesky(m.ones(3, device=d)),
     "The input tensor A must have at least 2 dimensions."),
    ("cholesky_empty", lambda m, d: m.linalg.cholesky(m.zeros(2, 0, 0, device=d)).shape, None),
    ("cholesky_upper_str", lambda m, d: m.linalg.cholesky(m.eye(2, device=d), upper="x"),
     "argument 'upper' must be bool, not str"),
    ("inv_singular", lambda m, d: m.linalg.inv(_sq(m, d, [[1.0, 2.0], [2.0, 4.0]])),
     "The diagonal element 2 is zero, the inversion could not be completed because the input "
     "matrix is singular."),
    ("inv_batch_singular", lambda m, d: m.linalg.inv(
        _sq(m, d, [[[1.0, 0.0], [0.0, 1.0]], [[0.0, 0.0], [0.0, 0.0]]])),
     "(Batch element 1): The diagonal element 1 is zero"),
    ("inv_nan", lambda m, d: m.linalg.inv(_with(m, d, 2, 2, nan)), None),
    ("inv_nan_batch", lambda m, d: m.linalg.inv(
        _sq(m, d, [[[1.0, 0.0], [0.0, 1.0]], [[nan, 0.0], [0.0, 1.0]]])), None),
    ("inv_not_square", lambda m, d: m.linalg.inv(m.ones(2, 3, device=d)), "2 by 3 matrices"),
    ("inv_int", lambda m, d: m.linalg.inv(_sq(m, d, [[1, 0], [0, 1]])), "Got Long"),
    ("inv_empty", lambda m, d: m.linalg.inv(m.zeros(3, 0, 0, device=d)).shape, None),
    ("inv_list", lambda m, d: m.linalg.inv([[1.0, 0.0], [0.0, 1.0]]), "must be Tensor, not list"),
    ("solve_singular", lambda m, d: m.linalg.solve(m.zeros(2, 2, device=d), m.ones(2, device=d)),
     "torch.linalg.solve: The solver failed because the input matrix is singular."),
    ("solve_nan", lambda m, d: m.linalg.solve(_with(m, d, 0, 1, nan), m.ones(3, device=d)), None),
    ("solve_b_0d", lambda m, d: m.linalg.solve(m.eye(2, device=d), m.tensor(1.0, device=d)),
     "linalg.solve: The input tensor B must have at least 2 dimensions."),
    ("solve_shapes", lambda m, d: m.linalg.solve(m.eye(2, device=d), m.ones(3, device=d)),
     "Incompatible shapes of A and B for the equation AX = B"),
    ("solve_dtypes", lambda m, d: m.linalg.solve(m.eye(2, device=d),
                                                 m.ones(2, dtype=m.float64, device=d)),
     "Expected A and B to have the same dtype"),
    ("solve_not_square", lambda m, d: m.linalg.solve(m.ones(2, 3, device=d), m.ones(2, device=d)),
     "2 by 3 matrices"),
    ("solve_half", lambda m, d: m.linalg.solve(m.eye(2, dtype=m.float16, device=d),
                                               m.ones(2, dtype=m.float16, device=d)),
     "\"lu_cpu\" not implemented for 'Half'"),
    ("solve_empty", lambda m, d: m.linalg.solve(m.zeros(0, 0, device=d), m.zeros(0, device=d)),
     None),
    ("eigh_int", lambda m, d: m.linalg.eigh(_sq(m, d, [[1, 0], [0, 1]])),
     "\"linalg_eigh_cpu\" not implemented for 'Long'"),
    ("eigh_half", lambda m, d: m.linalg.eigh(m.eye(2, dtype=m.float16, device=d)),
     "\"linalg_eigh_cpu\" not implemented for 'Half'"),
    ("eigvalsh_int", lambda m, d: m.linalg.eigvalsh(_sq(m, d, [[1, 0], [0, 1]])),
     "not implemented for 'Long'"),
    ("eigh_not_square", lambda m, d: m.linalg.eigh(m.ones(2, 3, device=d)), "2 by 3 matrices"),
    ("eigh_uplo", lambda m, d: m.linalg.eigh(m.eye(2, device=d), UPLO="X"),
     "Expected UPLO argument to be 'L' or 'U', but got X"),
    ("eigh_empty", lambda m, d: m.linalg.eigh(m.zeros(0, 0, device=d)), None),
    ("det_singular", lambda m, d: m.linalg.det(m.zeros(2, 2, device=d)), None),
    ("det_empty", lambda m, d: m.linalg.det(m.zeros(0, 0, device=d)), None),
    ("det_int", lambda m, d: m.linalg.det(_sq(m, d, [[1, 0], [0, 1]])), "Got Long"),
    ("det_not_square", lambda m, d: m.linalg.det(m.ones(2, 3, device=d)), "2 by 3 matrices"),
    ("det_1d", lambda m, d: m.linalg.det(m.ones(3, device=d)), "at least 2 dimensions"),
    ("svd_nan", lambda m, d: m.linalg.svd(_sq(m, d, [[nan, 0.0], [0.0, 1.0]])),
     "linalg.svd: The algorithm failed to converge because the input matrix contained "
     "non-finite values."),
    ("svdvals_nan", lambda m, d: m.linalg.svdvals(_sq(m, d, [[nan, 0.0], [0.0, 1.0]])),
     "contained non-finite values"),
    ("pinv_nan", lambda m, d: m.linalg.pinv(_sq(m, d, [[nan, 0.0], [0.0, 1.0]])),
     "contained non-finite values"),
    ("pinv_1d", lambda m, d: m.linalg.pinv(m.ones(3, device=d)),
     "linalg.pinv(Float{[3]}): expected a tensor with 2 or more dimensions of float, double, "
     "cfloat or cdouble types"),
    ("matrix_rank_nan", lambda m, d: m.linalg.matrix_rank(_sq(m, d, [[nan, 0.0], [0.0, 1.0]])),
     "contained non-finite values"),
    ("matrix_rank_int", lambda m, d: m.linalg.matrix_rank(_sq(m, d, [[1, 0], [0, 1]])),
     "This function doesn't handle types other than float and double"),
    ("matrix_rank_1d", lambda m, d: m.linalg.matrix_rank(m.ones(3, device=d)),
     "torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions."),
    ("lstsq_driver", lambda m, d: m.linalg.lstsq(m.ones(3, 2, device=d), m.ones(3, 1, device=d),
                                                 driver="foo"),
     "torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)"),
    ("lstsq_int", lambda m, d: m.linalg.lstsq(m.ones(3, 2, dtype=m.int64, device=d),
                                              m.ones(3, 1, dtype=m.int64, device=d)),
     "This function doesn't handle types other than float and double"),
    ("lstsq_half", lambda m, d: m.linalg.lstsq(m.ones(3, 2, dtype=m.float16, device=d),
                                               m.ones(3, 1, dtype=m.float16, device=d)),
     "This function doesn't handle types other than float and double"),
    ("lstsq_1d", lambda m, d: m.linalg.lstsq(m.ones(3, device=d), m.ones(3, device=d)),
     "torch.linalg.lstsq: input must have at least 2 dimensions."),
    ("lstsq_dims", lambda m, d: m.linalg.lstsq(m.ones(3, 2, device=d), m.ones(2, 3, 1, device=d)),
     "input.dim() must be greater or equal to other.dim()"),
    ("lstsq_rows_vector", lambda m, d: m.linalg.lstsq(m.ones(3, 2, device=d), m.ones(2, device=d)),
     "torch.linalg.lstsq: input.size(-2) should match other.size(-1)"),
    ("lstsq_rows", lambda m, d: m.linalg.lstsq(m.ones(3, 2, device=d), m.ones(4, 1, device=d)),
     "torch.linalg.lstsq: input.size(-2) should match other.size(-2)"),
    ("lstsq_batch", lambda m, d: m.linalg.lstsq(m.ones(2, 3, 2, device=d),
                                                m.ones(3, 3, 1, device=d)),
     "The size of tensor a (2) must match the size of tensor b (3)"),
    ("lstsq_gels_rank", lambda m, d: m.linalg.lstsq(m.ones(3, 2, device=d),
                                                    m.ones(3, 1, device=d), driver="gels"),
     "does not have full rank (error code: 2)."),
    ("lstsq_empty_rows", lambda m, d: m.linalg.lstsq(m.zeros(0, 2, device=d),
                                                     m.zeros(0, 1, device=d)), None),
    ("lstsq_empty_cols", lambda m, d: m.linalg.lstsq(m.zeros(2, 0, device=d),
                                                     m.zeros(2, 1, device=d)), None),
    ("lstsq_empty_rhs", lambda m, d: m.linalg.lstsq(m.zeros(3, 2, 2, device=d),
                                                    m.zeros(3, 2, 0, device=d)).solution.shape,
     None),
    ("lstsq_gelsy_aux", lambda m, d: [x.shape for x in m.linalg.lstsq(
        _sq(m, d, [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), m.ones(3, 1, device=d))[1:]], None),
    ("lstsq_gelsd_aux", lambda m, d: [x.shape for x in m.linalg.lstsq(
        _sq(m, d, [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), m.ones(3, 1, device=d),
        driver="gelsd")[1:]], None),
    ("lstsq_gels_aux", lambda m, d: [x.shape for x in m.linalg.lstsq(
        _sq(m, d, [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), m.ones(3, 1, device=d),
        driver="gels")[1:]], None),
    ("lstsq_rank", lambda m, d: m.linalg.lstsq(m.ones(3, 2, device=d), m.ones(3, device=d)).rank,
     None),
    ("norm_str_ord_1d", lambda m, d: m.linalg.norm(m.ones(3, device=d), ord="fro"),
     "linalg.matrix_norm: The input tensor A must have at least 2 dimensions."),
    ("vecdot_mismatch", lambda m, d: m.linalg.vecdot(m.ones(3, device=d), m.ones(4, device=d)),
     "inconsistent tensor size, expected tensor [3] and src [4] to have the same number of "
     "elements, but got 3 and 4 elements respectively"),
    ("vecdot_broadcast", lambda m, d: m.linalg.vecdot(m.ones(2, 3, device=d),
                                                      m.ones(1, 3, device=d)), None),
    ("matrix_power_float", lambda m, d: m.linalg.matrix_power(m.eye(2, device=d), 2.5),
     "must be int, not float"),
    ("matrix_power_singular", lambda m, d: m.linalg.matrix_power(m.zeros(2, 2, device=d), -1),
     "The diagonal element 1 is zero"),
    ("solve_triangular_int", lambda m, d: m.linalg.solve_triangular(
        _sq(m, d, [[1, 0], [0, 1]]), _sq(m, d, [[1], [1]]), upper=False),
     "\"triangular_solve_cpu\" not implemented for 'Long'"),
    ("solve_triangular_upper_str", lambda m, d: m.linalg.solve_triangular(
        m.eye(2, device=d), m.ones(2, 1, device=d), upper="x"),
     "argument 'upper' must be bool, not str"),
]


@pytest.mark.parametrize("case", LINALG_CASES, ids=lambda c: c[0])
def test_bad_linalg_input_like_torch(case, device):
    from test_creation import like_torch
    _, fn, frag = case
    like_torch(fn, device, frag)


def test_linalg_error_is_runtime_error():
    assert issubclass(fw.linalg.LinAlgError, RuntimeError)
    with pytest.raises(fw.linalg.LinAlgError):
        fw.linalg.cholesky(fw.tensor([[math.nan, 0.0], [0.0, 1.0]]))


# ---- PyTorch's corner cases (issue 15) ------------------------------------------------------

def _both(a, device):
    return fw.tensor(a, device=device), torch.tensor(a)


def _same(got, want):
    for g, w in zip(got, want):
        assert tuple(g.shape) == tuple(w.shape)
        np.testing.assert_allclose(to_np(g), w.numpy(), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("sa,sb,driver", [
    ((2, 3), (2, 3), "gels"), ((5, 3), (5, 2), "gels"), ((4, 0), (4, 2), "gelsd"),
    ((4, 0), (4, 2), "gels"), ((0, 4, 3), (0, 4, 2), "gelss"), ((2, 5, 3), (2, 5), "gelsy")])
def test_lstsq_drivers_and_shapes_like_torch(device, sa, sb, driver):
    rng = np.random.default_rng(0)
    (a, ta), (b, tb) = _both(rng.standard_normal(sa), device), _both(rng.standard_normal(sb), device)
    _same(fw.linalg.lstsq(a, b, driver=driver), torch.linalg.lstsq(ta, tb, driver=driver))


def test_lstsq_rank_deficient(device):
    """gelsy (the default) and gelsd solve a rank-deficient system: the minimum-norm
    least-squares solution, as torch's."""
    rng = np.random.default_rng(1)
    (a, ta) = _both(rng.standard_normal((5, 2)) @ rng.standard_normal((2, 4)), device)
    (b, tb) = _both(rng.standard_normal((5, 3)), device)
    _same(fw.linalg.lstsq(a, b), torch.linalg.lstsq(ta, tb))
    _same(fw.linalg.lstsq(a, b, driver="gelsd"), torch.linalg.lstsq(ta, tb, driver="gelsd"))


def test_pinv_hermitian_and_tensor_tolerances(device):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 4, 4))
    x[0, :, 3] = x[0, :, 2]                     # a singular matrix among them
    a, ta = _both(x, device)
    # hermitian=True reads the lower triangle only (x is not symmetric)
    _same([fw.linalg.pinv(a, hermitian=True)], [torch.linalg.pinv(ta, hermitian=True)])
    tol, ttol = _both(np.array([0.1, 1.0, 5.0]), device)
    _same([fw.linalg.pinv(a, atol=tol), fw.linalg.matrix_rank(a, atol=tol)],
          [torch.linalg.pinv(ta, atol=ttol), torch.linalg.matrix_rank(ta, atol=ttol)])
    rt, trt = _both(np.array(0.2), device)
    _same([fw.linalg.pinv(a, rtol=rt, hermitian=True),
           fw.linalg.matrix_rank(a, rtol=rt, hermitian=True)],
          [torch.linalg.pinv(ta, rtol=trt, hermitian=True),
           torch.linalg.matrix_rank(ta, rtol=trt, hermitian=True)])
    e, te = _both(np.zeros((2, 0, 0)), device)
    _same([fw.linalg.pinv(e, hermitian=True), fw.linalg.matrix_rank(e, hermitian=True)],
          [torch.linalg.pinv(te, hermitian=True), torch.linalg.matrix_rank(te, hermitian=True)])


def test_tensordot_broadcasts_size_one_contracted_dims(device):
    rng = np.random.default_rng(3)
    for sa, sb, dims in [((1, 1, 1), (2, 1, 2), ([0, 1], [2, 0])), ((3, 2), (1, 4), ([0], [0])),
                         ((2, 1, 3), (5, 2), ([1], [0]))]:
        (a, ta), (b, tb) = _both(rng.standard_normal(sa), device), _both(rng.standard_normal(sb),
                                                                         device)
        _same([fw.tensordot(a, b, dims=dims)], [torch.tensordot(ta, tb, dims=dims)])
    ones = fw.ones(3, 2, dtype=fw.int64, device=device)
    got = fw.tensordot(ones, fw.ones(1, 4, dtype=fw.int64, device=device), dims=([0], [0]))
    assert got.dtype is fw.int64 and (to_np(got) == 3).all()


@pytest.mark.parametrize("shape", [(0, 0), (0, 3), (3, 0), (2, 3, 0), (0, 2, 2)])
@pytest.mark.parametrize("ord", ["fro", "nuc", 2, -2, 1, -1, math.inf, -math.inf])
def test_matrix_norm_of_empty_like_torch(device, shape, ord):
    a, ta = _both(np.zeros(shape), device)
    try:
        want = torch.linalg.matrix_norm(ta, ord)
    except (RuntimeError, IndexError) as e:
        with pytest.raises(type(e), match=re.escape(str(e))):
            fw.linalg.matrix_norm(a, ord)
        return
    _same([fw.linalg.matrix_norm(a, ord)], [want])
