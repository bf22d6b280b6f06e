"""framework.save / framework.load beside torch.save / torch.load (CPU, same process): a
state dict of ~500 MB (float32, 40 large tensors and 200 small ones) written to and read
from a file in a temporary directory, median of a few runs (page cache warm for loads).

framework.save to a path writes atomically (temporary file, fsync, rename), which
torch.save does not do; its reference row does the same around torch.save. Timings on a
shared disk vary from run to run: the rounds are interleaved and medians shown.

    python bench/serialization.py [--mb 500] [--repeat 3] [--dir DIR]
"""
import argparse
import os
import shutil
import statistics
import tempfile
import time

import numpy as np

import framework as fw


def state_dict(mb):
    rng = np.random.default_rng(0)
    big = 40
    n = mb * 2 ** 20 // 4 // big
    sd = {}
    for i in range(big):
        sd[f"layer{i}.weight"] = rng.standard_normal(n, dtype=np.float32)
    for i in range(200):
        sd[f"small{i}.bias"] = rng.standard_normal(256, dtype=np.float32)
    return sd


def timed(cases, repeat):
    """Median seconds of each (name, fn), the cases interleaved round by round so that
    drift of the machine (page cache, other load) hits them alike."""
    times = {name: [] for name, _ in cases}
    for _ in range(repeat):
        for name, fn in cases:
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return [(name, statistics.median(times[name])) for name, _ in cases]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=500)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir", default=None)
    args = ap.parse_args()
    try:
        import torch
    except ImportError:
        torch = None
    arrays = state_dict(args.mb)
    nbytes = sum(a.nbytes for a in arrays.values())
    fw_sd = {k: fw.from_numpy(a) for k, a in arrays.items()}
    d = tempfile.mkdtemp(dir=args.dir)
    rows = []
    try:
        p = os.path.join(d, "fw.pt")
        q = os.path.join(d, "torch.pt")
        def to_file(save, obj, path):
            def run():
                with open(path, "wb") as fh:
                    save(obj, fh)
            return run

        def atomic(save, obj, path):
            # what framework.save does with a path, done around torch.save
            def run():
                tmp = path + ".tmp"
                with open(tmp, "wb") as fh:
                    save(obj, fh)
                    fh.flush()
                    os.fsync(fh.fileno())
                os.replace(tmp, path)
            return run

        saves = [("framework.save to a file object", to_file(fw.save, fw_sd, p)),
                 ("framework.save to a path (atomic)", lambda: fw.save(fw_sd, p))]
        loads = [("framework.load", lambda: fw.load(p)),
                 ("framework.load mmap=True", lambda: fw.load(p, mmap=True))]
        if torch is not None:
            t_sd = {k: torch.from_numpy(a) for k, a in arrays.items()}
            saves += [("torch.save to a file object", to_file(torch.save, t_sd, q)),
                      ("torch.save, tmp + fsync + rename", atomic(torch.save, t_sd, q))]
            loads += [("torch.load", lambda: torch.load(q)),
                      ("torch.load mmap=True", lambda: torch.load(q, mmap=True))]
        rows += timed(saves, args.repeat)
        rows += timed(loads, args.repeat)
        if torch is not None:
            # cross-check: each reads the other's file
            a = fw.load(q)
            b = torch.load(p)
            assert all(np.array_equal(a[k].numpy(), arrays[k]) for k in arrays)
            assert all(np.array_equal(b[k].numpy(), arrays[k]) for k in arrays)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    ref = dict(rows)
    pairs = {"framework.save to a file object": "torch.save to a file object",
             "framework.save to a path (atomic)": "torch.save, tmp + fsync + rename",
             "framework.load": "torch.load",
             "framework.load mmap=True": "torch.load mmap=True"}
    print(f"state dict: {len(arrays)} tensors, {nbytes / 2 ** 20:.0f} MiB "
          f"(median of {args.repeat})")
    print(f"{'':36s} {'seconds':>8s} {'GB/s':>7s} {'torch/ours':>11s}")
    for name, t in rows:
        other = ref.get(pairs.get(name))
        ratio = f"{other / t:9.2f}x" if other else ""
        print(f"{name:36s} {t:8.3f} {nbytes / t / 1e9:7.2f} {ratio:>11s}")

if __name__ == "__main__":
    main()
