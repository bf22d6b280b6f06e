"""Writing your own Triton kernel for framework tensors.

Framework cuda tensors go straight into a ``@triton.jit`` kernel as pointer arguments (the
kernel gets ``t.data_ptr()``, which already includes the view's offset, and the element
type from ``t.dtype``), on the current device and stream. Two kernels here, each wrapped
as an ordinary function that checks its arguments and allocates its output:

* ``scaled_add_leaky_relu(x, y, alpha, negative_slope)``: ``leaky_relu(alpha * x + y)``
  in one pass over memory (framework's own ops take three: mul, add, leaky_relu);
* ``row_softmax(x)``: softmax over the last dim of a 2-D tensor, one program per row,
  the row kept in registers (one read, one write).

``ScaledAddLeakyReLU`` makes the first one differentiable: an ``autograd.Function`` whose
backward is a second Triton kernel (it recomputes alpha*x + y rather than saving it).
Everything is checked against framework's own ops (and their autograd). Run it on a GPU as is, or on any machine
with Triton's interpreter:  ``TRITON_INTERPRET=1 python examples/custom_kernel.py``
"""
import os
import sys

import triton
import triton.language as tl

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import framework as fw  # noqa: E402
import framework.nn.functional as F  # noqa: E402


# ---- a fused pointwise kernel ---------------------------------------------------------------

@triton.jit
def _scaled_add_leaky_relu_kernel(x_ptr, y_ptr, out_ptr, n, alpha, negative_slope,
                                  BLOCK: tl.constexpr):
    """Each program computes BLOCK consecutive elements of out = leaky_relu(alpha*x + y),
    in float32 whatever the storage type (x, y, out: contiguous, same dtype)."""
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)   # int64: n may pass 2**31
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    y = tl.load(y_ptr + offs, mask=mask).to(tl.float32)
    z = x * alpha + y
    z = tl.where(z >= 0, z, z * negative_slope)
    tl.store(out_ptr + offs, z.to(out_ptr.dtype.element_ty), mask=mask)


def scaled_add_leaky_relu(x, y, alpha=1.0, negative_slope=0.01):
    """``leaky_relu(alpha * x + y, negative_slope)`` for two floating-point cuda tensors of
    one shape and dtype, in one kernel. Returns a new contiguous tensor."""
    if not (x.is_cuda and y.is_cuda) or x.device != y.device:
        raise RuntimeError(f"expected cuda tensors on one device, got {x.device} and {y.device}")
    if x.shape != y.shape or x.dtype != y.dtype or not x.is_floating_point():
        raise RuntimeError(f"expected floating-point tensors of one shape and dtype, got "
                           f"{tuple(x.shape)} {x.dtype} and {tuple(y.shape)} {y.dtype}")
    x, y = x.contiguous(), y.contiguous()
    out = fw.empty_like(x)
    n = x.numel()
    block = 1024
    if n:
        _scaled_add_leaky_relu_kernel[(triton.cdiv(n, block),)](
            x, y, out, n, float(alpha), float(negative_slope), BLOCK=block, num_warps=4)
    return out


# ---- the same op with a gradient: autograd.Function over a backward kernel -------------------

@triton.jit
def _scaled_add_leaky_relu_backward_kernel(x_ptr, y_ptr, g_ptr, gx_ptr, gy_ptr, n, alpha,
                                           negative_slope, BLOCK: tl.constexpr):
    """gy = g * leaky_relu'(alpha*x + y), gx = alpha * gy (all contiguous, one dtype)."""
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    y = tl.load(y_ptr + offs, mask=mask).to(tl.float32)
    g = tl.load(g_ptr + offs, mask=mask).to(tl.float32)
    gy = tl.where(x * alpha + y >= 0, g, g * negative_slope)
    tl.store(gy_ptr + offs, gy.to(gy_ptr.dtype.element_ty), mask=mask)
    tl.store(gx_ptr + offs, (gy * alpha).to(gx_ptr.dtype.element_ty), mask=mask)


class ScaledAddLeakyReLU(fw.autograd.Function):
    """``leaky_relu(alpha * x + y)`` with gradients for x and y, both passes in Triton."""

    @staticmethod
    def forward(ctx, x, y, alpha=1.0, negative_slope=0.01):
        ctx.save_for_backward(x, y)
        ctx.alpha, ctx.negative_slope = float(alpha), float(negative_slope)
        return scaled_add_leaky_relu(x, y, alpha, negative_slope)

    @staticmethod
    @fw.autograd.once_differentiable      # the backward kernel has no derivative itself
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        x, y, grad = x.contiguous(), y.contiguous(), grad.contiguous()
        gx, gy = fw.empty_like(x), fw.empty_like(y)
        n, block = x.numel(), 1024
        if n:
            _scaled_add_leaky_relu_backward_kernel[(triton.cdiv(n, block),)](
                x, y, grad, gx, gy, n, ctx.alpha, ctx.negative_slope, BLOCK=block)
        return gx, gy, None, None


# ---- a row reduction kernel -----------------------------------------------------------------

