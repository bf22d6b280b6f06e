"""The fused embedding op (framework.embedding and framework.embedding_dense_backward,
reached through nn.functional.embedding) on cpu and cuda against a NumPy float64 reference
and torch: the lookup and the weight gradient with repeated indices, padding_idx (positive
and negative), scale_grad_by_freq, int32 and int64 indices, every float dtype, odd D and
index counts that cross the kernels' blocks, empty and 0-d indices, non-contiguous
operands, out-of-range indices on both devices, determinism, and gradcheck/gradgradcheck
in float64."""
import numpy as np
import pytest

import framework as fw
import framework.nn.functional as F
from tests.nn.common import fw_tensor, to_np

torch = pytest.importorskip("torch")

# (rtol, atol) of the weight gradient: 16-bit gradients are summed in float32 and rounded
# once, so the error is about one rounding of the result
TOL = {"float64": (1e-12, 1e-12), "float32": (1e-5, 1e-5), "float16": (1e-3, 1e-3),
       "bfloat16": (8e-3, 8e-3)}


def _ref_grad(g, idx, num_weights, padding_idx=None, scale=False):
    """The weight gradient in float64: grad rows summed per index."""
    flat = idx.reshape(-1)
    g = g.reshape(flat.size, -1).astype(np.float64)
    out = np.zeros((num_weights, g.shape[1]))
    np.add.at(out, flat, g)
    if scale:
        out /= np.maximum(np.bincount(flat, minlength=num_weights), 1)[:, None]
    if padding_idx is not None:
        out[padding_idx] = 0
    return out


def _run(device, w, idx, g, dtype="float32", idx_dtype=fw.int64, **kw):
    """Output and weight gradient of F.embedding for weight w, indices idx, cotangent g;
    the values as NumPy float64 arrays (after rounding to ``dtype``)."""
    fdt = getattr(fw, dtype)
    fwt = fw_tensor(w, device, dtype=fdt).requires_grad_()
    out = F.embedding(fw_tensor(idx, device, dtype=idx_dtype), fwt, **kw)
    assert tuple(out.shape) == idx.shape + (w.shape[1],)
    assert out.dtype is fdt
    out.backward(fw_tensor(g, device, dtype=fdt))
    assert fwt.grad.dtype is fdt
    return (to_np(out).astype(np.float64), to_np(fwt.grad).astype(np.float64),
            to_np(fwt).astype(np.float64), to_np(fw_tensor(g, device, dtype=fdt)))


# (num_weights, D, index shape, index dtype): odd D, segments longer than the backward's
# row tile, index counts past the forward's row block (also under the interpreter's larger
# blocks) and past the one-program sort on cuda, columns past one column block, a table
# past one offsets block
SHAPES = [(7, 1, (5, 9), fw.int64), (9, 33, (300,), fw.int32), (40, 130, (3, 100), fw.int64),
          (3, 1030, (4,), fw.int32), (1100, 2, (6,), fw.int64)]


