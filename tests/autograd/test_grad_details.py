"""Autograd details checked against PyTorch: the warning on a non-leaf's .grad, ops whose
backward raises (heaviside), max/min of two tensors, scatter_reduce's prod with several
zeros in a slot, and double backward through in-place ops."""
import warnings

import numpy as np
import pytest

import framework as fw

torch = pytest.importorskip("torch")


def leaf(T, values, device="cpu"):
    if T is fw:
        return T.tensor(values, dtype=T.float64, device=device, requires_grad=True)
    return T.tensor(values, dtype=T.float64, requires_grad=True)


def _np(t):
    return t.detach().cpu().numpy()


def test_non_leaf_grad_warns_and_is_none(device):
    x = leaf(fw, [1.0, 2.0], device)
    y = x * 2
    with pytest.warns(UserWarning, match="not a leaf Tensor is being accessed"):
        assert y.grad is None


def test_grad_without_warning(device):
    x = leaf(fw, [1.0, 2.0], device)
    y = x * 2
    z = x * 3
    z.retain_grad()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert x.grad is None and z.grad is None
        assert y.detach().grad is None and fw.ones(2).grad is None
        with fw.no_grad():
            assert (x * 2).grad is None
        (y + z).sum().backward(inputs=[x, y])
        np.testing.assert_allclose(_np(y.grad), [1.0, 1.0])     # filled: no warning
        np.testing.assert_allclose(_np(x.grad), [5.0, 5.0])
        np.testing.assert_allclose(_np(z.grad), [1.0, 1.0])
        x.grad = None
        del z.grad
        assert x.grad is None and z.grad is None


def test_heaviside_backward_not_implemented(device):
    x = leaf(fw, [1.0, -1.0, 0.0], device)
    v = leaf(fw, [0.5, 0.5, 0.5], device)
    calls = [lambda: fw.heaviside(x, v), lambda: x.heaviside(v.detach()),
             lambda: (x * 1).heaviside_(v), lambda: fw.heaviside(x.detach(), v)]
    for call in calls:
        out = call()
        np.testing.assert_allclose(_np(out), [1.0, 0.0, 0.5])
        assert out.requires_grad and out.grad_fn.name() == "HeavisideBackward0"
        with pytest.raises(RuntimeError, match="the derivative for 'heaviside' is not "
                                               "implemented"):
            out.sum().backward()


def test_floor_divide_backward_not_implemented(device):
    x = leaf(fw, [3.5, -1.5], device)
    for out in (x // 2, fw.floor_divide(x, 2.0), (x * 1).floor_divide_(2)):
        np.testing.assert_allclose(_np(out), [1.0, -1.0])
        with pytest.raises(RuntimeError, match="the derivative for 'floor_divide' is not "
                                               "implemented"):
            out.sum().backward()


def test_dtype_and_device_conversions_are_recorded(device):
    x = leaf(fw, [1.5, -2.0], device)
    y = x.float()                       # float64 -> float32 keeps the graph
    assert y.grad_fn.name() == "ToCopyBackward0" and not y.is_leaf
    (y * y).sum().backward()
    assert x.grad.dtype is fw.float64
    np.testing.assert_allclose(_np(x.grad), [3.0, -4.0])
    assert x.double() is x and x.to(device) is x          # no conversion: self
    assert not x.long().requires_grad                       # integer results: no gradient
    with fw.no_grad():
        assert not x.float().requires_grad
    # second order through a conversion
    g, = fw.autograd.grad((x.float() ** 3).sum(), x, create_graph=True)
    gg, = fw.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(_np(gg), [9.0, -12.0], rtol=1e-6)
    if device != "cpu":                 # across devices: the gradient comes back
        w = leaf(fw, [2.0, 3.0], "cpu")
        z = w.to(device)
        assert z.device.type == "cuda" and z.grad_fn.name() == "ToCopyBackward0"
        (z * z).sum().backward()
        assert w.grad.device.type == "cpu"
        np.testing.assert_allclose(_np(w.grad), [4.0, 6.0])


@pytest.mark.parametrize("op", ["max", "min"])
def test_max_min_of_two_tensors(op, device):
    """Either argument alone may require grad; ties split the gradient in halves."""
    for grad_a in (True, False):
        got, ref = [], []
        for T, out in ((fw, got), (torch, ref)):
            a = T.tensor([[1.0, 5.0, 3.0], [2.0, -1.0, 0.0]], dtype=T.float64)
            b = leaf(T, [2.0, 5.0, 1.0])
            if T is fw:
                a, b = a.to(device), b.to(device)
            a.requires_grad_(grad_a)
            r = getattr(T, op)(a, b) if grad_a else getattr(a, op)(b)
            w = T.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=T.float64)
            gs = T.autograd.grad((r * w.to(r.device)).sum(), [a, b] if grad_a else [b])
            out.extend([_np(r)] + [_np(g) for g in gs])
        for x, y in zip(got, ref):
            np.testing.assert_allclose(x, y)


