"""Small pieces of torch.cuda's API around the runtime: ``check_error``/``CudaError``,
``cudaStatus``, ``AcceleratorError``, ``get_allocator_backend``, ``get_gencode_flags``,
``current_blas_handle`` and the legacy typed storages (``framework.cuda.FloatStorage``)."""
from .._typed_storage import legacy_storages

__all__ = ["check_error", "CudaError", "cudaStatus", "AcceleratorError",
           "get_allocator_backend", "get_gencode_flags", "current_blas_handle"]


class AcceleratorError(RuntimeError):
    """An error reported by the accelerator (a failed kernel launch, an illegal access)."""


class cudaStatus:
    SUCCESS = 0
    ERROR_NOT_READY = 34


# cudaGetErrorString's text for the runtime error codes a user is likely to pass
_ERROR_STRINGS = {
    1: "invalid argument", 2: "out of memory", 3: "initialization error",
    34: "device not ready", 35: "CUDA driver version is insufficient for CUDA runtime version",
    98: "invalid device function", 100: "no CUDA-capable device is detected",
    101: "invalid device ordinal", 200: "device kernel image is invalid",
    209: "no kernel image is available for execution on the device",
    400: "invalid resource handle", 700: "an illegal memory access was encountered",
    701: "too many resources requested for launch", 702: "the launch timed out and was "
    "terminated", 710: "device-side assert triggered", 719: "unspecified launch failure",
}


class CudaError(RuntimeError):
    """A CUDA runtime API error: its text and ``(code)``."""

    def __init__(self, code):
        msg = _ERROR_STRINGS.get(int(code), "unrecognized error code")
        super().__init__(f"{msg} ({code})")


def check_error(res):
    r"""Raise an error if the result of a CUDA runtime API call is not success."""
    if res != cudaStatus.SUCCESS:
        raise CudaError(res)


def get_allocator_backend():
    r"""The active allocator backend: ``native`` (the framework's caching allocator)."""
    return "native"


def get_gencode_flags():
    r"""NVCC gencode flags of the built kernels: none (Triton compiles kernels at run time
    for the device at hand), so the flags of :func:`get_arch_list`."""
    from . import get_arch_list
    arches = [a.split("_") for a in get_arch_list()]
    return " ".join(f"-gencode compute=compute_{arch},code={kind}_{arch}"
                    for kind, arch in arches)


def current_blas_handle():
    r"""cuBLAS handle of the current stream: there is none (GEMMs are Triton kernels)."""
    raise RuntimeError("current_blas_handle: the framework does not use cuBLAS; its GEMMs are "
                       "Triton kernels")


LEGACY_STORAGES = legacy_storages("cuda", "framework.cuda")
