"""Test configuration: every test that takes `device` runs on cpu and on cuda (a real GPU,
or Triton's interpreter when TRITON_INTERPRET=1 and the cuda backend supports it)."""
import os

import numpy as np
import pytest

if os.environ.get("FW_COMPILE_CHECK"):  # before the framework's kernels are defined
    import compile_check
    compile_check.install()

import framework as fw  # noqa: E402

# float32 convolutions in IEEE precision: the tests compare them with float64 references
# at float32 tolerances (PyTorch's default, TF32, is for training; its own test suite
# turns it off the same way). Tests of the switch set it themselves.
fw.backends.cudnn.allow_tf32 = False

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


@pytest.fixture(scope="module", autouse=True)
def _torch_function_off():
    """Once a tensor subclass is used, ``__torch_function__`` dispatch wraps every op for the
    rest of the process (framework/overrides.py); a test file that turned it on turns it off
    after itself, so that the files after it in the same worker run at the normal cost."""
    was_active = fw.overrides._active
    yield
    if not was_active and fw.overrides._active:
        fw.overrides._deactivate()


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


_DONE_JUNIT = os.environ.get("FW_DONE_JUNIT")


def pytest_collection_modifyitems(config, items):
    """With FW_DONE_JUNIT=a.xml[:b.xml...], the tests those junit files report passed or
    skipped are left out: a GPU run cut short by its time limit goes on in the next call
    where the last stopped, and runs again what failed."""
    if not _DONE_JUNIT:
        return
    import xml.etree.ElementTree as ET
    done = set()
    for path in _DONE_JUNIT.split(":"):
        for case in ET.parse(path).getroot().iter("testcase"):
            if case.find("failure") is None and case.find("error") is None:
                done.add((case.get("classname"), case.get("name")))

    def junit_key(item):  # as pytest's junitxml names a case
        file, *names = item.nodeid.split("::")
        return ".".join([file[:-3].replace("/", ".")] + names[:-1]), names[-1]
    gone = [it for it in items if junit_key(it) in done]
    if gone:
        config.hook.pytest_deselected(items=gone)
        items[:] = [it for it in items if junit_key(it) not in done]
