"""Selective activation checkpointing (``create_selective_checkpoint_contexts``): values
and gradients equal to no checkpointing, the saved ops are not run again in backward, the
others are; errors as PyTorch's."""
import functools

import numpy as np
import pytest

import framework as fw
from framework.utils import checkpoint as cp
from framework.utils.checkpoint import (CheckpointPolicy, checkpoint,
                                        create_selective_checkpoint_contexts)


def _fn(x, w):
    return fw.sigmoid(fw.matmul(fw.matmul(x, w).relu(), w)) * w.sum()


def _data(device, seed=0):
    rng = np.random.default_rng(seed)
    x = fw.tensor(rng.standard_normal((5, 4)), dtype=fw.float32, device=device,
                  requires_grad=True)
    w = fw.tensor(rng.standard_normal((4, 4)), dtype=fw.float32, device=device,
                  requires_grad=True)
    return x, w


def _counting(monkeypatch, name):
    """Counts the calls of ``fw.<name>`` (the binding the test's function calls)."""
    calls = []
    orig = getattr(fw, name)

    def counted(*args, **kwargs):
        calls.append(name)
        return orig(*args, **kwargs)
    monkeypatch.setattr(fw, name, counted)
    return calls


def _run(fn, device, context_fn=None):
    x, w = _data(device)
    if context_fn is None:
        out = fn(x, w)
    else:
        out = checkpoint(fn, x, w, use_reentrant=False, context_fn=context_fn)
    (out * fw.arange(20, device=device).reshape(5, 4)).sum().backward()
    return out.detach().cpu().numpy(), x.grad.cpu().numpy(), w.grad.cpu().numpy()


@pytest.mark.parametrize("policy", ["list", "fn"])
def test_saved_ops_are_not_recomputed(device, monkeypatch, policy):
    ref = _run(_fn, device)
    ops = fw.ops.aten
    if policy == "list":
        arg = [ops.mm.default]
    else:
        def arg(ctx, op, *args, **kwargs):
            assert isinstance(ctx, cp.SelectiveCheckpointContext) and not ctx.is_recompute
            return CheckpointPolicy.MUST_SAVE if op == ops.mm.default \
                else CheckpointPolicy.PREFER_RECOMPUTE
    mm = _counting(monkeypatch, "matmul")
    sig = _counting(monkeypatch, "sigmoid")
    got = _run(_fn, device, functools.partial(create_selective_checkpoint_contexts, arg))
    for g, r in zip(got, ref):
        np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-5)
    assert len(mm) == 2       # the forward's two: the recomputation took them from the cache
    assert len(sig) == 2      # sigmoid was recomputed


def test_recompute_everything_is_plain_checkpoint(device, monkeypatch):
    ref = _run(_fn, device)
    mm = _counting(monkeypatch, "matmul")
    _run(_fn, device, lambda: (cp.contextlib.nullcontext(), cp.contextlib.nullcontext()))
    plain = len(mm)
    ctx = functools.partial(create_selective_checkpoint_contexts,
                            lambda ctx, op, *a, **k: CheckpointPolicy.PREFER_RECOMPUTE)
    got = _run(_fn, device, ctx)
    for g, r in zip(got, ref):
        np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-5)
    # each recomputes once per backward, as PyTorch: 2 products forward, 2 again
    assert plain == 4 and len(mm) == 2 * plain


def test_modules_with_dropout():
    """nn.Linear (aten.addmm), GELU, dropout (its RNG replayed) and LayerNorm, saving
    different sets of ops: values and gradients as without checkpointing."""
    fw.manual_seed(0)
    m = fw.nn.Sequential(fw.nn.Linear(6, 8), fw.nn.GELU(), fw.nn.Dropout(0.3),
                         fw.nn.Linear(8, 4), fw.nn.LayerNorm(4))
    x = fw.randn(3, 5, 6, requires_grad=True)

    def run(ctx):
        for p in [x, *m.parameters()]:
            p.grad = None
        fw.manual_seed(1)
        out = m(x) if ctx is None else checkpoint(m, x, use_reentrant=False, context_fn=ctx)
        (out * out).sum().backward()
        return [out.detach().numpy(), x.grad.numpy()] + [p.grad.numpy()
                                                           for p in m.parameters()]
    ref = run(None)
    for policy in ([fw.ops.aten.addmm.default], [fw.ops.aten.mm.default, fw.ops.aten.gelu.default],
                   lambda ctx, op, *args, **kwargs: True):
        got = run(functools.partial(create_selective_checkpoint_contexts, policy))
        for g, r in zip(got, ref):
            np.testing.assert_allclose(g, r, rtol=1e-6, atol=1e-6)


def test_policy_sees_aten_names():
    torch = pytest.importorskip("torch")
    seen = {"fw": [], "torch": []}

    def policy(key):
        def fn(ctx, op, *args, **kwargs):
            seen[key].append(str(op))
            return CheckpointPolicy.PREFER_RECOMPUTE
        return fn

    x, w = _data("cpu")
    fw.utils.checkpoint.checkpoint(
        lambda a, b: fw.nn.functional.linear(a, b, b[0]) @ b, x, w, use_reentrant=False,
        context_fn=functools.partial(create_selective_checkpoint_contexts, policy("fw")))
    tx = torch.randn(5, 4, requires_grad=True)
    tw = torch.randn(4, 4, requires_grad=True)
    torch.utils.checkpoint.checkpoint(
        lambda a, b: torch.nn.functional.linear(a, b, b[0]) @ b, tx, tw,
        use_reentrant=False,
        context_fn=functools.partial(torch.utils.checkpoint.create_selective_checkpoint_contexts,
                                     policy("torch")))
    for name in ("aten.addmm.default", "aten.mm.default"):
        assert name in seen["fw"] and name in seen["torch"], seen


def test_errors():
    with pytest.raises(ValueError, match="change it to `torch.ops.aten.mm.default`"):
        create_selective_checkpoint_contexts([fw.ops.aten.mm])
    with pytest.raises(TypeError, match="must be either a function or a list of ops"):
        create_selective_checkpoint_contexts(3)
    # a second backward through the region (retain_graph) reuses consumed cache entries
    x, w = _data("cpu")
    out = checkpoint(_fn, x, w, use_reentrant=False,
                     context_fn=functools.partial(create_selective_checkpoint_contexts,
                                                  [fw.ops.aten.mm.default]))
    out.sum().backward(retain_graph=True)
    with pytest.raises(RuntimeError, match="backward an extra time"):
        out.sum().backward()
