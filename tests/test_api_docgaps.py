"""API gaps found by PyTorch's docstring examples (tests/scripts/doc_examples.py): asarray,
einsum's sublist form, inference tensors' version counter, framework.Event,
torch.overrides helpers, library.get_kernel / DispatchKey / register_autocast,
serialization.skip_data and tensor subclasses, region_activation_memory_budget and
compiler.substitute_in_graph; values and errors against torch 2.13."""
import inspect
import io
import operator
import pickletools
import zipfile

import numpy as np
import pytest

import framework as fw

torch = pytest.importorskip("torch")


def _outcome(f):
    """The value of ``f()``, or the type of what it raised."""
    try:
        return f()
    except Exception as e:  # noqa: BLE001 - the outcome is compared
        return type(e).__name__


def _np(t):
    return np.asarray(t.detach().cpu().numpy())


# ---- asarray -----------------------------------------------------------------------------

def test_asarray_tensor_sharing_copy_and_grad(device):
    a = fw.tensor([1.0, 2.0, 3.0], device=device)
    assert fw.asarray(a).data_ptr() == a.data_ptr()
    assert fw.asarray(a, copy=False) is a
    c = fw.asarray(a, copy=True)
    assert c.data_ptr() != a.data_ptr() and np.array_equal(_np(c), _np(a))
    c[0] = 7.0   # a copy: the source does not change
    assert _np(a)[0] == 1.0
    # another dtype: converted (copy=False cannot hold: PyTorch's ValueError and text)
    d = fw.asarray(a, dtype=fw.float64)
    assert d.dtype is fw.float64 and d.device.type == device
    with pytest.raises(ValueError, match="can't alias tensor with dtype 'Float' into dtype "
                                         "'Double'"):
        fw.asarray(a, dtype=fw.float64, copy=False)
    # another device: copied there
    other = "cpu" if device == "cuda" else "meta"
    moved = fw.asarray(a, device=other)
    assert moved.device.type == other
    with pytest.raises(ValueError, match="can't alias tensor from device"):
        fw.asarray(a, device=other, copy=False)

    # requires_grad: None keeps the history, False gives a view without it, True keeps it
    for lib in (fw, torch):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = x + 2
        kept, none_, on = (lib.asarray(b), lib.asarray(b, requires_grad=False),
                           lib.asarray(b, requires_grad=True))
        got = [(type(t.grad_fn).__name__, t.requires_grad, t.data_ptr() == b.data_ptr())
               for t in (kept, none_, on)]
        cp = lib.asarray(b, copy=True)
        got.append((type(cp.grad_fn).__name__, cp.requires_grad, cp.data_ptr() == b.data_ptr()))
        conv = lib.asarray(b, dtype=lib.float64)
        got.append((type(conv.grad_fn).__name__, conv.requires_grad))
        leaf = lib.asarray(lib.ones(2), requires_grad=True)
        got.append((leaf.is_leaf, leaf.requires_grad))
        got.append(_outcome(lambda: lib.asarray(lib.tensor([1, 2]), requires_grad=True)))
        got.append(_outcome(lambda: lib.asarray([1, 2], requires_grad=True)))
        if lib is fw:
            mine = got
    assert mine == got


def test_asarray_numpy_buffers_scalars_sequences():
    results = []
    for lib in (fw, torch):
        arr = np.arange(6, dtype=np.float32).reshape(2, 3)
        r = [lib.asarray(arr).data_ptr() == arr.ctypes.data,
             lib.asarray(arr, copy=True).data_ptr() == arr.ctypes.data,
             lib.asarray(arr[:, ::2], copy=False).stride(),
             _outcome(lambda: lib.asarray(arr[::-1])),
             _outcome(lambda: lib.asarray(arr, dtype=lib.float64, copy=False)),
             str(lib.asarray(arr, dtype=lib.float64).dtype).split(".")[-1],
             str(lib.asarray(np.float64(0.5)).dtype).split(".")[-1],
             lib.asarray(np.int16(3)).tolist(),
             _outcome(lambda: lib.asarray(np.float32(3), copy=False)),
             _outcome(lambda: lib.asarray([1, 2], copy=False)),
             _outcome(lambda: lib.asarray(2.5, copy=False)),
             lib.asarray([[1, 2], [3, 4]], dtype=lib.float32).tolist(),
             lib.asarray(bytearray(b"\x01\x02\x03\x04"), dtype=lib.uint8).tolist(),
             lib.asarray(bytearray(8)).tolist()]
        buf = bytearray(4)
        t = lib.asarray(buf, dtype=lib.uint8)
        t[1] = 9    # shares the buffer's memory
        r.append(list(buf))
        buf2 = bytearray(4)
        lib.asarray(buf2, dtype=lib.uint8, copy=True)[1] = 9
        r.append(list(buf2))
        results.append(r)
    assert results[0] == results[1]


