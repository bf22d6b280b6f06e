"""Memory formats and the layout of new tensors, against PyTorch: preserve_format in to,
clone and the *_like factories, TensorIterator's layout of elementwise results, explicit
contiguous/channels_last formats, and the channels-last results of conv, pooling and batch
norm; values on both devices for permuted and broadcast operands."""
import pickle

import numpy as np
import pytest

import framework as fw
from helpers import to_np

torch = pytest.importorskip("torch")


def _pair(shape, perm=None, seed=0, slicer=None):
    """The same data as a framework tensor and a torch tensor, permuted/sliced alike."""
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    f, t = fw.tensor(a), torch.tensor(a)
    if perm is not None:
        f, t = f.permute(*perm), t.permute(*perm)
    if slicer is not None:
        f, t = f[slicer], t[slicer]
    return f, t


LAYOUTS = [
    ((2, 3, 4), None, None),              # contiguous
    ((4, 3, 2), (2, 1, 0), None),         # fully reversed
    ((2, 5, 4, 3), (0, 3, 1, 2), None),   # channels-last
    ((3, 1, 4), (2, 1, 0), None),         # a size-1 dim in the middle
    ((4, 6), (1, 0), (slice(None), slice(None, None, 2))),   # not dense, transposed
    ((4, 6), None, (slice(None), slice(None, None, 2))),     # not dense
]


@pytest.mark.parametrize("shape,perm,slicer", LAYOUTS)
def test_preserve_format_strides(shape, perm, slicer):
    f, t = _pair(shape, perm, slicer=slicer)
    cases = [
        (lambda T, x: x.clone(), "clone"),
        (lambda T, x: x.to(T.float64), "to"),
        (lambda T, x: x.double(), "double"),
        (lambda T, x: T.empty_like(x), "empty_like"),
        (lambda T, x: T.zeros_like(x), "zeros_like"),
        (lambda T, x: T.ones_like(x, dtype=T.int32), "ones_like"),
        (lambda T, x: T.full_like(x, 2.0), "full_like"),
        (lambda T, x: x.exp(), "exp"),
        (lambda T, x: x * 2, "mul scalar"),
        (lambda T, x: 2 + x, "scalar add"),
        (lambda T, x: x + x, "add"),
        (lambda T, x: x > 0, "gt"),
        (lambda T, x: T.where(x > 0, x, 1.0), "where"),
        (lambda T, x: x.contiguous(), "contiguous"),
    ]
    for fn, name in cases:
        a, b = fn(fw, f), fn(torch, t)
        assert a.stride() == b.stride(), (name, a.stride(), b.stride())
        if name != "empty_like":
            np.testing.assert_allclose(to_np(a), b.numpy(), rtol=1e-6, err_msg=name)


def test_elementwise_layout_follows_the_first_operand():
    x, tx = _pair((3, 4), (1, 0))      # (4, 3) transposed
    y, ty = _pair((4, 3), seed=1)      # (4, 3) contiguous
    b, tb = _pair((3,), seed=2)
    for fn in (lambda p, q, r: p + q, lambda p, q, r: q + p, lambda p, q, r: p * r,
               lambda p, q, r: r - p, lambda p, q, r: p.lerp(q, 0.5),
               lambda p, q, r: p.addcmul(q, r)):
        a, e = fn(x, y, b), fn(tx, ty, tb)
        assert a.stride() == e.stride()
        np.testing.assert_allclose(to_np(a), e.numpy(), rtol=1e-6)


