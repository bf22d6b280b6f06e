"""torch.autograd.graph's tools: saved tensor hooks (save_on_cpu), gradient edges,
increment_version; and the legacy Variable."""
import numpy as np
import pytest

import framework as fw

torch = pytest.importorskip("torch")

X = [0.5, 1.0, 2.0]
W = [1.5, -1.0, 0.25]


def _np(t):
    return t.detach().cpu().numpy()


def _hooked(T, device, pack, unpack):
    kw = {"device": device} if T is fw else {}
    x = T.tensor(X, dtype=T.float64, requires_grad=True, **kw)
    w = T.tensor(W, dtype=T.float64, requires_grad=True, **kw)
    with T.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = (x.sin() * w).exp().sum()     # saves an input (sin), two (mul), an output (exp)
    return T.autograd.grad(y, [x, w])


def test_saved_tensors_hooks_are_used_as_in_torch(device):
    """A pack hook that changes what is saved changes the gradient the same way in both
    libraries: the hooks see the same saved tensors."""
    calls = {fw: 0, torch: 0}

    def make(T):
        def pack(t):
            calls[T] += 1
            return t * 2

        return pack, lambda t: t

    ours = _hooked(fw, device, *make(fw))
    theirs = _hooked(torch, None, *make(torch))
    assert calls[fw] == calls[torch] == 4
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(_np(a), b.numpy(), rtol=1e-12)


def test_identity_hooks_and_function_saves(device):
    hooked = _hooked(fw, device, lambda t: t, lambda t: t)
    x = fw.tensor(X, dtype=fw.float64, device=device, requires_grad=True)
    w = fw.tensor(W, dtype=fw.float64, device=device, requires_grad=True)
    bare = fw.autograd.grad((x.sin() * w).exp().sum(), [x, w])
    for a, b in zip(hooked, bare):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-15)
    x = fw.tensor(X, dtype=fw.float64, device=device, requires_grad=True)

    class Cube(fw.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a ** 3

        @staticmethod
        def backward(ctx, g):
            a, = ctx.saved_tensors
            return 3 * a * a * g

    packed = []
    with fw.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or len(packed) - 1,
                                               lambda i: packed[i]):
        y = Cube.apply(x).sum()
    assert len(packed) == 1
    g, = fw.autograd.grad(y, x)
    np.testing.assert_allclose(_np(g), 3 * np.array(X) ** 2)


def test_save_on_cpu(device):
    seen = []
    x = fw.tensor(X, dtype=fw.float64, device=device, requires_grad=True)
    hooks = fw.autograd.graph.save_on_cpu()
    pack, unpack = hooks.pack_hook, hooks.unpack_hook
    hooks.pack_hook = lambda t: seen.append(pack(t)[1].device.type) or pack(t)
    with hooks:
        y = (x.exp() * x).sum()
    assert seen and set(seen) == {"cpu"}
    g, = fw.autograd.grad(y, x)
    assert g.device == x.device
    np.testing.assert_allclose(_np(g), np.exp(X) * (np.array(X) + 1), rtol=1e-12)


def test_disable_saved_tensors_hooks():
    with fw.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
        with pytest.raises(RuntimeError, match="no hooks here"):
            with fw.autograd.graph.save_on_cpu():
                pass
    with fw.autograd.graph.save_on_cpu():      # allowed again outside
        pass


def test_unpack_hook_must_return_a_tensor():
    x = fw.tensor(X, dtype=fw.float64, requires_grad=True)
    with fw.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: 3.0):
        y = x.sin().sum()
    with pytest.raises(TypeError, match="unpack_hook expected to be a Tensor"):
        y.backward()


def test_gradient_edges(device):
    x = fw.tensor(X, dtype=fw.float64, device=device, requires_grad=True)
    h = x.exp()
    y = (h * 2).sum()
    edge = fw.autograd.graph.get_gradient_edge(h)
    assert edge.node is h.grad_fn and edge.output_nr == 0
    leaf_edge = fw.autograd.graph.get_gradient_edge(x)
    assert leaf_edge.node.name() == "torch::autograd::AccumulateGrad"
    gh, gx = fw.autograd.grad(y, [edge, x])
    np.testing.assert_allclose(_np(gh), [2.0, 2.0, 2.0])
    np.testing.assert_allclose(_np(gx), 2 * np.exp(X))
    with pytest.raises(RuntimeError, match="does not require gradients"):
        fw.autograd.graph.get_gradient_edge(fw.ones(2))


def test_increment_version_invalidates_saved_tensors():
    x = fw.tensor(X, dtype=fw.float64, requires_grad=True)
    h = x * 1
    y = h.sin().sum()
    before = h._version
    fw.autograd.graph.increment_version(h)
    assert h._version == before + 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_variable_is_the_tensor():
    t = fw.ones(2)
    v = fw.autograd.Variable(t, requires_grad=True)
    assert v is t and v.requires_grad
    assert isinstance(fw.zeros(1), fw.autograd.Variable)
    assert not isinstance(3.0, fw.autograd.Variable)
