"""Margin, embedding, multi-label, triplet and CTC losses (functions and modules) against
PyTorch: values and gradients for every option and reduction, odd shapes, errors."""
import numpy as np
import pytest

import framework as fw
import framework.nn as nn
import framework.nn.functional as F
from tests.helpers import assert_close
from tests.nn.common import compare_module, fw_tensor, to_np
from tests.nn.test_loss import REDUCTIONS, run_loss, same_error

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def _rand(*shape, dtype=np.float32):
    return np.random.randn(*shape).astype(dtype)


def _signs(*shape):
    return np.where(np.random.rand(*shape) > 0.5, 1, -1).astype(np.int64)


# -- pairwise margin losses ---------------------------------------------------------------

@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("margin", [0.0, -0.3, 0.4])
def test_cosine_embedding_loss(device, reduction, margin):
    x1, x2 = _rand(5, 4), _rand(5, 4)
    x2[0] = 0.0                     # a zero vector: the eps keeps the norm finite
    run_loss("cosine_embedding_loss", [x1, x2, _signs(5)], device, grad=(0, 1),
             margin=margin, reduction=reduction)


def test_cosine_embedding_loss_unbatched_and_other_targets(device):
    run_loss("cosine_embedding_loss", [_rand(6), _rand(6), np.array(-1)], device,
             grad=(0, 1), margin=-0.5)
    # targets other than +-1 contribute nothing
    run_loss("cosine_embedding_loss", [_rand(3, 4), _rand(3, 4), np.array([1, 0, 2])],
             device, grad=(0, 1), reduction="none")


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("margin", [0.0, 0.5])
def test_margin_ranking_loss(device, reduction, margin):
    run_loss("margin_ranking_loss", [_rand(7), _rand(7), _signs(7).astype(np.float32)],
             device, grad=(0, 1, 2), margin=margin, reduction=reduction)
    run_loss("margin_ranking_loss", [_rand(2, 3), _rand(2, 3), _signs(2, 3)
                                     .astype(np.float32)], device, grad=(0, 1),
             margin=margin, reduction=reduction)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("margin", [1.0, 0.3])
def test_hinge_embedding_loss(device, reduction, margin):
    x = _rand(4, 5)
    y = _signs(4, 5).astype(np.float32)
    y[0, 0], y[0, 1] = 0.0, 2.0     # neither +1 nor -1: both terms, as in torch
    run_loss("hinge_embedding_loss", [x, y], device, grad=(0, 1), margin=margin,
             reduction=reduction)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_soft_margin_loss(device, reduction):
    x = _rand(4, 5) * 10            # large margins: log(1 + exp(.)) must stay finite
    run_loss("soft_margin_loss", [x, _signs(4, 5).astype(np.float32)], device,
             reduction=reduction)
    run_loss("soft_margin_loss", [_rand(7, dtype=np.float64), _signs(7).astype(np.float64)],
             device, reduction=reduction)


# -- multi-label and multi-class margin losses ---------------------------------------------

@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multilabel_soft_margin_loss(device, reduction):
    x, y = _rand(4, 5) * 5, (np.random.rand(4, 5) > 0.5).astype(np.float32)
    run_loss("multilabel_soft_margin_loss", [x, y], device, grad=(0, 1),
             reduction=reduction)
    w = np.random.rand(5).astype(np.float32)
    run_loss("multilabel_soft_margin_loss", [x, y], device, grad=(0, 1),
             tensor_kw={"weight": w}, reduction=reduction)
    run_loss("multilabel_soft_margin_loss", [_rand(5), y[0]], device, grad=(0, 1),
             reduction=reduction)
    run_loss("multilabel_soft_margin_loss", [_rand(2, 3, 5), np.random.rand(2, 3, 5)
                                             .astype(np.float32)], device, grad=(0, 1),
             reduction=reduction)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multilabel_margin_loss(device, reduction):
    x = _rand(5, 4)
    # labels end at the first -1; later entries are ignored; duplicates count twice
    t = np.array([[3, 0, -1, 1], [0, 1, 2, 3], [-1, 0, 0, 0], [2, 2, -1, 3], [1, -1, -1, 0]])
    run_loss("multilabel_margin_loss", [x, t], device, reduction=reduction)
    run_loss("multilabel_margin_loss", [_rand(4), np.array([3, -1, 0, 0])], device,
             reduction=reduction)
    run_loss("multilabel_margin_loss", [_rand(1, 7, dtype=np.float64),
                                        np.array([[6, 2, 0, -1, 0, 0, 0]])], device,
             reduction=reduction)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p,margin", [(1, 1.0), (2, 1.0), (1, 0.3), (2, 2.5)])
