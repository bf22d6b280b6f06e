"""``__torch_function__`` and ``framework.overrides`` against PyTorch as the oracle: the same
script runs on both libraries and must give the same types, call sequences and values."""
import subprocess
import sys

import numpy as np
import pytest

import framework as fw
import framework.nn.functional as fwF
from framework.overrides import TorchFunctionMode as FwMode

torch = pytest.importorskip("torch")


def _sub(m):
    class MyT(m.Tensor):
        pass
    return MyT


def _type_names(r):
    if isinstance(r, (tuple, list)):
        return [type(r).__name__] + [type(x).__name__ for x in r]
    return type(r).__name__


CASES = {
    "add": lambda m, a, b: m.add(a, b), "radd": lambda m, a, b: b + a,
    "mul": lambda m, a, b: a * 2, "rsub": lambda m, a, b: 2 - a,
    "rtruediv": lambda m, a, b: 1 / a, "getitem": lambda m, a, b: a[0],
    "view": lambda m, a, b: a.view(4), "T": lambda m, a, b: a.T,
    "detach": lambda m, a, b: a.detach(), "data": lambda m, a, b: a.data,
    "sum": lambda m, a, b: a.sum(), "max_dim": lambda m, a, b: a.max(0),
    "split": lambda m, a, b: a.split(1), "unbind": lambda m, a, b: m.unbind(a),
    "relu": lambda m, a, b: m.nn.functional.relu(a), "eq": lambda m, a, b: a == b,
    "clone": lambda m, a, b: a.clone(), "add_": lambda m, a, b: a.clone().add_(1),
    "add_plain": lambda m, a, b: b.clone().add_(a), "shape": lambda m, a, b: a.shape,
    "item": lambda m, a, b: a[0, 0].item(), "tolist": lambda m, a, b: a.tolist(),
    "to": lambda m, a, b: a.to(m.float64), "norm": lambda m, a, b: m.linalg.norm(a),
    "matmul": lambda m, a, b: a @ b, "cat": lambda m, a, b: m.cat([b, a]),
    "zeros_like": lambda m, a, b: m.zeros_like(a), "repr": lambda m, a, b: repr(a)[:6],
    "contiguous": lambda m, a, b: a.contiguous(), "new_ones": lambda m, a, b: a.new_ones(2),
}


def test_subclass_result_types():
    got, want = {}, {}
    for m, out in ((fw, got), (torch, want)):
        MyT = _sub(m)
        a = m.tensor([[1.0, -2.0], [3.0, 4.0]]).as_subclass(MyT)
        b = m.ones(2, 2)
        for name, f in CASES.items():
            r = f(m, a, b)
            out[name] = _type_names(r)
            if name == "repr":
                out[name] = r
        out["ctor"] = type(MyT([1.0, 2.0])).__name__
    assert got == want
    # values are the plain ones
    MyT = _sub(fw)
    a = fw.tensor([[1.0, -2.0], [3.0, 4.0]]).as_subclass(MyT)
    np.testing.assert_allclose((a @ fw.ones(2, 2) + 1).numpy(), [[0.0, 0.0], [8.0, 8.0]])


def _logging_script(m):
    class Log(m.Tensor):
        log = []

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            cls.log.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs)

    t = m.ones(2, 2).as_subclass(Log)
    u = (t + 1) * t
    u = u[0].sum()
    repr(t)
    t.T
    t.data
    t.detach()
    m.nn.functional.linear(t, m.ones(2, 2))
    m.cat([m.ones(1), t[0]])
    t.view(4).exp()
    t[1] = 3.0
    return Log.log, type(u).__name__


def test_logging_subclass_matches_torch():
    assert _logging_script(fw) == _logging_script(torch)


def _diagonal_script(m):
    HANDLED = {}

    class Diagonal:
        def __init__(self, n, value):
            self._n, self._value = n, value

        def tensor(self):
            return self._value * m.eye(self._n)

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if func not in HANDLED or not all(issubclass(t, (m.Tensor, Diagonal))
                                              for t in types):
                return NotImplemented
            return HANDLED[func](*args, **kwargs)

    def mean(d):
        return float(d._value) / d._n

    def add(a, b):
        if isinstance(a, Diagonal):
            a = a.tensor()
        if isinstance(b, Diagonal):
            b = b.tensor()
        return a + b
    HANDLED[m.mean] = mean
    HANDLED[m.add] = add
    d = Diagonal(3, 2.0)
    out = [m.mean(d), m.add(d, m.ones(3, 3)).tolist()]
    try:
        m.sum(d)
    except TypeError as e:
        out.append(str(e).replace("torch.", "framework.").split(":")[0])
    return out


def test_tensor_like_class():
    assert _diagonal_script(fw) == _diagonal_script(torch)


def test_tensor_like_class_turns_dispatch_on():
    # in a fresh process: nothing is wrapped until a class with __torch_function__ exists
    code = """if True:
        import framework as fw
        from framework._ops import dispatcher
        assert fw.add is dispatcher.function("add") and not fw.overrides._active
        class Scalar:
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return ("handled", func.__name__)
        assert fw.overrides._active
        print(fw.add(Scalar(), 1), fw.ones(2).mul(Scalar()), fw.nn.functional.relu(Scalar()))
    """
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["('handled',", "'add')", "('handled',", "'mul')",
                                "('handled',", "'relu')"]


def _fallthrough_script(m):
    calls = []

    class A:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            calls.append("A")
            return NotImplemented

    class B(A):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            calls.append("B")
            return NotImplemented

    class C:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            calls.append("C")
            return "C"

    out = [m.mul(C(), A()), m.mul(A(), C())]
    try:
        m.add(A(), B())
    except TypeError:
        pass
    calls.append("|")
    try:
        m.ones(2).add(A())
    except TypeError as e:
        msg = str(e).replace("torch.", "framework.").replace("tests.", "")
        out.append(msg.replace(A.__module__ + ".", ""))
    return out, calls


