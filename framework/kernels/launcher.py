"""A cached launcher for the framework's hottest Triton kernels.

``JITFunction.run`` binds every argument, asks the C specializer about each, builds and hashes
a cache key, checks the kernel's globals and gathers launch metadata on every launch: tens of
microseconds of host time per call on the GPU machines, several times PyTorch's whole
per-op overhead. ``cached(kernel)`` keeps Triton's semantics with one key computed here:
each argument reduced to what Triton specializes on (a tensor's dtype and 16-byte alignment;
an integer's width, whether it is 1 and whether 16 divides it; constexpr values as they
are). That key is finer than Triton's own, so one key always means one compiled kernel. The
first launch with a new key goes through ``JITFunction.run``, which compiles if needed,
launches, and returns the compiled kernel to remember; later ones call its launcher directly.

Under the interpreter (``TRITON_INTERPRET=1``) and the compile check there is no compiled
kernel to call, and ``cached`` returns the kernel itself; but with
``FW_CACHED_LAUNCH=interpreted`` it wraps the interpreter's kernels too, for
bench/host_step.py, whose stubbed launches hand back a stand-in compiled kernel: the host
then runs the GPU's launch path but for Triton's own launcher. A launch hook set in
``triton.knobs.runtime`` (profilers) or an argument of a type not known here take Triton's
path, as does every launch with ``FW_CACHED_LAUNCH=0``. A callable grid is called with the
arguments by name, as Triton calls it. ``triton.heuristics`` and ``triton.autotune`` may wrap
a cached kernel: they launch it through ``run``.
"""
import inspect
import os
from functools import partial

import triton.language as tl
from triton import knobs
from triton.runtime.interpreter import InterpretedFunction
from triton.runtime.jit import JITFunction

from .. import _C
from ..cuda import _runtime

# FW_CACHED_LAUNCH=0 (or setting this False) sends every launch through JITFunction.run:
# to rule the cache out when debugging, and to time the difference (bench/gpu_ops.py)
enabled = os.environ.get("FW_CACHED_LAUNCH", "1") != "0"
_WRAP_INTERPRETED = os.environ.get("FW_CACHED_LAUNCH") == "interpreted"

# framework.profiler sets this while it times kernels: ``profile_launch(fn, kwargs, launch)``
# runs ``launch()`` between two CUDA events; None otherwise (one test per launch)
profile_launch = None

_I32_MIN, _I32_MAX, _U64_MIN = -(1 << 31), (1 << 31) - 1, 1 << 63


class _Unknown(Exception):
    pass


# constexpr values keyed by their address (hashing a JITFunction or a tl.dtype runs Python
# code); an equal object at another address only costs one more entry
_IDENTITY = (JITFunction, InterpretedFunction, tl.dtype)
_bind_ready = []


def _setup_bind():
    """Hands native/launch_bind.cpp the Tensor type and the rules it calls back (once: the
    tensor module imports the kernels, so not at import time)."""
    from .._tensor import Tensor
    _C.launch_bind_setup(Tensor, _spec, _arg, _IDENTITY)
    _bind_ready.append(True)


def _spec(v):
    """What Triton's specialization of a runtime argument depends on, as a hashable value."""
    t = type(v)
    if t is int:
        # Triton: i32 / i64 / u64 by range; 1 becomes a constant; 16 | v an attribute. In
        # the int32 range one int says it all: the residue mod 16, or 16 for 1
        if _I32_MIN <= v <= _I32_MAX:
            return 16 if v == 1 else v & 15
        return (not v & 15, v >= _U64_MIN)
    if t is float or t is bool or v is None:
        return t
    if t is tuple:
        return tuple(map(_spec, v))
    ptr = getattr(v, "data_ptr", None)
    if ptr is not None:
        return v.dtype, not ptr() & 15
    if t is str or isinstance(v, (tl.dtype, JITFunction)):
        return v
    raise _Unknown  # e.g. a NumPy scalar: its value would make the key grow without bound


