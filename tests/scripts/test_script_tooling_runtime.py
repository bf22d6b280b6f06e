"""Script sweep: nn utilities and tooling tutorials, part 2: torch.fx, the profiler,
torch.utils.benchmark, activation checkpointing and the channels-last memory format.

Each workload is tutorial-style PyTorch code run under the framework and under PyTorch.
"""
import contextlib
import io
import json
import logging
import os
import tempfile

import pytest

import framework
from tests.scripts.script_harness import assert_same, compare, data, init_params, oracle
from tests.scripts.test_script_tooling import _submodule


# ---------------------------------------------------------------------------------------
# 1. torch.fx tutorials (graph editing, Interpreter/Transformer, conv-bn fusion)
# ---------------------------------------------------------------------------------------

def _node_row(node):
    target = node.target if isinstance(node.target, str) else node.target.__name__
    args = [a.name if hasattr(a, "name") and hasattr(a, "op") else a for a in node.args
            if not isinstance(a, (tuple, list))]
    return [node.op, node.name, target, [str(a) for a in args]]


def run_fx(torch):
    nn = torch.nn
    fx = torch.fx
    out = {}

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.param = nn.Parameter(torch.rand(3, 4))
            self.linear = nn.Linear(4, 5)

        def forward(self, x, y):
            z = torch.add(x, y)
            return self.linear(z + self.param).clamp(min=0.0, max=1.0).sum(dim=-1)

    m = init_params(torch, M())
    gm = fx.symbolic_trace(m)
    out["nodes"] = [_node_row(n) for n in gm.graph.nodes]
    x, y = data(torch, 30, 3, 4), data(torch, 31, 3, 4)
    out["traced"] = gm(x, y)
    out["code_ok"] = "def forward" in gm.code
    out["type"] = type(gm).__name__

    # Replace torch.add with torch.mul, then recompile.
    def transform(m, tracer_class=fx.Tracer):
        graph = tracer_class().trace(m)
        for node in graph.nodes:
            if node.op == "call_function" and node.target == torch.add:
                node.target = torch.mul
        graph.lint()
        return fx.GraphModule(m, graph)

    gm2 = transform(m)
    out["mul"] = gm2(x, y)
    out["mul_ref"] = m.linear(x * y + m.param).clamp(0.0, 1.0).sum(dim=-1)
    # edit the traced module in place, then recompile
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target == torch.add:
            node.target = torch.sub
    gm.recompile()
    out["sub"] = gm(x, y)
    out["sub_in_code"] = "sub(x, y)" in gm.code

    # Interpreter and Transformer that swap sigmoid and neg.
    def fn(x):
        return torch.sigmoid(x).neg()

    gm3 = fx.symbolic_trace(fn)

    class NegSigmSwapInterpreter(fx.Interpreter):
        def call_function(self, target, args, kwargs):
            if target == torch.sigmoid:
                return torch.neg(*args, **kwargs)
            return super().call_function(target, args, kwargs)

        def call_method(self, target, args, kwargs):
            if target == "neg":
                call_self, *args_tail = args
                return call_self.sigmoid(*args_tail, **kwargs)
            return super().call_method(target, args, kwargs)

    out["interp"] = NegSigmSwapInterpreter(gm3).run(x)

    class NegSigmSwapXformer(fx.Transformer):
        def call_function(self, target, args, kwargs):
            if target == torch.sigmoid:
                return torch.neg(*args, **kwargs)
            return super().call_function(target, args, kwargs)

        def call_method(self, target, args, kwargs):
            if target == "neg":
                call_self, *args_tail = args
                return call_self.sigmoid(*args_tail, **kwargs)
            return super().call_method(target, args, kwargs)

    gm4 = NegSigmSwapXformer(gm3).transform()
    out["xform"] = gm4(x)
    out["xform_ref"] = torch.sigmoid(torch.neg(x))

    # A ShapeProp-like Interpreter that records each node's shape.
    class ShapeRecorder(fx.Interpreter):
        def run_node(self, n):
            result = super().run_node(n)
            if isinstance(result, torch.Tensor):
                n.meta["my_shape"] = tuple(result.shape)
                n.meta["my_dtype"] = str(result.dtype).split(".")[-1]
            return result

    gm5 = fx.symbolic_trace(m)
    ShapeRecorder(gm5).run(x, y)
    out["shapes"] = [[n.name, n.meta.get("my_shape"), n.meta.get("my_dtype")]
                     for n in gm5.graph.nodes if n.op != "output"]
    shape_prop = _submodule(torch, "fx.passes.shape_prop")
    shape_prop.ShapeProp(gm5).propagate(x, y)
    out["tensor_meta"] = [[n.name, tuple(n.meta["tensor_meta"].shape),
                           str(n.meta["tensor_meta"].dtype).split(".")[-1]]
                          for n in gm5.graph.nodes if n.op not in ("output",)]
    return out


