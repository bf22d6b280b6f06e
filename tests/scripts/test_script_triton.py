"""Script sweep: researchers' own Triton kernels on framework tensors, part 1: the official
tutorials' vector add, fused softmax and autotuned matmul (workloads 1-3).

Each script body ``run(torch, ...)`` launches its ``@triton.jit`` kernels on ``cuda``
tensors of the module it is given; it runs under the framework (simulated cuda with
TRITON_INTERPRET=1, or a GPU). The oracle is the same computation written with PyTorch ops
on cpu: PyTorch (a CPU build) never launches Triton here.
"""
import numpy as np
import pytest

import framework
from tests.scripts.script_harness import assert_same, oracle

triton = pytest.importorskip("triton")
tl = triton.language

pytestmark = pytest.mark.skipif(not framework.cuda.is_available(),
                                reason="needs cuda (a GPU, or TRITON_INTERPRET=1)")


# ---------------------------------------------------------------------------------------
# 1. Vector add: program ids, masks, a meta-parameter grid, the device idioms

@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(output_ptr + offsets, x + y, mask=mask)


def vector_add_script(torch, x_np, y_np):
    DEVICE = triton.runtime.driver.active.get_active_torch_device()

    def add(x, y):
        output = torch.empty_like(x)
        assert x.device == DEVICE and y.device == DEVICE and output.device == DEVICE
        n_elements = output.numel()
        grid = lambda meta: (triton.cdiv(n_elements, meta['BLOCK_SIZE']),)  # noqa: E731
        add_kernel[grid](x, y, output, n_elements, BLOCK_SIZE=64)
        return output

    x = torch.tensor(x_np, device=DEVICE)
    y = torch.tensor(y_np).to(DEVICE)
    output_triton = add(x, y)
    idioms = [x.is_cuda, x.device.type == "cuda", x.device == torch.device("cuda", 0),
              x.device == torch.device("cuda:0"), x.device.index == DEVICE.index,
              str(DEVICE), torch.cuda.is_available(), torch.cuda.device_count() >= 1]
    diff = torch.max(torch.abs(output_triton - (x + y))).item()
    return output_triton.cpu(), idioms, diff


def test_vector_add():
    torch = oracle()
    rng = np.random.default_rng(0)
    x_np, y_np = rng.random(197, dtype=np.float32), rng.random(197, dtype=np.float32)
    out, idioms, diff = vector_add_script(framework, x_np, y_np)
    want = torch.tensor(x_np) + torch.tensor(y_np)
    assert_same(out, want)
    assert idioms == [True] * 5 + ["cuda:0", True, True]
    assert diff == 0.0
    # On a GPU with PyTorch loaded, Triton's driver may hand out a torch.device instead.
    dev = torch.device("cuda", 0)
    x = framework.tensor(x_np, device=dev)
    assert x.device == dev and framework.device(dev) == "cuda:0"


# ---------------------------------------------------------------------------------------
# 2. Fused softmax: persistent programs over rows, occupancy from device properties

@triton.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows,
                   n_cols, BLOCK_SIZE: tl.constexpr, num_stages: tl.constexpr):
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step, num_stages=num_stages):
        row_start_ptr = input_ptr + row_idx * input_row_stride
        col_offsets = tl.arange(0, BLOCK_SIZE)
        input_ptrs = row_start_ptr + col_offsets
        mask = col_offsets < n_cols
        row = tl.load(input_ptrs, mask=mask, other=-float('inf'))
        row_minus_max = row - tl.max(row, axis=0)
        numerator = tl.exp(row_minus_max)
        denominator = tl.sum(numerator, axis=0)
        softmax_output = numerator / denominator
        output_row_start_ptr = output_ptr + row_idx * output_row_stride
        tl.store(output_row_start_ptr + col_offsets, softmax_output, mask=mask)


