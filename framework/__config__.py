"""``framework.__config__``: how this build is configured, as text (PyTorch's
``torch.__config__``)."""
import os


def show():
    """A description of the build: its devices and kernel back ends."""
    from . import cuda
    return ("framework built with:\n"
            "  - CPU kernels: C++17 (pybind11), multithreaded\n"
            "  - GPU kernels: Triton"
            + (" (interpreter: TRITON_INTERPRET=1)" if os.environ.get("TRITON_INTERPRET")
               == "1" else "") + "\n"
            f"  - CUDA available: {cuda.is_available()}\n")


def parallel_info():
    """The CPU thread settings."""
    import framework as fw
    return ("framework/Parallel:\n"
            f"\tget_num_threads() : {fw.get_num_threads()}\n"
            f"\tget_num_interop_threads() : {fw.get_num_interop_threads()}\n"
            f"\tos.cpu_count() : {os.cpu_count()}\n")
