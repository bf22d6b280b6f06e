"""scaled_dot_product_attention, multi_head_attention_forward and nn.MultiheadAttention
against PyTorch: outputs, attention weights and every gradient, masks of each kind."""
import math
import warnings

import numpy as np
import pytest

import framework as fw
from tests.helpers import assert_close
from tests.nn.test_rnn import check, same_error

torch = pytest.importorskip("torch")


def _rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _mask(shape, p, seed=0, keep_first=True):
    m = np.random.default_rng(seed).random(shape) < p
    if keep_first:
        m[..., 0] = True       # every row keeps one position
    return m


class _Fn:
    """A module-less ``check`` target: no parameters to copy."""

    def state_dict(self):
        return {}

    def named_parameters(self):
        return []

    def to(self, device):
        return self


def _sdpa(**kw):
    def call(T, _, q, k, v):
        kw2 = dict(kw)
        if isinstance(kw2.get("attn_mask"), np.ndarray):
            kw2["attn_mask"] = T.tensor(kw2["attn_mask"], device=q.device)
        return T.nn.functional.scaled_dot_product_attention(q, k, v, **kw2)
    return call


SDPA = [
    ((2, 3, 5, 4), (2, 3, 7, 4), (2, 3, 7, 6), {}),
    ((2, 3, 5, 4), (2, 3, 7, 4), (2, 3, 7, 6), {"is_causal": True}),
    ((2, 3, 7, 4), (2, 3, 5, 4), (2, 3, 5, 6), {"is_causal": True, "scale": 0.3}),
    ((2, 3, 5, 4), (2, 3, 7, 4), (2, 3, 7, 6), {"attn_mask": _mask((5, 7), 0.6)}),
    ((2, 3, 5, 4), (2, 3, 7, 4), (2, 3, 7, 6), {"attn_mask": _mask((2, 1, 5, 7), 0.5)}),
    ((2, 3, 5, 4), (2, 3, 7, 4), (2, 3, 7, 6),
     {"attn_mask": _rand(3, 5, 7, seed=3).astype(np.float32)}),
    ((2, 6, 5, 4), (2, 2, 7, 4), (2, 3, 7, 6), {"enable_gqa": True}),
    ((5, 4), (7, 4), (7, 6), {}),
    ((1, 5, 4), (1, 7, 4), (1, 7, 6), {"scale": 2.0}),
    ((2, 1, 5, 4), (3, 7, 4), (3, 7, 6), {}),             # broadcast batch dimensions
    ((0, 3, 5, 4), (0, 3, 7, 4), (0, 3, 7, 6), {}),
    ((2, 3, 0, 4), (2, 3, 7, 4), (2, 3, 7, 6), {}),
]


@pytest.mark.parametrize("q,k,v,kw", SDPA, ids=[str(i) for i in range(len(SDPA))])
def test_sdpa(device, q, k, v, kw):
    if device == "cuda" and len(q) == 4 and q[1] == 3 and q[0] == 2:
        q, k, v = (s[:1] + (1,) + s[2:] for s in (q, k, v))     # fewer kernels on cuda
        if "attn_mask" in kw and kw["attn_mask"].ndim >= 3:
            kw = {"attn_mask": kw["attn_mask"][..., :1, :, :]}
    check(_Fn(), _Fn(), [_rand(*q), _rand(*k, seed=1), _rand(*v, seed=2)], device, _sdpa(**kw))


def test_sdpa_fully_masked_rows(device):
    """A row with no position allowed gives zeros and zero gradients, as torch's CPU path."""
    mask = _mask((4, 6), 0.5)
    mask[1] = False
    fmask = np.where(mask, 0.0, -np.inf).astype(np.float32)
    for m in (mask, fmask):
        out = check(_Fn(), _Fn(), [_rand(2, 4, 3), _rand(2, 6, 3, seed=1), _rand(2, 6, 5, seed=2)],
                    device, _sdpa(attn_mask=m))[0]
        assert not np.isnan(out.detach().cpu().numpy()).any()
        assert (out[:, 1].detach().cpu().numpy() == 0).all()
    check(_Fn(), _Fn(), [_rand(1, 2, 3), _rand(1, 0, 3, seed=1), _rand(1, 0, 5, seed=2)],
          "cpu", _sdpa())


def test_sdpa_float64_and_mask_grad():
    q, k, v = (torch.tensor(_rand(2, 4, 3, seed=s), requires_grad=True) for s in range(3))
    m = torch.tensor(_rand(4, 4, seed=9), requires_grad=True)
    fq, fk, fv, fm = (fw.tensor(t.detach().numpy(), requires_grad=True) for t in (q, k, v, m))
    out = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m)
    fout = fw.nn.functional.scaled_dot_product_attention(fq, fk, fv, attn_mask=fm)
    assert fout.dtype == fw.float64
    out.sum().backward()
    fout.sum().backward()
    assert_close(fout, out.detach().numpy())
    for a, b in ((fq, q), (fk, k), (fv, v), (fm, m)):
        assert_close(a.grad, b.grad.numpy())


