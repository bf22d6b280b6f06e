"""Sequential, ModuleList, ModuleDict, ParameterList and ParameterDict against torch: the
same operations on the same trees give the same children, names, reprs, errors, outputs
and gradients."""
from collections import OrderedDict

import numpy as np
import pytest

import framework as fw
import framework.nn as fnn
from tests.helpers import assert_close
from tests.nn.common import compare_module, to_np

torch = pytest.importorskip("torch")
tnn = torch.nn

pytestmark = pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning",
                                        "ignore:divide by zero:RuntimeWarning",
                                        "ignore:overflow encountered:RuntimeWarning")


def norm(text):
    return str(text).replace("framework.", "torch.")


def both(fn):
    """``fn(nn, lib)`` run with the framework and with torch."""
    return fn(fnn, fw), fn(tnn, torch)


def raises_like(exc, f_fn, t_fn):
    with pytest.raises(exc) as want:
        t_fn()
    with pytest.raises(exc) as got:
        f_fn()
    assert norm(got.value) == norm(want.value)


def toy(nn):
    class Scale(nn.Module):
        def __init__(self, k):
            super().__init__()
            self.k = k

        def forward(self, x):
            return x * self.k

        def extra_repr(self):
            return f"k={self.k}"

    return Scale


F_Scale, T_Scale = toy(fnn), toy(tnn)


def names(m):
    return [(n, repr(c)) for n, c in m.named_children()]


def same(f, t):
    assert norm(repr(f)) == repr(t)
    assert [(n, norm(r)) for n, r in names(f)] == names(t)


# ---- Sequential ------------------------------------------------------------------------------

def test_sequential_forward_and_grads(device):
    torch.manual_seed(0)
    t = tnn.Sequential(tnn.Linear(5, 7), T_Scale(2.0), tnn.Linear(7, 3))
    f = fnn.Sequential(fnn.Linear(5, 7), F_Scale(2.0), fnn.Linear(7, 3))
    x = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)
    compare_module(torch, f, t, [x], device)
    compare_module(torch, f, t, [x[:1]], device)
    compare_module(torch, f, t, [x[:0]], device)
    # from an OrderedDict: the names are the keys
    t2 = tnn.Sequential(OrderedDict(lin=tnn.Linear(5, 3), sc=T_Scale(-1.0)))
    f2 = fnn.Sequential(OrderedDict(lin=fnn.Linear(5, 3), sc=F_Scale(-1.0)))
    assert [n for n, _ in f2.named_parameters()] == ["lin.weight", "lin.bias"]
    compare_module(torch, f2, t2, [x], device)
    assert f2.lin is f2[0] and f2.sc is f2[-1]
    # an empty Sequential is the identity
    e = fnn.Sequential()
    xe = fw.ones(2, device=device)
    assert e(xe) is xe and len(e) == 0


def test_sequential_indexing_and_editing():
    def build(nn, S):
        return nn.Sequential(S(0), S(1), S(2), S(3))

    f, t = build(fnn, F_Scale), build(tnn, T_Scale)
    same(f, t)
    assert f[0].k == 0 and f[-1].k == 3 and f[-4].k == 0
    for sl in (slice(1, 3), slice(None, None, -1), slice(None, None, 2), slice(5, 9)):
        fs, ts = f[sl], t[sl]
        assert type(fs) is fnn.Sequential
        same(fs, ts)
    raises_like(IndexError, lambda: f[4], lambda: t[4])
    raises_like(IndexError, lambda: f[-5], lambda: t[-5])
    raises_like(TypeError, lambda: f["a"], lambda: t["a"])
    f[1], t[1] = F_Scale(10), T_Scale(10)
    f[-1], t[-1] = F_Scale(30), T_Scale(30)
    same(f, t)
    del f[0], t[0]
    same(f, t)
    assert [n for n, _ in f.named_children()] == ["0", "1", "2"]
    del f[::2], t[::2]
    same(f, t)
    for m, S in ((f, F_Scale), (t, T_Scale)):
        m.append(S(4))
        m.insert(0, S(-1))
        m.insert(-1, S(-2))
        m.insert(len(m), S(99))
        m.extend([S(5), S(6)])
    same(f, t)
    assert f.pop(1).k == t.pop(1).k
    assert f.pop(-1).k == t.pop(-1).k
    same(f, t)
    raises_like(IndexError, lambda: f.insert(20, F_Scale(0)), lambda: t.insert(20, T_Scale(0)))
    raises_like(AssertionError, lambda: f.insert(0, 3), lambda: t.insert(0, 3))
    assert len(f) == len(t) and [m.k for m in f] == [m.k for m in t]
    assert "0" not in dir(f) and "append" in dir(f)


