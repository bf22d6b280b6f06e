"""The fused normalization ops (framework/_ops/norm.py: native/norm.cpp on cpu, Triton's
framework/kernels/norm.py on cuda) behind F.layer_norm, F.rms_norm, F.group_norm and
F.batch_norm, against torch computed in float64 from the same values: outputs, input,
weight and bias gradients for rows shorter and longer than a block, every affine
combination, 16-bit inputs with float32 parameters; running statistics over several
steps; gradcheck and gradgradcheck in float64."""
import numpy as np
import pytest

import framework as fw
import framework.nn.functional as F
from tests.nn.common import copy_state, fw_tensor, to_np

torch = pytest.importorskip("torch")
TF = torch.nn.functional

pytestmark = pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning",
                                        "ignore:divide by zero:RuntimeWarning",
                                        "ignore:overflow encountered:RuntimeWarning")

# relative error allowed, of the reference's largest magnitude
TOL = {"float64": 1e-10, "float32": 2e-5, "float16": 4e-3, "bfloat16": 3e-2}
DTYPES = list(TOL)


def _close(actual, expected, tol):
    a = to_np(actual).astype(np.float64)
    e = np.asarray(expected, dtype=np.float64)
    assert a.shape == e.shape, f"shape {a.shape} != {e.shape}"
    scale = max(float(np.abs(e).max()) if e.size else 0.0, 1.0)
    np.testing.assert_allclose(a, e, rtol=tol, atol=tol * scale)


def _round(a, dtype):
    """``a`` rounded to ``dtype`` (the values both sides then start from), as float64."""
    return to_np(fw.tensor(a, dtype=getattr(fw, dtype))).astype(np.float64)


def _check(fw_fn, t_fn, x, params, device, dtype):
    """fw_fn(x, *params) against t_fn in float64: the output (its dtype is the input's)
    and every gradient. ``x`` goes in as ``dtype``, the parameters (None: absent) as
    float32 (float64 for float64 inputs), as a model with autocast-lowered activations."""
    pdt = fw.float64 if dtype == "float64" else fw.float32
    x = _round(x, dtype)
    pname = str(pdt).rpartition(".")[2]
    params = [None if p is None else _round(p, pname) for p in params]
    fx = fw_tensor(x, device, requires_grad=True, dtype=getattr(fw, dtype))
    fps = [None if p is None else fw_tensor(p, device, requires_grad=True, dtype=pdt)
           for p in params]
    tx = torch.tensor(x, requires_grad=True)
    tps = [None if p is None else torch.tensor(p, requires_grad=True) for p in params]
    y, ty = fw_fn(fx, *fps), t_fn(tx, *tps)
    assert y.dtype is getattr(fw, dtype)
    tol = TOL[dtype]
    _close(y, ty.detach().numpy(), tol)
    g = _round(np.random.default_rng(7).standard_normal(tuple(ty.shape)), dtype)
    y.backward(fw.tensor(g, dtype=y.dtype, device=device))
    ty.backward(torch.tensor(g))
    _close(fx.grad, tx.grad.numpy(), tol * 4)
    for fp, tp in zip(fps, tps):
        if fp is not None:
            assert fp.grad.dtype is pdt
            _close(fp.grad, tp.grad.numpy(), tol * 4)


def _data(shape, seed=0):
    rng = np.random.default_rng(seed)
    # an offset mean: the two-pass variance matters
    return rng.standard_normal(shape) * 2.0 + 3.0


# ---- layer_norm ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 7, 1000, 4097])
def test_layer_norm_rows(device, dtype, n):
    rows = 3 if n > 1000 else 5
    x = _data((rows, n))
    w, b = _data(n, 1), _data(n, 2)
    _check(lambda a, w_, b_: F.layer_norm(a, (n,), w_, b_, 1e-5),
           lambda a, w_, b_: TF.layer_norm(a, (n,), w_, b_, 1e-5), x, [w, b], device, dtype)


@pytest.mark.parametrize("op", ["layer_norm", "rms_norm"])
@pytest.mark.parametrize("needs", [(True, True, True), (True, False, False),
                                   (False, True, False), (False, False, True)])