def test_sdpa_half(device):
    """float16 inputs are computed in float32 and returned as float16, as torch does."""
    q, k, v = (_rand(1, 2, 4, 5, seed=s).astype(np.float16) for s in range(3))
    want = torch.nn.functional.scaled_dot_product_attention(
        *(torch.tensor(a) for a in (q, k, v)), is_causal=True)
    got = fw.nn.functional.scaled_dot_product_attention(
        *(fw.tensor(a, device=device) for a in (q, k, v)), is_causal=True)
    assert got.dtype == fw.float16
    assert_close(got, want.float().numpy(), rtol=1e-3, atol=1e-3)


def test_sdpa_dropout():
    F = fw.nn.functional
    q, k = fw.zeros(64, 1, 200), fw.zeros(64, 200, 200)
    v = fw.ones(64, 200, 1)
    assert (F.scaled_dot_product_attention(q, k, v, dropout_p=1.0).numpy() == 0).all()
    fw.manual_seed(3)
    out = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5).numpy()
    # uniform weights 1/200, kept ones scaled by 2: each value is 2 * kept / 200
    kept = out * 100
    assert np.allclose(kept, np.round(kept), atol=1e-3)
    assert abs(out.mean() - 1.0) < 0.02 and 0.05 < out.std() < 0.1
    fw.manual_seed(3)
    again = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5).numpy()
    assert (again == out).all()


def test_sdpa_bad_input():
    def sdpa(q, k, v, dtype=None, **kw):
        def fn(T):
            dt = getattr(T, dtype) if dtype else T.float32
            args = [T.zeros(s, dtype=d) for s, d in ((q, T.float32), (k, dt), (v, T.float32))]
            kw2 = dict(kw)
            if "attn_mask" in kw2:
                kw2["attn_mask"] = T.ones(4, 6, dtype=getattr(T, kw2["attn_mask"]))
            return T.nn.functional.scaled_dot_product_attention(*args, **kw2)
        return fn
    q, k, v = (2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7)
    same_error(sdpa(q, k, v, attn_mask="bool", is_causal=True))
    same_error(sdpa(q, (2, 3, 6, 4), v))
    same_error(sdpa(q, k, (2, 3, 5, 7)))
    same_error(sdpa(q, k, v, dtype="float64"))
    same_error(sdpa((4,), (4,), (4,)))
    same_error(sdpa(q, k, v, attn_mask="int64"))
    same_error(sdpa(q, k, v, attn_mask="float64"))
    same_error(sdpa((2, 4, 4, 5), k, v, enable_gqa=True))
    same_error(sdpa((2, 6, 4, 5), k, v))                   # heads differ, no enable_gqa
    same_error(sdpa(q, k, v, dropout_p=1.5))
    same_error(sdpa((4, 5), (6, 5), (6, 7), enable_gqa=True), IndexError)


# -- multi-head attention ----------------------------------------------------------------------

def _mha(kwargs=None, masks=None, self_attn=False):
    """A call running the module on (query, key, value) [with the same tensor for all three
    when ``self_attn``] and NumPy masks made into tensors on the input's device."""
    def call(T, m, q, k=None, v=None):
        kw = dict(kwargs or {})
        for name, arr in (masks or {}).items():
            kw[name] = T.tensor(arr, device=q.device)
        if self_attn:
            return m(q, q, q, **kw)
        return m(q, k, v, **kw)
    return call


MHA = [
    ({}, {}),
    ({}, {"need_weights": False}),
    ({}, {"average_attn_weights": False}),
    ({"add_bias_kv": True, "add_zero_attn": True}, {}),
    ({"add_bias_kv": True}, {"need_weights": False}),
    ({"kdim": 4, "vdim": 5, "bias": False}, {}),
    ({"kdim": 4, "vdim": 5}, {"need_weights": False}),
    ({"batch_first": True}, {}),
    ({"batch_first": True, "num_heads": 3}, {"need_weights": False}),
]


@pytest.mark.parametrize("opts,kw", MHA, ids=[f"{o}-{k}" for o, k in MHA])
def test_multihead_attention(device, opts, kw):
    opts = dict(opts)
    heads = opts.pop("num_heads", 2)
    f = fw.nn.MultiheadAttention(6, heads, **opts)
    t = torch.nn.MultiheadAttention(6, heads, **opts)
    kd, vd = opts.get("kdim", 6), opts.get("vdim", 6)
    lead = (lambda n: (2, n)) if opts.get("batch_first") else (lambda n: (n, 2))
    arrays = [_rand(*lead(3), 6), _rand(*lead(5), kd, seed=1), _rand(*lead(5), vd, seed=2)]
    check(f, t, arrays, device, _mha(kw))


