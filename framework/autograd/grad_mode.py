"""Grad modes: whether ops record the autograd graph (``no_grad``, ``enable_grad``,
``set_grad_enabled``, ``inference_mode``). The mode is per thread, as in PyTorch."""
import functools
import inspect
import threading


class _Mode(threading.local):
    enabled = True
    inference = False


_mode = _Mode()


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
