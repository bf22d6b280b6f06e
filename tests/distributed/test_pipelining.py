"""Pipeline parallelism on 2 and 4 processes (``mpiexec -n N`` runs pipelining_script.py):
a 4-layer MLP split into one stage per rank, trained by GPipe and 1F1B on 4 microbatches
(and, on 2 ranks, 4 stages by LoopedBFS and Interleaved1F1B), must equal one process on the
whole batch (losses, outputs, parameters in float64); plus a stage with a float and an
int64 output, forward-only steps, scale_grads, the microbatch helpers and the errors. The
multi-stage orders are checked against PyTorch's own."""
import os
import re

import pytest
from tests.distributed.test_ddp import MPIEXEC, _interpreter_runs_matmul, mpirun

pytest.importorskip("mpi4py")
pytestmark = pytest.mark.skipif(MPIEXEC is None, reason="no mpiexec (pip install mpich)")
HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.mark.parametrize("device,n", [("cpu", 2), ("cpu", 4), ("cuda", 2)])
def test_pipeline_matches_one_process(device, n):
    if device == "cuda" and not _interpreter_runs_matmul():
        pytest.skip("simulated cuda (TRITON_INTERPRET=1) needs Triton >= 3.9's interpreter "
                    "under NumPy 2")
    r = mpirun(n, os.path.join(HERE, "pipelining_script.py"), device,
               env={"TRITON_INTERPRET": "1"})
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-5000:]
    assert "FAIL" not in r.stdout, out[-5000:]
    for k in range(n):
        assert f"rank {k} DONE failures=0" in r.stdout, out[-5000:]
    last = len(re.findall(rf"rank {n - 1} PASS", r.stdout))
    first = len(re.findall(r"rank 0 PASS", r.stdout))
    # 2 ranks add the two-stages-per-rank schedules and the two-output stage
    assert (first, last) == ((16, 20) if n == 2 else (13, 17)), out[-5000:]


@pytest.mark.parametrize("w,v,n", [(2, 2, 4), (2, 3, 6), (3, 2, 3), (4, 2, 8), (4, 3, 4),
                                   (4, 2, 12), (3, 3, 12)])
def test_multi_stage_orders_match_torch(w, v, n):
    """Each rank's forward/backward order equals PyTorch's ``pipeline_order`` (its idle
    slots dropped)."""
    import types
    ts = pytest.importorskip("torch.distributed.pipelining.schedules")
    from framework.distributed.pipelining import ScheduleInterleaved1F1B, ScheduleLoopedBFS
    rounds = max(1, n // w)
    for rank in range(w):
        fake = dict(n_local_stages=v, pp_group_size=w, _n_microbatches=n, rank=rank,
                    microbatches_per_round=n // rounds, _stages=[None] * v, _num_stages=v * w)
        for theirs, ours in ((ts.ScheduleInterleaved1F1B, ScheduleInterleaved1F1B),
                             (ts.ScheduleLoopedBFS, ScheduleLoopedBFS)):
            want = [(a.stage_index, "F" if a.computation_type == ts._ComputationType.FORWARD
                     else "B", a.microbatch_index) for a in
                    theirs._calculate_single_rank_operations(types.SimpleNamespace(**fake), rank)
                    if a is not None]
            assert ours._rank_ops(types.SimpleNamespace(**fake), rank) == want, (theirs, rank)
