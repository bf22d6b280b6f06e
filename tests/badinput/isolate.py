"""Runs cases in a subprocess so that a crash or a hang is one case's result, not the end of
the run. `run_isolated(jobs)` takes (case id, device) pairs and returns {pair: outcome}; a case
that kills the worker is reported as {"kind": "crash"} and the worker restarts after it.

The worker (`python -m badinput.isolate`) reads the jobs as JSON on stdin and prints one
marked line before and one after each case. A case id "fuzz:<json>" is a generated case
(badinput/fuzz.py)."""
import json
import os
import select
import subprocess
import sys
import tempfile
import time

MARK = "@@BADINPUT "
TESTS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MEM_LIMIT = 12 * 2**30   # address-space limit of the worker: huge sizes must not thrash


def _spawn(jobs):
    env = dict(os.environ)
    env["PYTHONPATH"] = TESTS_DIR + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("PYTHONFAULTHANDLER", "1")
    err = tempfile.TemporaryFile(mode="w+")
    proc = subprocess.Popen([sys.executable, "-m", "badinput.isolate"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=err, env=env, text=True)
    proc.stdin.write(json.dumps(jobs))
    proc.stdin.close()
    return proc, err


def _tail(err, n=800):
    err.seek(0)
    s = err.read()
    return s[-n:]


def run_isolated(jobs, timeout=60.0):
    """Outcomes of the framework for each (case id, device) in `jobs`, each job run in a
    worker process; `timeout` seconds per case (import time included for the first)."""
    jobs = [tuple(j) for j in jobs]
    results = {}
    pending = list(jobs)
    while pending:
        proc, err = _spawn(pending)
        current, buf = None, ""
        deadline = time.monotonic() + timeout + 30.0
        finished = set()
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                proc.kill()
                proc.wait()
                idx = current if current is not None else 0
                results[pending[idx]] = {"kind": "hang", "msg": f"no result in {timeout:.0f} s"}
                pending = [j for i, j in enumerate(pending) if i > idx and i not in finished]
                break
            ready, _, _ = select.select([proc.stdout], [], [], left)
            if not ready:
                continue
            line = proc.stdout.readline()
            if not line:   # the worker exited
                rc = proc.wait()
                if current is None or current in finished:
                    rest = [j for i, j in enumerate(pending) if i not in finished]
                    if rest and rc == 0:
                        raise RuntimeError("worker exited early: " + _tail(err))
                    if rest:   # died between cases (import failure): blame the next one
                        current = min(i for i in range(len(pending)) if i not in finished)
                    else:
                        pending = []
                        break
                results[pending[current]] = {"kind": "crash",
                                             "msg": f"worker died (rc {rc}): {_tail(err)}"}
                pending = [j for i, j in enumerate(pending) if i > current and i not in finished]
                break
            if not line.startswith(MARK):
                continue
            tag, _, payload = line[len(MARK):].partition(" ")
            if tag == "start":
                current = int(payload)
                deadline = time.monotonic() + timeout
            elif tag == "done":
                i, out = json.loads(payload)
                results[pending[i]] = out
                finished.add(i)
        err.close()
    return results


def _real_gpu():
    """Whether kernels run on a real GPU (a CUDA driver and no TRITON_INTERPRET)."""
    if os.environ.get("TRITON_INTERPRET") == "1":
        return False
    import ctypes
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True


def _worker():
    # AddressSanitizer (make asan) reserves terabytes of address space for its shadow
    # memory, and a real CUDA driver maps the GPU's memory into the process's address space
    # (cuInit fails with CUDA_ERROR_OUT_OF_MEMORY under the limit): none in either case
    if "libasan" not in os.environ.get("LD_PRELOAD", "") and not _real_gpu():
        try:
            import resource
            resource.setrlimit(resource.RLIMIT_AS, (MEM_LIMIT, MEM_LIMIT))
        except (ImportError, ValueError, OSError):
            pass
    import framework as fw
    from badinput import case_by_id, run
    jobs = json.loads(sys.stdin.read())
    out = sys.stdout
    for i, (case_id, dev) in enumerate(jobs):
        out.write(f"{MARK}start {i}\n")
        out.flush()
        try:
            if case_id.startswith("fuzz:"):
                from badinput.fuzz import make_case
                case = make_case(json.loads(case_id[len("fuzz:"):]))
            else:
                case = case_by_id(case_id)
            res = run(case, fw, dev)
        except BaseException as e:  # noqa: BLE001 - a failing target() and the like
            res = {"kind": "raise", "cls": type(e).__name__, "msg": f"(setup) {e}"[:1500]}
        try:
            line = json.dumps([i, res])
        except (TypeError, ValueError):
            line = json.dumps([i, {"kind": "raise", "cls": "unserializable", "msg": repr(res)[:500]}])
        out.write(f"{MARK}done {line}\n")
        out.flush()


if __name__ == "__main__":
    _worker()