def test_explicit_formats():
    x, tx = _pair((2, 3, 4, 5))
    for fmt, tfmt in ((fw.channels_last, torch.channels_last),
                      (fw.contiguous_format, torch.contiguous_format)):
        a, e = x.to(memory_format=fmt), tx.to(memory_format=tfmt)
        assert a.stride() == e.stride()
        assert a.is_contiguous(memory_format=fmt) and a.contiguous(memory_format=fmt) is a
        np.testing.assert_array_equal(to_np(a), e.numpy())
        assert x.clone(memory_format=fmt).stride() == tx.clone(memory_format=tfmt).stride()
        assert fw.empty_like(x, memory_format=fmt).stride() == \
            torch.empty_like(tx, memory_format=tfmt).stride()
    cl = x.contiguous(memory_format=fw.channels_last)
    assert not cl.is_contiguous() and cl.contiguous().stride() == (60, 20, 5, 1)
    v, tv = _pair((2, 3, 4, 5, 6))
    assert v.contiguous(memory_format=fw.channels_last_3d).stride() == \
        tv.contiguous(memory_format=torch.channels_last_3d).stride()
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last"):
        fw.ones(2, 3, 4).contiguous(memory_format=fw.channels_last)
    with pytest.raises(RuntimeError, match="preserve memory format is unsupported"):
        x.is_contiguous(memory_format=fw.preserve_format)
    assert not fw.ones(2, 3, 4).is_contiguous(memory_format=fw.channels_last)


def test_format_objects():
    assert repr(fw.channels_last) == "torch.channels_last"
    assert repr(fw.strided) == "torch.strided" and fw.ones(1).layout is fw.strided
    for obj in (fw.channels_last, fw.preserve_format, fw.strided):
        assert pickle.loads(pickle.dumps(obj)) is obj
    with pytest.raises(TypeError, match="memory_format"):
        fw.ones(1).to(memory_format="channels_last")