def test_multi_margin_loss(device, reduction, p, margin):
    x, t = _rand(5, 4), np.array([0, 3, 1, 1, 2])
    run_loss("multi_margin_loss", [x, t], device, p=p, margin=margin, reduction=reduction)
    w = np.random.rand(4).astype(np.float32)
    run_loss("multi_margin_loss", [x, t], device, tensor_kw={"weight": w}, p=p,
             margin=margin, reduction=reduction)


@pytest.mark.parametrize("target", [np.array(2), np.array([2])])
def test_multi_margin_loss_unbatched(device, target):
    for reduction in REDUCTIONS:
        run_loss("multi_margin_loss", [_rand(4), target], device, reduction=reduction)
    # an empty batch sums to 0 (torch returns uninitialised memory here)
    out = F.multi_margin_loss(fw_tensor(_rand(0, 4), device), fw.zeros(0, dtype=fw.int64,
                                                                       device=device),
                              reduction="sum")
    assert to_np(out) == 0


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_margin_losses_zero_dim_input(device, reduction):
    """A 0-d input is one sample of one class, as PyTorch takes it."""
    x = np.array(-0.7, dtype=np.float32)
    for target in (np.array(0), np.array([0])):
        run_loss("multi_margin_loss", [x, target], device, reduction=reduction)
    for target in (np.array(0), np.array([-1]), np.array([0])):
        run_loss("multilabel_margin_loss", [x, target], device, reduction=reduction)


# -- triplet losses -----------------------------------------------------------------------

@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p,swap", [(2, False), (1, True), (1.5, False), (3, True)])
def test_triplet_margin_loss(device, reduction, p, swap):
    a, pos, neg = _rand(5, 4), _rand(5, 4), _rand(5, 4)
    neg[0] = a[0] + 0.1             # violates the margin
    run_loss("triplet_margin_loss", [a, pos, neg], device, grad=(0, 1, 2), p=p, swap=swap,
             margin=0.7, reduction=reduction)


def test_triplet_margin_loss_unbatched_and_eps(device):
    run_loss("triplet_margin_loss", [_rand(6), _rand(6), _rand(6)], device, grad=(0, 1, 2),
             eps=1e-3, margin=3.0)
    run_loss("triplet_margin_loss", [_rand(2, 3, 4), _rand(2, 3, 4), _rand(2, 3, 4)],
             device, grad=(0, 1, 2), reduction="none")


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("swap", [False, True])
def test_triplet_margin_with_distance_loss(device, reduction, swap):
    a, pos, neg = _rand(5, 4), _rand(5, 4), _rand(5, 4)
    run_loss("triplet_margin_with_distance_loss", [a, pos, neg], device, grad=(0, 1, 2),
             swap=swap, margin=2.0, reduction=reduction)
    # a custom distance: both libraries get the same function of their own tensors
    ta, tp, tn = (torch.tensor(v, requires_grad=True) for v in (a, pos, neg))
    fa, fp, fn = (fw_tensor(v, device, True) for v in (a, pos, neg))

    def cos_dist(x, y):
        return 1.0 - (x * y).sum(-1) / ((x * x).sum(-1) * (y * y).sum(-1)).sqrt()

    tout = TF.triplet_margin_with_distance_loss(ta, tp, tn, distance_function=cos_dist,
                                                swap=swap, margin=0.5, reduction=reduction)
    fout = F.triplet_margin_with_distance_loss(fa, fp, fn, distance_function=cos_dist,
                                               swap=swap, margin=0.5, reduction=reduction)
    assert_close(fout, to_np(tout), rtol=1e-5, atol=1e-6)
    tout.sum().backward()
    fout.sum().backward()
    for f, t in ((fa, ta), (fp, tp), (fn, tn)):
        assert_close(f.grad, to_np(t.grad), rtol=1e-5, atol=1e-6)


