"""Script-visible autograd and loss behaviour checked against PyTorch 2.13: ``.data``'s own
version counter, cross_entropy's and nll_loss's graphs (node names, double backward), the
order saved_tensors_hooks packs in, and meta tensors' errors for data-dependent ops."""
import numpy as np
import pytest

import framework as fw
import framework.nn.functional as F

torch = pytest.importorskip("torch")


def _np(t):
    return t.detach().cpu().numpy() if hasattr(t, "detach") else np.asarray(t)


def _close(a, b, tol=1e-6):
    np.testing.assert_allclose(_np(a), _np(b), rtol=tol, atol=tol)


def _graph(fn):
    """The grad_fn graph as (name, depth) pairs, in depth-first order (nodes seen before
    are named, not walked again)."""
    out, seen = [], set()

    def walk(node, depth):
        if node is None:
            out.append((None, depth))
            return
        name = type(node).__name__
        out.append((name, depth))
        if id(node) in seen:
            return
        seen.add(id(node))
        for child, _ in node.next_functions:
            walk(child, depth + 1)

    walk(fn, 0)
    return out


# ---- 1. .data has a version counter of its own ------------------------------------------

def _data_script(lib, device):
    a = lib.ones(3, requires_grad=True, device=device)
    y = a * a                          # saves a
    d = a.data
    d.add_(1)                          # not seen by a's counter: no error at backward
    v = d.view(3)
    v.mul_(2)                          # a view of .data shares .data's counter
    y.sum().backward()
    z = lib.zeros(3, device=device)
    z.add_(1)
    b = lib.ones(3, requires_grad=True, device=device)
    yb = b * b
    b.data = z                         # b keeps its own counter; z keeps its
    yb.sum().backward()
    return (a.grad, a._version, d._version, v._version, b._version, z._version, b.grad,
            a.data.is_set_to(a), a.data.data_ptr() == a.data_ptr())


def test_data_has_its_own_version_counter(device):
    got = _data_script(fw, device)
    want = _data_script(torch, "cpu")
    for g, w in zip(got, want):
        if isinstance(w, torch.Tensor):
            _close(g, w)
        else:
            assert g == w


def test_data_writes_still_checked_through_the_tensor(device):
    a = fw.ones(3, requires_grad=True, device=device)
    y = a * a
    with fw.no_grad():
        a.add_(1)                      # through a itself: its counter moves
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    d = fw.ones(3, device=device).data
    w = fw.ones(3, requires_grad=True, device=device)
    y = w * d                          # saves d, counted by d's own counter
    d.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


# ---- 2. cross_entropy's graph: NllLoss over LogSoftmax --------------------------------

_CE_CASES = [((3, 5), (3,)), ((5,), ()), ((2, 3, 4), (2, 4)), ((2, 3, 2, 2), (2, 2, 2)),
             ((2, 3, 2, 1, 2), (2, 2, 1, 2))]


@pytest.mark.parametrize("shape,tshape", _CE_CASES)
def test_cross_entropy_graph_names(shape, tshape):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape)
    C = shape[1] if len(shape) > 1 else shape[0]
    t = rng.integers(0, C, tshape)
    w = rng.random(C)
    for reduction in ("mean", "sum", "none"):
        for weighted in (False, True):
            for eps in (0.0, 0.1):
                graphs = []
                for lib in (torch, fw):
                    xx = lib.tensor(x, requires_grad=True)
                    ww = lib.tensor(w) if weighted else None
                    loss = lib.nn.functional.cross_entropy(
                        xx, lib.tensor(t), weight=ww, reduction=reduction,
                        label_smoothing=eps)
                    graphs.append(_graph(loss.grad_fn))
                assert graphs[1] == graphs[0], (shape, reduction, weighted, eps)


