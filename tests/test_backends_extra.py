"""framework.backends.opt_einsum and framework.backends.mha against torch.backends."""
import types

import pytest

import framework as fw

torch = pytest.importorskip("torch")
from torch.backends import opt_einsum as t_oe  # noqa: E402

f_oe = fw.backends.opt_einsum


def _outcome(fn):
    try:
        return ("ok", fn())
    except Exception as e:  # noqa: BLE001 - the error itself is compared
        return (type(e).__name__, str(e))


def test_opt_einsum_defaults_match_torch():
    assert f_oe.is_available() == t_oe.is_available()
    assert f_oe.get_opt_einsum() is None and t_oe.get_opt_einsum() is None
    assert f_oe.enabled == t_oe.enabled
    assert f_oe.strategy == t_oe.strategy
    assert f_oe.set_flags() == t_oe.set_flags()


@pytest.mark.parametrize("kw", [dict(enabled=True), dict(strategy="greedy"),
                                dict(enabled=False), dict()])
def test_opt_einsum_flags_unavailable(kw):
    def run(mod):
        with mod.flags(**kw):
            return (mod.enabled, mod.strategy)
    assert _outcome(lambda: run(f_oe)) == _outcome(lambda: run(t_oe))
    assert (f_oe.enabled, f_oe.strategy) == (t_oe.enabled, t_oe.strategy)


@pytest.fixture
def fake_available(monkeypatch):
    """Both modules see an opt_einsum package, so the available-path checks can run."""
    fake = types.ModuleType("opt_einsum")
    # torch replaced its module in sys.modules with a proxy; its functions read the real one
    t_mod = t_oe.m
    for mod in (f_oe, t_mod):
        monkeypatch.setattr(mod, "_opt_einsum", fake)
        mod.is_available.cache_clear()
        monkeypatch.setattr(mod, "enabled", True)
        monkeypatch.setattr(mod, "strategy", "auto")
    yield fake, t_mod
    for mod in (f_oe, t_mod):
        mod.is_available.cache_clear()


@pytest.mark.parametrize("args", [(None, "greedy"), (None, "optimal"), (None, "bogus"),
                                  (False, "auto"), (True, "optimal"), (False, None)])
def test_opt_einsum_set_flags_available(fake_available, args):
    fake, t_mod = fake_available
    assert f_oe.is_available() and f_oe.get_opt_einsum() is fake

    def run(mod):
        orig = mod.set_flags(*args)
        return orig, mod.enabled, mod.strategy
    assert _outcome(lambda: run(f_oe)) == _outcome(lambda: run(t_mod))


def test_opt_einsum_flags_restore(fake_available):
    with f_oe.flags(strategy="greedy"):
        assert f_oe.strategy == "greedy"
    assert f_oe.strategy == "auto"
    with pytest.raises(ValueError, match="not enabled"):
        with f_oe.flags(enabled=False, strategy="optimal"):
            pass


def test_mha_fastpath_switch():
    assert fw.backends.mha.get_fastpath_enabled() == torch.backends.mha.get_fastpath_enabled()
    try:
        fw.backends.mha.set_fastpath_enabled(False)
        assert fw.backends.mha.get_fastpath_enabled() is False
    finally:
        fw.backends.mha.set_fastpath_enabled(True)
    assert fw.backends.mha.get_fastpath_enabled() is True