def _arg(v):
    """(what the compiled launcher is given, the key's part) for a runtime argument. A
    tensor goes as its address: Triton's launcher would call data_ptr() and ask the driver
    whether the address is device memory (cuPointerGetAttribute) on every launch; the
    dispatcher has already checked the devices."""
    ptr = getattr(v, "data_ptr", None)
    if ptr is not None:
        p = ptr()
        return p, (v.dtype, not p & 15)
    return v, _spec(v)


def _hooked():
    """Whether a launch hook is set (a HookChain with calls in Triton >= 3.5; else not None)."""
    h = knobs.runtime.launch_enter_hook
    return h is not None and bool(getattr(h, "calls", True))


class CachedKernel:
    """``cached(kernel)[grid](*args, **kwargs)`` launches like ``kernel[grid](...)``."""

    def __init__(self, fn):
        self.fn = fn
        # Triton's test of a constexpr parameter, on the annotation (an object or a string)
        sig = inspect.signature(fn.fn).parameters.values()
        self._params = [(p.name, "constexpr" in str(p.annotation)) for p in sig]
        self._names = frozenset(n for n, _ in self._params)
        self._defaults = {p.name: p.default for p in sig if p.default is not p.empty}
        self._specs = {}    # (number of positionals, keyword names) -> launch_bind's spec
        self._kernels = {}  # (device, key) -> (its run, function, packed_metadata, kernel)
        self._pinned = {}   # the objects keyed by address in the keys of _kernels

    def __getattr__(self, name):  # the JITFunction's own attributes (fn, src, warmup, ...)
        if name == "fn":
            raise AttributeError(name)
        return getattr(self.fn, name)

    def __getitem__(self, grid):
        return partial(self.launch, grid)  # one Python call a launch, not two

    def run(self, *args, grid, warmup=False, **kwargs):
        """``JITFunction.run``'s interface, through which ``triton.heuristics`` and
        ``triton.autotune`` launch the function they wrap: so a tuned kernel, once its
        config is chosen, launches through the cache too."""
        if warmup:
            return self.fn.run(*args, grid=grid, warmup=True, **kwargs)
        return self.launch(grid, *args, **kwargs)

    def _meta(self, args, kwargs):
        """The arguments by parameter name, as Triton hands them to a callable grid."""
        meta = dict(self._defaults)
        meta.update(zip((n for n, _ in self._params), args))
        meta.update(kwargs)
        return meta

    def _make_spec(self, nargs, kwargs):
        """native/launch_bind.cpp's spec for one way of calling (how many positionals,
        which keywords): where each parameter's value comes from, whether it is a
        constexpr, and the keywords that are options; None where Triton's own path must
        bind (a missing or extra argument)."""
        if not _bind_ready:
            _setup_bind()
        if nargs > len(self._params):
            return None
        params = []
        for i, (name, constexpr) in enumerate(self._params):
            if i < nargs:
                params.append((0, i, constexpr))
            elif name in kwargs:
                params.append((1, name, constexpr))
            elif name in self._defaults:
                params.append((2, self._defaults[name], constexpr))
            else:
                return None
        return tuple(params), tuple(k for k in kwargs if k not in self._names)

    def bind(self, args, kwargs):
        """(the launch arguments in parameter order, the cache key), or None where Triton's
        own path must bind them (a missing argument, a type not known here)."""
        pk = (len(args), tuple(kwargs))
        spec = self._specs.get(pk, False)
        if spec is False:
            spec = self._specs[pk] = self._make_spec(len(args), kwargs)
        if spec is None:
            return None
        try:
            return _C.launch_bind(spec, args, kwargs)
        except _Unknown:
            return None

    def launch(self, grid, *args, **kwargs):
        """``kernel[grid](*args, **kwargs)``."""
        if callable(grid):  # a tuned launch: the grid depends on the config's block sizes
            grid = grid(self._meta(args, kwargs))
        bound = None if not enabled or _hooked() else self.bind(args, kwargs)
        if bound is None:
            return self.fn.run(*args, grid=grid, warmup=False, **kwargs)
        vals, key = bound
        device = _runtime.current_index()
        hit = self._kernels.get((device, key))
        if hit is None:
            kernel = self.fn.run(*args, grid=grid, warmup=False, **kwargs)
            if kernel is not None and not hasattr(kernel, "result"):  # not an async compile
                # what a launch needs of it, read once (its launcher is made on first use)
                self._kernels[(device, key)] = (kernel.run, kernel.function,
                                                kernel.packed_metadata, kernel)
                # a key holds a JITFunction's address: it must outlive the key
                self._pinned.update((id(v), v) for v in (*args, *kwargs.values())
                                    if type(v) in _IDENTITY)
            return kernel
        run, function, metadata, kernel = hit
        n = len(grid)
        args = (grid[0], grid[1] if n > 1 else 1, grid[2] if n > 2 else 1,
                _runtime.stream_handle(device), function, metadata, None, None, None, *vals)
        if profile_launch is None:
            run(*args)
        else:
            profile_launch(self.fn.fn, kwargs, lambda: run(*args))
        return kernel

    def prepare(self, args, kwargs):
        """For a caller that repeats one launch but for the addresses of its positional
        tensors (a GEMM's plan: the same shapes every step), once that launch's kernel is
        stored: ``go(grid, *tensors)`` launches it with ``tensors`` in place of the
        positional tensors of ``args``, in order, skipping the binding and the key, and
        returns True; it returns False (nothing launched: the caller launches as usual)
        where the key could differ (a tensor's dtype or 16-byte alignment, the current
        device) or a launch hook or the profiler is set. None where there is nothing
        stored to launch."""
        bound = None if not enabled or _hooked() else self.bind(args, kwargs)
        if bound is None:
            return None
        vals, key = bound
        device = _runtime.current_index()
        hit = self._kernels.get((device, key))
        if hit is None:
            return None
        run, function, metadata, _ = hit
        pos = [i for i, v in enumerate(args) if getattr(v, "data_ptr", None) is not None]
        want = [(args[i].dtype, not args[i].data_ptr() & 15) for i in pos]
        base = list(vals)   # the positional arguments are the first parameters, in order
        checks = list(zip(pos, want))
        current, stream = _runtime.current_index, _runtime.stream_handle

        def go(grid, *tensors):
            if (current() != device or profile_launch is not None or _hooked()
                    or len(tensors) != len(checks)):
                return False
            v = base[:]
            for (i, (dtype, aligned)), t in zip(checks, tensors):
                p = t.data_ptr()
                if t.dtype is not dtype or (not p & 15) is not aligned:
                    return False
                v[i] = p
            n = len(grid)
            run(grid[0], grid[1] if n > 1 else 1, grid[2] if n > 2 else 1, stream(device),
                function, metadata, None, None, None, *v)
            return True
        return go


def cached(fn):
    """``fn`` with the cached launcher where kernels really compile (a GPU), else ``fn``."""
    if type(fn) is JITFunction or (_WRAP_INTERPRETED and type(fn) is InterpretedFunction):
        return CachedKernel(fn)
    return fn  # interpreted, the compile check's hybrid, autotuned


def next_pow2(n, lo=1):
    """The smallest power of two >= ``n`` and >= ``lo`` (a power of two), for block sizes:
    ``triton.next_power_of_2`` is a constexpr function, slow to call from the host. A
    non-int ``n`` raises TypeError, as that one does."""
    p = 1 << int.bit_length(n - 1) if n > 1 else 1
    return p if p > lo else lo


def cdiv(a, b):
    """Ceiling division of ints, for grids: ``triton.cdiv`` is a constexpr function whose
    call from the host goes through Triton's argument handling (a few microseconds)."""
    return -(-a // b)
