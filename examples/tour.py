"""A tour of the tensor library on the CPU: every line printed is a real result of a real
kernel. (`make demo` runs this until the training demo exists.)"""
import time

import numpy as np

import framework as fw


def show(title, value):
    print(f">>> {title}\n{value}\n")


def timed(fn, repeat=20):
    fn()
    t0 = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - t0) / repeat


def main():
    fw.manual_seed(0)
    a = fw.arange(12, dtype=fw.float32).reshape(3, 4)
    show("a = fw.arange(12, dtype=fw.float32).reshape(3, 4)", a)
    show(f"a.T is a view (stride {a.T.stride()}, same storage: {a.T.data_ptr() == a.data_ptr()})",
         a.T)
    show("broadcasting: a - a.mean(0)", a - a.mean(0))
    show("type promotion: fw.tensor([1, 2, 3]) / 2  (int / int -> float)",
         fw.tensor([1, 2, 3]) / 2)
    show("a[a > 5] (bool-mask indexing)", a[a > 5])
    show("a[[0, 2], 1:] (integer-list + slice)", a[[0, 2], 1:])
    show("softmax by hand: (a - a.amax(1, keepdim=True)).exp() normalised",
         (lambda e: e / e.sum(1, keepdim=True))((a - a.amax(1, keepdim=True)).exp()))
    show("a @ a.T", a @ a.T)
    show("fw.einsum('ij,kj->ik', a, a)", fw.einsum("ij,kj->ik", a, a))
    values, indices = a.sin().sort(dim=1, descending=True)
    show("a.sin().sort(dim=1, descending=True).indices", indices)
    show("fw.cat([a, a[:1]]).cumsum(0)[-1]", fw.cat([a, a[:1]]).cumsum(0)[-1])
    x = fw.randn(1000, 3)
    show("fw.randn(1000, 3): mean and std per column (Philox RNG)",
         fw.stack([x.mean(0), x.std(0)]))
    m = fw.randn(4, 4, dtype=fw.float64)
    spd = m @ m.T + 4 * fw.eye(4, dtype=fw.float64)
    sol = fw.linalg.solve(spd, fw.ones(4, 1, dtype=fw.float64))
    show("linalg.solve(spd, ones) residual norm", fw.linalg.norm(spd @ sol - 1))

    n = 1 << 22
    x_np = np.random.default_rng(0).standard_normal(n, dtype=np.float32)
    x = fw.from_numpy(x_np)
    print(">>> timings on this machine (4M float32, median-free quick look; see bench/)")
    for label, f_fw, f_np in (("add", lambda: x + x, lambda: x_np + x_np),
                              ("exp", lambda: x.exp(), lambda: np.exp(x_np)),
                              ("sum", lambda: x.sum(), lambda: x_np.sum())):
        t_fw, t_np = timed(f_fw), timed(f_np)
        print(f"{label:4s} framework {t_fw * 1e3:6.2f} ms   numpy {t_np * 1e3:6.2f} ms")
    s = fw.randn(1024, 1024)
    s_np = s.numpy()
    print(f"matmul 1024: framework {timed(lambda: s @ s, 5) * 1e3:6.1f} ms   "
          f"numpy {timed(lambda: s_np @ s_np, 5) * 1e3:6.1f} ms")
    print(f"\nCPU threads: {fw.get_num_threads()}")


if __name__ == "__main__":
    main()