def run_fx_fusion(torch):
    import copy
    nn = torch.nn
    fx = torch.fx
    fuse_conv_bn_eval = torch.nn.utils.fusion.fuse_conv_bn_eval

    class WrappedBatchNorm(nn.Module):
        def __init__(self):
            super().__init__()
            self.mod = nn.BatchNorm2d(1)

        def forward(self, x):
            return self.mod(x)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 1, 1)
            self.bn1 = nn.BatchNorm2d(1)
            self.conv2 = nn.Conv2d(1, 1, 1)
            self.nested = nn.Sequential(nn.BatchNorm2d(1), nn.Conv2d(1, 1, 1))
            self.wrapped = WrappedBatchNorm()

        def forward(self, x):
            x = self.conv1(x)
            x = self.bn1(x)
            x = self.conv2(x)
            x = self.nested(x)
            x = self.wrapped(x)
            return x

    def _parent_name(target):
        *parent, name = target.rsplit(".", 1)
        return parent[0] if parent else "", name

    def replace_node_module(node, modules, new_module):
        parent_name, name = _parent_name(node.target)
        setattr(modules[parent_name], name, new_module)

    def fuse(model):
        model = copy.deepcopy(model)
        fx_model = fx.symbolic_trace(model)
        modules = dict(fx_model.named_modules())
        for node in fx_model.graph.nodes:
            if node.op != "call_module":
                continue
            if type(modules[node.target]) is nn.BatchNorm2d and \
                    type(modules[node.args[0].target]) is nn.Conv2d:
                if len(node.args[0].users) > 1:
                    continue
                conv = modules[node.args[0].target]
                bn = modules[node.target]
                fused_conv = fuse_conv_bn_eval(conv, bn)
                replace_node_module(node.args[0], modules, fused_conv)
                node.replace_all_uses_with(node.args[0])
                fx_model.graph.erase_node(node)
        fx_model.graph.lint()
        fx_model.recompile()
        return fx_model

    model = init_params(torch, M())
    x = data(torch, 32, 2, 1, 5, 6)
    model.train()
    for i in range(2):  # give BatchNorm non-trivial running statistics
        model(x + i)
    model.eval()
    fused = fuse(model)
    return {"ref": model(x), "fused": fused(x),
            "modules": [type(m).__name__ for m in fused.modules()],
            "ops": [n.op + ":" + str(n.target) for n in fused.graph.nodes]}


def test_fx():
    got = compare(run_fx)
    assert got["code_ok"] and got["sub_in_code"]


def test_fx_conv_bn_fusion():
    got = compare(run_fx_fusion)
    assert "bn1" not in " ".join(got["ops"])


# ---------------------------------------------------------------------------------------
# 2. Profiler recipe
# ---------------------------------------------------------------------------------------

