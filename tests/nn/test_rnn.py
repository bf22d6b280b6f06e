"""RNN, LSTM, GRU, their cells and nn.utils.rnn against PyTorch: outputs, final states,
input gradients and every parameter gradient, with torch's weights copied across."""
import math
import warnings

import numpy as np
import pytest

import framework as fw
from tests.nn.common import copy_state, to_np
from tests.helpers import assert_close

torch = pytest.importorskip("torch")

RTOL, ATOL = 1e-4, 1e-5


def _flat(out):
    if isinstance(out, (tuple, list)):        # PackedSequence is a tuple too
        return [o for x in out for o in _flat(x)]
    return [] if out is None else [out]


def check(fw_mod, t_mod, arrays, device, call=None, dtype=np.float32):
    """Runs ``call(T, module, *inputs)`` (default ``module(*inputs)``) with torch and with
    the framework on the same values and weights; compares every output, then the input
    and parameter gradients of a random cotangent on the float outputs."""
    call = call or (lambda T, m, *xs: m(*xs))
    copy_state(fw_mod, t_mod)
    fw_mod.to(device)
    t_in = [torch.tensor(np.asarray(a, dtype), requires_grad=True) for a in arrays]
    f_in = [fw.tensor(np.asarray(a, dtype), device=device, requires_grad=True)
            for a in arrays]
    t_out, f_out = _flat(call(torch, t_mod, *t_in)), _flat(call(fw, fw_mod, *f_in))
    assert len(t_out) == len(f_out)
    rng = np.random.default_rng(1)
    t_loss = f_loss = 0
    for to, fo in zip(t_out, f_out):
        assert tuple(fo.shape) == tuple(to.shape), (fo.shape, to.shape)
        assert str(fo.dtype).split(".")[-1] == str(to.dtype).split(".")[-1]
        assert_close(fo, to_np(to), rtol=RTOL, atol=ATOL)
        if to.is_floating_point() and to.requires_grad:
            g = rng.standard_normal(tuple(to.shape))
            t_loss = t_loss + (to * torch.tensor(g, dtype=to.dtype)).sum()
            f_loss = f_loss + (fo * fw.tensor(g, dtype=fo.dtype, device=device)).sum()
    t_loss.backward()
    f_loss.backward()
    for ta, fa in zip(t_in, f_in):
        assert (ta.grad is None) == (fa.grad is None)
        if ta.grad is not None:
            assert_close(fa.grad, to_np(ta.grad), rtol=RTOL, atol=ATOL)
    t_params = dict(t_mod.named_parameters())
    for name, p in fw_mod.named_parameters():
        assert p.grad is not None, name
        assert_close(p.grad, to_np(t_params[name].grad), rtol=RTOL, atol=ATOL)
    return f_out


def _rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _pair(cls, *args, **kwargs):
    return getattr(fw.nn, cls)(*args, **kwargs), getattr(torch.nn, cls)(*args, **kwargs)


# (module, options): the first three also run on cuda
CASES = [
    ("RNN", {}),
    ("LSTM", {"num_layers": 2, "bidirectional": True}),
    ("GRU", {"batch_first": True, "bias": False}),
    ("RNN", {"nonlinearity": "relu", "num_layers": 2, "batch_first": True}),
    ("RNN", {"bidirectional": True, "bias": False}),
    ("LSTM", {}),
    ("LSTM", {"proj_size": 2, "num_layers": 2, "bidirectional": True}),
    ("LSTM", {"batch_first": True, "bias": False, "proj_size": 3}),
    ("GRU", {}),
    ("GRU", {"num_layers": 3, "bidirectional": True}),
]


_CUDA = ["cuda"] if fw.cuda.is_available() else []
# every case on cpu; the first three on cuda too (the interpreter runs each step's kernels)
PADDED = [("cpu", c, o) for c, o in CASES] + [(d, c, o) for d in _CUDA for c, o in CASES[:3]]


