"""The cached launcher (framework/kernels/launcher.py) without a GPU: its key must be finer
than Triton's specialization (one key, one compiled kernel), and its direct launches must
pass the arguments as JITFunction.run does (parameter order, keywords, defaults)."""
import itertools

import pytest
import triton.language as tl
from triton.runtime.jit import JITFunction, create_function_from_signature

import framework as fw
from framework.kernels import launcher


def _kernel(x, y, n, m, f, b, t, K: tl.constexpr, D: tl.constexpr = 4):
    pass


def _triton_binder(fn):
    from triton.backends.compiler import GPUTarget
    from triton.compiler import make_backend
    backend = make_backend(GPUTarget("cuda", 90, 32))
    return create_function_from_signature(fn.signature, fn.params, backend)


# 17: an int whose residue mod 16 is 1's, which Triton specializes as a constant
INTS = [0, 1, 2, 15, 16, 17, 32, -1, -16, 2**31 - 1, 2**31, -2**31, -2**31 - 1, 2**32,
        2**63 - 16, 2**63, 2**64 - 1]


def _tensors():
    base = fw.zeros(64)
    return [base, base[1:], base[4:], base.to(fw.float16), base.to(fw.float16)[8:],
            fw.zeros(8, dtype=fw.int64)]


def test_key_is_finer_than_triton_specialization():
    fn = JITFunction(_kernel, do_not_specialize=["m"])
    ck = launcher.CachedKernel(fn)
    binder = _triton_binder(fn)
    seen = {}
    tensors = _tensors()
    cases = itertools.product(tensors, tensors[:3], INTS, INTS[:6], [0.5, 2.0], [True, False],
                              [(1, 2), (16, 3), (2**40, 1)])
    for x, y, n, m, f, b, t in cases:
        vals, key = ck.bind((x, y, n, m, f, b, t), {"K": 3})
        _, spec, _ = binder(x, y, n, m, f, b, t, K=3)
        spec = repr(spec)
        assert seen.setdefault(key, spec) == spec, (key, spec, seen[key])
    assert len(seen) > 100  # the key does tell specializations apart


def test_unknown_argument_types_take_tritons_path():
    import numpy as np
    ck = launcher.CachedKernel(JITFunction(_kernel))
    x = fw.zeros(4)
    assert ck.bind((x, x, np.int64(3), 1, 1.0, True, ()), {"K": 1}) is None
    assert ck.bind((x, x, 3), {}) is None  # missing arguments: Triton raises its own error


class _Compiled:
    function, packed_metadata = "fn-handle", "meta"

    def __init__(self):
        self.calls = []

    def run(self, *a):
        self.calls.append(a)


def _faked(monkeypatch, kernel):
    """A CachedKernel of ``kernel`` whose JITFunction.run (Triton's path) only records
    (grid, args, kwargs) and returns a fake compiled kernel; the stream handle is 77."""
    fn = JITFunction(kernel)
    compiled, slow = _Compiled(), []

    def run(*args, grid, warmup, **kwargs):
        slow.append((grid, args, kwargs))
        return compiled

    monkeypatch.setattr(fn, "run", run)
    monkeypatch.setattr(launcher._runtime, "stream_handle", lambda device: 77)
    return launcher.CachedKernel(fn), compiled, slow


def test_launches_go_direct_after_the_first(monkeypatch):
    ck, compiled, slow = _faked(monkeypatch, _kernel)
    x = fw.zeros(64)
    args = (x, x, 40, 16, 1.5, False, (3, 4))
    assert ck[(5,)](*args, K=7, num_warps=8) is compiled
    assert len(slow) == 1 and not compiled.calls
    ck[(6, 2)](*args, K=7, num_warps=8)  # same key: straight to the compiled launcher
    assert len(slow) == 1
    # tensors go as addresses (the launcher would otherwise ask the driver about each)
    p = x.data_ptr()
    assert compiled.calls == [(6, 2, 1, 77, "fn-handle", "meta", None, None, None,
                               p, p, 40, 16, 1.5, False, (3, 4), 7, 4)]
    # a new specialization (unaligned pointer, 1, another constexpr or option) is Triton's
    for changed, kw in [((x[1:],) + args[1:], {"K": 7, "num_warps": 8}),
                        (args[:2] + (1,) + args[3:], {"K": 7, "num_warps": 8}),
                        (args, {"K": 8, "num_warps": 8}), (args, {"K": 7, "num_warps": 4})]:
        ck[(1,)](*changed, **kw)
    assert len(slow) == 5 and len(compiled.calls) == 1
    ck[(1,)](*args, K=7, D=4, num_warps=8)  # the default given by keyword: the same kernel
    assert len(slow) == 5 and compiled.calls[-1][9:] == (p, p) + args[2:] + (7, 4)
    ck[(1,)](*args, K=7, D=5, num_warps=8)
    assert len(slow) == 6 and len(compiled.calls) == 2


