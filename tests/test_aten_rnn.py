"""framework.lstm / gru / rnn_tanh / rnn_relu and their *_cell forms against PyTorch's
ATen functions: outputs and gradients with the same weights, in float64."""
import numpy as np
import pytest

import framework as fw
from helpers import to_np

torch = pytest.importorskip("torch")

T, B, I, H, P = 3, 2, 3, 4, 2
GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}


def _pair(arr, device):
    """The same float64 leaf in both frameworks."""
    return (fw.tensor(arr, dtype=fw.float64, device=device, requires_grad=True),
            torch.tensor(arr, dtype=torch.float64, requires_grad=True))


def _params(rng, gates, layers, bidir, bias, proj, device):
    out_f, out_t = [], []
    dirs = 2 if bidir else 1
    h_out = proj or H
    for layer in range(layers):
        in_size = I if layer == 0 else h_out * dirs
        for _ in range(dirs):
            shapes = [(gates * H, in_size), (gates * H, h_out)]
            if bias:
                shapes += [(gates * H,), (gates * H,)]
            if proj:
                shapes.append((proj, H))
            for s in shapes:
                f, t = _pair(rng.uniform(-0.6, 0.6, s), device)
                out_f.append(f)
                out_t.append(t)
    return out_f, out_t


def _check(outs_f, outs_t, leaves_f, leaves_t):
    for a, b in zip(outs_f, outs_t):
        np.testing.assert_allclose(to_np(a), b.detach().numpy(), rtol=1e-10, atol=1e-12)
    loss_f = sum((o * (k + 1.5)).sin().sum() for k, o in enumerate(outs_f))
    loss_t = sum((o * (k + 1.5)).sin().sum() for k, o in enumerate(outs_t))
    loss_f.backward()
    loss_t.backward()
    for a, b in zip(leaves_f, leaves_t):
        np.testing.assert_allclose(to_np(a.grad), b.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name,layers,bidir,bias,batch_first,proj", [
    ("lstm", 2, True, True, False, 0),
    ("lstm", 1, False, False, True, P),
    ("gru", 2, False, True, True, 0),
    ("gru", 1, True, False, False, 0),
    ("rnn_tanh", 1, True, True, False, 0),
    ("rnn_relu", 2, False, True, True, 0),
])
def test_sequence_functions(device, name, layers, bidir, bias, batch_first, proj):
    rng = np.random.default_rng(0)
    dirs = 2 if bidir else 1
    pf, pt = _params(rng, GATES[name], layers, bidir, bias, proj, device)
    xf, xt = _pair(rng.standard_normal((B, T, I) if batch_first else (T, B, I)), device)
    hf, ht = _pair(rng.standard_normal((layers * dirs, B, proj or H)), device)
    leaves_f, leaves_t = [xf, hf] + pf, [xt, ht] + pt
    if name == "lstm":
        cf, ct = _pair(rng.standard_normal((layers * dirs, B, H)), device)
        hx_f, hx_t = (hf, cf), (ht, ct)
        leaves_f.append(cf)
        leaves_t.append(ct)
    else:
        hx_f, hx_t = hf, ht
    args = (bias, layers, 0.0, True, bidir, batch_first)
    outs_f = getattr(fw, name)(xf, hx_f, pf, *args)
    outs_t = getattr(torch, name)(xt, hx_t, pt, *args)
    assert isinstance(outs_f, tuple) and len(outs_f) == len(outs_t)
    _check(outs_f, outs_t, leaves_f, leaves_t)


@pytest.mark.parametrize("name", ["lstm", "gru"])
def test_packed_overload(device, name):
    rng = np.random.default_rng(1)
    pf, pt = _params(rng, GATES[name], 1, True, True, 0, device)
    lengths = [3, 2, 1]
    x = rng.standard_normal((T, len(lengths), I))
    packed = torch.nn.utils.rnn.pack_padded_sequence(torch.tensor(x), lengths)
    df, dt = _pair(packed.data.numpy(), device)
    bs_t = packed.batch_sizes
    bs_f = fw.tensor(bs_t.numpy())
    hf, ht = _pair(rng.standard_normal((2, len(lengths), H)), device)
    leaves_f, leaves_t = [df, hf] + pf, [dt, ht] + pt
    if name == "lstm":
        cf, ct = _pair(rng.standard_normal((2, len(lengths), H)), device)
        hx_f, hx_t = (hf, cf), (ht, ct)
        leaves_f.append(cf)
        leaves_t.append(ct)
    else:
        hx_f, hx_t = hf, ht
    outs_f = getattr(fw, name)(df, bs_f, hx_f, pf, True, 1, 0.0, False, True)
    outs_t = getattr(torch, name)(dt, bs_t, hx_t, pt, True, 1, 0.0, False, True)
    _check(outs_f, outs_t, leaves_f, leaves_t)


@pytest.mark.parametrize("name", ["lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell"])
@pytest.mark.parametrize("bias", [True, False])
def test_cells(device, name, bias):
    rng = np.random.default_rng(2)
    gates = GATES[name[:-5]]
    xf, xt = _pair(rng.standard_normal((B, I)), device)
    hf, ht = _pair(rng.standard_normal((B, H)), device)
    wf, wt = _params(rng, gates, 1, False, bias, 0, device)
    leaves_f, leaves_t = [xf, hf] + wf, [xt, ht] + wt
    if name == "lstm_cell":
        cf, ct = _pair(rng.standard_normal((B, H)), device)
        hx_f, hx_t = (hf, cf), (ht, ct)
        leaves_f.append(cf)
        leaves_t.append(ct)
    else:
        hx_f, hx_t = hf, ht
    out_f = getattr(fw, name)(xf, hx_f, *wf)
    out_t = getattr(torch, name)(xt, hx_t, *wt)
    if name == "lstm_cell":
        assert isinstance(out_f, tuple) and len(out_f) == 2
    else:
        out_f, out_t = (out_f,), (out_t,)
    _check(out_f, out_t, leaves_f, leaves_t)


def test_bad_input():
    x = fw.zeros(T, B, I)
    h = fw.zeros(1, B, H)
    w = [fw.zeros(4 * H, I), fw.zeros(4 * H, H), fw.zeros(4 * H)]
    with pytest.raises(RuntimeError, match="lstm expects two hidden states"):
        fw.lstm(x, (h,), w, False, 1, 0.0, False, False, False)
    with pytest.raises(RuntimeError, match="expected 4 weights"):
        fw.lstm(x, (h, h), w, True, 1, 0.0, False, False, False)
    with pytest.raises(RuntimeError, match="expected hidden size"):
        fw.gru(x, fw.zeros(2, B, H), [fw.zeros(3 * H, I), fw.zeros(3 * H, H)], False, 1, 0.0,
               False, False, False)
    with pytest.raises(TypeError, match="9 positional arguments"):
        fw.rnn_tanh(x, h)
    with pytest.raises(RuntimeError, match="inconsistent input_size: got 3 expected 5"):
        fw.rnn_tanh_cell(fw.zeros(B, I), fw.zeros(B, H), fw.zeros(H, 5), fw.zeros(H, H))
    with pytest.raises(RuntimeError, match="lstm_cell expects two hidden states"):
        fw.lstm_cell(fw.zeros(B, I), (fw.zeros(B, H),), fw.zeros(4 * H, I),
                     fw.zeros(4 * H, H))
