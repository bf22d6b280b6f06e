"""torch.autograd.graph's register_multi_grad_hook and allow_mutation_on_saved_tensors,
and inference tensors (Tensor.is_inference and PyTorch's rules for them), against torch."""
import numpy as np
import pytest

import framework as fw

torch = pytest.importorskip("torch")

X, Y, Z = [0.5, 1.0, 2.0], [1.5, -1.0, 0.25], [3.0, 0.5, -2.0]


def _np(t):
    # a copy: a hook's gradient may become .grad, which later backwards add into
    return None if t is None else t.detach().cpu().numpy().copy()


def _leaves(T, device):
    kw = {"device": device} if T is fw else {}
    return [T.tensor(v, dtype=T.float64, requires_grad=True, **kw) for v in (X, Y, Z)]


def _multi_hook_calls(T, device, mode):
    a, b, c = _leaves(T, device)
    calls = []
    if mode == "all":
        fn = lambda grads: calls.append(tuple(_np(g) for g in grads))  # noqa: E731
    else:
        fn = lambda grad: calls.append(_np(grad))  # noqa: E731
    h = T.autograd.graph.register_multi_grad_hook([a, b, c], fn, mode=mode)
    (a * 2 + b * b).sum().backward()           # c not reached
    (a * b * c).sum().backward()               # all three
    (a.exp() * b).sum().backward(inputs=[a])   # b's gradient is not needed
    (c * 4).sum().backward()
    h.remove()
    (a * b * c).sum().backward()               # removed: no call
    return calls


@pytest.mark.parametrize("mode", ["all", "any"])
def test_multi_grad_hook_calls_as_torch(device, mode):
    ours = _multi_hook_calls(fw, device, mode)
    theirs = _multi_hook_calls(torch, None, mode)
    assert len(ours) == len(theirs) == 4
    for o, t in zip(ours, theirs):
        if mode == "all":
            assert [g is None for g in o] == [g is None for g in t]
            for go, gt in zip(o, t):
                if gt is not None:
                    np.testing.assert_allclose(go, gt, rtol=1e-12)
        else:
            np.testing.assert_allclose(o, t, rtol=1e-12)


def test_multi_grad_hook_bad_mode():
    a = fw.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match=r"Expects mode to be one of \('all', 'any'\) but "
                       "got some"):
        fw.autograd.graph.register_multi_grad_hook([a], print, mode="some")


def _mutated_grads(T, device):
    x, w, _ = _leaves(T, device)
    with T.autograd.graph.allow_mutation_on_saved_tensors():
        a = x.clone()
        y = (a.sin() * w).exp()     # saves a (sin), sin(a) and w (mul), y (exp)
        a.mul_(3)
        w.data.add_(1)              # a leaf changed behind autograd's back
        y.sum().backward()
        b = x * 2
        z = b.exp()                 # its output is saved: needed outside the block
    with pytest.raises(AssertionError, match="Trying to backward outside of the "
                       "'allow_mutation_on_saved_tensors' contextin which the graph was "
                       "originally recorded."):
        z.sum().backward()
    return _np(x.grad), _np(w.grad)


def test_allow_mutation_on_saved_tensors_as_torch(device):
    ours, theirs = _mutated_grads(fw, device), _mutated_grads(torch, None)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o, t, rtol=1e-12)


def test_mutation_of_saved_tensor_outside_the_block_raises(device):
    x = fw.tensor(X, requires_grad=True, device=device)
    a = x.clone()
    y = a.sin()
    a.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    with fw.autograd.graph.allow_mutation_on_saved_tensors():
        with pytest.raises(RuntimeError, match="contexts cannot be nested"):
            with fw.autograd.graph.allow_mutation_on_saved_tensors():
                pass


def _inference_flags(T, device):
    kw = {"device": device} if T is fw else {}
    x = T.ones(3, **kw)
    with T.inference_mode():
        y = x * 2
        v = x.view(3)             # a view of a normal tensor stays normal
        z = T.zeros(2, **kw)
        yv = y[1:]
        x.add_(1)                 # in-place on a normal tensor is fine in the mode
        y.add_(1)
        with T.inference_mode(False):
            n = x * 2
    return [y.is_inference(), v.is_inference(), z.is_inference(), yv.is_inference(),
            x.is_inference(), y.detach().is_inference(), y[0].is_inference(),
            (y * 2).is_inference(), n.is_inference(), T.is_inference(y), T.is_inference(x)]


def test_inference_tensor_flags_as_torch(device):
    assert _inference_flags(fw, device) == _inference_flags(torch, None)


def _inference_errors(T, device):
    kw = {"device": device} if T is fw else {}
    with T.inference_mode():
        y = T.ones(3, **kw) * 2
    w = T.ones(3, requires_grad=True, **kw)
    out = []
    for f in (lambda: y.add_(1), lambda: y[0].mul_(2), lambda: y.zero_(),
              lambda: y.requires_grad_(), lambda: y * w, lambda: w.exp() + y,
              lambda: y + w):
        try:
            f()
            out.append(None)
        except RuntimeError as e:
            out.append(str(e))
    return out


def test_inference_tensor_errors_as_torch(device):
    ours, theirs = _inference_errors(fw, device), _inference_errors(torch, None)
    assert ours == theirs
    assert theirs[0].startswith("Inplace update to inference tensor outside InferenceMode")
    assert theirs[4].startswith("Inference tensors cannot be saved for backward.")
    assert theirs[6] is None
