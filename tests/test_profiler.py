"""framework.profiler: PyTorch's torch.profiler API (ops, nesting, kernels, table, Chrome
trace, schedules) and that nothing of it stays installed once a profile stops."""
import json
import os

import pytest
import triton.language as tl
from triton.runtime.jit import JITFunction

import framework as fw
import framework.nn.functional as F
from framework.autograd import engine
from framework.kernels import launcher
from framework.profiler import (ProfilerAction, ProfilerActivity, profile, record_function,
                                schedule)
from framework.profiler import _record

CPU = ProfilerActivity.CPU
CUDA = ProfilerActivity.CUDA


def _activities(device):
    return [CPU, CUDA] if device == "cuda" else [CPU]


def _by_key(prof):
    return {e.key: e for e in prof.key_averages()}


def _rows(table):
    """The names of a table's rows (between the second and third rule)."""
    lines = table.splitlines()
    rules = [i for i, line in enumerate(lines) if line.startswith("---")]
    return [line.split("  ")[0].strip() or line.strip().split("  ")[0]
            for line in lines[rules[1] + 1:rules[2]]]


def test_ops_recorded_with_names_and_counts(device):
    a = fw.ones(2, 3, device=device)
    b = fw.ones(3, 2, device=device)
    with profile(activities=_activities(device)) as prof:
        c = a + a              # Tensor.__add__ -> aten::add
        c = fw.add(c, a)
        c = c.add(a)
        d = fw.mm(a, b)
    ops = _by_key(prof)
    assert ops["aten::add"].count == 3
    assert ops["aten::mm"].count == 1
    assert ops["aten::add"].cpu_time_total > 0
    assert ops["aten::add"].cpu_time == pytest.approx(ops["aten::add"].cpu_time_total / 3)
    assert c.shape == (2, 3) and d.shape == (2, 2)


def test_names_match_pytorch():
    torch = pytest.importorskip("torch")
    from torch.profiler import profile as tprofile
    with tprofile(activities=[torch.profiler.ProfilerActivity.CPU]) as tprof:
        x = torch.ones(2, 2)
        x + x
        torch.mm(x, x)
        x.to(torch.float64)
    with profile(activities=[CPU]) as prof:
        y = fw.ones(2, 2)
        y + y
        fw.mm(y, y)
        y.to(fw.float64)
    theirs = {e.key for e in tprof.key_averages()}
    ours = {e.key for e in prof.key_averages()}
    for name in ("aten::add", "aten::mm", "aten::to"):
        assert name in theirs and name in ours


def test_nesting_and_self_time(device):
    a = fw.ones(4, 4, device=device)
    with profile(activities=_activities(device)) as prof:
        with record_function("outer"):
            b = a * 2
            b = b.sum()
    events = prof.events()
    outer = next(e for e in events if e.name == "outer")
    children = [e for e in events if e.cpu_parent is outer]
    assert {"aten::mul", "aten::sum"} <= {c.name for c in children}
    assert outer.cpu_time_total >= sum(c.cpu_time_total for c in children)
    assert 0 <= outer.self_cpu_time_total < outer.cpu_time_total
    assert outer.self_cpu_time_total == pytest.approx(
        outer.cpu_time_total - sum(c.cpu_time_total for c in children))
    avg = _by_key(prof)["outer"]
    assert avg.count == 1 and avg.self_cpu_time_total < avg.cpu_time_total


def test_kernel_events(device):
    a = fw.ones(4, 4, device=device)
    with profile(activities=[CPU, CUDA]) as prof:
        fw.mm(a, a)
        a + a
    ops = _by_key(prof)
    if device == "cpu":   # CPU ops launch no kernels: nothing on the device
        assert all(e.device_type.name == "CPU" for e in prof.events())
        assert all(e.cuda_time_total == 0 for e in ops.values())
        return
    assert "_mm_kernel" in ops and "_binary_kernel[add]" in ops
    assert ops["_mm_kernel"].device_type.name == "CUDA" and ops["_mm_kernel"].count == 1
    assert ops["aten::mm"].cuda_time_total > 0
    assert ops["aten::mm"].self_cuda_time_total == pytest.approx(ops["_mm_kernel"].cuda_time_total)
    assert ops["aten::add"].cuda_time_total > 0
    mm = next(e for e in prof.events() if e.name == "aten::mm")
    assert [k.name for k in mm.kernels] == ["_mm_kernel"]
    # launches show as host ranges inside the op
    assert any(c.name == _record.LAUNCH_NAME for c in mm.cpu_children)


