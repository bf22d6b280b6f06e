"""Script sweep: researchers' own Triton kernels on framework tensors, part 3: registering a
kernel as an op (``torch.library.triton_op``/``wrap_triton``/``custom_op``, autograd, and
``torch.compile``), and the launch-side idioms researchers use around kernels: constexpr
and scalar arguments, 0-d tensors, ``None`` pointers, int64/bool pointers, strided views
and ``data_ptr`` arithmetic, prints, and the ``torch.cuda`` runtime API (workloads 6-7).

The Triton side runs under the framework on ``cuda``; the oracle is the same math written
with PyTorch ops on cpu.
"""
import warnings

import numpy as np
import pytest

import framework
from tests.scripts.script_harness import assert_same, oracle

triton = pytest.importorskip("triton")
tl = triton.language

pytestmark = pytest.mark.skipif(not framework.cuda.is_available(),
                                reason="needs cuda (a GPU, or TRITON_INTERPRET=1)")


# ---------------------------------------------------------------------------------------
# 6. A Triton kernel as an op: triton_op + wrap_triton, custom_op, autograd, torch.compile

@triton.jit
def _scaled_add_kernel(in_ptr0, in_ptr1, out_ptr, n_elements, alpha,
                       BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(in_ptr0 + offsets, mask=mask)
    y = tl.load(in_ptr1 + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + alpha * y, mask=mask)


@triton.jit
def _square_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x * x, mask=mask)