def run_profiler(torch, trace_path):
    nn = torch.nn
    profiler = _submodule(torch, "profiler")  # from torch.profiler import profile, ...
    profile, record_function, ProfilerActivity = (
        profiler.profile, profiler.record_function, profiler.ProfilerActivity)
    out = {}
    model = init_params(torch, nn.Sequential(nn.Linear(4, 3), nn.ReLU()))
    inputs = data(torch, 40, 2, 4)

    with profile(activities=[ProfilerActivity.CPU], record_shapes=True,
                 profile_memory=True) as prof:
        with record_function("model_inference"):
            model(inputs)
    table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=10)
    wanted = ["model_inference", "aten::linear", "aten::relu"]
    out["in_table"] = [name in table for name in wanted]
    out["has_header"] = all(h in table for h in ("Name", "CPU total", "# of Calls"))
    keys = {e.key: e for e in prof.key_averages()}
    out["keys"] = [name in keys for name in wanted]
    out["counts"] = [keys[name].count for name in wanted]
    out["times_positive"] = keys["model_inference"].cpu_time_total > 0
    # profile_memory: bytes allocated inside each range, its children's included
    mem_table = prof.key_averages().table(sort_by="self_cpu_memory_usage", row_limit=10)
    out["mem_table"] = [h in mem_table for h in ("CPU Mem", "Self CPU Mem", "24 B")]
    out["mem"] = [keys[name].cpu_memory_usage for name in wanted]
    by_shape = prof.key_averages(group_by_input_shape=True)
    out["linear_shapes"] = [e.input_shapes for e in by_shape if e.key == "aten::linear"]
    out["relu_shapes"] = [e.input_shapes for e in by_shape if e.key == "aten::relu"]
    # The record_function range contains the ops run inside it.
    evs = {e.name: e for e in prof.events()}
    mi, lin = evs["model_inference"], evs["aten::linear"]
    out["nested"] = (mi.time_range.start <= lin.time_range.start
                     and lin.time_range.end <= mi.time_range.end)

    prof.export_chrome_trace(trace_path)
    with open(trace_path) as f:
        trace = json.load(f)
    names = {ev.get("name") for ev in trace["traceEvents"]}
    out["trace_names"] = [name in names for name in wanted]
    out["trace_complete"] = all("ts" in ev and "dur" in ev for ev in trace["traceEvents"]
                                if ev.get("name") in wanted)

    # A schedule: wait 1, warm up 1, record 2, once; on_trace_ready fires once.
    ready = []

    def trace_handler(p):
        ready.append((p.step_num, sorted({e.key for e in p.key_averages()
                                          if e.key.startswith("step_")})))

    sched = profiler.schedule(wait=1, warmup=1, active=2, repeat=1)
    out["actions"] = [sched(i).name for i in range(6)]
    with profile(activities=[ProfilerActivity.CPU], schedule=sched,
                 on_trace_ready=trace_handler) as p:
        for i in range(6):
            with record_function(f"step_{i}"):
                model(inputs)
            p.step()
    out["ready"] = ready
    return out


def test_profiler():
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        got = compare(run_profiler, path)
    finally:
        os.unlink(path)
    assert all(got["in_table"]) and all(got["trace_names"]) and got["nested"]
    assert got["ready"] == [(4, ["step_2", "step_3"])]


# ---------------------------------------------------------------------------------------
# 3. torch.utils.benchmark recipe
# ---------------------------------------------------------------------------------------

def run_benchmark(torch):
    benchmark = _submodule(torch, "utils.benchmark")  # import torch.utils.benchmark
    out = {}
    x = data(torch, 50, 8, 4)

    def batched_dot_mul_sum(a, b):
        return a.mul(b).sum(-1)

    def batched_dot_bmm(a, b):
        a = a.reshape(-1, 1, a.shape[-1])
        b = b.reshape(-1, b.shape[-1], 1)
        return torch.bmm(a, b).flatten(-3)

    out["same"] = batched_dot_bmm(x, x) - batched_dot_mul_sum(x, x)
    t0 = benchmark.Timer(stmt="batched_dot_mul_sum(x, x)",
                         setup="y = x.clone()",
                         globals={"x": x, "batched_dot_mul_sum": batched_dot_mul_sum})
    t1 = benchmark.Timer(stmt="batched_dot_bmm(x, x)",
                         globals={"x": x, "batched_dot_bmm": batched_dot_bmm})
    m0 = t0.timeit(5)
    m1 = t1.blocked_autorange(min_run_time=0.01)
    out["m0"] = (type(m0).__name__, m0.number_per_run, len(m0.times), m0.mean > 0,
                 m0.median > 0, m0.stmt, m0.title)
    out["m1"] = (type(m1).__name__, m1.mean > 0, len(m1.times) >= 1,
                 abs(sum(m1.times) / len(m1.times) - m1.mean) < 1e-9,
                 m1.median <= max(m1.times), m1.median >= min(m1.times))
    out["repr"] = all(s in repr(m0) for s in ("batched_dot_mul_sum(x, x)", "1 measurement",
                                              "5 runs"))

    results = []
    for n in (1, 4):
        for num_threads in (1, 2):
            label, sub_label = "Batched dot", f"[{n}, 4]"
            xb = torch.ones(n, 4)
            results.append(benchmark.Timer(
                stmt="batched_dot_mul_sum(x, x)",
                globals={"x": xb, "batched_dot_mul_sum": batched_dot_mul_sum},
                num_threads=num_threads, label=label, sub_label=sub_label,
                description="mul/sum").timeit(3))
    m = results[-1]
    out["labels"] = (m.label, m.sub_label, m.description, m.task_spec.num_threads,
                     m.num_threads)
    compare = benchmark.Compare(results)
    compare.trim_significant_figures()
    compare.colorize()
    buf = io.StringIO()
    import contextlib
    with contextlib.redirect_stdout(buf):
        compare.print()
    text = buf.getvalue()
    out["table"] = [s in text for s in ("Batched dot", "[1, 4]", "[4, 4]", "mul/sum",
                                        "1 threads", "2 threads", "Times are in")]
    out["threads_after"] = torch.get_num_threads() > 0
    return out


