"""framework._aten_aliases: PyTorch's top-level (ATen) forms of nn.functional ops and a few
global switches, compared with PyTorch itself."""
import warnings

import numpy as np
import pytest

import framework as fw
from framework import _aten_aliases as A

torch = pytest.importorskip("torch")


def _np(t):
    if isinstance(t, torch.Tensor):
        return t.detach().numpy()
    return t.detach().cpu().numpy()


def close(a, b, tol=1e-5):
    a, b = _np(a), _np(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol, equal_nan=True)


def pair(a, device="cpu", requires_grad=False, dtype=None):
    a = np.asarray(a, dtype=dtype)
    f = fw.tensor(a, device=device, requires_grad=requires_grad)
    t = torch.tensor(a, requires_grad=requires_grad)
    return f, t


def rnd(*shape, seed=0):
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)


def test_names_are_new_and_in_torch():
    assert len(set(A.__all__)) == len(A.__all__)
    for name in A.__all__:
        assert hasattr(torch, name), name
        assert not hasattr(fw, name) or getattr(fw, name) is getattr(A, name), name


# -- normalisation ---------------------------------------------------------------------

def test_norms_match_torch():
    x = rnd(2, 4, 3)
    w, b = rnd(4, seed=1), rnd(4, seed=2)
    (xf, xt), (wf, wt), (bf, bt) = pair(x, requires_grad=True), pair(w), pair(b)
    close(A.layer_norm(xf, [3]), torch.layer_norm(xt, [3]))
    close(A.layer_norm(xf, (4, 3), None, None, 1e-3, False),
          torch.layer_norm(xt, (4, 3), None, None, 1e-3, False))
    close(A.group_norm(xf, 2, wf, bf), torch.group_norm(xt, 2, wt, bt))
    close(A.rms_norm(xf, [3]), torch.rms_norm(xt, [3]))
    rmf, rvf = fw.zeros(4), fw.ones(4)
    rmt, rvt = torch.zeros(4), torch.ones(4)
    close(A.batch_norm(xf, wf, bf, rmf, rvf, True, 0.1, 1e-5, True),
          torch.batch_norm(xt, wt, bt, rmt, rvt, True, 0.1, 1e-5, True))
    close(rmf, rmt)
    close(rvf, rvt)
    close(A.batch_norm(xf, None, None, rmf, rvf, False, 0.1, 1e-5, False),
          torch.batch_norm(xt, None, None, rmt, rvt, False, 0.1, 1e-5, False))
    close(A.instance_norm(xf, wf, bf, None, None, True, 0.1, 1e-5, True),
          torch.instance_norm(xt, wt, bt, None, None, True, 0.1, 1e-5, True))
    gf = A.layer_norm(xf, [3], None, None).pow(3).sum()
    gt = torch.layer_norm(xt, [3], None, None).pow(3).sum()
    gf.backward()
    gt.backward()
    close(xf.grad, xt.grad, 1e-4)


def test_batch_norm_args_are_required():
    x = fw.ones(2, 3)
    with pytest.raises(TypeError):
        A.batch_norm(x, None, None, None, None, True, 0.1, 1e-5)
    with pytest.raises(TypeError):
        A.dropout(x, 0.5)


# -- dropout ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["dropout", "alpha_dropout", "feature_dropout",
                                  "feature_alpha_dropout"])
def test_dropout_family(name):
    x = fw.tensor(rnd(4, 8, 6))
    fn, fn_ = getattr(A, name), getattr(A, name + "_")
    assert fn(x, 0.5, False) is x          # as torch: the input itself
    assert fn(x, 0.0, True) is x
    close(fn(x, 1.0, True), torch.zeros(4, 8, 6))
    for p in (1.5, -0.1):
        with pytest.raises(RuntimeError, match="dropout probability has to be between 0 and 1"):
            fn(x, p, True)
    y = fn(x, 0.5, True)
    assert y.shape == x.shape
    xa, ya = _np(x), _np(y)
    if name == "dropout":
        assert set(np.round(ya[ya != 0] / xa[ya != 0], 4)) == {2.0}
    if name.startswith("feature"):
        # whole channels: within a channel y = a x + b with one (a, b)
        slope = (ya[:, :, 1:] - ya[:, :, :1]) / (xa[:, :, 1:] - xa[:, :, :1])
        assert np.allclose(slope, slope[:, :, :1], atol=1e-4)
        assert len(np.unique(np.round(slope, 3))) == 2
        with pytest.raises(RuntimeError, match="Feature dropout requires at least 2"):
            fn(fw.ones(3), 0.5, True)
        close(fn(fw.ones(3), 0.5, False), torch.ones(3))     # checked only when applied
        close(fn(fw.ones(3), 1.0, True), torch.zeros(3))
    z = x.clone()
    assert fn_(z, 0.5, True) is z
    assert not np.array_equal(_np(z), xa)


