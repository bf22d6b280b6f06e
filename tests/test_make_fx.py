"""framework.fx.experimental.proxy_tensor.make_fx against torch's make_fx as the oracle: the
placeholders, the values the traced graph computes on new inputs, what is specialized into
the graph and what raises."""
import numpy as np
import pytest

import framework as fw
from framework.fx import GraphModule
from framework.fx.experimental.proxy_tensor import make_fx

torch = pytest.importorskip("torch")
from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx  # noqa: E402


def _np(t):
    return t.detach().cpu().numpy()


def _placeholders(gm):
    return [n.name for n in gm.graph.nodes if n.op == "placeholder"]


def _ops(gm):
    return [n for n in gm.graph.nodes if n.op in ("call_function", "call_method")]


def _both(fn_of_lib, *arrays, device="cpu", extra=()):
    """(framework GraphModule, torch GraphModule) of ``fn_of_lib(lib)`` traced on
    ``arrays``, and the inputs used."""
    fw_in = [fw.tensor(a, device=device) for a in arrays]
    t_in = [torch.tensor(a) for a in arrays]
    return (make_fx(fn_of_lib(fw))(*fw_in, *extra),
            torch_make_fx(fn_of_lib(torch))(*t_in, *extra))


def test_trace_function(device):
    def f_of(lib):
        def f(a, n):
            b = a + 1
            c = b.view(-1)
            c.add_(n)        # through the view: b changes too
            return b * a.shape[0], lib.arange(3, device=a.device)
        return f
    x = np.random.randn(2, 3).astype(np.float32)
    gm, ref = _both(f_of, x, device=device, extra=(2,))
    assert isinstance(gm, GraphModule) and "def forward(self, a_1, n_1)" in gm.code
    assert _placeholders(gm) == _placeholders(ref) == ["a_1", "n_1"]
    # a new input of the traced shape: the same values as torch's graph; n and the size
    # read from a.shape were specialized (2 and 2), as in torch
    x2 = np.random.randn(2, 3).astype(np.float32)
    out, want = gm(fw.tensor(x2, device=device), 5), ref(torch.tensor(x2), 5)
    assert isinstance(out, tuple) and len(out) == 2
    for o, w in zip(out, want):
        np.testing.assert_allclose(_np(o), w.numpy(), rtol=1e-6)
    assert out[0].device.type == device and out[1].device.type == device
    # the op made without traced inputs is a node of the graph (made on every call)
    assert any("arange" in str(n.target) for n in _ops(gm))


def test_varargs_modules_and_closures():
    w = np.random.randn(3, 4).astype(np.float32)

    def g_of(lib):
        const = lib.tensor(w)
        return lambda *xs: (xs[0] @ const).relu() - xs[1].sum()
    x, y = np.random.randn(2, 3).astype(np.float32), np.random.randn(4).astype(np.float32)
    gm, ref = _both(g_of, x, y)
    assert _placeholders(gm) == _placeholders(ref) == ["arg0_1", "arg1_1"]
    x2, y2 = np.random.randn(2, 3).astype(np.float32), np.random.randn(4).astype(np.float32)
    np.testing.assert_allclose(_np(gm(fw.tensor(x2), fw.tensor(y2))),
                               ref(torch.tensor(x2), torch.tensor(y2)).numpy(), rtol=1e-5,
                               atol=1e-5)
    # a module is traced through (no call_module node); its parameters are read as
    # attributes of the graph module
    tm = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.ReLU(), torch.nn.Linear(5, 2))
    m = fw.nn.Sequential(fw.nn.Linear(3, 5), fw.nn.ReLU(), fw.nn.Linear(5, 2))
    m.load_state_dict({k: fw.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    gm = make_fx(m)(fw.tensor(x))
    assert not any(n.op == "call_module" for n in gm.graph.nodes)
    assert sum(n.op == "get_attr" for n in gm.graph.nodes) == 4
    np.testing.assert_allclose(_np(gm(fw.tensor(x2))),
                               torch_make_fx(tm)(torch.tensor(x))(torch.tensor(x2))
                               .detach().numpy(), rtol=1e-5, atol=1e-5)
    # modules holding their op as a class attribute (Conv2d._FN) are traced through too
    tc, c = torch.nn.Conv2d(2, 3, 3, padding=1), fw.nn.Conv2d(2, 3, 3, padding=1)
    c.load_state_dict({k: fw.tensor(v.detach().numpy()) for k, v in tc.state_dict().items()})
    img, img2 = np.random.randn(2, 2, 4, 5).astype(np.float32), \
        np.random.randn(2, 2, 4, 5).astype(np.float32)
    np.testing.assert_allclose(_np(make_fx(c)(fw.tensor(img))(fw.tensor(img2))),
                               torch_make_fx(tc)(torch.tensor(img))(torch.tensor(img2))
                               .detach().numpy(), rtol=1e-4, atol=1e-5)
    # functionalize(f) traces (the wrapper's signature is f's)
    fgm = make_fx(fw.func.functionalize(lambda a: a.view(-1) * 2))(fw.tensor(x))
    assert _placeholders(fgm) == ["a_1"]
    np.testing.assert_allclose(_np(fgm(fw.tensor(x2))), (x2 * 2).reshape(-1))


def test_errors():
    def branchy(x):
        if x.sum() > 0:
            return x * 2
        return x
    with pytest.raises(RuntimeError, match="data-dependent control flow"):
        torch_make_fx(branchy)(torch.ones(2))
    with pytest.raises(RuntimeError, match="data-dependent control flow"):
        make_fx(branchy)(fw.ones(2))
    with pytest.raises(RuntimeError, match="data-dependent"):
        make_fx(lambda x: x * x.sum().item())(fw.ones(2))
    bad_mode = "tracing_mode must be real/fake/symbolic, got bogus"
    with pytest.raises(AssertionError, match=bad_mode):
        torch_make_fx(branchy, tracing_mode="bogus")
    with pytest.raises(AssertionError, match=bad_mode):
        make_fx(branchy, tracing_mode="bogus")
    # the trace leaves no patches behind: eager ops run as before
    assert fw.add(fw.ones(2), 1).tolist() == [2.0, 2.0]
