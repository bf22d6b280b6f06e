"""NVTX-style range annotations (PyTorch's ``torch.cuda.nvtx``).

PyTorch hands these to NVIDIA's NVTX library, where a tool such as Nsight Systems shows
them. Here they are ranges of ``framework.profiler``: while a profile records, a range
opened with ``range_push``/``range``/``range_start`` is recorded as a user annotation
(as a ``framework.profiler.record_function`` block is, and the ops run inside a pushed
range are its children) and ``mark`` as an instant (a zero-length range). With no profile
recording they only keep count of the open ranges.

Differences from PyTorch: nothing reaches NVTX itself (Nsight does not see these ranges);
``range_push``/``range_pop`` return the depth as NVTX does with a tool attached (without
one, NVTX answers -2 to both); ``range_pop`` with no open range returns -1.
"""
import itertools
import threading
from contextlib import contextmanager

__all__ = ["range_push", "range_pop", "range_start", "range_end", "mark", "range"]

_tls = threading.local()          # .stack: this thread's pushed ranges (record_function)
_handles = {}                     # range_start id -> (recorder, event) or None
_handles_lock = threading.Lock()
_ids = itertools.count(1)


def _check(fn, msg):
    if not isinstance(msg, str):
        raise TypeError(f"{fn}(): incompatible function arguments. The following argument "
                        f"types are supported:\n    1. (arg0: str)\n\nInvoked with: {msg!r}")


def _stack():
    s = getattr(_tls, "stack", None)
    if s is None:
        s = _tls.stack = []
    return s


def range_push(msg):
    """Pushes a range onto this thread's stack of nested ranges. Returns the zero-based
    depth of the range that is started.

    Args:
        msg (str): message to associate with the range
    """
    _check("rangePushA", msg)
    from ..profiler import record_function
    r = record_function(msg)
    r.__enter__()
    s = _stack()
    s.append(r)
    return len(s) - 1


def range_pop():
    """Pops a range off this thread's stack of nested ranges. Returns the zero-based depth
    of the range that is ended (-1 when no range is open)."""
    s = _stack()
    if not s:
        return -1
    r = s.pop()
    r.__exit__(None, None, None)
    return len(s)


def range_start(msg):
    """Marks the start of a range with message ``msg``; returns a unique handle (an int)
    for the matching :func:`range_end`. Unlike ``range_push``/``range_pop``, the range may
    end on another thread (it is not a parent of the ops run inside it).

    Args:
        msg (str): message to associate with the range.
    """
    _check("rangeStartA", msg)
    from ..profiler import _record
    entry = None
    rec = _record._state
    if rec is not None and rec.cpu:
        ev = rec.push(msg, _record.USER)
        # off this thread's stack at once: it must not parent what runs next, and it may
        # be ended from any thread
        stack = rec.stacks.get(ev.tid)
        if stack and stack[-1] is ev:
            stack.pop()
        entry = (rec, ev)
    with _handles_lock:
        rid = next(_ids)
        _handles[rid] = entry
    return rid


def range_end(range_id):
    """Marks the end of the range started by :func:`range_start` that returned
    ``range_id``.

    Args:
        range_id (int): the handle of the range.
    """
    with _handles_lock:
        entry = _handles.pop(range_id, None)
    if entry is not None:
        rec, ev = entry
        rec.pop(ev)


def mark(msg):
    """Marks an instantaneous event (a zero-length range while a profile records).

    Args:
        msg (str): message to associate with the event.
    """
    _check("markA", msg)
    from ..profiler import _record
    rec = _record._state
    if rec is not None and rec.cpu:
        ev = rec.push(msg, _record.USER)
        rec.pop(ev)


@contextmanager
def range(msg, *args, **kwargs):
    """Context manager / decorator that pushes a range at the beginning of its scope and
    pops it at the end. Extra arguments are passed to ``msg.format()``.

    Args:
        msg (str): message to associate with the range
    """
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