# ---- einsum's sublist form -----------------------------------------------------------------

def test_einsum_sublists_values_grads(device):
    rng = np.random.default_rng(0)
    A = rng.standard_normal((2, 3, 4, 5))
    B = rng.standard_normal((2, 3, 5, 3))
    cases = [
        lambda L, a, b: L.einsum(a, [..., 0, 1], b, [..., 1, 2], [..., 0, 2]),
        lambda L, a, b: L.einsum(a, [..., 0, 1], b, [..., 1, 2]),   # implicit output
        lambda L, a, b: L.einsum(a, (27, 1, 2, 3), b, (27, 1, 3, 4), [4, 2, 27]),
        lambda L, a, b: L.einsum(a, [0, 1, 2, 3], [3, 2]),            # one operand
    ]
    for case in cases:
        ta = torch.tensor(A, requires_grad=True)
        tb = torch.tensor(B, requires_grad=True)
        fa = fw.tensor(A, device=device, requires_grad=True)
        fb = fw.tensor(B, device=device, requires_grad=True)
        want = case(torch, ta, tb)
        got = case(fw, fa, fb)
        np.testing.assert_allclose(_np(got), want.detach().numpy(), rtol=1e-10, atol=1e-12)
        want.square().sum().backward()
        got.square().sum().backward()
        np.testing.assert_allclose(_np(fa.grad), ta.grad.numpy(), rtol=1e-10, atol=1e-12)
        if tb.grad is not None:
            np.testing.assert_allclose(_np(fb.grad), tb.grad.numpy(), rtol=1e-10, atol=1e-12)
    # complex operands, through torch.functional.einsum
    Z = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
    W = Z.conj().T.copy()
    got = fw.functional.einsum(fw.tensor(Z, device=device), [0, 1],
                               fw.tensor(W, device=device), [1, 2], [0, 2])
    want = torch.functional.einsum(torch.tensor(Z), [0, 1], torch.tensor(W), [1, 2], [0, 2])
    np.testing.assert_allclose(_np(got), want.numpy(), rtol=1e-10, atol=1e-12)


def test_einsum_sublist_errors():
    for lib in (fw, torch):
        a = lib.ones(2, 3)
        with pytest.raises(ValueError, match=r"not within the valid range \[0, 52\)"):
            lib.einsum(a, [0, 52])
        with pytest.raises(ValueError, match=r"not within the valid range \[0, 52\)"):
            lib.einsum(a, [0, -1])
        with pytest.raises(TypeError):
            lib.einsum(a, [0, 1.5])
        with pytest.raises(RuntimeError):   # a sublist too short for the operand
            lib.einsum(a, [0])


# ---- inference tensors --------------------------------------------------------------------

def test_inference_tensor_version_raises():
    for lib in (fw, torch):
        x = lib.ones(3)
        with lib.inference_mode():
            y = lib.ones(3)
            v = y[1:]
            with pytest.raises(RuntimeError, match="Inference tensors do not track version "
                                                   "counter."):
                y._version
            with pytest.raises(RuntimeError, match="Inference tensors do not track"):
                v._version
            x.add_(1)   # a normal tensor keeps counting inside inference mode
            assert x._version == 1 and x[1:]._version == 1
        with pytest.raises(RuntimeError, match="Inference tensors do not track"):
            y._version


# ---- framework.Event ----------------------------------------------------------------------

def test_event_cpu_like_torch():
    got = []
    for lib in (fw, torch):
        e = lib.Event(device="cpu")
        t1, t2 = lib.Event(device="cpu", enable_timing=True), lib.Event("cpu",
                                                                          enable_timing=True)
        got.append([str(e.device), e.query(), e.synchronize(), e.wait(), e.event_id,
                    _outcome(e.record), _outcome(lambda: e.elapsed_time(e)),
                    _outcome(lambda: t1.elapsed_time(t2)), _outcome(e.ipc_handle),
                    _outcome(lambda: lib.Event("cpu", True)),
                    sorted(inspect.signature(lib.Event.__init__).parameters)
                    if lib is fw else None])
    assert got[0][:-1] == got[1][:-1]
    assert got[0][-1] == ["blocking", "device", "enable_timing", "interprocess", "self"]
    with pytest.raises(RuntimeError, match="cpu backend doesn't support events."):
        fw.Event("cpu").record()


