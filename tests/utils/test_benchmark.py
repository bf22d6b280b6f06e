"""framework.utils.benchmark: statistics against NumPy, text against torch.utils.benchmark
on the same Measurement data, and what Timer runs."""
import re

import numpy as np
import pytest

import framework as fw
from framework.utils import benchmark

torch = pytest.importorskip("torch")
import torch.utils.benchmark as tb  # noqa: E402

_FIELDS = ("label", "sub_label", "description", "env", "num_threads")


def _pair(raw_times, number_per_run=1, stmt="x + y", setup="pass", **spec):
    """The same measurement in both libraries."""
    ours = benchmark.Measurement(number_per_run, list(raw_times),
                                 benchmark.TaskSpec(stmt, setup, **spec))
    ref = tb.Measurement(number_per_run, list(raw_times), tb.TaskSpec(stmt, setup, **spec))
    return ours, ref


def _times(n, median, spread, seed):
    rng = np.random.default_rng(seed)
    return list(median * (1 + spread * rng.standard_normal(n)))


@pytest.mark.parametrize("n,number", [(1, 1), (3, 10), (8, 100), (101, 7)])
def test_statistics_against_numpy(n, number):
    raw = _times(n, 3.7e-3, 0.2, n)
    m = benchmark.Measurement(number, raw, benchmark.TaskSpec("pass", "pass"))
    t = np.asarray(raw, dtype=np.float64) / number
    np.testing.assert_allclose(m.times, t, rtol=1e-15)
    np.testing.assert_allclose(m.median, np.median(t), rtol=1e-14)
    np.testing.assert_allclose(m.mean, t.mean(), rtol=1e-14)
    np.testing.assert_allclose(m.iqr, np.quantile(t, 0.75) - np.quantile(t, 0.25),
                               rtol=1e-12, atol=1e-18)
    assert m.number_per_run == number and m.raw_times == raw
    ref = tb.Measurement(number, raw, tb.TaskSpec("pass", "pass"))
    assert m.significant_figures == ref.significant_figures
    assert m.has_warnings == ref.has_warnings
    assert m.meets_confidence(0.5) == ref.meets_confidence(0.5)


_SPECS = [
    dict(),
    dict(label="Broadcasting add", sub_label="(4x8)", description="n=4", num_threads=4),
    dict(label="mm", env="fast"),
    dict(description="big", num_threads=2),
]


@pytest.mark.parametrize("spec", _SPECS)
@pytest.mark.parametrize("n,spread", [(1, 0.0), (3, 0.02), (12, 0.01), (40, 0.3), (9, 0.12)])
def test_repr_like_torch(spec, n, spread):
    ours, ref = _pair(_times(n, 5.73e-6, spread, n), 100, **spec)
    lines, ref_lines = repr(ours).splitlines(), repr(ref).splitlines()
    assert re.fullmatch(r"<framework\.utils\.benchmark\.common\.Measurement object at 0x"
                        r"[0-9a-f]+>", lines[0])
    assert lines[1:] == ref_lines[1:]
    assert ours.title == ref.title
    for f in _FIELDS:
        assert getattr(ours, f) == getattr(ref.task_spec, f)
    assert ours.env == spec.get("env")
    if n == 40:
        assert "This suggests significant environmental influence." in repr(ours)


def test_repr_multiline_stmt_and_setup():
    stmt = "for _ in range(3):\n    y = x + 1"
    setup = "import math\nx = 1"
    ours, ref = _pair([1e-3, 1.1e-3, 0.9e-3, 1.05e-3], 10, stmt=stmt, setup=setup,
                      sub_label="loop")
    assert repr(ours).splitlines()[1:] == repr(ref).splitlines()[1:]
    ours, ref = _pair([2.5], 1, setup="x = 1")
    assert repr(ours).splitlines()[1:] == repr(ref).splitlines()[1:]
    assert "2.50 s" in repr(ours)


@pytest.mark.parametrize("t", [3e-10, 1.6e-8, 2.2e-6, 7.7e-4, 0.3, 12.0, 4000.0])
def test_select_unit_and_trim(t):
    assert benchmark.select_unit(t) == tb.select_unit(t)
    for n in (1, 2, 3):
        assert benchmark.trim_sigfig(t, n) == pytest.approx(tb.trim_sigfig(t, n), rel=1e-6)


def _measurements(lib):
    out = []
    k = 0
    for label in ("add", "mul"):
        for threads in (1, 4):
            for sub in ("float", "int", None):
                for desc in ("n=1", "n=100", "n=10000"):
                    if label == "mul" and desc == "n=100" and sub == "int":
                        continue   # a missing cell
                    k += 1
                    spread = 0.3 if k % 7 == 0 else 0.01
                    raw = _times(6, 1e-6 * (1 + k) * (3 if desc == "n=10000" else 1),
                                 spread, k)
                    spec = lib.TaskSpec(f"x.{label}(y)", "pass", label=label, sub_label=sub,
                                        description=desc, num_threads=threads)
                    out.append(lib.Measurement(10, raw, spec))
    # replicates of one task are merged
    out.append(lib.Measurement(5, _times(4, 2e-6, 0.01, 99),
                               lib.TaskSpec("x.add(y)", "pass", label="add",
                                            sub_label="float", description="n=1")))
    return out


@pytest.mark.parametrize("options", [(), ("trim",), ("colorize",), ("rowwise",),
                                     ("highlight",), ("trim", "highlight", "colorize"),
                                     ("reversed",)])
