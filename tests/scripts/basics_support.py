"""Helpers shared by the basics tutorials' script tests (test_script_basics*.py): results
that hold printed text, PyTorch on one thread, the framework's device."""
import pytest

import framework
from script_harness import assert_same, oracle


@pytest.fixture(scope="module")
def oracle_on_one_thread():
    """PyTorch's CPU kernels on one thread: on a shared, loaded machine its thread pool
    makes the tiny ops here a hundred times slower."""
    try:
        import torch
    except ImportError:     # the tests that need it skip themselves
        yield
        return
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def pop_text(x, texts):
    """``x`` with every string moved out into ``texts`` (the harness compares numbers);
    the framework prints its own name where PyTorch prints ``torch`` (``framework.float32``,
    by design)."""
    if isinstance(x, str):
        texts.append(x.replace("framework.", "torch."))
        return 0
    if x is None:
        texts.append("None")
        return 0
    if isinstance(x, dict):
        return {k: pop_text(v, texts) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [pop_text(v, texts) for v in x]
    return x


def compare_with_text(run, *args, rtol=1e-4, atol=1e-5, **kwargs):
    """``compare``, where the results may also hold strings (printed reports, type names),
    which must be equal."""
    torch = oracle()
    want_text, got_text = [], []
    want = pop_text(run(torch, *args, **kwargs), want_text)
    got = pop_text(run(framework, *args, **kwargs), got_text)
    assert got_text == want_text
    assert_same(got, want, rtol, atol)
    return got


def on(device):
    """The framework side runs on ``device``; PyTorch (a CPU build) stays on cpu."""
    return lambda torch: "cpu" if torch is not framework else device

