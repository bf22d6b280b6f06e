"""bench/test_ids.py (the TEST_LIST ids that bench/gpu_check.sh hands to pytest on a GPU) and
bench/host_step.py (the demo step's host work on the simulated GPU)."""
import importlib.util
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _test_ids():
    spec = importlib.util.spec_from_file_location("test_ids",
                                                  os.path.join(ROOT, "bench", "test_ids.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_ids_kept_replaced_or_dropped(tmp_path, monkeypatch, capsys):
    (tmp_path / "test_x.py").write_text(
        "import pytest\n"
        "@pytest.mark.parametrize('d', ['cpu', 'cuda'])\n"
        "@pytest.mark.parametrize('f', [lambda: 1, abs])\n"
        "def test_f(d, f):\n    pass\n"
        "def test_g():\n    pass\n")
    monkeypatch.chdir(tmp_path)
    got = _test_ids().current([
        "test_x.py::test_g",                   # collected: kept
        "test_x.py::test_f[abs-cuda]",         # collected: kept
        "test_x.py::test_f[<lambda>-cuda]",    # holds '<': its function
        "test_x.py::test_f[f7-cuda]",          # stale: its function (once)
        "test_x.py::test_gone[cuda]",          # no such function: dropped
    ])
    assert got == ["test_x.py::test_g", "test_x.py::test_f[abs-cuda]", "test_x.py::test_f"]
    err = capsys.readouterr().err
    assert "test_gone[cuda]: no such test now" in err and "as test_x.py::test_f" in err


def test_host_step_counts_the_step_launches():
    """bench/host_step.py on a one-layer model: the step's launches, by kernel, add up to
    the total it prints (the GEMMs of the four linears and the head among them), the same
    through the GPU's cached launcher (--launcher), whose later launches reach a stand-in
    of Triton's compiled launcher."""
    import re
    import subprocess
    import sys

    def launches(*extra):
        r = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "host_step.py"),
                            "--n-layer", "1", "--n-embd", "32", "--batch-size", "2",
                            "--block-size", "8", "--steps", "2", "--kernels", *extra],
                           capture_output=True, text=True, timeout=600, cwd=ROOT)
        assert r.returncode == 0, r.stderr[-3000:]
        m = re.search(r"launches a step: (\d+); host time a step: ([\d.]+) ms", r.stdout)
        assert m, r.stdout
        by_kernel = {name: int(n) for n, name in re.findall(r"^\s+(\d+)\s+(\w+)$", r.stdout,
                                                              re.M)}
        assert sum(by_kernel.values()) == int(m.group(1)) > 0
        return by_kernel

    plain = launches()
    # forward, dX and dW of the 4 linears and the tied head: 15 products at least
    assert plain["_mm_kernel"] >= 15
    assert launches("--launcher") == plain