def test_compare_like_torch(options, capsys):
    tables = []
    for lib in (benchmark, tb):
        ms = _measurements(lib)
        # rows are sorted by threads and env, keeping the statements' order within
        c = lib.Compare(ms[::-1] if "reversed" in options else ms)
        if "trim" in options:
            c.trim_significant_figures()
        if "colorize" in options:
            c.colorize()
        if "rowwise" in options:
            c.colorize(rowwise=True)
        if "highlight" in options:
            c.highlight_warnings()
        tables.append(str(c))
        c.print()
    assert tables[0] == tables[1]
    printed = capsys.readouterr().out
    assert printed == tables[0] + "\n" + tables[1] + "\n"
    assert "[------------" in tables[0] and "4 threads: " in tables[0]
    assert ("(! " in tables[0]) == ("highlight" in options)
    assert ("\033[92m" in tables[0]) == ("colorize" in options or "rowwise" in options)


def test_compare_envs_and_merge():
    tables = []
    for lib in (benchmark, tb):
        ms = [lib.Measurement(1, _times(5, 3e-3 * (i + 1), 0.01, i),
                              lib.TaskSpec("f()", "pass", label="L", env=env,
                                           description=d))
              for i, (env, d) in enumerate([("A", "x"), ("A", "y"), ("BB", "x"),
                                            ("BB", "y"), ("A", "x")])]
        merged = lib.Measurement.merge(ms)
        assert len(merged) == 4 and merged[0].number_per_run == 1
        assert len(merged[0].raw_times) == 10
        tables.append(str(lib.Compare(ms)))
    assert tables[0] == tables[1]
    assert "(A)" in tables[0] and "(BB)" in tables[0]
    with pytest.raises(ValueError, match="Expected an instance of `Measurement`"):
        benchmark.Compare([1.0])


def test_timer_runs_stmt_with_globals_and_setup():
    calls = {"stmt": 0, "setup": 0}
    t = benchmark.Timer("calls['stmt'] += step", setup="calls['setup'] += 1",
                        globals={"calls": calls, "step": 1}, label="count")
    m = t.timeit(number=50)
    # a warmup of max(50 // 100, 2) runs, then the timed 50; setup once per timeit call
    assert calls == {"stmt": 52, "setup": 2}
    assert m.number_per_run == 50 and len(m.raw_times) == 1 and m.raw_times[0] > 0
    assert m.label == "count" and m.stmt == "calls['stmt'] += step"
    # ``torch`` names the framework inside the statement
    seen = []
    benchmark.Timer("seen.append(torch)", globals={"seen": seen}).timeit(1)
    assert seen[-1] is fw
    with pytest.raises(NameError):
        benchmark.Timer("undefined_name").timeit(1)


def test_blocked_autorange():
    calls = [0]
    blocks = []
    t = benchmark.Timer("calls[0] += 1\nsum(range(50))", globals={"calls": calls})
    before = calls[0]
    m = t.blocked_autorange(callback=lambda n, s: blocks.append((n, s)), min_run_time=0.05)
    assert sum(m.raw_times) >= 0.05
    assert [n for n, _ in blocks] == [m.number_per_run] * len(m.raw_times)
    assert [s for _, s in blocks] == m.raw_times
    # the estimate's blocks (0 x 5, then powers of ten) and the measured ones
    k = int(round(np.log10(m.number_per_run)))
    estimate = sum(10 ** i for i in range(k + 1))
    assert calls[0] - before == estimate + m.number_per_run * len(m.raw_times)
    m2 = t.adaptive_autorange(threshold=0.5, max_run_time=0.2)
    assert len(m2.raw_times) > 3 or sum(m2.raw_times) > 0.2


def test_num_threads_restored():
    prior = fw.get_num_threads()
    seen = []
    for method in ("timeit", "blocked_autorange"):
        t = benchmark.Timer("seen.append(torch.get_num_threads())", globals={"seen": seen},
                            num_threads=1 if prior != 1 else 2)
        getattr(t, method)(**({"number": 3} if method == "timeit" else
                              {"min_run_time": 0.01}))
        assert set(seen) == {1 if prior != 1 else 2}
        assert fw.get_num_threads() == prior
    # restored when the statement raises
    with pytest.raises(ZeroDivisionError):
        benchmark.Timer("1 / 0", num_threads=3).timeit(2)
    assert fw.get_num_threads() == prior


def test_default_timer_synchronizes_cuda(monkeypatch):
    syncs = []
    monkeypatch.setattr(fw.cuda, "is_available", lambda: True)
    monkeypatch.setattr(fw.cuda, "synchronize", lambda device=None: syncs.append(device))
    benchmark.Timer("pass").timeit(number=5)
    assert len(syncs) == 4        # around the warmup and around the timed block
    syncs.clear()
    monkeypatch.setattr(fw.cuda, "is_available", lambda: False)
    benchmark.Timer("pass").timeit(number=5)
    assert syncs == []


def test_timer_on_device(device):
    x = fw.ones(4, device=device)
    m = benchmark.Timer("y = x + x", globals={"x": x}).timeit(number=2)
    assert m.raw_times[0] > 0


def test_timer_errors():
    with pytest.raises(ValueError, match="Currently only a `str` stmt is supported."):
        benchmark.Timer(lambda: None)
    with pytest.raises(ValueError, match="global_setup is C\\+\\+ only"):
        benchmark.Timer("pass", global_setup="#include <x>")
    with pytest.raises(ValueError, match="Invalid language `rust`."):
        benchmark.Timer("pass", language="rust")
    with pytest.raises(NotImplementedError, match="C\\+\\+"):
        benchmark.Timer("pass", language="cpp")
    t = benchmark.Timer("pass")
    for call in (t.repeat, t.autorange):
        with pytest.raises(NotImplementedError, match="See `Timer.blocked_autorange.`"):
            call()
    with pytest.raises(OSError, match="Valgrind is not supported"):
        t.collect_callgrind()
    assert benchmark.Language.PYTHON.value == 0 and benchmark.Language.CPP.value == 1
