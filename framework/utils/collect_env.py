"""Environment report for bug reports (PyTorch's ``torch.utils.collect_env``):
``python -m framework.utils.collect_env`` prints the framework's version, its devices
(real or simulated cuda), the Triton, NumPy and MPI/NCCL it runs on, and the system."""
import locale
import os
import platform
import subprocess
import sys
from collections import namedtuple

__all__ = ["get_env_info", "get_pretty_env_info", "main", "run", "SystemEnv"]

SystemEnv = namedtuple("SystemEnv", [
    "framework_version", "is_debug_build", "triton_version", "numpy_version",
    "python_version", "python_platform", "os", "libc_version", "cpu_info",
    "is_cuda_available", "cuda_simulated", "triton_interpret", "gpu_models",
    "nvidia_driver_version", "nccl_available", "nccl_version", "mpi4py_version",
    "num_threads", "pip_packages",
])


def run(command):
    """Returns (return code, stdout, stderr) of ``command`` (a shell string)."""
    try:
        p = subprocess.run(command, shell=True, capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as e:
        return 1, "", str(e)
    enc = "oem" if sys.platform == "win32" else locale.getpreferredencoding()
    return p.returncode, p.stdout.decode(enc, "replace").strip(), \
        p.stderr.decode(enc, "replace").strip()


def _first_line(command):
    rc, out, _ = run(command)
    return out.splitlines()[0] if rc == 0 and out else None


def _version(module):
    try:
        return __import__(module).__version__
    except Exception:
        return None


def _cpu_info():
    if sys.platform.startswith("linux"):
        rc, out, _ = run("lscpu")
        if rc == 0 and out:
            return out
    return platform.processor() or None


def _os():
    if sys.platform.startswith("linux"):
        try:
            with open("/etc/os-release") as f:
                info = dict(line.rstrip().split("=", 1) for line in f if "=" in line)
            desc = info.get("PRETTY_NAME", "").strip('"')
        except OSError:
            desc = platform.platform()
        return f"{desc} ({platform.machine()})"
    if sys.platform == "darwin":
        return f"macOS {platform.mac_ver()[0]} ({platform.machine()})"
    return platform.platform()


def _pip_packages():
    from importlib import metadata
    keep = ("numpy", "triton", "mpi4py", "mpich", "nvidia-nccl", "safetensors", "pybind11")
    names = sorted(f"{d.metadata['Name']}=={d.version}" for d in metadata.distributions()
                   if d.metadata["Name"] and d.metadata["Name"].lower().startswith(keep))
    return "\n".join(names) or None


def get_env_info():
    """The environment as a ``SystemEnv`` namedtuple."""
    import framework
    from framework import cuda
    gpus = None
    available = cuda.is_available()
    if available:
        gpus = "\n".join(f"GPU {i}: {cuda.get_device_name(i)}"
                         for i in range(cuda.device_count()))
    nccl_ok, nccl_version = False, None
    try:
        from framework.distributed import is_nccl_available
        nccl_ok = bool(is_nccl_available())
        if nccl_ok:
            from framework.cuda import nccl
            nccl_version = ".".join(map(str, nccl.version()))
    except Exception:
        pass
    return SystemEnv(
        framework_version=str(framework.__version__),
        is_debug_build=str(framework.version.debug),
        triton_version=_version("triton"),
        numpy_version=_version("numpy"),
        python_version=f"{sys.version.replace(chr(10), ' ')} "
                       f"({sys.maxsize.bit_length() + 1}-bit runtime)",
        python_platform=platform.platform(),
        os=_os(),
        libc_version="-".join(platform.libc_ver()) or None,
        cpu_info=_cpu_info(),
        is_cuda_available=str(available),
        cuda_simulated=str(available and cuda.is_simulated()),
        triton_interpret=os.environ.get("TRITON_INTERPRET", "0"),
        gpu_models=gpus,
        nvidia_driver_version=_first_line(
            "nvidia-smi --query-gpu=driver_version --format=csv,noheader"),
        nccl_available=str(nccl_ok),
        nccl_version=nccl_version,
        mpi4py_version=_version("mpi4py"),
        num_threads=str(framework.get_num_threads()),
        pip_packages=_pip_packages(),
    )


_TEMPLATE = """\
Framework version: {framework_version}
Is debug build: {is_debug_build}
Triton version: {triton_version}
NumPy version: {numpy_version}

OS: {os}
Libc version: {libc_version}

Python version: {python_version}
Python platform: {python_platform}
Number of CPU threads used: {num_threads}

Is CUDA available: {is_cuda_available}
CUDA simulated (TRITON_INTERPRET={triton_interpret}): {cuda_simulated}
GPU models and configuration: {gpu_models}
Nvidia driver version: {nvidia_driver_version}
NCCL available: {nccl_available}
NCCL version: {nccl_version}
mpi4py version: {mpi4py_version}

CPU:
{cpu_info}

Versions of relevant libraries:
{pip_packages}
"""


def pretty_str(envinfo):
    """The report text of a ``SystemEnv`` (``Could not collect`` for what is missing)."""
    fields = {k: "Could not collect" if v is None else v for k, v in envinfo._asdict().items()}
    return _TEMPLATE.format(**fields)


def get_pretty_env_info():
    """The environment report as text."""
    return pretty_str(get_env_info())


def main():
    print("Collecting environment information...")
    print(get_pretty_env_info())


if __name__ == "__main__":
    main()
