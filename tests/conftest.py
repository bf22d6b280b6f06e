"""Test configuration: every test that takes `device` runs on cpu and on cuda (a real GPU,
or Triton's interpreter when TRITON_INTERPRET=1 and the cuda backend supports it)."""
import os

import numpy as np
import pytest

if os.environ.get("FW_COMPILE_CHECK"):  # before the framework's kernels are defined
    import compile_check
    compile_check.install()

import framework as fw  # noqa: E402

# Open MPI's mpiexec (the GPU machines' image has it) refuses to start as root unless told
# to; the tests' mpiexec runs inherit this. MPICH ignores it.
os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")


def _devices():
    devs = ["cpu"]
    if fw.cuda.is_available():
        devs.append("cuda")
    return devs


@pytest.fixture(params=_devices())
def device(request):
    return request.param


@pytest.fixture(autouse=True)
def _seed():
    np.random.seed(0)


_FAILURE_LOG = os.environ.get("FW_FAILURE_LOG")


def pytest_runtest_logreport(report):
    """With FW_FAILURE_LOG=path, each failure is appended to that file as it happens (on a
    time-limited GPU run the summary at the end may never come)."""
    if not _FAILURE_LOG or not report.failed or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    lines = report.longreprtext.strip().splitlines()
    with open(_FAILURE_LOG, "a") as f:
        f.write(f"FAILED {report.nodeid} ({report.when})\n")
        f.write("".join(f"    {line}\n" for line in lines[-12:]))
