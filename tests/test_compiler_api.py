"""framework.compiler and framework._dynamo: PyTorch's names, signatures and behaviour for
the parts that make sense without graph capture."""
import inspect
import warnings

import pytest

import framework as fw
import framework._dynamo
import framework.compiler

torch = pytest.importorskip("torch")
import torch._dynamo  # noqa: E402
import torch.compiler  # noqa: E402

NAMES = ["compile", "config", "assume_constant_result", "reset", "allow_in_graph",
         "substitute_in_graph", "list_backends", "disable", "set_default_backend",
         "get_default_backend", "set_stance", "cudagraph_mark_step_begin", "wrap_numpy",
         "is_compiling", "is_dynamo_compiling", "is_exporting", "save_cache_artifacts",
         "load_cache_artifacts", "nested_compile_region"]


@pytest.mark.parametrize("name", NAMES)
def test_names_and_signatures(name):
    ours, theirs = getattr(fw.compiler, name), getattr(torch.compiler, name)
    assert name in fw.compiler.__all__
    if name in ("config", "compile"):
        return
    sig_f, sig_t = inspect.signature(ours), inspect.signature(theirs)
    assert list(sig_f.parameters) == list(sig_t.parameters)
    for p in sig_t.parameters.values():
        assert sig_f.parameters[p.name].default == p.default
        assert sig_f.parameters[p.name].kind == p.kind


def test_queries_in_eager_code():
    for name in ("is_compiling", "is_dynamo_compiling", "is_exporting"):
        assert getattr(fw.compiler, name)() is getattr(torch.compiler, name)() is False
    assert fw._dynamo.is_compiling() is False
    assert fw.compiler.reset() is None and fw._dynamo.reset() is None
    assert fw.compiler.cudagraph_mark_step_begin() is None
    assert fw.compiler.save_cache_artifacts() is None
    assert fw.compiler.load_cache_artifacts(b"") is None
    assert fw.compiler.list_backends() == torch.compiler.list_backends()
    assert "eager" in fw.compiler.list_backends(exclude_tags=())
    assert fw.compiler.get_default_backend() == torch.compiler.get_default_backend()


def test_compile_delegates():
    def f(x):
        return x * 2

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        g = fw.compiler.compile(f)
        m = fw.compiler.compile(fw.nn.Linear(2, 2))
    assert g(fw.ones(2)).tolist() == [2.0, 2.0]
    assert list(m.state_dict()) == ["_orig_mod.weight", "_orig_mod.bias"]
    with pytest.raises(RuntimeError, match="Unrecognized mode"):
        fw.compiler.compile(f, mode="bogus")


def test_disable_and_markers():
    calls = []

    def f(x):
        calls.append(x)
        return x + 1

    for mod in (fw.compiler, fw._dynamo):
        g = mod.disable(f)
        assert g is not f and g.__wrapped__ is f and g.__name__ == "f"
        assert g(1) == 2
        deco = mod.disable(recursive=False)
        assert deco(f)(2) == 3
    assert calls == [1, 2, 1, 2]
    with pytest.raises(AssertionError, match="fn must be callable"):
        fw.compiler.disable(3)
    with pytest.raises(AssertionError) as ours:
        fw.compiler.allow_in_graph(3)
    with pytest.raises(AssertionError) as theirs:
        torch.compiler.allow_in_graph(3)
    assert str(ours.value) == str(theirs.value)
    assert fw.compiler.allow_in_graph(f) is f
    assert fw.compiler.assume_constant_result(f) is f
    with pytest.raises(TypeError, match="Signature mismatch"):   # PyTorch's signature check
        fw.compiler.substitute_in_graph(len)(f)
    assert fw.compiler.nested_compile_region(f) is f
    m = fw.nn.Linear(2, 2)
    assert fw.compiler.disable(m) is m


def test_set_stance():
    assert fw.compiler._stance.stance == "default"
    fw.compiler.set_stance("force_eager")            # as a call: until changed
    assert fw.compiler._stance.stance == "force_eager"
    fw.compiler.set_stance("default")
    assert fw.compiler._stance.stance == "default"
    with fw.compiler.set_stance("eager_on_recompile"):   # as a context manager
        assert fw.compiler._stance.stance == "eager_on_recompile"
    assert fw.compiler._stance.stance == "default"

    @fw.compiler.set_stance("force_eager")               # as a decorator: while it runs
    def run():
        return fw.compiler._stance.stance

    assert fw.compiler._stance.stance == "default"
    assert run() == "force_eager"
    assert fw.compiler._stance.stance == "default"
    for mod in (fw.compiler, torch.compiler):
        with pytest.raises(RuntimeError, match="non-default stance cannot have force_backend"):
            mod.set_stance("force_eager", force_backend="eager")
    with pytest.raises(RuntimeError, match="invalid torch.compile stance"):
        fw.compiler.set_stance("bogus")
    assert fw.compiler._stance.stance == "default"


KNOBS = ["cache_size_limit", "accumulated_cache_size_limit", "recompile_limit",
         "accumulated_recompile_limit", "suppress_errors", "optimize_ddp",
         "capture_scalar_outputs", "capture_dynamic_output_shape_ops", "verbose",
         "automatic_dynamic_shapes", "assume_static_by_default", "specialize_int",
         "dynamic_shapes", "error_on_recompile"]


@pytest.mark.parametrize("knob", KNOBS)
def test_config_defaults_match_torch(knob):
    assert getattr(fw._dynamo.config, knob) == getattr(torch._dynamo.config, knob)


def test_every_config_default_matches_torch():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)   # torch's deprecated knobs
        for knob, value in fw._dynamo.config.get_config_copy().items():
            assert value == getattr(torch._dynamo.config, knob), knob


def test_config_set_alias_patch_and_errors():
    cfg = fw._dynamo.config
    assert fw.compiler.config is cfg
    cfg.cache_size_limit = 64                   # PyTorch's old name of recompile_limit
    try:
        assert cfg.recompile_limit == 64 and cfg.cache_size_limit == 64
        cfg.suppress_errors = True
        assert cfg.suppress_errors is True
        with cfg.patch(suppress_errors=False, capture_scalar_outputs=True):
            assert cfg.suppress_errors is False and cfg.capture_scalar_outputs is True
        assert cfg.suppress_errors is True and cfg.capture_scalar_outputs is False

        @cfg.patch("verbose", True)
        def read():
            return cfg.verbose

        assert read() is True and cfg.verbose is False
    finally:
        del cfg.cache_size_limit                # back to the default, as in PyTorch
        del cfg.suppress_errors
    assert cfg.recompile_limit == 8 and cfg.suppress_errors is False
    with pytest.raises(AttributeError, match="config.nonexistent_knob does not exist"):
        cfg.nonexistent_knob = 1
    with pytest.raises(AttributeError, match="config.nonexistent_knob does not exist"):
        cfg.nonexistent_knob
    with pytest.raises(AttributeError, match="does not exist"):
        cfg.patch(nonexistent_knob=1)
    assert "cache_size_limit" in dir(cfg)


def test_dynamo_markers_are_noops():
    x = fw.ones(2, 3)
    assert fw._dynamo.mark_dynamic(x, 0) is None
    assert fw._dynamo.maybe_mark_dynamic(x, [0, 1]) is None
    assert fw._dynamo.mark_static(x) is None
    assert fw._dynamo.graph_break() is None
    assert x.tolist() == [[1.0] * 3] * 2
