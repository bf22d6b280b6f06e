"""Benchmark of the cuda GEMM (framework/kernels/linalg.py) against torch.matmul on the same
GPU in the same run: median milliseconds from CUDA events, TFLOP/s, and framework/torch
throughput ratios. Prints a table; asserts nothing. The first call of each case autotunes
(not timed).

    python bench/bench_matmul_cuda.py            (needs a GPU; torch with CUDA as reference)
    TRITON_INTERPRET=1 python bench/bench_matmul_cuda.py --quick   (smoke run, simulator)

Goals: bfloat16/float16 at 4096^3 and 8192^3 at least 90% of torch; float32 with TF32 at
least 85% of torch with TF32.
"""
import argparse
import statistics

import framework as fw

try:
    import torch
    if not torch.cuda.is_available():
        torch = None
except ImportError:  # torch is only a reference
    torch = None

CASES = [  # (label, dtype, precision, batch, M, N, K, transpose a, transpose b)
    ("bf16 4096^3", "bfloat16", None, (), 4096, 4096, 4096, False, False),
    ("fp16 4096^3", "float16", None, (), 4096, 4096, 4096, False, False),
    ("bf16 8192^3", "bfloat16", None, (), 8192, 8192, 8192, False, False),
    ("fp16 8192^3", "float16", None, (), 8192, 8192, 8192, False, False),
    ("tf32 4096^3", "float32", "high", (), 4096, 4096, 4096, False, False),
    ("tf32 8192^3", "float32", "high", (), 8192, 8192, 8192, False, False),
    ("fp32 4096^3", "float32", "highest", (), 4096, 4096, 4096, False, False),
    ("bf16 4096 a.T", "bfloat16", None, (), 4096, 4096, 4096, True, False),
    ("bf16 4096 b.T", "bfloat16", None, (), 4096, 4096, 4096, False, True),
    ("bf16 bmm 32x1024^3", "bfloat16", None, (32,), 1024, 1024, 1024, False, False),
    ("bf16 linear 8192x4096x11008", "bfloat16", None, (), 8192, 11008, 4096, False, True),
    ("bf16 odd 4000x3000x2000", "bfloat16", None, (), 4000, 3000, 2000, False, False),
]
QUICK = [  # shapes the simulator runs in seconds
    ("bf16 64x48x80", "bfloat16", None, (), 64, 48, 80, False, False),
    ("tf32 64x48x80 b.T", "float32", "high", (), 64, 48, 80, False, True),
    ("fp32 bmm 2x33^3", "float32", "highest", (2,), 33, 33, 33, True, False),
]


def operand(lib, batch, rows, cols, dtype, transposed, device):
    shape = batch + ((cols, rows) if transposed else (rows, cols))
    x = lib.randn(shape, device=device).to(getattr(lib, dtype))
    return x.mT if transposed else x


def time_ms(lib, fn, reps):
    fn()  # autotunes / warms up
    lib.cuda.synchronize()
    events = [(lib.cuda.Event(enable_timing=True), lib.cuda.Event(enable_timing=True))
              for _ in range(reps)]
    for start, end in events:
        start.record()
        fn()
        end.record()
    lib.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in events)


def run_case(lib, case, reps):
    label, dtype, precision, batch, m, n, k, ta, tb = case
    if precision is not None:
        lib.set_float32_matmul_precision(precision)
    a = operand(lib, batch, m, k, dtype, ta, "cuda")
    b = operand(lib, batch, k, n, dtype, tb, "cuda")
    ms = time_ms(lib, lambda: lib.matmul(a, b), reps)
    lib.set_float32_matmul_precision("highest")
    return ms


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=20, help="timed repetitions per case")
    parser.add_argument("--quick", action="store_true", help="small shapes (simulator)")
    args = parser.parse_args()
    cases = QUICK if args.quick else CASES
    print(f"device: {fw.cuda.get_device_name()}" + ("" if torch is None else
                                                    f", torch {torch.__version__}"))
    head = f"{'case':30} {'fw ms':>9} {'torch ms':>9} {'fw TFLOP/s':>11} " \
           f"{'torch TFLOP/s':>14} {'fw/torch':>9}"
    print(head)
    print("-" * len(head))
    for case in cases:
        label, _, _, batch, m, n, k = case[:7]
        flops = 2.0 * m * n * k
        for size in batch:
            flops *= size
        fw_ms = run_case(fw, case, args.reps)
        t_ms = run_case(torch, case, args.reps) if torch is not None else float("nan")
        print(f"{label:30} {fw_ms:9.3f} {t_ms:9.3f} {flops / fw_ms / 1e9:11.1f} "
              f"{flops / t_ms / 1e9:14.1f} {t_ms / fw_ms:9.2f}")


if __name__ == "__main__":
    main()
