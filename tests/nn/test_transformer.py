"""Transformer layers, stacks and nn.Transformer against PyTorch, with the same weights:
outputs, input gradients and every parameter gradient, with masks; state_dict keys and the
printed module tree."""
import copy
import math
import pickle
import warnings

import numpy as np
import pytest

import framework as fw
from tests.helpers import assert_close
from tests.nn.test_rnn import check, same_error

torch = pytest.importorskip("torch")


def _rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _pad_mask(batch, length, seed=0):
    """A bool key padding mask (True = padding) leaving each sequence at least one step,
    left aligned (padding at the end), as real batches are."""
    lengths = np.random.default_rng(seed).integers(1, length + 1, batch)
    return np.arange(length)[None, :] >= lengths[:, None]


def _causal(n):
    return np.triu(np.full((n, n), -np.inf, np.float32), 1)


def _call(masks=None, **kwargs):
    def call(T, m, *xs):
        kw = dict(kwargs)
        for name, arr in (masks or {}).items():
            kw[name] = T.tensor(arr, device=xs[0].device)
        return m(*xs, **kw)
    return call


def _pair(cls, *args, **kwargs):
    return getattr(fw.nn, cls)(*args, **kwargs), getattr(torch.nn, cls)(*args, **kwargs)


LAYER_OPTS = [
    {},
    {"norm_first": True, "activation": "gelu"},
    {"batch_first": True, "bias": False, "layer_norm_eps": 1e-3},
]
_CUDA = ["cuda"] if fw.cuda.is_available() else []
# every option on cpu, the first two on cuda (the interpreter runs each kernel slowly)
LAYERS = [("cpu", o) for o in LAYER_OPTS] + [(d, o) for d in _CUDA for o in LAYER_OPTS[:2]]


@pytest.mark.parametrize("device,opts", LAYERS, ids=[f"{d}-{o}" for d, o in LAYERS])
def test_encoder_layer(device, opts):
    f, t = _pair("TransformerEncoderLayer", 8, 2, 12, 0.0, **opts)
    src = _rand(2, 5, 8) if opts.get("batch_first") else _rand(5, 2, 8)
    check(f, t, [src], device)
    if device == "cuda":
        return
    kpm = _pad_mask(2, 5)
    check(f, t, [src], device, _call({"src_key_padding_mask": kpm}))
    check(f, t, [src], device, _call({"src_mask": _causal(5)}, is_causal=True))
    check(f, t, [src], device, _call({"src_mask": _causal(5), "src_key_padding_mask": kpm}))
    check(f, t, [src[0]], device, _call({"src_mask": _causal(src.shape[1])}))  # unbatched


@pytest.mark.parametrize("device,opts", LAYERS, ids=[f"{d}-{o}" for d, o in LAYERS])
def test_decoder_layer(device, opts):
    f, t = _pair("TransformerDecoderLayer", 8, 2, 12, 0.0, **opts)
    first = opts.get("batch_first")
    tgt = _rand(2, 4, 8) if first else _rand(4, 2, 8)
    mem = _rand(2, 5, 8, seed=1) if first else _rand(5, 2, 8, seed=1)
    check(f, t, [tgt, mem], device)
    if device == "cuda":
        return
    masks = {"tgt_mask": _causal(4), "memory_mask": np.random.default_rng(2).random((4, 5)) < 0.3,
             "tgt_key_padding_mask": _pad_mask(2, 4, 3),
             "memory_key_padding_mask": _pad_mask(2, 5, 4)}
    masks["memory_mask"][:, 0] = False
    check(f, t, [tgt, mem], device, _call(masks))
    check(f, t, [tgt, mem], device, _call({"tgt_mask": _causal(4)}, tgt_is_causal=True))


def test_activation_callables():
    for make in (lambda T: T.nn.GELU(), lambda T: T.nn.functional.silu,
                 lambda T: (lambda x: T.tanh(x) * 2)):
        f = fw.nn.TransformerEncoderLayer(8, 2, 12, 0.0, activation=make(fw))
        t = torch.nn.TransformerEncoderLayer(8, 2, 12, 0.0, activation=make(torch))
        assert f.activation_relu_or_gelu == t.activation_relu_or_gelu
        check(f, t, [_rand(3, 2, 8)], "cpu")
        f = fw.nn.TransformerDecoderLayer(8, 2, 12, 0.0, activation=make(fw))
        t = torch.nn.TransformerDecoderLayer(8, 2, 12, 0.0, activation=make(torch))
        check(f, t, [_rand(3, 2, 8), _rand(4, 2, 8, seed=1)], "cpu")
        assert repr(f) == repr(t)


