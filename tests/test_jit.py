"""framework.jit: TorchScript's entry points run the code eagerly (script/trace return what
they get, with one UserWarning), the decorators and queries behave as in eager PyTorch."""
import typing
import warnings

import pytest

import framework as fw
import framework.jit as jit
import framework.nn as nn


@pytest.fixture
def fresh_warning(monkeypatch):
    monkeypatch.setattr(jit, "_warned", False)


def test_script_function_and_module(fresh_warning):
    def f(x):
        return x * 2

    with pytest.warns(UserWarning, match="TorchScript is not supported"):
        g = jit.script(f)
    assert g is f
    m = nn.Linear(3, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")        # once only
        sm = jit.script(m)
        assert jit.script(f) is f
    assert sm is m
    x = fw.ones(1, 3)
    assert fw.equal(sm(x), m(x))
    assert not isinstance(sm, jit.ScriptModule)
    assert not isinstance(g, jit.ScriptFunction)

    @jit.script
    def h(x: fw.Tensor) -> fw.Tensor:
        return x + 1
    assert h(fw.zeros(2)).tolist() == [1.0, 1.0]


def test_trace(fresh_warning):
    m = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
    x = fw.randn(2, 4)
    with pytest.warns(UserWarning, match="runs eagerly"):
        tm = jit.trace(m, x)
    assert tm is m
    assert fw.equal(tm(x), m(x))

    def f(a, b):
        return a + b
    assert jit.trace(f, (x, x)) is f
    assert jit.trace_module(m, {"forward": x}) is m


def test_decorators_and_queries():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.k: jit.Final[int] = 3

        @jit.export
        def extra(self, x):
            return x * self.k

        @jit.ignore
        def py_only(self, x):
            return x + 1

        @jit.ignore(drop=True)
        def dropped(self, x):
            return x - 1

        @jit.unused
        def unused_m(self, x):
            return x

        def forward(self, x):
            if jit.is_scripting() or jit.is_tracing():
                raise AssertionError("never scripting here")
            y: typing.List[int] = jit.annotate(typing.List[int], [])
            y.append(1)
            return self.py_only(x) + self.dropped(x) + self.extra(x) + len(y)

    m = M()
    assert m(fw.ones(1)).tolist() == [1 + 1 + 0 + 3 + 1]
    assert jit.is_scripting() is False and jit.is_tracing() is False
    assert jit.annotate(int, 5) == 5
    assert jit.Final is typing.Final
    with pytest.raises(RuntimeError, match="must be a bool or a function"):
        jit.ignore("yes")

    @jit.interface
    class I:
        def f(self, x: int) -> int: ...
    assert isinstance(I, type)
    assert jit.Attribute(5, int) == 5
    assert jit.isinstance([1, 2], typing.List[int])
    assert not jit.isinstance([1, "a"], typing.List[int])
    assert jit.isinstance({"a": fw.ones(1)}, typing.Dict[str, fw.Tensor])
    assert jit.isinstance(None, typing.Optional[int])
    assert jit.isinstance((1, 2.0), typing.Tuple[int, float])


def test_fork_wait():
    calls = []

    def work(a, b=1):
        calls.append(a)
        return a + b

    fut = jit.fork(work, 2, b=3)
    assert calls == [2]                     # ran synchronously
    assert fut.wait() == 5 and jit.wait(fut) == 5 and fut.done()
    futs = [jit.fork(work, i) for i in range(3)]
    assert [jit.wait(f) for f in futs] == [1, 2, 3]

    def boom():
        raise ValueError("bad")
    f = jit.fork(boom)
    with pytest.raises(ValueError, match="bad"):
        jit.wait(f)


def test_save_load_not_supported(tmp_path):
    with pytest.raises(NotImplementedError, match="framework.save"):
        jit.save(nn.Linear(1, 1), str(tmp_path / "m.pt"))
    with pytest.raises(NotImplementedError, match="framework.save"):
        jit.load(str(tmp_path / "m.pt"))


def test_script_module_classes():
    assert issubclass(jit.ScriptModule, nn.Module)
    assert issubclass(jit.RecursiveScriptModule, jit.ScriptModule)
    assert isinstance(jit.ScriptFunction, type)
    m = nn.Linear(2, 2)
    with pytest.raises(RuntimeError, match="eval mode"):
        jit.freeze(m)
    assert jit.freeze(m.eval()) is m
    with jit.fuser("fuser1"):
        pass
