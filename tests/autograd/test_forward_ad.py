"""framework.autograd.forward_ad (make_dual / unpack_dual in a dual_level, computed as
reverse-over-reverse) against torch.autograd.forward_ad on the same functions."""
import numpy as np
import pytest

import framework as fw
import framework.autograd.forward_ad as fwAD

torch = pytest.importorskip("torch")
tAD = torch.autograd.forward_ad

RNG = np.random.default_rng(0)


def _arr(*shape):
    return RNG.standard_normal(shape)


def _np(t):
    return t.detach().cpu().numpy()


def _both(T, AD, fn, primals, tangents, device=None):
    """fn's output and tangent in library T for duals of ``primals`` with ``tangents``."""
    kw = {"device": device} if T is fw else {}
    with AD.dual_level():
        duals = [AD.make_dual(T.tensor(p, **kw), T.tensor(t, **kw))
                 for p, t in zip(primals, tangents)]
        out = fn(T, *duals)
        p, t = AD.unpack_dual(out)
    return _np(p), (None if t is None else _np(t))


def _check(fn, primals, tangents, device, rtol=1e-9, atol=1e-10):
    ours = _both(fw, fwAD, fn, primals, tangents, device)
    theirs = _both(torch, tAD, fn, primals, tangents)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=rtol, atol=atol)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=rtol, atol=atol)


def test_pointwise_chain(device):
    x, t = _arr(5, 3), _arr(5, 3)
    _check(lambda T, d: (d.sin() * d).exp() / (1 + d * d) - d.tanh(), [x], [t], device)


def test_matmul_and_broadcasting(device):
    a, b, c = _arr(4, 3), _arr(3, 5), _arr(5)
    ta, tb, tc = _arr(4, 3), _arr(3, 5), _arr(5)
    _check(lambda T, a, b, c: (a @ b) * c + c.exp(), [a, b, c], [ta, tb, tc], device)


def test_softmax_and_layer_norm(device):
    x, t = _arr(3, 17), _arr(3, 17)
    w, tw = _arr(17), _arr(17)
    _check(lambda T, x, w: T.nn.functional.layer_norm(x.softmax(-1) * 3, (17,), weight=w),
           [x, w], [t, tw], device)


def test_several_duals_one_level(device):
    """Each dual contributes its tangent: J_x tx + J_y ty."""
    x, y, tx, ty = _arr(6), _arr(6), _arr(6), _arr(6)
    _check(lambda T, x, y: x * y.cos() + y, [x, y], [tx, ty], device)


def test_linear_gelu_model(device):
    """``model(make_dual(x, t))``: a module's weights require grad, ours keep a graph."""
    w1, b1, w2, b2 = _arr(8, 4), _arr(8), _arr(3, 8), _arr(3)
    x, t = _arr(2, 4), _arr(2, 4)
    got = {}
    for T, AD in ((fw, fwAD), (torch, tAD)):
        kw = {"device": device} if T is fw else {}
        model = T.nn.Sequential(T.nn.Linear(4, 8), T.nn.GELU(), T.nn.Linear(8, 3)).double()
        with T.no_grad():
            for p, v in zip(model.parameters(), (w1, b1, w2, b2)):
                p.copy_(T.tensor(v))
        model = model.to(device) if T is fw else model
        with AD.dual_level():
            out = model(AD.make_dual(T.tensor(x, **kw), T.tensor(t, **kw)))
            p, tan = AD.unpack_dual(out)
            got[T] = (_np(p), _np(tan), p.requires_grad)
    np.testing.assert_allclose(got[fw][0], got[torch][0], rtol=1e-9)
    np.testing.assert_allclose(got[fw][1], got[torch][1], rtol=1e-9)
    assert got[fw][2] == got[torch][2] is True


