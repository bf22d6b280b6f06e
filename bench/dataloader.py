"""DataLoader throughput: batches per second over a dataset of 64x64x3 uint8 images turned
into float32 CHW tensors in ``__getitem__`` (2048 items, batch 64: 32 batches an epoch),
with 0 and 2 workers, framework beside torch.utils.data in the same run. Workers are
persistent and warmed up by one epoch, so start-up is not timed; the median of a few epochs
is reported. The two libraries' epochs alternate.

    python bench/dataloader.py [--items N] [--batch N] [--epochs N] [--workers 0,2]
"""
import argparse
import statistics
import time

import numpy as np

import framework as fw
from framework.utils import data as fd


def make_dataset(T, base, images):
    class Images(base):
        def __len__(self):
            return len(images)

        def __getitem__(self, i):
            img = T.from_numpy(images[i]).permute(2, 0, 1).float() / 255
            return img, int(i % 10)
    return Images()


def make_loader(T, data_mod, images, batch, workers):
    ds = make_dataset(T, data_mod.Dataset, images)
    kw = dict(num_workers=workers)
    if workers:
        kw.update(persistent_workers=True, multiprocessing_context="fork", timeout=60)
    return data_mod.DataLoader(ds, batch_size=batch, shuffle=True, **kw)


def epoch_rate(loader):
    """Batches per second of one epoch (and the last batch, to check its layout)."""
    n = 0
    t0 = time.perf_counter()
    for x, y in loader:
        n += 1
    return n / (time.perf_counter() - t0), x


def bench(libs, images, batch, workers, epochs):
    """Median batches/s of each library's loader; the libraries' epochs alternate so that
    a change in the machine's load during the run hits both alike."""
    loaders = {name: make_loader(T, D, images, batch, workers) for name, T, D in libs}
    for loader in loaders.values():
        epoch_rate(loader)   # warm-up epoch (starts the workers)
    rates = {name: [] for name in loaders}
    for _ in range(epochs):
        for name, loader in loaders.items():
            r, x = epoch_rate(loader)
            rates[name].append(r)
            assert tuple(x.shape[1:]) == (3, 64, 64) and str(x.dtype).endswith("float32")
    del loaders
    return {name: statistics.median(r) for name, r in rates.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=2048)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--workers", default="0,2")
    args = ap.parse_args()
    images = np.random.default_rng(0).integers(0, 256, (args.items, 64, 64, 3), dtype=np.uint8)
    workers = [int(w) for w in args.workers.split(",")]

    import torch
    import torch.utils.data as td
    torch.set_num_threads(fw.get_num_threads())
    libs = [("framework", fw, fd), ("torch", torch, td)]
    res = {w: bench(libs, images, args.batch, w, args.epochs) for w in workers}

    print(f"DataLoader: {args.items} images 64x64x3 uint8 -> float32, batch {args.batch}, "
          "shuffle, batches/s (median of epochs)")
    print(f"{'workers':>8} {'framework':>10} {'torch':>10} {'ratio':>7}")
    for w in workers:
        a, b = res[w]["framework"], res[w]["torch"]
        print(f"{w:>8} {a:>10.1f} {b:>10.1f} {a / b:>7.2f}")


if __name__ == "__main__":
    main()