def test_cpu_only_activity_records_no_kernels(device):
    a = fw.ones(4, 4, device=device)
    with profile(activities=[CPU]) as prof:
        fw.mm(a, a)
    assert all(e.device_type.name == "CPU" for e in prof.events())
    assert "cuLaunchKernel" not in _by_key(prof)


def test_table(device):
    a = fw.ones(2, 2, device=device)
    with profile(activities=_activities(device)) as prof:
        for _ in range(3):
            a + a
        fw.mm(a, a)
    ka = prof.key_averages()
    text = ka.table(sort_by="count", row_limit=10)
    header = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg",
              "# of Calls"]
    if device == "cuda":
        header += ["Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg"]
    for col in header:
        assert col in text
    assert "Self CPU time total:" in text
    rows = _rows(text)
    counts = [_by_key(prof)[r].count for r in rows]
    assert counts == sorted(counts, reverse=True)
    assert rows.index("aten::add") < rows.index("aten::mm")
    for key in ("cpu_time_total", "self_cpu_time_total", "cuda_time_total"):
        rows = _rows(ka.table(sort_by=key))
        values = [getattr(_by_key(prof)[r], key) for r in rows]
        assert values == sorted(values, reverse=True)
    assert len(_rows(ka.table(sort_by="count", row_limit=1))) == 1
    assert any(u in text for u in ("us", "ms"))
    with pytest.raises(ValueError, match="self_cpu_time_total"):
        ka.table(sort_by="bogus")


def test_record_shapes():
    a, b = fw.ones(2, 3), fw.ones(3)
    with profile(activities=[CPU], record_shapes=True) as prof:
        a + b
        a + a
    add = [e for e in prof.events() if e.name == "aten::add"]
    assert [e.input_shapes for e in add] == [[[2, 3], [3]], [[2, 3], [2, 3]]]
    grouped = [e for e in prof.key_averages(group_by_input_shape=True) if e.key == "aten::add"]
    assert len(grouped) == 2 and all(e.count == 1 for e in grouped)
    assert "Input Shapes" in prof.key_averages(group_by_input_shape=True).table()


def test_backward_nodes():
    x = fw.ones(3, 3, requires_grad=True)
    with profile(activities=[CPU]) as prof:
        fw.mm(x, x).sum().backward()
    names = {e.key for e in prof.key_averages()}
    assert "autograd::engine::evaluate_function: MmBackward0" in names
    assert "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad" in names


def test_chrome_trace(device, tmp_path):
    a = fw.ones(4, 4, device=device)
    with profile(activities=_activities(device)) as prof:
        with record_function("block"):
            fw.mm(a, a)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    with open(path) as f:
        trace = json.load(f)["traceEvents"]
    spans = [e for e in trace if e["ph"] == "X"]
    mm = next(e for e in spans if e["name"] == "aten::mm")
    block = next(e for e in spans if e["name"] == "block")
    assert mm["pid"] == block["pid"] == os.getpid() and mm["tid"] == block["tid"]
    assert block["ts"] <= mm["ts"] and mm["ts"] + mm["dur"] <= block["ts"] + block["dur"]
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in trace
             if e["ph"] == "M" and e["name"] == "thread_name"}
    kernels = [e for e in spans if e.get("cat") == "kernel"]
    if device == "cuda":
        assert [k["name"] for k in kernels] == ["_mm_kernel"]
        assert names[(kernels[0]["pid"], kernels[0]["tid"])].startswith("stream ")
    else:
        assert not kernels


def test_schedule_matches_pytorch():
    torch = pytest.importorskip("torch")
    ours = schedule(wait=1, warmup=1, active=2, repeat=2, skip_first=1)
    theirs = torch.profiler.schedule(wait=1, warmup=1, active=2, repeat=2, skip_first=1)
    assert [ours(i).name for i in range(12)] == [theirs(i).name for i in range(12)]
    assert ours(4) is ProfilerAction.RECORD_AND_SAVE
    with pytest.raises(ValueError):
        schedule(wait=0, warmup=0, active=0)


def test_schedule_records_active_steps():
    a = fw.ones(2)
    traces = []

    def ready(p):
        ops = _by_key(p)
        traces.append((ops["aten::add"].count, sorted(k for k in ops if k.startswith("Prof"))))

    with profile(activities=[CPU], schedule=schedule(wait=1, warmup=1, active=2),
                 on_trace_ready=ready) as prof:
        for _ in range(8):
            a + a
            prof.step()
    assert traces == [(2, ["ProfilerStep#2", "ProfilerStep#3"]),
                      (2, ["ProfilerStep#6", "ProfilerStep#7"])]


