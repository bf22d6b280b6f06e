"""The autograd engine: graph fields, accumulation, errors, hooks, grad modes, in-place
rules, freeing, and long chains."""
import gc
import weakref

import numpy as np
import pytest

import framework as fw


def leaf(values, device="cpu"):
    return fw.tensor(values, dtype=fw.float64, device=device, requires_grad=True)


def test_graph_fields(device):
    x = leaf([1.0, 2.0], device)
    y = x * 2
    assert x.is_leaf and not y.is_leaf and y.requires_grad
    assert y.grad_fn.name() == "MulBackward0"
    fn, nr = y.grad_fn.next_functions[0]
    assert fn.name() == "torch::autograd::AccumulateGrad" and fn.variable is x and nr == 0
    z = y.detach()
    assert z.grad_fn is None and not z.requires_grad
    assert fw.tensor([1]).is_leaf


def test_accumulation_and_fan_in(device):
    x = leaf([1.0, 2.0, 3.0], device)
    y = x * x + x.sin() * x          # x used four times
    y.sum().backward()
    xs = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(x.grad.cpu().numpy(), 2 * xs + np.cos(xs) * xs + np.sin(xs))
    (x * 3).sum().backward()          # accumulates into .grad
    np.testing.assert_allclose(x.grad.cpu().numpy(),
                               2 * xs + np.cos(xs) * xs + np.sin(xs) + 3)


def test_backward_errors():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
        (x * 2).backward()
    with pytest.raises(RuntimeError, match="does not require grad and does not have a grad_fn"):
        fw.tensor([1.0]).sum().backward()
    y = (x * 2).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        (x * 2).backward(fw.ones(3, dtype=fw.float64))


def test_retain_graph_and_gradient_arg():
    x = leaf([1.0, 2.0])
    y = x.exp()
    y.backward(fw.tensor([1.0, 0.5], dtype=fw.float64), retain_graph=True)
    y.backward(fw.tensor([1.0, 0.5], dtype=fw.float64))
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([1.0, 2.0]) * [1.0, 0.5])


def test_autograd_grad_options():
    x, z = leaf([1.0, 2.0]), leaf([3.0])
    y = (x ** 2).sum()
    (g,) = fw.autograd.grad(y, x, retain_graph=True)
    np.testing.assert_allclose(g.numpy(), [2.0, 4.0])
    assert x.grad is None                      # grad() does not accumulate
    with pytest.raises(RuntimeError, match="appears to not have been used"):
        fw.autograd.grad(y, [x, z], retain_graph=True)
    g = fw.autograd.grad(y, [x, z], retain_graph=True, allow_unused=True)
    assert g[1] is None
    g = fw.autograd.grad(y, [x, z], materialize_grads=True)
    np.testing.assert_allclose(g[1].numpy(), [0.0])
    with pytest.raises(RuntimeError, match="does not require grad"):
        fw.autograd.grad((x * 2).sum(), fw.ones(2))


def test_backward_inputs_only():
    a, b = leaf([1.0]), leaf([2.0])
    (a * b).sum().backward(inputs=[a])
    assert b.grad is None
    np.testing.assert_allclose(a.grad.numpy(), [2.0])


def test_non_leaf_grad_and_retain_grad():
    x = leaf([1.0, 2.0])
    y = x * 3
    y.retain_grad()
    assert y.retains_grad
    (y * y).sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), [6.0, 12.0])
    np.testing.assert_allclose(x.grad.numpy(), [18.0, 36.0])


def test_double_backward_create_graph(device):
    x = leaf([0.5, 1.5], device)
    y = (x ** 3).sum()
    (g,) = fw.autograd.grad(y, x, create_graph=True)
    assert g.requires_grad
    (h,) = fw.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.cpu().numpy(), 6 * np.array([0.5, 1.5]))
    # gradient penalty style: backward through a gradient into a leaf's .grad
    x.grad = None
    (g2,) = fw.autograd.grad((x.sin() * x).sum(), x, create_graph=True)
    (g2 ** 2).sum().backward()
    xs = np.array([0.5, 1.5])
    d1 = np.sin(xs) + xs * np.cos(xs)
    d2 = 2 * np.cos(xs) - xs * np.sin(xs)
    np.testing.assert_allclose(x.grad.cpu().numpy(), 2 * d1 * d2)


def test_tensor_hooks():
    x = leaf([1.0, 2.0])
    seen = []
    h = x.register_hook(lambda g: seen.append(g.clone()) or g * 2)
    y = x * 3
    y.register_hook(lambda g: g + 1)
    y.sum().backward()
    np.testing.assert_allclose(seen[0].numpy(), [6.0, 6.0])
    np.testing.assert_allclose(x.grad.numpy(), [12.0, 12.0])
    h.remove()
    x.grad = None
    (x * 1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 1.0])
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        fw.ones(2).register_hook(lambda g: g)


