"""``framework.futures``: a minimal ``torch.futures.Future``.

A ``Future`` holds a value that becomes available later. A future made from a started
collective (``Work.get_future()``) completes when it is waited on, which runs the
collective's wait and then, in order, the callbacks chained with ``then``; a future made
with ``Future()`` completes with ``set_result``.
"""

__all__ = ["Future", "collect_all", "wait_all"]


class Future:
    """A placeholder for a value computed later (``torch.futures.Future``)."""

    def __init__(self, *, devices=None, _waiter=None):
        # _waiter: called (once) by wait() to complete this future, for lazily driven ones
        self._waiter = _waiter
        self._done = False
        self._value = None
        self._error = None
        self._callbacks = []

    def done(self):
        """Whether the future has a value (or an error)."""
        return self._done

    def wait(self):
        """Blocks until the value is set and returns it (raises the error it holds)."""
        if not self._done and self._waiter is not None:
            waiter, self._waiter = self._waiter, None
            try:
                waiter(self)
            except Exception as e:      # the chain's error belongs to this future
                if not self._done:
                    self.set_exception(e)
        if not self._done:
            raise RuntimeError("Future.wait(): the future has no value and nothing will "
                               "set one (set_result was not called)")
        if self._error is not None:
            raise self._error
        return self._value

    def value(self):
        """The value of a completed future (raises the error it holds)."""
        if not self._done:
            raise RuntimeError("Future.value(): the future is not completed yet; call "
                               "wait() first")
        if self._error is not None:
            raise self._error
        return self._value

    def set_result(self, result):
        """Sets the value and runs the callbacks added with ``then``/``add_done_callback``."""
        if self._done:
            raise RuntimeError("Future can only be marked completed once.")
        self._value, self._done, self._waiter = result, True, None
        self._run_callbacks()

    def set_exception(self, result):
        """Completes the future with an error that ``wait()``/``value()`` raise."""
        if not isinstance(result, BaseException):
            raise TypeError("set_exception: expected an exception, got "
                            f"{type(result).__name__}")
        if self._done:
            raise RuntimeError("Future can only be marked completed once.")
        self._error, self._done, self._waiter = result, True, None
        self._run_callbacks()

    def _run_callbacks(self):
        cbs, self._callbacks = self._callbacks, []
        for cb in cbs:
            cb(self)

    def add_done_callback(self, callback):
        """Runs ``callback(self)`` when the future completes (now, if it already has)."""
        if self._done:
            callback(self)
        else:
            self._callbacks.append(callback)

    def then(self, callback):
        """A new future holding ``callback(self)``, run once this one completes."""
        child = Future(_waiter=lambda fut: self.wait())

        def run(parent):
            if child._done:
                return
            try:
                child.set_result(callback(parent))
            except Exception as e:
                child.set_exception(e)
        self.add_done_callback(run)
        return child

    def _wait_quiet(self):
        # collect_all completes with the futures themselves, errors included
        try:
            self.wait()
        except Exception:
            pass
        return self


def collect_all(futures):
    """A future completed with the list of ``futures`` once all of them are."""
    futures = list(futures)
    return Future(_waiter=lambda fut: fut.set_result([f._wait_quiet() for f in futures]))


def wait_all(futures):
    """Waits for every future and returns their values (raising the first error)."""
    return [f.wait() for f in futures]
