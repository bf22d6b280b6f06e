"""fully_shard (FSDP2) and FullyShardedDataParallel on 2 and 4 processes (``mpiexec``
runs fsdp_script.py): each rank trains on its part of the batch and must end equal to one
process on the whole batch; plus gradient accumulation without sync, mixed precision,
memory (only shards between steps), state dicts and gradient clipping."""
import os
import re

import pytest

from tests.distributed.test_ddp import HERE, _interpreter_runs_matmul, mpirun

pytest.importorskip("mpi4py")
from tests.distributed.test_ddp import pytestmark  # noqa: E402,F401


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