def _op_kernel(x, n, OP: tl.constexpr):
    pass


def test_function_constexprs_keyed_by_identity_and_kept(monkeypatch):
    # a JITFunction passed as a constexpr (the pointwise kernels' OP) is keyed by its
    # address, not its hash (Python code on every launch); the launcher keeps alive the
    # functions of the keys it stores, so an address never comes to name another function
    ck, compiled, slow = _faked(monkeypatch, _op_kernel)
    f, g = JITFunction(_kernel), JITFunction(_kernel)
    x = fw.zeros(8)
    (_, kf), (_, kg) = ck.bind((x, 3), {"OP": f}), ck.bind((x, 3), {"OP": g})
    assert kf != kg and id(f) in kf and id(g) in kg
    ck[(1,)](x, 3, OP=f)
    assert ck._pinned == {id(f): f}
    ck[(1,)](x, 3, OP=f)
    ck[(1,)](x, 3, OP=g)
    assert len(slow) == 2 and len(compiled.calls) == 1 and ck._pinned == {id(f): f, id(g): g}


def test_tensor_subclasses_pass_as_addresses(monkeypatch):
    ck, compiled, slow = _faked(monkeypatch, _op_kernel)
    p = fw.nn.Parameter(fw.zeros(8))
    vals, key = ck.bind((p, 3), {"OP": 1})
    assert vals[0] == p.data_ptr() and key[0] == (fw.float32, p.data_ptr() % 16 == 0)


def test_prepared_launch_is_the_cached_launch_with_new_tensors(monkeypatch):
    ck, compiled, slow = _faked(monkeypatch, _kernel)
    x = fw.zeros(64)
    args, kw = (x, x, 40, 16, 1.5, False, (3, 4)), {"K": 7, "num_warps": 8}
    assert ck.prepare(args, kw) is None  # no compiled kernel stored yet
    ck[(5,)](*args, **kw)
    go = ck.prepare(args, kw)
    x2, y2 = fw.ones(64), fw.ones(32)    # other addresses, the same dtype and alignment
    assert go((6, 2), x2, y2) is True
    ck[(6, 2)](x2, y2, *args[2:], **kw)  # what the cached launch passes
    assert len(slow) == 1 and len(compiled.calls) == 2
    assert compiled.calls[0] == compiled.calls[1]
    assert compiled.calls[0][9:11] == (x2.data_ptr(), y2.data_ptr())
    # where the key could differ nothing is launched: the caller takes the usual path
    for tensors in [(x2[1:], y2), (x2.to(fw.float16), y2), (x2,)]:
        assert go((1,), *tensors) is False
    monkeypatch.setattr(launcher, "profile_launch", lambda fn, kwargs, launch: launch())
    assert go((1,), x2, y2) is False
    assert len(compiled.calls) == 2


def test_interpreted_kernels_are_left_alone():
    from framework.kernels.pointwise import _binary_kernel
    if fw.cuda.is_available() and not fw.cuda.is_simulated():
        assert isinstance(_binary_kernel, launcher.CachedKernel)
    else:
        assert not isinstance(_binary_kernel, launcher.CachedKernel)
        assert launcher.cached(_binary_kernel) is _binary_kernel


@pytest.mark.parametrize("device", ["cuda"])
def test_ops_through_the_launcher(device):
    # every launch after the first takes the cached path on a GPU; values must not change
    a = fw.arange(1000, dtype=fw.float32, device=device)
    for _ in range(3):
        b = (a * 2 + 1).sum()
    assert b.item() == 1000 * 999 + 1000


# ---- static checks: which kernels are cached ---------------------------------------------
# ``cached`` makes a JITFunction a CachedKernel on a GPU only, so nothing that runs without
# one can see a wrong use of it: a cached kernel called from another @triton.jit function (a
# device helper) compiles on no GPU, and a host-launched kernel left without @cached pays
# Triton's argument handling on every launch. Both are read from the source.