def test_row_backward_programs_of_several_rows(device, monkeypatch, op, needs):
    """cuda's row backward: each program walks several rows, writing their input gradients
    and one partial row of the parameter gradients (the last program's rows past the end
    dead), whichever gradients are asked for."""
    from framework.kernels import norm as K
    monkeypatch.setattr(K, "_ROW_PROGRAMS", 4)   # 11 rows: programs of 3, the last of 2
    x, w, b = _data((11, 37)), _data(37, 1), _data(37, 2)
    if op == "rms_norm":
        fn, tfn, params = ((lambda a, w_: F.rms_norm(a, (37,), w_)),
                           (lambda a, w_: TF.rms_norm(a, (37,), w_)), [w])
    else:
        fn, tfn, params = ((lambda a, w_, b_: F.layer_norm(a, (37,), w_, b_)),
                           (lambda a, w_, b_: TF.layer_norm(a, (37,), w_, b_)), [w, b])
    fx = fw_tensor(x, device, requires_grad=needs[0], dtype=fw.float32)
    fps = [fw_tensor(p, device, requires_grad=r, dtype=fw.float32)
           for p, r in zip(params, needs[1:])]
    tx = torch.tensor(x, requires_grad=needs[0])
    tps = [torch.tensor(p, requires_grad=r) for p, r in zip(params, needs[1:])]
    g = np.random.default_rng(8).standard_normal((11, 37))
    if not any(t.requires_grad for t in [fx] + fps):
        pytest.skip("rms_norm has no bias")
    fn(fx, *fps).backward(fw.tensor(g, dtype=fw.float32, device=device))
    tfn(tx, *tps).backward(torch.tensor(g))
    for f, t in zip([fx] + fps, [tx] + tps):
        assert (f.grad is None) == (t.grad is None)
        if f.grad is not None:
            _close(f.grad, t.grad.numpy(), 1e-4)


@pytest.mark.parametrize("affine", ["weight", "bias", "none"])
def test_layer_norm_affine_combinations(device, affine):
    x = _data((4, 3, 40))
    w = _data((3, 40), 1) if affine == "weight" else None
    b = _data((3, 40), 2) if affine == "bias" else None
    _check(lambda a, w_, b_: F.layer_norm(a, (3, 40), w_, b_),
           lambda a, w_, b_: TF.layer_norm(a, (3, 40), w_, b_), x, [w, b], device, "float32")


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_layer_norm_two_dims(device, dtype):
    x = _data((2, 3, 5, 66))
    w, b = _data((5, 66), 1), _data((5, 66), 2)
    _check(lambda a, w_, b_: F.layer_norm(a, [5, 66], w_, b_, 1e-3),
           lambda a, w_, b_: TF.layer_norm(a, [5, 66], w_, b_, 1e-3), x, [w, b], device, dtype)


def test_layer_norm_statistics_and_noncontiguous(device):
    x = _data((6, 9)).T          # non-contiguous
    fx = fw_tensor(np.ascontiguousarray(x), device, dtype=fw.float32).t().contiguous().t()
    assert not fx.is_contiguous()
    out, mean, rstd = fw.native_layer_norm(fx, [6], None, None, 1e-5)
    assert tuple(mean.shape) == (9, 1) and mean.dtype is fw.float32
    _close(mean, x.mean(1, keepdims=True), 1e-6)
    _close(rstd, 1 / np.sqrt(x.var(1, keepdims=True) + 1e-5), 1e-5)
    _close(out, TF.layer_norm(torch.tensor(x), (6,)).numpy(), 1e-5)


def test_layer_norm_constant_row_and_empty(device):
    # a constant row: variance 0, output 0, gradient finite
    x = fw_tensor(np.full((2, 8), 5.0), device, requires_grad=True)
    y = F.layer_norm(x, (8,))
    _close(y, np.zeros((2, 8)), 0)
    y.sum().backward()
    assert np.isfinite(to_np(x.grad)).all()
    e = fw_tensor(np.zeros((0, 8)), device, requires_grad=True)
    w = fw_tensor(np.ones(8), device, requires_grad=True)
    F.layer_norm(e, (8,), w).sum().backward()
    _close(w.grad, np.zeros(8), 0)


