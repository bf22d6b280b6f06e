"""``framework.compile``: PyTorch's ``torch.compile`` entry point.

With the default ``backend="inductor"`` a function or module is traced with
``framework.fx`` on its first call with new input shapes, dtypes, devices or
requires_grad, or in a new grad mode (the guard; sizes read while tracing are
specialised), and its chains of pointwise ops on cuda tensors, with the last-dim
reductions they feed, run as generated Triton kernels, one per chain, as do matmuls with
the pointwise ops after them in the GEMM's epilogue (framework/_inductor). The graphs
are cached per callable, up to ``framework._dynamo.config.cache_size_limit``. What cannot
be traced (data-dependent control flow) runs eagerly, with one UserWarning; ``fullgraph=True``
raises instead. On cpu the traced graph runs op by op. A callable ``backend`` gets each
traced ``GraphModule`` and the example inputs and returns the callable to run, as in
PyTorch. ``disable=True`` returns the model itself, and the other named backends
("eager", "aot_eager", ...) run it eagerly. For a module,
``compile`` returns an ``OptimizedModule`` wrapping it, whose state-dict keys carry
PyTorch's ``_orig_mod.`` prefix. ``dynamic`` is checked and otherwise ignored: every new
shape is a new graph. ``mode="reduce-overhead"`` and ``"max-autotune"`` (or
``options={"triton.cudagraphs": True}``) also run each graph on cuda inputs as CUDA graph
replays (framework/_inductor/cudagraphs.py); the other modes only are checked.
"""
import functools

from .nn.modules.module import Module

_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, disable=False, **kwargs):
    """Optimizes ``model`` (a function or an ``nn.Module``) for later calls; as a decorator
    without ``model``. See the module's docstring."""
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    if model is None:
        def decorate(fn):
            return compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                           mode=mode, options=options, disable=disable, **kwargs)
        return decorate
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is "
                             "provided.")
    if disable:
        return model
    compiled = backend == "inductor" or callable(backend)
    custom = backend if callable(backend) else None
    from ._inductor import cudagraphs
    graphs = backend == "inductor" and cudagraphs.enabled(mode, options)
    if isinstance(model, Module):
        return OptimizedModule(model, fullgraph if compiled else None, custom, graphs)
    if not compiled:
        return model
    from ._inductor import CompiledCallable
    from .compiler import _polyfill     # a C function runs as its substitute_in_graph polyfill
    call = CompiledCallable(_polyfill(model), fullgraph, custom, graphs)

    @functools.wraps(model)
    def compiled_fn(*args, **kwargs):
        return call(*args, **kwargs)
    compiled_fn._compiled = call
    compiled_fn._torchdynamo_orig_callable = model
    return compiled_fn


class OptimizedModule(Module):
    """What ``compile`` returns for a module: it calls the original, kept as ``_orig_mod``
    (a submodule: its state-dict keys are prefixed ``_orig_mod.``), and forwards other
    attributes to it. ``_compiled`` (None for an eager backend) holds the guards and the
    compiled graphs."""

    def __init__(self, mod, fullgraph=None, backend=None, cudagraphs=False):
        super().__init__()
        self._orig_mod = mod
        if fullgraph is None:
            self._compiled = None
        else:
            from ._inductor import CompiledCallable
            self._compiled = CompiledCallable(mod, fullgraph, backend, cudagraphs)

    @property
    def training(self):
        return self._orig_mod.training

    @training.setter
    def training(self, value):
        if "_orig_mod" in self.__dict__.get("_modules", ()):
            self._orig_mod.training = value

    def forward(self, *args, **kwargs):
        if self._compiled is None:
            return self._orig_mod(*args, **kwargs)
        return self._compiled(*args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            if name == "_modules" or "_modules" not in self.__dict__:
                raise
            return getattr(self._modules["_orig_mod"], name)
