"""Regression, classification and likelihood losses (functions and modules) against
PyTorch: values and gradients for every option and reduction, odd shapes, errors.
The margin/embedding/multi-label/triplet/CTC losses are in test_loss_extra.py."""
import warnings

import numpy as np
import pytest

import framework as fw
import framework.nn as nn
import framework.nn.functional as F
from tests.helpers import assert_close
from tests.nn.common import compare_module, fw_tensor, to_np

torch = pytest.importorskip("torch")
TF = torch.nn.functional

REDUCTIONS = ["none", "mean", "sum"]


def _rand(*shape, dtype=np.float32):
    return np.random.randn(*shape).astype(dtype)


def _tol(dtype):
    return dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-9, atol=1e-11)


def run_loss(name, arrays, device, grad=(0,), tensor_kw=None, **kw):
    """``F.<name>`` against ``torch.nn.functional.<name>`` on the same NumPy ``arrays``
    (positional) and ``tensor_kw`` (keyword tensors): the output, then the gradients of the
    positional arrays listed in ``grad`` under a random cotangent. Returns the output."""
    tensor_kw = tensor_kw or {}
    t_args, f_args = [], []
    for i, a in enumerate(arrays):
        a = np.asarray(a)
        t_args.append(torch.tensor(a, requires_grad=i in grad))
        f_args.append(fw_tensor(a, device, requires_grad=i in grad))
    t_kw = dict(kw, **{k: torch.tensor(np.asarray(v)) for k, v in tensor_kw.items()})
    f_kw = dict(kw, **{k: fw_tensor(np.asarray(v), device) for k, v in tensor_kw.items()})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tout = getattr(TF, name)(*t_args, **t_kw)
        fout = getattr(F, name)(*f_args, **f_kw)
    assert tuple(fout.shape) == tuple(tout.shape)
    assert str(fout.dtype).split(".")[-1] == str(tout.dtype).split(".")[-1]
    tol = _tol(np.asarray(arrays[0]).dtype)
    assert_close(fout, to_np(tout), **tol)
    if grad and tout.requires_grad:
        g = np.asarray(np.random.randn(*tout.shape), dtype=np.asarray(arrays[0]).dtype)
        tout.backward(torch.tensor(g))
        fout.backward(fw_tensor(g, device))
        for i in grad:
            if t_args[i].grad is None:          # no gradient path (e.g. a sign target)
                assert f_args[i].grad is None
            else:
                assert_close(f_args[i].grad, to_np(t_args[i].grad), **tol)
    return fout


def same_error(call, exc, match_torch=True):
    """``call(module)`` raises ``exc`` with torch and with the framework; the messages agree
    up to the tensor type names (torch.Size vs framework.Size)."""
    with pytest.raises(exc) as want:
        call(torch)
    with pytest.raises(exc) as got:
        call(fw)
    if match_torch:
        assert str(got.value).replace("framework.", "torch.") == str(want.value)
    return got.value


# -- regression losses --------------------------------------------------------------------

@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"])
def test_regression_losses(device, name, reduction):
    x, y = _rand(3, 5), _rand(3, 5)
    y[0, :2] = x[0, :2]            # zero differences, where |d| has a kink
    run_loss(name, [x, y], device, grad=(0, 1), reduction=reduction)


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"])
def test_regression_losses_float64_odd_shapes(device, name):
    run_loss(name, [_rand(7, dtype=np.float64), _rand(7, dtype=np.float64)], device,
             grad=(0, 1))
    run_loss(name, [_rand(1, 1, 3), _rand(1, 1, 3)], device, grad=(0, 1))
    run_loss(name, [_rand(0, 4), _rand(0, 4)], device, grad=(0, 1), reduction="sum")
    out = run_loss(name, [_rand(0, 4), _rand(0, 4)], device, grad=(), reduction="mean")
    assert np.isnan(to_np(out))


@pytest.mark.parametrize("beta", [0.0, 0.5, 1.0, 2.0])
def test_smooth_l1_beta(device, beta):
    x = np.array([0.0, 0.25, -0.5, 1.0, -2.0, 3.0, 0.1], np.float32)
    y = np.zeros(7, np.float32)    # differences on both sides of, and at, beta
    run_loss("smooth_l1_loss", [x, y], device, grad=(0, 1), beta=beta, reduction="none")
    run_loss("smooth_l1_loss", [_rand(4, 3), _rand(4, 3)], device, grad=(0, 1), beta=beta)


