"""``framework.distributed.nn``: the collectives autograd differentiates through, on 2
processes (``mpiexec -n 2`` runs functional_collectives_script.py), values and gradients
against a float64 one-process reference."""
import os
import re

import pytest

from tests.distributed.test_ddp import HERE, mpirun

pytest.importorskip("mpi4py")
from tests.distributed.test_ddp import pytestmark  # noqa: E402,F401

CHECKS = 19


def test_functional_collectives_match_one_process():
    r = mpirun(2, os.path.join(HERE, "functional_collectives_script.py"), "cpu")
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-5000:]
    assert "FAIL" not in r.stdout, out[-5000:]
    done = re.findall(r"rank (\d+) DONE failures=(\d+)", r.stdout)
    assert sorted(int(d[0]) for d in done) == [0, 1], out[-5000:]
    passes = re.findall(r"rank (\d+) PASS", r.stdout)
    assert passes.count("0") == CHECKS and passes.count("1") == CHECKS - 1, out[-5000:]


def test_functional_collectives_api():
    import inspect
    import framework.distributed.nn as dnn
    torch = pytest.importorskip("torch")
    import torch.distributed.nn.functional as tf
    for name in dnn.__all__ if hasattr(dnn, "__all__") else dnn.functional.__all__:
        ours = inspect.signature(getattr(dnn, name))
        theirs = inspect.signature(getattr(tf, name))
        assert list(ours.parameters) == list(theirs.parameters), name