def test_event_cuda_timing():
    if not fw.cuda.is_available():
        pytest.skip("no cuda device")
    e = fw.Event()     # the current accelerator
    assert e.device == fw.device("cuda", 0)
    start, end = fw.Event("cuda", enable_timing=True), fw.Event("cuda", enable_timing=True)
    with pytest.raises(ValueError, match="must be recorded"):
        start.elapsed_time(end)
    start.record()
    x = fw.ones(1000, device="cuda") * 2
    end.record(fw.cuda.current_stream())
    end.synchronize()
    assert end.query() and start.elapsed_time(end) >= 0
    assert float(x.sum()) == 2000.0
    with pytest.raises(ValueError, match="enable_timing=True"):
        e.elapsed_time(end)


# ---- torch.overrides ----------------------------------------------------------------------

def test_ignored_and_testing_overrides():
    ignored = fw.overrides.get_ignored_functions()
    assert fw.Tensor.as_subclass in ignored and fw.Tensor.new_zeros in ignored
    assert fw.add not in ignored
    over = fw.overrides.get_testing_overrides()
    assert inspect.signature(over[fw.add]) == inspect.signature(fw.add)
    assert over[fw.add](fw.ones(1), fw.ones(1)) == -1
    assert fw.Tensor.as_subclass not in over
    # the keys are the overridable functions
    assert set(over) == {f for fs in fw.overrides.get_overridable_functions().values()
                         for f in fs}


def _redispatch_log(lib):
    from_ = lib.overrides
    log = []

    class LoggingTensor(lib.Tensor):
        depth = 0

        @classmethod
        def __torch_function__(cls, func, types, args, kwargs=None):
            log.append("  " * cls.depth + func.__name__)
            cls.depth += 1
            r = from_.redispatch_function(func, types, args, kwargs)
            cls.depth -= 1
            return r

    class LoggingMode(from_.TorchFunctionMode):
        depth = 0

        def __torch_function__(self, func, types, args, kwargs=None):
            log.append("m" + "  " * self.depth + func.__name__)
            self.depth += 1
            with self:
                r = from_.redispatch_function(func, types, args, kwargs)
            self.depth -= 1
            return r

    def scaled_mul(a, b):
        if from_.has_torch_function((a, b)):
            return from_.handle_torch_function(scaled_mul, (a, b), a, b)
        return a * b + 1

    x = LoggingTensor(lib.tensor([3.0]))
    y = LoggingTensor(lib.tensor([4.0]))
    r1 = scaled_mul(x, y)
    with LoggingMode():
        r2 = scaled_mul(lib.tensor([3.0]), lib.tensor([4.0]))
        r3 = lib.overrides.redispatch_function(lib.mul, (), (lib.tensor([2.0]), 5.0), None)
    return log, type(r1).__name__, r1.tolist(), r2.tolist(), r3.tolist()


def test_redispatch_function():
    assert _redispatch_log(fw) == _redispatch_log(torch)


# ---- library.get_kernel, DispatchKey ------------------------------------------------------

def test_get_kernel_aten():
    got = []
    for lib in (fw, torch):
        x = lib.tensor([1.0, -2.0], requires_grad=True)
        k = lib.library.get_kernel("aten::add.Tensor", lib.DispatchKey.CPU)
        ks = torch._C.DispatchKeySet(torch.DispatchKey.CPU)
        r = k.call_boxed(ks, x, lib.tensor([0.5, 0.5]))
        k2 = lib.library.get_kernel(lib.ops.aten.sin.default, "CPU")
        s = k2.call_boxed(ks, x)
        got.append([r.tolist(), r.requires_grad, np.round(s.detach().numpy(), 6).tolist(),
                    s.requires_grad,
                    _outcome(lambda: lib.library.get_kernel("aten::add.Tensor", "Foo")),
                    _outcome(lambda: lib.library.get_kernel("aten::no_such_op", "CPU")),
                    lib.DispatchKey.CPU.name, lib.DispatchKey.CUDA.value,
                    lib.DispatchKey.AutogradCPU.value,
                    lib.DispatchKey.CompositeImplicitAutograd.value])
    assert got[0] == got[1]