# -- CTC ----------------------------------------------------------------------------------

def _ctc_case(T=7, N=3, C=5, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((T, N, C))
    targets = np.array([[1, 2, 2], [3, 1, 4], [4, 4, 1]])[:N]
    return x, targets


def _ctc_compare(device, x, targets, in_len, tgt_len, through_log_softmax=True,
                 blank=0, reduction="mean", zero_infinity=False, lengths_as=np.array):
    """ctc_loss on ``x`` (through log_softmax, or as given log_probs), both libraries; the
    loss and the gradient of ``x``."""
    tx = torch.tensor(x, requires_grad=True)
    fx = fw_tensor(x, device, requires_grad=True)
    cdim = x.ndim - 1
    tlp = tx.log_softmax(cdim) if through_log_softmax else tx
    flp = F.log_softmax(fx, cdim) if through_log_softmax else fx

    def lens(v, m, dev):
        if lengths_as is np.array:
            return m.tensor(np.asarray(v), device=dev)
        return lengths_as(v)
    tout = TF.ctc_loss(tlp, torch.tensor(targets), lens(in_len, torch, "cpu"),
                       lens(tgt_len, torch, "cpu"), blank=blank, reduction=reduction,
                       zero_infinity=zero_infinity)
    fout = F.ctc_loss(flp, fw_tensor(targets, device), lens(in_len, fw, device),
                      lens(tgt_len, fw, device), blank=blank, reduction=reduction,
                      zero_infinity=zero_infinity)
    assert tuple(fout.shape) == tuple(tout.shape)
    assert_close(fout, to_np(tout), rtol=1e-9, atol=1e-10)
    g = np.asarray(np.arange(1, tout.numel() + 1, dtype=np.float64).reshape(tout.shape))
    tout.backward(torch.tensor(g))
    fout.backward(fw_tensor(g, device))
    assert_close(fx.grad, to_np(tx.grad), rtol=1e-8, atol=1e-10)
    return fout


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("through_log_softmax", [True, False])
def test_ctc_loss_padded_targets(device, reduction, through_log_softmax):
    x, targets = _ctc_case()
    # a repeated label (needs a blank between), a shorter input, a shorter target
    _ctc_compare(device, x, targets, [7, 6, 5], [3, 2, 3],
                 through_log_softmax=through_log_softmax, reduction=reduction)


@pytest.mark.parametrize("zero_infinity", [False, True])
def test_ctc_loss_impossible_alignment(device, zero_infinity):
    x, targets = _ctc_case()
    # sample 2 needs 4 frames (4, blank, 4, 1) but gets 3: infinite loss
    for log_softmax in (True, False):
        out = _ctc_compare(device, x, targets, [7, 5, 3], [3, 2, 3], reduction="none",
                           zero_infinity=zero_infinity, through_log_softmax=log_softmax)
        assert (to_np(out)[2] == 0) if zero_infinity else np.isinf(to_np(out)[2])


def test_ctc_loss_concatenated_targets_and_blank(device):
    x, _ = _ctc_case()
    flat = np.array([1, 3, 4, 0, 1, 3])           # lengths 2, 1, 3; blank is class 2
    _ctc_compare(device, x, flat, [7, 6, 6], [2, 1, 3], blank=2, reduction="sum")
    _ctc_compare(device, x, flat, (7, 6, 6), (2, 1, 3), blank=2, reduction="none",
                 lengths_as=tuple)


def test_ctc_loss_empty_target_and_mean(device):
    x, targets = _ctc_case()
    # a zero-length target: its mean term is divided by 1, not 0
    _ctc_compare(device, x, targets, [7, 5, 4], [0, 2, 1], reduction="mean")
    _ctc_compare(device, x, targets, [7, 5, 4], [0, 2, 1], reduction="none",
                 lengths_as=list)


def test_ctc_loss_unbatched_and_float32(device):
    x, _ = _ctc_case(N=1)
    _ctc_compare(device, x[:, 0], np.array([1, 2]), np.array(7), np.array(2),
                 reduction="none")
    _ctc_compare(device, x[:, 0], np.array([1, 1]), np.array(6), np.array(2))
    xf = x.astype(np.float32)
    tx = torch.tensor(xf).log_softmax(2)
    fx = F.log_softmax(fw_tensor(xf, device), 2)
    want = TF.ctc_loss(tx, torch.tensor([[1, 2]]), torch.tensor([7]), torch.tensor([2]))
    got = F.ctc_loss(fx, fw_tensor(np.array([[1, 2]]), device), fw.tensor([7]),
                     fw.tensor([2]))
    assert got.dtype == fw.float32
    assert_close(got, to_np(want), rtol=1e-5, atol=1e-5)


def test_ctc_loss_long_sequence(device):
    # enough frames and labels that every transition kind occurs many times
    rng = np.random.default_rng(3)
    x = rng.standard_normal((20, 2, 6))
    targets = rng.integers(1, 6, (2, 8))
    targets[0, 3] = targets[0, 2]
    _ctc_compare(device, x, targets, [20, 17], [8, 6], reduction="sum")


@pytest.mark.parametrize("call", [
    lambda m, lp, tg, il, tl: m.nn.functional.ctc_loss(lp, tg, il, m.tensor([3, 4, 1])),
    lambda m, lp, tg, il, tl: m.nn.functional.ctc_loss(lp, tg, m.tensor([8, 5, 3]), tl),
    lambda m, lp, tg, il, tl: m.nn.functional.ctc_loss(lp, tg, il, tl, blank=5),
    lambda m, lp, tg, il, tl: m.nn.functional.ctc_loss(lp, tg, il, tl, blank=-1),
    lambda m, lp, tg, il, tl: m.nn.functional.ctc_loss(lp, tg, m.tensor([7]), tl),
    lambda m, lp, tg, il, tl: m.nn.functional.ctc_loss(lp, tg, il, m.tensor([1, 1])),
    lambda m, lp, tg, il, tl: m.nn.functional.ctc_loss(lp, m.tensor([1, 2, 2, 3]), il, tl),
    lambda m, lp, tg, il, tl: m.nn.functional.ctc_loss(lp[:, :0], tg[:0], il[:0], tl[:0]),
])
def test_ctc_loss_errors(call):
    x, targets = _ctc_case()

    def run(m):
        lp = m.tensor(x).log_softmax(2)
        call(m, lp, m.tensor(targets), m.tensor([7, 6, 5]), m.tensor([3, 2, 3]))
    same_error(run, RuntimeError)
    with pytest.raises(ValueError, match="bad is not a valid value for reduction"):
        F.ctc_loss(fw.tensor(x), fw.tensor(targets), [7, 6, 5], [3, 2, 3], reduction="bad")


# -- errors -------------------------------------------------------------------------------

@pytest.mark.parametrize("call,exc", [
    (lambda m: m.nn.functional.cosine_embedding_loss(m.randn(3, 4), m.randn(3, 5),
                                                     m.tensor([1, -1, 1])), RuntimeError),
    (lambda m: m.nn.functional.cosine_embedding_loss(m.randn(4), m.randn(4), m.tensor([1])),
     RuntimeError),
    (lambda m: m.nn.functional.cosine_embedding_loss(m.randn(3, 4), m.randn(3, 4),
                                                     m.tensor([[1], [1], [1]])),
     RuntimeError),
    (lambda m: m.nn.functional.cosine_embedding_loss(m.randn(2), m.randn(2), m.tensor(1),
                                                     reduction="bad"), ValueError),
    (lambda m: m.nn.functional.margin_ranking_loss(m.randn(3), m.randn(3),
                                                   m.tensor([[1, -1, 1.]])), RuntimeError),
    (lambda m: m.nn.functional.hinge_embedding_loss(m.randn(3, 2), m.tensor([1, -1, 1.])),
     RuntimeError),
    (lambda m: m.nn.functional.soft_margin_loss(m.randn(3, 1), m.tensor([1, -1, 1.])),
     RuntimeError),
    (lambda m: m.nn.functional.soft_margin_loss(m.randn(3), m.ones(3, requires_grad=True)),
     RuntimeError),
    (lambda m: m.nn.functional.multilabel_soft_margin_loss(m.randn(3, 4), m.rand(3, 4),
                                                           reduction="bad"), ValueError),
    (lambda m: m.nn.functional.multilabel_margin_loss(
        m.randn(3, 4), m.tensor([[3, 0, -1, 1], [0, 1, 2, 4], [-1, 0, 0, 0]])), RuntimeError),
    (lambda m: m.nn.functional.multilabel_margin_loss(
        m.randn(3, 4), m.tensor([[3, -1, 7, 1], [0, 1, 2, 3], [-1, 0, 0, 0]])), RuntimeError),
    (lambda m: m.nn.functional.multilabel_margin_loss(
        m.randn(3, 4), m.tensor([[3, 0, -1, 1], [0, 1, 2, 3]])), RuntimeError),
    (lambda m: m.nn.functional.multilabel_margin_loss(
        m.randn(2, 4), m.tensor([[3, 0, -1, 1], [0, 1, 2, 3]]).int()), RuntimeError),
    (lambda m: m.nn.functional.multilabel_margin_loss(m.randn(3, 4, 2),
                                                      m.zeros(3, 4, 2).long()), RuntimeError),
    (lambda m: m.nn.functional.multi_margin_loss(m.randn(3, 4), m.tensor([0, 4, 1])),
     RuntimeError),
    (lambda m: m.nn.functional.multi_margin_loss(m.randn(3, 4), m.tensor([0, -1, 1])),
     RuntimeError),
    (lambda m: m.nn.functional.multi_margin_loss(m.randn(3, 4), m.tensor([0, 3, 1]), p=3),
     ValueError),
    (lambda m: m.nn.functional.multi_margin_loss(m.randn(3, 4), m.tensor([0, 3])),
     RuntimeError),
    (lambda m: m.nn.functional.multi_margin_loss(m.randn(3, 4), m.tensor([0, 3, 1]),
                                                 weight=m.rand(3)), RuntimeError),
    (lambda m: m.nn.functional.multi_margin_loss(m.randn(3, 4), m.tensor([0, 3, 1]),
                                                 weight=m.rand(4, 1)), ValueError),
    (lambda m: m.nn.functional.multi_margin_loss(m.randn(3, 4), m.tensor([0., 3, 1])),
     RuntimeError),
    (lambda m: m.nn.functional.multi_margin_loss(m.randn(2, 0), m.tensor([0, 0])),
     RuntimeError),
    (lambda m: m.nn.functional.multi_margin_loss(m.randn(3, 4), m.tensor([0, 3, 1]),
                                                 weight=m.rand(4, requires_grad=True)),
     RuntimeError),
    (lambda m: m.nn.functional.triplet_margin_loss(m.randn(3, 4), m.randn(3, 4),
                                                   m.randn(4)), RuntimeError),
    (lambda m: m.nn.functional.triplet_margin_loss(m.randn(3, 4), m.randn(3, 4),
                                                   m.randn(3, 4), margin=-1), ValueError),
    (lambda m: m.nn.functional.triplet_margin_loss(m.randn(3, 4), m.randn(3, 4),
                                                   m.randn(3, 4), reduction="x"), ValueError),
    (lambda m: m.nn.functional.triplet_margin_with_distance_loss(
        m.randn(3, 4), m.randn(3, 4), m.randn(4)), RuntimeError),
    (lambda m: m.nn.functional.triplet_margin_with_distance_loss(
        m.randn(3, 4), m.randn(3, 4), m.randn(3, 4), margin=0.0), ValueError),
    (lambda m: m.nn.TripletMarginLoss(margin=-1.0), ValueError),
    (lambda m: m.nn.TripletMarginWithDistanceLoss(margin=0), ValueError),
    (lambda m: m.nn.MultiMarginLoss(p=3), ValueError),
    (lambda m: m.nn.MultiMarginLoss(weight=m.ones(2, 2)), ValueError),
])
def test_errors_match_torch(call, exc):
    same_error(call, exc)


# -- modules ------------------------------------------------------------------------------

MODULE_CASES = [
    ("CosineEmbeddingLoss", {"margin": 0.2}, lambda: [_rand(4, 3), _rand(4, 3), _signs(4)]),
    ("MarginRankingLoss", {"margin": 0.1, "reduction": "sum"},
     lambda: [_rand(5), _rand(5), _signs(5).astype(np.float32)]),
    ("HingeEmbeddingLoss", {"margin": 0.5}, lambda: [_rand(3, 4), _signs(3, 4)]),
    ("MultiLabelMarginLoss", {"reduction": "none"},
     lambda: [_rand(2, 4), np.array([[3, 0, -1, 1], [1, 2, 3, 0]])]),
    ("MultiLabelSoftMarginLoss", {"weight": torch.rand(4)},
     lambda: [_rand(3, 4), (np.random.rand(3, 4) > 0.5).astype(np.float32)]),
    ("MultiMarginLoss", {"p": 2, "margin": 0.5, "weight": torch.rand(4)},
     lambda: [_rand(3, 4), np.array([0, 3, 2])]),
    ("TripletMarginLoss", {"margin": 0.5, "p": 1.0, "swap": True},
     lambda: [_rand(3, 4), _rand(3, 4), _rand(3, 4)]),
    ("TripletMarginWithDistanceLoss", {"margin": 2.0},
     lambda: [_rand(3, 4), _rand(3, 4), _rand(3, 4)]),
]


@pytest.mark.parametrize("name,kwargs,inputs", MODULE_CASES,
                         ids=[c[0] for c in MODULE_CASES])
def test_loss_modules(device, name, kwargs, inputs):
    fkw = {k: fw.tensor(v.numpy()) if hasattr(v, "numpy") else v for k, v in kwargs.items()}
    f = getattr(nn, name)(**fkw)
    t = getattr(torch.nn, name)(**kwargs)
    assert repr(f) == repr(t)
    compare_module(torch, f, t, inputs(), device)


def test_soft_margin_loss_module(device):
    x = _rand(3, 4)
    y = _signs(3, 4).astype(np.float32)
    tx = torch.tensor(x, requires_grad=True)
    fx = fw_tensor(x, device, requires_grad=True)
    f, t = nn.SoftMarginLoss(), torch.nn.SoftMarginLoss()
    assert repr(f) == repr(t)
    tout, fout = t(tx, torch.tensor(y)), f(fx, fw_tensor(y, device))
    assert_close(fout, to_np(tout))
    tout.backward()
    fout.backward()
    assert_close(fx.grad, to_np(tx.grad))


def test_ctc_loss_module(device):
    x, targets = _ctc_case()
    f, t = nn.CTCLoss(blank=0, zero_infinity=True), torch.nn.CTCLoss(zero_infinity=True)
    assert repr(f) == repr(t) == "CTCLoss()"
    assert list(f.state_dict()) == []
    tx = torch.tensor(x, requires_grad=True)
    fx = fw_tensor(x, device, requires_grad=True)
    tout = t(tx.log_softmax(2), torch.tensor(targets), torch.tensor([7, 6, 3]),
             torch.tensor([3, 2, 3]))
    fout = f(F.log_softmax(fx, 2), fw_tensor(targets, device), fw.tensor([7, 6, 3]),
             fw.tensor([3, 2, 3]))
    assert_close(fout, to_np(tout), rtol=1e-9, atol=1e-10)
    tout.backward()
    fout.backward()
    assert_close(fx.grad, to_np(tx.grad), rtol=1e-8, atol=1e-10)


def test_print_tree_of_losses():
    f = nn.ModuleList([nn.CrossEntropyLoss(weight=fw.ones(2)), nn.TripletMarginWithDistanceLoss(),
                       nn.CTCLoss(), nn.GaussianNLLLoss()])
    t = torch.nn.ModuleList([torch.nn.CrossEntropyLoss(weight=torch.ones(2)),
                             torch.nn.TripletMarginWithDistanceLoss(), torch.nn.CTCLoss(),
                             torch.nn.GaussianNLLLoss()])
    assert repr(f) == repr(t)