@pytest.mark.parametrize("delta", [0.5, 1.0, 2.0])
def test_huber_delta(device, delta):
    x = np.array([0.0, 0.25, -0.5, 1.0, -2.0, 3.0, 0.1], np.float32)
    run_loss("huber_loss", [x, np.zeros(7, np.float32)], device, grad=(0, 1), delta=delta,
             reduction="none")
    run_loss("huber_loss", [_rand(4, 3), _rand(4, 3)], device, grad=(0, 1), delta=delta)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "huber_loss"])
def test_elementwise_weight(device, name, reduction):
    w = np.random.rand(3, 4).astype(np.float32)
    run_loss(name, [_rand(3, 4), _rand(3, 4)], device, grad=(0, 1), tensor_kw={"weight": w},
             reduction=reduction)


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"])
def test_broadcast_target_warns(device, name):
    with pytest.warns(UserWarning, match=r"Using a target size \(framework.Size\(\[3\]\)\) "
                      r"that is different to the input size \(framework.Size\(\[3, 1\]\)\)"):
        getattr(F, name)(fw_tensor(_rand(3, 1), device), fw_tensor(_rand(3), device))
    run_loss(name, [_rand(3, 1), _rand(3)], device, grad=(0, 1))   # broadcasts as torch


@pytest.mark.parametrize("size_average,reduce", [(None, False), (False, None), (True, True),
                                                 (False, True), (True, False)])
def test_legacy_reduction_args(device, size_average, reduce):
    x, y = _rand(4, 3), _rand(4, 3)
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        F.mse_loss(fw_tensor(x, device), fw_tensor(y, device), size_average, reduce)
    run_loss("mse_loss", [x, y], device, size_average=size_average, reduce=reduce)
    run_loss("l1_loss", [x, y], device, size_average=size_average, reduce=reduce)
    with pytest.warns(UserWarning):
        m = nn.MSELoss(size_average, reduce)
        tm = torch.nn.MSELoss(size_average, reduce)
    assert m.reduction == tm.reduction


@pytest.mark.parametrize("call,exc", [
    (lambda m: m.nn.functional.mse_loss(m.randn(3), m.randn(3), reduction="bad"), ValueError),
    (lambda m: m.nn.functional.l1_loss(m.randn(3, 2), m.randn(4)), RuntimeError),
    (lambda m: m.nn.functional.mse_loss(m.randn(3), m.randn(3), weight=m.rand(2)),
     ValueError),
    (lambda m: m.nn.functional.smooth_l1_loss(m.randn(3), m.randn(3), beta=-1), RuntimeError),
    (lambda m: m.nn.functional.huber_loss(m.randn(3), m.randn(3), delta=0), RuntimeError),
    (lambda m: m.nn.functional.huber_loss(m.randn(3), m.randn(3), reduction="x"), ValueError),
])
def test_regression_errors(call, exc):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_error(call, exc)


# -- nll_loss and cross_entropy -----------------------------------------------------------

def _targets(n, c, ignore=None, seed=0):
    t = np.random.default_rng(seed).integers(0, c, n)
    if ignore is not None:
        t[1] = ignore
    return t


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore_index", [-100, 2])
def test_nll_loss(device, reduction, weighted, ignore_index):
    x = _rand(5, 7)
    t = _targets(5, 7, ignore=ignore_index)
    kw = {"weight": np.random.rand(7).astype(np.float32)} if weighted else {}
    run_loss("nll_loss", [x, t], device, tensor_kw=kw, ignore_index=ignore_index,
             reduction=reduction)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", [(2, 5, 3), (2, 5, 3, 2), (1, 5, 2, 1, 3)])
def test_nll_loss_nd(device, reduction, shape):
    x = _rand(*shape)
    t = np.random.randint(0, 5, (shape[0],) + shape[2:])
    t.reshape(-1)[0] = -100
    run_loss("nll_loss", [x, t], device, tensor_kw={"weight": np.random.rand(5)
                                                   .astype(np.float32)}, reduction=reduction)


@pytest.mark.parametrize("target", [np.array(3), np.array([3])])
def test_nll_and_cross_entropy_unbatched(device, target):
    # torch's own backward (and its label smoothing) fail for a (1,) target: there only
    # the forward values are compared
    grad = (0,) if target.ndim == 0 else ()
    smoothing = 0.2 if target.ndim == 0 else 0.0
    for reduction in REDUCTIONS:
        run_loss("nll_loss", [_rand(5), target], device, grad=grad, reduction=reduction)
        run_loss("cross_entropy", [_rand(5), target], device, grad=grad,
                 reduction=reduction, label_smoothing=smoothing)


