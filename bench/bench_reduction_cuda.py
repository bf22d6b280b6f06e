"""Reduction kernels on a GPU: GB/s read of framework.kernels.reduction beside a device copy
of the same tensor (the bandwidth reference) and PyTorch on cuda where installed. Run on a
real GPU (not under TRITON_INTERPRET=1); prints one row per case."""
import os

import triton.testing

import framework as fw

try:
    import torch
except ImportError:  # torch is only a reference here
    torch = None


def cases():
    yield "sum rows 8192x8192", (8192, 8192), lambda x: x.sum(1)
    yield "amax rows 8192x8192", (8192, 8192), lambda x: fw.amax(x, 1)
    yield "sum cols 8192x8192", (8192, 8192), lambda x: x.sum(0)
    yield "sum all 64M", (64 * 1024 * 1024,), lambda x: x.sum()
    yield "amax all 64M", (64 * 1024 * 1024,), lambda x: fw.amax(x)
    yield "argmax rows 8192x8192", (8192, 8192), lambda x: x.argmax(1)
    yield "var rows 8192x8192", (8192, 8192), lambda x: x.var(1)
    yield "logsumexp rows 4096x32768", (4096, 32768), lambda x: fw.logsumexp(x, 1)
    yield "sum rows 32768x256", (32768, 256), lambda x: x.sum(1)


def main():
    if os.environ.get("TRITON_INTERPRET") == "1" or not fw.cuda.is_available():
        print("needs a GPU (and TRITON_INTERPRET unset)")
        return
    print(f"{'case':28s} {'fw GB/s':>9s} {'copy GB/s':>10s} {'fw/copy':>8s} {'torch GB/s':>11s}")
    for name, shape, fn in cases():
        x = fw.randn(*shape, device="cuda")
        nbytes = x.numel() * x.element_size()
        ms = triton.testing.do_bench(lambda: fn(x))
        copy_ms = triton.testing.do_bench(lambda: x.clone())
        gbs = nbytes / ms / 1e6
        copy_gbs = 2 * nbytes / copy_ms / 1e6  # a copy reads and writes
        tgbs = float("nan")
        if torch is not None and torch.cuda.is_available():
            t = torch.randn(*shape, device="cuda")
            tfn = {"sum": lambda: t.sum(1)}.get(name.split()[0])
            if tfn is not None and "rows" in name:
                tgbs = nbytes / triton.testing.do_bench(tfn) / 1e6
        print(f"{name:28s} {gbs:9.0f} {copy_gbs:10.0f} {gbs / copy_gbs:8.2f} {tgbs:11.0f}")


if __name__ == "__main__":
    main()
