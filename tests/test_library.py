"""framework.library: torch.library's Python custom-op API, checked against torch 2.13 (the
oracle in the venv) where the two can be compared: inferred schemas, error texts, the
autograd contract (setup_context / backward / needs_input_grad / wrong gradient counts),
mutates_args; and a custom op wrapping a Triton kernel run on framework cuda tensors (on a
GPU, or in Triton's interpreter with TRITON_INTERPRET=1) next to a NumPy cpu kernel."""
import typing
import warnings

import numpy as np
import pytest
import triton
import triton.language as tl

import framework as fw
import framework.library
from framework import Tensor
from framework.library import custom_op, ops

torch = pytest.importorskip("torch")


def _err(fn):
    """(type name, message) of what fn raises."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    raise AssertionError("no exception raised")


def _to_torch_text(s):
    return (s.replace("framework._tensor.Tensor", "torch.Tensor")
            .replace("framework._dtype.dtype", "torch.dtype")
            .replace("framework._device.device", "torch.device")
            .replace("framework.float32", "torch.float32")
            .replace("<module 'framework.library' from", "<module 'torch' from"))


# ---- a Triton kernel and a NumPy kernel --------------------------------------------------

@triton.jit
def _scaled_add_kernel(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    y = tl.load(y_ptr + offs, mask=mask).to(tl.float32)
    tl.store(out_ptr + offs, (x * alpha + y).to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _add_one_inplace_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(x_ptr + offs, x + 1, mask=mask)


def _launch_scaled_add(x, y, alpha):
    x, y = x.contiguous(), y.contiguous()
    out = fw.empty_like(x)
    n = x.numel()
    _scaled_add_kernel[(triton.cdiv(n, 256),)](x, y, out, n, alpha, BLOCK=256)
    return out


def _numpy_scaled_add(x, y, alpha):
    return fw.from_numpy(np.ascontiguousarray(x.numpy() * alpha + y.numpy()))


_calls = []


@custom_op("fwtest_lib::scaled_add", mutates_args=())
def scaled_add(x: Tensor, y: Tensor, alpha: float) -> Tensor:
    _calls.append("triton")
    return _launch_scaled_add(x, y, alpha)


@scaled_add.register_kernel("cpu")
def _(x, y, alpha):
    _calls.append("numpy")
    return _numpy_scaled_add(x.detach(), y.detach(), alpha)


def _sa_setup(ctx, inputs, output):
    ctx.alpha = inputs[2]


def _sa_backward(ctx, grad):
    gx = scaled_add(grad, fw.zeros_like(grad), ctx.alpha) if ctx.needs_input_grad[0] else None
    gy = grad if ctx.needs_input_grad[1] else None
    return gx, gy, None


scaled_add.register_autograd(_sa_backward, setup_context=_sa_setup)


def test_triton_op_dispatches_by_device(device):
    x = fw.randn(1000, device=device)
    y = fw.randn(1000, device=device)
    _calls.clear()
    out = scaled_add(x, y, 0.5)
    assert _calls == (["numpy"] if device == "cpu" else ["triton"])
    assert out.device.type == device and out.shape == (1000,)
    np.testing.assert_allclose(out.cpu().numpy(), (x * 0.5 + y).cpu().numpy(), rtol=1e-6,
                               atol=1e-6)
    # the same op through framework.ops, by packet and by overload
    _calls.clear()
    out2 = ops.fwtest_lib.scaled_add(x, y, alpha=0.5)
    out3 = ops.fwtest_lib.scaled_add.default(x, y, 0.5)
    assert len(_calls) == 2
    assert fw.equal(out2, out) and fw.equal(out3, out)


def test_triton_op_autograd(device):
    x = fw.randn(300, device=device, requires_grad=True)
    y = fw.randn(300, device=device, requires_grad=True)
    out = scaled_add(x, y, 2.5)
    assert out.requires_grad
    assert out.grad_fn.name() == "GeneratedBackwardFor_fwtest_lib_scaled_add_defaultBackward"
    g = fw.randn(300, device=device)
    out.backward(g)
    np.testing.assert_allclose(x.grad.cpu().numpy(), 2.5 * g.cpu().numpy(), rtol=1e-6)
    np.testing.assert_allclose(y.grad.cpu().numpy(), g.cpu().numpy())
    # no grad mode / no input requiring grad: nothing recorded
    with fw.no_grad():
        assert not scaled_add(x, y, 1.0).requires_grad
    assert scaled_add(x.detach(), y.detach(), 1.0).grad_fn is None


def test_gradcheck_numeric_cpu():
    x = fw.randn(5, dtype=fw.float64, requires_grad=True)
    y = fw.randn(5, dtype=fw.float64, requires_grad=True)
    assert fw.autograd.gradcheck(lambda a, b: scaled_add(a, b, 0.75), (x, y))


def test_set_kernel_enabled():
    def rk(x: Tensor) -> Tensor:
        return x + 1
    op = custom_op("fwtest_lib::rk", rk, mutates_args=())
    op.register_kernel("cpu")(lambda x: x + 100)
    x = fw.zeros(1)
    assert op(x).tolist() == [100.0]
    with op.set_kernel_enabled("cpu", enabled=False):
        assert op(x).tolist() == [1.0]
    assert op(x).tolist() == [100.0]


# ---- a NumPy-only op registered for cpu; dispatch errors ---------------------------------

def test_device_types_kernel_only(device):
    @custom_op("fwtest_lib::np_sin", mutates_args=(), device_types="cpu")
    def np_sin(x: Tensor) -> Tensor:
        return fw.from_numpy(np.sin(x.numpy()))

    x = fw.randn(8, device=device)
    if device == "cpu":
        np.testing.assert_allclose(np_sin(x).numpy(), np.sin(x.numpy()), rtol=1e-6)
    else:
        kind, msg = _err(lambda: np_sin(x))
        assert kind == "NotImplementedError"
        assert msg.startswith("Could not run 'fwtest_lib::np_sin' with arguments from the "
                              "'CUDA' backend.")

    @np_sin.register_kernel("cuda")
    def _(x):
        return fw.sin(x)
    np.testing.assert_allclose(np_sin(x).cpu().numpy(), np.sin(x.cpu().numpy()), rtol=1e-5,
                               atol=1e-6)


def test_factory_op_device_argument():
    def body(n, device):
        return fw.zeros(n) + 1

    def make(lib, T):
        def dev_op(n: int, device: T.device) -> T.Tensor:
            return body(n, device)
        return dev_op
    f = fw.library.custom_op("fwtest_lib::dev_op", mutates_args=(), device_types="cpu")(
        make(fw.library, fw))
    assert f(3, "cpu").tolist() == [1.0, 1.0, 1.0]
    kind, msg = _err(lambda: f(3, fw.device("cuda")))
    assert (kind, msg) == ("RuntimeError", "dev_op does not have a kernel registered for "
                           "cuda. Please use register_kernel to do so.")

    def nodev(n: int) -> Tensor:
        return fw.zeros(n)
    g = custom_op("fwtest_lib::nodev", mutates_args=())(nodev)
    assert g(2).tolist() == [0.0, 0.0]
    got = _err(lambda: g.register_kernel("cpu", lambda n: fw.ones(n)))

    def tnodev(n: int) -> torch.Tensor:
        return torch.zeros(n)
    tg = torch.library.custom_op("fwtest_lib::nodev", mutates_args=())(tnodev)
    assert got == _err(lambda: tg.register_kernel("cpu", lambda n: torch.ones(n)))


# ---- schema inference: same strings and errors as torch ---------------------------------

def _sigs(T, Number):
    def f1(x: T.Tensor, n: int = 3, *, s: float = 1.5) -> T.Tensor: ...
    def f2(x: T.Tensor, y: typing.Optional[T.Tensor], z: list[T.Tensor], w: list[float],
           b: bool = True, st: str = "a", d: T.dtype = T.float32) -> tuple[T.Tensor, T.Tensor]: ...
    def f3(xs: typing.List[T.Tensor], n: typing.Optional[int] = None,
           m: typing.Sequence[int] = None) -> typing.List[T.Tensor]: ...
    def f4(x: T.Tensor, y: T.Tensor) -> None: ...
    def f5(x: T.Tensor, n: Number = 2, dev: typing.Optional[T.device] = None) -> Number: ...
    def f6(x: T.Tensor, n: int) -> tuple[T.Tensor, int, float, bool]: ...
    def f7(x: T.Tensor, ys: list[typing.Optional[T.Tensor]],
           o: typing.Optional[list[int]] = None) -> tuple[T.Tensor]: ...
    def f8(x: T.Tensor) -> int: ...
    return [(f1, ()), (f2, ()), (f3, ()), (f4, ("y",)), (f4, "unknown"), (f5, ()),
            (f6, ()), (f7, ()), (f8, ()), (f4, {"x", "y"})]


def test_infer_schema_matches_torch():
    ours = _sigs(fw, int | float | bool)
    theirs = _sigs(torch, torch.types.Number)
    for (f, m), (tf, _) in zip(ours, theirs):
        got = fw.library.infer_schema(f, mutates_args=m)
        assert got == torch.library.infer_schema(tf, mutates_args=m), f.__name__
        assert (fw.library.infer_schema(f, mutates_args=m, op_name="op")
                == torch.library.infer_schema(tf, mutates_args=m, op_name="op"))
    assert fw.library.infer_schema(ours[0][0], mutates_args=()) == \
        "(Tensor x, SymInt n=3, *, float s=1.5) -> Tensor"


def _bad_sigs(T):
    def b1(x, a: int) -> T.Tensor: ...
    def b2(x: T.Tensor, a: tuple[int, int]) -> T.Tensor: ...
    def b3(x: T.Tensor): ...
    def b4(x: T.Tensor, *args) -> T.Tensor: ...
    def b5(x: T.Tensor, n: int) -> dict: ...
    def b6(x: T.Tensor, n: list = None) -> T.Tensor: ...
    def b7(x: T.Tensor, n: list[int] = (1,)) -> T.Tensor: ...
    def b8(x: T.Tensor, /, n: int) -> T.Tensor: ...
    return [(b1, ()), (b2, ()), (b3, ()), (b4, ()), (b5, ()), (b6, ()), (b7, ()), (b8, ()),
            (b5, ("n",)), (b5, ("z",)), (b5, "foo")]


def test_infer_schema_errors_match_torch():
    for (f, m), (tf, _) in zip(_bad_sigs(fw), _bad_sigs(torch)):
        kind, msg = _err(lambda: fw.library.infer_schema(f, mutates_args=m))
        tkind, tmsg = _err(lambda: torch.library.infer_schema(tf, mutates_args=m))
        assert kind == tkind, f.__name__
        msg = _to_torch_text(msg)
        cut = "The valid types are:"   # the lists name each library's own classes
        if cut in tmsg:
            assert msg.split(cut)[0] == tmsg.split(cut)[0], f.__name__
        else:
            assert msg == tmsg, f.__name__


def test_custom_op_argument_errors_match_torch():
    def f(x: Tensor) -> Tensor:
        return x.clone()
    with pytest.raises(TypeError, match="missing 1 required keyword-only argument: "
                                        "'mutates_args'"):
        custom_op("fwtest_lib::f")(f)
    got = _err(lambda: custom_op("no_namespace", mutates_args=())(f))
    assert got == ("ValueError", "not enough values to unpack (expected 2, got 1)")

    def kwt(x: Tensor, *, y: Tensor) -> Tensor: ...

    def tkwt(x: torch.Tensor, *, y: torch.Tensor) -> torch.Tensor: ...
    assert _err(lambda: custom_op("fwtest_lib::kwt", mutates_args=())(kwt)) == \
        _err(lambda: torch.library.custom_op("fwtest_lib::kwt", mutates_args=())(tkwt))
    got = _err(lambda: custom_op("fwtest_lib::s", mutates_args=("x",),
                                 schema="(Tensor x) -> Tensor")(f))
    want = _err(lambda: torch.library.custom_op("fwtest_lib::s", mutates_args=("x",),
                                                schema="(Tensor x) -> Tensor")(f))
    assert got == want


def _binding_ops(lib, T):
    @lib.custom_op("fwtest_bind::foo", mutates_args=())
    def foo(x: T.Tensor, y: T.Tensor, a: float, n: int = 2) -> T.Tensor:
        return x * a + y

    @lib.custom_op("fwtest_bind::kw", mutates_args=())
    def kw(x: T.Tensor, *, s: float = 1.0) -> T.Tensor:
        return x * s

    @lib.custom_op("fwtest_bind::ws", mutates_args=())
    def ws(ts: list[T.Tensor], w: list[float]) -> T.Tensor:
        return sum(t * wi for t, wi in zip(ts, w))
    return foo, kw, ws


def test_call_errors_match_torch():
    foo, kw, ws = _binding_ops(fw.library, fw)
    tfoo, tkw, tws = _binding_ops(torch.library, torch)
    x, tx = fw.ones(2), torch.ones(2)
    cases = [
        lambda F, K, W, x: F(x, x),
        lambda F, K, W, x: F(x, x, 1.0, 2, 3),
        lambda F, K, W, x: F(x, x, 1.0, b=2),
        lambda F, K, W, x: F(x, x, 1.0, x=x),
        lambda F, K, W, x: F(x, x, "s"),
        lambda F, K, W, x: F(x, x, 2.0, 1.5),
        lambda F, K, W, x: K(x, 3.0),
        lambda F, K, W, x: W([x, x], 2.0),
    ]
    for i, c in enumerate(cases):
        got = _err(lambda: c(foo, kw, ws, x))
        want = _err(lambda: c(tfoo, tkw, tws, tx))
        assert got[0] == want[0], i
        assert _to_torch_text(got[1]) == want[1], i
    # ints (and bools) are accepted for float arguments, as torch accepts them
    assert foo(x, x, 2).tolist() == [3.0, 3.0]
    assert ws([x, x * 2], [1, 2]).tolist() == [5.0, 5.0]
    assert kw(x, s=3).tolist() == [3.0, 3.0]


# ---- autograd contract, compared with torch.library on the same Python functions ---------

def _autograd_ops(lib, T, log):
    @lib.custom_op("fwtest_ag::mul_add", mutates_args=())
    def mul_add(x: T.Tensor, y: T.Tensor, a: float) -> T.Tensor:
        return x * y * a

    def setup_context(ctx, inputs, output):
        log.append(("setup", len(inputs), inputs[2], type(output).__name__))
        x, y, a = inputs
        ctx.save_for_backward(x, y)
        ctx.a = a

    def backward(ctx, grad):
        log.append(("needs", tuple(ctx.needs_input_grad)))
        x, y = ctx.saved_tensors
        return grad * y * ctx.a, grad * x * ctx.a, None
    mul_add.register_autograd(backward, setup_context=setup_context)

    @lib.custom_op("fwtest_ag::two_out", mutates_args=())
    def two_out(x: T.Tensor) -> tuple[T.Tensor, T.Tensor]:
        return x * 2, x * 3

    def bw2(ctx, g1, g2):
        return g1 * 2 + g2 * 3
    two_out.register_autograd(bw2)

    @lib.custom_op("fwtest_ag::kwonly", mutates_args=())
    def kwonly(x: T.Tensor, *, s: float = 1.0) -> T.Tensor:
        return x * s

    def sc_kw(ctx, inputs, keyword_only_inputs, output):
        log.append(("kw", len(inputs), dict(keyword_only_inputs)))
        ctx.s = keyword_only_inputs["s"]
    kwonly.register_autograd(lambda ctx, g: g * ctx.s, setup_context=sc_kw)

    @lib.custom_op("fwtest_ag::wsum", mutates_args=())
    def wsum(ts: list[T.Tensor], w: list[float]) -> T.Tensor:
        return sum(t * wi for t, wi in zip(ts, w))

    def sc_ws(ctx, inputs, output):
        ctx.w = inputs[1]

    def bw_ws(ctx, g):
        log.append(("ws_needs", ctx.needs_input_grad))
        return [g * wi for wi in ctx.w], None
    wsum.register_autograd(bw_ws, setup_context=sc_ws)

    @lib.custom_op("fwtest_ag::nobw", mutates_args=())
    def nobw(x: T.Tensor) -> T.Tensor:
        return x * 2

    @lib.custom_op("fwtest_ag::few", mutates_args=())
    def few(x: T.Tensor, y: T.Tensor, a: float) -> T.Tensor:
        return x * y * a
    few.register_autograd(lambda ctx, g: g)

    @lib.custom_op("fwtest_ag::many", mutates_args=())
    def many(x: T.Tensor) -> T.Tensor:
        return x * 2
    many.register_autograd(lambda ctx, g: (g, g))

    @lib.custom_op("fwtest_ag::many2", mutates_args=())
    def many2(x: T.Tensor) -> T.Tensor:
        return x * 2
    many2.register_autograd(lambda ctx, g: (g, g, g))
    return dict(mul_add=mul_add, two_out=two_out, kwonly=kwonly, wsum=wsum, nobw=nobw,
                few=few, many=many, many2=many2)


def _run_autograd(lib, T, xs):
    log = []
    o = _autograd_ops(lib, T, log)
    res = {}
    x = T.tensor(xs[0], requires_grad=True)
    y = T.tensor(xs[1])
    out = o["mul_add"](x, y, 1.5)
    res["name"] = type(out.grad_fn).__name__ if lib is torch.library else out.grad_fn.name()
    out.backward(T.ones(3))
    res["mul_add"] = x.grad.tolist()
    x.grad = None
    a, b = o["two_out"](x)
    (a.sum() + b.sum()).backward()
    res["two_out"] = x.grad.tolist()
    x.grad = None
    a, b = o["two_out"](x)
    a.sum().backward()          # the other output's grad comes as zeros
    res["two_out_one"] = x.grad.tolist()
    x.grad = None
    o["kwonly"](x, s=4.0).sum().backward()
    res["kwonly"] = x.grad.tolist()
    t1 = T.tensor(xs[0], requires_grad=True)
    t2 = T.tensor(xs[1])
    o["wsum"]([t1, t2], [2.0, 3.0]).sum().backward()
    res["wsum"] = t1.grad.tolist()
    for k in ("nobw", "few", "many", "many2"):
        args = (x, y, 1.0) if k == "few" else (x,)
        out = o[k](*args)
        res[k] = _err(lambda: out.sum().backward())
    res["log"] = [tuple(type(v).__name__ if k == 3 and isinstance(v, str) else v
                        for k, v in enumerate(e)) for e in log]
    return res


def test_autograd_contract_matches_torch():
    xs = ([1.0, -2.0, 3.0], [0.5, 4.0, -1.0])
    ours = _run_autograd(fw.library, fw, xs)
    theirs = _run_autograd(torch.library, torch, xs)
    assert ours["name"] == theirs["name"].replace("torch.autograd.function.", "")
    for k in ("mul_add", "two_out", "two_out_one", "kwonly", "wsum"):
        np.testing.assert_allclose(ours[k], theirs[k], err_msg=k)
    for k in ("nobw", "few", "many", "many2"):
        assert ours[k] == theirs[k], k
    assert ours["nobw"] == ("RuntimeError", "Trying to backward through fwtest_ag.nobw.default "
                            "but no autograd formula was registered. Please use "
                            "register_autograd to add one.")
    assert ours["log"] == theirs["log"]


def test_register_autograd_on_mutating_op_errors_like_torch():
    def inc(x: Tensor, y: Tensor) -> None:
        x.add_(y)

    def tinc(x: torch.Tensor, y: torch.Tensor) -> None:
        x.add_(y)
    op = custom_op("fwtest_mut::inc", mutates_args={"x"})(inc)
    top = torch.library.custom_op("fwtest_mut::inc", mutates_args={"x"})(tinc)
    assert _err(lambda: op.register_autograd(lambda ctx, g: g)) == \
        _err(lambda: top.register_autograd(lambda ctx, g: g))


# ---- mutates_args ----------------------------------------------------------------------

@custom_op("fwtest_mut::add_one_", mutates_args={"x"})
def add_one_(x: Tensor) -> None:
    if x.device.type == "cuda":
        n = x.numel()
        _add_one_inplace_kernel[(triton.cdiv(n, 128),)](x, n, BLOCK=128)
    else:
        a = x.detach().numpy()
        a += 1


def test_mutates_args_bumps_version(device):
    x = fw.zeros(10, device=device)
    v = x._version
    assert add_one_(x) is None
    assert x._version == v + 1
    assert x.cpu().tolist() == [1.0] * 10
    # a view shares the counter
    view = x[2:5]
    v2 = view._version
    add_one_(x)
    assert view._version == v2 + 1

    # a tensor saved for backward and then mutated by the op: backward refuses
    w = fw.ones(10, device=device, requires_grad=True)
    h = w * 2
    z = h * h          # saves h
    add_one_(h)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_mutates_unknown_and_schema():
    def f(x: Tensor, y: Tensor, n: int) -> None: ...
    op = custom_op("fwtest_mut::unk", mutates_args="unknown")(f)
    assert op._schema == "(Tensor(a0!) x, Tensor(a1!) y, SymInt n) -> ()"
    x, y = fw.zeros(2), fw.zeros(2)
    op(x, y, 1)
    assert (x._version, y._version) == (1, 1)


def test_output_aliasing_input_is_refused():
    def alias(x: Tensor) -> Tensor:
        return x[1:]
    op = custom_op("fwtest_alias::alias", mutates_args=())(alias)
    kind, msg = _err(lambda: op(fw.ones(3)))
    assert kind == "RuntimeError"
    assert msg.startswith("alias (with implementation in <module 'framework.library'")
    assert "must not also be an input to this custom operator" in msg

    def bad(x: Tensor) -> Tensor:
        return 3
    op2 = custom_op("fwtest_alias::bad", mutates_args=())(bad)
    assert _err(lambda: op2(fw.ones(1))) == ("RuntimeError", "Unable to cast 3 to Tensor")


# ---- framework.ops and the CustomOpDef object -------------------------------------------

def test_ops_namespace_and_opdef():
    assert scaled_add.__name__ == "scaled_add"
    assert repr(scaled_add) == "<CustomOpDef(fwtest_lib::scaled_add)>"
    packet = ops.fwtest_lib.scaled_add
    assert str(packet) == "fwtest_lib.scaled_add"
    assert repr(packet) == "<OpOverloadPacket(op='fwtest_lib.scaled_add')>"
    assert str(packet.default) == "fwtest_lib.scaled_add.default"
    assert packet.overloads() == ["default"]
    with pytest.raises(AttributeError, match="'_OpNamespace' 'fwtest_lib' object has no "
                                             "attribute 'nope'"):
        ops.fwtest_lib.nope
    assert ops.aten.add(fw.ones(1), fw.ones(1)).tolist() == [2.0]
    if hasattr(fw, "ops"):
        assert fw.ops is ops
    # the decorator's other form, and redefinition replaces the op (as torch allows)

    def g(x: Tensor) -> Tensor:
        return x + 1
    op = custom_op("fwtest_lib::g", g, mutates_args=())
    assert ops.fwtest_lib.g(fw.zeros(1)).tolist() == [1.0]

    def g2(x: Tensor) -> Tensor:
        return x + 2
    custom_op("fwtest_lib::g", g2, mutates_args=())
    assert ops.fwtest_lib.g(fw.zeros(1)).tolist() == [2.0]
    assert op(fw.zeros(1)).tolist() == [1.0]
    # register_fake is stored and returned; register_torch_dispatch is not supported
    fake = op.register_fake(lambda x: fw.empty_like(x))
    assert callable(fake)
    with pytest.raises(NotImplementedError):
        op.register_torch_dispatch(object, lambda *a: None)


def test_module_level_register_functions():
    def h(x: Tensor) -> Tensor:
        return x * 3
    custom_op("fwtest_lib::h", h, mutates_args=())
    fw.library.register_autograd("fwtest_lib::h", lambda ctx, g: g * 3)
    fw.library.register_kernel("fwtest_lib::h", "cpu", lambda x: x * 30)
    x = fw.ones(2, requires_grad=True)
    y = ops.fwtest_lib.h(x)
    assert y.tolist() == [30.0, 30.0]
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


# ---- triton_op / wrap_triton --------------------------------------------------------------

def test_triton_op_and_wrap_triton(device):
    if device == "cpu":
        pytest.skip("Triton kernels run on cuda tensors")
    from framework.library import triton_op, wrap_triton

    @triton_op("fwtest_triton::sadd", mutates_args=())
    def sadd(x: Tensor, y: Tensor, alpha: float) -> Tensor:
        out = fw.empty_like(x)
        n = x.numel()
        wrap_triton(_scaled_add_kernel)[(triton.cdiv(n, 256),)](x, y, out, n, alpha,
                                                                 BLOCK=256)
        return out

    x = fw.randn(700, device=device)
    y = fw.randn(700, device=device)
    np.testing.assert_allclose(ops.fwtest_triton.sadd(x, y, 3.0).cpu().numpy(),
                               (x * 3 + y).cpu().numpy(), rtol=1e-6, atol=1e-6)
    assert sadd._schema == "(Tensor x, Tensor y, float alpha) -> Tensor"
    with pytest.raises(RuntimeError, match="wrap_triton only works on functions annotated "
                                           "with triton.jit or triton.autotune"):
        wrap_triton(lambda: None)


# ---- the older API: Library / define / impl -----------------------------------------------

def test_library_define_impl():
    lib = fw.library.Library("fwtest_old", "DEF")
    lib.define("twice(Tensor x) -> Tensor")
    lib.impl("twice", lambda x: x * 2, "CompositeImplicitAutograd")
    x = fw.ones(2, requires_grad=True)
    y = ops.fwtest_old.twice(x)
    y.sum().backward()                    # differentiable through the ops it calls
    assert x.grad.tolist() == [2.0, 2.0]

    fw.library.define("fwtest_old2::thrice", "(Tensor x) -> Tensor")

    @fw.library.impl("fwtest_old2::thrice", "cpu")
    def _(x):
        return fw.from_numpy(x.detach().numpy() * 3)
    x = fw.ones(2, requires_grad=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        y = ops.fwtest_old2.thrice(x)
        assert y.tolist() == [3.0, 3.0] and y.requires_grad and not w
        y.sum().backward()     # as torch: a warning in backward, no gradient
    assert x.grad is None
    msgs = [str(m.message) for m in w]
    assert len(msgs) == 1 and msgs[0].startswith(
        "fwtest_old2::thrice: an autograd kernel was not registered to the Autograd key(s) "
        "but we are trying to backprop through it.")
    with pytest.raises(ValueError, match="expected schema to look like"):
        fw.library.define("fwtest_old2::g", "Tensor x -> Tensor")
    lib._destroy()
    with pytest.raises(AttributeError):
        ops.fwtest_old.twice


def _numpy_sin_op(lib, T, seen):
    @lib.custom_op("fwtest_np::numpy_sin", mutates_args=())
    def numpy_sin(x: T.Tensor) -> T.Tensor:
        seen.append(T.is_grad_enabled())
        return T.from_numpy(np.sin(x.cpu().numpy())).to(x.device)

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * x.cos()
    numpy_sin.register_autograd(backward, setup_context=setup_context)
    return numpy_sin


def test_numpy_kernel_on_input_requiring_grad_like_torch():
    """The pattern of PyTorch's custom-op tutorial: the kernel calls x.numpy() on an input
    that requires grad (allowed: the kernel runs below autograd, grad mode off)."""
    seen, tseen = [], []
    op = _numpy_sin_op(fw.library, fw, seen)
    top = _numpy_sin_op(torch.library, torch, tseen)
    vals = [0.3, -1.2, 2.0]
    x = fw.tensor(vals, requires_grad=True)
    tx = torch.tensor(vals, requires_grad=True)
    op(x).sum().backward()
    top(tx).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6)
    assert seen == tseen == [False]