def test_nll_all_ignored_and_empty(device):
    t = np.array([-100, -100, -100])
    out = run_loss("nll_loss", [_rand(3, 4), t], device, grad=())
    assert np.isnan(to_np(out))
    run_loss("nll_loss", [_rand(3, 4), t], device, reduction="sum")
    out = run_loss("cross_entropy", [_rand(0, 4), np.zeros(0, np.int64)], device, grad=())
    assert np.isnan(to_np(out))
    run_loss("cross_entropy", [_rand(0, 4), np.zeros(0, np.int64)], device, reduction="sum")
    run_loss("cross_entropy", [_rand(0, 4), np.zeros(0, np.int64)], device, reduction="none")


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.15, 1.0])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_indices(device, reduction, smoothing, weighted):
    x = _rand(6, 5) * 3
    t = _targets(6, 5, ignore=-100)
    kw = {"weight": np.random.rand(5).astype(np.float32)} if weighted else {}
    run_loss("cross_entropy", [x, t], device, tensor_kw=kw, reduction=reduction,
             label_smoothing=smoothing)


def test_cross_entropy_nd_ignore_smoothing(device):
    x = _rand(2, 4, 3, 5)
    t = np.random.randint(0, 4, (2, 3, 5))
    t[0, 0, :2] = 1
    w = np.random.rand(4).astype(np.float32)
    for reduction in REDUCTIONS:
        run_loss("cross_entropy", [x, t], device, tensor_kw={"weight": w}, ignore_index=1,
                 reduction=reduction, label_smoothing=0.3)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", [(4, 5), (2, 5, 3), (5,)])
def test_cross_entropy_probabilities(device, reduction, shape):
    x = _rand(*shape)
    p = np.random.rand(*shape).astype(np.float32)
    p /= p.sum(axis=1 if len(shape) > 1 else 0, keepdims=True)
    w = np.random.rand(5).astype(np.float32)
    run_loss("cross_entropy", [x, p], device, grad=(0, 1), reduction=reduction)
    run_loss("cross_entropy", [x, p], device, grad=(0, 1), tensor_kw={"weight": w},
             reduction=reduction, label_smoothing=0.25)


def test_cross_entropy_float64_large_logits(device):
    x = np.random.randn(5, 9) * 50      # log_softmax must stay finite
    run_loss("cross_entropy", [x, _targets(5, 9)], device, label_smoothing=0.1)


def test_cross_entropy_byte_target(device):
    run_loss("nll_loss", [_rand(4, 3), np.array([0, 2, 1, 2], np.uint8)], device)


@pytest.mark.parametrize("target", [[0, 5, 2], [0, -1, 2], [7, 1, 1]])
@pytest.mark.parametrize("fn", ["cross_entropy", "nll_loss"])
def test_class_index_out_of_bounds(device, fn, target):
    def call(m):
        dev = "cpu" if m is torch else device
        getattr(m.nn.functional, fn)(m.randn(3, 5, device=dev),
                                     m.tensor(target, device=dev))
    err = same_error(call, IndexError)
    assert str(err) == f"Target {[v for v in target if not 0 <= v < 5][0]} is out of bounds."


def test_class_index_out_of_bounds_nd(device):
    def call(m):
        dev = "cpu" if m is torch else device
        t = m.zeros(2, 3, dtype=m.int64, device=dev)
        t[1, 2] = 9
        m.nn.functional.cross_entropy(m.randn(2, 4, 3, device=dev), t)
    same_error(call, IndexError)