@pytest.mark.parametrize("device,cls,opts", PADDED, ids=[f"{d}-{c}-{o}" for d, c, o in PADDED])
def test_recurrent_padded(device, cls, opts):
    steps, batch = (5, 3) if device == "cpu" else (3, 2)
    shape = (batch, steps, 4) if opts.get("batch_first") else (steps, batch, 4)
    check(*_pair(cls, 4, 5, **opts), [_rand(*shape)], device)


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_initial_state_and_unbatched(device, cls):
    # two bidirectional layers on cpu; one on cuda, where each step's kernels are interpreted
    layers = 2 if device == "cpu" else 1
    opts = {"num_layers": layers, "bidirectional": True}
    if cls == "LSTM":
        opts["proj_size"] = 2
    f, t = _pair(cls, 3, 4, **opts)
    out_size = 2 if cls == "LSTM" else 4
    h0 = _rand(2 * layers, 2, out_size, seed=1)
    arrays = [_rand(3, 2, 3), h0]
    if cls == "LSTM":
        arrays.append(_rand(2 * layers, 2, 4, seed=2))

        def call(T, m, x, h, c):
            return m(x, (h, c))
    else:
        def call(T, m, x, h):
            return m(x, h)
    check(f, t, arrays, device, call)
    # unbatched: (L, H_in) input and (D * layers, H_out) state
    check(f, t, [a[:, 0] for a in arrays], device, call)
    check(f, t, [arrays[0][:, 0]], device)


def test_float64_and_batch_one():
    f, t = _pair("LSTM", 3, 4, num_layers=2)
    t.double()
    f.double()
    out = check(f, t, [_rand(4, 1, 3)], "cpu", dtype=np.float64)
    assert out[0].dtype == fw.float64


def test_zero_batch():
    f, t = _pair("GRU", 4, 3, num_layers=2)
    out, h = check(f, t, [np.zeros((5, 0, 4))], "cpu")
    assert tuple(out.shape) == (5, 0, 3) and tuple(h.shape) == (2, 0, 3)


def _packed_call(lengths, total_length=None):
    def call(T, m, x, *state):
        rnn_utils = T.nn.utils.rnn
        packed = rnn_utils.pack_padded_sequence(x, lengths, enforce_sorted=False)
        hx = None if not state else (tuple(state) if len(state) == 2 else state[0])
        out, hn = m(packed, hx)
        padded, lens = rnn_utils.pad_packed_sequence(out, total_length=total_length)
        assert lens.tolist() == list(lengths)
        return out.data, out.batch_sizes, out.sorted_indices, padded, hn
    return call


PACKED = [("GRU", {"bidirectional": True}), ("LSTM", {"num_layers": 2, "bidirectional": True}),
          ("RNN", {}), ("LSTM", {"proj_size": 2, "bidirectional": True})]
PACKED = [("cpu", c, o) for c, o in PACKED] + [(d, c, o) for d in _CUDA for c, o in PACKED[:1]]


@pytest.mark.parametrize("device,cls,opts", PACKED, ids=[f"{d}-{c}-{o}" for d, c, o in PACKED])
def test_packed_sequence(device, cls, opts):
    f, t = _pair(cls, 4, 3, **opts)
    lengths = [2, 5, 3]
    check(f, t, [_rand(5, 3, 4)], device, _packed_call(lengths, total_length=6))
    layers = (2 if opts.get("bidirectional") else 1) * opts.get("num_layers", 1)
    state = [_rand(layers, 3, opts.get("proj_size", 3), seed=3)]
    if cls == "LSTM":
        state.append(_rand(layers, 3, 3, seed=4))
    check(f, t, [_rand(5, 3, 4)] + state, device, _packed_call(lengths))


def test_packed_output_type():
    f = fw.nn.LSTM(2, 3)
    packed = fw.nn.utils.rnn.pack_sequence([fw.randn(3, 2), fw.randn(2, 2)])
    out, (h, c) = f(packed)
    assert isinstance(out, fw.nn.utils.rnn.PackedSequence)
    assert out.batch_sizes is packed.batch_sizes
    assert tuple(out.data.shape) == (5, 3) and tuple(h.shape) == (1, 2, 3)


