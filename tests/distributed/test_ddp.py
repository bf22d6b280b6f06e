"""DistributedDataParallel on 2 processes (``mpiexec -n 2`` runs ddp_script.py): each rank
trains on half the batch and must end equal to one process on the whole batch; with
``no_sync``, unused parameters, buffers, state dicts, DistributedSampler; and the example."""
import os
import re
import shutil
import subprocess
import sys

import pytest
from tests.helpers import child_env

pytest.importorskip("mpi4py")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MPIEXEC = shutil.which("mpiexec", path=os.path.dirname(sys.executable)) or \
    shutil.which("mpiexec")
pytestmark = pytest.mark.skipif(MPIEXEC is None, reason="no mpiexec (pip install mpich)")


def mpirun(n, *args, env=None):
    cmd = [MPIEXEC, "-n", str(n), sys.executable, *args]
    e = child_env(ROOT, **(env or {}))
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=e, cwd=ROOT)


def _interpreter_runs_matmul():
    """Triton's interpreter before 3.9 (3.6 on the GPU machines) turns a tensor loop bound
    into an int with int() of a 1-element array, which NumPy 2 refuses: the simulated cuda
    matmul cannot run there (the compiled kernels do)."""
    import numpy as np
    import triton
    old = tuple(int(p) for p in triton.__version__.split(".")[:2]) < (3, 9)
    return not (old and int(np.__version__.split(".")[0]) >= 2)


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_ddp_matches_one_process(device):
    if device == "cuda" and not _interpreter_runs_matmul():
        pytest.skip("simulated cuda (TRITON_INTERPRET=1) needs Triton >= 3.9's interpreter "
                    "under NumPy 2")
    r = mpirun(2, os.path.join(HERE, "ddp_script.py"), device,
               env={"TRITON_INTERPRET": "1"})
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-5000:]
    assert "FAIL" not in r.stdout, out[-5000:]
    passes = re.findall(r"rank (\d) PASS", r.stdout)
    assert sorted(set(passes)) == ["0", "1"], out[-5000:]
    if device == "cpu":
        assert len(passes) >= 2 * 11, out[-5000:]


def test_ddp_example_trains():
    r = mpirun(2, os.path.join(ROOT, "examples", "ddp_train.py"), "--steps", "30")
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-5000:]
    m = re.search(r"first loss ([\d.]+) last loss ([\d.]+) replicas equal: True", r.stdout)
    assert m, out[-5000:]
    assert float(m.group(2)) < 0.5 * float(m.group(1)), m.group(0)