def test_alpha_dropout_keeps_mean_and_var():
    fw.manual_seed(0)
    x = fw.randn(200000)
    y = A.alpha_dropout(x, 0.3, True)
    assert abs(float(y.mean())) < 0.02 and abs(float(y.std()) - 1) < 0.02


def test_native_dropout():
    x = fw.tensor(rnd(50, 40))
    y, m = A.native_dropout(x, 0.25, True)
    assert m.dtype == fw.bool
    close(y, torch.tensor(np.where(_np(m), _np(x) / 0.75, 0)), 1e-5)
    y, m = A.native_dropout(x, 0.5, False)
    assert _np(m).all() and y is not x
    close(y, x)
    assert A.native_dropout(x, 0.5, None)[1].dtype == fw.bool
    y, m = A.native_dropout(x, 1.0, True)
    assert not _np(m).any() and not _np(y).any()
    with pytest.raises(RuntimeError, match=r"bernoulli_ expects p to be in \[0, 1\]"):
        A.native_dropout(x, 1.5, True)


# -- losses ----------------------------------------------------------------------------

@pytest.mark.parametrize("reduction", [0, 1, 2, 7])
def test_losses_match_torch(reduction):
    a, b = rnd(3, 4), rnd(3, 4, seed=1)
    pos = np.abs(rnd(3, 4, seed=2))
    sign = np.sign(rnd(3, seed=3)).astype(np.float32)
    sign4 = np.sign(rnd(3, 4, seed=4)).astype(np.float32)
    (af, at), (bf, bt), (pf, pt) = pair(a), pair(b), pair(pos)
    (sf, st), (s4f, s4t) = pair(sign), pair(sign4)
    tgt = np.random.RandomState(5).rand(3, 4).astype(np.float32)
    tf, tt = pair(tgt)
    close(A.binary_cross_entropy_with_logits(af, tf, None, None, reduction),
          torch.binary_cross_entropy_with_logits(at, tt, None, None, reduction))
    close(A.binary_cross_entropy_with_logits(af, tf, pf, pf[0], reduction),
          torch.binary_cross_entropy_with_logits(at, tt, pt, pt[0], reduction))
    close(A.kl_div(af, tf, reduction), torch.kl_div(at, tt, reduction))
    close(A.kl_div(af, bf, reduction, log_target=True),
          torch.kl_div(at, bt, reduction, log_target=True))
    close(A.cosine_embedding_loss(af, bf, sf, 0.1, reduction),
          torch.cosine_embedding_loss(at, bt, st, 0.1, reduction))
    close(A.hinge_embedding_loss(af, s4f, 0.5, reduction),
          torch.hinge_embedding_loss(at, s4t, 0.5, reduction))
    close(A.margin_ranking_loss(af, bf, s4f, 0.2, reduction),
          torch.margin_ranking_loss(at, bt, s4t, 0.2, reduction))
    close(A.poisson_nll_loss(af, pf, True, False, 1e-8, reduction),
          torch.poisson_nll_loss(at, pt, True, False, 1e-8, reduction))
    close(A.poisson_nll_loss(pf, pf, False, True, 1e-8, reduction),
          torch.poisson_nll_loss(pt, pt, False, True, 1e-8, reduction))