def test_max_with_dim_is_unchanged():
    x = leaf(fw, [[1.0, 4.0], [3.0, 2.0]])
    values, indices = fw.max(x, 1)
    values.sum().backward()
    np.testing.assert_allclose(_np(x.grad), [[0.0, 1.0], [1.0, 0.0]])


def test_scatter_reduce_prod_several_zeros_in_a_slot(device):
    """First order is right; the second order through src raises, as in PyTorch."""
    got = []
    for T in (fw, torch):
        x = leaf(T, [2.0, 3.0, 0.0], device if T is fw else "cpu")
        s = leaf(T, [0.0, 0.0, 4.0, 5.0], device if T is fw else "cpu")
        idx = T.tensor([0, 0, 1, 2])
        if T is fw:
            idx = idx.to(device)
        r = x.scatter_reduce(0, idx, s, "prod")
        w = T.tensor([1.0, 2.0, 3.0], dtype=T.float64)
        gx, gs = T.autograd.grad((r * w.to(r.device)).sum(), [x, s], create_graph=True)
        got.append([_np(gx), _np(gs)])
        with pytest.raises(RuntimeError, match="Double backward is unsupported for src"):
            T.autograd.grad(gs.sum(), [x, s])
        # without create_graph no error is waiting
        r = x.scatter_reduce(0, idx, s, "prod")
        T.autograd.grad(r.sum(), [x, s])
    for a, b in zip(*got):
        np.testing.assert_allclose(a, b)


@pytest.mark.parametrize("name", ["mul_", "sin_", "pow_", "div_"])
def test_double_backward_through_inplace_self(name, device):
    """An in-place op's formula reads self's old value with its history (a recorded
    clone), so the second derivative reaches it."""
    calls = {"mul_": lambda a, b: (a * 1).mul_(b), "sin_": lambda a, b: (a * b).sin_(),
             "pow_": lambda a, b: (a + 0).pow_(b), "div_": lambda a, b: (a * a).div_(b)}
    fn = calls[name]
    res = []
    for T in (fw, torch):
        a = leaf(T, [0.7, 1.3, 2.1], device if T is fw else "cpu")
        b = leaf(T, [1.5, 0.4, 2.2], device if T is fw else "cpu")
        ga, gb = T.autograd.grad(fn(a, b).sum(), [a, b], create_graph=True)
        res.append([_np(g) for g in T.autograd.grad((ga * ga).sum() + gb.sum(), [a, b])])
    for x, y in zip(*res):
        np.testing.assert_allclose(x, y, rtol=1e-10)


def test_grad_assignment_is_checked(device):
    x = fw.zeros(2, 3, device=device, requires_grad=True)
    x.grad = fw.ones(2, 3, device=device)
    np.testing.assert_allclose(x.grad.cpu().numpy(), np.ones((2, 3)))
    x.grad = None
    assert x.grad is None
    with pytest.raises(TypeError, match="assigned grad expected to be a Tensor or None"):
        x.grad = [1.0]
    with pytest.raises(RuntimeError, match="assign a gradient with dtype 'float64' to a tensor "
                                           "with grad_dtype 'Float'"):
        x.grad = fw.ones(2, 3, dtype=fw.float64, device=device)
    with pytest.raises(RuntimeError, match=r"assign a gradient of size '\[3, 2\]' to a tensor "
                                           r"of size '\[2, 3\]'"):
        x.grad = fw.ones(3, 2, device=device)
    if device != "cpu":
        with pytest.raises(RuntimeError, match="on the same device"):
            x.grad = fw.ones(2, 3)