def test_benchmark():
    got = compare(run_benchmark)
    assert all(got["table"]) and got["m0"][2] == 1


# ---------------------------------------------------------------------------------------
# 4. Activation checkpointing
# ---------------------------------------------------------------------------------------

def run_checkpoint(torch, device="cpu", blocks=3):
    nn = torch.nn
    cp = _submodule(torch, "utils.checkpoint")  # from torch.utils.checkpoint import ...
    out = {}

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(2, 2, 3, padding=1)
            self.bn = nn.BatchNorm2d(2)
            self.drop = nn.Dropout(0.5)

        def forward(self, x):
            return self.drop(torch.relu(self.bn(self.conv(x)))) + x

    def build():
        m = init_params(torch, nn.Sequential(*[Block() for _ in range(blocks)], nn.Flatten(),
                                             nn.Linear(2 * 4 * 4, 3)))
        m.eval()  # dropout off, BatchNorm on running statistics: recomputation is exact
        return m.to(device)

    x = data(torch, 60, 2, 2, 4, 4).to(device).requires_grad_()
    ref = build()
    loss = ref(x).pow(2).sum()
    loss.backward()
    out["ref"] = (loss.item(), [p.grad.cpu().clone() for p in ref.parameters()],
                  x.grad.cpu().clone())

    for reentrant in (False, True):
        m = build()
        x.grad = None
        h = x
        for block in list(m)[:blocks]:
            h = cp.checkpoint(block, h, use_reentrant=reentrant)
        loss = m[blocks + 1](m[blocks](h)).pow(2).sum()
        loss.backward()
        out[f"cp_{reentrant}"] = (loss.item(), [p.grad.cpu().clone() for p in m.parameters()],
                                  x.grad.cpu().clone())

    m = build()
    x.grad = None
    y = cp.checkpoint_sequential(m, 2, x, use_reentrant=False)
    y.pow(2).sum().backward()
    out["seq"] = (y.detach().cpu(), [p.grad.cpu().clone() for p in m.parameters()],
                  x.grad.cpu().clone())

    # A function with several inputs and outputs; a kwarg-only tensor-free path.
    def fn(a, b, scale=2.0):
        return torch.sin(a) * b * scale, (a * b).sum()

    a = data(torch, 61, 3, 5).to(device).requires_grad_()
    b = data(torch, 62, 3, 5).to(device).requires_grad_()
    u, v = cp.checkpoint(fn, a, b, scale=3.0, use_reentrant=False)
    (u.sum() + v).backward()
    out["multi"] = (u.detach().cpu(), v.detach().cpu(), a.grad.cpu().clone(),
                    b.grad.cpu().clone())
    if hasattr(cp, "set_checkpoint_debug_enabled"):
        # (PyTorch's debug mode symbolizes C++ stacks with addr2line processes that outlive
        # the test and trip the DataLoader tests' leftover-process check: the framework's
        # debug mode is run, PyTorch's same gradient without it)
        debug = cp.set_checkpoint_debug_enabled(True) if torch.__name__ == "framework" \
            else contextlib.nullcontext()
        with debug:
            a.grad = None
            u, v = cp.checkpoint(fn, a, b, use_reentrant=False)
            (u.sum() + v).backward()
        out["debug"] = a.grad.cpu().clone()
    return out


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_checkpoint(device):
    if device == "cuda" and not framework.cuda.is_available():
        pytest.skip("no (simulated) cuda device")
    torch = oracle()
    # PyTorch's checkpoint debug mode logs through a LoggingTensor whose records break
    # pytest's log capture (a formatting TypeError): keep them out of it.
    log = logging.getLogger("LoggingTensor")
    log.propagate = False
    blocks = 3 if device == "cpu" else 0   # the interpreter is slow: no conv blocks
    try:
        want = run_checkpoint(torch, blocks=blocks)
    finally:
        log.propagate = True
    got = run_checkpoint(framework, device, blocks=blocks)
    assert_same(got, want, 1e-4, 1e-5)
    assert_same(got["cp_False"], got["ref"], 1e-5, 1e-6)  # exact recomputation


