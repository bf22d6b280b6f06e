"""framework.utils.checkpoint: gradients through checkpointed code equal those without it
(and torch's, for the same weights), in both variants; dropout recomputes the same mask;
kwargs, non-tensor arguments, inputs without grad, checkpoint_sequential; warning and error
texts as torch's; and the forward really keeps no intermediate activations."""
import gc
import warnings

import numpy as np
import pytest

import framework as fw
import framework.nn as nn
from framework.utils.checkpoint import CheckpointError, checkpoint, checkpoint_sequential

torch = pytest.importorskip("torch")
import torch.utils.checkpoint as tcp  # noqa: E402

MODES = [True, False]


def _mlp(lib, device=None):
    m = lib.nn.Sequential(lib.nn.Linear(6, 8), lib.nn.GELU(), lib.nn.Linear(8, 8),
                          lib.nn.Tanh(), lib.nn.Linear(8, 3))
    return m if device is None else m.to(device)


def _copy_weights(src_torch, dst):
    for tp_, fp_ in zip(src_torch.parameters(), dst.parameters()):
        fp_.data.copy_(fw.tensor(tp_.detach().numpy()))


def _grads(params):
    return [p.grad.detach().cpu().numpy() for p in params]


def _zero(params):
    for p in params:
        p.grad = None


def _run(model, x, ckpt, use_reentrant, seed=1, **kw):
    params = list(model.parameters()) + [x]
    _zero(params)
    fw.manual_seed(seed)
    out = checkpoint(model, x, use_reentrant=use_reentrant, **kw) if ckpt else model(x)
    out.sum().backward()
    return out.detach().cpu().numpy(), _grads(params)


@pytest.mark.parametrize("use_reentrant", MODES)
def test_mlp_matches_plain_and_torch(device, use_reentrant):
    torch.manual_seed(0)
    tm = _mlp(torch)
    m = _mlp(fw, device)
    _copy_weights(tm, m)
    xn = np.random.randn(4, 6).astype(np.float32)
    x = fw.tensor(xn, device=device, requires_grad=True)
    out_c, g_c = _run(m, x, True, use_reentrant)
    out_p, g_p = _run(m, x, False, use_reentrant)
    np.testing.assert_allclose(out_c, out_p, rtol=1e-6, atol=1e-6)
    for a, b in zip(g_c, g_p):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
    tx = torch.tensor(xn, requires_grad=True)
    tcp.checkpoint(tm, tx, use_reentrant=use_reentrant).sum().backward()
    for a, b in zip(g_c, [p.grad.numpy() for p in tm.parameters()] + [tx.grad.numpy()]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("use_reentrant", MODES)
def test_dropout_same_mask_in_recomputation(device, use_reentrant):
    fw.manual_seed(0)
    m = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.5), nn.GELU(), nn.Dropout(0.5)).to(device)
    x = fw.randn(4, 8, device=device, requires_grad=True)
    out_p, g_p = _run(m, x, False, use_reentrant)
    out_c, g_c = _run(m, x, True, use_reentrant)
    np.testing.assert_array_equal(out_c, out_p)
    for a, b in zip(g_c, g_p):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
    # without preserve_rng_state the recomputation draws other masks: other gradients
    _, g_n = _run(m, x, True, use_reentrant, preserve_rng_state=False)
    assert any(not np.allclose(a, b) for a, b in zip(g_n, g_p))
    # the RNG continues after checkpoint + backward as after the plain forward + backward
    _run(m, x, False, use_reentrant, seed=3)
    after_plain = fw.rand(3).tolist()
    _run(m, x, True, use_reentrant, seed=3)
    assert fw.rand(3).tolist() == after_plain


def test_kwargs_and_non_tensor_args():
    w = fw.randn(5, 5, requires_grad=True)
    x = fw.randn(3, 5, requires_grad=True)

    def fn(x, scale, op, *, bias=None, power=2):
        y = (x @ w) * scale
        y = y.relu() if op == "relu" else y.tanh()
        return y ** power + (0 if bias is None else bias)

    b = fw.randn(5, requires_grad=True)
    for use_reentrant in MODES:
        for kw in ({}, {"bias": b, "power": 3}):
            if kw and use_reentrant:
                continue
            _zero([w, x, b])
            fn(x, 0.5, "tanh", **kw).sum().backward()
            ref = [t.grad.clone() if t.grad is not None else None for t in (w, x, b)]
            _zero([w, x, b])
            checkpoint(fn, x, 0.5, "tanh", use_reentrant=use_reentrant, **kw).sum().backward()
            for r, t in zip(ref, (w, x, b)):
                assert (r is None) == (t.grad is None)
                if r is not None:
                    assert fw.allclose(r, t.grad, atol=1e-6)
    # kwargs with the reentrant variant: torch's ValueError
    with pytest.raises(ValueError) as e:
        checkpoint(fn, x, 0.5, "tanh", use_reentrant=True, bias=b, power=3)
    with pytest.raises(ValueError) as te:
        tcp.checkpoint(lambda x: x, torch.ones(1), use_reentrant=True, bias=1, power=3)
    assert str(e.value) == str(te.value) == "Unexpected keyword arguments: bias,power"