# ---- rms_norm -----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("eps", [None, 1e-3])
def test_rms_norm(device, dtype, eps):
    for n, weighted in ((7, True), (1000, False), (1, True)):
        x = _data((4, n))
        w = _data(n, 1) if weighted else None
        _check(lambda a, w_: F.rms_norm(a, (n,), w_, eps),
               lambda a, w_: TF.rms_norm(a, (n,), w_, eps), x, [w], device, dtype)


def test_rms_norm_two_dims(device):
    x = _data((3, 4, 50))
    _check(lambda a, w_: F.rms_norm(a, (4, 50), w_), lambda a, w_: TF.rms_norm(a, (4, 50), w_),
           x, [_data((4, 50), 1)], device, "float32")


# ---- group_norm ---------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(3, 6), (2, 6, 9), (2, 6, 5, 7)])
@pytest.mark.parametrize("groups", [1, 3, 6])
def test_group_norm(device, shape, groups):
    x = _data(shape)
    w, b = _data(shape[1], 1), _data(shape[1], 2)
    _check(lambda a, w_, b_: F.group_norm(a, groups, w_, b_),
           lambda a, w_, b_: TF.group_norm(a, groups, w_, b_), x, [w, b], device, "float32")


@pytest.mark.parametrize("dtype", DTYPES)
def test_group_norm_dtypes(device, dtype):
    x = _data((2, 8, 300))   # groups of 4 channels of 300
    w, b = _data(8, 1), _data(8, 2)
    _check(lambda a, w_, b_: F.group_norm(a, 2, w_, b_, 1e-4),
           lambda a, w_, b_: TF.group_norm(a, 2, w_, b_, 1e-4), x, [w, b], device, dtype)


def test_group_norm_long_groups_no_affine(device):
    x = _data((2, 4, 40, 60))   # a group of 4800 elements: longer than one block
    _check(lambda a: F.group_norm(a, 2), lambda a: TF.group_norm(a, 2), x, [], device,
           "float32")
    _check(lambda a, w_: F.group_norm(a, 4, w_), lambda a, w_: TF.group_norm(a, 4, w_),
           x[:, :, :3], [_data(4, 1)], device, "float32")


# ---- batch_norm ---------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(16, 5), (4, 5, 9), (3, 5, 4, 6)])
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("dtype", DTYPES)
def test_batch_norm(device, shape, training, dtype):
    x = _data(shape)
    w, b = _data(5, 1), _data(5, 2)
    rm, rv = _data(5, 3), np.random.default_rng(4).random(5) + 0.5
    pdt = fw.float64 if dtype == "float64" else fw.float32
    frm, frv = fw_tensor(rm, device, dtype=pdt), fw_tensor(rv, device, dtype=pdt)
    pname = str(pdt).rpartition(".")[2]
    trm, trv = torch.tensor(_round(rm, pname)), torch.tensor(_round(rv, pname))
    _check(lambda a, w_, b_: F.batch_norm(a, frm, frv, w_, b_, training, 0.3, 1e-4),
           lambda a, w_, b_: TF.batch_norm(a, trm, trv, w_, b_, training, 0.3, 1e-4),
           x, [w, b], device, dtype)
    _close(frm, trm.numpy(), max(TOL[dtype], 1e-6))
    _close(frv, trv.numpy(), max(TOL[dtype], 1e-6))


@pytest.mark.parametrize("module", ["BatchNorm1d", "BatchNorm2d"])
@pytest.mark.parametrize("kwargs", [{}, {"momentum": 0.5}, {"momentum": None},
                                    {"affine": False}, {"track_running_stats": False}])