import ast  # noqa: E402
import pathlib  # noqa: E402

_FRAMEWORK = pathlib.Path(fw.__file__).parent
# module-level @triton.jit functions of framework/kernels launched from the host by name
# but left without @cached: "module.name" -> why. (Kernels wrapped by triton.heuristics or
# triton.autotune, linalg._mm_kernel and fused_linear._linear_kernel, are launched through
# those objects, always with a callable grid, and are not launched by name.)
_UNCACHED_LAUNCHES = {}


def _is_jit(dec):
    d = dec.func if isinstance(dec, ast.Call) else dec
    return ((isinstance(d, ast.Attribute) and d.attr == "jit"
             and isinstance(d.value, ast.Name) and d.value.id == "triton")
            or (isinstance(d, ast.Name) and d.id == "jit"))


def _is_cached(dec):
    return ((isinstance(dec, ast.Name) and dec.id == "cached")
            or (isinstance(dec, ast.Attribute) and dec.attr == "cached"
                and isinstance(dec.value, ast.Name) and dec.value.id == "launcher"))


class _Module:
    def __init__(self, path):
        self.path = path
        rel = path.relative_to(_FRAMEWORK.parent).with_suffix("").parts
        self.qual = ".".join(rel[:-1] if rel[-1] == "__init__" else rel)
        package = rel[:-1]
        self.tree = ast.parse(path.read_text(), str(path))
        self.imports = {}  # local name -> (module, name) it was imported as
        for node in ast.walk(self.tree):
            if isinstance(node, ast.ImportFrom):
                base = package[:len(package) - node.level + 1] if node.level else ()
                target = ".".join(base + tuple((node.module or "").split(".") if node.module
                                               else ()))
                for a in node.names:
                    self.imports[a.asname or a.name] = (target, a.name)
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname:
                        self.imports[a.asname] = tuple(a.name.rsplit(".", 1)) \
                            if "." in a.name else ("", a.name)
        funcs = [n for n in ast.walk(self.tree)
                 if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        self.jit = [f for f in funcs if any(map(_is_jit, f.decorator_list))]
        self.top_jit = {f.name for f in self.tree.body if f in self.jit}
        self.cached = {f.name for f in funcs if any(map(_is_cached, f.decorator_list))}
        self.defined = {n.name for n in self.tree.body
                        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}

    def ref(self, node):
        """(module, name) that a Name or module.attribute expression refers to, before
        following re-exports (_refs does); None for anything else."""
        if isinstance(node, ast.Name):
            return self.imports.get(node.id, (self.qual, node.id))
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            mod = self.imports.get(node.value.id)
            if mod is not None:  # from . import linalg; linalg._mm(...)
                return (".".join(filter(None, mod)), node.attr)
        return None

    def host_nodes(self):
        """Every node outside the bodies of @triton.jit functions."""
        jit = set(map(id, self.jit))
        stack = [self.tree]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(c for c in ast.iter_child_nodes(node) if id(c) not in jit)


_MODULES = None


def _modules():
    global _MODULES
    if _MODULES is None:
        _MODULES = {m.qual: m for m in map(_Module, sorted(_FRAMEWORK.rglob("*.py")))}
    return _MODULES


def _resolve(m, node):
    """What ``node`` in module ``m`` refers to, through re-exports: (module, name) or None."""
    mods = _modules()
    r = m.ref(node)
    for _ in range(10):
        if r is None or r[0] not in mods or r[1] in mods[r[0]].defined:
            return r
        nxt = mods[r[0]].imports.get(r[1])
        if nxt is None:
            return r
        r = nxt
    return r


def _where(mod, node):
    return f"{mod.path.relative_to(_FRAMEWORK.parent)}:{node.lineno}"


def _cached_kernels():
    return {(q, n) for q, m in _modules().items() for n in m.cached}


def test_cached_kernels_are_not_device_helpers():
    mods = _modules()
    cached = _cached_kernels()
    assert len(cached) >= 80  # the scan does see the decorators
    bad = []
    for m in mods.values():
        for f in m.jit:
            for node in ast.walk(f):
                # called, or passed on (a combine_fn, a constexpr OP): Triton compiles
                # neither with a CachedKernel
                if node is not f and _resolve(m, node) in cached:
                    bad.append(f"{_where(m, node)}: cached {ast.unparse(node)} used in "
                               f"@triton.jit {f.name}")
        for node in m.host_nodes():
            # nor may a host launch hand a cached kernel to a kernel as an argument
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript):
                for a in node.args + [k.value for k in node.keywords]:
                    if _resolve(m, a) in cached:
                        bad.append(f"{_where(m, a)}: cached {ast.unparse(a)} passed to a kernel")
            # and @cached goes right above @triton.jit (a JITFunction; autotune/heuristics
            # objects pass through cached() unchanged and would only look cached)
            if isinstance(node, ast.FunctionDef) and node.name in m.cached:
                decs = node.decorator_list
                i = next(i for i, d in enumerate(decs) if _is_cached(d))
                if i + 1 >= len(decs) or not _is_jit(decs[i + 1]):
                    bad.append(f"{_where(m, node)}: @cached {node.name} not directly over "
                               "@triton.jit")
    assert not bad, "\n".join(bad)