@pytest.mark.parametrize("use_reentrant", MODES)
def test_inputs_without_grad(use_reentrant):
    lin = nn.Linear(4, 4)
    x = fw.randn(2, 4)                          # no grad: only the weights get gradients
    y = fw.randn(2, 4, requires_grad=True)

    def fn(a, b):
        return lin(a).sigmoid() * b

    fn(x, y).sum().backward()
    ref = [lin.weight.grad.clone(), y.grad.clone()]
    _zero([lin.weight, lin.bias, y])
    checkpoint(fn, x, y, use_reentrant=use_reentrant).sum().backward()
    assert fw.allclose(ref[0], lin.weight.grad, atol=1e-6)
    assert fw.allclose(ref[1], y.grad, atol=1e-6)
    assert x.grad is None


def test_no_input_requires_grad_as_torch():
    # reentrant: the output does not require grad (the parameters get none) and torch's
    # warning; non-reentrant: the parameters get their gradients
    lin, tlin = nn.Linear(3, 3), torch.nn.Linear(3, 3)
    for ur in MODES:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = checkpoint(lin, fw.randn(2, 3), use_reentrant=ur)
        with warnings.catch_warnings(record=True) as tw:
            warnings.simplefilter("always")
            t_out = tcp.checkpoint(tlin, torch.randn(2, 3), use_reentrant=ur)
        assert out.requires_grad == t_out.requires_grad == (not ur)
        assert [str(m.message) for m in w] == [str(m.message) for m in tw]
        if ur:
            assert str(w[0].message) == ("None of the inputs have requires_grad=True. "
                                         "Gradients will be None")