def test_dropout_between_layers():
    """With p=1 the second layer sees zeros; the first layer's final state is unaffected."""
    fw.manual_seed(0)
    f = fw.nn.GRU(3, 4, num_layers=2, dropout=1.0)
    x = _rand(5, 2, 3)
    out, h = f(fw.tensor(x, dtype=fw.float32))
    layer1, layer2 = torch.nn.GRU(3, 4), torch.nn.GRU(4, 4)
    with torch.no_grad():
        for name, p in f.named_parameters():
            target = layer1 if name.endswith("l0") else layer2
            getattr(target, name[:-1] + "0").copy_(torch.tensor(p.detach().numpy()))
        t_out1, t_h1 = layer1(torch.tensor(x, dtype=torch.float32))
        t_out2, t_h2 = layer2(torch.zeros(5, 2, 4))
    assert_close(out, t_out2.numpy(), rtol=RTOL, atol=ATOL)
    assert_close(h[0], t_h1[0].numpy(), rtol=RTOL, atol=ATOL)
    f.eval()    # no dropout in eval: both layers as torch's
    t = torch.nn.GRU(3, 4, num_layers=2, dropout=1.0).eval()
    check(f, t, [x], "cpu")


def test_parameters_init_and_repr():
    for cls, opts in CASES:
        f, t = _pair(cls, 4, 5, **opts)
        assert [(k, tuple(v.shape)) for k, v in f.state_dict().items()] == \
            [(k, tuple(v.shape)) for k, v in t.state_dict().items()]
        assert repr(f) == repr(t)
        assert [[tuple(w.shape) for w in ws] for ws in f.all_weights] == \
            [[tuple(w.shape) for w in ws] for ws in t.all_weights]
    f = fw.nn.LSTM(10, 400)
    w = f.weight_hh_l0.detach().numpy()
    bound = 1 / math.sqrt(400)
    assert w.min() >= -bound and w.max() <= bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.02 * bound    # U(-b, b) has std b/sqrt(3)
    assert repr(fw.nn.RNN(4, 3, nonlinearity="relu", bias=False)) == "RNN(4, 3, bias=False)"


def test_cells(device):
    for cls, opts in [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu", "bias": False}),
                      ("LSTMCell", {}), ("GRUCell", {}), ("GRUCell", {"bias": False})]:
        if device == "cuda" and opts:
            continue
        f, t = _pair(cls, 4, 3, **opts)
        assert repr(f) == repr(t)
        check(f, t, [_rand(2, 4)], device)
        check(f, t, [_rand(4)], device)
        if cls == "LSTMCell":
            def call(T, m, x, h, c):
                return m(x, (h, c))
            check(f, t, [_rand(2, 4), _rand(2, 3, seed=1), _rand(2, 3, seed=2)], device, call)
            check(f, t, [_rand(4), _rand(3, seed=1), _rand(3, seed=2)], device, call)
        else:
            check(f, t, [_rand(2, 4), _rand(2, 3, seed=1)], device)
            check(f, t, [_rand(4), _rand(3, seed=1)], device)
    f, t = _pair("GRUCell", 4, 3)
    check(f, t, [np.zeros((0, 4))], "cpu")


def same_error(fn, exc=RuntimeError):
    with pytest.raises(exc) as want:
        fn(torch)
    with pytest.raises(exc) as got:
        fn(fw)
    assert str(got.value).replace("framework.", "torch.") == str(want.value)