def test_cross_entropy_half_and_nograd():
    x = fw.randn(3, 5).half().requires_grad_()
    loss = F.cross_entropy(x, fw.tensor([1, 0, 4]))
    assert loss.dtype is fw.float16 and type(loss.grad_fn).__name__ == "NllLossBackward0"
    with fw.no_grad():
        assert F.cross_entropy(x, fw.tensor([1, 0, 4])).grad_fn is None


def _ce_run(lib, x, t, w, device, **kw):
    xx = lib.tensor(x, requires_grad=True, device=device)
    tt = lib.tensor(t, device=device)
    ww = None if w is None else lib.tensor(w, device=device)
    loss = lib.nn.functional.cross_entropy(xx, tt, weight=ww, **kw)
    seed = lib.tensor(np.linspace(0.5, 1.5, loss.numel()).reshape(loss.shape),
                      device=device)
    (loss * seed).sum().backward()
    loss2 = lib.nn.functional.cross_entropy(xx, tt, weight=ww, **kw)
    g, = lib.autograd.grad((loss2 * seed).sum(), xx, create_graph=True)
    gg, = lib.autograd.grad((g * g).sum(), xx)       # a gradient penalty
    return loss, xx.grad, gg


@pytest.mark.parametrize("kw", [{}, dict(label_smoothing=0.2, reduction="sum"),
                                dict(reduction="none", label_smoothing=0.1)])
def test_cross_entropy_values_and_double_backward(device, kw):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((5, 37))                  # classes past a block edge
    t = rng.integers(0, 37, (5,))
    t[2] = -100
    w = rng.random(37)
    for ww in (None, w):
        got = _ce_run(fw, x, t, ww, device, **kw)
        want = _ce_run(torch, x, t, ww, "cpu", **kw)
        for g, e in zip(got, want):
            _close(g, e, 1e-9)


def test_cross_entropy_graph_is_freed_and_retained():
    x = fw.randn(3, 5, requires_grad=True)
    t = fw.tensor([1, 0, 4])
    loss = F.cross_entropy(x, t, label_smoothing=0.1)
    loss.backward(retain_graph=True)
    first = x.grad.clone()
    loss.backward()
    _close(x.grad, 2 * first)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss.backward()
    loss = F.cross_entropy(x, t)
    loss.register_hook(lambda g: g * 3)
    x.grad = None
    loss.backward()
    plain = fw.autograd.grad(F.cross_entropy(x, t), x)[0]
    _close(x.grad, 3 * plain)


# ---- 3. nll_loss's gradient has a graph (NllLossBackwardBackward0) ----------------------

@pytest.mark.parametrize("kw,shape", [({}, (4, 6)), (dict(reduction="sum"), (4, 6)),
                                      (dict(reduction="none"), (4, 6)), ({}, (2, 6, 2, 1)),
                                      (dict(reduction="none"), (2, 6, 2))])
def test_nll_loss_double_backward(device, kw, shape):
    rng = np.random.default_rng(2)
    x = rng.standard_normal(shape)
    t = np.array([1, 0, 5, -100]).reshape((shape[0],) + shape[2:])
    w = rng.random(6)
    res = []
    for lib, dev in ((fw, device), (torch, "cpu")):
        xx = lib.tensor(x, requires_grad=True, device=dev)
        loss = lib.nn.functional.nll_loss(xx, lib.tensor(t, device=dev),
                                          weight=lib.tensor(w, device=dev), **kw)
        go = lib.ones(loss.shape, dtype=loss.dtype, device=dev, requires_grad=True)
        g, = lib.autograd.grad(loss, xx, go, create_graph=True)
        node = g.grad_fn
        probe = lib.tensor(np.arange(24.0).reshape(shape), device=dev)
        d_x, d_go = lib.autograd.grad((g * probe).sum(), (xx, go))
        res.append((type(node).__name__, len(node.next_functions), d_x, d_go))
    if len(shape) != 3:   # 3-d: PyTorch's ViewBackward0 of the 4-d view is a
        assert res[0][:2] == res[1][:2]   # ReshapeBackward0 here (reshape's own node)
    _close(res[0][2], res[1][2])
    _close(res[0][3], res[1][3])


