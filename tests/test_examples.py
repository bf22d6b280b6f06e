"""Smoke tests of examples/: each script runs in a subprocess with a reduced step count and
must exit 0 and print a line showing that it learned something."""
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_example(name, *args, env=None, timeout=300):
    full_env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    full_env.update(env or {})
    r = subprocess.run([sys.executable, os.path.join(ROOT, "examples", name), *args],
                       capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=full_env)
    assert r.returncode == 0, f"{name} exited with {r.returncode}\n{r.stdout}\n{r.stderr}"
    return r.stdout


def number(pattern, text):
    m = re.search(pattern, text)
    assert m, f"no match for {pattern!r} in:\n{text}"
    return [float(g) for g in m.groups()]


def test_mlp_digits():
    out = run_example("mlp_digits.py", "--steps", "120")
    (acc,) = number(r"final test accuracy: ([\d.]+)", out)
    assert acc > 0.5, out           # chance is 0.1


def test_cnn():
    out = run_example("cnn.py", "--steps", "40")
    first, last = number(r"loss ([\d.]+) -> ([\d.]+)", out)
    (acc,) = number(r"final test accuracy: ([\d.]+)", out)
    assert last < first and acc > 0.3, out      # chance is 0.25


def test_lstm():
    out = run_example("lstm.py", "--steps", "40")
    first, last = number(r"loss ([\d.]+) -> ([\d.]+)", out)
    assert last < 0.95 * first, out


def test_hogwild():
    out = run_example("hogwild.py", "--epochs", "1", "--train-size", "1000")
    (untrained,) = number(r"untrained:\s+test accuracy ([\d.]+)", out)
    (hog,) = number(r"hogwild, \d+ processes: test accuracy ([\d.]+)", out)
    assert hog > untrained + 0.1, out


def test_custom_kernel():
    # the example's own checks on smaller inputs (its full sizes take a minute in Triton's
    # interpreter); main() itself runs them at full size
    pytest.importorskip("triton")
    code = ("import sys; sys.path.insert(0, 'examples'); import custom_kernel as k\n"
            "import framework as fw\n"
            "if not fw.cuda.is_available(): print('no cuda'); sys.exit(0)\n"
            "errors = k.check(n=5003, shape=(9, 1000))\n"
            "print(f'{len(errors)} cases, all checks passed')\n")
    env = dict(os.environ, TRITON_INTERPRET="1",
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=300, cwd=ROOT, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "all checks passed" in r.stdout or "no cuda" in r.stdout, r.stdout


def test_train_gpt_small(tmp_path):
    out = run_example("train_gpt.py", "--device", "cpu", "--steps", "20", "--batch-size", "8",
                      "--block-size", "32", "--n-layer", "2", "--corpus-bytes", "300000",
                      "--eval-windows", "32", "--sample-bytes", "24", "--out", str(tmp_path))
    (entropy,) = number(r"unigram entropy of the corpus: ([\d.]+) nats", out)
    (loss,) = number(r"held-out loss: ([\d.]+) nats", out)
    assert 2.5 < entropy < 4.5 and loss < 5.0, out
    assert "unchanged" in out and "sample (temperature" in out, out
    assert os.path.exists(tmp_path / "ckpt.pt")
    try:
        import matplotlib  # noqa: F401
        assert os.path.exists(tmp_path / "loss.png"), out
    except ImportError:
        pass

    # --resume continues from the checkpoint's step
    out = run_example("train_gpt.py", "--device", "cpu", "--steps", "22", "--batch-size", "8",
                      "--block-size", "32", "--n-layer", "2", "--corpus-bytes", "300000",
                      "--eval-windows", "32", "--sample-bytes", "8", "--out", str(tmp_path),
                      "--resume")
    assert "resumed from" in out and "at step 20" in out and "trained 2 steps" in out, out
    assert "(step 22)" in out, out


def test_train_gpt_compile(tmp_path):
    # --compile trains the compiled model (on cpu its traced graph, op by op): the same
    # losses as eager, and a checkpoint of the model itself (keys without _orig_mod.)
    args = ["--device", "cpu", "--steps", "3", "--batch-size", "2", "--grad-accum", "1",
            "--block-size", "16", "--n-layer", "1", "--n-head", "2", "--n-embd", "32",
            "--corpus-bytes", "200000", "--eval-windows", "4", "--sample-bytes", "8"]
    compiled = run_example("train_gpt.py", *args, "--compile", "--out", str(tmp_path / "c"))
    eager = run_example("train_gpt.py", *args, "--out", str(tmp_path / "e"))
    assert ", compiled" in compiled and "unchanged" in compiled, compiled
    pattern = r"step 3: train loss ([\d.]+), held-out loss ([\d.]+)"
    assert number(pattern, compiled) == number(pattern, eager), (compiled, eager)


def _real_gpu():
    import framework as fw
    return fw.cuda.is_available() and not fw.cuda.is_simulated()


@pytest.mark.skipif(not _real_gpu(), reason="needs a real GPU (the simulator is too slow)")
def test_train_gpt_cuda_bf16(tmp_path):
    out = run_example("train_gpt.py", "--device", "cuda", "--steps", "20", "--n-layer", "2",
                      "--eval-windows", "64", "--sample-bytes", "24", "--out", str(tmp_path))
    assert "with bfloat16 autocast" in out and "unchanged" in out, out
    (loss,) = number(r"held-out loss: ([\d.]+) nats", out)
    assert loss < 5.0, out
