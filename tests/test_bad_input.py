"""The bad-input suite: several hundred calls with bad or edge-case arguments (tables in
tests/badinput/), each run on cpu and on (simulated) cuda and judged against PyTorch's outcome:
the same exception class with its message fragment and the target left unchanged, or the same
value. Cases marked crash=True run in a subprocess, so a crash or a hang fails that case only.
Where torch is installed the tables themselves are checked against it."""
import pytest

import framework as fw
import badinput as B
from badinput.isolate import run_isolated

try:
    import torch
except ImportError:   # the tables are the spec without it
    torch = None

CUDA = fw.cuda.is_available()
CASES = B.all_cases()
PARAMS = [pytest.param(c, dev, id=f"{c.id}-{dev}") for c in CASES for dev in B.devices_for(c, CUDA)]


@pytest.fixture(scope="session")
def isolated():
    """Outcomes of every crash-prone case on every device, run in worker processes once."""
    jobs = [(c.id, dev) for c in CASES if c.crash for dev in B.devices_for(c, CUDA)]
    return run_isolated(jobs)


_TORCH_CACHE = {}


def torch_outcome(case):
    """Torch's outcome on cpu for a case that must succeed (its value is the reference)."""
    if torch is None or not case.oracle or case.expect is not B.OK:
        return None
    if case.id not in _TORCH_CACHE:
        _TORCH_CACHE[case.id] = B.run(case, torch, "cpu")
    return _TORCH_CACHE[case.id]


@pytest.mark.parametrize("case,dev", PARAMS)
def test_bad_input(case, dev, isolated):
    got = isolated[(case.id, dev)] if case.crash else B.run(case, fw, dev)
    status, detail = B.judge(case, got, torch_outcome(case))
    assert status in ("pass", "argtext"), f"[{status}] {detail}"


@pytest.mark.skipif(torch is None, reason="torch is not installed")
@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES if c.oracle])
def test_table_agrees_with_torch(case):
    why = B.table_disagreement(case, B.run(case, torch, "cpu"))
    assert why is None, why


def test_case_count():
    assert len(CASES) >= 400
