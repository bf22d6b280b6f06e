"""What ``framework.profiler`` records while a profile runs, and the hooks that record it.

Nothing here costs anything while no profile records: ``install`` swaps a recording wrapper
in at every place the dispatcher bound an op (the ``framework`` namespaces, ``Tensor``
methods, ``nn.functional``) and ``uninstall`` puts the very same objects back. Three
module-level hooks stay ``None`` otherwise: the autograd engine's (one check per node), the
cached kernel launcher's (one check per launch) and ``_state`` below, which
``record_function`` reads.

Kernel times come from a pair of ``framework.cuda.Event(enable_timing=True)`` recorded on the
current stream around each launch, read once at the end of the trace after one
synchronize. Known bias: where the GPU is idle when a kernel is launched, the start event
runs at once and the kernel only after the driver has submitted it, so the measured time
includes that launch latency (a few microseconds); the cached launcher records the start
event right before its driver call to keep that short, Triton's own path (first launches,
compiles) records it before all of its host work. In the simulator (``TRITON_INTERPRET=1``)
an event is the host clock: a kernel's time is the interpreter's time to run it.
"""
import functools
import threading
import time
import types

_perf = time.perf_counter_ns
_ident = threading.get_ident

# the Recorder while a profile is recording (its warmup included), else None
_state = None

OP, USER, BACKWARD, RUNTIME = "cpu_op", "user_annotation", "cpu_op", "cuda_runtime"
LAUNCH_NAME = "cuLaunchKernel"  # the driver call Triton's launchers make
# nn.functional names whose ATen op PyTorch's profiler shows under another name
_ATEN_NAMES = {"cross_entropy": "cross_entropy_loss"}
# Tensor methods that are not rows of the op table but are what user code calls, and the
# operators that reach an op without going through a Tensor method (``a + b`` calls
# ``a.add(b)``, which is recorded; ``2 - a`` calls the op table's rsub directly)
_TENSOR_EXTRAS = {"to": "aten::to", "detach": "aten::detach", "item": "aten::item",
                  "__getitem__": "aten::__getitem__", "__setitem__": "aten::__setitem__",
                  "__rsub__": "aten::rsub", "__rtruediv__": "aten::div",
                  "__rfloordiv__": "aten::floor_divide", "__rmod__": "aten::remainder",
                  "__rpow__": "aten::pow", "__rmatmul__": "aten::matmul"}


class Raw:
    """One CPU range: an op call, a ``record_function`` block, a backward node, a launch."""
    __slots__ = ("name", "cat", "t0", "t1", "parent", "tid", "shapes", "mem", "dmem")


class Kernel:
    """One kernel launch timed by two CUDA events."""
    __slots__ = ("name", "parent", "launch", "start", "end", "device", "stream", "t0_us",
                 "dur_us")


def _shapes(args, kwargs):
    """PyTorch's ``input_shapes``: one entry per argument, a tensor's shape, a list of
    tensors' shapes, ``[]`` for anything else."""
    from .._tensor import Tensor
    out = []
    for a in (*args, *kwargs.values()) if kwargs else args:
        if isinstance(a, Tensor):
            out.append(list(a._shape))
        elif isinstance(a, (list, tuple)) and a and all(isinstance(x, Tensor) for x in a):
            out.append([list(x._shape) for x in a])
        else:
            out.append([])
    return out