@pytest.mark.parametrize("call,exc", [
    (lambda m: m.nn.functional.cross_entropy(m.randn(3, 5), m.tensor([0, 1])), ValueError),
    (lambda m: m.nn.functional.cross_entropy(m.randn(3, 5), m.tensor([0, 1, 2]).int()),
     RuntimeError),
    (lambda m: m.nn.functional.cross_entropy(m.randn(3, 5), m.tensor([0., 1, 2])),
     RuntimeError),
    (lambda m: m.nn.functional.cross_entropy(m.randn(3, 5), m.rand(3, 5), ignore_index=1),
     RuntimeError),
    (lambda m: m.nn.functional.cross_entropy(m.randn(3, 5), m.rand(3, 4)), RuntimeError),
    (lambda m: m.nn.functional.cross_entropy(m.randn(3, 5), m.rand(3, 5).long()),
     RuntimeError),
    (lambda m: m.nn.functional.cross_entropy(m.randn(3, 5), m.tensor([0, 1, 2]),
                                             weight=m.rand(4)), RuntimeError),
    (lambda m: m.nn.functional.cross_entropy(m.randn(3, 5), m.rand(3, 5), weight=m.rand(4)),
     RuntimeError),
    (lambda m: m.nn.functional.cross_entropy(m.randn(3, 5), m.tensor([0, 1, 2]),
                                             reduction="foo"), ValueError),
    (lambda m: m.nn.functional.cross_entropy(m.randn(3, 5), m.tensor([0, 1, 2]),
                                             label_smoothing=1.5), RuntimeError),
    (lambda m: m.nn.functional.cross_entropy(m.randn(2, 5, 3), m.zeros(2, 4).long()),
     RuntimeError),
    (lambda m: m.nn.functional.nll_loss(m.randn(2, 5, 3, 2), m.zeros(2, 3, 3).long()),
     RuntimeError),
    (lambda m: m.nn.functional.nll_loss(m.randn(2, 5, 3, 2), m.zeros(2, 3).long()),
     RuntimeError),
    (lambda m: m.nn.functional.nll_loss(m.randn(5), m.tensor([3, 1])), ValueError),
    (lambda m: m.nn.functional.nll_loss(m.randn(5), m.tensor([[3]])), RuntimeError),
    (lambda m: m.nn.functional.nll_loss(m.tensor(3.), m.tensor(1)), ValueError),
    (lambda m: m.nn.functional.nll_loss(m.randn(3, 4), m.tensor([[1]])), ValueError),
    (lambda m: m.nn.functional.cross_entropy(m.randn(3, 5, dtype=m.float64),
                                             m.tensor([0, 1, 2]), weight=m.rand(5)),
     RuntimeError),
    (lambda m: m.nn.functional.cross_entropy(m.randn(3, 5), m.tensor([0, 1, 2]),
                                             weight=m.rand(5, requires_grad=True)),
     RuntimeError),
])
def test_classification_errors(call, exc):
    same_error(call, exc)


# -- binary cross entropy -----------------------------------------------------------------

@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_cross_entropy(device, reduction):
    x = np.random.rand(4, 3).astype(np.float32) * 0.98 + 0.01
    y = np.random.rand(4, 3).astype(np.float32)
    run_loss("binary_cross_entropy", [x, y], device, grad=(0, 1), reduction=reduction)
    w = np.random.rand(3).astype(np.float32)       # broadcasts over the batch
    run_loss("binary_cross_entropy", [x, y], device, grad=(0, 1), tensor_kw={"weight": w},
             reduction=reduction)


def test_binary_cross_entropy_saturated_inputs(device):
    # inputs exactly 0 or 1: the logs clamp at -100 and the input gradient stays finite
    x = np.array([0.0, 1.0, 0.0, 1.0, 0.5], np.float64)
    y = np.array([0.0, 1.0, 1.0, 0.0, 0.3], np.float64)
    out = run_loss("binary_cross_entropy", [x, y], device, grad=(0,), reduction="none")
    assert_close(out, [0, 0, 100, 100, -(0.3 * np.log(0.5) + 0.7 * np.log(0.5))])


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_bce_with_logits(device, reduction):
    x = np.array([[-100.0, -20.0, -1.0, 0.0], [0.5, 3.0, 25.0, 100.0]], np.float32)
    y = np.random.rand(2, 4).astype(np.float32)
    out = run_loss("binary_cross_entropy_with_logits", [x, y], device, grad=(0, 1),
                   reduction=reduction)
    assert np.isfinite(to_np(out)).all()
    kw = {"weight": np.random.rand(4).astype(np.float32),
          "pos_weight": np.random.rand(4).astype(np.float32) * 3}
    run_loss("binary_cross_entropy_with_logits", [x, y], device, grad=(0, 1), tensor_kw=kw,
             reduction=reduction)


def test_bce_with_logits_float64_pos_weight_nd(device):
    x, y = _rand(2, 3, 4, dtype=np.float64), np.random.rand(2, 3, 4)
    run_loss("binary_cross_entropy_with_logits", [x, y], device, grad=(0, 1),
             tensor_kw={"pos_weight": np.random.rand(4) * 2})