def test_sequential_arithmetic():
    f, t = both(lambda nn, lib: nn.Sequential(
        *(F_Scale(i) if nn is fnn else T_Scale(i) for i in range(2))))
    same(f + f, t + t)
    same(f * 3, t * 3)
    same(2 * f, 2 * t)
    assert (f * 2)[0] is f[0] and (f * 2)[2] is f[0]
    raises_like(ValueError, lambda: f + [1], lambda: t + [1])
    raises_like(ValueError, lambda: f * 0, lambda: t * 0)
    raises_like(TypeError, lambda: f * 1.5, lambda: t * 1.5)
    g, u = f[:], t[:]
    g += f
    u += t
    same(g, u)
    g *= 2
    u *= 2
    same(g, u)
    assert len(g) == 8
    raises_like(ValueError, lambda: g.__iadd__(3), lambda: u.__iadd__(3))
    raises_like(ValueError, lambda: g.__imul__(-1), lambda: u.__imul__(-1))


def test_sequential_shared_module_parameters_once():
    lin = fnn.Linear(2, 2)
    s = fnn.Sequential(lin, lin)
    tl = tnn.Linear(2, 2)
    ts = tnn.Sequential(tl, tl)
    assert [n for n, _ in s.named_parameters()] == [n for n, _ in ts.named_parameters()]
    assert list(s.state_dict()) == list(ts.state_dict())
    assert norm(repr(s)) == repr(ts)


# ---- ModuleList ------------------------------------------------------------------------------

def test_module_list_operations():
    def build(nn, S):
        return nn.ModuleList([S(0), S(1), S(2)])

    f, t = build(fnn, F_Scale), build(tnn, T_Scale)
    same(f, t)
    assert f[-1].k == 2 and len(f) == 3 and [m.k for m in f] == [0, 1, 2]
    same(f[1:], t[1:])
    assert type(f[::2]) is fnn.ModuleList
    raises_like(IndexError, lambda: f[3], lambda: t[3])
    for m, S in ((f, F_Scale), (t, T_Scale)):
        m.append(S(3))
        m.extend([S(4), S(5)])
        m += [S(6)]
        m.insert(1, S(-1))
        m[0] = S(100)
        m[-1] = S(60)
    same(f, t)
    assert f.pop(2).k == t.pop(2).k
    del f[0], t[0]
    del f[1:3], t[1:3]
    same(f, t)
    same(f + [F_Scale(7)], t + [T_Scale(7)])
    raises_like(TypeError, lambda: f.extend(3), lambda: t.extend(3))
    raises_like(TypeError, lambda: f.append(3), lambda: t.append(3))
    raises_like(NotImplementedError, lambda: f(1), lambda: t(1))
    same(fnn.ModuleList(), tnn.ModuleList())
    assert "0" not in dir(f)


def test_module_list_repr_compresses_repeats():
    def build(nn, S):
        return nn.ModuleList([S(1), S(1), S(1), S(2), S(1), S(1), nn.Sequential(S(3), S(3)),
                              nn.Sequential(S(3), S(3))])

    f, t = build(fnn, F_Scale), build(tnn, T_Scale)
    assert repr(f) == repr(t)
    assert "(0-2): 3 x Scale(k=1)" in repr(f) and "(4-5): 2 x Scale(k=1)" in repr(f)
    assert "(6-7): 2 x Sequential(\n    (0): Scale(k=3)" in repr(f)
    one_f, one_t = fnn.ModuleList([F_Scale(1)]), tnn.ModuleList([T_Scale(1)])
    assert repr(one_f) == repr(one_t)


def test_module_list_parameters_and_grads(device):
    torch.manual_seed(1)
    t = tnn.ModuleList([tnn.Linear(3, 3) for _ in range(3)])
    f = fnn.ModuleList([fnn.Linear(3, 3) for _ in range(3)])

    def run(m):
        def forward(x):
            for layer in m:
                x = layer(x)
            return x
        return forward

    class Wrap(tnn.Module):
        def __init__(self, ml):
            super().__init__()
            self.ml = ml

        def forward(self, x):
            return run(self.ml)(x)

    class FWrap(fnn.Module):
        def __init__(self, ml):
            super().__init__()
            self.ml = ml

        def forward(self, x):
            return run(self.ml)(x)

    x = np.random.default_rng(1).standard_normal((2, 3)).astype(np.float32)
    compare_module(torch, FWrap(f), Wrap(t), [x], device)
    assert [n for n, _ in FWrap(f).named_parameters()] == [
        n for n, _ in Wrap(t).named_parameters()]