def _stack(cls, layer_cls, n, norm=True, **opts):
    def make(T):
        layer = getattr(T.nn, layer_cls)(8, 2, 12, 0.0, **opts)
        extra = {"enable_nested_tensor": False} if cls == "TransformerEncoder" else {}
        return getattr(T.nn, cls)(layer, n, T.nn.LayerNorm(8) if norm else None, **extra)
    return make(fw), make(torch)


def test_encoder_stack(device):
    f, t = _stack("TransformerEncoder", "TransformerEncoderLayer", 2)
    check(f, t, [_rand(5, 2, 8)], device, _call({"mask": _causal(5)}))
    if device == "cuda":
        return
    check(f, t, [_rand(5, 2, 8)], device, _call({"src_key_padding_mask": _pad_mask(2, 5)}))
    f, t = _stack("TransformerEncoder", "TransformerEncoderLayer", 3, norm=False,
                  batch_first=True, norm_first=True)
    check(f, t, [_rand(2, 5, 8)], device, _call({"mask": _causal(5)}, is_causal=True))


def test_decoder_stack(device):
    f, t = _stack("TransformerDecoder", "TransformerDecoderLayer", 2 if device == "cpu" else 1)
    check(f, t, [_rand(4, 2, 8), _rand(5, 2, 8, seed=1)], device,
          _call({"tgt_mask": _causal(4), "memory_key_padding_mask": _pad_mask(2, 5)}))


def test_transformer(device):
    opts = dict(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=1,
                dim_feedforward=12, dropout=0.0)
    if device == "cuda":
        opts["num_encoder_layers"] = 1
    f, t = _pair("Transformer", **opts)
    src, tgt = _rand(5, 2, 8), _rand(4, 2, 8, seed=1)
    masks = {"tgt_mask": _causal(4), "src_key_padding_mask": _pad_mask(2, 5),
             "memory_key_padding_mask": _pad_mask(2, 5)}
    check(f, t, [src, tgt], device, _call(masks))
    if device == "cpu":
        f, t = _pair("Transformer", batch_first=True, norm_first=True, activation="gelu", **opts)
        check(f, t, [src.transpose(1, 0, 2), tgt.transpose(1, 0, 2)], device,
              _call({"tgt_mask": _causal(4)}, tgt_is_causal=True))
        check(f, t, [src[:, 0], tgt[:, 0]], device)      # unbatched


def test_square_subsequent_mask():
    got = fw.nn.Transformer.generate_square_subsequent_mask(4)
    want = torch.nn.Transformer.generate_square_subsequent_mask(4)
    assert got.dtype == fw.float32
    assert_close(got, want.numpy())
    got = fw.nn.Transformer.generate_square_subsequent_mask(3, dtype=fw.float64)
    assert got.dtype == fw.float64


def test_state_dict_repr_and_init():
    opts = dict(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=2,
                dim_feedforward=12)
    f, t = _pair("Transformer", **opts)
    assert [(k, tuple(v.shape)) for k, v in f.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in t.state_dict().items()]
    assert repr(f) == repr(t)
    for name, p in f.named_parameters():
        w = p.detach().numpy()
        if w.ndim > 1:          # xavier_uniform_: bound sqrt(6 / (fan_in + fan_out))
            bound = math.sqrt(6 / (w.shape[0] + w.shape[1]))
            assert np.abs(w).max() <= bound, name
            assert w.std() > 0.4 * bound / math.sqrt(3), name
    # the layers of a stack are independent copies
    enc = f.encoder.layers
    assert enc[0].linear1.weight is not enc[1].linear1.weight
    fl = fw.nn.TransformerEncoderLayer(8, 2, activation=fw.nn.GELU())
    tl = torch.nn.TransformerEncoderLayer(8, 2, activation=torch.nn.GELU())
    assert repr(fl) == repr(tl)     # a module activation is a submodule