def test_loss_defaults_and_grad():
    a, t = rnd(3, 4), np.random.RandomState(1).rand(3, 4).astype(np.float32)
    (af, at), (tf, tt) = pair(a, requires_grad=True), pair(t)
    with warnings.catch_warnings():
        warnings.simplefilter("error")     # no warning about 'mean' (that is F.kl_div's)
        close(A.kl_div(af, tf), torch.kl_div(at, tt))
    # left out, the reduction is none, as in PyTorch's binding (its schema says mean)
    close(A.binary_cross_entropy_with_logits(af, tf),
          torch.binary_cross_entropy_with_logits(at, tt))
    s = np.sign(a)
    close(A.hinge_embedding_loss(af, fw.tensor(s)), torch.hinge_embedding_loss(at, torch.tensor(s)))
    close(A.margin_ranking_loss(af, tf, fw.tensor(s)),
          torch.margin_ranking_loss(at, tt, torch.tensor(s)))
    close(A.cosine_embedding_loss(af, tf, fw.tensor(s[:, 0])),
          torch.cosine_embedding_loss(at, tt, torch.tensor(s[:, 0])))
    lf = A.binary_cross_entropy_with_logits(af, tf, None, None, 1)
    lt = torch.binary_cross_entropy_with_logits(at, tt, None, None, 1)
    assert lf.shape == ()
    close(lf, lt)
    lf.backward()
    lt.backward()
    close(af.grad, at.grad)


@pytest.mark.parametrize("bad", ["mean", 1.0, True, None])
def test_bad_reduction_is_a_type_error(bad):
    x = fw.zeros(2)
    with pytest.raises(TypeError, match="argument 'reduction' .*must be int"):
        A.kl_div(x, x, bad)
    with pytest.raises(TypeError, match="must be int"):
        A.binary_cross_entropy_with_logits(x, x, reduction=bad)
    with pytest.raises(TypeError, match="must be int"):
        A.hinge_embedding_loss(x, x, 1.0, bad)
    with pytest.raises(TypeError):
        torch.kl_div(torch.zeros(2), torch.zeros(2), bad)


def test_poisson_nll_loss_args_required():
    x = fw.zeros(2)
    with pytest.raises(TypeError):
        A.poisson_nll_loss(x, x)


@pytest.mark.skipif(not hasattr(fw.nn.functional, "ctc_loss"), reason="no F.ctc_loss")
@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_ctc_loss(reduction):
    T, N, C, S = 6, 2, 4, 3
    lp = np.log(np.random.RandomState(0).dirichlet(np.ones(C), (T, N))).astype(np.float32)
    tg = np.array([[1, 2, 1], [3, 3, 0]])
    (lf, lt), (gf, gt) = pair(lp, requires_grad=True), pair(tg)
    close(A.ctc_loss(lf, gf, [6, 5], [3, 2]), torch.ctc_loss(lt, gt, [6, 5], [3, 2]), 1e-4)
    rf = A.ctc_loss(lf, gf, [6, 5], [3, 2], 0, reduction)
    rt = torch.ctc_loss(lt, gt, [6, 5], [3, 2], 0, reduction)
    close(rf, rt, 1e-4)
    rf.sum().backward()
    rt.sum().backward()
    close(lf.grad, lt.grad, 1e-4)


def test_bilinear():
    (x1f, x1t), (x2f, x2t) = pair(rnd(3, 2)), pair(rnd(3, 4, seed=1))
    (wf, wt), (bf, bt) = pair(rnd(5, 2, 4, seed=2)), pair(rnd(5, seed=3))
    close(A.bilinear(x1f, x2f, wf, bf), torch.bilinear(x1t, x2t, wt, bt), 1e-4)
    close(A.bilinear(x1f, x2f, wf), torch.bilinear(x1t, x2t, wt), 1e-4)


# -- pooling ---------------------------------------------------------------------------

