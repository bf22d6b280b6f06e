"""framework.compile(mode="reduce-overhead"): the compiled graph's forward and backward
replayed as CUDA graphs (framework/_inductor/cudagraphs.py), on the simulated device.
Results are compared with the uncompiled program (exact) and, for the training loop, with
PyTorch's."""
import re
import warnings

import numpy as np
import pytest

import framework as fw
import framework.nn as nn
from framework._inductor import cudagraphs

cuda = pytest.mark.skipif(not fw.cuda.is_available(), reason="needs cuda or TRITON_INTERPRET=1")


def _mlp(dtype, device="cuda"):
    fw.manual_seed(0)
    # 70 hidden units: more than one block of the fused kernels
    return nn.Sequential(nn.Linear(5, 70), nn.Tanh(), nn.Linear(70, 3)).to(device, dtype)


def _data(step, *shape, dtype=fw.float32, device="cuda"):
    rng = np.random.default_rng(step)
    return fw.from_numpy(rng.standard_normal(shape)).to(device, dtype)


def _same(a, b):
    return np.array_equal(a.detach().cpu().numpy(), b.detach().cpu().numpy())


def _train(model, step_fn, steps, dtype, device="cuda", batch=4):
    opt = fw.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    losses = []
    for step in range(steps):
        x = _data(step, batch, 5, dtype=dtype, device=device)
        y = _data(100 + step, batch, 3, dtype=dtype, device=device)
        loss = nn.functional.mse_loss(step_fn(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


@cuda
@pytest.mark.parametrize("dtype", [fw.float32, fw.float64])
def test_training_loop_equals_eager_and_captures_once(dtype):
    torch = pytest.importorskip("torch")
    ref, model = _mlp(dtype), _mlp(dtype)
    compiled = fw.compile(model, mode="reduce-overhead")
    before = dict(cudagraphs.counters)
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # no fallback
        losses = _train(model, compiled, 5, dtype)
    assert losses == _train(ref, ref, 5, dtype)
    for p, q in zip(ref.parameters(), model.parameters()):
        assert _same(p, q)
    # step 1 traces, step 2 captures forward and backward, every later step replays
    assert compiled._compiled.cudagraph_captures == 1
    assert cudagraphs.counters["captures"] - before["captures"] == 1
    assert cudagraphs.counters["replays"] - before["replays"] == 4
    # PyTorch's eager loop from the same weights and data
    tdt = getattr(torch, str(dtype).split(".")[-1])
    tm = torch.nn.Sequential(torch.nn.Linear(5, 70), torch.nn.Tanh(), torch.nn.Linear(70, 3))
    with torch.no_grad():
        for p, q in zip(tm.parameters(), _mlp(dtype).parameters()):
            p.copy_(torch.from_numpy(q.detach().cpu().numpy()))
    tm = tm.to(tdt)
    topt = torch.optim.SGD(tm.parameters(), lr=0.1, momentum=0.9)
    expect = []
    for step in range(5):
        x = torch.from_numpy(np.random.default_rng(step).standard_normal((4, 5))).to(tdt)
        y = torch.from_numpy(np.random.default_rng(100 + step).standard_normal((4, 3))).to(tdt)
        loss = torch.nn.functional.mse_loss(tm(x), y)
        topt.zero_grad()
        loss.backward()
        topt.step()
        expect.append(loss.item())
    np.testing.assert_allclose(losses, expect, rtol=1e-5 if dtype is fw.float32 else 1e-12)


@cuda
def test_new_shape_captures_again():
    model = _mlp(fw.float32)
    compiled = fw.compile(model, mode="reduce-overhead")
    cc = compiled._compiled
    with fw.no_grad():
        for step, batch in enumerate([4, 4, 4, 6, 6, 6, 4]):
            x = _data(step, batch, 5)
            assert _same(compiled(x), model(x))
    assert cc.cudagraph_captures == 2 and len(cc.cache) == 2


@cuda
def test_outputs_alias_static_memory_and_are_overwritten():
    def f(x, w):
        return (x @ w).relu() * 2.0 + 1.0
    compiled = fw.compile(f, mode="reduce-overhead")
    w = _data(9, 5, 3)
    xs = [_data(step, 4, 5) for step in range(4)]
    compiled(xs[0], w)              # traced
    held = compiled(xs[1], w)       # captured
    kept, view, where = held.clone(), held[1:], held.data_ptr()
    fw.compiler.cudagraph_mark_step_begin()
    out = compiled(xs[2], w)        # replayed into the same memory
    assert out.data_ptr() == where and _same(out, f(xs[2], w))
    # as in PyTorch, an output of an earlier replay (or a view of it) cannot be read
    stale = "accessing tensor output of CUDAGraphs that has been overwritten by a subsequent run"
    for read in (lambda: held.cpu(), lambda: view + 1.0, lambda: repr(held)):
        with pytest.raises(RuntimeError, match=stale):
            read()
    assert _same(kept, f(xs[1], w))
    # the caller's tensors are not the static inputs: replays leave them alone
    assert _same(xs[1], _data(1, 4, 5))
    assert _same(compiled(xs[3], w), f(xs[3], w))
    assert compiled._compiled.cudagraph_captures == 1
    # an output fed back as the next call's input (a decoding loop) is read before the
    # replay overwrites it
    step = fw.compile(lambda h: (h * 0.5).tanh() + 0.25, mode="reduce-overhead")
    h = h_ref = xs[0]
    for _ in range(4):
        h, h_ref = step(h), (h_ref * 0.5).tanh() + 0.25
    assert _same(h, h_ref)


@cuda
def test_input_gradients_accumulate_and_stale_backward_raises():
    def f(x, w):
        return ((x @ w).tanh() * x.sin().sum(1, keepdim=True)).sum(1)
    compiled = fw.compile(f, mode="reduce-overhead")
    w = _data(9, 5, 3, dtype=fw.float64).requires_grad_()
    w_ref = w.detach().clone().requires_grad_()
    for step in range(4):   # .grad accumulates over the steps
        x = _data(step, 4, 5, dtype=fw.float64).requires_grad_()
        x_ref = x.detach().clone().requires_grad_()
        compiled(x, w).sum().backward()
        f(x_ref, w_ref).sum().backward()
        assert _same(x.grad, x_ref.grad) and _same(w.grad, w_ref.grad)
    assert compiled._compiled.cudagraph_captures == 1
    # the first call's backward would read the values the second call's replay left
    loss = compiled(_data(7, 4, 5, dtype=fw.float64).requires_grad_(), w).sum()
    compiled(_data(8, 4, 5, dtype=fw.float64).requires_grad_(), w)
    with pytest.raises(RuntimeError, match="replayed by a subsequent run"):
        loss.backward()


class _Net(nn.Module):
    def __init__(self):
        super().__init__()
        fw.manual_seed(0)
        self.lin = nn.Linear(5, 70)
        self.w = nn.Parameter(fw.randn(70, 3))

    def forward(self, x):
        return self.lin(x).tanh() @ self.w


@cuda
def test_parameter_replaced_or_moved_captures_again():
    model = _Net().cuda()
    compiled = fw.compile(model, mode="reduce-overhead")
    cc = compiled._compiled
    with fw.no_grad():
        for step in range(3):
            compiled(_data(step, 4, 5))
        assert cc.cudagraph_captures == 1
        model.w = nn.Parameter(model.w * 0.5)          # a new parameter: traced again
        for step in range(3, 6):
            x = _data(step, 4, 5)
            assert _same(compiled(x), model(x))
        assert cc.cudagraph_captures == 2 and len(cc.cache) == 2
        model.lin.bias.data = model.lin.bias.data + 1.0   # new memory: captured again
        x = _data(7, 4, 5)
        assert _same(compiled(x), model(x))
        assert cc.cudagraph_captures == 3 and len(cc.cache) == 2


@cuda
def test_batch_norm_running_stats_as_eager():
    def net():
        fw.manual_seed(0)
        return nn.Sequential(nn.Linear(5, 6), nn.BatchNorm1d(6)).cuda()
    ref, model = net(), net()
    compiled = fw.compile(model, mode="reduce-overhead")
    for step in range(4):
        x = _data(step, 4, 5)
        assert _same(compiled(x), ref(x))
    assert compiled._compiled.cudagraph_captures == 1
    for a, b in zip(ref.buffers(), model.buffers()):
        assert _same(a, b)


def _dropout_net():
    fw.manual_seed(0)
    return nn.Sequential(nn.Linear(5, 6), nn.Dropout(0.5)).cuda()


def _mutate(x):
    x.mul_(2.0)
    return x + 1.0


def _via_cpu(x):
    return (x.cpu() * 2.0).cuda() + 1.0


def _plain(x):
    return x.sin() * 2.0


@cuda
@pytest.mark.parametrize("case", ["random", "mutated", "cpu op", "capture failed"])
def test_fallback_warns_once_and_stays_correct(case, monkeypatch):
    fn, reason = {"random": (_dropout_net(), "random ops"),
                  "mutated": (_mutate, r"mutated inputs \(1 instances\)"),
                  "cpu op": (_via_cpu, r"cpu device \("),
                  "capture failed": (_plain, r"capture failed \(RuntimeError: no graph")}[case]
    if case == "capture failed":
        def refuse(*args, **kwargs):
            raise RuntimeError("no graph")
        monkeypatch.setattr(fw.cuda, "make_graphed_callables", refuse)
    compiled = fw.compile(fn, mode="reduce-overhead")
    with pytest.warns(UserWarning) as record:
        results, inputs = [], []
        for step in range(4):
            fw.manual_seed(step)
            inputs.append(_data(step, 4, 5))
            results.append(compiled(inputs[-1]))
    skips = [str(w.message) for w in record if "skipping cudagraphs" in str(w.message)]
    assert len(skips) == 1 and re.match("skipping cudagraphs due to " + reason, skips[0])
    for step in range(4):
        fw.manual_seed(step)
        x = _data(step, 4, 5)
        assert _same(results[step], fn(x))
        assert _same(inputs[step], x)   # mutated as eager mutates it
    assert compiled._compiled.cudagraph_captures == 0


@cuda
def test_modes_and_options():
    for kwargs, graphs in [({"mode": "max-autotune"}, True),
                           ({"options": {"triton.cudagraphs": True}}, True),
                           ({"mode": "max-autotune-no-cudagraphs"}, False),
                           ({"mode": "default"}, False), ({}, False)]:
        compiled = fw.compile(_plain, **kwargs)
        with fw.no_grad():
            for step in range(3):
                x = _data(step, 4, 5)
                assert _same(compiled(x), _plain(x))
        assert compiled._compiled.cudagraph_captures == int(graphs), kwargs


def test_unknown_mode_error_text_as_torch():
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError) as expected:
        torch.compile(torch.nn.Linear(2, 2), mode="x")
    with pytest.raises(RuntimeError) as got:
        fw.compile(nn.Linear(2, 2), mode="x")
    assert str(got.value) == str(expected.value)


def test_cpu_inputs_run_the_plain_compiled_graph():
    ref, model = _mlp(fw.float32, "cpu"), _mlp(fw.float32, "cpu")
    compiled = fw.compile(model, mode="reduce-overhead")
    with pytest.warns(UserWarning) as record:
        losses = _train(model, compiled, 3, fw.float32, "cpu")
    skips = [w for w in record if "skipping cudagraphs" in str(w.message)]
    assert [str(w.message) for w in skips] == ["skipping cudagraphs due to cpu device (input)"]
    assert losses == _train(ref, ref, 3, fw.float32, "cpu")
    assert compiled._compiled.cudagraph_captures == 0 and len(compiled._compiled.cache) == 1