def test_host_launched_kernels_are_cached():
    """Every NAME[grid](...) in framework/kernels of a module-level @triton.jit function, and
    every such function handed to a host function that launches its parameter
    (``_launch(_forward_kernel, ...)`` -> ``kernel[grid](...)``), is @cached."""
    mods = {q: m for q, m in _modules().items() if q.startswith("framework.kernels.")}
    top_jit = {(q, n) for q, m in mods.items() for n in m.top_jit}
    cached = _cached_kernels()
    launchers = {}  # (module, function) -> (index, name) of the parameter it launches
    for q, m in mods.items():
        for f in m.host_nodes():
            if isinstance(f, ast.FunctionDef):
                params = [a.arg for a in f.args.args]
                for node in ast.walk(f):
                    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript)
                            and isinstance(node.func.value, ast.Name)
                            and node.func.value.id in params):
                        p = node.func.value.id
                        launchers[(q, f.name)] = (params.index(p), p)
    # pointwise.py's and conv_gemm.py's
    assert {("framework.kernels.pointwise", "_launch"),
            ("framework.kernels.conv_gemm", "_launch")} <= set(launchers)
    launched, bad = set(), []
    for m in mods.values():
        for node in m.host_nodes():
            if not isinstance(node, ast.Call):
                continue
            kernels = []
            if isinstance(node.func, ast.Subscript):  # NAME[grid](...)
                kernels.append(node.func.value)
            elif _resolve(m, node.func) in launchers:  # _launch(NAME, ...)
                i, p = launchers[_resolve(m, node.func)]
                kernels += node.args[i:i + 1] + [k.value for k in node.keywords if k.arg == p]
            for k in kernels:
                r = _resolve(m, k)
                if r not in top_jit:
                    continue  # a variable (heuristics/autotune objects), a parameter, ...
                launched.add(r)
                if r not in cached and ".".join(r) not in _UNCACHED_LAUNCHES:
                    bad.append(f"{_where(m, k)}: {ast.unparse(k)} is launched from the host "
                               "without @cached")
    assert len(launched) >= 80
    assert not bad, "\n".join(bad)


def _tiled(x, n, EVEN: tl.constexpr, BLOCK: tl.constexpr):
    pass


def test_heuristics_and_autotune_launch_through_the_cache(monkeypatch):
    # linalg's and fused_linear's tuned products wrap a cached kernel: triton.heuristics and
    # triton.autotune call its run(), with the grid a function of the chosen block sizes
    import triton
    ck, compiled, slow = _faked(monkeypatch, _tiled)
    h = triton.heuristics({"EVEN": lambda a: a["n"] % a["BLOCK"] == 0})(ck)
    tuned = triton.autotune([triton.Config({"BLOCK": 32}, num_warps=4)], key=["n"])(h)
    x = fw.zeros(64)
    p = x.data_ptr()

    def grid(meta):
        return (launcher.cdiv(meta["n"], meta["BLOCK"]),)

    for kernel, n, block, even in [(h, 40, 16, False), (tuned, 64, 32, True)]:
        kw = {"BLOCK": 16} if kernel is h else {}
        kernel[grid](x, n, **kw)
        assert slow[-1][0] == (launcher.cdiv(n, block),)   # Triton's path got the grid
        assert slow[-1][2]["EVEN"] is even and slow[-1][2]["BLOCK"] == block
        before = len(slow)
        kernel[grid](x, n, **kw)                          # the same key: direct
        assert len(slow) == before
        assert compiled.calls[-1][:3] == (launcher.cdiv(n, block), 1, 1)
        assert compiled.calls[-1][9:] == (p, n, even, block)