def test_module_to_channels_last():
    m = fw.nn.Sequential(fw.nn.Conv2d(3, 4, 3), fw.nn.Linear(6, 2))
    m.to(memory_format=fw.channels_last)
    assert m[0].weight.is_contiguous(memory_format=fw.channels_last)
    assert m[1].weight.is_contiguous()


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_channels_last_layers(device):
    """conv, pooling and batch norm keep a channels-last input channels-last, with the
    same values as on a contiguous input."""
    if device == "cuda" and not fw.cuda.is_available():
        pytest.skip("needs cuda or TRITON_INTERPRET=1")
    a = np.random.default_rng(0).standard_normal((2, 3, 6, 6)).astype(np.float32)
    w = np.random.default_rng(1).standard_normal((4, 3, 3, 3)).astype(np.float32)
    x = fw.tensor(a, device=device).contiguous(memory_format=fw.channels_last)
    tx = torch.tensor(a).contiguous(memory_format=torch.channels_last)
    F, TF = fw.nn.functional, torch.nn.functional
    cases = [
        (lambda M, X, W: M.conv2d(X, W, padding=1), True),
        (lambda M, X, W: M.max_pool2d(X, 2), False),
        (lambda M, X, W: M.max_pool2d(X, 2, return_indices=True)[1], False),
        (lambda M, X, W: M.avg_pool2d(X, 3, stride=2), False),
        (lambda M, X, W: M.adaptive_avg_pool2d(X, 2), False),
        (lambda M, X, W: M.adaptive_max_pool2d(X, 3), False),
        (lambda M, X, W: M.batch_norm(X, None, None, training=True), False),
    ]
    for fn, uses_w in cases:
        got = fn(F, x, fw.tensor(w, device=device) if uses_w else None)
        want = fn(TF, tx, torch.tensor(w) if uses_w else None)
        assert got.stride() == want.stride()
        np.testing.assert_allclose(to_np(got), want.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_permuted_loops(device):
    """Kernels visit dims in the output's memory order: results are right for permuted
    outputs, permuted and broadcast inputs, and in-place ops on permuted tensors."""
    if device == "cuda" and not fw.cuda.is_available():
        pytest.skip("needs cuda or TRITON_INTERPRET=1")
    rng = np.random.default_rng(3)
    a = rng.standard_normal((5, 7, 3))
    b = rng.standard_normal(7)
    x = fw.tensor(a, device=device).permute(2, 0, 1)          # (3, 5, 7)
    y = fw.tensor(b, device=device)
    ref = a.transpose(2, 0, 1)
    np.testing.assert_allclose(to_np(x * y - 1), ref * b - 1)
    np.testing.assert_allclose(to_np(x.to(fw.float32)), ref.astype(np.float32))
    out = fw.empty(5, 7, 3, device=device).permute(2, 0, 1)
    fw.add(x, y, out=out)
    np.testing.assert_allclose(to_np(out), ref + b)
    z = x.clone()
    z.mul_(2).add_(y)
    np.testing.assert_allclose(to_np(z), 2 * ref + b)
    z.fill_(3.0)
    assert to_np(z).tolist() == np.full(ref.shape, 3.0).tolist()
    u8 = fw.tensor(rng.integers(0, 255, (4, 5, 3)).astype(np.uint8), device=device)
    f = u8.permute(2, 0, 1).float() / 255
    assert f.stride() == (1, 15, 3)
    np.testing.assert_allclose(to_np(f.reshape(-1)),
                               (to_np(u8).transpose(2, 0, 1) / 255).reshape(-1), rtol=1e-6)


@pytest.mark.skipif(torch is None, reason="torch is the oracle")
@pytest.mark.parametrize("shape", [(2, 1, 4, 4), (2, 3, 1, 1), (1, 3, 4, 4), (2, 3, 4, 1),
                                   (0, 3, 2, 2), (2, 3, 4, 5)])
def test_empty_and_to_strides_in_a_format_are_torchs(shape):
    got, want = [], []
    for m, out in ((fw, got), (torch, want)):
        cl = m.channels_last
        out.append(m.empty(shape, memory_format=cl).stride())
        out.append(m.zeros(shape).to(memory_format=cl).stride())
        out.append(m.zeros(shape).to(m.float64, memory_format=cl).stride())
        out.append(m.zeros(shape).contiguous(memory_format=cl).stride())
        out.append(m.zeros(shape).is_contiguous(memory_format=cl))
        z = m.zeros(shape)
        out.append(z.to(memory_format=cl) is z)
        c = m.zeros(shape).contiguous(memory_format=cl)
        out.append(c.to(memory_format=cl) is c)
        out.append(c.to(memory_format=m.contiguous_format) is c)
    assert got == want


@pytest.mark.skipif(torch is None, reason="torch is the oracle")
def test_empty_memory_format_errors_and_3d_are_torchs():
    for m in (fw, torch):
        with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last"):
            m.empty(2, 3, memory_format=m.channels_last)
        with pytest.raises(RuntimeError, match="unsupported memory format Preserve"):
            m.empty(2, 3, memory_format=m.preserve_format)
    assert fw.empty(2, 3, 4, 5, 6, memory_format=fw.channels_last_3d).stride() == \
        torch.empty(2, 3, 4, 5, 6, memory_format=torch.channels_last_3d).stride()
    x = fw.zeros(3, 4).t()       # torch's rule: a 2-d tensor suggests contiguous_format
    assert x.to(memory_format=fw.contiguous_format) is x


def test_resize_in_a_format_is_torchs():
    got, want = [], []
    for m, out in ((fw, got), (torch, want)):
        cl = m.channels_last
        out.append(m.zeros(2, 3, 4, 4).resize_(2, 3, 4, 4, memory_format=cl).stride())
        out.append(m.zeros(5).resize_(2, 3, 4, 4, memory_format=cl).stride())
        t = m.zeros(2, 3, 4, 4).to(memory_format=cl)
        for fmt in (None, m.preserve_format, m.contiguous_format):
            out.append(m.zeros(1).resize_as_(t, memory_format=fmt).stride())
        for bad in (cl, m.preserve_format):
            with pytest.raises(RuntimeError) as info:
                m.zeros(1).resize_(2, 3, memory_format=bad)
            out.append(str(info.value))
    assert got == want