MASKS = [
    {"key_padding_mask": ~_mask((2, 5), 0.6)},
    {"attn_mask": ~_mask((3, 5), 0.6)},
    {"attn_mask": ~_mask((4, 3, 5), 0.6), "key_padding_mask": ~_mask((2, 5), 0.7, seed=1)},
    {"attn_mask": np.where(_mask((3, 5), 0.6), 0.5, -2.0).astype(np.float32)},
    {"key_padding_mask": np.where(_mask((2, 5), 0.6), 0.0, -np.inf).astype(np.float32),
     "attn_mask": _rand(3, 5, seed=4).astype(np.float32)},
]


@pytest.mark.parametrize("masks", MASKS, ids=[str(i) for i in range(len(MASKS))])
@pytest.mark.parametrize("need_weights", [True, False])
def test_multihead_attention_masks(device, masks, need_weights):
    if device == "cuda" and masks is not MASKS[2]:
        masks = {k: v for k, v in masks.items() if k == "key_padding_mask"} or masks
    f, t = fw.nn.MultiheadAttention(6, 2), torch.nn.MultiheadAttention(6, 2)
    arrays = [_rand(3, 2, 6), _rand(5, 2, 6, seed=1), _rand(5, 2, 6, seed=2)]
    check(f, t, arrays, device, _mha({"need_weights": need_weights}, masks))


def test_multihead_attention_self_causal_unbatched(device):
    f, t = fw.nn.MultiheadAttention(6, 3, batch_first=True), \
        torch.nn.MultiheadAttention(6, 3, batch_first=True)
    causal = np.triu(np.full((4, 4), -np.inf, np.float32), 1)
    for kw in ({}, {"need_weights": False}):
        check(f, t, [_rand(2, 4, 6)], device, _mha(kw, self_attn=True))
        check(f, t, [_rand(2, 4, 6)], device,
              _mha(dict(kw, is_causal=True), {"attn_mask": causal}, self_attn=True))
        if device == "cuda" and kw:
            continue       # the interpreter is slow: the unbatched cases once on cuda
        # unbatched (L, E): batch_first does not apply
        check(f, t, [_rand(4, 6)], device, _mha(kw, {"key_padding_mask": ~_mask(4, 0.6)},
                                                self_attn=True))
        check(f, t, [_rand(4, 6)], device, _mha(kw, {"attn_mask": ~_mask((3, 4, 4), 0.5)},
                                                self_attn=True))


def test_multihead_attention_dropout_and_eval():
    f = fw.nn.MultiheadAttention(6, 2, dropout=0.5)
    t = torch.nn.MultiheadAttention(6, 2, dropout=0.5)
    f.eval()
    t.eval()
    check(f, t, [_rand(3, 2, 6), _rand(5, 2, 6, seed=1), _rand(5, 2, 6, seed=2)], "cpu", _mha())
    f.train()
    x = fw.tensor(_rand(3, 2, 6), dtype=fw.float32)
    # dropped weights are zero, kept ones doubled: rows no longer sum to one
    per_head = f(x, x, x, average_attn_weights=False)[1].detach().numpy()
    assert (per_head == 0).any() and not np.allclose(per_head.sum(-1), 1.0)