def test_inplace_on_non_dual_tensor(device):
    x, t = _arr(4), _arr(4)

    def fn(T, d):
        kw = {"device": device} if T is fw else {}
        z = T.zeros(4, dtype=T.float64, **kw)
        z.add_(d * 2)
        z[1] = d[0] * 3
        return z
    _check(fn, [x], [t], device)


def test_unrelated_tensors_have_no_tangent(device):
    x = fw.tensor(_arr(3), device=device)
    other = fw.tensor(_arr(3), device=device)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, fw.ones(3, dtype=fw.float64, device=device))
        y = d * 2
        assert fwAD.unpack_dual(other * 3).tangent is None
        assert fwAD.unpack_dual(y.detach()).tangent is None
        w = fw.ones(3, dtype=fw.float64, device=device, requires_grad=True)
        assert fwAD.unpack_dual(w * 2).tangent is None       # reverse-mode only
        p, tan = fwAD.unpack_dual(y)
        assert not p.requires_grad and p is not y
        np.testing.assert_allclose(_np(tan), 2.0)
        assert fwAD.unpack_dual(y).tangent is tan            # cached
        assert fwAD.unpack_dual(d).tangent is not None
        np.testing.assert_allclose(_np(fwAD.unpack_dual(d).primal), _np(x))
    # the level is gone: no tangents, the dual is a plain alias again
    assert fwAD.unpack_dual(y).tangent is None
    assert not d.requires_grad


def test_cache_follows_inplace_updates(device):
    with fwAD.dual_level():
        d = fwAD.make_dual(fw.tensor([1.0, 2.0], device=device), fw.ones(2, device=device))
        y = d * 2
        np.testing.assert_allclose(_np(fwAD.unpack_dual(y).tangent), [2.0, 2.0])
        y.mul_(d)        # y = 2 d^2: tangent 4 d
        np.testing.assert_allclose(_np(fwAD.unpack_dual(y).tangent), [4.0, 8.0])


def test_levels_and_errors(device):
    x = fw.randn(3, device=device)
    with pytest.raises(RuntimeError, match="no level exists, make sure to enter_dual_level"):
        fwAD.make_dual(x, fw.ones(3, device=device))
    assert fwAD.unpack_dual(x) == (x, None)
    with fwAD.dual_level() as level:
        assert level == 0
        with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported"):
            fwAD.enter_dual_level()
        with pytest.raises(RuntimeError, match=r"different size than that of the original "
                           r"Tensor.*Tensor is of size \[3\] while the given forward "
                           r"gradient is of size \[4\]\."):
            fwAD.make_dual(x, fw.ones(4, device=device))
        with pytest.raises(ValueError, match="Expected primal to be floating point or "
                           "complex, but got: framework.int64"):
            fwAD.make_dual(x.long(), fw.ones(3, device=device))
        with pytest.raises(ValueError, match="Expected tangent to be floating point"):
            fwAD.make_dual(x, fw.ones(3, dtype=fw.int64, device=device))
        d = fwAD.make_dual(x, fw.ones(3, device=device))
        with pytest.raises(RuntimeError, match="already has a forward gradient at the same "
                           "level 0 is not supported"):
            fwAD.make_dual(d * 2, fw.ones(3, device=device))
        with pytest.raises(RuntimeError, match="not the last one that was created"):
            fwAD.exit_dual_level(level=3)
    with pytest.raises(RuntimeError, match="Dual level must be a positive number"):
        fwAD.exit_dual_level()
    assert fwAD.enter_dual_level() == 0
    fwAD.exit_dual_level(level=0)


def test_torch_names():
    assert fw.autograd.forward_ad is fwAD
    assert fwAD.UnpackedDualTensor._fields == ("primal", "tangent")
    assert sorted(fwAD.__all__) == sorted(tAD.__all__)
    # the error texts checked above are torch's
    with pytest.raises(RuntimeError, match="no level exists, make sure to enter_dual_level"):
        tAD.make_dual(torch.randn(3), torch.randn(3))