def test_deepcopy_of_leaves_and_non_leaves(device):
    import copy
    x = leaf(fw, [1.0, 2.0], device)
    (x * 3).sum().backward()
    c = copy.deepcopy(x)
    assert c.is_leaf and c.requires_grad and c.data_ptr() != x.data_ptr()
    np.testing.assert_allclose(_np(c.grad), [3.0, 3.0])
    assert c.grad.data_ptr() != x.grad.data_ptr()
    with pytest.raises(RuntimeError, match="Only Tensors created explicitly by the user"):
        copy.deepcopy(x * 2)


def test_tuple_of_index_tensors_backward(device):
    """The saved index keeps its tuple type (a list would mean another index, with a
    deprecation warning)."""
    x = leaf(fw, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device)
    rows = fw.tensor([0, 1, 1], device=device)
    cols = fw.tensor([2, 0, 2], device=device)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x[rows, cols].sum().backward()
    np.testing.assert_allclose(_np(x.grad), [[0.0, 0.0, 1.0], [1.0, 0.0, 1.0]])


def _misuse(T):
    """Common mistakes, each a function raising an error (same text in both libraries)."""
    def backward_twice():
        y = (T.ones(2, requires_grad=True) ** 2).sum()
        y.backward()
        y.backward()

    def modified_output():
        y = T.ones(2, requires_grad=True).exp()
        y.add_(1)
        y.sum().backward()

    def modified_input():
        y = T.ones(2, requires_grad=True) * 2
        z = y.sin()
        y.add_(1)
        z.sum().backward()

    x = T.ones(2, requires_grad=True)
    return {
        "backward_twice": backward_twice,
        "modified_output": modified_output,
        "modified_input": modified_input,
        "int_factory": lambda: T.tensor([1, 2], requires_grad=True),
        "int_requires_grad_": lambda: T.ones(2, dtype=T.int64).requires_grad_(),
        "unused_input": lambda: T.autograd.grad((x * 2).sum(), [T.ones(2, requires_grad=True)]),
        "non_scalar": lambda: T.autograd.grad(x * 2, x),
        "no_grad_output": lambda: T.ones(2).backward(),
        "leaf_inplace": lambda: T.ones(2, requires_grad=True).add_(1),
        "float_of_many": lambda: float(T.ones(2)),
        "item_of_many": lambda: T.ones(2).item(),
    }


@pytest.mark.parametrize("case", sorted(_misuse(fw)))
def test_misuse_errors_match_torch(case):
    with pytest.raises(Exception) as ours:
        _misuse(fw)[case]()
    with pytest.raises(Exception) as theirs:
        _misuse(torch)[case]()
    assert type(ours.value) is type(theirs.value)
    assert str(ours.value).replace("framework", "torch") == str(theirs.value)


INPLACE_VIEWS = {
    "transpose_": lambda b: b.transpose_(0, 1),
    "t_": lambda b: b.t_(),
    "squeeze_": lambda b: b.unsqueeze_(0).squeeze_(0),
    "unsqueeze_": lambda b: b.unsqueeze_(1),
    "tril_": lambda b: b.tril_(),
    "triu_": lambda b: b.triu_(1),
    "as_strided_": lambda b: b.as_strided_((2, 2), (1, 3)),
}


@pytest.mark.parametrize("name", sorted(INPLACE_VIEWS))
def test_inplace_methods_with_self_are_recorded(name, device):
    """In-place methods whose implementation names its first argument ``self`` (the
    schema says ``input``) record like the others."""
    a = np.arange(12.0).reshape(3, 4) / 5 + 0.5
    grads = []
    for T in (fw, torch):
        x = leaf(T, a, device if T is fw else "cpu")
        b = x * 1
        INPLACE_VIEWS[name](b)
        w = T.arange(1.0, b.numel() + 1, dtype=T.float64).reshape(b.shape)
        g, = T.autograd.grad((b * w.to(b.device)).sum(), x)
        grads.append(_np(g) if T is fw else g.numpy())
    np.testing.assert_allclose(grads[0], grads[1])