def test_multi_head_attention_forward_functional(device):
    """The functional form with explicit weights, separate projections and static k/v."""
    rng = np.random.default_rng(7)
    E, H, L, S, N = 6, 2, 3, 4, 2
    w = {n: rng.standard_normal(s) * 0.5 for n, s in (
        ("in_w", (3 * E, E)), ("in_b", (3 * E,)), ("out_w", (E, E)), ("out_b", (E,)),
        ("q_w", (E, E)), ("k_w", (E, 4)), ("v_w", (E, 5)), ("bk", (1, 1, E)), ("bv", (1, 1, E)),
        ("sk", (N * H, S, E // H)), ("sv", (N * H, S, E // H)))}
    names = list(w)

    def call(separate, static=False, bias_kv=False):
        def fn(T, _, q, k, v, *ws):
            p = dict(zip(names, ws))
            return T.nn.functional.multi_head_attention_forward(
                q, k, v, E, H, None if separate else p["in_w"], p["in_b"],
                p["bk"] if bias_kv else None, p["bv"] if bias_kv else None, False, 0.0,
                p["out_w"], p["out_b"], use_separate_proj_weight=separate,
                q_proj_weight=p["q_w"], k_proj_weight=p["k_w"], v_proj_weight=p["v_w"],
                static_k=p["sk"] if static else None, static_v=p["sv"] if static else None)
        return fn
    ws = [w[n] for n in names]
    q, k6 = _rand(L, N, E), _rand(S, N, E, seed=1)
    check(_Fn(), _Fn(), [q, k6, _rand(S, N, E, seed=2)] + ws, device, call(False, bias_kv=True))
    check(_Fn(), _Fn(), [q, k6, _rand(S, N, E, seed=2)] + ws, device, call(False, static=True))
    check(_Fn(), _Fn(), [q, _rand(S, N, 4, seed=1), _rand(S, N, 5, seed=2)] + ws, device,
          call(True))


def test_multihead_attention_parameters_and_repr():
    for opts in ({}, {"kdim": 4, "vdim": 5}, {"bias": False, "add_bias_kv": True}):
        f, t = fw.nn.MultiheadAttention(8, 2, **opts), torch.nn.MultiheadAttention(8, 2, **opts)
        assert [(k, tuple(v.shape)) for k, v in f.state_dict().items()] == \
            [(k, tuple(v.shape)) for k, v in t.state_dict().items()]
        assert repr(f) == repr(t)
        for name in ("in_proj_weight", "q_proj_weight", "k_proj_weight", "v_proj_weight",
                     "in_proj_bias", "bias_k", "bias_v"):
            assert (getattr(f, name) is None) == (getattr(t, name) is None), name
    f = fw.nn.MultiheadAttention(64, 4)
    w = f.in_proj_weight.detach().numpy()
    bound = math.sqrt(6 / (64 + 192))          # xavier_uniform_ of a (192, 64) weight
    assert w.min() >= -bound and w.max() <= bound and w.std() > 0.5 * bound / math.sqrt(3)
    assert (f.in_proj_bias.detach().numpy() == 0).all()
    assert (f.out_proj.bias.detach().numpy() == 0).all()
    assert type(f.out_proj).__name__ == "NonDynamicallyQuantizableLinear"
    assert isinstance(f.out_proj, fw.nn.Linear)


def test_multihead_attention_bad_input():
    def mha(q, k, v, ctor=(6, 2), **kw):
        def fn(T):
            m = T.nn.MultiheadAttention(*ctor)
            kw2 = dict(kw)
            for name in ("attn_mask", "key_padding_mask"):
                if name in kw2:
                    kw2[name] = T.zeros(kw2[name], dtype=T.bool)
            return m(T.zeros(q), T.zeros(k), T.zeros(v), **kw2)
        return fn
    same_error(mha((3, 2, 5), (4, 2, 5), (4, 2, 5)), AssertionError)   # was expecting ...
    same_error(mha((3, 2, 6), (4, 2, 6), (5, 2, 6)), AssertionError)
    same_error(mha((3, 2, 6), (4, 2, 6), (4, 6)), AssertionError)
    same_error(mha((1, 3, 2, 6), (4, 2, 6), (4, 2, 6)), AssertionError)
    same_error(mha((3, 2, 6), (4, 3, 6), (4, 3, 6)))                   # batch mismatch
    same_error(mha((3, 2, 6), (4, 2, 6), (4, 2, 6), attn_mask=(3, 5)))
    same_error(mha((3, 2, 6), (4, 2, 6), (4, 2, 6), attn_mask=(3, 3, 4)))
    same_error(mha((3, 2, 6), (4, 2, 6), (4, 2, 6), key_padding_mask=(2, 5)), AssertionError)
    same_error(mha((3, 2, 6), (4, 2, 6), (4, 2, 6), key_padding_mask=(2, 4, 1)),
               AssertionError)
    same_error(mha((3, 6), (4, 6), (4, 6), attn_mask=(3, 3, 4)), AssertionError)
    same_error(mha((3, 2, 6), (4, 2, 6), (4, 2, 6), is_causal=True))
    same_error(lambda T: T.nn.MultiheadAttention(0, 2), ValueError)
    same_error(lambda T: T.nn.MultiheadAttention(6, 4), AssertionError)
    same_error(lambda T: T.nn.MultiheadAttention(6, 2)(
        T.zeros(3, 2, 6), T.zeros(4, 2, 6), T.zeros(4, 2, 6),
        key_padding_mask=T.zeros(2, 4, dtype=T.int64)), AssertionError)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        x = fw.zeros(3, 2, 6)
        fw.nn.MultiheadAttention(6, 2)(x, x, x, key_padding_mask=fw.zeros(2, 3, dtype=fw.bool),
                                       attn_mask=fw.zeros(3, 3))
    assert any("Support for mismatched key_padding_mask and attn_mask is deprecated" in
               str(m.message) for m in w)
