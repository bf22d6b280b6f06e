"""Where a small cuda op's host time goes, layer by layer: the 1-element add as a whole
(as gpu_ops.py times it: as it runs, through Triton's JITFunction.run, its launch left out),
then its pieces timed alone in loops (the cached launcher's binding, Triton's compiled
launcher, the caching allocator, the stream lookup), beside torch's add and empty. On the
H200 a 1-element add took 38.7 us against torch's 7.5 (bench/results/2026-11-27-
nvidia-h200.md), 22 us of it in the launch; this says which layer holds them.

    python bench/gpu_launch.py [--calls N] [--quick] [--profile]

Without a GPU (Triton's interpreter) the compiled-launcher rows are left out.
"""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), HERE]

import framework as fw  # noqa: E402
from framework._ops import alloc  # noqa: E402
from framework.cuda import _runtime  # noqa: E402
from framework.kernels import launcher, pointwise  # noqa: E402

import gpu_ops  # noqa: E402 - the whole op's host time, measured as gpu_ops.py measures it


def per_call_us(fn, calls, sync):
    """Median over 5 rounds of the wall microseconds per call of ``fn`` (``calls`` calls a
    round, synchronised at the end of each)."""
    for _ in range(min(100, calls)):
        fn()
    sync()
    rounds = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        rounds.append((time.perf_counter() - t0) / calls * 1e6)
    rounds.sort()
    return rounds[2]


def captured_launch(a, b):
    """(CachedKernel, grid, args, kwargs) of the binary kernel's launch in ``a + b``, or
    None where launches are not cached (the interpreter)."""
    ck = pointwise._binary_kernel
    if not isinstance(ck, launcher.CachedKernel):
        return None
    seen = []
    real = ck.launch

    def spy(grid, *args, **kwargs):
        seen.append((grid, args, kwargs))
        return real(grid, *args, **kwargs)
    ck.launch = spy
    try:
        a + b
    finally:
        del ck.launch
    return (ck,) + seen[0]


def compiled_args(ck, grid, args, kwargs):
    """(compiled kernel, the arguments CachedKernel.launch hands its ``run``)."""
    vals, key = ck.bind(args, kwargs)
    device = _runtime.current_index()
    kernel = ck._kernels[(device, key)][-1]
    n = len(grid)
    return kernel, (grid[0], grid[1] if n > 1 else 1, grid[2] if n > 2 else 1,
                    _runtime.stream_handle(device), kernel.function, kernel.packed_metadata,
                    None, None, None, *vals)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=5000)
    ap.add_argument("--quick", action="store_true", help="1,000 calls a round")
    ap.add_argument("--device", default="cuda", choices=["cuda"],
                    help="(as the other benchmarks take it: cuda only)")
    ap.add_argument("--profile", action="store_true",
                    help="cProfile's table of the add and of the compiled launcher alone")
    args = ap.parse_args()
    calls = 1000 if args.quick else args.calls
    if not fw.cuda.is_available():
        print("gpu_launch: no cuda device (not even the simulated one): nothing to measure")
        return
    dev = fw.device("cuda")
    a, b = fw.ones(1, device=dev), fw.ones(1, device=dev)
    sync = fw.cuda.synchronize
    rows = [(f"framework: a + b (1 element){how}", us)
            for how, us in gpu_ops.host_overheads(a, b, calls)]
    try:
        cap = captured_launch(a, b)
        if cap is not None:
            _launch_rows(rows, cap, calls, sync)
        else:
            rows.append(("  (launch rows left out: no compiled kernels here)", float("nan")))
    except Exception as e:  # noqa: BLE001 - the other rows still say something
        rows.append((f"  (launch rows failed: {type(e).__name__}: {e})"[:120], float("nan")))
    f32 = fw.float32
    rows += [
        ("  allocator: alloc.empty((1,)) and free",
         per_call_us(lambda: alloc.empty((1,), f32, dev), calls, sync)),
        ("  stream lookup", per_call_us(lambda: _runtime.stream_handle(0), calls, sync)),
    ]
    try:
        import torch
        if torch.cuda.is_available():
            ta, tb = torch.ones(1, device="cuda"), torch.ones(1, device="cuda")
            ts = torch.cuda.synchronize
            rows += [("torch: a + b (1 element)", per_call_us(lambda: ta + tb, calls, ts)),
                     ("torch: empty(1)", per_call_us(lambda: torch.empty(1, device="cuda"),
                                                     calls, ts))]
    except ImportError:
        pass
    print(f"{'what':48s} {'us/call':>8s}")
    for name, us in rows:
        print(f"{name:48s} {'' if us != us else f'{us:8.2f}':>8s}")
    if args.profile:
        print(gpu_ops.host_profile(lambda: a + b))
        if _RUN:
            run, run_args = _RUN
            print(gpu_ops.host_profile(lambda: run(*run_args)))


_RUN = []   # the compiled launcher and its arguments, for --profile


def _launch_rows(rows, cap, calls, sync):
    ck, grid, cargs, ckw = cap
    kernel, run_args = compiled_args(ck, grid, cargs, ckw)
    run = kernel.run
    _RUN[:] = [run, run_args]
    rows += [
        ("  CachedKernel.launch (bind + run)",
         per_call_us(lambda: ck.launch(grid, *cargs, **ckw), calls, sync)),
        ("  CachedKernel.bind", per_call_us(lambda: ck.bind(cargs, ckw), calls, sync)),
        ("  compiled kernel.run (Triton's launcher)",
         per_call_us(lambda: run(*run_args), calls, sync)),
        (f"  (launcher: {type(run).__module__}.{type(run).__name__})", float("nan")),
    ]


if __name__ == "__main__":
    main()