def test_start_stop_and_trace_ready_once():
    calls = []
    prof = profile(activities=[CPU], on_trace_ready=calls.append)
    prof.start()
    fw.ones(2).neg()
    prof.stop()
    assert calls == [prof] and _by_key(prof)["aten::neg"].count == 1
    with pytest.raises(RuntimeError, match="no trace"):
        profile(activities=[CPU]).key_averages()


def test_record_function_decorator():
    @record_function("my_fn")
    def my_fn(x):
        return x.exp()

    with profile(activities=[CPU]) as prof:
        my_fn(fw.ones(2))
        my_fn(fw.ones(2))
    my_fn(fw.ones(2))   # no profile: nothing happens
    ops = _by_key(prof)
    assert ops["my_fn"].count == 2 and ops["aten::exp"].count == 2
    exp = next(e for e in prof.events() if e.name == "aten::exp")
    assert exp.cpu_parent.name == "my_fn"


def _installed():
    from triton.runtime.jit import JITFunction
    return [fw.add, fw.mm, fw.Tensor.add, fw.Tensor.add_, fw.Tensor.__add__, fw.Tensor.__rsub__,
            fw.Tensor.to, F.linear, F.relu, fw._nn_functional_ops.relu, fw.linalg.norm,
            fw.optim.AdamW.step, vars(JITFunction)["run"], engine.profile_hook,
            launcher.profile_launch]


def test_originals_restored(device):
    before = _installed()
    a = fw.ones(2, device=device)
    with profile(activities=_activities(device)):
        assert fw.add is not before[0] and engine.profile_hook is not None
        a + a
    assert all(x is y for x, y in zip(_installed(), before))
    assert engine.profile_hook is None and launcher.profile_launch is None
    assert _record._state is None


def test_exception_restores():
    before = _installed()
    with pytest.raises(ZeroDivisionError):
        with profile(activities=[CPU, CUDA]):
            with record_function("r"):
                fw.ones(2) + 1
                1 / 0
    assert all(x is y for x, y in zip(_installed(), before))
    assert _record._state is None


def test_one_profiler_at_a_time():
    with profile(activities=[CPU]):
        with pytest.raises(RuntimeError, match="already running"):
            profile(activities=[CPU]).start()
    assert _record._state is None


def test_autograd_profiler_aliases():
    from framework.autograd import profiler as legacy
    assert legacy.record_function is record_function
    with legacy.profile(record_shapes=True) as prof:
        fw.ones(2).neg()
    assert "aten::neg" in prof.table()
    assert any(e.name == "aten::neg" for e in prof.function_events)
    with legacy.profile(enabled=False) as off:
        fw.ones(2).neg()
    assert _record._state is None
    with pytest.raises(RuntimeError):
        off.key_averages()


def _fake_kernel(x, n, OP: tl.constexpr):
    pass


@pytest.mark.skipif(not fw.cuda.is_available(), reason="kernel timing needs a (simulated) GPU")
def test_cached_launcher_fast_path_is_timed(monkeypatch):
    # a CachedKernel (the GPU's launch path) whose compiled launcher is a fake: the second
    # launch takes the fast path, which the profiler times through launcher.profile_launch
    class Compiled:
        function, packed_metadata = "fn", "meta"

        def __init__(self):
            self.calls = 0

        def run(self, *a):
            self.calls += 1

    fn = JITFunction(_fake_kernel)
    compiled = Compiled()
    monkeypatch.setattr(fn, "run", lambda *a, grid, warmup, **k: compiled)
    monkeypatch.setattr(launcher._runtime, "stream_handle", lambda device: 0)
    ck = launcher.CachedKernel(fn)
    x = fw.zeros(8)
    add = JITFunction(_fake_kernel)   # stands for a pointwise op (its name: _fake_kernel)
    ck[(1,)](x, 8, OP=add)            # compiles (Triton's path, faked here)
    with profile(activities=[CPU, CUDA]) as prof:
        with record_function("outer"):
            ck[(1,)](x, 8, OP=add)
    assert compiled.calls == 1
    ops = _by_key(prof)
    assert ops["_fake_kernel[fake_kernel]"].count == 1
    assert ops["cuLaunchKernel"].count == 1
    outer = next(e for e in prof.events() if e.name == "outer")
    assert [k.name for k in outer.kernels] == ["_fake_kernel[fake_kernel]"]
