"""Helpers of the torch.func and advanced-autograd script tests."""
import framework
from script_harness import assert_same, oracle


def compare_on(run, device="cpu", text=(), **tol):
    """``compare`` with the framework's run on ``device`` (PyTorch's stays on the cpu) and
    the entries named in ``text`` (strings, logs) compared for equality."""
    want = run(oracle(), "cpu")
    got = run(framework, device)
    for k in text:
        assert got.pop(k) == want.pop(k), k
    assert_same(got, want, **tol)
    return got
