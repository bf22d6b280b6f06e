"""framework.profiler: PyTorch's ``torch.profiler`` API over framework ops and Triton kernels.

    with framework.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                                    record_shapes=True) as prof:
        with record_function("step"):
            loss = model(x).sum(); loss.backward()
    print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=20))
    prof.export_chrome_trace("trace.json")

CPU events are the framework's public ops as user code calls them (``framework.add``,
``Tensor.add``, ``a + b``, ``nn.functional.linear``...), named ``aten::<op>`` as PyTorch
names them, with their wall time and nesting (an op called by another op, by a
``record_function`` block or by a backward node is its child), the autograd engine's nodes
(``autograd::engine::evaluate_function: MmBackward0``) and each kernel launch's host time
(``cuLaunchKernel``). Calls made inside the framework through references taken at import
time are not seen, only those that go through the public names. CUDA events are the Triton
kernels launched, named by their function (``_mm_kernel``; the pointwise kernels with their
op, ``_binary_kernel[add]``), timed with CUDA events and attributed to the range that
launched them (framework/profiler/_record.py says how exact that is). In the simulator
(``TRITON_INTERPRET=1``) kernel times are the interpreter's host times.

Nothing is left behind when no profile records: the recording wrappers are swapped in
when a profile starts and the original functions put back when it stops.
With ``profile_memory=True`` each range counts the bytes the framework's allocators hand out
inside it (``cpu_memory_usage``, ``device_memory_usage``; ``self_*`` without its children's);
unlike PyTorch, frees are not subtracted. ``with_stack``, ``with_flops`` and ``with_modules``
are accepted and record nothing.
"""
import enum
import functools
import os
import time
import warnings

from . import _record
from ._events import (DeviceType, EventList, FunctionEvent, FunctionEventAvg,  # noqa: F401
                      export_chrome_trace as _export)

__all__ = ["profile", "record_function", "schedule", "ProfilerAction", "ProfilerActivity",
           "tensorboard_trace_handler", "supported_activities", "DeviceType", "EventList",
           "FunctionEvent", "FunctionEventAvg"]


class ProfilerActivity(enum.Enum):
    """What a profile records: host ranges (CPU) and device kernels (CUDA)."""
    CPU = 0
    CUDA = 2

    def __repr__(self):
        return f"ProfilerActivity.{self.name}"


class ProfilerAction(enum.Enum):
    """What the profiler does during a step, as a ``schedule`` returns it."""
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def supported_activities():
    """The activities this installation can record: CPU, and CUDA where a (possibly
    simulated) CUDA device is available."""
    from .. import cuda
    return {ProfilerActivity.CPU} | ({ProfilerActivity.CUDA} if cuda.is_available() else set())


