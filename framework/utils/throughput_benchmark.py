"""``ThroughputBenchmark`` (PyTorch's ``torch.utils.throughput_benchmark``): runs a module
on stored inputs from several calling threads, as an inference server would, and reports
the average latency and the throughput.

PyTorch's runs in C++; this one runs the calls from Python threads (the GIL is released
inside the native and Triton kernels, not in the Python between them)."""
import random
import threading
import time

__all__ = ["ThroughputBenchmark", "ExecutionStats", "format_time"]


def format_time(time_us=None, time_ms=None, time_s=None):
    """A time as text in the unit that reads best (``"1.234ms"``, ``"12.345us"``)."""
    if sum(t is not None for t in (time_us, time_ms, time_s)) != 1:
        raise AssertionError("Expected exactly one of time_us, time_ms, time_s")
    US_IN_SECOND, US_IN_MS = 1e6, 1e3
    if time_us is None:
        time_us = time_ms * US_IN_MS if time_ms is not None else time_s * US_IN_SECOND
    if time_us >= US_IN_SECOND:
        return f"{time_us / US_IN_SECOND:.3f}s"
    if time_us >= US_IN_MS:
        return f"{time_us / US_IN_MS:.3f}ms"
    return f"{time_us:.3f}us"


class _Stats:
    __slots__ = ("latency_avg_ms", "num_iters")

    def __init__(self, latency_avg_ms, num_iters):
        self.latency_avg_ms, self.num_iters = latency_avg_ms, num_iters


class _Config:
    def __init__(self, num_calling_threads, num_warmup_iters, num_iters,
                 profiler_output_path):
        self.num_calling_threads = num_calling_threads
        self.num_warmup_iters = num_warmup_iters
        self.num_iters = num_iters
        self.profiler_output_path = profiler_output_path


class ExecutionStats:
    """What ``ThroughputBenchmark.benchmark`` measured."""

    def __init__(self, c_stats, benchmark_config):
        self._c_stats = c_stats
        self.benchmark_config = benchmark_config

    @property
    def latency_avg_ms(self):
        return self._c_stats.latency_avg_ms

    @property
    def num_iters(self):
        return self._c_stats.num_iters

    @property
    def iters_per_second(self):
        """Return total number of iterations per second across all calling threads."""
        return self.num_iters / self.total_time_seconds

    @property
    def total_time_seconds(self):
        return self.num_iters * (self.latency_avg_ms / 1000.0) \
            / self.benchmark_config.num_calling_threads

    def __str__(self):
        return "\n".join([
            "Average latency per example: " + format_time(time_ms=self.latency_avg_ms),
            f"Total number of iterations: {self.num_iters}",
            "Total number of iterations per second (across all threads): "
            f"{self.iters_per_second:.2f}",
            "Total time: " + format_time(time_s=self.total_time_seconds),
        ])


class ThroughputBenchmark:
    """Runs ``module`` (any callable) under an inference-server-like load: ``add_input``
    stores inputs, ``benchmark`` calls the module on random stored inputs from
    ``num_calling_threads`` threads, ``run_once`` calls it once."""

    def __init__(self, module):
        self._module = module
        self._inputs = []

    def run_once(self, *args, **kwargs):
        """Runs the module once on the given inputs and returns its output."""
        from ..autograd.grad_mode import no_grad
        with no_grad():
            return self._module(*args, **kwargs)

    def add_input(self, *args, **kwargs):
        """Stores one input of the module (positional and keyword arguments), which the
        benchmark's threads pick from at random."""
        self._inputs.append((args, kwargs))

    def benchmark(self, num_calling_threads=1, num_warmup_iters=10, num_iters=100,
                  profiler_output_path=""):
        """Runs the benchmark: ``num_warmup_iters`` calls per thread, then ``num_iters``
        calls shared by all the threads (a few more may run). With
        ``profiler_output_path``, the measured part is profiled and its Chrome trace
        written there. Returns an :class:`ExecutionStats`."""
        if not self._inputs:
            raise RuntimeError("ThroughputBenchmark: add inputs with add_input() before "
                               "calling benchmark()")
        from ..autograd.grad_mode import no_grad
        config = _Config(num_calling_threads, num_warmup_iters, num_iters,
                         profiler_output_path)
        lock = threading.Lock()
        state = {"left": num_iters, "done": 0, "latency": 0.0}
        start = threading.Barrier(num_calling_threads + 1)
        errors = []

        def call(rng):
            args, kwargs = self._inputs[rng.randrange(len(self._inputs))]
            self._module(*args, **kwargs)

        def worker(seed):
            rng = random.Random(seed)
            try:
                with no_grad():
                    for _ in range(num_warmup_iters):
                        call(rng)
                    start.wait()
                    while True:
                        with lock:
                            if state["left"] <= 0:
                                return
                            state["left"] -= 1
                        t0 = time.perf_counter()
                        call(rng)
                        dt = time.perf_counter() - t0
                        with lock:
                            state["done"] += 1
                            state["latency"] += dt
            except BaseException as e:     # reported by the calling thread
                errors.append(e)
                start.abort()

        threads = [threading.Thread(target=worker, args=(i,), daemon=True)
                   for i in range(num_calling_threads)]
        for t in threads:
            t.start()
        prof = None
        try:
            start.wait()
            if profiler_output_path:
                from ..profiler import profile
                prof = profile()
                prof.__enter__()
        except threading.BrokenBarrierError:
            pass
        for t in threads:
            t.join()
        if prof is not None:
            prof.__exit__(None, None, None)
            prof.export_chrome_trace(profiler_output_path)
        if errors:
            raise errors[0]
        done = state["done"]
        latency_ms = state["latency"] * 1000.0 / done if done else 0.0
        return ExecutionStats(_Stats(latency_ms, done), config)