def test_get_kernel_custom_op():
    @fw.library.custom_op("docgaps::twice", mutates_args=())
    def twice(x: fw.Tensor) -> fw.Tensor:
        return x * 2

    k = fw.library.get_kernel("docgaps::twice", "CPU")
    assert k.call_boxed(None, fw.tensor([1.5])).tolist() == [3.0]
    assert fw.library.get_kernel(twice, fw.DispatchKey.CPU).call_boxed(
        None, fw.tensor([2.0])).tolist() == [4.0]


# ---- library.register_autocast ------------------------------------------------------------

def _autocast_run(lib, name):
    seen = []

    @lib.library.custom_op(f"docgaps::{name}", mutates_args=())
    def f(x: lib.Tensor, y: lib.Tensor, n: int) -> lib.Tensor:
        seen.append((str(x.dtype).split(".")[-1], str(y.dtype).split(".")[-1]))
        return (x * y).to(x.dtype) * n

    def setup(ctx, inputs, output):
        ctx.x, ctx.y, _ = inputs

    f.register_autograd(lambda ctx, g: (g * ctx.y, g * ctx.x, None), setup_context=setup)
    bad = [_outcome(lambda: lib.library.register_autocast(f"docgaps::{name}", "meta",
                                                           lib.float16)),
           _outcome(lambda: lib.library.register_autocast("docgaps::nope", "cpu",
                                                           lib.float16))]
    lib.library.register_autocast(f"docgaps::{name}", "cpu", lib.bfloat16)
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with lib.autocast("cpu"):
        r = f(x, lib.full((3,), 3.0), 2)
        r64 = f(x, lib.ones(3, dtype=lib.float64), 1)
        ri = lib.ops.docgaps.__getattr__(name)(lib.tensor([1, 2, 3]), lib.ones(3), 1)
    r.float().sum().backward()
    out = f(x, x, 1)     # outside autocast: as it is
    with lib.autocast("cpu", enabled=False):
        f(x, x, 1)
    with lib.autocast("cuda"):   # another device's region: not cast
        f(x, x, 1)
    return (bad, seen, str(r.dtype), r.tolist(), str(r64.dtype), str(ri.dtype),
            x.grad.tolist(), str(x.grad.dtype), str(out.dtype))


def test_register_autocast():
    mine, want = _autocast_run(fw, "ac"), _autocast_run(torch, "ac")
    assert mine[0] == want[0]
    assert mine[1:] == tuple(v.replace("torch.", "framework.") if isinstance(v, str) else v
                             for v in want[1:])


# ---- serialization ------------------------------------------------------------------------

def test_skip_data_save_and_load():
    t = fw.arange(6, dtype=fw.float32).reshape(2, 3) + 1
    buf = io.BytesIO()
    with fw.serialization.skip_data():
        fw.save({"w": t, "n": 3}, buf)
    buf.seek(0)
    got = fw.load(buf, weights_only=True)
    assert got["n"] == 3 and got["w"].tolist() == [[0.0] * 3] * 2   # the bytes are zeros
    buf.seek(0)
    theirs = torch.load(buf, weights_only=True)   # PyTorch reads the file
    assert theirs["w"].shape == (2, 3) and theirs["w"].dtype == torch.float32
    assert theirs["w"].eq(0).all()
    # a load under skip_data reads metadata only: the storage is not filled from the file
    # (whose data record holds nines here)
    full = io.BytesIO()
    fw.save(t, full)
    raw = bytearray(full.getvalue())
    at = raw.find(t.numpy().tobytes())
    raw[at:at + 24] = np.full(6, 9.0, np.float32).tobytes()
    with fw.serialization.skip_data():
        meta = fw.load(io.BytesIO(bytes(raw)), weights_only=True)
    assert meta.shape == (2, 3) and meta.dtype is fw.float32
    assert not meta.eq(9).all()
    assert fw.load(io.BytesIO(bytes(raw))).eq(9).all()
    # and PyTorch's own skip_data file loads here as zeros
    tb = io.BytesIO()
    with torch.serialization.skip_data():
        torch.save(torch.ones(4), tb)
    tb.seek(0)
    assert fw.load(tb).tolist() == [0.0] * 4