@pytest.mark.parametrize("use_reentrant", MODES)
def test_checkpoint_sequential(device, use_reentrant):
    fw.manual_seed(0)
    model = nn.Sequential(*[m for _ in range(3) for m in (nn.Linear(4, 4), nn.GELU())])
    model = model.to(device)
    x = fw.randn(2, 4, device=device, requires_grad=True)
    params = list(model.parameters()) + [x]
    model(x).sum().backward()
    ref = _grads(params)
    for segments in (1, 2, 3):
        _zero(params)
        out = checkpoint_sequential(model, segments, x, use_reentrant=use_reentrant)
        out.sum().backward()
        for a, b in zip(_grads(params), ref):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
    _zero(params)
    checkpoint_sequential(list(model.children()), 2, x,
                          use_reentrant=use_reentrant).sum().backward()
    for a, b in zip(_grads(params), ref):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def _messages(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fn()
    return [str(m.message) for m in w]


def test_warning_and_error_texts_match_torch():
    x, tx = fw.ones(2, requires_grad=True), torch.ones(2, requires_grad=True)
    # use_reentrant not passed: torch's warning, then the reentrant variant
    assert _messages(lambda: checkpoint(fw.sin, x)) == \
        _messages(lambda: tcp.checkpoint(torch.sin, tx))
    seq, tseq = nn.Sequential(nn.Tanh()), torch.nn.Sequential(torch.nn.Tanh())
    assert _messages(lambda: checkpoint_sequential(seq, 1, x)) == \
        _messages(lambda: tcp.checkpoint_sequential(tseq, 1, tx))
    assert len(_messages(lambda: checkpoint(fw.sin, x, use_reentrant=False))) == 0

    def both(exc, fw_call, torch_call):
        with pytest.raises(exc) as a:
            fw_call()
        with pytest.raises(exc) as b:
            torch_call()
        assert str(a.value) == str(b.value)

    # autograd.grad through a reentrant checkpoint
    both(RuntimeError,
         lambda: fw.autograd.grad(checkpoint(fw.sin, x, use_reentrant=True).sum(), x),
         lambda: torch.autograd.grad(tcp.checkpoint(torch.sin, tx, use_reentrant=True).sum(),
                                     tx))
    # backward(inputs=...) too
    both(RuntimeError,
         lambda: checkpoint(fw.sin, x, use_reentrant=True).sum().backward(inputs=[x]),
         lambda: tcp.checkpoint(torch.sin, tx, use_reentrant=True).sum().backward(
             inputs=[tx]))
    # context_fn / debug with the reentrant variant
    both(ValueError, lambda: checkpoint(fw.sin, x, use_reentrant=True, debug=True),
         lambda: tcp.checkpoint(torch.sin, tx, use_reentrant=True, debug=True))
    both(ValueError, lambda: checkpoint(fw.sin, x, use_reentrant=False,
                                        determinism_check="bogus"),
         lambda: tcp.checkpoint(torch.sin, tx, use_reentrant=False,
                                determinism_check="bogus"))
    both(ValueError, lambda: checkpoint_sequential(seq, 1, x, use_reentrant=True, foo=1),
         lambda: tcp.checkpoint_sequential(tseq, 1, tx, use_reentrant=True, foo=1))
    # a function whose output needs no gradient, under the reentrant variant
    both(RuntimeError,
         lambda: checkpoint(lambda a: a.detach() * 2, x, use_reentrant=True).sum().backward(),
         lambda: tcp.checkpoint(lambda a: a.detach() * 2, tx, use_reentrant=True).sum()
         .backward())


def test_non_reentrant_grad_double_backward_and_nesting():
    w = fw.randn(4, 4, requires_grad=True)
    x = fw.randn(3, 4, requires_grad=True)

    def inner(a):
        return (a @ w).tanh()

    def outer(a):
        return checkpoint(inner, a, use_reentrant=False).sin() * a

    ref = fw.autograd.grad(outer(x).sum(), (x, w))
    out = checkpoint(outer, x, use_reentrant=False)
    got = fw.autograd.grad(out.sum(), (x, w), retain_graph=True)
    assert all(fw.allclose(a, b, atol=1e-6) for a, b in zip(ref, got))
    got2 = fw.autograd.grad(out.sum(), (x, w))     # recomputes again
    assert all(fw.allclose(a, b, atol=1e-6) for a, b in zip(ref, got2))


def test_non_reentrant_determinism_check():
    calls = []

    def fn(a):
        calls.append(1)
        n = 4 if len(calls) == 1 else 3          # recomputation saves another shape
        return (a[:n] * a[:n]).sum()

    x = fw.randn(4, requires_grad=True)
    out = checkpoint(fn, x, use_reentrant=False)
    with pytest.raises(CheckpointError) as e:
        out.backward()
    assert str(e.value).startswith("torch.utils.checkpoint: Recomputed values for the "
                                   "following tensors have different metadata than during "
                                   "the forward pass.\ntensor at position 0:\n")
    calls.clear()
    out = checkpoint(fn, x, use_reentrant=False, determinism_check="none")
    with pytest.raises(RuntimeError):     # (the shapes really differ: the formula fails)
        out.backward()


def test_autocast_state_recomputed():
    lin = nn.Linear(4, 4)
    x = fw.randn(2, 4, requires_grad=True)
    for ur in MODES:
        _zero([lin.weight, lin.bias, x])
        with fw.autocast("cpu", dtype=fw.bfloat16):
            out = lin(x)
        out.float().sum().backward()
        ref = [lin.weight.grad.clone(), x.grad.clone()]
        _zero([lin.weight, lin.bias, x])
        with fw.autocast("cpu", dtype=fw.bfloat16):
            out = checkpoint(lin, x, use_reentrant=ur)
        assert out.dtype == fw.bfloat16
        out.float().sum().backward()
        assert fw.equal(ref[0], lin.weight.grad) and fw.equal(ref[1], x.grad)


def _live_tensor_bytes():
    gc.collect()
    return sum(o.numel() * o.element_size() for o in gc.get_objects()
               if issubclass(type(o), fw.Tensor))


@pytest.mark.parametrize("use_reentrant", MODES)
def test_forward_keeps_no_activations(device, use_reentrant):
    """8 x (linear + gelu): without checkpoint the graph keeps the activations of every
    layer; with it only the output is new."""
    fw.manual_seed(0)
    layers = nn.Sequential(*[nn.Sequential(nn.Linear(16, 16), nn.GELU())
                             for _ in range(8)]).to(device)
    x = fw.randn(64, 16, device=device, requires_grad=True)
    out_bytes = 64 * 16 * 4

    def held(fn):
        if device == "cuda":
            fw.cuda.synchronize()
            gc.collect()
            before = fw.cuda.memory_allocated()
            y = fn()
            gc.collect()
            n = fw.cuda.memory_allocated() - before
        else:
            before = _live_tensor_bytes()
            y = fn()
            n = _live_tensor_bytes() - before
        y.sum().backward()
        return n

    plain = held(lambda: layers(x))
    ckpt = held(lambda: checkpoint(layers, x, use_reentrant=use_reentrant))
    assert plain >= 8 * out_bytes            # ~ two activations per layer
    assert ckpt <= out_bytes + 64            # the output only (and the RNG state)
    assert x.grad is not None and layers[0][0].weight.grad is not None
