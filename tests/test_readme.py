"""The README's Python blocks run as written, and docs/ops.md matches framework/ops.yaml."""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Runs the blocks in order in one namespace, as a reader pasting them into one session
# would; names the block that failed.
RUNNER = """
import sys, traceback
blocks = {blocks!r}
ns = {{"__name__": "__readme__"}}
for i, (line, code) in enumerate(blocks):
    try:
        exec(compile(code, f"README.md block {{i + 1}} (line {{line}})", "exec"), ns)
    except BaseException:
        traceback.print_exc()
        sys.exit(f"README.md python block {{i + 1}} (line {{line}}) failed")
print(f"ran {{len(blocks)}} blocks")
"""


def python_blocks(text):
    """[(line number, code), ...] of the ```python fenced blocks."""
    return [(text[:m.start()].count("\n") + 2, m.group(1))
            for m in re.finditer(r"^```python\n(.*?)^```", text, re.S | re.M)]


def test_readme_python_blocks_run():
    with open(os.path.join(ROOT, "README.md")) as f:
        blocks = python_blocks(f.read())
    assert len(blocks) >= 3
    env = dict(os.environ, TRITON_INTERPRET="1",   # the cuda block runs on the simulator
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", RUNNER.format(blocks=blocks)], cwd=ROOT,
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"ran {len(blocks)} blocks" in r.stdout


def test_ops_doc_is_current():
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "gen_ops_doc.py"),
                        "--check"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, (r.stdout + r.stderr +
                               "\nregenerate it: python tools/gen_ops_doc.py")