def test_bad_input():
    def run(cls, x_shape, *state, dtype=None, **opts):
        def fn(T):
            T.manual_seed(0)
            m = getattr(T.nn, cls)(4, 3, 2, **opts)
            x = T.zeros(x_shape, dtype=dtype or T.float32)
            hx = tuple(T.zeros(s) for s in state)
            return m(x, hx[0] if len(hx) == 1 else (hx if hx else None))
        return fn
    same_error(run("RNN", (5, 2, 5)))                     # input.size(-1) must be ...
    same_error(run("GRU", (5, 2, 4), (2, 3, 3)))          # Expected hidden size ...
    same_error(run("LSTM", (5, 2, 4), (2, 2, 3), (2, 2, 2)))
    same_error(run("LSTM", (5, 2, 4), (2, 2), (2, 2, 3)))
    same_error(run("RNN", (5, 2, 4), (2, 3)))             # batched input, 2-D hx
    same_error(run("GRU", (5, 4), (2, 1, 3)))             # unbatched input, 3-D hx
    same_error(run("RNN", (5, 2, 4, 1)), ValueError)
    same_error(run("LSTM", (5, 2, 4, 1)), ValueError)
    same_error(run("GRU", (0, 2, 4)))
    same_error(lambda T: T.nn.GRU(4, 3)(T.zeros(5, 2, 4, dtype=T.float64)), ValueError)
    same_error(lambda T: T.nn.GRU(4, 3, proj_size=2), ValueError)
    same_error(lambda T: T.nn.LSTM(4, 3, proj_size=3), ValueError)
    same_error(lambda T: T.nn.LSTM(4, 3, dropout=1.5), ValueError)
    same_error(lambda T: T.nn.RNN(4, 3, nonlinearity="sigmoid"), ValueError)
    same_error(lambda T: T.nn.RNN(4, 0), ValueError)
    same_error(lambda T: T.nn.RNN(4, 3, bias=1), TypeError)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fw.nn.LSTM(4, 3, dropout=0.5)
    assert "non-zero dropout expects num_layers greater than 1" in str(w[0].message)
    for cls in ("RNNCell", "GRUCell", "LSTMCell"):
        same_error(lambda T: getattr(T.nn, cls)(4, 3)(T.zeros(2, 5)))
        same_error(lambda T: getattr(T.nn, cls)(4, 3)(T.zeros(2, 4, 1)), ValueError)
    same_error(lambda T: T.nn.GRUCell(4, 3)(T.zeros(2, 4), T.zeros(3, 3)))
    same_error(lambda T: T.nn.RNNCell(4, 3)(T.zeros(2, 4), T.zeros(2, 2)))
    same_error(lambda T: T.nn.LSTMCell(4, 3)(T.zeros(2, 4), (T.zeros(2, 3), T.zeros(2, 2))))


# -- nn.utils.rnn ------------------------------------------------------------------------------

def test_pack_and_pad(device):
    x = _rand(5, 3, 2)
    R = fw.nn.utils.rnn
    for lengths, sort, bf in (([5, 3, 2], True, False), ([2, 5, 3], False, True)):
        xx = x.transpose(1, 0, 2) if bf else x
        tp = torch.nn.utils.rnn.pack_padded_sequence(torch.tensor(xx), lengths, bf, sort)
        fp = R.pack_padded_sequence(fw.tensor(xx, device=device), fw.tensor(lengths), bf, sort)
        assert_close(fp.data, tp.data.numpy())
        assert fp.batch_sizes.tolist() == tp.batch_sizes.tolist()
        assert fp.batch_sizes.device.type == "cpu" and fp.batch_sizes.dtype == fw.int64
        for name in ("sorted_indices", "unsorted_indices"):
            want, got = getattr(tp, name), getattr(fp, name)
            assert (got is None) if want is None else got.tolist() == want.tolist()
        for kw in ({}, {"batch_first": True, "padding_value": -2.0, "total_length": 7}):
            ta, tl = torch.nn.utils.rnn.pad_packed_sequence(tp, **kw)
            fa, fl = R.pad_packed_sequence(fp, **kw)
            assert_close(fa, ta.numpy())
            assert fl.tolist() == tl.tolist() and fl.dtype == fw.int64
    moved = fp.to(device).double()
    assert moved.data.dtype == fw.float64 and moved.sorted_indices.device == moved.data.device
    assert moved.is_cuda == (device == "cuda")
    assert fp._fields == ("data", "batch_sizes", "sorted_indices", "unsorted_indices")


def test_pack_pad_gradients(device):
    """Packing and unpacking are differentiable (index_select on both sides)."""
    R = fw.nn.utils.rnn
    x = fw.tensor(_rand(4, 3, 2), dtype=fw.float32, device=device, requires_grad=True)
    tx = torch.tensor(_rand(4, 3, 2), dtype=torch.float32, requires_grad=True)
    g = _rand(3, 5, 2, seed=5)
    out = R.pad_packed_sequence(R.pack_padded_sequence(x, [2, 4, 1], enforce_sorted=False),
                                batch_first=True, total_length=5)[0]
    t_out = torch.nn.utils.rnn.pad_packed_sequence(
        torch.nn.utils.rnn.pack_padded_sequence(tx, [2, 4, 1], enforce_sorted=False),
        batch_first=True, total_length=5)[0]
    (out * fw.tensor(g, dtype=fw.float32, device=device)).sum().backward()
    (t_out * torch.tensor(g, dtype=torch.float32)).sum().backward()
    assert_close(out, t_out.detach().numpy())
    assert_close(x.grad, tx.grad.numpy())