def test_batch_norm_module_steps(device, module, kwargs):
    shape = (8, 4) if module == "BatchNorm1d" else (3, 4, 5, 2)
    tm = getattr(torch.nn, module)(4, **kwargs).double()
    fm = getattr(fw.nn, module)(4, **kwargs).to(device=device, dtype=fw.float64)
    copy_state(fm, tm)
    for step in range(3):
        x = _data(shape, step)
        fx = fw_tensor(x, device, requires_grad=True)
        tx = torch.tensor(x, requires_grad=True)
        y, ty = fm(fx), tm(tx)
        _close(y, ty.detach().numpy(), 1e-10)
        y.sum().backward()
        (ty.sum()).backward()
        _close(fx.grad, tx.grad.numpy(), 1e-9)
    for name, buf in tm.named_buffers():
        _close(getattr(fm, name), buf.numpy(), 1e-12)
    fm.eval()
    tm.eval()
    x = _data(shape, 9)
    _close(fm(fw_tensor(x, device)), tm(torch.tensor(x)).detach().numpy(), 1e-10)


def test_batch_norm_output_changed_in_place(device):
    # BatchNorm then ReLU(inplace=True): batch_norm's backward does not read its output
    x = fw_tensor(_data((4, 3, 5)), device, requires_grad=True)
    w = fw_tensor(_data(3, 1), device, requires_grad=True)
    y = F.batch_norm(x, None, None, w, None, True)
    F.relu(y, inplace=True).sum().backward()
    tx = torch.tensor(_data((4, 3, 5)), requires_grad=True)
    tw = torch.tensor(_data(3, 1), requires_grad=True)
    TF.relu(TF.batch_norm(tx, None, None, tw, None, True), inplace=True).sum().backward()
    _close(x.grad, tx.grad.numpy(), 1e-10)
    _close(w.grad, tw.grad.numpy(), 1e-10)


@pytest.mark.parametrize("op", ["layer_norm", "group_norm"])
def test_row_norm_output_changed_in_place(device, op):
    a = _data((2, 4, 5))
    x = fw_tensor(a, device, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    fn = {"layer_norm": lambda T, v: T.nn.functional.layer_norm(v, (5,)),
          "group_norm": lambda T, v: T.nn.functional.group_norm(v, 2)}[op]
    fn(fw, x).relu_().sum().backward()
    fn(torch, tx).relu_().sum().backward()
    _close(x.grad, tx.grad.numpy(), 1e-10)


# ---- gradcheck / gradgradcheck -------------------------------------------------------------

def _leaves(device, *shapes):
    return [fw_tensor(_data(s, i) * 0.5, device, requires_grad=True, dtype=fw.float64)
            for i, s in enumerate(shapes)]


def _norm_fn(op, device, training=True):
    if op == "layer_norm":
        return (lambda a, w_, b_: F.layer_norm(a, (3,), w_, b_)), [(2, 3), (3,), (3,)]
    if op == "rms_norm":
        return (lambda a, w_: F.rms_norm(a, (3,), w_, 1e-3)), [(2, 3), (3,)]
    if op == "group_norm":
        return (lambda a, w_, b_: F.group_norm(a, 2, w_, b_)), [(2, 4, 2), (4,), (4,)]
    rm = fw_tensor(np.zeros(2), device, dtype=fw.float64)
    rv = fw_tensor(np.ones(2) * 2, device, dtype=fw.float64)
    return ((lambda a, w_, b_: F.batch_norm(a, rm, rv, w_, b_, training, 0.0)),
            [(3, 2, 2), (2,), (2,)])


@pytest.mark.parametrize("op", ["layer_norm", "rms_norm", "group_norm", "batch_norm",
                                "batch_norm_eval"])
def test_gradcheck_and_gradgradcheck(device, op):
    fn, shapes = _norm_fn(op.replace("_eval", ""), device, training=not op.endswith("eval"))
    inputs = _leaves(device, *shapes)
    assert fw.autograd.gradcheck(fn, inputs)
    # double backward runs the backward ops' composite of framework ops, the same code on
    # every device: on simulated cuda (slow, a launch per op) layer_norm's is enough
    if device == "cpu" or op == "layer_norm":
        assert fw.autograd.gradgradcheck(fn, inputs)