class Recorder:
    """The ranges and kernels of one trace (a profile's recording, warmup included)."""

    def __init__(self, record_shapes, cpu, cuda, memory=False):
        self.record_shapes = record_shapes
        self.cpu, self.cuda = cpu, cuda
        self.memory = memory  # count the bytes allocated inside each range
        self.quiet = 0     # > 0 while the autotuner benchmarks configs: not recorded
        self.busy = 0      # > 0 inside a timed launch: an inner launch path is not timed twice
        self.clear()

    def clear(self):
        """Forgets what was recorded (the end of a warmup); open ranges stay open."""
        self.raw, self.kernels = [], []
        self.stacks = getattr(self, "stacks", {})
        self.refs = {}     # device -> (reference event, host time in ns)
        self.t_start = _perf()
        if self.cuda:
            from .. import cuda
            if cuda.is_initialized():   # else the first launch on a device takes one
                from ..cuda import _runtime, streams
                dev = _runtime.current_index()
                self._reference(dev, streams.current_stream(dev))

    def push(self, name, cat, args=None, kwargs=None):
        ev = Raw()
        ev.name, ev.cat, ev.t1 = name, cat, None
        ev.mem = ev.dmem = 0
        ev.tid = tid = _ident()
        stack = self.stacks.get(tid)
        if stack is None:
            stack = self.stacks[tid] = []
        ev.parent = stack[-1] if stack else None
        ev.shapes = _shapes(args, kwargs) if self.record_shapes and args is not None else None
        stack.append(ev)
        self.raw.append(ev)
        ev.t0 = _perf()   # last: the bookkeeping above is not the op's time
        return ev

    def pop(self, ev):
        t = _perf()
        if ev.t1 is not None:      # closed already (the trace ended inside the range)
            return
        ev.t1 = t
        stack = self.stacks.get(ev.tid)
        if stack and stack[-1] is ev:
            stack.pop()
        elif stack and ev in stack:
            # ranges opened inside and never closed (a generator left suspended) end here
            while stack:
                top = stack.pop()
                if top is ev:
                    break
                if top.t1 is None:
                    top.t1 = t

    # ---- kernels ---------------------------------------------------------------------
    def launch(self, fn, kwargs, call):
        """Runs ``call()`` (one kernel launch of the Triton function ``fn`` with keyword
        arguments ``kwargs``) between two CUDA events, inside a ``cuLaunchKernel`` range."""
        if self.quiet or self.busy:
            return call()
        from ..cuda import _runtime, streams
        dev = _runtime.current_index()
        stream = streams.current_stream(dev)
        if dev not in self.refs:
            self._reference(dev, stream)
        start, end = _event(dev), _event(dev)
        k = Kernel()
        k.name, k.device = kernel_name(fn, kwargs), dev
        k.stream = stream.cuda_stream
        stack = self.stacks.get(_ident())
        k.parent = stack[-1] if stack else None
        k.launch = self.push(LAUNCH_NAME, RUNTIME) if self.cpu else None
        self.busy += 1
        try:
            start.record(stream)
            result = call()
            end.record(stream)
        except BaseException:
            _pool.setdefault(dev, []).extend((start, end))
            raise
        finally:
            self.busy -= 1
            if k.launch is not None:
                self.pop(k.launch)
        k.start, k.end = start, end
        self.kernels.append(k)
        return result

    def _reference(self, dev, stream):
        """An event recorded on an idle device, at a known host time: kernels' device
        times are placed on the host clock from it."""
        from .. import cuda
        cuda.synchronize(dev)
        ev = _event(dev)
        t = _perf()
        ev.record(stream)
        self.refs[dev] = (ev, t)

    # ---- the end of the trace -----------------------------------------------------------
    def finish(self):
        """Closes what is still open, waits for the devices and reads the kernel times."""
        t = _perf()
        for stack in self.stacks.values():
            for ev in stack:
                if ev.t1 is None:
                    ev.t1 = t
            stack.clear()
        if self.refs:
            from .. import cuda
            for dev in self.refs:
                cuda.synchronize(dev)
            base = self.t_start
            for k in self.kernels:
                ref, host = self.refs[k.device]
                k.dur_us = max(k.start.elapsed_time(k.end), 0.0) * 1e3
                k.t0_us = (host - base) / 1e3 + ref.elapsed_time(k.start) * 1e3
                _pool.setdefault(k.device, []).extend((k.start, k.end))
                k.start = k.end = None
            for dev, (ref, _) in self.refs.items():
                _pool.setdefault(dev, []).append(ref)
            self.refs = {}
        return self.raw, self.kernels


# timing events are reused from one trace to the next (cuEventCreate per launch would cost
# more host time than the launch)
_pool = {}


def _event(dev):
    free = _pool.get(dev)
    if free:
        return free.pop()
    from ..cuda import Event
    return Event(enable_timing=True)


def kernel_name(fn, kwargs):
    """The Triton function's name; for the pointwise kernels, which take their scalar op
    as the ``OP`` constexpr, with that op: ``_binary_kernel[add]``."""
    name = getattr(fn, "__name__", None) or type(fn).__name__
    op = kwargs.get("OP") if kwargs else None
    if op is not None:
        inner = getattr(op, "fn", op)
        opname = getattr(inner, "__name__", None)
        if isinstance(opname, str):
            name = f"{name}[{opname.lstrip('_')}]"
    return name


# ---- the recording wrappers ---------------------------------------------------------------

_wrappers = {}   # (original, event name) -> wrapper, reused by later profiles


def _wrap(fn, name):
    key = (fn, name)
    w = _wrappers.get(key)
    if w is not None:
        return w

    def recorded(*args, **kwargs):
        rec = _state
        # a reference kept from a profile that has ended; or a call made inside a kernel
        # launch (the interpreter's new_empty/set_ on its arguments), not the program's
        if rec is None or rec.busy:
            return fn(*args, **kwargs)
        ev = rec.push(name, OP, args, kwargs)
        try:
            return fn(*args, **kwargs)
        finally:
            rec.pop(ev)
    functools.update_wrapper(recorded, fn)
    _wrappers[key] = recorded
    return recorded