def test_every_inplace_variant_with_a_formula_records():
    from framework._ops import dispatcher
    for name, op in dispatcher.load().items():
        if op.inplace_fn is not None and op.derivatives:
            assert getattr(op.inplace_fn, "__wrapped__", None) is not None, name


def test_max_min_other_keyword_errors():
    a, b = fw.ones(3), fw.zeros(3)
    np.testing.assert_allclose(fw.max(a, other=b).numpy(), [1.0, 1.0, 1.0])
    np.testing.assert_allclose(a.min(other=b).numpy(), [0.0, 0.0, 0.0])
    with pytest.raises(TypeError, match="invalid combination of arguments"):
        fw.max(a, 0, other=b)
    with pytest.raises(TypeError, match="argument 'other' must be Tensor"):
        fw.min(a, other=2.0)


@pytest.mark.parametrize("shape,dim,correction", [((0, 3), 0, 0), ((0, 3), 0, 1),
                                                  ((1,), None, 1), ((2, 1), 1, 1)])
def test_var_backward_without_degrees_of_freedom(shape, dim, correction):
    """var's gradient where n - correction <= 0 (empty or single-element reductions) is
    torch's: an empty gradient, or nan; never a ZeroDivisionError."""
    a = np.arange(float(np.prod(shape))).reshape(shape) + 1
    t = torch.tensor(a, requires_grad=True)
    f = fw.tensor(a, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t.var(dim, correction=correction).sum().backward()
        f.var(dim, correction=correction).sum().backward()
    np.testing.assert_array_equal(f.grad.numpy(), t.grad.numpy())


@pytest.mark.parametrize("needs", [(True, True, True), (True, False, False),
                                   (False, True, True), (False, False, True)])
def test_layer_norm_backward_one_call_with_grad_input_mask(device, needs, monkeypatch):
    """The three formulas of native_layer_norm index one call: it runs once, with the mask
    of the inputs that need a gradient, and the gradients equal PyTorch's."""
    from framework._ops import norm
    calls = []
    real = norm._rows_backward

    def counted(*args):
        calls.append(tuple(args[-1]))
        return real(*args)
    monkeypatch.setattr(norm, "_rows_backward", counted)
    rng = np.random.default_rng(0)
    vals = [rng.standard_normal(s) for s in ((3, 5), (5,), (5,))]
    grads = {}
    for T in (fw, torch):
        ts = [T.tensor(v, dtype=T.float64, requires_grad=n) for v, n in zip(vals, needs)]
        if T is fw:
            ts = [t.to(device).detach().requires_grad_(n) for t, n in zip(ts, needs)]
        y = T.nn.functional.layer_norm(ts[0], (5,), ts[1], ts[2])
        (y * T.arange(15, dtype=T.float64, device=y.device).reshape(3, 5)).sum().backward()
        grads[T] = [None if t.grad is None else _np(t.grad) for t in ts]
    assert calls == [needs]
    for g, r in zip(grads[fw], grads[torch]):
        assert (g is None) == (r is None)
        if g is not None:
            np.testing.assert_allclose(g, r, rtol=1e-10, atol=1e-12)


def test_shared_calls_only_for_whole_subscripts():
    from framework.autograd.codegen import _shared_calls
    shared = _shared_calls(["f(x, m)[0]", "f(x, m)[1]", "g(x)[0]", "a if c else f(x, m)[2]",
                            "h(y)[k]"])
    assert shared == {"f(x, m)[0]": "_call0", "f(x, m)[1]": "_call0"}


def test_inputs_without_a_formula_do_not_make_the_result_require_grad(device):
    """view_as/reshape_as/expand_as read only the other tensor's shape: as in PyTorch, the
    result requires grad only through self."""
    p = fw.zeros(2, 3, device=device, requires_grad=True)
    x = fw.ones(6, device=device)
    assert not x.view_as(p).requires_grad
    assert not x.reshape_as(p).requires_grad
    assert not fw.ones(1, 3, device=device).expand_as(p).requires_grad
    y = fw.arange(6.0, device=device).requires_grad_()
    (y.view_as(p) * fw.arange(6.0, device=device).view(2, 3)).sum().backward()
    np.testing.assert_array_equal(y.grad.cpu().numpy(), np.arange(6.0))
    assert p.grad is None
