"""DeviceMesh on 4 processes (``mpiexec -n 4`` runs device_mesh_script.py): a 2x2 mesh's
groups, sub-meshes and coordinates against the mesh tensor, fully_shard over its "dp"
dimension, send_object_list/recv_object_list and the small process-group helpers."""
import os
import re

import pytest

from tests.distributed.test_ddp import HERE, _interpreter_runs_matmul, mpirun

pytest.importorskip("mpi4py")
from tests.distributed.test_ddp import pytestmark  # noqa: E402,F401


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_device_mesh_2x2(device):
    if device == "cuda" and not _interpreter_runs_matmul():
        pytest.skip("simulated cuda (TRITON_INTERPRET=1) needs Triton >= 3.9's interpreter "
                    "under NumPy 2")
    r = mpirun(4, os.path.join(HERE, "device_mesh_script.py"), device)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-5000:]
    assert "FAIL" not in r.stdout, out[-5000:]
    done = re.findall(r"rank (\d+) DONE failures=(\d+)", r.stdout)
    assert sorted(int(d[0]) for d in done) == [0, 1, 2, 3], out[-5000:]
    passes = re.findall(r"rank (\d+) PASS", r.stdout)
    # odd ranks also check what they received
    assert [passes.count(str(k)) for k in range(4)] == [19, 20, 19, 20], out[-5000:]