def test_pad_sequence_family(device):
    R, TR = fw.nn.utils.rnn, torch.nn.utils.rnn
    seqs = [_rand(n, 2, seed=n) for n in (2, 4, 1)]
    for side in ("left", "right"):
        for bf in (True, False):
            want = TR.pad_sequence([torch.tensor(s) for s in seqs], bf, 7.0, side)
            got = R.pad_sequence([fw.tensor(s, device=device) for s in seqs], bf, 7.0, side)
            assert_close(got, want.numpy())
    packed = R.pack_sequence([fw.tensor(s, device=device) for s in seqs], enforce_sorted=False)
    t_packed = TR.pack_sequence([torch.tensor(s) for s in seqs], enforce_sorted=False)
    assert_close(packed.data, t_packed.data.numpy())
    for got, s in zip(R.unpack_sequence(packed), seqs):
        assert_close(got, s)
    padded = R.pad_sequence([fw.tensor(s) for s in seqs])
    for got, s in zip(R.unpad_sequence(padded, fw.tensor([2, 4, 1])), seqs):
        assert_close(got, s)
    assert R.invert_permutation(fw.tensor([2, 0, 1])).tolist() == [1, 2, 0]
    assert R.invert_permutation(None) is None


def test_utils_bad_input():
    x = np.zeros((5, 3, 2), np.float32)

    def pack(lengths, **kw):
        return lambda T: T.nn.utils.rnn.pack_padded_sequence(T.tensor(x), lengths, **kw)
    same_error(pack([5, 2, 3]))
    same_error(pack([5, 3, 0]))
    same_error(pack([5, 3]))
    same_error(pack([5, 3, 2], batch_first=True))
    same_error(lambda T: T.nn.utils.rnn.pack_padded_sequence(T.zeros(0, 2, 2), [0, 0]))
    same_error(lambda T: T.nn.utils.rnn.pad_sequence([]))
    same_error(lambda T: T.nn.utils.rnn.pad_sequence([T.ones(2, 3), T.ones(3, 4)]))
    same_error(lambda T: T.nn.utils.rnn.pad_sequence([T.ones(2)], padding_side="middle"))
    same_error(lambda T: T.nn.utils.rnn.pad_packed_sequence(
        T.nn.utils.rnn.pack_padded_sequence(T.tensor(x), [5, 3, 2]), total_length=4),
        ValueError)
    with pytest.raises(RuntimeError, match="at most the padded sequence length"):
        fw.nn.utils.rnn.pack_padded_sequence(fw.tensor(x), [6, 3, 2])
    with pytest.raises(RuntimeError, match="1D CPU int64 tensor"):
        fw.nn.utils.rnn.pack_padded_sequence(fw.tensor(x), fw.tensor([[5, 3, 2]]))


@pytest.mark.parametrize("cls", ["LSTM", "GRU"])
def test_double_backward(cls):
    """A gradient penalty (create_graph=True) through the recurrence, float64."""
    f, t = _pair(cls, 3, 4)
    f.double()
    t.double()
    copy_state(f, t)
    x = _rand(4, 2, 3)
    tx, fx = torch.tensor(x, requires_grad=True), fw.tensor(x, requires_grad=True)
    tg, = torch.autograd.grad((t(tx)[0] ** 2).sum(), tx, create_graph=True)
    fg, = fw.autograd.grad((f(fx)[0] ** 2).sum(), fx, create_graph=True)
    (tg ** 2).sum().backward()
    (fg ** 2).sum().backward()
    assert_close(fg, tg.detach().numpy(), rtol=1e-10, atol=1e-12)
    assert_close(fx.grad, tx.grad.numpy(), rtol=1e-10, atol=1e-12)
    t_params = dict(t.named_parameters())
    for name, p in f.named_parameters():
        assert_close(p.grad, t_params[name].grad.numpy(), rtol=1e-10, atol=1e-12)
