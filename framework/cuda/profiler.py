"""Start and stop the CUDA profiler's collection (PyTorch's ``torch.cuda.profiler``), for
Nsight Systems / Nsight Compute runs with ``--capture-range=cudaProfilerApi``. Through the
driver API (``cuProfilerStart``/``cuProfilerStop``); nothing to collect on the simulated
device, where both do nothing."""
import contextlib

__all__ = ["start", "stop", "profile"]

DEFAULT_FLAGS = ["gpustarttimestamp", "gpuendtimestamp", "gridsize3d", "threadblocksize",
                 "streamid", "enableonstart 0", "conckerneltrace"]


def _call(name):
    from . import _lazy_init, is_simulated
    from . import driver
    _lazy_init()
    if is_simulated():
        return
    driver.get().call(name)


def start():
    """Starts cuda profiler data collection (raises ``CudaError`` if it cannot)."""
    _call("cuProfilerStart")


def stop():
    """Stops cuda profiler data collection (raises ``CudaError`` if it cannot)."""
    _call("cuProfilerStop")


@contextlib.contextmanager
def profile():
    """Enables profile collection by the active CUDA profiling tool inside the block."""
    try:
        start()
        yield
    finally:
        stop()