class DocGapsTensor(fw.Tensor):
    pass


class TorchDocGapsTensor(torch.Tensor):
    pass


def _globals(buf):
    with zipfile.ZipFile(buf) as z:
        data = z.read(next(n for n in z.namelist() if n.endswith("data.pkl")))
    out = []
    for op, arg, _ in pickletools.genops(data):
        if op.name == "GLOBAL":
            out.append(arg.replace("TorchDocGapsTensor", "DocGapsTensor"))
    return out


def test_subclass_save_safe_globals():
    pairs = []
    for lib, cls in ((fw, DocGapsTensor), (torch, TorchDocGapsTensor)):
        t = cls(lib.tensor([[1.0, 2.0], [3.0, 4.0]]))
        t.note = "kept"
        buf = io.BytesIO()
        lib.save(t, buf)
        glob = _globals(buf)
        buf.seek(0)
        refused = _outcome(lambda: lib.load(buf, weights_only=True))
        buf.seek(0)
        with lib.serialization.safe_globals([cls]):
            assert cls in lib.serialization.get_safe_globals()
            r = lib.load(buf, weights_only=True)
        assert cls not in lib.serialization.get_safe_globals()
        buf.seek(0)
        r2 = lib.load(buf, weights_only=False)
        pairs.append((glob, refused, type(r) is cls, r.note, r.tolist(), type(r2) is cls))
    assert pairs[0] == pairs[1]


def test_unpicklable_subclass_raises():
    ns = {"torch": fw}
    exec("class MyTensor(torch.Tensor):\n    pass\n", ns)   # __module__ is builtins
    with pytest.raises(Exception) as e:
        fw.save(ns["MyTensor"](fw.randn(2, 3)), io.BytesIO())
    assert type(e.value).__name__ == "PicklingError"


# ---- autograd.graph.region_activation_memory_budget ---------------------------------------

def test_region_activation_memory_budget():
    for lib in (fw, torch):
        f = lib.autograd.graph.region_activation_memory_budget
        assert [_outcome(lambda: f(0.5)), _outcome(lambda: f(True)), _outcome(lambda: f("1")),
                _outcome(lambda: f(1.5)), _outcome(lambda: f(-0.1))] == [
            "RuntimeError", "TypeError", "TypeError", "ValueError", "ValueError"]
    with pytest.raises(RuntimeError, match="can only be used inside a torch.compile region"):
        fw.autograd.graph.region_activation_memory_budget(0.0)

    def layer(x):
        with fw.autograd.graph.region_activation_memory_budget(0.0):
            return (x * 2).sin().sum()

    x = fw.tensor([0.5, 1.0, 1.5], requires_grad=True)
    y = fw.compile(layer, fullgraph=True)(x)
    y.backward()
    np.testing.assert_allclose(_np(x.grad), 2 * np.cos(2 * np.array([0.5, 1.0, 1.5])),
                               rtol=1e-6)


# ---- compiler.substitute_in_graph and compiling plain Python data --------------------------

def test_compile_plain_python_arguments():
    assert fw.compile(operator.countOf, fullgraph=True)([1, 2, 2, 3], 2) == 2
    assert fw.compile(lambda d, k: sorted(d[k]), fullgraph=True)({"a": (3, 1)}, "a") == [1, 3]


def test_substitute_in_graph():
    calls = []
    original = operator.length_hint
    try:
        @fw.compiler.substitute_in_graph(original)
        def length_hint(obj, default=0, /):
            calls.append(obj)
            return len(obj)

        assert length_hint([1, 2, 3]) == 3 and calls == []    # called directly: the original
        assert length_hint.__torch_dynamo_original__ is original
        assert fw.compile(original, fullgraph=True)([1, 2]) == 2 and calls == [[1, 2]]
        with pytest.raises(ValueError, match="Duplicate polyfill handlers"):
            fw.compiler.substitute_in_graph(original)(lambda obj, default=0, /: 0)
    finally:
        fw.compiler._POLYFILLS.pop(id(original), None)
    for lib in (fw, torch):
        with pytest.raises(TypeError, match="Signature mismatch"):
            lib.compiler.substitute_in_graph(operator.indexOf)(lambda x: 0)
        with pytest.raises(TypeError, match="expects a function"):
            lib.compiler.substitute_in_graph(3)