def _aten_name(namespace, name):
    if namespace in ("", "nn.functional"):
        return "aten::" + _ATEN_NAMES.get(name, name)
    return "aten::" + namespace.replace(".", "_") + "_" + name


_targets = None


def targets():
    """(owner, attribute, event name) of every place where user code reaches an op: where
    the dispatcher installed the op table (framework/_ops/dispatcher.py ``install``), the
    Python-level functions of ``nn.functional``, and a few Tensor methods."""
    global _targets
    if _targets is not None:
        return _targets
    import framework as fw
    import framework.nn.functional as F
    from .._ops import dispatcher
    Tensor = fw.Tensor
    homes = {}

    def home(namespace):
        if namespace not in homes:
            m = fw
            for part in filter(None, namespace.split(".")):
                m = getattr(m, part)
            homes[namespace] = [m]
            if namespace == "nn.functional":   # the table's module and its re-export
                homes[namespace] = [fw._nn_functional_ops, F]
        return homes[namespace]

    seen, out = set(), []

    def add(owner, attr, name):
        if (id(owner), attr) not in seen:
            seen.add((id(owner), attr))
            out.append((owner, attr, name))

    for op in dispatcher.ops().values():
        if "function" in op.variants:
            for m in home(op.namespace):
                add(m, op.name, _aten_name(op.namespace, op.name))
        if "method" in op.variants:
            add(Tensor, op.name, "aten::" + op.name)
        if "inplace" in op.variants:
            add(Tensor, op.name + "_", "aten::" + op.name + "_")
    for attr, fn in sorted(vars(F).items()):
        if (not attr.startswith("_") and isinstance(fn, types.FunctionType)
                and fn.__module__.startswith("framework.nn.functional")):
            add(F, attr, _aten_name("nn.functional", attr))
    for attr, name in _TENSOR_EXTRAS.items():
        add(Tensor, attr, name)
    _targets = out
    return out


class Patches:
    """Attributes replaced while a profile records, and what they held before."""

    _MISSING = object()

    def __init__(self):
        self.saved = []

    def set(self, owner, attr, value):
        self.saved.append((owner, attr, vars(owner).get(attr, self._MISSING)))
        setattr(owner, attr, value)

    def restore(self):
        while self.saved:
            owner, attr, old = self.saved.pop()
            if old is self._MISSING:
                delattr(owner, attr)
            else:
                setattr(owner, attr, old)


def _install_ops(patches):
    from .._tensor import Tensor
    for owner, attr, name in targets():
        fn = vars(owner).get(attr)
        if fn is None or isinstance(fn, type) or not callable(fn):
            continue
        # a class attribute must stay a function, which binds as a method
        if owner is Tensor and not isinstance(fn, types.FunctionType):
            continue
        patches.set(owner, attr, _wrap(fn, name))


def _optimizer_wrap(fn, what):
    """An optimizer's ``step``/``zero_grad`` as a range named as PyTorch names it:
    ``Optimizer.step#AdamW.step``."""
    key = (fn, "Optimizer." + what)
    w = _wrappers.get(key)
    if w is not None:
        return w

    def recorded(self, *args, **kwargs):
        rec = _state
        if rec is None or rec.busy:
            return fn(self, *args, **kwargs)
        ev = rec.push(f"Optimizer.{what}#{type(self).__name__}.{what}", USER)
        try:
            return fn(self, *args, **kwargs)
        finally:
            rec.pop(ev)
    functools.update_wrapper(recorded, fn)
    _wrappers[key] = recorded
    return recorded


def subclasses(cls):
    """``cls`` and every class derived from it, user classes included."""
    todo, seen = [cls], {}
    while todo:
        c = todo.pop()
        if c not in seen:
            seen[c] = None
            todo.extend(c.__subclasses__())
    return list(seen)


def module_functions():
    """(class, attribute, function) of each function a module class holds as a static
    method (``Conv2d._FN = staticmethod(F.conv2d)``): what a tool that swaps the op
    bindings must swap as well, since the class captured the function when defined."""
    from ..nn.modules.module import Module
    for cls in subclasses(Module):
        for attr, v in list(vars(cls).items()):
            if isinstance(v, staticmethod):
                yield cls, attr, v.__func__