def test_nested_tensor_warning_and_padding_zeros():
    """enable_nested_tensor warns as PyTorch; in inference with a padding mask PyTorch's
    nested-tensor path returns zeros at the padded positions, and so do we."""
    with warnings.catch_warnings(record=True) as w_torch:
        warnings.simplefilter("always")
        t_layer = torch.nn.TransformerEncoderLayer(8, 2, 12, 0.0)
        torch.nn.TransformerEncoder(t_layer, 2)
    with warnings.catch_warnings(record=True) as w_fw:
        warnings.simplefilter("always")
        f_layer = fw.nn.TransformerEncoderLayer(8, 2, 12, 0.0)
        fw.nn.TransformerEncoder(f_layer, 2)
    assert [str(m.message) for m in w_fw] == [str(m.message) for m in w_torch]
    f, t = _stack("TransformerEncoder", "TransformerEncoderLayer", 2, batch_first=True)
    f.use_nested_tensor = t.use_nested_tensor = True
    f.eval()
    t.eval()
    src, kpm = _rand(3, 5, 8), _pad_mask(3, 5, seed=2)
    check(f, t, [src], "cpu", _call({"src_key_padding_mask": kpm}))   # grad on: no zeros
    with torch.no_grad(), fw.no_grad():
        f_out = f(fw.tensor(src, dtype=fw.float32), src_key_padding_mask=fw.tensor(kpm))
        t_out = t(torch.tensor(src, dtype=torch.float32),
                  src_key_padding_mask=torch.tensor(kpm))
    assert t_out.is_nested is False
    assert_close(f_out, t_out.numpy(), rtol=1e-4, atol=1e-5)


def test_bad_input():
    def tr(src, tgt, **opts):
        def fn(T):
            m = T.nn.Transformer(8, 2, 1, 1, 12, 0.0, **opts)
            return m(T.zeros(src), T.zeros(tgt))
        return fn
    same_error(tr((5, 2, 8), (4, 3, 8)))
    same_error(tr((2, 5, 8), (3, 4, 8), batch_first=True))
    same_error(tr((5, 2, 8), (4, 2, 6)))
    same_error(lambda T: T.nn.TransformerEncoderLayer(8, 2, activation="tanh"))
    same_error(lambda T: T.nn.TransformerDecoderLayer(8, 2, activation="swish"))
    same_error(lambda T: T.nn.TransformerEncoderLayer(8, 3), AssertionError)


def test_load_torch_state_dict_copy_and_pickle():
    """A torch state_dict (through NumPy) loads strictly; deepcopy and pickle keep the
    model's function."""
    opts = dict(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
                dim_feedforward=12, dropout=0.0)
    f, t = _pair("Transformer", **opts)
    result = f.load_state_dict({k: fw.tensor(v.numpy()) for k, v in t.state_dict().items()},
                               strict=True)
    assert not result.missing_keys and not result.unexpected_keys
    src, tgt = _rand(5, 2, 8), _rand(4, 2, 8, seed=1)
    want = t(torch.tensor(src, dtype=torch.float32), torch.tensor(tgt, dtype=torch.float32))
    for model in (f, copy.deepcopy(f), pickle.loads(pickle.dumps(f))):
        got = model(fw.tensor(src, dtype=fw.float32), fw.tensor(tgt, dtype=fw.float32))
        assert_close(got, want.detach().numpy(), rtol=1e-4, atol=1e-5)
    for cls in ("LSTM", "GRU"):
        fr, tr = _pair(cls, 3, 4, num_layers=2, bidirectional=True)
        fr.load_state_dict({k: fw.tensor(v.numpy()) for k, v in tr.state_dict().items()})
        x = _rand(5, 2, 3)
        want = tr(torch.tensor(x, dtype=torch.float32))[0].detach().numpy()
        for model in (fr, copy.deepcopy(fr), pickle.loads(pickle.dumps(fr))):
            assert_close(model(fw.tensor(x, dtype=fw.float32))[0], want, rtol=1e-4, atol=1e-5)


def test_fast_path_choice_survives_torch_function_dispatch():
    """A layer's relu default is F.relu as bound when the class was made: whether
    ``__torch_function__`` dispatch (which rebinds F.relu to a wrapper) turned on before or
    after, the encoder still takes PyTorch's nested-tensor path (zeros where padded)."""
    def padded_rows_zero():
        layer = fw.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
        enc = fw.nn.TransformerEncoder(layer, 1).eval()
        src = fw.from_numpy(np.random.default_rng(0).standard_normal((2, 5, 8)).astype("f4"))
        pad = fw.tensor([[False, False, False, True, True], [False] * 4 + [True]])
        with fw.no_grad():
            out = enc(src, src_key_padding_mask=pad)
        return enc.use_nested_tensor and bool((out[0, 3:] == 0).all())
    was_active = fw.overrides._active
    assert padded_rows_zero()
    fw.overrides._activate()
    try:
        assert padded_rows_zero()
    finally:
        if not was_active:
            fw.overrides._deactivate()
    assert padded_rows_zero()
