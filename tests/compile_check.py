"""Compile every Triton kernel the tests launch for a real GPU, without one.

Triton's interpreter (TRITON_INTERPRET=1, how CI simulates ``cuda``) runs a kernel's Python
body with NumPy; it never builds the kernel. The compiled path differs in ways that only
show on a GPU: integer arguments equal to 1 become compile-time constants (so ``n.to(...)``
on one fails), control flow must type-check, tile shapes must be powers of two, and ptxas
sees the generated code. With ``FW_COMPILE_CHECK=1`` beside ``TRITON_INTERPRET=1`` each
launch is also compiled, with the specialization the JIT would give the same arguments, for
an sm_90 (Hopper) target, through the whole pipeline to a cubin. A kernel that does not compile fails the
test that launched it (or, with ``FW_COMPILE_LOG=path``, is written to that file); the
kernel still runs in the interpreter, so values are checked too.

Installed by tests/conftest.py before ``framework`` is imported, so that ``@triton.jit``
in the framework's kernel modules builds the hybrid below.
"""
import functools
import os

_TARGET = ("cuda", 90, 32)


class _FakeDriver:
    """What JITFunction.run asks of the active driver when it only compiles (warmup)."""

    def get_current_target(self):
        from triton.backends.compiler import GPUTarget
        return GPUTarget(*_TARGET)

    def get_current_device(self):
        return 0

    def get_current_stream(self, device=None):
        return 0

    def is_active(self):
        return True

    def __getattr__(self, name):
        # What user scripts and triton.testing ask (get_active_torch_device, the device
        # interface, benchmarking): the framework's simulator driver answers.
        from framework.cuda._triton_driver import SimTritonDriver
        return getattr(SimTritonDriver(), name)


def install():
    """Makes ``triton.jit`` return kernels that compile for sm_90 and run in the
    interpreter. Call before the framework's kernel modules are imported."""
    import triton
    from triton.runtime import driver, jit as jit_mod
    from triton.runtime import interpreter
    from triton.runtime.interpreter import InterpretedFunction

    # Nothing else asks Triton for a GPU driver in the simulator, and without a GPU there
    # is none to create: compiles target sm_90 through this one.
    driver.set_active(_FakeDriver())

    class Hybrid(jit_mod.JITFunction):
        """A JITFunction (the compiler sees a real one, also as a callee of other kernels)
        whose launches and nested calls run in the interpreter after compiling."""

        def __init__(self, fn, **kwargs):
            super().__init__(fn, **kwargs)
            self._interp = InterpretedFunction(fn, **kwargs)

        def __get__(self, obj, objtype=None):
            # As a tensor method (x.sum()): the compiler binds a JITFunction found on the
            # class itself; the interpreter calls it as a method.
            if obj is None or not _interpreting:
                return self
            return functools.partial(self.__call__, obj)

        def __call__(self, *args, **kwargs):
            # A helper called from an interpreted kernel. InterpretedFunction.__call__
            # patches triton.language for the interpreter and never restores it, which
            # would leave the compiler with the interpreter's builtins.
            scope = interpreter._patch_lang(self._interp.fn)
            try:
                return self._interp.rewrite()(*args, **kwargs)
            finally:
                scope.restore()

        def run(self, *args, grid, warmup, **kwargs):
            global _interpreting
            _compile(self, args, kwargs, grid)
            _interpreting = True
            try:
                return self._interp.run(*args, grid=grid, warmup=warmup, **kwargs)
            finally:
                _interpreting = False

    log = os.environ.get("FW_COMPILE_LOG")

    def _compile(fn, args, kwargs, grid):
        try:
            jit_mod.JITFunction.run(fn, *args, grid=grid, warmup=True, **kwargs)
        except Exception as e:  # noqa: BLE001 - reported, or raised at the user's call
            if not log:
                raise
            # FW_COMPILE_LOG=path: collect the errors and go on (for a Triton whose
            # interpreter fails tests of its own, the compile errors are what counts)
            with open(log, "a") as f:
                test = os.environ.get("PYTEST_CURRENT_TEST", "")
                f.write(f"=== {fn.__name__}: {type(e).__name__} ({test})\n{e}\n")

    def jit(fn=None, **kwargs):
        if fn is None:
            return lambda f: Hybrid(f, **kwargs)
        return Hybrid(fn, **kwargs)

    triton.jit = jit
    jit_mod.jit = jit
    _replace_language_functions(Hybrid, InterpretedFunction)


def _replace_language_functions(hybrid, interpreted):
    """triton.language's own @jit functions (tl.zeros, tl.sum's combine functions, ...)
    were made interpreter-only when triton was imported: rebuild them as hybrids, in every
    module that holds one and as tensor methods (x.sum())."""
    import sys

    import triton.language as tl
    made = {}

    def hybrid_of(f):
        if id(f) not in made:
            made[id(f)] = hybrid(f.fn, **f.kwargs)
        return made[id(f)]

    for name, mod in list(sys.modules.items()):
        if mod is None or not name.startswith("triton.language"):
            continue
        for attr, value in list(vars(mod).items()):
            if isinstance(value, interpreted):
                setattr(mod, attr, hybrid_of(value))
    for attr, value in list(vars(tl.core.tensor).items()):
        cells = getattr(value, "__closure__", None) or ()
        inner = [c.cell_contents for c in cells if isinstance(c.cell_contents, interpreted)]
        if inner:
            setattr(tl.core.tensor, attr, hybrid_of(inner[0]))


_interpreting = False