def test_pooling_matches_torch():
    x = rnd(2, 3, 7)
    xf, xt = pair(x, requires_grad=True)
    close(A.max_pool1d(xf, 2), torch.max_pool1d(xt, 2))
    close(A.max_pool1d(xf, 3, 2, 1, 1, True), torch.max_pool1d(xt, 3, 2, 1, 1, True))
    close(A.max_pool1d(xf, [2], [], [0], [2]), torch.max_pool1d(xt, [2], [], [0], [2]))
    of, if_ = A.max_pool1d_with_indices(xf, 2, 1)
    ot, it = torch.max_pool1d_with_indices(xt, 2, 1)
    close(of, ot)
    close(if_, it)
    close(A.avg_pool1d(xf, 3, 2, 1, True, False), torch.avg_pool1d(xt, 3, 2, 1, True, False))
    close(A.avg_pool1d(xf, 2), torch.avg_pool1d(xt, 2))
    close(A.adaptive_avg_pool1d(xf, 3), torch.adaptive_avg_pool1d(xt, 3))
    res = A.adaptive_max_pool1d(xf, 3)
    assert isinstance(res, tuple) and len(res) == 2
    close(res[0], torch.adaptive_max_pool1d(xt, 3)[0])
    close(res[1], torch.adaptive_max_pool1d(xt, 3)[1])
    x4 = rnd(1, 2, 5, 5)
    close(A.max_pool2d(fw.tensor(x4), 2), torch.max_pool2d(torch.tensor(x4), 2))
    close(A.max_pool2d(fw.tensor(x4), [3, 2], [1, 2], 1),
          torch.max_pool2d(torch.tensor(x4), [3, 2], [1, 2], 1))
    x5 = rnd(1, 2, 4, 4, 4)
    close(A.max_pool3d(fw.tensor(x5), 2, [1]), torch.max_pool3d(torch.tensor(x5), 2, [1]))
    A.max_pool1d(xf, 2).sum().backward()
    torch.max_pool1d(xt, 2).sum().backward()
    close(xf.grad, xt.grad)


# -- embedding_bag ---------------------------------------------------------------------

@pytest.mark.parametrize("mode,offsets,last,pad", [
    (0, [0, 2], False, None), (1, [0, 2], False, None), (2, [0, 2], False, None),
    (0, [0, 2], False, 2), (2, [0, 2], False, 2), (1, [0, 2], False, 2),
    (2, [0, 2, 2], False, None), (1, [0, 2, 2], False, None), (1, [0, 2, 5], True, None)])
def test_embedding_bag(mode, offsets, last, pad):
    W = np.arange(12.0, dtype=np.float32).reshape(6, 2)
    idx = [0, 2, 1, 5, 4]
    rf = A.embedding_bag(fw.tensor(W), fw.tensor(idx), fw.tensor(offsets), False, mode, False,
                         None, last, pad)
    rt = torch.embedding_bag(torch.tensor(W), torch.tensor(idx), torch.tensor(offsets), False,
                             mode, False, None, last, pad)
    assert len(rf) == 4
    for a, b in zip(rf, rt):
        close(a, b)


def test_embedding_bag_errors_and_weights():
    W = fw.ones(6, 2)
    with pytest.raises(RuntimeError, match="`mode` must be sum, mean, or max."):
        A.embedding_bag(W, fw.tensor([0, 1]), fw.tensor([0]), False, 3)
    with pytest.raises(RuntimeError, match="per_sample_weights only supported with mode='sum'"):
        A.embedding_bag(W, fw.tensor([0, 1]), fw.tensor([0]), False, 1, False, fw.ones(2))
    Wn = rnd(6, 2)
    psw = rnd(5, seed=1)
    rf = A.embedding_bag(fw.tensor(Wn), fw.tensor([0, 2, 1, 5, 4]), fw.tensor([0, 2]), False,
                         0, False, fw.tensor(psw))
    rt = torch.embedding_bag(torch.tensor(Wn), torch.tensor([0, 2, 1, 5, 4]),
                             torch.tensor([0, 2]), False, 0, False, torch.tensor(psw))
    close(rf[0], rt[0])


# -- activations -----------------------------------------------------------------------

