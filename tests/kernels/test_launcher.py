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


INTS = [0, 1, 2, 15, 16, 32, -1, -16, 2**31 - 1, 2**31, -2**31, -2**31 - 1, 2**32, 2**63 - 16,
        2**63, 2**64 - 1]


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


def test_launches_go_direct_after_the_first(monkeypatch):
    fn = JITFunction(_kernel)
    compiled, slow = _Compiled(), []

    def run(*args, grid, warmup, **kwargs):
        slow.append((args, kwargs))
        return compiled

    monkeypatch.setattr(fn, "run", run)
    monkeypatch.setattr(launcher._runtime, "stream_handle", lambda device: 77)
    ck = launcher.CachedKernel(fn)
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
