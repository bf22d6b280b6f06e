"""Timing shared by the benchmarks: medians of repeated samples, never a single run."""
import statistics
import time


def median_time(fn, repeat, min_time=0.2):
    """Median seconds per call over ``repeat`` samples, each long enough to time reliably."""
    fn()
    t0 = time.perf_counter()
    fn()
    one = max(time.perf_counter() - t0, 1e-7)
    inner = max(1, int(min_time / repeat / one))
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        samples.append((time.perf_counter() - t0) / inner)
    return statistics.median(samples)