def test_activations_match_torch():
    x = rnd(3, 5)
    xf, xt = pair(x)
    close(A.threshold(xf, 0.1, 20.0), torch.threshold(xt, 0.1, 20.0))
    yf, yt = xf.clone(), xt.clone()
    assert A.threshold_(yf, 0.0, -1.0) is yf
    torch.threshold_(yt, 0.0, -1.0)
    close(yf, yt)
    close(A.rrelu(xf), torch.rrelu(xt))
    close(A.rrelu(xf, 0.1, 0.3), torch.rrelu(xt, 0.1, 0.3))
    yf, yt = xf.clone(), xt.clone()
    A.rrelu_(yf)
    torch.rrelu_(yt)
    close(yf, yt)
    for fn in ("celu_", "selu_"):
        yf, yt = xf.clone(), xt.clone()
        assert getattr(A, fn)(yf) is yf
        getattr(torch, fn)(yt)
        close(yf, yt)
    yf, yt = xf.clone(), xt.clone()
    A.celu_(yf, 0.5)
    torch.celu_(yt, 0.5)
    close(yf, yt)
    x4 = rnd(1, 6, 2, 2)
    close(A.native_channel_shuffle(fw.tensor(x4), 3),
          torch.native_channel_shuffle(torch.tensor(x4), 3))


def test_rrelu_training():
    x = fw.tensor(rnd(1000))
    y = _np(A.rrelu(x, 0.1, 0.3, True))
    xa = _np(x)
    neg = xa < 0
    np.testing.assert_allclose(y[~neg], xa[~neg])
    slope = y[neg] / xa[neg]
    assert slope.min() >= 0.1 - 1e-6 and slope.max() <= 0.3 + 1e-6 and slope.std() > 0.01
    g = fw.Generator().manual_seed(3)
    y1 = _np(A.rrelu(x, 0.1, 0.3, True, g))
    g.manual_seed(3)
    y2 = _np(A.rrelu(x, 0.1, 0.3, True, g))
    np.testing.assert_array_equal(y1, y2)


# -- convolution -----------------------------------------------------------------------

def test_conv_tbc():
    x, w, b = rnd(7, 2, 3), rnd(3, 3, 4, seed=1), rnd(4, seed=2)
    (xf, xt), (wf, wt), (bf, bt) = pair(x, requires_grad=True), pair(w), pair(b)
    for pad in (0, 1):
        close(A.conv_tbc(xf, wf, bf, pad), torch.conv_tbc(xt, wt, bt, pad), 1e-4)
    A.conv_tbc(xf, wf, bf, 1).sum().backward()
    torch.conv_tbc(xt, wt, bt, 1).sum().backward()
    close(xf.grad, xt.grad, 1e-4)
    with pytest.raises(RuntimeError, match="Input must have 3 dims"):
        A.conv_tbc(xf[0], wf, bf)
    with pytest.raises(RuntimeError):
        A.conv_tbc(xf, wf[:, :2], bf)


@pytest.mark.parametrize("k,transposed", [(1, False), (2, False), (1, True), (2, True)])
def test_convolution(k, transposed):
    x = rnd(*((1, 4) + (5,) * k))
    w = rnd(*((4, 3) + (3,) * k), seed=1) if transposed else rnd(*((4, 2) + (3,) * k), seed=1)
    b = rnd(4 if not transposed else 6, seed=2)
    groups = 2
    (xf, xt), (wf, wt), (bf, bt) = pair(x), pair(w), pair(b)
    args = ([2] * k, [1] * k, [1] * k, transposed, [1] * k if transposed else [0] * k, groups)
    close(A.convolution(xf, wf, bf, *args), torch.convolution(xt, wt, bt, *args), 1e-4)


# -- norms -----------------------------------------------------------------------------

