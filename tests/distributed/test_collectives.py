"""Collectives over MPI on 2 and 3 processes (each test starts ``mpiexec``), the launcher,
and a rank that dies. Skipped when mpi4py (and the MPI wheel) is not installed."""
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest
from tests.helpers import child_env

pytest.importorskip("mpi4py")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MPIEXEC = shutil.which("mpiexec", path=os.path.dirname(sys.executable)) or \
    shutil.which("mpiexec")
pytestmark = pytest.mark.skipif(MPIEXEC is None, reason="no mpiexec (pip install mpich)")


def run_script(n, script, *extra, env=None):
    cmd = [MPIEXEC, "-n", str(n), sys.executable, os.path.join(HERE, script), *extra]
    e = child_env(ROOT, **(env or {}))
    return subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=e, cwd=ROOT)


@pytest.mark.parametrize("n,extra", [(2, ("--cuda",)), (3, ())])
def test_collectives_against_numpy(n, extra):
    r = run_script(n, "collectives_script.py", *extra, env={"TRITON_INTERPRET": "1"})
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-5000:]
    # the ranks' lines may interleave: find them anywhere in the output
    done = re.findall(r"rank (\d+) DONE checks=(\d+) failures=(\d+)", r.stdout)
    assert sorted(int(d[0]) for d in done) == list(range(n)), out[-5000:]
    assert all(int(d[1]) > 500 and d[2] == "0" for d in done), out[-5000:]


def _worker(mode, timeout, *flags):
    cmd = [MPIEXEC, *flags, "-n", "2", sys.executable, os.path.join(HERE, "worker_script.py"),
           mode, str(timeout)]
    start = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=90,
                       env=child_env(ROOT))
    return r, time.monotonic() - start


def test_stuck_rank_makes_others_raise_within_timeout():
    r, took = _worker("stuck", 2)
    assert r.returncode != 0
    m = re.search(r"rank 0 raised after ([\d.]+)s: (.*)", r.stdout)
    assert m, r.stdout + r.stderr
    assert "timed out" in m.group(2) and "Timeout(ms)=2000" in m.group(2), m.group(0)
    assert 1.9 < float(m.group(1)) < 10, m.group(0)
    assert took < 30


def test_rank_raising_ends_the_job():
    r, took = _worker("raise", 600)
    assert r.returncode != 0
    assert "boom on rank 1" in r.stderr and "did not raise" not in r.stdout
    assert took < 30, r.stdout + r.stderr


@pytest.mark.parametrize("flags", [(), ("-disable-auto-cleanup",)])
def test_killed_rank_makes_others_fail_within_timeout(flags):
    # by default MPI's process manager stops the others at once; without that cleanup our
    # timeout fires (or the process manager still tears the job down): never a hang
    r, took = _worker("kill", 3, *flags)
    assert r.returncode != 0
    assert "did not raise" not in r.stdout
    m = re.search(r"rank 0 raised after ([\d.]+)s: (.*)", r.stdout)
    if m:
        assert "timed out" in m.group(2) or "MPI error" in m.group(2), m.group(0)
        assert float(m.group(1)) < 5, m.group(0)
    assert took < 30, r.stdout + r.stderr


def launcher(*args, **kw):
    cmd = [sys.executable, "-m", "framework.distributed.run", *args]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            cwd=ROOT, env=child_env(ROOT), **kw)


def test_launcher_sets_env_and_returns_worst_exit_code():
    p = launcher("--nproc-per-node", "3", os.path.join(HERE, "worker_script.py"), "env", "0")
    out, _ = p.communicate(timeout=120)
    assert p.returncode == 0, out
    for r in range(3):
        assert (f"rank={r} RANK={r} LOCAL_RANK={r} WORLD_SIZE=3 MASTER_ADDR=127.0.0.1 "
                f"MASTER_PORT=29500 world=3") in out, out
    p = launcher("--nproc_per_node=2", "--master-port", "1234",
                 os.path.join(HERE, "worker_script.py"), "env", "5")
    out, _ = p.communicate(timeout=120)
    assert p.returncode == 5, out
    assert "MASTER_PORT=1234" in out


def test_launcher_killed_rank_fails_the_run():
    start = time.monotonic()
    p = launcher("--nproc-per-node", "2", os.path.join(HERE, "worker_script.py"), "kill",
                 "20")
    out, _ = p.communicate(timeout=60)
    assert p.returncode != 0, out
    assert time.monotonic() - start < 20, out


def test_launcher_forwards_sigint():
    p = launcher("--nproc-per-node", "2", os.path.join(HERE, "worker_script.py"), "sleep")
    # both ranks share the launcher's pipe, so their lines may interleave on one line
    seen = set()
    deadline = time.monotonic() + 60
    while len(seen) < 2 and time.monotonic() < deadline:
        seen.update(re.findall(r"rank \d ready", p.stdout.readline()))
    assert seen == {"rank 0 ready", "rank 1 ready"}
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=60)
    assert p.returncode != 0
    assert "interrupted" in out, out


def test_init_outside_an_mpi_world_says_how_to_start():
    r = subprocess.run([sys.executable, os.path.join(HERE, "worker_script.py"), "single"],
                       capture_output=True, text=True, timeout=60,
                       env=child_env(ROOT))
    assert "ERROR" in r.stdout and "mpiexec -n 2" in r.stdout, r.stdout + r.stderr