def schedule(*, wait, warmup, active, repeat=0, skip_first=0):
    """A schedule for ``profile(schedule=...)``: after ``skip_first`` steps, cycles of
    ``wait`` idle steps, ``warmup`` steps recorded and thrown away, and ``active`` steps
    recorded (the last of which hands the trace to ``on_trace_ready``); ``repeat`` cycles,
    or without end when 0. Returns a function from step number to ProfilerAction."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise ValueError(f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), "
                         f"warmup={warmup} (need >= 0), active={active} (need > 0), "
                         f"repeat={repeat} (need >= 0), skip_first={skip_first} (need >= 0).")
    cycle = wait + warmup + active

    def action(step):
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if repeat and step >= repeat * cycle:
            return ProfilerAction.NONE
        at = step % cycle
        if at < wait:
            return ProfilerAction.NONE
        if at < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if at < cycle - 1 else ProfilerAction.RECORD_AND_SAVE
    return action


def _always_record(step):
    return ProfilerAction.RECORD


class record_function:
    """Marks a block (``with record_function("name"):``) or, as a decorator, every call of
    a function as a range of the profile, which the ops inside become children of. Costs
    one test when no profile records."""

    def __init__(self, name, args=None):
        if not isinstance(name, str):
            raise TypeError(f"record_function(): name must be a str, got {type(name).__name__}")
        self.name, self.args = name, args
        self._rec = self._ev = None

    def __enter__(self):
        rec = _record._state
        if rec is not None and rec.cpu:
            self._rec, self._ev = rec, rec.push(self.name, _record.USER)
        return self

    def __exit__(self, *exc):
        if self._ev is not None:
            self._rec.pop(self._ev)
            self._rec = self._ev = None
        return False

    def __call__(self, fn):
        name = self.name

        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with record_function(name):
                return fn(*args, **kwargs)
        return wrapped


class profile:
    """Records the ops and kernels run while it is active: ``with profile(...) as prof:``,
    or ``prof.start()`` ... ``prof.stop()``; ``prof.step()`` marks the end of a training
    step for ``schedule``.

    activities: ProfilerActivity values (default: ``supported_activities()``).
    schedule: step -> ProfilerAction (``framework.profiler.schedule``); default: record
        from start to stop. on_trace_ready: called with the profiler at the end of each
        recorded cycle (and at stop). record_shapes: keep the input shapes of each op
        (``key_averages(group_by_input_shape=True)``)."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False,
                 with_flops=False, with_modules=False, use_cuda=None):
        if activities is None:
            activities = supported_activities()
            if use_cuda is False:
                activities.discard(ProfilerActivity.CUDA)
        activities = set(activities)
        for a in activities:
            if not isinstance(a, ProfilerActivity):
                raise TypeError(f"profile(): activities must be ProfilerActivity values, "
                                f"got {a!r}")
        if use_cuda:
            activities.add(ProfilerActivity.CUDA)
        if schedule is not None and not callable(schedule):
            raise TypeError("profile(): schedule must be a function of the step number")
        if on_trace_ready is not None and not callable(on_trace_ready):
            raise TypeError("profile(): on_trace_ready must be callable")
        for flag, name in ((with_stack, "with_stack"), (with_flops, "with_flops"),
                           (with_modules, "with_modules")):
            if flag:
                warnings.warn(f"framework.profiler: {name}=True is not supported; nothing "
                              "of it is recorded", stacklevel=2)
        self.activities = activities
        self.record_shapes = bool(record_shapes)
        self.profile_memory, self.with_stack = profile_memory, with_stack
        self.with_flops, self.with_modules = with_flops, with_modules
        self.record_steps = schedule is not None
        self.schedule = schedule if schedule is not None else _always_record
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.current_action = self.schedule(0)
        self._recorder = self._patches = None
        self._step_range = None
        self._results = None
        self._running = False

    # ---- the trace's life ----------------------------------------------------------------
    def _prepare(self):
        """Starts recording (a warmup's data is thrown away when the trace starts)."""
        if self._recorder is not None:
            return
        cuda = ProfilerActivity.CUDA in self.activities
        if cuda:
            from .. import cuda as _cuda
            cuda = _cuda.is_available()
        rec = _record.Recorder(self.record_shapes, ProfilerActivity.CPU in self.activities,
                               cuda, memory=bool(self.profile_memory))
        self._patches = _record.install(rec)
        self._recorder = rec

    def _start_trace(self):
        self._prepare()
        self._recorder.clear()

    def _stop_trace(self):
        rec, patches = self._recorder, self._patches
        if rec is None:
            return
        self._recorder = self._patches = None
        try:
            raw, kernels = rec.finish()
        finally:
            _record.uninstall(patches)
        from ._events import build
        use_device = "cuda" if rec.cuda else None
        self._results = EventList(build(raw, kernels, rec.t_start), use_device=use_device,
                                  profile_memory=rec.memory)

    def _trace_ready(self):
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def _transit(self, prev, now):
        """PyTorch's transitions between the actions of two consecutive steps (``now``
        None: the profile stops)."""
        A = ProfilerAction
        recording = (A.RECORD, A.RECORD_AND_SAVE)
        if prev == A.NONE:
            if now == A.WARMUP:
                self._prepare()
            elif now in recording:
                self._start_trace()
        elif prev == A.WARMUP:
            if now in recording:
                self._start_trace()
            elif now in (A.NONE, None):
                if now == A.NONE:
                    warnings.warn("Incorrect schedule: WARMUP followed by NONE", stacklevel=3)
                self._start_trace()
                self._stop_trace()
        elif prev == A.RECORD:
            if now in (A.NONE, A.WARMUP):
                warnings.warn(f"Incorrect schedule: RECORD followed by {now.name}", stacklevel=3)
                self._stop_trace()
            elif now is None:
                self._stop_trace()
                self._trace_ready()
        elif prev == A.RECORD_AND_SAVE:   # the end of a cycle, whatever comes next
            self._stop_trace()
            self._trace_ready()
            if now == A.WARMUP:
                self._prepare()
            elif now in recording:
                self._start_trace()

    def _open_step(self):
        if self.record_steps and self._recorder is not None and self._recorder.cpu:
            self._step_range = record_function(f"ProfilerStep#{self.step_num}").__enter__()

    def _close_step(self):
        if self._step_range is not None:
            self._step_range.__exit__(None, None, None)
            self._step_range = None

    # ---- the public interface ------------------------------------------------------------
    def start(self):
        """Starts profiling (as entering the ``with`` block does)."""
        if self._running:
            raise RuntimeError("framework.profiler: this profiler is already started")
        self._running = True
        try:
            self._transit(ProfilerAction.NONE, self.current_action)
        except BaseException:
            self._running = False
            raise
        self._open_step()

    def stop(self):
        """Stops profiling; the recorded events are then in ``events()``/``key_averages()``
        and ``on_trace_ready`` has been called if the trace was being recorded."""
        if not self._running:
            return
        self._running = False
        try:
            self._close_step()
        finally:
            try:
                self._transit(self.current_action, None)
            finally:
                # whatever failed above, nothing of the profiler stays installed
                if self._patches is not None:
                    _record.uninstall(self._patches)
                    self._recorder = self._patches = None

    def step(self):
        """Signals that the next training step begins (the schedule's clock)."""
        self._close_step()
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        if not isinstance(self.current_action, ProfilerAction):
            raise TypeError(f"profile(): the schedule returned {self.current_action!r}, "
                            "not a ProfilerAction")
        if self._running:
            self._transit(prev, self.current_action)
            self._open_step()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc, tb):
        self.stop()
        return False

    def _events(self):
        if self._results is None:
            raise RuntimeError("framework.profiler: no trace recorded yet (the profiler has "
                               "not stopped, or its schedule has not reached an active step)")
        return self._results

    def events(self):
        """The events of the last recorded trace (an EventList of FunctionEvent)."""
        return self._events()

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        """The last trace's events averaged by name (and input shapes), as an EventList of
        FunctionEventAvg with ``table()``."""
        if group_by_input_shape and not self.record_shapes:
            raise RuntimeError("key_averages(group_by_input_shape=True) needs a profile made "
                               "with record_shapes=True")
        return self._events().key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path):
        """Writes the last trace as Chrome trace JSON (chrome://tracing, ui.perfetto.dev)."""
        _export(self._events(), path)


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """An ``on_trace_ready`` that writes each trace into ``dir_name`` as
    ``<worker_name>.<time in ms>.pt.trace.json`` (``.gz`` with ``use_gzip``)."""
    def handler(prof):
        import socket
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        name = f"{worker}.{int(time.time() * 1000)}.pt.trace.json"
        path = os.path.join(dir_name, name)
        prof.export_chrome_trace(path)
        if use_gzip:
            import gzip
            import shutil
            with open(path, "rb") as src, gzip.open(path + ".gz", "wb") as dst:
                shutil.copyfileobj(src, dst)
            os.remove(path)
    return handler


# -- smaller pieces of torch.profiler's API ---------------------------------------------------

def register_optimizer_step_post_hook(hook):
    r"""Register a post hook common to all optimizers: ``hook(optimizer, args, kwargs)``;
    returns a handle whose ``remove()`` removes it."""
    # imported here: the profiler loads with autograd, before optim can be imported
    from ..optim.optimizer import register_optimizer_step_post_hook as register
    return register(hook)


def kineto_available():
    """Whether the Kineto tracing library is in use: no, events are recorded in Python."""
    return False


class RecordScope(enum.IntEnum):
    """Where a recorded function comes from, with torch's values."""
    FUNCTION = 0
    BACKWARD_FUNCTION = 1
    TORCHSCRIPT_FUNCTION = 2
    KERNEL_FUNCTION_DTYPE = 3
    CUSTOM_CLASS = 4
    BUILD_FEATURE = 5
    LITE_INTERPRETER = 6
    USER_SCOPE = 7
    STATIC_RUNTIME_OP = 8
    STATIC_RUNTIME_MODEL = 9