def test_not_implemented_fallthrough_and_error():
    got, want = _fallthrough_script(fw), _fallthrough_script(torch)
    # left to right, B (a subclass) before A, every handler tried before the error
    assert got == want
    assert got[1] == ["C", "A", "C", "B", "A", "|", "A"]


def _mode_script(m):
    class Count(m.overrides.TorchFunctionMode):
        def __init__(self, tag, log):
            super().__init__()
            self.tag, self.log = tag, log

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.log.append(f"{self.tag}:{func.__name__}")
            return func(*args, **(kwargs or {}))

    log = []
    with Count("outer", log):
        x = m.ones(2)
        with Count("inner", log):
            y = m.mul(x, 2)
        z = m.add(y, 1).sum()
    return log, float(z)


def test_torch_function_mode_nesting():
    assert _mode_script(fw) == _mode_script(torch)
    # the mode is off after its block
    assert not fw.overrides._modes


def _handle_script(m):
    ov = m.overrides

    def my_func(a, b=1):
        if ov.has_torch_function_variadic(a, b):
            return ov.handle_torch_function(my_func, (a, b), a, b=b)
        return ("plain", a + b)

    class Thing:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return (func.__name__, len(args), sorted((kwargs or {}).keys()))

    return [my_func(1, 2), my_func(Thing(), 2), ov.has_torch_function((1, Thing())),
            ov.has_torch_function((m.ones(1),)), ov.is_tensor_like(Thing()),
            ov.is_tensor_like(m.ones(1)), ov.is_tensor_like(1),
            ov.is_tensor_method_or_property(m.Tensor.add),
            ov.is_tensor_method_or_property(m.add)]


def test_handle_torch_function_user_function():
    assert _handle_script(fw) == _handle_script(torch)


def _disable_script(m):
    MyT = _sub(m)
    a = m.ones(2).as_subclass(MyT)
    with m.DisableTorchFunctionSubclass():
        inside = [type(a + 1).__name__, type(a[0]).__name__, type(m.exp(a)).__name__]
    p = m.nn.Parameter(m.ones(2))
    params = [type(p + 1).__name__, type(p.detach()).__name__, type(p.data).__name__,
              type(m.nn.functional.relu(p)).__name__, type(p[0]).__name__,
              m.nn.Parameter.__torch_function__ is m._C._disabled_torch_function_impl]
    return inside, type(a + 1).__name__, params


def test_disable_subclass_and_parameter():
    assert _disable_script(fw) == _disable_script(torch)


def _grad_script(m, device):
    MyT = _sub(m)
    x = m.tensor([1.0, -2.0, 3.0], device=device).as_subclass(MyT).requires_grad_()
    w = m.tensor([0.5, 0.25, 2.0], device=device, requires_grad=True)
    y = m.nn.functional.gelu(x * w) + x[1]
    loss = (y * y).sum()
    loss.backward()
    return ([type(t).__name__ for t in (x, y, loss, x.grad)], x.is_leaf, y.grad_fn is not None,
            x.grad.tolist(), w.grad.tolist())


def test_gradients_through_subclass(device):
    got, want = _grad_script(fw, device), _grad_script(torch, "cpu")
    assert got[:3] == want[:3]
    np.testing.assert_allclose(got[3], want[3], rtol=1e-5)
    np.testing.assert_allclose(got[4], want[4], rtol=1e-5)


def test_fx_trace_after_activation():
    import framework.fx as fx
    _sub(fw)   # dispatch on
    assert fw.overrides._active

    class M(fw.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = fw.nn.Linear(3, 2)

        def forward(self, x):
            return fwF.relu(self.lin(x)).sum(-1) + fw.add(x, 1).mean()

    mod = M()
    gm = fx.symbolic_trace(mod)
    x = fw.randn(4, 3)
    np.testing.assert_allclose(gm(x).detach().numpy(), mod(x).detach().numpy(), rtol=1e-6)
    assert "relu" in gm.code and "add" in gm.code
    # after tracing the wrappers are back
    assert fw.add.__name__ == "add" and hasattr(fw.add, "_tf_original")


def test_overrides_api():
    ov = fw.overrides
    assert ov.resolve_name(fw.add) == "framework.add"
    assert ov.resolve_name(fw.Tensor.add) == "framework.Tensor.add"
    funcs = ov.get_overridable_functions()
    assert fw.add in funcs[fw] and fw.Tensor.add in funcs[fw.Tensor]
    assert fw.is_tensor in ov.get_ignored_functions()
    with ov.enable_reentrant_dispatch():
        pass

    @ov.wrap_torch_function(lambda a: (a,))
    def double(a):
        return a * 2

    class Thing:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return "thing"
    assert double(Thing()) == "thing" and double(3) == 6
    with pytest.raises(TypeError, match="no implementation found for"):
        ov.handle_torch_function(double, (object.__new__(type("X", (), {
            "__torch_function__": classmethod(lambda *a: NotImplemented)})),), 1)


def test_pytorch_tensors_do_not_take_part():
    # PyTorch's own tensors carry PyTorch's protocol, whose handler would call the framework
    # function back (endless recursion): with dispatch on they convert as plain data
    _sub(fw)([1.0])                       # a subclass instance: dispatch on
    assert fw.overrides._active
    got = fw.from_dlpack(torch.arange(4.0).clone())
    np.testing.assert_array_equal(got.numpy(), np.arange(4.0))
    assert type(got) is fw.Tensor
    assert not fw.overrides.has_torch_function((torch.ones(1),))
