"""``framework.compile``: PyTorch's ``torch.compile`` entry point, which runs eagerly here.

The compiler that fuses ops into generated Triton kernels is not built yet. ``compile``
checks its arguments as PyTorch does and returns what PyTorch returns (the function
itself, or for a module an ``OptimizedModule`` wrapping it, whose state-dict keys carry
PyTorch's ``_orig_mod.`` prefix), so a script written for ``torch.compile`` runs unchanged,
at eager speed. It says so once, with a UserWarning, so that a benchmark is not taken for a
compiled one.
"""
import warnings

from .nn.modules.module import Module

_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")
_warned = False


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, disable=False, **kwargs):
    """Optimizes ``model`` (a function or an ``nn.Module``) for later calls; as a decorator
    without ``model``. Here it runs eagerly: see the module's docstring."""
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
    global _warned
    if not _warned:
        _warned = True
        warnings.warn("framework.compile: the compiler is not built yet; the model runs "
                      "eagerly (same results, eager speed)", UserWarning, stacklevel=2)
    if isinstance(model, Module):
        return OptimizedModule(model)
    return model


class OptimizedModule(Module):
    """What ``compile`` returns for a module: it calls the original, kept as ``_orig_mod``
    (a submodule: its state-dict keys are prefixed ``_orig_mod.``), and forwards other
    attributes to it."""

    def __init__(self, mod):
        super().__init__()
        self._orig_mod = mod

    @property
    def training(self):
        return self._orig_mod.training

    @training.setter
    def training(self, value):
        if "_orig_mod" in self.__dict__.get("_modules", ()):
            self._orig_mod.training = value

    def forward(self, *args, **kwargs):
        return self._orig_mod(*args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            if name == "_modules" or "_modules" not in self.__dict__:
                raise
            return getattr(self._modules["_orig_mod"], name)
