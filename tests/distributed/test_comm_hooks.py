"""DDP communication hooks on 2 processes (``mpiexec -n 2`` runs comm_hooks_script.py):
allreduce_hook as plain DDP, a custom hook through ``Work.get_future()``, the 16-bit
compression hooks as the all-reduce of the cast gradients, PowerSGD against a float64
NumPy re-implementation; ``framework.futures``; the ``record`` decorator's error file
against torch's; ``framework.distributed.launch``."""
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap

import pytest
from tests.helpers import child_env

import framework.futures as futures

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MPIEXEC = shutil.which("mpiexec", path=os.path.dirname(sys.executable)) or \
    shutil.which("mpiexec")
needs_mpi = pytest.mark.skipif(MPIEXEC is None, reason="no mpiexec (pip install mpich)")


def run_py(args, env=None, timeout=300):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True,
                          timeout=timeout, env=child_env(ROOT, **(env or {})), cwd=ROOT)


@needs_mpi
@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_comm_hooks(device):
    pytest.importorskip("mpi4py")
    from tests.distributed.test_ddp import _interpreter_runs_matmul
    if device == "cuda" and not _interpreter_runs_matmul():
        pytest.skip("simulated cuda needs Triton >= 3.9's interpreter under NumPy 2")
    cmd = [MPIEXEC, "-n", "2", sys.executable, os.path.join(HERE, "comm_hooks_script.py"),
           device]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT,
                       env=child_env(ROOT, TRITON_INTERPRET="1"))
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-5000:]
    assert "FAIL" not in r.stdout, out[-5000:]
    passes = re.findall(r"rank (\d) PASS", r.stdout)
    assert sorted(set(passes)) == ["0", "1"], out[-5000:]
    assert len(passes) >= 2 * (14 if device == "cpu" else 8), out[-5000:]


def test_future_then_wait_collect_all():
    f = futures.Future()
    assert not f.done()
    g = f.then(lambda fut: fut.value() * 2)
    h = g.then(lambda fut: fut.value() + 1)
    f.set_result(3)
    assert f.done() and g.done() and h.wait() == 7 and h.value() == 7
    with pytest.raises(RuntimeError, match="only be marked completed once"):
        f.set_result(4)
    # a lazily driven future (as Work.get_future()) completes on wait, callbacks in order
    seen = []
    lazy = futures.Future(_waiter=lambda fut: (seen.append("work"), fut.set_result([5])))
    chained = lazy.then(lambda fut: seen.append("cb") or fut.value()[0] + 1)
    assert seen == [] and not chained.done()
    assert chained.wait() == 6 and seen == ["work", "cb"]
    bad_parent = futures.Future()
    bad = bad_parent.then(lambda fut: 1 / 0)
    bad_parent.set_result(0)
    with pytest.raises(ZeroDivisionError):
        bad.wait()
    both = futures.collect_all([f, bad])
    done = both.wait()
    assert done[0] is f and done[1] is bad
    assert futures.wait_all([f, g]) == [3, 6]
    with pytest.raises(RuntimeError, match="not completed"):
        futures.Future().value()


FAILING = """
import sys
if sys.argv[1] == "torch":
    from torch.distributed.elastic.multiprocessing.errors import record
else:
    from framework.distributed.elastic.multiprocessing.errors import record

def helper():
    raise ValueError("boom 42")

@record
def main():
    helper()

main()
"""


def test_record_writes_torch_error_file(tmp_path):
    pytest.importorskip("torch")
    script = tmp_path / "failing.py"
    script.write_text(FAILING)
    data = {}
    for which in ("torch", "framework"):
        err = tmp_path / f"{which}.json"
        r = run_py([str(script), which], env={"TORCHELASTIC_ERROR_FILE": str(err)})
        assert r.returncode == 1 and "ValueError: boom 42" in r.stderr, r.stderr[-3000:]
        data[which] = json.loads(err.read_text())
    t, f = data["torch"], data["framework"]

    def keys(d):
        return {k: keys(v) if isinstance(v, dict) else type(v).__name__
                for k, v in d.items()}
    assert keys(f) == keys(t)
    assert f["message"]["message"] == t["message"]["message"] == "ValueError: boom 42"
    stack = f["message"]["extraInfo"]["py_callstack"]
    assert stack.startswith("Traceback") and "in helper" in stack and \
        stack.rstrip().endswith("ValueError: boom 42")
    assert abs(int(f["message"]["extraInfo"]["timestamp"]) -
               int(t["message"]["extraInfo"]["timestamp"])) < 120


def test_record_child_failed_and_exit(tmp_path, monkeypatch):
    torch_errors = pytest.importorskip("torch.distributed.elastic.multiprocessing.errors")
    from framework.distributed.elastic.multiprocessing import errors
    monkeypatch.delenv("TORCHELASTIC_ERROR_FILE", raising=False)

    @errors.record
    def ok(x):
        return x + 1

    @errors.record
    def quits():
        sys.exit(0)
    assert ok(1) == 2 and quits() is None
    # a child's error file becomes the parent's, with the exit code, as torch's
    child = tmp_path / "child.json"
    child.write_text(json.dumps({"message": {"message": "RuntimeError: x", "extraInfo": {
        "py_callstack": "Traceback ...\nRuntimeError: x\n", "timestamp": "1700000000"}}}))
    out = {}
    for name, mod in (("torch", torch_errors), ("framework", errors)):
        parent = tmp_path / f"parent_{name}.json"
        monkeypatch.setenv("TORCHELASTIC_ERROR_FILE", str(parent))

        @mod.record
        def launcher():
            raise mod.ChildFailedError("trainer", {
                1: mod.ProcessFailure(local_rank=1, pid=123, exitcode=3,
                                      error_file=str(child))})
        with pytest.raises(mod.ChildFailedError) as ei:
            launcher()
        out[name] = (json.loads(parent.read_text()), str(ei.value))
    assert out["framework"][0] == out["torch"][0]
    assert out["framework"][0]["message"]["errorCode"] == 3
    msg = out["framework"][1]
    assert "trainer FAILED" in msg and "rank      : 1 (local_rank: 1)" in msg and \
        "RuntimeError: x" in msg and "Root Cause (first observed failure):" in msg


@needs_mpi
def test_launch_deprecated_module(tmp_path):
    script = tmp_path / "show.py"
    script.write_text(textwrap.dedent("""
        import os, sys
        # one write per line: the two workers share the pipe (print may write in pieces)
        line = f"worker {os.environ['LOCAL_RANK']} {os.environ['WORLD_SIZE']} {sys.argv[1:]}"
        os.write(1, (line + "\\n").encode())
    """))
    for use_env in (True, False):
        args = ["-m", "framework.distributed.launch", "--nproc-per-node", "2"] + \
            (["--use-env"] if use_env else []) + [str(script), "--lr", "1"]
        r = run_py(args, timeout=120)
        assert r.returncode == 0, r.stderr[-3000:]
        assert "FutureWarning" in r.stderr and "torch.distributed.launch is deprecated" \
            in r.stderr
        lines = sorted(line for line in r.stdout.splitlines() if line.startswith("worker"))
        if use_env:
            want = [f"worker {i} 2 ['--lr', '1']" for i in range(2)]
        else:
            want = [f"worker {i} 2 ['--local-rank={i}', '--lr', '1']" for i in range(2)]
        assert lines == want, r.stdout + r.stderr[-2000:]
    r = run_py(["-m", "framework.distributed.launch", "--no-python", "true"], timeout=60)
    assert r.returncode != 0 and "you must also set the '--use-env' flag" in r.stderr
