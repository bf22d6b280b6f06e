"""What torch reports about its build and process set-up: ``has_lapack`` and friends,
``get_device_module``, ``get_file_path``, ``compiled_with_cxx11_abi``."""
import os

from ._ops.memory_format import contiguous_format

__all__ = ["has_lapack", "has_mkl", "has_openmp", "has_spectral", "legacy_contiguous_format",
           "get_device_module", "get_file_path", "compiled_with_cxx11_abi",
           "prepare_multiprocessing_environment"]

# LAPACK comes through NumPy/OpenBLAS and FFTs are built in; there is no MKL, and the CPU
# library threads with std::thread rather than OpenMP.
has_lapack = True
has_mkl = False
has_openmp = False
has_spectral = True
legacy_contiguous_format = contiguous_format

_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def get_device_module(device=None):
    """The module of ``device`` (``framework.cuda`` for "cuda"); with no device, that of the
    current accelerator, or ``framework.cpu`` when there is none."""
    import framework
    if isinstance(device, framework.device):
        name = device.type
    elif isinstance(device, str):
        name = framework.device(device).type
    elif device is None:
        acc = framework.accelerator.current_accelerator()
        name = "cpu" if acc is None else acc.type
    else:
        raise RuntimeError(f"Invalid value of device '{device}', expect torch.device, str, "
                           "or None")
    module = getattr(framework, name, None)
    if module is None:
        raise RuntimeError(f"Device '{name}' does not have a corresponding module registered "
                           f"as 'torch.{name}'.")
    return module


def get_file_path(*path_components):
    """``path_components`` joined under the directory that holds the package."""
    return os.path.join(_PARENT, *path_components)


def compiled_with_cxx11_abi():
    r"""Returns whether the native library was built with _GLIBCXX_USE_CXX11_ABI=1"""
    return True


def prepare_multiprocessing_environment(path):
    """Hook for preparing a worker environment; nothing to do here."""
