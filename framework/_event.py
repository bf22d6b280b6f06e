"""``framework.Event``: PyTorch's device-generic event, over ``framework.cuda.Event`` on
cuda; the cpu backend has no events (recording one raises, as in PyTorch)."""
from ._device import device as _device_cls

_NO_IPC = ("torch.Event ipc is not supported yet, please open an issue if you need this!")


def _event_device(device):
    if device is None:
        from . import accelerator
        acc = accelerator.current_accelerator()
        device = acc if acc is not None else "cpu"
    elif isinstance(device, int):
        from . import accelerator
        if accelerator.current_accelerator() is None:
            raise RuntimeError("Cannot access accelerator device when none is available.")
        device = _device_cls(accelerator.current_accelerator().type, device)
    d = device if isinstance(device, _device_cls) else _device_cls(device)
    if d.type == "cuda" and d.index is None:
        from . import cuda
        d = _device_cls("cuda", cuda.current_device())
    return d


class Event:
    r"""Event(device=None, *, enable_timing=False, blocking=False, interprocess=False)

    Query and record Stream status to identify or control dependencies across Stream and
    measure timing. ``device`` defaults to the current accelerator (cpu without one);
    ``blocking`` and ``interprocess`` are not supported and are noops, as in PyTorch."""

    def __init__(self, device=None, *, enable_timing=False, blocking=False,
                 interprocess=False):
        self.device = _event_device(device)
        self.enable_timing = enable_timing
        self._cuda = None
        if self.device.type == "cuda":
            from . import cuda
            self._cuda = cuda.Event(enable_timing=enable_timing)
        self._recorded = False

    def _unsupported(self):
        raise RuntimeError(f"{self.device.type} backend doesn't support events.")

    def record(self, stream=None):
        """Record the event in ``stream`` (the current stream of the event's device)."""
        if self._cuda is None:
            self._unsupported()
        from . import cuda
        self._cuda.record(cuda.current_stream(self.device) if stream is None else stream)
        self._recorded = True

    def wait(self, stream=None):
        """Make all future work submitted to ``stream`` wait for this event."""
        if self._cuda is not None:
            from . import cuda
            self._cuda.wait(cuda.current_stream(self.device) if stream is None else stream)

    def query(self):
        """Whether all work recorded before this event has completed."""
        return True if self._cuda is None else self._cuda.query()

    def synchronize(self):
        """Wait for the work recorded before this event to complete."""
        if self._cuda is not None:
            self._cuda.synchronize()

    def elapsed_time(self, end_event):
        """Milliseconds between this event's record and ``end_event``'s."""
        if not (self.enable_timing and end_event.enable_timing):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        if not (self._recorded and end_event._recorded):
            raise ValueError("Both events must be recorded before calculating elapsed time.")
        return self._cuda.elapsed_time(end_event._cuda)

    @property
    def event_id(self):
        return 0 if self._cuda is None else int(self._cuda._handle or 0)

    def ipc_handle(self):
        raise NotImplementedError(_NO_IPC)

    @classmethod
    def from_ipc_handle(cls, device, ipc_handle):
        raise NotImplementedError(_NO_IPC)

    def __repr__(self):
        index = -1 if self.device.index is None else self.device.index
        return (f"framework.Event device_type={self.device.type}, device_index={index}, "
                f"event_flag={int(self.enable_timing)}, event_id={self.event_id}")