def test_post_accumulate_and_node_hooks():
    x = leaf([1.0])
    calls = []
    x.register_post_accumulate_grad_hook(lambda t: calls.append(t.grad.item()))
    y = x * 5
    pre = y.grad_fn.register_prehook(lambda gouts: (gouts[0] * 10,))
    post = y.grad_fn.register_hook(lambda gin, gout: calls.append("node"))
    y.sum().backward()
    assert calls == ["node", 50.0]
    pre.remove()
    post.remove()
    with pytest.raises(RuntimeError, match="non-leaf"):
        y.register_post_accumulate_grad_hook(lambda t: None)


def test_grad_modes():
    x = leaf([1.0])
    with fw.no_grad():
        assert not (x * 2).requires_grad
        with fw.enable_grad():
            assert (x * 2).requires_grad
    assert fw.is_grad_enabled()

    @fw.no_grad()
    def f(t):
        return t * 2
    assert not f(x).requires_grad

    @fw.no_grad
    def f2(t):
        return t * 2
    assert not f2(x).requires_grad
    fw.set_grad_enabled(False)
    assert not fw.is_grad_enabled()
    fw.set_grad_enabled(True)
    with fw.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    with fw.inference_mode():
        assert not (x * 2).requires_grad and fw.is_inference_mode_enabled()
    assert (x * 2).requires_grad


def test_inplace_rules():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x.add_(1)
    y = x * 2
    y.add_(1)                         # in-place on a non-leaf: history is rebased
    assert y.grad_fn.name() == "AddBackward0"
    y.mul_(fw.tensor([3.0, 4.0], dtype=fw.float64))
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 8.0])
    y = x * 2
    y.mul_(y.detach())                # mul_ saves its argument, which mul_ itself modifies
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    z = x.exp()
    w = z * 1
    z.add_(1)                          # exp saved its output: modified -> error
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()
    with pytest.raises(RuntimeError, match="out=... arguments don't support automatic"):
        fw.add(x, 1, out=fw.empty(2, dtype=fw.float64))
    del w


def test_setitem_records():
    x = leaf([1.0, 2.0, 3.0])
    y = x * 1
    y[1] = x[0] * 10
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [11.0, 0.0, 1.0])


def test_long_chain_is_iterative():
    x = leaf([1.0])
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0])


def test_graph_freed_after_backward():
    x = leaf([1.0, 2.0])
    y = x.exp()
    node = weakref.ref(y.grad_fn)
    s = y.sum()
    s.backward()
    assert y.grad_fn._saved is None   # saved tensors released
    del y, s
    gc.collect()
    assert node() is None


def test_function_extension(device):
    class Square(fw.autograd.Function):
        @staticmethod
        def forward(ctx, a, k):
            ctx.save_for_backward(a)
            ctx.k = k
            return a * a * k

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            assert ctx.needs_input_grad == (True, False)
            return 2 * a * g * ctx.k, None

    x = leaf([1.0, 3.0], device)
    y = Square.apply(x, 2.0)
    assert y.grad_fn.name() == "SquareBackward"
    (g,) = fw.autograd.grad(y.sum(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().cpu().numpy(), [4.0, 12.0])
    (h,) = fw.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.cpu().numpy(), [4.0, 4.0])

    class Bad(fw.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 1

        @staticmethod
        def backward(ctx, g):
            return g, g

    with pytest.raises(RuntimeError, match="incorrect number of gradients"):
        Bad.apply(x).sum().backward()


def test_function_non_differentiable_and_once():
    class SortIdx(fw.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            v, i = a.sort()
            ctx.mark_non_differentiable(i)
            ctx.save_for_backward(i)
            return v, i

        @staticmethod
        @fw.autograd.once_differentiable
        def backward(ctx, gv, gi):
            (i,) = ctx.saved_tensors
            return gv.new_zeros(gv.shape).scatter(0, i, gv)

    x = leaf([3.0, 1.0, 2.0])
    v, i = SortIdx.apply(x)
    assert not i.requires_grad and v.requires_grad
    (v * fw.tensor([1.0, 2.0, 3.0], dtype=fw.float64)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 1.0, 2.0])


def test_functional_api():
    F = fw.autograd.functional

    def f(a):
        return (a ** 3).sum()

    x = fw.tensor([1.0, 2.0], dtype=fw.float64)
    np.testing.assert_allclose(F.jacobian(lambda a: a ** 2, x).numpy(), np.diag([2.0, 4.0]))
    np.testing.assert_allclose(F.hessian(f, x).numpy(), np.diag([6.0, 12.0]))
    v = fw.tensor([1.0, -1.0], dtype=fw.float64)
    _, hv = F.hvp(f, x, v)
    np.testing.assert_allclose(hv.numpy(), [6.0, -12.0])
    _, vj = F.vjp(lambda a: a ** 2, x, v)
    np.testing.assert_allclose(vj.numpy(), [2.0, -4.0])
    _, jv = F.jvp(lambda a: a ** 2, x, v)
    np.testing.assert_allclose(jv.numpy(), [2.0, -4.0])


def test_anomaly_mode_names_forward_line():
    x = leaf([0.0, 1.0])
    with fw.autograd.detect_anomaly():
        y = x.sqrt()          # the line the error must show
        with pytest.raises(RuntimeError) as e:
            (y * 0).sum().backward()   # sqrt's backward: 0 * inf, NaN
    msg = str(e.value)
    assert "SqrtBackward0" in msg and "nan values" in msg and "x.sqrt()" in msg


def test_inplace_on_view_rebases_base(device):
    x = leaf([1.0, 2.0, 3.0, 4.0], device)
    b = x * 1
    v = b[1:3]
    v.mul_(fw.tensor([10.0, 100.0], dtype=fw.float64, device=device))
    assert b.grad_fn.name() == "CopySlices"
    (b * fw.tensor([1.0, 2.0, 3.0, 4.0], dtype=fw.float64, device=device)).sum().backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), [1.0, 20.0, 300.0, 4.0])
    y = leaf([1.0, 2.0], device)
    with pytest.raises(RuntimeError, match="view of a leaf Variable"):
        y[0:1].add_(1)
    # a leaf that does not require grad, written through a view with a value that does
    z = fw.zeros(3, dtype=fw.float64, device=device)
    w = leaf([5.0], device)
    z[1:2].copy_(w * 2)
    z.sum().backward()
    np.testing.assert_allclose(w.grad.cpu().numpy(), [2.0])


