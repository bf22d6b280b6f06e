"""fully_shard (FSDP2) and FullyShardedDataParallel on 2 and 4 processes (``mpiexec``
runs fsdp_script.py): each rank trains on its part of the batch and must end equal to one
process on the whole batch; plus gradient accumulation without sync, mixed precision,
memory (only shards between steps), state dicts and gradient clipping."""
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


def mpirun(n, *args):
    cmd = [MPIEXEC, "-n", str(n), sys.executable, *args]
    e = child_env(ROOT, TRITON_INTERPRET="1")
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=e, cwd=ROOT)


def _interpreter_runs_matmul():
    # as in test_ddp: Triton's interpreter before 3.9 cannot run the matmul under NumPy 2
    import numpy as np
    import triton
    old = tuple(int(p) for p in triton.__version__.split(".")[:2]) < (3, 9)
    return not (old and int(np.__version__.split(".")[0]) >= 2)


@pytest.mark.parametrize("n,device,checks", [(2, "cpu", 26), (4, "cpu", 26),
                                             (2, "cuda", 8)])
def test_fsdp_matches_one_process(n, device, checks):
    if device == "cuda" and not _interpreter_runs_matmul():
        pytest.skip("simulated cuda (TRITON_INTERPRET=1) needs Triton >= 3.9's interpreter "
                    "under NumPy 2")
    r = mpirun(n, os.path.join(HERE, "fsdp_script.py"), device)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-5000:]
    assert "FAIL" not in r.stdout, out[-5000:]
    done = re.findall(r"rank (\d+) DONE failures=(\d+)", r.stdout)
    assert sorted(int(d[0]) for d in done) == list(range(n)), out[-5000:]
    passes = re.findall(r"rank (\d+) PASS", r.stdout)
    for k in range(n):
        assert passes.count(str(k)) == checks, out[-5000:]
