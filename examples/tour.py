"""A short tour of the tensor library on the CPU: prints real results of real kernels."""
import time

import numpy as np

import framework as fw


def show(title, value):
    print(f"--- {title}\n{value}\n")


def main():
    fw.manual_seed(0) if hasattr(fw, "manual_seed") else None
    a = fw.arange(12, dtype=fw.float32).reshape(3, 4)
    show("a = arange(12).reshape(3, 4)", a)
    show("a.T (a view: same storage, strides %s)" % (a.T.stride(),), a.T)
    show("a * 2 + 1", a * 2 + 1)
    show("broadcast: a - a[0]", a - a[0])
    show("type promotion: int tensor / 2 -> float", fw.tensor([1, 2, 3]) / 2 if hasattr(fw, "div") else "(div pending)")
    show("comparison: a > 5", a > 5)
    show("exp of a strided view a[:, ::2]", fw.exp(a[:, ::2]))
    for name in ("sum", "matmul", "softmax"):
        if not hasattr(fw, name):
            continue
    if hasattr(fw, "sum"):
        show("a.sum(dim=1)", a.sum(dim=1))
    if hasattr(fw, "matmul"):
        show("a @ a.T", a @ a.T)

    n = 1 << 22
    x = fw.ones(n)
    y = fw.ones(n)
    xn, yn = np.ones(n, np.float32), np.ones(n, np.float32)
    for label, f in (("framework add, 4M float32", lambda: x + y),
                     ("numpy add, 4M float32", lambda: xn + yn)):
        f()
        t0 = time.perf_counter()
        for _ in range(20):
            f()
        print(f"{label}: {(time.perf_counter() - t0) / 20 * 1e3:.2f} ms")
    print(f"\nthreads: {fw.get_num_threads()}")


if __name__ == "__main__":
    main()