# ---- ModuleDict ------------------------------------------------------------------------------

def test_module_dict_operations():
    def build(nn, S):
        return nn.ModuleDict({"b": S(1), "a": S(2)})

    f, t = build(fnn, F_Scale), build(tnn, T_Scale)
    same(f, t)
    assert list(f.keys()) == ["b", "a"] and "a" in f and "z" not in f and len(f) == 2
    assert [m.k for m in f.values()] == [1, 2] and [k for k in f] == ["b", "a"]
    assert [k for k, _ in f.items()] == ["b", "a"]
    for m, S in ((f, F_Scale), (t, T_Scale)):
        m["c"] = S(3)
        m.update([("d", S(4)), ("b", S(10))])
        m.update(OrderedDict(e=S(5)))
        del m["a"]
    same(f, t)
    assert f.pop("c").k == t.pop("c").k
    same(f, t)
    assert f["d"].k == 4
    raises_like(KeyError, lambda: f["zz"], lambda: t["zz"])
    raises_like(TypeError, lambda: f.update(3), lambda: t.update(3))
    raises_like(TypeError, lambda: f.update([3]), lambda: t.update([3]))
    raises_like(ValueError, lambda: f.update([("a", F_Scale(1), 2)]),
                lambda: t.update([("a", T_Scale(1), 2)]))
    raises_like(TypeError, lambda: f.__setitem__("x", 3), lambda: t.__setitem__("x", 3))
    raises_like(KeyError, lambda: f.__setitem__("x.y", F_Scale(1)),
                lambda: t.__setitem__("x.y", T_Scale(1)))
    f2 = fnn.ModuleDict(f)
    assert list(f2.keys()) == list(f.keys()) and f2["d"] is f["d"]
    f.clear()
    t.clear()
    same(f, t)


# ---- ParameterList ---------------------------------------------------------------------------

