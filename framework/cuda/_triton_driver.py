"""What Triton's ``driver.active`` answers when it runs on framework tensors.

Triton asks its active driver for the current device and stream, and its tutorials and
``triton.testing`` ask it for "the torch device" (``get_active_torch_device``) and "the
torch.cuda module" (``get_device_interface``). Triton's own NVIDIA driver imports PyTorch for
those; here they are the framework's, so a script written for PyTorch runs unchanged:

* simulated CUDA (``TRITON_INTERPRET=1``, no GPU): Triton finds no active driver at all and
  ``triton.runtime.driver.active`` would raise; ``install_sim`` makes ``SimTritonDriver``
  the active one (unless someone, e.g. a test harness, already set one).
* a real GPU: ``patch_gpu`` points the same few methods of Triton's driver at the framework.
"""
from . import _runtime


def _framework():
    import framework
    return framework


def _active_device():
    return _framework().device("cuda", _runtime.current_index())


def _bench_cache(nbytes=4096):
    # No L2 cache to flush in the simulator, and a 256 MB fill per timed run would cost
    # seconds in the interpreter: a small buffer keeps do_bench's calls the same.
    fw = _framework()
    return fw.empty(nbytes // 4, dtype=fw.int32, device="cuda")


def _bench_once(fn, quantiles=None, **kwargs):
    """What ``triton.autotune`` times each config with in the simulator: one run after a
    warm-up one (do_bench would repeat an interpreted kernel for ~100 ms of timings that
    say nothing about a GPU)."""
    fw = _framework()
    fn()
    start, end = fw.cuda.Event(enable_timing=True), fw.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    fw.cuda.synchronize()
    ms = start.elapsed_time(end)
    return [ms] * len(quantiles) if quantiles else ms


class _SimUtils:
    """``driver.active.utils``: the tutorials read the device's limits from it."""

    @staticmethod
    def get_device_properties(index):
        p = _framework().cuda.get_device_properties(index)
        # the keys and units of Triton's CUDA utils (clocks in kHz, bus width in bits)
        return {"max_shared_mem": p.shared_memory_per_block_optin,
                "max_num_regs": p.regs_per_multiprocessor,
                "multiprocessor_count": p.multi_processor_count, "warpSize": p.warp_size,
                "sm_clock_rate": 1980000, "mem_clock_rate": 2619000, "mem_bus_width": 5120}


class SimTritonDriver:
    """Triton's driver for the simulated device: the current device and stream are the
    framework's; kernels run in Triton's interpreter, which needs nothing else."""

    utils = _SimUtils()

    @staticmethod
    def is_active():
        return True

    def get_current_device(self):
        return _runtime.current_index()

    def set_current_device(self, index):
        _runtime.set_index(index)

    def get_current_stream(self, index=None):
        return _runtime.stream_handle(_runtime.current_index() if index is None else index)

    def get_current_target(self):
        from triton.backends.compiler import GPUTarget
        major, minor = _framework().cuda.get_device_capability()
        return GPUTarget("cuda", major * 10 + minor, 32)

    def get_active_torch_device(self):
        return _active_device()

    def get_device_interface(self):
        return _framework().cuda

    def get_benchmarker(self):
        return _bench_once

    def get_empty_cache_for_benchmark(self):
        return _bench_cache()

    def clear_cache(self, cache):
        cache.zero_()


def install_sim():
    """Makes ``SimTritonDriver`` Triton's active driver, once, if none is set yet."""
    try:
        from triton.runtime.driver import driver
    except ImportError:  # no Triton: nothing asks
        return
    if driver._active is None:
        driver.set_active(SimTritonDriver())


def patch_gpu(d):
    """Points Triton's GPU driver ``d`` at the framework's device and cuda module."""
    d.get_active_torch_device = _active_device
    d.get_device_interface = lambda: _framework().cuda
    # do_bench flushes L2 by zeroing 256 MB between timed runs, as Triton's driver does
    d.get_empty_cache_for_benchmark = lambda: _bench_cache(256 * 1024 * 1024)
