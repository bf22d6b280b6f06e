"""CUDA streams and events: ``Stream``, ``Event``, ``current_stream``, ``stream(...)``.

In the simulator every launch has finished when it returns, so a stream is only a name
for ordering and an event records the host clock (``elapsed_time`` is wall time between
two records)."""
import itertools
import time

from . import _runtime

_sim_ids = itertools.count(1)


def _index(device):
    from .._device import canonical
    if device is None:
        return _runtime.current_index()
    if isinstance(device, int):
        return _runtime.check_index(device)
    d = canonical(device)
    if d.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {d}")
    return _runtime.check_index(d.index)


class Stream:
    """A queue of GPU work that runs in order (PyTorch's ``torch.cuda.Stream``).

    ``Stream(device=None, priority=0)`` creates a new stream on a device; ``cuda_stream``
    is its raw ``CUstream`` handle (0 for the default stream)."""

    def __init__(self, device=None, priority=0, *, _handle=None):
        s = _runtime.state()
        self.device_index = _index(device)
        self.priority = priority
        self._owned = _handle is None
        if _handle is not None:
            self.cuda_stream = _handle
        elif s.mode == "driver":
            with _runtime.on_device(self.device_index):
                self.cuda_stream = s.driver.stream_create(priority=priority or None)
        else:
            self.cuda_stream = next(_sim_ids)

    @property
    def device(self):
        return _runtime.device_of(self.device_index)

    def synchronize(self):
        """Waits for all work queued on this stream."""
        s = _runtime.state()
        if s.mode == "driver":
            with _runtime.on_device(self.device_index):  # handle 0: that device's
                s.driver.stream_synchronize(self.cuda_stream)

    def query(self):
        """Whether all work queued on this stream has finished."""
        s = _runtime.state()
        if s.mode != "driver":
            return True
        with _runtime.on_device(self.device_index):
            return s.driver.stream_query(self.cuda_stream)

    def wait_event(self, event):
        """Makes work queued later on this stream wait for ``event``."""
        s = _runtime.state()
        if s.mode == "driver" and event._handle is not None:
            with _runtime.on_device(self.device_index):
                s.driver.stream_wait_event(self.cuda_stream, event._handle)

    def wait_stream(self, stream):
        """Makes work queued later on this stream wait for the work queued on ``stream``."""
        self.wait_event(stream.record_event())

    def record_event(self, event=None):
        """Records ``event`` (a new one by default) on this stream; returns it."""
        event = Event() if event is None else event
        event.record(self)
        return event

    def __eq__(self, other):
        return (isinstance(other, Stream) and self.cuda_stream == other.cuda_stream
                and self.device_index == other.device_index)

    def __hash__(self):
        return hash((self.cuda_stream, self.device_index))

    def __repr__(self):
        return (f"<framework.cuda.Stream device=cuda:{self.device_index} "
                f"cuda_stream={self.cuda_stream:#x}>")

    def __del__(self):
        if getattr(self, "_owned", False):   # False too when __init__ failed
            _runtime.driver_release("stream_destroy", self.cuda_stream)


class ExternalStream(Stream):
    """A stream made elsewhere (another library's ``CUstream`` handle, e.g. torch's
    ``torch.cuda.current_stream().cuda_stream``): used, never destroyed, by framework."""

    def __init__(self, stream_ptr, device=None):
        super().__init__(device, _handle=stream_ptr)


class Event:
    """A marker in a stream's work (PyTorch's ``torch.cuda.Event``); ``enable_timing``
    lets two recorded events measure the time between them."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        self.enable_timing = enable_timing
        self.blocking = blocking
        self._handle = None
        self._time = None
        self._device = None

    def record(self, stream=None):
        """Records the event on ``stream`` (the current stream by default)."""
        stream = current_stream() if stream is None else stream
        s = _runtime.state()
        if self._device is not None and self._device != stream.device_index:
            raise RuntimeError(f"Event device {self._device} does not match recording stream's "
                               f"device {stream.device_index}.")
        self._device = stream.device_index
        if s.mode == "driver":
            from .driver import CU_EVENT_BLOCKING_SYNC, CU_EVENT_DISABLE_TIMING
            with _runtime.on_device(stream.device_index):  # the event lives on that device
                if self._handle is None:
                    flags = (0 if self.enable_timing else CU_EVENT_DISABLE_TIMING) | \
                        (CU_EVENT_BLOCKING_SYNC if self.blocking else 0)
                    self._handle = s.driver.event_create(flags)
                s.driver.event_record(self._handle, stream.cuda_stream)
        else:
            self._time = time.perf_counter()
            self._handle = 0

    def wait(self, stream=None):
        """Makes ``stream`` (the current one by default) wait for this event."""
        (current_stream() if stream is None else stream).wait_event(self)

    def query(self):
        """Whether the work before the recorded event has finished."""
        s = _runtime.state()
        if s.mode == "driver" and self._handle is not None:
            return s.driver.event_query(self._handle)
        return True

    def synchronize(self):
        """Waits until the work before the recorded event has finished."""
        s = _runtime.state()
        if s.mode == "driver" and self._handle is not None:
            s.driver.event_synchronize(self._handle)

    def elapsed_time(self, end_event):
        """Milliseconds between this event's record and ``end_event``'s."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if self._handle is None or end_event._handle is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        s = _runtime.state()
        if s.mode == "driver":
            return s.driver.event_elapsed_time(self._handle, end_event._handle)
        return (end_event._time - self._time) * 1000.0

    def __repr__(self):
        return f"<framework.cuda.Event {'recorded' if self._handle is not None else 'uninitialized'}>"

    def __del__(self):
        if getattr(self, "_handle", None):
            _runtime.driver_release("event_destroy", self._handle)


_default_streams = {}


def default_stream(device=None):
    """The default (legacy NULL) stream of a device."""
    i = _index(device)
    st = _default_streams.get(i)
    if st is None:
        st = _default_streams[i] = Stream(i, _handle=0)
    return st


def current_stream(device=None):
    """This thread's current stream on a device (the default stream unless set)."""
    i = _index(device)
    st = _runtime.current_streams().get(i)
    return st if st is not None else default_stream(i)


def set_stream(stream):
    """Makes ``stream`` current on its device."""
    if stream is None:
        return
    streams = _runtime.current_streams()
    if stream.cuda_stream == 0:
        streams.pop(stream.device_index, None)
    else:
        _runtime.streams_in_use = True
        streams[stream.device_index] = stream


class StreamContext:
    """``with framework.cuda.stream(s):`` queues the block's work on ``s`` (and makes its
    device current); the previous stream and device come back afterwards."""

    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        st = self.stream
        if st is None:
            return None
        self._prev_device = _runtime.current_index()
        self._prev = current_stream(st.device_index)
        if st.device_index != self._prev_device:
            _runtime.set_index(st.device_index)
        set_stream(st)
        return st

    def __exit__(self, *exc):
        if self.stream is None:
            return
        set_stream(self._prev)
        if self._prev_device != _runtime.current_index():
            _runtime.set_index(self._prev_device)


def stream(stream):
    """Context manager that selects a stream."""
    return StreamContext(stream)