# ---------------------------------------------------------------------------------------
# 5. Channels-last memory format
# ---------------------------------------------------------------------------------------

def run_channels_last(torch):
    nn = torch.nn
    out = {}
    N, C, H, W = 2, 3, 4, 5
    x = torch.empty(N, C, H, W)
    out["stride0"] = x.stride()
    x = x.to(memory_format=torch.channels_last)
    out["shape1"] = tuple(x.shape)
    out["stride1"] = x.stride()
    x = x.to(memory_format=torch.contiguous_format)
    out["stride2"] = x.stride()
    x = x.contiguous(memory_format=torch.channels_last)
    out["stride3"] = x.stride()
    out["is_cl"] = (x.is_contiguous(memory_format=torch.channels_last), x.is_contiguous())
    x = torch.empty(N, C, H, W, memory_format=torch.channels_last)
    out["stride4"] = x.stride()
    # The permute idiom: NHWC storage viewed as NCHW is channels-last.
    y = data(torch, 70, N, H, W, C).permute(0, 3, 1, 2)
    out["perm"] = (y.stride(), y.is_contiguous(memory_format=torch.channels_last))
    out["cl_4d_3d"] = torch.empty(N, C, H, W, 2).to(
        memory_format=torch.channels_last_3d).stride()

    model = init_params(torch, nn.Sequential(nn.Conv2d(C, 4, 3, padding=1),
                                             nn.BatchNorm2d(4), nn.ReLU(),
                                             nn.Conv2d(4, 2, 1)))
    model = model.to(memory_format=torch.channels_last)
    out["w_stride"] = model[0].weight.stride()
    inp = data(torch, 71, N, C, H, W).to(memory_format=torch.channels_last)
    h = model[0](inp)
    out["conv"] = (h, h.stride(), h.is_contiguous(memory_format=torch.channels_last))
    h = model[1](h)
    out["bn"] = (h, h.stride())
    h = model[2](h)
    out["relu"] = (h, h.stride())
    y = model(inp)
    out["model"] = (y, y.stride())
    y.sum().backward()
    g = model[0].weight.grad
    out["grad"] = (g, g.stride())
    out["add"] = (inp + 1).stride()
    out["binary_mixed"] = (inp + inp.contiguous()).stride()
    out["to_nchw"] = inp.contiguous().stride()
    # .grad takes its leaf's layout, whatever layout the incoming gradient has
    b = data(torch, 72, 4, 3).requires_grad_()
    (b.t() * data(torch, 73, 3, 4)).sum().backward()
    w = data(torch, 74, 2, 3, 2, 2).to(memory_format=torch.channels_last).requires_grad_()
    (w.contiguous() * 2).sum().backward()
    out["leaf_grad_layout"] = (b.grad.stride(), w.grad.stride(), w.grad)
    return out


def test_channels_last():
    compare(run_channels_last)
