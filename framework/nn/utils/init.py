"""Building a module without initializing its parameters (PyTorch's
``torch.nn.utils.init``: ``skip_init``)."""
import functools
import inspect
import threading

import framework as _fw

__all__ = ["skip_init"]

# The in-place fills and draws that modules' constructors (reset_parameters) and nn.init
# use to initialize their tensors. While a thread is inside skip_init they return their
# tensor untouched in that thread; other threads are not affected.
_TENSOR_METHODS = ("uniform_", "normal_", "fill_", "zero_", "random_", "bernoulli_",
                   "exponential_", "cauchy_", "log_normal_", "geometric_")
_INIT_FUNCTIONS = ("uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_",
                   "eye_", "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
                   "kaiming_normal_", "orthogonal_", "sparse_")

_tls = threading.local()
_lock = threading.Lock()
_installed = [0, []]   # [number of skip_init calls running, [(owner, name, original, ours)]]


def _skipping():
    return getattr(_tls, "depth", 0) > 0


def _skip(orig):
    @functools.wraps(orig)
    def wrapper(tensor, *args, **kwargs):
        if _skipping():
            return tensor
        return orig(tensor, *args, **kwargs)
    return wrapper


def _install():
    with _lock:
        _installed[0] += 1
        if _installed[0] > 1:
            return
        from .. import init as _init
        patches = []
        for owner, names in ((_fw.Tensor, _TENSOR_METHODS), (_init, _INIT_FUNCTIONS)):
            for name in names:
                orig = getattr(owner, name, None)
                if orig is None:
                    continue
                ours = _skip(orig)
                setattr(owner, name, ours)
                patches.append((owner, name, orig, ours))
        _installed[1] = patches


def _uninstall():
    with _lock:
        _installed[0] -= 1
        if _installed[0] > 0:
            return
        for owner, name, orig, ours in reversed(_installed[1]):
            if getattr(owner, name, None) is ours:   # else someone patched it since: keep
                setattr(owner, name, orig)
        _installed[1] = []


def skip_init(module_cls, *args, **kwargs):
    r"""Instantiates ``module_cls(*args, **kwargs)`` without initializing its parameters and
    buffers: they have the shapes, dtypes and device the constructor gives them, and
    uninitialized contents, as if made with :func:`framework.empty`.

    The module must accept a ``device`` argument (the device of its parameters and
    buffers; default here ``"cpu"``) and must not compute anything from its parameters in
    its constructor other than initialization.

    PyTorch builds the module on the ``meta`` device and then calls ``to_empty``. Here the
    module is built on its device directly, with the in-place initializers (the
    ``framework.nn.init`` functions and the ``Tensor`` methods ``uniform_``, ``normal_``,
    ``fill_``, ``zero_``, ... ) made no-ops in this thread for the time of the
    constructor, so no initialization runs. Tensors the constructor creates with
    ``zeros``/``ones``/``randn`` and the like are still computed.

    Example::

        >>> m = framework.nn.utils.skip_init(framework.nn.Linear, 5, 1)
        >>> m.weight.shape
        framework.Size([1, 5])
    """
    if not issubclass(module_cls, _fw.nn.Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")

    kwargs["device"] = kwargs.pop("device", "cpu")
    _install()
    _tls.depth = getattr(_tls, "depth", 0) + 1
    try:
        return module_cls(*args, **kwargs)
    finally:
        _tls.depth -= 1
        _uninstall()