def library_ops_script(torch, x_np, y_np, ns):
    triton_op, wrap_triton = torch.library.triton_op, torch.library.wrap_triton

    @triton_op(f"{ns}::add", mutates_args=())
    def mysin_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        output = torch.empty_like(x)
        n_elements = output.numel()

        def grid(meta):
            return (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)
        wrap_triton(_scaled_add_kernel)[grid](x, y, output, n_elements, 1.0, BLOCK_SIZE=32)
        return output

    def setup_context(ctx, inputs, output):
        pass

    def backward(ctx, grad):
        return grad, grad

    mysin_add.register_autograd(backward, setup_context=setup_context)

    @torch.library.custom_op(f"{ns}::square", mutates_args=())
    def square(x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        n = x.numel()
        _square_kernel[(triton.cdiv(n, 32),)](x, out, n, BLOCK_SIZE=32)
        return out

    @square.register_fake
    def _(x):
        return torch.empty_like(x)

    def square_backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * x * grad

    def square_setup(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    torch.library.register_autograd(f"{ns}::square", square_backward,
                                    setup_context=square_setup)

    x = torch.tensor(x_np, device="cuda", requires_grad=True)
    y = torch.tensor(y_np, device="cuda", requires_grad=True)
    eager = mysin_add(x, y)
    via_ops = getattr(getattr(torch.ops, ns), "add")(x, y)
    (square(eager).sum()).backward()

    def f(a, b):
        return square(mysin_add(a, b)) * 2.0
    compiled = torch.compile(f)
    with torch.no_grad():
        out_c = compiled(x, y)
        out_c2 = compiled(y, 2 * x)  # the cached graph, on other values
        out_e = f(x, y)
    return [eager.detach().cpu(), via_ops.detach().cpu(), x.grad.cpu(), y.grad.cpu(),
            out_c.cpu(), out_c2.cpu(), out_e.cpu()]


def test_triton_op_custom_op_compile():
    torch = oracle()
    rng = np.random.default_rng(7)
    x_np = rng.standard_normal(50).astype(np.float32)
    y_np = rng.standard_normal(50).astype(np.float32)
    with warnings.catch_warnings():  # compile must trace the ops, not fall back to eager
        warnings.filterwarnings("error", message=".*runs eagerly")
        got = library_ops_script(framework, x_np, y_np, "triton_script_lib")
    x, y = torch.tensor(x_np, requires_grad=True), torch.tensor(y_np, requires_grad=True)
    s = x + y
    (s * s).sum().backward()
    s, s2 = s.detach(), torch.tensor(y_np) + 2 * torch.tensor(x_np)
    want = [s, s, x.grad, y.grad, 2 * s ** 2, 2 * s2 ** 2, 2 * s ** 2]
    assert_same(got, want, rtol=1e-6, atol=1e-6)


def compiled_function_script(torch, x_np):
    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            out = torch.empty_like(x)
            n = x.numel()
            _square_kernel[(triton.cdiv(n, 32),)](x, out, n, BLOCK_SIZE=32)
            ctx.save_for_backward(x)
            return out

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    @torch.compile
    def f(x):
        return Square.apply(x).sin().sum()

    x = torch.tensor(x_np, device="cuda", requires_grad=True)
    loss = f(x)
    loss.backward()
    return loss.detach().cpu(), x.grad.cpu()


def test_autograd_function_with_kernel_under_compile():
    # The compiled graph calls the Function (its kernel and its backward), as eager does.
    torch = oracle()
    x_np = np.random.default_rng(9).standard_normal(40).astype(np.float32)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*runs eagerly")
        got = compiled_function_script(framework, x_np)
    x = torch.tensor(x_np, requires_grad=True)
    loss = (x * x).sin().sum()
    loss.backward()
    assert_same(got, [loss.detach(), x.grad], rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------------------
# 7. Launch-side idioms: constexpr flags, None for an optional pointer, a 0-d tensor,
#    int64 and bool pointers, strided views, data_ptr arithmetic, prints, torch.cuda API

@triton.jit
def _gather_scale_kernel(src_ptr, idx_ptr, keep_ptr, scale_ptr, bias_ptr, out_ptr, n,
                         stride_src, alpha, HAS_BIAS: tl.constexpr, BLOCK: tl.constexpr):
    tl.static_print("gather block", BLOCK)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    idx = tl.load(idx_ptr + offs, mask=m, other=0)
    keep = tl.load(keep_ptr + offs, mask=m, other=0)
    v = tl.load(src_ptr + idx * stride_src, mask=m, other=0.0)
    v = v * tl.load(scale_ptr) * alpha
    if HAS_BIAS:
        v += tl.load(bias_ptr + offs, mask=m, other=0.0)
    tl.store(out_ptr + offs, tl.where(keep, v, 0.0), mask=m)


@triton.jit
def _copy_2d_kernel(x_ptr, y_ptr, M, N, stride_xm, stride_xn, BLOCK_M: tl.constexpr,
                    BLOCK_N: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * stride_xm + rn[None, :] * stride_xn, mask=mask)
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], x * 2, mask=mask)


@triton.jit
def _print_kernel(x_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.device_print("x", x)


def launch_idioms_script(torch, src_np, idx_np, keep_np, bias_np):
    dev = torch.device("cuda")
    torch.cuda.set_device(0)
    src2d = torch.tensor(src_np, device=dev)                  # (R, 3)
    col = src2d[:, 1]                                         # strided: stride(0) == 3
    idx = torch.tensor(idx_np, device=dev)                    # int64
    keep = torch.tensor(keep_np, device=dev)                  # bool
    scale = torch.tensor(0.5, device=dev)                     # 0-d
    bias = torch.tensor(bias_np, device=dev)
    n = idx.numel()
    alpha = src2d.abs().max().item()                          # a Python float from a tensor
    grid = (triton.cdiv(n, 16),)
    outs = []
    for b, has_bias in ((bias, True), (None, False)):
        out = torch.empty(n, device=dev)
        ret = _gather_scale_kernel[grid](col, idx, keep, scale, b, out, n, col.stride(0),
                                         alpha, HAS_BIAS=has_bias, BLOCK=16)
        outs.append(out.cpu())
    # A view that starts one row in: the kernel gets data_ptr() + one row of bytes.
    tail = src2d[1:]
    step = tail.data_ptr() - src2d.data_ptr()
    xt = tail.t()                                             # non-contiguous (3, R-1)
    y = torch.empty(xt.shape, device=dev)
    grid2 = (triton.cdiv(xt.shape[0], 4), triton.cdiv(xt.shape[1], 8))
    _copy_2d_kernel[grid2](xt, y, xt.shape[0], xt.shape[1], xt.stride(0), xt.stride(1),
                           BLOCK_M=4, BLOCK_N=8)
    _print_kernel[(1,)](src2d, BLOCK=4)
    # The runtime API around launches.
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    with torch.cuda.device(0):
        start.record()
        _copy_2d_kernel[grid2](xt, y, xt.shape[0], xt.shape[1], xt.stride(0), xt.stride(1),
                               BLOCK_M=4, BLOCK_N=8)
        end.record()
        torch.cuda.synchronize()
    ms = start.elapsed_time(end)
    stream = torch.cuda.current_stream()
    facts = [ret is None or hasattr(ret, "asm"), step == 3 * src2d.element_size(),
             not xt.is_contiguous(), ms >= 0, stream.device == torch.device("cuda", 0),
             torch.cuda.current_device()]
    return outs, y.cpu(), facts


def test_launch_idioms(capfd):
    torch = oracle()
    rng = np.random.default_rng(8)
    src_np = rng.standard_normal((21, 3)).astype(np.float32)
    idx_np = rng.integers(0, 21, size=37)
    keep_np = rng.random(37) > 0.3
    bias_np = rng.standard_normal(37).astype(np.float32)
    outs, y, facts = launch_idioms_script(framework, src_np, idx_np, keep_np, bias_np)
    src, idx, keep = torch.tensor(src_np), torch.tensor(idx_np), torch.tensor(keep_np)
    v = src[:, 1][idx] * 0.5 * src.abs().max().item()
    want = [torch.where(keep, v + torch.tensor(bias_np), 0.0), torch.where(keep, v, 0.0)]
    assert_same(outs, want, rtol=1e-6, atol=1e-6)
    assert_same(y, src[1:].t() * 2)
    assert facts == [True] * 5 + [0]
    printed = capfd.readouterr().out
    assert "gather block 16" in printed and " x: " in printed
