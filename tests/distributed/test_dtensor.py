"""DTensor and tensor parallelism on 2 and 4 processes (``mpiexec`` runs dtensor_script.py):
placements, distribute_tensor/full_tensor with uneven shards, every redistribute pair
(values and gradients against the dense computation), ops with sharding propagation and
the gather fallback, and an MLP, a transformer block (with and without sequence
parallelism) and embeddings trained under ColwiseParallel/RowwiseParallel against one
process (float64)."""
import os
import re

import pytest

from tests.distributed.test_ddp import HERE, _interpreter_runs_matmul, mpirun

pytest.importorskip("mpi4py")
from tests.distributed.test_ddp import pytestmark  # noqa: E402,F401


@pytest.mark.parametrize("n,device,checks", [(2, "cpu", 84), (4, "cpu", 101),
                                             (2, "cuda", 55)])
def test_dtensor_and_tensor_parallel(n, device, checks):
    if device == "cuda" and not _interpreter_runs_matmul():
        pytest.skip("simulated cuda (TRITON_INTERPRET=1) needs Triton >= 3.9's interpreter "
                    "under NumPy 2")
    r = mpirun(n, os.path.join(HERE, "dtensor_script.py"), device)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-5000:]
    assert "FAIL" not in r.stdout, out[-5000:]
    done = re.findall(r"rank (\d+) DONE failures=(\d+)", r.stdout)
    assert sorted(int(d[0]) for d in done) == list(range(n)), out[-5000:]
    passes = re.findall(r"rank (\d+) PASS", r.stdout)
    for k in range(n):
        assert passes.count(str(k)) == checks, out[-5000:]
