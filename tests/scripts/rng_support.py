"""Helpers for the random-number workloads (test_script_rng*.py): results compared leaf by
leaf with exact types, error (type, first line) pairs, moment checks."""
import math

from tests.scripts.script_harness import oracle


def same(got, want, path="result"):
    """Leaf by leaf: strings, bools, ints, None and types exactly; floats to 1e-5."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and set(got) == set(want), \
            f"{path}: keys {sorted(map(str, got))} vs {sorted(map(str, want))}"
        for k in want:
            same(got[k], want[k], f"{path}[{k!r}]")
    elif isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(want), \
            f"{path}: {got!r} vs {want!r}"
        for i, (g, w) in enumerate(zip(got, want)):
            same(g, w, f"{path}[{i}]")
    elif isinstance(want, float):
        assert isinstance(got, float) and math.isclose(got, want, rel_tol=1e-5, abs_tol=1e-6), \
            f"{path}: {got!r} vs {want!r}"
    else:
        assert type(got) is type(want) and got == want, f"{path}: {got!r} vs {want!r}"


def compare(run, *args, **kwargs):
    """Runs ``run`` under PyTorch and under the framework; the results must be the same."""
    import framework
    torch = oracle()
    want = run(torch, *args, **kwargs)
    got = run(framework, *args, **kwargs)
    same(got, want)
    return got


def err(fn):
    """(exception type name, message) of ``fn()``, or None when it does not raise."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 (the type is the result)
        return type(e).__name__, str(e).split("\n")[0]
    return None


def dt(torch, dtype):
    """The dtype's name without its module (``float32``)."""
    return str(dtype).split(".")[-1]


def within(mean, want, sd, n, k=5.0):
    """``mean`` of ``n`` draws is within ``k`` standard errors of ``want``."""
    return abs(mean - want) <= k * sd / math.sqrt(n)
