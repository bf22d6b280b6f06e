"""Script sweep: researchers' own Triton kernels on framework tensors, part 2: kernels inside
``torch.autograd.Function`` (workloads 4-5): the tutorials' low-memory dropout and layer
norm forward/backward (locks and atomics for the partial dW/dB sums), and Liger-Kernel-style
RMSNorm, SwiGLU and a cross-entropy that writes its gradient into the logits buffer, used
in a small model trained with an optimizer.

The Triton side runs under the framework on ``cuda``; the oracle is the same math written
with PyTorch ops on cpu.
"""
import numpy as np
import pytest

import framework
from tests.scripts.script_harness import assert_same, init_params, oracle

triton = pytest.importorskip("triton")
tl = triton.language

pytestmark = pytest.mark.skipif(not framework.cuda.is_available(),
                                reason="needs cuda (a GPU, or TRITON_INTERPRET=1)")


# ---------------------------------------------------------------------------------------
# 4a. Low-memory dropout: the mask comes from a seed and the offsets, never stored

@triton.jit
def _seeded_dropout(x_ptr, output_ptr, n_elements, p, seed, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    random = tl.rand(seed, offsets)
    x_keep = random > p
    output = tl.where(x_keep, x / (1 - p), 0.0)
    tl.store(output_ptr + offsets, output, mask=mask)


def seeded_dropout(torch, x, p, seed):
    output = torch.empty_like(x)
    assert x.is_contiguous()
    n_elements = x.numel()
    grid = lambda meta: (triton.cdiv(n_elements, meta['BLOCK_SIZE']),)  # noqa: E731
    _seeded_dropout[grid](x, output, n_elements, p, seed, BLOCK_SIZE=128)
    return output


def test_seeded_dropout():
    torch = oracle()
    x_np = np.random.default_rng(3).standard_normal((20, 30)).astype(np.float32) + 5.0
    x = framework.tensor(x_np, device="cuda")
    out1 = seeded_dropout(framework, x, p=0.5, seed=123)
    out2 = seeded_dropout(framework, x, p=0.5, seed=123)
    out3 = seeded_dropout(framework, x, p=0.5, seed=512)
    # The same seed gives the same mask, another seed another one.
    assert framework.equal(out1, out2)
    assert not framework.equal(out1, out3)
    # Kept values are x / (1 - p), as torch's dropout scales them; about half are kept.
    got = torch.tensor(out1.cpu().numpy())
    keep = got != 0
    want = torch.where(keep, torch.tensor(x_np) / 0.5, torch.zeros(()))
    assert_same(got, want, rtol=1e-6, atol=0)
    assert 0.4 < keep.float().mean().item() < 0.6


# ---------------------------------------------------------------------------------------
# 4b. Layer norm: fused forward, backward with partial dW/dB under a lock, then a reduction

@triton.jit
def _layer_norm_fwd(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < N
    x = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    xc = tl.where(mask, x - mean, 0.)
    var = tl.sum(xc * xc, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    w = tl.load(W + cols, mask=mask)
    b = tl.load(B + cols, mask=mask)
    tl.store(Y + cols, xc * rstd * w + b, mask=mask)


@triton.jit
def _layer_norm_bwd_dx_fused(DX, DY, DW, DB, X, W, Mean, Rstd, Lock, stride, N,
                             GROUP_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE_N)
    mask = cols < N
    X += row * stride
    DY += row * stride
    DX += row * stride
    # Rows share GROUP_SIZE_M partial buffers; a spin lock per buffer serialises the adds.
    lock_id = row % GROUP_SIZE_M
    Lock += lock_id
    Count = Lock + GROUP_SIZE_M
    DW = DW + lock_id * N + cols
    DB = DB + lock_id * N + cols
    x = tl.load(X + cols, mask=mask, other=0).to(tl.float32)
    dy = tl.load(DY + cols, mask=mask, other=0).to(tl.float32)
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    mean = tl.load(Mean + row)
    rstd = tl.load(Rstd + row)
    xhat = tl.where(mask, (x - mean) * rstd, 0.)
    wdy = tl.where(mask, w * dy, 0.)
    c1 = tl.sum(xhat * wdy, axis=0) / N
    c2 = tl.sum(wdy, axis=0) / N
    dx = (wdy - (xhat * c1 + c2)) * rstd
    tl.store(DX + cols, dx, mask=mask)
    partial_dw = (dy * xhat).to(w.dtype)
    partial_db = dy.to(w.dtype)
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    count = tl.load(Count)
    if count == 0:  # the first row of this group writes, the others accumulate
        tl.atomic_xchg(Count, 1)
    else:
        partial_dw += tl.load(DW, mask=mask)
        partial_db += tl.load(DB, mask=mask)
    tl.store(DW, partial_dw, mask=mask)
    tl.store(DB, partial_db, mask=mask)
    tl.atomic_xchg(Lock, 0)


@triton.jit
def _layer_norm_bwd_dwdb(DW, DB, FINAL_DW, FINAL_DB, M, N, BLOCK_SIZE_M: tl.constexpr,
                         BLOCK_SIZE_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    dw = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    db = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for i in range(0, M, BLOCK_SIZE_M):
        rows = i + tl.arange(0, BLOCK_SIZE_M)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        offs = rows[:, None] * N + cols[None, :]
        dw += tl.load(DW + offs, mask=mask, other=0.)
        db += tl.load(DB + offs, mask=mask, other=0.)
    sum_dw = tl.sum(dw, axis=0)
    sum_db = tl.sum(db, axis=0)
    tl.store(FINAL_DW + cols, sum_dw, mask=cols < N)
    tl.store(FINAL_DB + cols, sum_db, mask=cols < N)


def layer_norm_script(torch, x_np, w_np, b_np, dy_np):
    class LayerNorm(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, normalized_shape, weight, bias, eps):
            y = torch.empty_like(x)
            x_arg = x.reshape(-1, x.shape[-1])
            M, N = x_arg.shape
            mean = torch.empty((M, ), dtype=torch.float32, device=x.device)
            rstd = torch.empty((M, ), dtype=torch.float32, device=x.device)
            BLOCK_SIZE = triton.next_power_of_2(N)
            _layer_norm_fwd[(M, )](x_arg, y, weight, bias, mean, rstd, x_arg.stride(0), N,
                                   eps, BLOCK_SIZE=BLOCK_SIZE, num_warps=4, num_ctas=1)
            ctx.save_for_backward(x, weight, bias, mean, rstd)
            ctx.BLOCK_SIZE = BLOCK_SIZE
            return y

        @staticmethod
        def backward(ctx, dy):
            x, w, b, m, v = ctx.saved_tensors
            N = w.shape[0]
            GROUP_SIZE_M = 4
            locks = torch.zeros(2 * GROUP_SIZE_M, dtype=torch.int32, device=w.device)
            _dw = torch.zeros((GROUP_SIZE_M, N), dtype=x.dtype, device=w.device)
            _db = torch.zeros((GROUP_SIZE_M, N), dtype=x.dtype, device=w.device)
            dw = torch.empty((N, ), dtype=w.dtype, device=w.device)
            db = torch.empty((N, ), dtype=w.dtype, device=w.device)
            dx = torch.empty_like(dy)
            x_arg = x.reshape(-1, x.shape[-1])
            M, N = x_arg.shape
            _layer_norm_bwd_dx_fused[(M, )](dx, dy, _dw, _db, x, w, m, v, locks,
                                            x_arg.stride(0), N, GROUP_SIZE_M=GROUP_SIZE_M,
                                            BLOCK_SIZE_N=ctx.BLOCK_SIZE)
            grid = lambda meta: (triton.cdiv(N, meta['BLOCK_SIZE_N']), )  # noqa: E731
            _layer_norm_bwd_dwdb[grid](_dw, _db, dw, db, min(GROUP_SIZE_M, M), N,
                                       BLOCK_SIZE_M=4, BLOCK_SIZE_N=32)
            return dx, None, dw, db, None

    layer_norm = LayerNorm.apply
    dev = "cuda"
    x = torch.tensor(x_np, device=dev, requires_grad=True)
    w = torch.tensor(w_np, device=dev, requires_grad=True)
    b = torch.tensor(b_np, device=dev, requires_grad=True)
    y = layer_norm(x, (x.shape[-1],), w, b, 1e-5)
    y.backward(torch.tensor(dy_np, device=dev))
    return [t.cpu() for t in (y, x.grad, w.grad, b.grad)]


def test_layer_norm_autograd_function():
    torch = oracle()
    rng = np.random.default_rng(4)
    M, N = 11, 45
    x_np = rng.standard_normal((M, N)).astype(np.float32)
    w_np = rng.random(N).astype(np.float32) + 0.5
    b_np = rng.standard_normal(N).astype(np.float32)
    dy_np = rng.standard_normal((M, N)).astype(np.float32)
    got = layer_norm_script(framework, x_np, w_np, b_np, dy_np)
    x, w, b = (torch.tensor(a, requires_grad=True) for a in (x_np, w_np, b_np))
    y = torch.nn.functional.layer_norm(x, (N,), w, b, 1e-5)
    y.backward(torch.tensor(dy_np))
    assert_same(got, [y.detach(), x.grad, w.grad, b.grad], rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------------------------------
# 5. Liger-style fused kernels: RMSNorm, SwiGLU, cross-entropy with the gradient written
#    into the logits, in autograd.Functions used by a module in a training loop

@triton.jit
def _rms_norm_forward_kernel(Y_ptr, Y_row_stride, X_ptr, X_row_stride, W_ptr, RSTD_ptr,
                             n_cols, eps, BLOCK_SIZE: tl.constexpr):
    row_idx = tl.program_id(0).to(tl.int64)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols
    X_row = tl.load(X_ptr + row_idx * X_row_stride + col_offsets, mask=mask, other=0)
    W_row = tl.load(W_ptr + col_offsets, mask=mask, other=0)
    rstd = tl.rsqrt(tl.sum(X_row * X_row, axis=0) / n_cols + eps)
    tl.store(RSTD_ptr + row_idx, rstd)
    tl.store(Y_ptr + row_idx * Y_row_stride + col_offsets, X_row * rstd * W_row, mask=mask)


@triton.jit
def _rms_norm_backward_kernel(dY_ptr, dY_row_stride, dX_ptr, dX_row_stride, X_ptr,
                              X_row_stride, W_ptr, RSTD_ptr, dW_ptr, dW_row_stride, n_rows,
                              n_cols, rows_per_program: tl.constexpr,
                              BLOCK_SIZE: tl.constexpr):
    # Each program owns a run of rows and one row of partial dW, summed by the caller.
    row_block_id = tl.program_id(0)
    row_start = row_block_id * rows_per_program
    row_end = min((row_block_id + 1) * rows_per_program, n_rows)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols
    dW_row = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    W_row = tl.load(W_ptr + col_offsets, mask=mask, other=0.0)
    for row_idx in range(row_start, row_end):
        dY_row = tl.load(dY_ptr + row_idx * dY_row_stride + col_offsets, mask=mask, other=0.)
        X_row = tl.load(X_ptr + row_idx * X_row_stride + col_offsets, mask=mask, other=0.)
        rstd_row = tl.load(RSTD_ptr + row_idx)
        m = dY_row * W_row
        dX_row = rstd_row * m - (rstd_row * rstd_row * rstd_row / n_cols) * tl.sum(
            m * X_row, axis=0) * X_row
        dW_row += dY_row * (X_row * rstd_row)
        tl.store(dX_ptr + row_idx * dX_row_stride + col_offsets, dX_row, mask=mask)
    tl.store(dW_ptr + row_block_id * dW_row_stride + col_offsets, dW_row, mask=mask)


@triton.jit
def _swiglu_forward_kernel(a_ptr, b_ptr, c_ptr, stride, n_cols, BLOCK_SIZE: tl.constexpr):
    program_id = tl.program_id(0).to(tl.int64)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols
    a_row = tl.load(a_ptr + program_id * stride + col_offsets, mask=mask, other=0)
    b_row = tl.load(b_ptr + program_id * stride + col_offsets, mask=mask, other=0)
    c_row = a_row * tl.sigmoid(a_row) * b_row
    tl.store(c_ptr + program_id * stride + col_offsets, c_row, mask=mask)


@triton.jit
def _swiglu_backward_kernel(dc_ptr, a_ptr, b_ptr, stride, n_cols, BLOCK_SIZE: tl.constexpr):
    # Recomputes silu(a) and overwrites a and b with their gradients (no extra buffers).
    program_id = tl.program_id(0).to(tl.int64)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols
    dc_row = tl.load(dc_ptr + program_id * stride + col_offsets, mask=mask, other=0)
    a_row = tl.load(a_ptr + program_id * stride + col_offsets, mask=mask, other=0)
    b_row = tl.load(b_ptr + program_id * stride + col_offsets, mask=mask, other=0)
    sig_a = tl.sigmoid(a_row)
    silu_a = a_row * sig_a
    db_row = dc_row * silu_a
    da_row = dc_row * (silu_a * (1 - sig_a) + sig_a) * b_row
    tl.store(a_ptr + program_id * stride + col_offsets, da_row, mask=mask)
    tl.store(b_ptr + program_id * stride + col_offsets, db_row, mask=mask)


@triton.jit
def _cross_entropy_kernel(X_ptr, X_stride, Y_ptr, loss_ptr, n_cols, n_non_ignore,
                          ignore_index, BLOCK_SIZE: tl.constexpr):
    # Loss of one row, and the row's gradient d(mean loss)/dX written over X itself.
    program_id = tl.program_id(0).to(tl.int64)
    X_ptr += program_id * X_stride
    y = tl.load(Y_ptr + program_id)
    offs = tl.arange(0, BLOCK_SIZE)
    mask = offs < n_cols
    if y == ignore_index:
        tl.store(X_ptr + offs, 0.0, mask=mask)
        tl.store(loss_ptr + program_id, 0.0)
    else:
        X_row = tl.load(X_ptr + offs, mask=mask, other=float("-inf")).to(tl.float32)
        m = tl.max(X_row, axis=0)
        d = tl.sum(tl.exp(X_row - m), axis=0)
        lse = m + tl.log(d)
        ori_X_y = tl.load(X_ptr + y).to(tl.float32)
        grad = tl.exp(X_row - m) / d
        grad = tl.where(offs == y, grad - 1.0, grad) / n_non_ignore
        tl.store(X_ptr + offs, grad, mask=mask)
        tl.store(loss_ptr + program_id, (lse - ori_X_y) / n_non_ignore)


def liger_functions(torch):
    """The three autograd.Functions of a Liger-style kernel library."""
    def ensure_contiguous(x):
        return x if x.is_contiguous() else x.contiguous()

    class LigerRMSNormFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, X, W, eps):
            shape = X.shape
            X = ensure_contiguous(X).view(-1, shape[-1])
            n_rows, n_cols = X.shape
            BLOCK_SIZE = triton.next_power_of_2(n_cols)
            Y = torch.empty((n_rows, n_cols), dtype=X.dtype, device=X.device)
            RSTD = torch.empty(n_rows, dtype=torch.float32, device=X.device)
            _rms_norm_forward_kernel[(n_rows,)](Y, Y.stride(0), X, X.stride(0), W, RSTD,
                                                n_cols, eps, BLOCK_SIZE=BLOCK_SIZE)
            ctx.BLOCK_SIZE = BLOCK_SIZE
            ctx.save_for_backward(X, W, RSTD)
            return Y.view(*shape)

        @staticmethod
        def backward(ctx, dY):
            shape = dY.shape
            dY = ensure_contiguous(dY).view(-1, shape[-1])
            X, W, RSTD = ctx.saved_tensors
            n_rows, n_cols = dY.shape
            sm_count = torch.cuda.get_device_properties(X.device).multi_processor_count
            sm_count = max(sm_count, 3)  # several programs even on a one-SM device
            rows_per_program = triton.cdiv(n_rows, sm_count)
            _dW = torch.empty((sm_count, n_cols), dtype=torch.float32, device=W.device)
            dX = torch.empty_like(dY)
            _rms_norm_backward_kernel[(sm_count,)](
                dY, dY.stride(0), dX, dX.stride(0), X, X.stride(0), W, RSTD, _dW,
                _dW.stride(0), n_rows, n_cols, rows_per_program, BLOCK_SIZE=ctx.BLOCK_SIZE)
            dW = _dW.sum(dim=0).to(W.dtype)
            return dX.view(*shape), dW, None

    class LigerSiLUMulFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ori_shape = a.shape
            n_cols = ori_shape[-1]
            a = a.contiguous().view(-1, n_cols)
            b = b.contiguous().view(-1, n_cols)
            c = torch.empty_like(a)
            _swiglu_forward_kernel[(a.shape[0],)](a, b, c, c.stride(-2), n_cols,
                                                  BLOCK_SIZE=triton.next_power_of_2(n_cols))
            ctx.save_for_backward(a, b)
            return c.view(*ori_shape)

        @staticmethod
        def backward(ctx, dc):
            ori_shape = dc.shape
            n_cols = ori_shape[-1]
            dc = dc.contiguous().view(-1, n_cols)
            a, b = ctx.saved_tensors
            a, b = a.clone(), b.clone()  # the kernel overwrites them with da, db
            _swiglu_backward_kernel[(dc.shape[0],)](dc, a, b, dc.stride(-2), n_cols,
                                                    BLOCK_SIZE=triton.next_power_of_2(n_cols))
            return a.view(*ori_shape), b.view(*ori_shape)

    class LigerCrossEntropyFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, _input, target, ignore_index=-100):
            BT, V = _input.shape
            n_non_ignore = (target != ignore_index).sum().item()
            loss_1d = torch.zeros(BT, dtype=_input.dtype, device=_input.device)
            if _input.stride(-1) != 1:
                _input = _input.contiguous()
            if target.stride(-1) != 1:
                target = target.contiguous()
            _cross_entropy_kernel[(BT,)](_input, _input.stride(-2), target, loss_1d, V,
                                         n_non_ignore, ignore_index,
                                         BLOCK_SIZE=triton.next_power_of_2(V), num_warps=4)
            loss = torch.sum(loss_1d)
            ctx.save_for_backward(_input.detach())  # now holds d(loss)/d(input)
            n_valid = torch.tensor(n_non_ignore, device=_input.device)
            ctx.mark_non_differentiable(n_valid)
            return loss, n_valid

        @staticmethod
        def backward(ctx, grad_output, _grad_n_valid):
            (grad_input,) = ctx.saved_tensors
            if not torch.equal(grad_output, torch.tensor(1.0, device=grad_output.device)):
                grad_input = grad_input * grad_output
            return grad_input, None, None

    return LigerRMSNormFunction, LigerSiLUMulFunction, LigerCrossEntropyFunction


def liger_training_script(torch, x_np, labels_np, device, use_triton):
    nn = torch.nn
    F = torch.nn.functional
    if use_triton:
        RMSNormFn, SiLUMulFn, CEFn = liger_functions(torch)
        rms_norm, silu_mul = RMSNormFn.apply, SiLUMulFn.apply
        cross_entropy = lambda logits, y: CEFn.apply(logits, y, -100)[0]  # noqa: E731
    else:  # the same math in plain ops: the reference
        def rms_norm(x, w, eps):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w
        silu_mul = lambda a, b: F.silu(a) * b  # noqa: E731
        cross_entropy = lambda logits, y: F.cross_entropy(logits, y, ignore_index=-100)  # noqa

    class RMSNorm(nn.Module):
        def __init__(self, hidden_size, eps=1e-6):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(hidden_size))
            self.variance_epsilon = eps

        def forward(self, hidden_states):
            return rms_norm(hidden_states, self.weight, self.variance_epsilon)

    class TinyLM(nn.Module):
        def __init__(self, d, h, vocab):
            super().__init__()
            self.norm = RMSNorm(d)
            self.gate_up_proj = nn.Linear(d, 2 * h, bias=False)
            self.down_proj = nn.Linear(h, d, bias=False)
            self.lm_head = nn.Linear(d, vocab)

        def forward(self, x):
            h = self.norm(x)
            gate, up = self.gate_up_proj(h).chunk(2, dim=-1)  # non-contiguous halves
            h = x + self.down_proj(silu_mul(gate, up))
            return self.lm_head(h)

    model = TinyLM(40, 24, 70)
    init_params(torch, model, seed=5)
    with torch.no_grad():
        model.norm.weight.add_(0.5)  # not all ones, so that dW shows up in the result
    model.to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    x = torch.tensor(x_np, device=device)
    y = torch.tensor(labels_np, device=device)
    losses = []
    for _ in range(3):
        logits = model(x)
        loss = cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    grads = {k: p.grad.cpu() for k, p in model.named_parameters()}
    return losses, grads, {k: v.cpu() for k, v in model.state_dict().items()}


def test_liger_style_kernels_training_step():
    torch = oracle()
    rng = np.random.default_rng(6)
    x_np = rng.standard_normal((3, 5, 40)).astype(np.float32)
    labels_np = rng.integers(0, 70, size=(3, 5))
    labels_np[1, 2] = labels_np[2, 4] = -100  # ignored positions
    got = liger_training_script(framework, x_np, labels_np, "cuda", use_triton=True)
    want = liger_training_script(torch, x_np, labels_np, "cpu", use_triton=False)
    assert_same(got, want, rtol=2e-4, atol=2e-5)
