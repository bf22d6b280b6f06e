"""Walks PyTorch's own OpInfo database (op_db): every OpInfo whose op the framework has is
run on its first sample inputs, on cpu and cuda, and compared with torch (values for
float32/float64/int64/bool/complex64, float64 gradients; dtype and shape only for random
ops; complex64 samples an op refuses with NotImplementedError are counted apart by
tools/opinfo_report.py, not failed).
Deliberate gaps and known disagreements are listed in tests/torch_opinfo/unsupported.py;
tools/opinfo_report.py prints the coverage."""
import pytest

torch = pytest.importorskip("torch")

import framework as fw  # noqa: E402

from torch_opinfo import walker  # noqa: E402

_OPS = walker.load_op_db()

# the samples include extreme values on purpose: their NumPy/Triton warnings are noise here
pytestmark = pytest.mark.filterwarnings("ignore")


def _ids():
    seen, ids = {}, []
    for op in _OPS:
        k = walker.key(op)
        seen[k] = seen.get(k, 0) + 1
        ids.append(k if seen[k] == 1 else f"{k}#{seen[k]}")
    return ids


@pytest.mark.parametrize("op", _OPS, ids=_ids())
def test_opinfo(op):
    status = walker.status_of(op)
    if status in ("unsupported", "internal"):
        pytest.skip(f"{status}: {walker.reason_unsupported(op)}")
    if status == "absent":
        pytest.skip(f"the framework has no {op.name}")
    devices = ("cpu", "cuda") if fw.cuda.is_available() else ("cpu",)
    results = walker.walk_op(op, devices=devices)
    bad = [r for r in results if r.status == "disagree"]
    reason = walker.known_disagreement(op)
    if bad and reason:
        pytest.xfail(reason)
    assert not bad, "\n".join(f"{r.check} sample {r.sample}: {r.message}" for r in bad[:8])