def test_gradgradcheck_nll_and_cross_entropy():
    x = fw.randn(3, 5, dtype=fw.float64, requires_grad=True)
    t = fw.tensor([1, -100, 4])
    w = fw.rand(5, dtype=fw.float64)
    assert fw.autograd.gradgradcheck(lambda x: F.nll_loss(x, t, weight=w), (x,))
    assert fw.autograd.gradgradcheck(lambda x: F.cross_entropy(x, t, weight=w), (x,))
    assert fw.autograd.gradgradcheck(
        lambda x: F.cross_entropy(x, t, reduction="none", label_smoothing=0.3), (x,))


# ---- 4. saved_tensors_hooks: PyTorch's packing order ------------------------------------

_BINARY = {
    "mul": lambda L, a, b: a * b, "div": lambda L, a, b: a / b, "pow": lambda L, a, b: a ** b,
    "atan2": lambda L, a, b: L.atan2(a, b), "maximum": lambda L, a, b: L.maximum(a, b),
    "hypot": lambda L, a, b: L.hypot(a, b), "fmod": lambda L, a, b: L.fmod(a, b),
    "xlogy": lambda L, a, b: L.xlogy(a, b), "dot": lambda L, a, b: L.dot(a, b),
    "mm": lambda L, a, b: a.view(1, 2).mm(b.view(2, 1)),
    "addcmul": lambda L, a, b: L.addcmul(a * 3, a, b), "mul_": lambda L, a, b: (a * 1).mul_(b),
    "copysign": lambda L, a, b: L.copysign(a, b),
}


@pytest.mark.parametrize("op", sorted(_BINARY))
def test_saved_tensors_hooks_order(op):
    packed = []
    for lib in (torch, fw):
        seen = []
        a = lib.ones(2, requires_grad=True) * 1.5
        b = lib.ones(2, requires_grad=True) * 2.5

        def pack(t):
            seen.append(t.tolist())
            return t
        with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            _BINARY[op](lib, a, b)
        packed.append(seen)
    assert packed[1] == packed[0]


# ---- 5. meta tensors ----------------------------------------------------------------------

def _meta_cases(lib):
    x = lib.ones(5, device="meta")
    m = lib.ones(5, dtype=lib.bool, device="meta")
    r = lib.ones(5, dtype=lib.long, device="meta")
    return [lambda: lib.tensor(1.0, device="meta").item(), lambda: x.item(),
            lambda: bool(lib.ones(1, device="meta")), lambda: float(lib.ones(1, device="meta")),
            lambda: x.nonzero(), lambda: lib.argwhere(x), lambda: lib.where(m),
            lambda: lib.ones(2, 3, device="meta")[lib.ones(2, 3, dtype=lib.bool, device="meta")],
            lambda: lib.unique(x), lambda: lib.unique(lib.ones(2, 2, device="meta"), dim=1),
            lambda: lib.unique_consecutive(x), lambda: lib.masked_select(x, m),
            lambda: lib.repeat_interleave(x, r), lambda: lib.repeat_interleave(r),
            lambda: lib.repeat_interleave(x, r, output_size=7).shape,
            lambda: lib.bincount(r), lambda: lib.equal(x, x), lambda: lib.allclose(x, x),
            lambda: lib.nonzero_static(lib.ones(2, 3, device="meta"), size=4).shape]


def _outcome(f):
    try:
        r = f()
    except (RuntimeError, NotImplementedError) as e:
        return type(e).__name__, str(e)
    return "ok", tuple(r)


def test_meta_data_dependent_errors():
    for i, (mine, theirs) in enumerate(zip(_meta_cases(fw), _meta_cases(torch))):
        assert _outcome(mine) == _outcome(theirs), i