def test_nuclear_and_frobenius_norms():
    x, x3 = rnd(3, 4), rnd(2, 3, 4, seed=1)
    (xf, xt), (x3f, x3t) = pair(x), pair(x3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        close(A.nuclear_norm(xf), torch.nuclear_norm(xt), 1e-4)
        close(A.nuclear_norm(xf, True), torch.nuclear_norm(xt, True), 1e-4)
        close(A.nuclear_norm(x3f), torch.nuclear_norm(x3t), 1e-4)
        close(A.nuclear_norm(x3f, (0, 2)), torch.nuclear_norm(x3t, (0, 2)), 1e-4)
        close(A.nuclear_norm(x3f, (1, 2), True), torch.nuclear_norm(x3t, (1, 2), True), 1e-4)
        close(A.frobenius_norm(xf, (0, 1)), torch.frobenius_norm(xt, (0, 1)))
        close(A.frobenius_norm(xf, 1), torch.frobenius_norm(xt, 1))
        close(A.frobenius_norm(xf, [1], True), torch.frobenius_norm(xt, [1], True))
        close(A.frobenius_norm(xf, ()), torch.frobenius_norm(xt, ()))
        with pytest.raises(RuntimeError, match="Expected at most 2 dimensions, but got 3"):
            A.frobenius_norm(x3f, (0, 1, 2))
        with pytest.raises(RuntimeError, match="input dtype should be either floating"):
            A.frobenius_norm(fw.ones(2, 2, dtype=fw.int64), (0, 1))
        with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor"):
            A.nuclear_norm(fw.ones(2, 2, dtype=fw.int64))


def test_deprecated_norms_warn_once_unless_warn_always():
    x = fw.ones(2, 2)
    A._warned.discard(next((m for m in A._warned if "frobenius" in m), None))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        A.frobenius_norm(x, (0, 1))
        A.frobenius_norm(x, (0, 1))
    assert len([m for m in w if "at::frobenius_norm is deprecated" in str(m.message)]) <= 1
    A.set_warn_always(True)
    try:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            A.frobenius_norm(x, (0, 1))
            A.frobenius_norm(x, (0, 1))
        assert len([m for m in w if "at::frobenius_norm is deprecated" in str(m.message)]) == 2
    finally:
        A.set_warn_always(False)


@pytest.mark.parametrize("p", [2, 1, 3, float("inf"), 0])
def test_native_norm(p):
    # PyTorch computes native_norm for sparse tensors only: compare with that
    x = rnd(3, 4)
    close(A.native_norm(fw.tensor(x), p), torch.native_norm(torch.tensor(x).to_sparse(), p))
    close(A.native_norm(fw.tensor(x), p, [0, 1], False, None),
          torch.native_norm(torch.tensor(x).to_sparse(), p, [0, 1], False, None))


# -- segment_reduce (nonzero_static: tests/test_tensor_extras.py) ---------------------

@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min", "prod"])
@pytest.mark.parametrize("initial", [None, 2.0])
def test_segment_reduce(reduce, initial):
    d = rnd(6, 3)
    lens = [2, 0, 3, 1]
    close(A.segment_reduce(fw.tensor(d), reduce, lengths=fw.tensor(lens), initial=initial),
          torch.segment_reduce(torch.tensor(d), reduce, lengths=torch.tensor(lens),
                               initial=initial))
    offs = [[0, 1, 1, 6]] * 3
    close(A.segment_reduce(fw.tensor(d.T.copy()), reduce, offsets=fw.tensor(offs), axis=1,
                           initial=initial),
          torch.segment_reduce(torch.tensor(d.T.copy()), reduce, offsets=torch.tensor(offs),
                               axis=1, initial=initial))


def test_segment_reduce_grad_and_errors():
    d = rnd(6, 3)
    (df, dt) = pair(d, requires_grad=True)
    A.segment_reduce(df, "mean", lengths=fw.tensor([2, 4])).pow(2).sum().backward()
    torch.segment_reduce(dt, "mean", lengths=torch.tensor([2, 4])).pow(2).sum().backward()
    close(df.grad, dt.grad)
    x = fw.tensor(d)
    with pytest.raises(RuntimeError, match="Expected axis to be the last dimension of lengths"):
        A.segment_reduce(x, "sum", lengths=fw.tensor([2, 4]), axis=1)
    with pytest.raises(RuntimeError, match="sum to data.size"):
        A.segment_reduce(x, "sum", lengths=fw.tensor([2, 3]))
    with pytest.raises(RuntimeError, match="lengths contains negative value!"):
        A.segment_reduce(x, "sum", lengths=fw.tensor([2, -1, 5]))
    with pytest.raises(RuntimeError, match="reduce argument must be either"):
        A.segment_reduce(x, "foo", lengths=fw.tensor([2, 4]))
    with pytest.raises(RuntimeError, match="Either lengths or offsets must be defined"):
        A.segment_reduce(x, "sum")


# -- simulated cuda --------------------------------------------------------------------

def test_on_device(device):
    x = rnd(2, 3, 4)
    xf, xt = pair(x, device=device)
    close(A.layer_norm(xf, [4]), torch.layer_norm(xt, [4]), 1e-4)
    close(A.max_pool1d(xf, 2), torch.max_pool1d(xt, 2))
    t = np.random.RandomState(1).rand(2, 3, 4).astype(np.float32)
    tf, tt = pair(t, device=device)
    close(A.binary_cross_entropy_with_logits(xf, tf, None, None, 2),
          torch.binary_cross_entropy_with_logits(xt, tt, None, None, 2), 1e-4)
    y = A.feature_dropout(xf, 0.5, True)
    assert y.device == xf.device
    m = fw.tensor([[1, 0], [0, 1]], device=device)
    close(fw.nonzero_static(m, size=3), torch.nonzero_static(torch.tensor([[1, 0], [0, 1]]),
                                                           size=3))


# -- switches --------------------------------------------------------------------------

def test_warn_always():
    assert A.is_warn_always_enabled() is False
    A.set_warn_always(True)
    try:
        assert A.is_warn_always_enabled() is True
    finally:
        A.set_warn_always(False)
    for bad in (1, "x"):
        with pytest.raises(RuntimeError, match="setWarnOnlyOnce expects a bool, but got"):
            A.set_warn_always(bad)


def test_flush_denormal():
    import platform
    with pytest.raises(RuntimeError, match="flush_denormal expects a bool, but got int"):
        A.set_flush_denormal(1)
    expected = platform.machine() == "x86_64"
    try:
        assert A.set_flush_denormal(True) is expected
        if expected:
            assert np.array([1e-323]) * np.float64(1.0) == 0.0
    finally:
        assert A.set_flush_denormal(False) is expected
    assert (np.array([1e-323]) * np.float64(1.0))[0] != 0.0


def test_interop_threads(monkeypatch):
    monkeypatch.setattr(A, "_interop_threads", None)
    assert A.get_num_interop_threads() >= 1
    with pytest.raises(RuntimeError, match="expects a positive integer"):
        A.set_num_interop_threads(0)
    with pytest.raises(RuntimeError, match="expects an int, but got float"):
        A.set_num_interop_threads(2.5)
    A.set_num_interop_threads(3)
    assert A.get_num_interop_threads() == 3
    with pytest.raises(RuntimeError, match="cannot set number of interop threads"):
        A.set_num_interop_threads(2)
    assert A.init_num_threads() is None


def test_deprecated_autocast_functions():
    cpu_dtype, gpu_dtype = fw.get_autocast_dtype("cpu"), fw.get_autocast_dtype("cuda")
    cpu_on = fw.is_autocast_enabled("cpu")
    try:
        with pytest.warns(DeprecationWarning, match=r"torch.get_autocast_cpu_dtype\(\) is "
                          r"deprecated. Please use torch.get_autocast_dtype\('cpu'\) instead."):
            assert A.get_autocast_cpu_dtype() == fw.bfloat16
        with pytest.warns(DeprecationWarning, match="get_autocast_dtype\\('cuda'\\)"):
            assert A.get_autocast_gpu_dtype() == fw.float16
        with pytest.warns(DeprecationWarning, match="is_autocast_enabled\\('cpu'\\)"):
            assert A.is_autocast_cpu_enabled() is False
        with pytest.warns(DeprecationWarning, match="set_autocast_enabled\\('cpu', enabled\\)"):
            A.set_autocast_cpu_enabled(True)
        assert fw.is_autocast_enabled("cpu") is True
        with pytest.warns(DeprecationWarning, match="set_autocast_dtype\\('cpu', dtype\\)"):
            A.set_autocast_cpu_dtype(fw.float16)
        assert fw.get_autocast_dtype("cpu") == fw.float16
        with pytest.warns(DeprecationWarning, match="set_autocast_dtype\\('cuda', dtype\\)"):
            A.set_autocast_gpu_dtype(fw.bfloat16)
        assert fw.get_autocast_dtype("cuda") == fw.bfloat16
    finally:
        fw.set_autocast_enabled("cpu", cpu_on)
        fw.set_autocast_dtype("cpu", cpu_dtype)
        fw.set_autocast_dtype("cuda", gpu_dtype)
