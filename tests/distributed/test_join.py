"""``Join`` and DDP with uneven inputs on 2 processes (``mpiexec -n 2`` runs
join_script.py): parameters, last gradients and buffers against a float64 NumPy reference
of PyTorch's shadow all-reduce, with ``divide_by_initial_world_size`` True and False, unused
parameters, and ``throw_on_early_termination``."""
import os
import re

import pytest

from tests.distributed.test_ddp import mpirun

pytest.importorskip("mpi4py")
HERE = os.path.dirname(os.path.abspath(__file__))


def test_join_uneven_inputs():
    r = mpirun(2, os.path.join(HERE, "join_script.py"))
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-5000:]
    assert "FAIL" not in r.stdout, out[-5000:]
    for rank in (0, 1):
        assert f"rank {rank} DONE failures=[]" in r.stdout, out[-5000:]
    assert len(re.findall(r"rank \d PASS", r.stdout)) == 21, out[-5000:]