@pytest.mark.parametrize("call,exc", [
    (lambda m: m.nn.functional.binary_cross_entropy(m.rand(3, 1), m.rand(3)), ValueError),
    (lambda m: m.nn.functional.binary_cross_entropy(m.tensor([1.5]), m.rand(1)),
     RuntimeError),
    (lambda m: m.nn.functional.binary_cross_entropy(m.tensor([0.5, float("nan")]),
                                                    m.rand(2)), RuntimeError),
    (lambda m: m.nn.functional.binary_cross_entropy(m.rand(3), m.rand(3),
                                                    weight=m.rand(2)), RuntimeError),
    (lambda m: m.nn.functional.binary_cross_entropy(m.rand(3, 2), m.rand(3, 2).long()),
     RuntimeError),
    (lambda m: m.nn.functional.binary_cross_entropy(m.rand(3), m.rand(3), reduction="x"),
     ValueError),
    (lambda m: m.nn.functional.binary_cross_entropy(
        m.rand(3), m.rand(3), weight=m.rand(3, requires_grad=True)), RuntimeError),
    (lambda m: m.nn.functional.binary_cross_entropy_with_logits(m.rand(3, 1), m.rand(3)),
     ValueError),
    (lambda m: m.nn.functional.binary_cross_entropy_with_logits(
        m.rand(3, 2), m.rand(3, 2), pos_weight=m.rand(3)), RuntimeError),
    (lambda m: m.nn.functional.binary_cross_entropy_with_logits(
        m.rand(3), m.rand(3), pos_weight=m.rand(3, requires_grad=True)), RuntimeError),
])
def test_bce_errors(call, exc):
    same_error(call, exc)


# -- kl_div, poisson_nll_loss, gaussian_nll_loss -------------------------------------------

