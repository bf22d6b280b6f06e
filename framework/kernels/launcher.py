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
kernel to call, and ``cached`` returns the kernel itself. A launch hook set in
``triton.knobs.runtime`` (profilers) or an argument of a type not known here take Triton's
path, as does every launch with ``FW_CACHED_LAUNCH=0``. A callable grid is called with the
arguments by name, as Triton calls it. ``triton.heuristics`` and ``triton.autotune`` may wrap
a cached kernel: they launch it through ``run``.
"""
import inspect
import os

import triton.language as tl
from triton import knobs
from triton.runtime.jit import JITFunction

from ..cuda import _runtime

# FW_CACHED_LAUNCH=0 (or setting this False) sends every launch through JITFunction.run:
# to rule the cache out when debugging, and to time the difference (bench/gpu_ops.py)
enabled = os.environ.get("FW_CACHED_LAUNCH", "1") != "0"

# framework.profiler sets this while it times kernels: ``profile_launch(fn, kwargs, launch)``
# runs ``launch()`` between two CUDA events; None otherwise (one test per launch)
profile_launch = None

_I32_MIN, _I32_MAX, _U64_MIN = -(1 << 31), (1 << 31) - 1, 1 << 63


class _Unknown(Exception):
    pass


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
        self._params = [(p.name, p.is_constexpr) for p in fn.params]
        self._names = frozenset(n for n, _ in self._params)
        self._defaults = {n: p.default for n, p in inspect.signature(fn.fn).parameters.items()
                          if p.default is not inspect.Parameter.empty}
        self._binders = {}  # (number of positionals, keyword names) -> bind function
        self._kernels = {}  # (device, key) -> CompiledKernel

    def __getattr__(self, name):  # the JITFunction's own attributes (fn, src, warmup, ...)
        if name == "fn":
            raise AttributeError(name)
        return getattr(self.fn, name)

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.launch(grid, args, kwargs)

    def run(self, *args, grid, warmup=False, **kwargs):
        """``JITFunction.run``'s interface, through which ``triton.heuristics`` and
        ``triton.autotune`` launch the function they wrap: so a tuned kernel, once its
        config is chosen, launches through the cache too."""
        if warmup:
            return self.fn.run(*args, grid=grid, warmup=True, **kwargs)
        return self.launch(grid, args, kwargs)

    def _meta(self, args, kwargs):
        """The arguments by parameter name, as Triton hands them to a callable grid."""
        meta = dict(self._defaults)
        meta.update(zip((n for n, _ in self._params), args))
        meta.update(kwargs)
        return meta

    def _make_binder(self, nargs, kwargs):
        """A function (args, kwargs) -> (launch arguments in parameter order, key), written
        out for one way of calling (how many positionals, which keywords) as Triton writes
        its binder: a loop over parameters costs more than the launch it saves. None where
        Triton's own path must bind (a missing or extra argument)."""
        if nargs > len(self._params):
            return None
        from .._tensor import Tensor
        lines, vals, key = [], [], []
        env = {"_arg": _arg, "_spec": _spec, "_defaults": self._defaults, "Tensor": Tensor}
        for i, (name, constexpr) in enumerate(self._params):
            src = (f"args[{i}]" if i < nargs else f"kwargs[{name!r}]" if name in kwargs
                   else f"_defaults[{name!r}]" if name in self._defaults else None)
            if src is None:
                return None
            lines.append(f"    v{i} = {src}")
            if constexpr:
                key.append(f"v{i}")
            else:
                # the common kinds inline (as _arg would give them), the rest through _arg
                lines += [f"    t = type(v{i})",
                          f"    if t is int and {_I32_MIN} <= v{i} <= {_I32_MAX}:"
                          f" k{i} = 16 if v{i} == 1 else v{i} & 15",
                          f"    elif t is Tensor:",
                          f"        p = v{i}.data_ptr(); k{i} = (v{i}.dtype, not p & 15); v{i} = p",
                          f"    elif t is tuple: k{i} = tuple(map(_spec, v{i}))",
                          f"    else: v{i}, k{i} = _arg(v{i})"]
                key.append(f"k{i}")
            vals.append(f"v{i}")
        options = [f"kwargs[{k!r}]" for k in kwargs if k not in self._names]
        body = "\n".join(lines)
        tup = lambda xs: f"({', '.join(xs)},)" if xs else "()"
        src = (f"def bind(args, kwargs):\n{body}\n"
               f"    return [{', '.join(vals)}], {tup(key)}, {tup(options)}\n")
        exec(src, env)  # noqa: S102 - generated from the kernel's own parameter names
        return env["bind"]

    def bind(self, args, kwargs):
        """(the launch arguments in parameter order, the cache key), or None where Triton's
        own path must bind them (a missing argument, a type not known here)."""
        pk = (len(args), tuple(kwargs))
        binder = self._binders.get(pk, False)
        if binder is False:
            binder = self._binders[pk] = self._make_binder(len(args), kwargs)
        if binder is None:
            return None
        try:
            vals, key, options = binder(args, kwargs)
        except _Unknown:
            return None
        return vals, (key, options)

    def launch(self, grid, args, kwargs):
        if callable(grid):  # a tuned launch: the grid depends on the config's block sizes
            grid = grid(self._meta(args, kwargs))
        bound = None if not enabled or _hooked() else self.bind(args, kwargs)
        if bound is None:
            return self.fn.run(*args, grid=grid, warmup=False, **kwargs)
        vals, key = bound
        device = _runtime.current_index()
        kernel = self._kernels.get((device, key))
        if kernel is None:
            kernel = self.fn.run(*args, grid=grid, warmup=False, **kwargs)
            if kernel is not None and not hasattr(kernel, "result"):  # not an async compile
                self._kernels[(device, key)] = kernel
            return kernel
        n = len(grid)
        args = (grid[0], grid[1] if n > 1 else 1, grid[2] if n > 2 else 1,
                _runtime.stream_handle(device), kernel.function, kernel.packed_metadata,
                None, None, None, *vals)
        if profile_launch is None:
            kernel.run(*args)
        else:
            profile_launch(self.fn.fn, kwargs, lambda: kernel.run(*args))
        return kernel


def cached(fn):
    """``fn`` with the cached launcher where kernels really compile (a GPU), else ``fn``."""
    if type(fn) is not JITFunction:  # interpreted, the compile check's hybrid, autotuned
        return fn
    return CachedKernel(fn)


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