@pytest.mark.parametrize("num_weights,D,ishape,idx_dtype", SHAPES)
def test_forward_and_weight_grad(device, num_weights, D, ishape, idx_dtype):
    rng = np.random.default_rng(0)
    w = rng.standard_normal((num_weights, D))
    idx = rng.integers(0, num_weights, ishape)
    g = rng.standard_normal(ishape + (D,))
    out, gw, wv, gv = _run(device, w, idx, g, "float64", idx_dtype)
    np.testing.assert_array_equal(out, wv[idx])
    np.testing.assert_allclose(gw, _ref_grad(gv, idx, num_weights), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_dtypes(device, dtype):
    rng = np.random.default_rng(1)
    w = rng.standard_normal((6, 37))
    idx = rng.integers(0, 6, (70,))
    g = rng.standard_normal((70, 37))
    out, gw, wv, gv = _run(device, w, idx, g, dtype)
    np.testing.assert_array_equal(out, wv[idx])
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(gw, _ref_grad(gv, idx, 6), rtol=rtol, atol=atol)


@pytest.mark.parametrize("padding_idx", [2, -1, 0])
@pytest.mark.parametrize("scale", [False, True])
@pytest.mark.parametrize("idx_dtype", [fw.int32, fw.int64])
def test_padding_and_scale_against_torch(device, padding_idx, scale, idx_dtype):
    rng = np.random.default_rng(2)
    w = rng.standard_normal((8, 5)).astype(np.float32)
    idx = rng.integers(0, 8, (4, 6))
    idx[0, :3] = 7
    idx[1, 1] = 2
    g = rng.standard_normal((4, 6, 5)).astype(np.float32)
    out, gw, _, gv = _run(device, w, idx, g, "float32", idx_dtype, padding_idx=padding_idx,
                          scale_grad_by_freq=scale)
    tw = torch.tensor(w, requires_grad=True)
    tidx = torch.tensor(idx).to(torch.int32 if idx_dtype is fw.int32 else torch.int64)
    tout = torch.nn.functional.embedding(tidx, tw, padding_idx=padding_idx,
                                         scale_grad_by_freq=scale)
    tout.backward(torch.tensor(g))
    np.testing.assert_array_equal(out, tout.detach().numpy())
    np.testing.assert_allclose(gw, tw.grad.numpy(), rtol=1e-5, atol=1e-6)
    pad = padding_idx % 8
    np.testing.assert_allclose(gw, _ref_grad(gv, idx, 8, pad, scale), rtol=1e-5, atol=1e-6)
    assert not gw[pad].any()


def test_empty_and_zero_dim_indices(device):
    w = fw.randn(5, 3, device=device, requires_grad=True)
    for idx in (fw.tensor([], dtype=fw.int64, device=device),
                fw.zeros((2, 0), dtype=fw.int32, device=device)):
        out = F.embedding(idx, w)
        assert tuple(out.shape) == tuple(idx.shape) + (3,)
        out.sum().backward()
        np.testing.assert_array_equal(to_np(w.grad), np.zeros((5, 3)))
    out = F.embedding(fw.tensor(4, device=device), w, scale_grad_by_freq=True)
    assert tuple(out.shape) == (3,)
    np.testing.assert_array_equal(to_np(out), to_np(w)[4])
    w.grad = None
    (out * 2).sum().backward()
    ref = np.zeros((5, 3))
    ref[4] = 2
    np.testing.assert_array_equal(to_np(w.grad), ref)


def test_noncontiguous_operands(device):
    rng = np.random.default_rng(3)
    wt = rng.standard_normal((6, 9))                # weight = wt.T: (9, 6), column-major
    idx = rng.integers(0, 9, (5, 8))
    w = fw_tensor(wt, device).t().requires_grad_()
    fidx = fw_tensor(idx, device).t()               # (8, 5), strided
    out = F.embedding(fidx, w, padding_idx=3)
    np.testing.assert_array_equal(to_np(out), wt.T[idx.T])
    g = rng.standard_normal((8, 5, 6))
    out.backward(fw_tensor(g, device))
    np.testing.assert_allclose(to_np(w.grad), _ref_grad(g, idx.T, 9, 3), rtol=1e-12,
                               atol=1e-12)


def test_dense_backward_direct(device):
    """embedding_dense_backward by itself: shapes, padding_idx out of the table (no row),
    negative (none), and a deterministic result (the same bits on a second call)."""
    rng = np.random.default_rng(4)
    idx = rng.integers(0, 5, (3, 40))
    g = rng.standard_normal((3, 40, 7)).astype(np.float32)
    fi, fg = fw_tensor(idx, device), fw_tensor(g, device)
    for pad in (-1, 9, 1):
        a = fw.embedding_dense_backward(fg, fi, 5, pad, True)
        b = fw.embedding_dense_backward(fg, fi, 5, pad, True)
        np.testing.assert_array_equal(to_np(a), to_np(b))
        ref = _ref_grad(g, idx, 5, pad if 0 <= pad < 5 else None, True)
        np.testing.assert_allclose(to_np(a), ref, rtol=1e-5, atol=1e-6)
    # rows past the largest index get zeros
    z = fw.embedding_dense_backward(fg, fi, 8, -1, False)
    np.testing.assert_array_equal(to_np(z)[5:], 0)
    with pytest.raises(RuntimeError, match="does not fit indices"):
        fw.embedding_dense_backward(fg[:, :3], fi, 5, -1, False)
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        fw.embedding_dense_backward(fi, fi, 5, -1, False)


def test_out_of_range(device):
    w = fw.randn(10, 3, device=device)
    for bad in ([[1, 10]], [3, -1], [-11], [2**40]):
        for dt in (fw.int32, fw.int64) if bad != [2**40] else (fw.int64,):
            with pytest.raises(IndexError, match="index out of range in self"):
                fw.embedding(w, fw.tensor(bad, dtype=dt, device=device))
    with pytest.raises(IndexError, match="index out of range in self"):
        fw.embedding(fw.randn(0, 3, device=device), fw.tensor([0], device=device))
    g = fw.ones(3, 3, device=device)
    for bad in ([0, 10, 2], [0, -1, 2]):
        with pytest.raises(IndexError, match="index out of range in self"):
            fw.embedding_dense_backward(g, fw.tensor(bad, device=device), 10, -1, False)
    with pytest.raises(RuntimeError, match="Expected tensor for argument #1 'indices'"):
        fw.embedding(w, fw.tensor([1.0], device=device))
    with pytest.raises(RuntimeError, match="'weight' must be 2-D"):
        fw.embedding(fw.randn(3, device=device), fw.tensor([1], device=device))
    if device != "cpu":
        with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
            fw.embedding(w, fw.tensor([1]))


def test_gradcheck(device):
    """The lookup's true gradient (no padding_idx, no scaling: those alter the gradient on
    purpose), and the backward as a function of grad_output for every option: it is linear,
    so gradcheck checks its derivative (backward_grad_output) and gradgradcheck that one's."""
    rng = np.random.default_rng(5)
    idx = fw.tensor([[0, 2, 2], [3, 0, 2]], device=device)
    w = fw.tensor(rng.standard_normal((4, 2)), device=device, requires_grad=True)
    g = fw.tensor(rng.standard_normal((2, 3, 2)), device=device, requires_grad=True)

    def lookup(w):
        return fw.embedding(w, idx)

    def grad_of_cube(w):
        # with create_graph the gradient depends on w through grad_output
        gw, = fw.autograd.grad((lookup(w) ** 3).sum(), w, create_graph=True)
        return gw

    assert fw.autograd.gradcheck(lookup, (w,))
    assert fw.autograd.gradgradcheck(lookup, (w,))
    # Triton's interpreter is slow: on simulated cuda one combination of the options and
    # first order only for the backward (its derivative is device-independent framework ops)
    cpu = device == "cpu"
    if cpu:
        assert fw.autograd.gradcheck(grad_of_cube, (w,))
    for pad, scale in ((-1, True), (2, False), (2, True), (0, True)) if cpu else ((2, True),):
        def backward(g, pad=pad, scale=scale):
            return fw.embedding_dense_backward(g, idx, 4, pad, scale)
        assert fw.autograd.gradcheck(backward, (g,))
        if cpu:
            assert fw.autograd.gradgradcheck(backward, (g,))