@pytest.mark.parametrize("reduction", ["none", "sum", "mean", "batchmean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(device, reduction, log_target):
    x = np.log(np.random.rand(3, 5).astype(np.float32))
    y = np.random.rand(3, 5).astype(np.float32)
    if log_target:
        y = np.log(y)
    run_loss("kl_div", [x, y], device, grad=(0, 1), reduction=reduction,
             log_target=log_target)


def test_kl_div_zero_target_and_scalar(device):
    y = np.array([0.0, 0.3, 0.7], np.float32)
    run_loss("kl_div", [_rand(3), y], device, grad=(0,), reduction="sum")
    run_loss("kl_div", [np.float32(-0.5), np.float32(0.4)], device, grad=(0, 1),
             reduction="batchmean")


def test_kl_div_mean_warns():
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        F.kl_div(fw.randn(2, 3), fw.rand(2, 3))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("log_input,full", [(True, False), (True, True), (False, False),
                                            (False, True)])
def test_poisson_nll_loss(device, reduction, log_input, full):
    x = _rand(3, 4) if log_input else np.random.rand(3, 4).astype(np.float32) + 0.1
    y = (np.random.rand(3, 4) * 4).astype(np.float32)
    y[0, :2] = [0.5, 1.0]          # the Stirling term only where target > 1
    run_loss("poisson_nll_loss", [x, y], device, grad=(0, 1), log_input=log_input, full=full,
             reduction=reduction)


def test_poisson_nll_loss_eps(device):
    x = np.array([0.0, 1e-3, 0.5], np.float32)
    run_loss("poisson_nll_loss", [x, np.ones(3, np.float32)], device, log_input=False,
             eps=0.1)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("var_shape", [(4, 3), (4,), (4, 1), (1, 3)])
def test_gaussian_nll_loss(device, reduction, var_shape):
    v = np.random.rand(*var_shape).astype(np.float32) + 0.1
    v.reshape(-1)[0] = 1e-9        # clamped to eps, gradient still flows (as torch)
    run_loss("gaussian_nll_loss", [_rand(4, 3), _rand(4, 3), v], device, grad=(0, 1, 2),
             reduction=reduction)
    run_loss("gaussian_nll_loss", [_rand(4, 3), _rand(4, 3), v], device, grad=(0, 1, 2),
             reduction=reduction, full=True, eps=1e-3)


def test_gaussian_nll_loss_float_var_and_target_broadcast(device):
    x, y = _rand(4, 3), _rand(4, 3)
    tx = torch.tensor(x, requires_grad=True)
    fx = fw_tensor(x, device, requires_grad=True)
    tout = TF.gaussian_nll_loss(tx, torch.tensor(y), 0.5)
    fout = F.gaussian_nll_loss(fx, fw_tensor(y, device), 0.5)
    assert_close(fout, to_np(tout))
    tout.backward()
    fout.backward()
    assert_close(fx.grad, to_np(tx.grad))
    run_loss("gaussian_nll_loss", [_rand(4, 3), _rand(4, 1), np.random.rand(4, 3) + 0.1],
             device, grad=(0, 1))


@pytest.mark.parametrize("call,exc", [
    (lambda m: m.nn.functional.gaussian_nll_loss(m.randn(3, 2), m.randn(3, 2), m.rand(2)),
     ValueError),
    (lambda m: m.nn.functional.gaussian_nll_loss(m.randn(3, 2), m.randn(3, 2),
                                                 -m.rand(3, 2)), ValueError),
    (lambda m: m.nn.functional.gaussian_nll_loss(m.randn(3, 2), m.randn(3, 2), -0.5),
     ValueError),
    (lambda m: m.nn.functional.gaussian_nll_loss(m.randn(3, 2), m.randn(3, 2), m.rand(3, 2),
                                                 reduction="bad"), ValueError),
    (lambda m: m.nn.functional.gaussian_nll_loss(m.randn(3, 2), m.randn(3, 2),
                                                 m.rand(2, 3, 2)), ValueError),
    (lambda m: m.nn.functional.poisson_nll_loss(m.randn(3), m.rand(3), reduction="bad"),
     ValueError),
    (lambda m: m.nn.functional.poisson_nll_loss(m.randn(3), m.rand(2)), RuntimeError),
    (lambda m: m.nn.functional.kl_div(m.randn(3, 2), m.rand(3, 2), reduction="bad"),
     ValueError),
    (lambda m: m.nn.functional.kl_div(m.randn(3, 2), m.rand(3)), RuntimeError),
])
def test_likelihood_errors(call, exc):
    same_error(call, exc)


# -- modules ------------------------------------------------------------------------------

def _prob(*shape):
    return np.random.rand(*shape).astype(np.float32) * 0.9 + 0.05


MODULE_CASES = [
    ("L1Loss", {}, lambda: [_rand(3, 4), _rand(3, 4)]),
    ("MSELoss", {"reduction": "sum"}, lambda: [_rand(3, 4), _rand(3, 4)]),
    ("SmoothL1Loss", {"beta": 0.5}, lambda: [_rand(3, 4), _rand(3, 4)]),
    ("HuberLoss", {"delta": 0.7, "reduction": "none"}, lambda: [_rand(3, 4), _rand(3, 4)]),
    ("NLLLoss", {"weight": torch.rand(5), "ignore_index": 1},
     lambda: [_rand(4, 5), _targets(4, 5)]),
    ("CrossEntropyLoss", {}, lambda: [_rand(4, 5), _targets(4, 5)]),
    ("CrossEntropyLoss", {"weight": torch.rand(5), "label_smoothing": 0.1,
                          "reduction": "sum"}, lambda: [_rand(4, 5), _targets(4, 5)]),
    ("BCELoss", {"weight": torch.rand(4)}, lambda: [_prob(3, 4), _prob(3, 4)]),
    ("BCEWithLogitsLoss", {"weight": torch.rand(4), "pos_weight": torch.rand(4)},
     lambda: [_rand(3, 4), _prob(3, 4)]),
    ("BCEWithLogitsLoss", {}, lambda: [_rand(3, 4), _prob(3, 4)]),
    ("KLDivLoss", {"reduction": "batchmean", "log_target": True},
     lambda: [_rand(3, 4), _rand(3, 4)]),
    ("PoissonNLLLoss", {"full": True}, lambda: [_rand(3, 4), _prob(3, 4) * 4]),
    ("GaussianNLLLoss", {"full": True, "eps": 1e-4},
     lambda: [_rand(3, 4), _rand(3, 4), _prob(3, 4)]),
]


@pytest.mark.parametrize("name,kwargs,inputs", MODULE_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(MODULE_CASES)])
def test_loss_modules(device, name, kwargs, inputs):
    fkw = {k: fw.tensor(v.numpy()) if hasattr(v, "numpy") else v for k, v in kwargs.items()}
    f = getattr(nn, name)(**fkw)
    t = getattr(torch.nn, name)(**kwargs)
    assert repr(f) == repr(t)
    compare_module(torch, f, t, inputs(), device)     # state_dict keys: weight buffers


def test_loss_module_buffers_follow_to(device):
    m = nn.CrossEntropyLoss(weight=fw.rand(3)).to(device)
    assert m.weight.device.type == device
    assert list(m.state_dict()) == ["weight"]
    assert list(nn.BCEWithLogitsLoss(pos_weight=fw.ones(2)).state_dict()) == ["pos_weight"]
    assert list(nn.MSELoss().state_dict()) == []