def test_leaf_grad_takes_unshared_gradient_and_never_aliases(device):
    made = []

    class Double(fw.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            out = g * 2
            made.append(weakref.ref(out))
            return out

    x = leaf([1.0, 2.0], device)
    Double.apply(x).sum().backward()
    assert made[0]() is x.grad          # a gradient nothing else sees is taken, not copied
    # one gradient object reaching two leaves (add passes it through): each gets its own
    a, b = leaf([1.0, 2.0], device), leaf([3.0, 4.0], device)
    (a + b).sum().backward()
    assert a.grad.data_ptr() != b.grad.data_ptr()
    (a * 3 + b).sum().backward()        # in-place accumulation into a.grad leaves b.grad alone
    np.testing.assert_allclose(a.grad.cpu().numpy(), [4.0, 4.0])
    np.testing.assert_allclose(b.grad.cpu().numpy(), [2.0, 2.0])
    # the user's gradient passed straight through is copied, and views are copied
    c = leaf([1.0, 2.0], device)
    g = fw.ones(2, device=device)
    c.clone().backward(g)
    g.mul_(5)
    np.testing.assert_allclose(c.grad.cpu().numpy(), [1.0, 1.0])
    d = leaf([[1.0, 2.0]], device)
    root = fw.ones(2, device=device)
    d.reshape(2).backward(root)
    root.mul_(7)
    np.testing.assert_allclose(d.grad.cpu().numpy(), [[1.0, 1.0]])


def test_ready_nodes_run_most_recent_first():
    # PyTorch's order: of the nodes whose gradients are all in, the one created last runs
    # first (the engine keeps them in a heap by creation order, native/engine.cpp)
    x = leaf([0.5, 1.0])
    y = x * 2
    a, b, c = y.sin(), y.cos(), y.exp()   # all three become ready together
    order = []
    for t, name in ((a, "sin"), (b, "cos"), (c, "exp"), (y, "mul")):
        t.grad_fn.register_prehook(lambda g, name=name: order.append(name))
    (a + b + c).sum().backward()
    assert order == ["exp", "cos", "sin", "mul"]
    xs = np.array([0.5, 1.0])
    np.testing.assert_allclose(x.grad.numpy(),
                               2 * (np.cos(2 * xs) - np.sin(2 * xs) + np.exp(2 * xs)))


def test_error_inside_a_node_leaves_nothing_behind():
    class Boom(fw.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t * 1.0

        @staticmethod
        def backward(ctx, g):
            raise ValueError("boom in backward")

    x = leaf([1.0, 2.0])
    y = x.exp()
    ref = weakref.ref(y.grad_fn)
    s = (Boom.apply(y) + y).sum()
    with pytest.raises(ValueError, match="boom in backward"):
        s.backward()
    assert x.grad is None   # exp's node waited for Boom's gradient and never ran
    del y, s
    gc.collect()
    assert ref() is None    # the native loop held no node past the error
    (x * 3).sum().backward()   # and the next backward runs as usual
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])


def test_node_returning_none_gradients_and_unused_outputs():
    x = leaf([1.0, 2.0, 3.0, 4.0])
    p, q = x.split(2)         # a node with two outputs, one of whose gradients is absent
    (p * 5).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [5.0, 5.0, 0.0, 0.0])
    w = leaf([2.0])
    z = leaf([1.0])
    (w * z.detach()).sum().backward()   # an edge with no node: nothing flows there
    assert z.grad is None and w.grad.item() == 1.0
