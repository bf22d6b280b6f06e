"""TunableOp's switches (PyTorch's ``torch.cuda.tunable``), flags only.

PyTorch's TunableOp picks among GEMM backends (cuBLAS/hipBLASLt) per shape and can store
the choices in a CSV file. The framework's GEMMs are Triton kernels autotuned per shape and
cached for the process, whatever these flags say; the flags are kept (with PyTorch's
``PYTORCH_TUNABLEOP_*`` environment defaults) so that scripts setting them run, and
``get_results`` is empty: there are no TunableOp results to report or write."""
import os

__all__ = ["enable", "is_enabled", "tuning_enable", "tuning_is_enabled",
           "record_untuned_enable", "record_untuned_is_enabled", "set_max_tuning_duration",
           "get_max_tuning_duration", "set_max_tuning_iterations",
           "get_max_tuning_iterations", "set_filename", "get_filename", "get_results",
           "get_validators", "read_file", "tune_gemm_in_file", "mgpu_tune_gemm_in_file",
           "set_rotating_buffer_size", "get_rotating_buffer_size",
           "set_numerical_check_tolerances"]


def _env(name, default):
    return os.environ.get(f"PYTORCH_TUNABLEOP_{name}", default)


_state = {
    "enabled": _env("ENABLED", "0") == "1",
    "tuning": _env("TUNING", "1") == "1",
    "record_untuned": _env("RECORD_UNTUNED", "0") == "1",
    "max_duration": int(_env("MAX_TUNING_DURATION_MS", "30")),
    "max_iterations": int(_env("MAX_TUNING_ITERATIONS", "100")),
    "filename": _env("FILENAME", "tunableop_results.csv"),
    "rotating_buffer": int(_env("ROTATING_BUFFER_SIZE", "-1")),
    "numerical_check": (False, 1e-05, 1e-05),
}


def enable(val=True):
    """This is the big on/off switch for all TunableOp implementations."""
    _state["enabled"] = bool(val)


def is_enabled():
    """Returns whether the TunableOp feature is enabled."""
    return _state["enabled"]


def tuning_enable(val=True):
    """Enable tuning of TunableOp implementations (when off, only stored results are
    used)."""
    _state["tuning"] = bool(val)


def tuning_is_enabled():
    """Returns whether TunableOp implementations can be tuned."""
    return _state["tuning"]


def record_untuned_enable(val=True):
    """Enable recording untuned of TunableOp perations for offline tuning."""
    _state["record_untuned"] = bool(val)


def record_untuned_is_enabled():
    """Returns whether TunableOp operations are recorded for offline tuning."""
    return _state["record_untuned"]


def set_max_tuning_duration(duration):
    """Set max time in milliseconds to spend tuning a given solution."""
    _state["max_duration"] = int(duration)


def get_max_tuning_duration():
    """Get max time to spend tuning a given solution."""
    return _state["max_duration"]


def set_max_tuning_iterations(iterations):
    """Set max number of iterations to spend tuning a given solution."""
    _state["max_iterations"] = int(iterations)


def get_max_tuning_iterations():
    """Get max iterations to spend tuning a given solution."""
    return _state["max_iterations"]


def set_filename(filename, insert_device_ordinal=False):
    """Set the filename to use for input/output of tuning results (``%d`` is replaced by
    the device ordinal when ``insert_device_ordinal``)."""
    if insert_device_ordinal and "%d" not in filename:
        root, ext = os.path.splitext(filename)
        filename = f"{root}%d{ext}"
    _state["filename"] = filename


def get_filename():
    """Get the results filename."""
    name = _state["filename"]
    if "%d" in name:
        from . import current_device
        name = name.replace("%d", str(current_device()))
    return name


def get_results():
    """Return all TunableOp results (none: the framework's GEMMs are not TunableOps)."""
    return ()


def get_validators():
    """Return the TunableOp validators."""
    from .. import __version__
    return (("PT_VERSION", str(__version__)),)


def read_file(filename=None):
    """Read results from a TunableOp CSV file; returns whether it could be read (there is
    nothing to load the results into: it is only checked that the file exists)."""
    return os.path.isfile(get_filename() if filename is None else filename)


def tune_gemm_in_file(filename):
    """Tune GEMMs recorded in an untuned file (nothing to tune: the framework's GEMMs
    tune themselves on first use)."""
    if not is_enabled():
        raise AssertionError("TunableOp must be enabled")
    if not tuning_is_enabled():
        raise AssertionError("Tuning must be enabled")


def mgpu_tune_gemm_in_file(filename_pattern, num_gpus):
    """Process one or more files and distribute work over one or more GPUs."""
    from . import device_count
    if num_gpus > device_count():
        raise AssertionError(f"num_gpus ({num_gpus}) is greater than the device count "
                             f"({device_count()})")
    tune_gemm_in_file(filename_pattern)


def set_rotating_buffer_size(buffer_size):
    """Set rotating buffer size to this value in MB (< 0: the L2 cache size, 0: off)."""
    _state["rotating_buffer"] = int(buffer_size)


def get_rotating_buffer_size():
    """Get the rotating buffer size in MB."""
    return _state["rotating_buffer"]


def set_numerical_check_tolerances(enable, atol=1e-05, rtol=1e-05):
    """Set the atol and rtol values of the numerical check."""
    _state["numerical_check"] = (bool(enable), float(atol), float(rtol))
