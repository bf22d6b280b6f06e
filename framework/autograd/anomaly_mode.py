"""Anomaly detection: with ``detect_anomaly()`` (or ``set_detect_anomaly(True)``) each
recorded node keeps the stack of the forward call that made it, and a backward step that
produces NaN or inf raises an error naming the node and showing that forward line."""
import traceback
import warnings

_enabled = False
_check_nan = True   # whether a backward step's outputs are checked for NaN


def is_anomaly_enabled():
    """Whether anomaly detection is on (``torch.is_anomaly_enabled``)."""
    return _enabled


def is_anomaly_check_nan_enabled():
    """Whether anomaly detection checks the backward's outputs for NaN."""
    return _check_nan


def set_anomaly_enabled(enabled, check_nan=True):
    """Turns anomaly detection on or off, with or without the NaN check."""
    global _enabled, _check_nan
    _enabled, _check_nan = bool(enabled), bool(check_nan)


class set_detect_anomaly:
    """Turns anomaly detection on or off (a function call, or a context manager)."""

    def __init__(self, mode, check_nan=True):
        self.prev = (_enabled, _check_nan)
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        set_anomaly_enabled(*self.prev)
        return False


class detect_anomaly:
    """Context manager (or decorator) that turns anomaly detection on inside its block."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", stacklevel=2)

    def __enter__(self):
        self.prev = (_enabled, _check_nan)
        set_anomaly_enabled(True, self.check_nan)
        return self

    def __exit__(self, *exc):
        set_anomaly_enabled(*self.prev)
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with detect_anomaly(self.check_nan):
                return fn(*args, **kwargs)
        return wrapper


def record_trace(node):
    """Keeps the user's stack of the forward call (framework's own frames dropped)."""
    frames = [f for f in traceback.extract_stack()[:-1]
              if "/framework/" not in f.filename.replace("\\", "/")]
    node._trace = "".join(traceback.format_list(frames))


def checked_apply(node, grads):
    try:
        outs = node.apply(grads)
    except Exception as e:
        _warn(node)
        raise e
    if not _check_nan:
        return outs
    for i, g in enumerate(outs):
        # NaN only, as PyTorch's engine checks: an infinite gradient is no error there
        if g is None or g.dtype.category < 2 or not g.isnan().any().item():
            continue
        trace = node._trace or "(no forward trace: the node was created outside " \
                               "detect_anomaly)\n"
        _warn(node)
        raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th "
                           f"output.\nTraceback of forward call that caused the error:\n"
                           f"{trace}")
    return outs


def _warn(node):
    if node._trace:
        warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused "
                      f"the error:\n{node._trace}", stacklevel=2)