@triton.jit
def _row_softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                        BLOCK: tl.constexpr):
    """Program ``row`` computes softmax of one row (BLOCK >= n_cols, a power of two): the
    row is read once into registers, reduced twice there (max, sum), written once."""
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf"))
    x = x.to(tl.float32)
    x = x - tl.max(x, axis=0)          # exp of non-positive numbers cannot overflow
    e = tl.exp(x)
    out = e / tl.sum(e, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, out.to(out_ptr.dtype.element_ty),
             mask=mask)


def row_softmax(x):
    """Softmax over the last dim of a 2-D floating-point cuda tensor (rows up to 16384)."""
    if not x.is_cuda or x.dim() != 2 or not x.is_floating_point():
        raise RuntimeError(f"expected a 2-D floating-point cuda tensor, got {x.dim()}-D "
                           f"{x.dtype} on {x.device}")
    rows, cols = x.shape
    block = triton.next_power_of_2(max(cols, 1))
    if block > 16384:
        raise RuntimeError(f"row_softmax keeps a row in registers: {cols} columns is too many")
    if x.stride(1) != 1:
        x = x.contiguous()
    out = fw.empty((rows, cols), dtype=x.dtype, device=x.device)
    if rows and cols:
        warps = 4 if block <= 2048 else (8 if block <= 8192 else 16)
        _row_softmax_kernel[(rows,)](x, out, cols, x.stride(0), out.stride(0), BLOCK=block,
                                     num_warps=warps)
    return out


# ---- checks against framework's own ops -----------------------------------------------------

def softmax_reference(x):
    """Softmax over the last dim with framework's ops, in float64 on the CPU."""
    x = x.cpu().double()
    e = (x - x.max(dim=-1, keepdim=True).values).exp()
    return e / e.sum(dim=-1, keepdim=True)


def max_error(a, b):
    """Largest absolute difference, in float64 on the host."""
    return (a.cpu().double() - b.cpu().double()).abs().max().item()


def check(device="cuda", n=100_003, shape=(37, 1000)):
    """Runs both kernels on random data and compares them with framework's ops on the CPU
    (float64 references); returns {case: max abs error}. Raises AssertionError on a miss."""
    fw.manual_seed(0)
    errors = {}
    tolerance = {fw.float32: 1e-5, fw.float16: 2e-3, fw.bfloat16: 2e-2}
    for dtype, tol in tolerance.items():
        x = fw.randn(n, device=device).to(dtype)
        y = fw.randn(n, device=device).to(dtype)
        out = scaled_add_leaky_relu(x, y, alpha=0.5, negative_slope=0.1)
        ref = F.leaky_relu(x.cpu().double() * 0.5 + y.cpu().double(), 0.1)
        assert out.dtype is dtype and out.device == x.device
        errors[f"scaled_add_leaky_relu {dtype}"] = err = max_error(out, ref)
        assert err <= tol * 4, (dtype, err)     # within a few roundings of the output type

        a = fw.randn(*shape, device=device).to(dtype) * 4
        s = row_softmax(a)
        ref = softmax_reference(a)
        errors[f"row_softmax {dtype}"] = err = max_error(s, ref)
        assert err <= tol, (dtype, err)
        # a non-contiguous input (a column slice) and a transposed one
        errors[f"row_softmax {dtype} slice"] = err = max_error(
            row_softmax(a[:, 3:700]), softmax_reference(a[:, 3:700]))
        assert err <= tol, (dtype, err)
        at = a.t()[:50]
        errors[f"row_softmax {dtype} transposed"] = err = max_error(
            row_softmax(at), softmax_reference(at))
        assert err <= tol, (dtype, err)
    # gradients of the autograd.Function against framework's own ops and autograd
    x = fw.randn(n, device=device, requires_grad=True)
    y = fw.randn(n, device=device, requires_grad=True)
    w = fw.randn(n, device=device)
    (ScaledAddLeakyReLU.apply(x, y, 0.5, 0.1) * w).sum().backward()
    gx, gy = x.grad, y.grad
    x.grad = y.grad = None
    (F.leaky_relu(x * 0.5 + y, 0.1) * w).sum().backward()
    errors["ScaledAddLeakyReLU grad x"] = err = max_error(gx, x.grad)
    assert err <= 1e-5, err
    errors["ScaledAddLeakyReLU grad y"] = err = max_error(gy, y.grad)
    assert err <= 1e-5, err
    # edge cases: empty, one element, a row of -inf-free large numbers
    assert scaled_add_leaky_relu(fw.empty(0, device=device), fw.empty(0, device=device)).numel() == 0
    one = scaled_add_leaky_relu(fw.full((1,), -2.0, device=device), fw.ones(1, device=device))
    assert abs(one.item() + 0.01) < 1e-8, one.item()   # leaky_relu(-1) in float32
    big = row_softmax(fw.tensor([[1000.0, 1000.0], [-1000.0, 0.0]], device=device))
    assert big.cpu().tolist() == [[0.5, 0.5], [0.0, 1.0]]
    return errors


def main():
    if not fw.cuda.is_available():
        print("No CUDA device: run on a GPU, or with TRITON_INTERPRET=1 to use Triton's "
              "interpreter (the simulated cuda device).")
        return 0
    where = "simulated (Triton interpreter)" if fw.cuda.is_simulated() else \
        fw.cuda.get_device_name()
    print(f"device: {where}")
    for case, err in check().items():
        print(f"  {case:<40} max abs error {err:.2e}")
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