def _install_optimizers(patches):
    """Every optimizer class's own ``step``/``zero_grad`` (user subclasses included)."""
    from ..optim.optimizer import Optimizer
    for cls in subclasses(Optimizer):
        for what in ("step", "zero_grad"):
            fn = vars(cls).get(what)
            if isinstance(fn, types.FunctionType):
                patches.set(cls, what, _optimizer_wrap(fn, what))


def _node_name(node):
    name = node.name()
    return "torch::autograd::AccumulateGrad" if name == "AccumulateGrad" else name


def _backward_hook(node, grads, apply):
    rec = _state
    if rec is None:
        return apply(node, grads)
    ev = rec.push("autograd::engine::evaluate_function: " + _node_name(node), BACKWARD)
    try:
        return apply(node, grads)
    finally:
        rec.pop(ev)


def _cached_launch_hook(fn, kwargs, call):
    rec = _state
    return call() if rec is None else rec.launch(fn, kwargs, call)


def _run_wrapper(orig):
    """``JITFunction.run``/``InterpretedFunction.run`` timing the launches they make."""
    def run(self, *args, grid, warmup, **kwargs):
        rec = _state
        if rec is None or warmup:
            return orig(self, *args, grid=grid, warmup=warmup, **kwargs)
        return rec.launch(self.fn, kwargs,
                          lambda: orig(self, *args, grid=grid, warmup=warmup, **kwargs))
    functools.update_wrapper(run, orig)
    return run


def _bench_wrapper(orig):
    """The autotuner's timing of candidate configs is not part of the program's work."""
    def _bench(self, *args, **kwargs):
        rec = _state
        if rec is None:
            return orig(self, *args, **kwargs)
        rec.quiet += 1
        try:
            return orig(self, *args, **kwargs)
        finally:
            rec.quiet -= 1
    functools.update_wrapper(_bench, orig)
    return _bench


def _install_kernels(patches):
    from triton.runtime.autotuner import Autotuner
    from triton.runtime.jit import JITFunction
    from ..kernels import launcher
    patches.set(JITFunction, "run", _run_wrapper(vars(JITFunction)["run"]))
    try:
        from triton.runtime.interpreter import InterpretedFunction
    except ImportError:   # pragma: no cover - every Triton we support has it
        InterpretedFunction = None
    if InterpretedFunction is not None:
        patches.set(InterpretedFunction, "run", _run_wrapper(vars(InterpretedFunction)["run"]))
    if "_bench" in vars(Autotuner):
        patches.set(Autotuner, "_bench", _bench_wrapper(vars(Autotuner)["_bench"]))
    patches.set(launcher, "profile_launch", _cached_launch_hook)


def install(recorder):
    """Starts recording into ``recorder``: ops and backward nodes when ``recorder.cpu``,
    kernels when ``recorder.cuda``. Returns the patches ``uninstall`` takes back."""
    global _state
    if _state is not None:
        raise RuntimeError("framework.profiler: a profiler is already running; stop it "
                           "before starting another")
    patches = Patches()
    try:
        if recorder.cpu:
            from ..autograd import engine
            _install_ops(patches)
            _install_optimizers(patches)
            prev = engine.profile_hook   # another tool's (a FlopCounterMode's) runs inside
            patches.set(engine, "profile_hook", _backward_hook if prev is None else
                        lambda node, grads, apply: _backward_hook(
                            node, grads, lambda n, g: prev(n, g, apply)))
        if recorder.cuda:
            _install_kernels(patches)
        if recorder.memory:
            _install_memory(patches)
    except BaseException:
        patches.restore()
        raise
    _state = recorder
    return patches


def _alloc_wrap(fn, device):
    """An allocator entry point ``fn(nbytes, ...)`` that adds ``nbytes`` to the innermost
    open range of the calling thread (host or device bytes)."""
    def recorded(nbytes, *args):
        out = fn(nbytes, *args)
        rec = _state
        if rec is not None:
            stack = rec.stacks.get(_ident())
            if stack:
                if device:
                    stack[-1].dmem += nbytes
                else:
                    stack[-1].mem += nbytes
        return out
    return recorded


def _install_memory(patches):
    """``profile_memory``: the host allocator as the dispatcher and ``Storage`` reach it,
    and the CUDA runtime's storage allocation."""
    from .. import _storage
    from .._ops import alloc
    from ..cuda import _runtime
    for owner in (alloc, _storage):
        patches.set(owner, "_host_alloc", _alloc_wrap(vars(owner)["_host_alloc"], False))
    patches.set(_runtime, "alloc_storage", _alloc_wrap(_runtime.alloc_storage, True))


def uninstall(patches):
    global _state
    _state = None
    patches.restore()