def fused_softmax_script(torch, x_np):
    DEVICE = triton.runtime.driver.active.get_active_torch_device()
    properties = triton.runtime.driver.active.utils.get_device_properties(DEVICE.index)
    NUM_SM = properties["multiprocessor_count"]
    NUM_REGS = properties["max_num_regs"]
    SIZE_SMEM = properties["max_shared_mem"]
    WARP_SIZE = properties["warpSize"]
    # The same limits through torch.cuda, as other scripts read them.
    torch_props = torch.cuda.get_device_properties(DEVICE)
    same = [torch_props.multi_processor_count == NUM_SM,
            torch_props.regs_per_multiprocessor == NUM_REGS,
            torch_props.shared_memory_per_block_optin == SIZE_SMEM,
            torch_props.warp_size == WARP_SIZE]

    def softmax(x):
        n_rows, n_cols = x.shape
        BLOCK_SIZE = triton.next_power_of_2(n_cols)
        num_warps = 8 if BLOCK_SIZE >= 2048 else 4
        num_stages = 4 if SIZE_SMEM > 200000 else 2
        y = torch.empty_like(x)
        kernel = softmax_kernel.warmup(y, x, x.stride(0), y.stride(0), n_rows, n_cols,
                                       BLOCK_SIZE=BLOCK_SIZE, num_stages=num_stages,
                                       num_warps=num_warps, grid=(1, ))
        if kernel is not None:  # compiled for a GPU: its registers and shared memory
            kernel._init_handles()
            n_regs, size_smem = kernel.n_regs, max(kernel.metadata.shared, 1)
        else:  # Triton's interpreter compiles nothing: a typical budget
            n_regs, size_smem = 32, BLOCK_SIZE * x.element_size()
        occupancy = NUM_REGS // (n_regs * WARP_SIZE * num_warps)
        occupancy = min(occupancy, SIZE_SMEM // size_smem)
        num_programs = min(NUM_SM * occupancy, n_rows)
        softmax_kernel[(num_programs, 1, 1)](y, x, x.stride(0), y.stride(0), n_rows, n_cols,
                                             BLOCK_SIZE, num_stages, num_warps=num_warps)
        return y

    x = torch.tensor(x_np, device=DEVICE)
    y_rows = softmax(x)
    # A strided input: every other column of a wider buffer, rows `x.stride(0)` apart.
    wide = torch.tensor(np.repeat(x_np, 2, axis=1), device=DEVICE)
    y_wide = softmax(wide[:, ::2].contiguous())
    return y_rows.cpu(), y_wide.cpu(), same + [NUM_SM >= 1, NUM_REGS > 0, SIZE_SMEM > 0,
                                               WARP_SIZE]


def test_fused_softmax():
    torch = oracle()
    x_np = np.random.default_rng(1).standard_normal((37, 81)).astype(np.float32)
    y, y_wide, props = fused_softmax_script(framework, x_np)
    want = torch.softmax(torch.tensor(x_np), dim=1)
    assert_same(y, want, rtol=1e-5, atol=1e-6)
    assert_same(y_wide, want, rtol=1e-5, atol=1e-6)
    assert props == [True] * 7 + [32]


# ---------------------------------------------------------------------------------------
# 3. Matmul: autotune over configs, grouped ordering, fp16 in, fp32 accumulate, epilogue

@triton.jit
def leaky_relu(x):
    return tl.where(x >= 0, x, 0.01 * x)


@triton.autotune(
    configs=[
        triton.Config({'BLOCK_SIZE_M': 16, 'BLOCK_SIZE_N': 16, 'BLOCK_SIZE_K': 16,
                       'GROUP_SIZE_M': 2}, num_stages=3, num_warps=4),
        triton.Config({'BLOCK_SIZE_M': 32, 'BLOCK_SIZE_N': 16, 'BLOCK_SIZE_K': 32,
                       'GROUP_SIZE_M': 1}, num_stages=4, num_warps=4),
    ],
    key=['M', 'N', 'K'],
)
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                  stride_cm, stride_cn, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                  BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr,
                  ACTIVATION: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    if ACTIVATION == "leaky_relu":
        accumulator = leaky_relu(accumulator)
    c = accumulator.to(tl.float16)

    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


def matmul_script(torch, a_np, b_np):
    DEVICE = triton.runtime.driver.active.get_active_torch_device()

    def matmul(a, b, activation=""):
        assert a.shape[1] == b.shape[0], "Incompatible dimensions"
        assert a.is_contiguous(), "Matrix A must be contiguous"
        M, K = a.shape
        K, N = b.shape
        c = torch.empty((M, N), device=a.device, dtype=torch.float16)
        grid = lambda META: (triton.cdiv(M, META['BLOCK_SIZE_M'])  # noqa: E731
                             * triton.cdiv(N, META['BLOCK_SIZE_N']),)
        matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0),
                            b.stride(1), c.stride(0), c.stride(1), ACTIVATION=activation)
        return c

    a = torch.tensor(a_np, device=DEVICE).to(torch.float16)
    b = torch.tensor(b_np, device=DEVICE, dtype=torch.float16)
    c = matmul(a, b)
    c_act = matmul(a, b, activation="leaky_relu")
    # do_bench times a launch with the framework's cuda Events (the autotuner uses it too).
    ms, min_ms, max_ms = triton.testing.do_bench(lambda: matmul(a, b), warmup=1, rep=1,
                                                 quantiles=[0.5, 0.2, 0.8])
    best = matmul_kernel.best_config.kwargs["BLOCK_SIZE_M"]
    return c.cpu(), c_act.cpu(), [c.dtype == torch.float16, 0 < min_ms <= ms <= max_ms,
                                  best in (16, 32)]


def test_autotuned_matmul():
    torch = oracle()
    rng = np.random.default_rng(2)
    a_np = rng.standard_normal((40, 24)).astype(np.float32)
    b_np = rng.standard_normal((24, 36)).astype(np.float32)
    c, c_act, checks = matmul_script(framework, a_np, b_np)
    a16 = torch.tensor(a_np).to(torch.float16).float()
    b16 = torch.tensor(b_np).to(torch.float16).float()
    ref = a16 @ b16
    assert_same(c.float(), ref.half().float(), rtol=2e-3, atol=2e-3)
    assert_same(c_act.float(), torch.nn.functional.leaky_relu(ref, 0.01).half().float(),
                rtol=2e-3, atol=2e-3)
    assert checks == [True, True, True]