def test_parameter_list():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    f = fnn.ParameterList([fnn.Parameter(fw.tensor(a)), fw.ones(4), 5])
    t = tnn.ParameterList([tnn.Parameter(torch.tensor(a)), torch.ones(4), 5])
    assert norm(repr(f)) == repr(t)
    assert len(f) == 3 and type(f[1]) is fnn.Parameter and f[1].requires_grad and f[2] == 5
    assert [n for n, _ in f.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert list(f.state_dict()) == list(t.state_dict()) == ["0", "1"]
    assert_close(f[-3], a)
    sl = f[::2]
    assert type(sl) is fnn.ParameterList and len(sl) == 2 and sl[0] is f[0]
    f.append(fw.zeros(1, dtype=fw.float64))
    t.append(torch.zeros(1, dtype=torch.float64))
    f.extend([fw.ones(2)])
    t.extend([torch.ones(2)])
    f += [fnn.Parameter(fw.ones(1), requires_grad=False)]
    t += [tnn.Parameter(torch.ones(1), requires_grad=False)]
    f[0] = fw.zeros(3)
    t[0] = torch.zeros(3)
    assert norm(repr(f)) == repr(t)
    assert [type(p) for p in f][:2] == [fnn.Parameter, fnn.Parameter] and not f[5].requires_grad
    raises_like(IndexError, lambda: f[6], lambda: t[6])
    raises_like(TypeError, lambda: f.extend(fw.ones(2)), lambda: t.extend(torch.ones(2)))
    raises_like(TypeError, lambda: f.extend(3), lambda: t.extend(3))
    raises_like(RuntimeError, lambda: f(1), lambda: t(1))
    assert norm(repr(fnn.ParameterList())) == repr(tnn.ParameterList())
    assert "0" not in dir(f)


def test_parameter_list_device_repr_and_move(device):
    f = fnn.ParameterList([fw.ones(2, 3)]).to(device)
    assert f[0].device.type == device and type(f[0]) is fnn.Parameter
    if device == "cuda":
        # one extra_repr line and no children: printed on one line, as torch does
        assert repr(f) == ("ParameterList(  (0): Parameter containing: "
                           "[framework.float32 of size 2x3 (cuda:0)])")


# ---- ParameterDict ---------------------------------------------------------------------------

def test_parameter_dict():
    f = fnn.ParameterDict({"b": fnn.Parameter(fw.ones(2)), "a": fw.ones(3, 1)})
    t = tnn.ParameterDict({"b": tnn.Parameter(torch.ones(2)), "a": torch.ones(3, 1)})
    # a plain dict is added in sorted key order, as torch does
    assert norm(repr(f)) == repr(t)
    assert list(f.keys()) == list(t.keys()) == ["a", "b"]
    assert list(f.state_dict()) == list(t.state_dict())
    assert type(f["a"]) is fnn.Parameter and "a" in f and len(f) == 2
    for m, lib, nn in ((f, fw, fnn), (t, torch, tnn)):
        m["c"] = lib.zeros(1, dtype=lib.float64)
        m.update(OrderedDict(z=lib.ones(1), d=nn.Parameter(lib.ones(2), requires_grad=False)))
        m.update([("e", lib.ones(4)), ("b", lib.zeros(2))])
        m["s"] = "text"
        m.setdefault("f", lib.ones(1))
        m.setdefault("a", lib.ones(7))
        del m["z"]
    assert norm(repr(f)) == repr(t)
    assert list(f.keys()) == list(t.keys()) and list(reversed(f)) == list(reversed(t))
    assert [k for k, _ in f.items()] == [k for k, _ in t.items()]
    assert f.get("nope", 3) == 3 and f.get("s") == "text"
    assert f.pop("s") == "text" and t.pop("s") == "text"
    kf, _ = f.popitem()
    kt, _ = t.popitem()
    assert kf == kt and list(f.keys()) == list(t.keys())
    g = f.copy()
    assert list(g.keys()) == list(f.keys()) and g["a"] is f["a"]
    h = f | fnn.ParameterDict({"new": fw.ones(1)})
    assert list(h.keys()) == list((t | tnn.ParameterDict({"new": torch.ones(1)})).keys())
    f |= {"q": fw.ones(1)}
    assert "q" in f
    fk = f.fromkeys(["x", "y"], fw.ones(1))
    assert list(fk.keys()) == ["x", "y"]
    raises_like(TypeError, lambda: f[1], lambda: t[1])
    raises_like(AttributeError, lambda: f["missing"], lambda: t["missing"])
    raises_like(TypeError, lambda: f.update(3), lambda: t.update(3))
    raises_like(ValueError, lambda: f.update([("a",)]), lambda: t.update([("a",)]))
    raises_like(RuntimeError, lambda: f(1), lambda: t(1))
    f.clear()
    t.clear()
    assert norm(repr(f)) == repr(t) and len(f) == 0


def test_parameter_containers_train_with_grads(device):
    """Parameters held in containers receive gradients and move with .to()."""
    class M(fnn.Module):
        def __init__(self):
            super().__init__()
            self.pl = fnn.ParameterList([fw.ones(3), fw.full((3,), 2.0)])
            self.pd = fnn.ParameterDict({"s": fw.full((3,), 3.0)})

        def forward(self, x):
            return (x * self.pl[0] + self.pl[1]) * self.pd["s"]

    m = M().to(device)
    assert [n for n, _ in m.named_parameters()] == ["pl.0", "pl.1", "pd.s"]
    x = fw.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    m(x).sum().backward()
    assert_close(m.pl[0].grad, [3.0, 6.0, 9.0])
    assert_close(m.pl[1].grad, [3.0, 3.0, 3.0])
    assert_close(m.pd["s"].grad, [3.0, 4.0, 5.0])
    assert_close(x.grad, [3.0, 3.0, 3.0])
    assert all(p.device.type == device for p in m.parameters())
    sd = m.state_dict()
    assert list(sd) == ["pl.0", "pl.1", "pd.s"]
    assert to_np(sd["pd.s"]).tolist() == [3.0, 3.0, 3.0]


def test_container_deprecated_keywords():
    with pytest.warns(FutureWarning, match="nn.Container` is deprecated"):
        f = fnn.Container(a=F_Scale(1), b=F_Scale(2))
    with pytest.warns(FutureWarning, match="nn.Container` is deprecated"):
        t = tnn.Container(a=T_Scale(1), b=T_Scale(2))
    same(f, t)
