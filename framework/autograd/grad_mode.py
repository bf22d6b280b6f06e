"""Grad modes: whether ops record the autograd graph (``no_grad``, ``enable_grad``,
``set_grad_enabled``, ``inference_mode``). The mode is per thread, as in PyTorch."""
import functools
import inspect
import threading
import weakref


class _Mode(threading.local):
    enabled = True
    inference = False


_mode = _Mode()


# Inference tensors: the storages allocated while inference mode is on (a tensor is an
# inference tensor when its storage is one, so views share the property). ``_seen[0]``
# turns True with the first one: until then the checks below cost one list read.
_inference_storages = weakref.WeakSet()
_seen = [False]

_INPLACE_INFERENCE = ("Inplace update to inference tensor outside InferenceMode is not "
                      "allowed.You can make a clone to get a normal tensor before doing "
                      "inplace update.See https://github.com/pytorch/rfcs/pull/17 for more "
                      "details.")
_SAVED_INFERENCE = ("Inference tensors cannot be saved for backward. Please do not use "
                    "Tensors created in inference mode in computation tracked by autograd. "
                    "To work around this, you can make a clone to get a normal tensor and "
                    "use it in autograd, or use `torch.no_grad()` instead of "
                    "`torch.inference_mode()`.")


def mark_inference(storage):
    """Records ``storage`` as allocated in inference mode."""
    _inference_storages.add(storage)
    _seen[0] = True


def is_inference(t):
    """Whether ``t`` is an inference tensor (created inside ``inference_mode``)."""
    return _seen[0] and t._storage in _inference_storages


def check_inplace(t):
    """PyTorch's error for an in-place update of an inference tensor outside inference
    mode (callers test ``_seen[0]`` first)."""
    if not _mode.inference and t._storage in _inference_storages:
        raise RuntimeError(_INPLACE_INFERENCE)


def check_saved(t):
    """PyTorch's error for saving an inference tensor for backward (callers test
    ``_seen[0]`` first)."""
    if t._storage in _inference_storages:
        raise RuntimeError(_SAVED_INFERENCE)


def is_grad_enabled():
    """Whether operations are recorded for autograd on this thread."""
    return _mode.enabled


def is_inference_mode_enabled():
    return _mode.inference


class _DecoratorContextManager:
    """A context manager that also works as a decorator, with or without parentheses."""

    def __call__(self, func):
        if inspect.isclass(func):
            raise RuntimeError(f"Cannot decorate a class with {type(self).__name__}")
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def gen(*args, **kwargs):
                with self.clone():
                    yield from func(*args, **kwargs)
            return gen

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return wrapper

    def clone(self):
        return type(self)()


class _SetGrad(_DecoratorContextManager):
    """Sets grad mode to ``_enabled`` inside the block; usable as ``@mode`` or ``@mode()``."""

    _enabled = False

    def __new__(cls, orig_func=None):
        if callable(orig_func):   # used as a decorator without parentheses
            return cls()(orig_func)
        return super().__new__(cls)

    def __init__(self, orig_func=None):
        self.prev = False

    def __enter__(self):
        self.prev = _mode.enabled
        _mode.enabled = self._enabled

    def __exit__(self, *exc):
        _mode.enabled = self.prev
        return False


class no_grad(_SetGrad):
    """Disables gradient recording inside the block (or the decorated function)."""
    _enabled = False


class enable_grad(_SetGrad):
    """Enables gradient recording inside the block, even within ``no_grad``."""
    _enabled = True


class set_grad_enabled(_DecoratorContextManager):
    """Sets gradient recording on or off; works as a function call, context manager or
    decorator."""

    def __init__(self, mode):
        self.prev = _mode.enabled
        self.mode = bool(mode)
        _mode.enabled = self.mode

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _mode.enabled = self.prev
        return False

    def clone(self):
        return type(self)(self.mode)


class inference_mode(_DecoratorContextManager):
    """Like ``no_grad``, for code that will never need gradients (``mode=False`` turns it
    off inside an enclosing inference_mode)."""

    def __new__(cls, mode=True):
        if cls is inference_mode and callable(mode) and not isinstance(mode, bool):
            return cls()(mode)
        return super().__new__(cls)

    def __init__(self, mode=True):
        self.mode = mode
        self.prev = (True, False)

    def __enter__(self):
        self.prev = (_mode.enabled, _mode.inference)
        if self.mode:
            _mode.enabled, _mode.inference = False, True
        else:
            _mode.inference = False

    def __exit__(self, *exc):
        _mode.enabled, _mode.inference = self.prev
        return False

    def clone(self):
        return type(self)(self.mode)
