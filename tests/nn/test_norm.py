"""Normalization layers against PyTorch: BatchNorm1d/2d/3d (running statistics over several
training steps, momentum=None, eval, track_running_stats=False, affine=False), LayerNorm,
GroupNorm, RMSNorm, InstanceNorm1d/2d/3d, LocalResponseNorm and F.normalize: forward,
input and parameter gradients, buffers, state_dict, repr and errors."""

import inspect

import numpy as np
import pytest

import framework as fw
import framework.nn as nn
import framework.nn.functional as F
from tests.helpers import assert_close, skip_unless_torch, torch_older_than
from tests.nn.common import compare_module, copy_state, fw_tensor, to_np

torch = pytest.importorskip("torch")

RT, AT = 1e-4, 1e-5


def _check_repr(f, t):
    """repr as torch's; torch before 2.13 (no bias= on the norm layers) prints fewer
    fields, so there the reprs are not compared."""
    if repr(f) != repr(t) and torch_older_than(torch):
        return
    assert repr(f) == repr(t)


def _needs_norm_bias(cls):
    if "bias" not in inspect.signature(cls.__init__).parameters:
        skip_unless_torch(torch, f"{cls.__name__}(bias=)")


def _rand(*shape, dtype=np.float32):
    return (np.random.randn(*shape) * 2 + 0.5).astype(dtype)


def _steps(t_mod, f_mod, shape, device, steps=3, train=True, rtol=RT, atol=AT):
    """Runs ``steps`` forward/backward passes through both modules (train or eval mode),
    comparing outputs, input grads, parameter grads and every buffer after each step."""
    f_mod.to(device)
    t_mod.train(train)
    f_mod.train(train)
    for _ in range(steps):
        x = _rand(*shape)
        tx = torch.tensor(x, requires_grad=True)
        fx = fw_tensor(x, device, requires_grad=True)
        t_out, f_out = t_mod(tx), f_mod(fx)
        assert_close(f_out, to_np(t_out), rtol=rtol, atol=atol)
        g = np.random.randn(*shape).astype(np.float32)
        for p in t_mod.parameters():
            p.grad = None
        for p in f_mod.parameters():
            p.grad = None
        t_out.backward(torch.tensor(g))
        f_out.backward(fw_tensor(g, device))
        assert_close(fx.grad, to_np(tx.grad), rtol=rtol, atol=atol)
        t_params = dict(t_mod.named_parameters())
        for name, p in f_mod.named_parameters():
            assert_close(p.grad, to_np(t_params[name].grad), rtol=rtol, atol=atol)
        t_bufs = dict(t_mod.named_buffers())
        f_bufs = dict(f_mod.named_buffers())
        assert list(t_bufs) == list(f_bufs)
        for name, b in f_bufs.items():
            assert_close(b, to_np(t_bufs[name]), rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------- BatchNorm
BN_CASES = [("BatchNorm1d", (4, 3)), ("BatchNorm1d", (5, 3, 7)), ("BatchNorm1d", (1, 3, 5)),
            ("BatchNorm2d", (2, 3, 5, 4)), ("BatchNorm3d", (2, 3, 2, 3, 2))]


@pytest.mark.parametrize("name,shape", BN_CASES)
@pytest.mark.parametrize("momentum", [0.1, None, 0.7])
def test_batchnorm_train_then_eval(device, name, shape, momentum):
    t = getattr(torch.nn, name)(3, momentum=momentum)
    f = getattr(nn, name)(3, momentum=momentum)
    with torch.no_grad():  # non-trivial affine parameters
        t.weight.uniform_(0.5, 1.5)
        t.bias.uniform_(-1, 1)
    copy_state(f, t)
    _steps(t, f, shape, device, steps=3, train=True)
    assert int(f.num_batches_tracked) == 3
    _steps(t, f, shape, device, steps=2, train=False)
    assert int(f.num_batches_tracked) == 3


@pytest.mark.parametrize("affine,bias,track", [(False, True, True), (True, False, True),
                                               (True, True, False), (False, True, False)])
def test_batchnorm_options(device, affine, bias, track):
    _needs_norm_bias(torch.nn.BatchNorm2d)
    t = torch.nn.BatchNorm2d(3, affine=affine, bias=bias, track_running_stats=track)
    f = nn.BatchNorm2d(3, affine=affine, bias=bias, track_running_stats=track)
    assert list(f.state_dict()) == list(t.state_dict())
    _check_repr(f, t)
    copy_state(f, t)
    _steps(t, f, (3, 3, 2, 5), device, steps=2, train=True)
    # eval: batch statistics again when no running statistics are kept
    _steps(t, f, (3, 3, 2, 5), device, steps=1, train=False)


def test_batchnorm_float64_crosses_blocks(device):
    t = torch.nn.BatchNorm1d(5).double()
    f = nn.BatchNorm1d(5, dtype=fw.float64)
    compare_module(torch, f, t, [np.random.randn(40, 5, 37)], device, rtol=1e-9, atol=1e-9)
    assert_close(f.running_var, to_np(t.running_var), rtol=1e-9, atol=1e-9)


def test_batchnorm_empty_batch(device):
    # an empty batch gives an empty output and leaves the running statistics unchanged
    t, f = torch.nn.BatchNorm1d(3), nn.BatchNorm1d(3)
    compare_module(torch, f, t, [_rand(0, 3)], device)
    assert_close(f.running_mean, np.zeros(3))
    assert_close(f.running_var, np.ones(3))
    assert_close(f.running_var, to_np(t.running_var))
    assert int(f.num_batches_tracked) == int(t.num_batches_tracked) == 1


def test_batchnorm_state_dict_and_load(device):
    t = torch.nn.BatchNorm1d(4)
    t.train()
    t(torch.randn(6, 4))
    f = nn.BatchNorm1d(4).to(device)
    sd = {k: fw.tensor(v.numpy()) for k, v in t.state_dict().items()}
    res = f.load_state_dict(sd, strict=True)
    assert list(res.missing_keys) == [] and list(res.unexpected_keys) == []
    assert_close(f.running_mean, to_np(t.running_mean))
    assert int(f.num_batches_tracked) == 1
    assert f.num_batches_tracked.dtype == fw.int64
    assert f.state_dict()._metadata[""]["version"] == 2
    # a checkpoint from before num_batches_tracked (version 1) still loads strictly
    old = {k: v for k, v in sd.items() if k != "num_batches_tracked"}
    old = type(f.state_dict())(old)
    old._metadata = {"": {"version": 1}}
    f.load_state_dict(old, strict=True)
    # so does a plain dict (no version); a current-version state_dict without it does not
    f.load_state_dict({k: v for k, v in sd.items() if k != "num_batches_tracked"})
    cur = f.state_dict()
    del cur["num_batches_tracked"]
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: '
                                           '"num_batches_tracked"'):
        f.load_state_dict(cur)


def test_batchnorm_reset_and_repr():
    f = nn.BatchNorm3d(2, eps=1e-3, momentum=None)
    t = torch.nn.BatchNorm3d(2, eps=1e-3, momentum=None)
    assert repr(f) == repr(t)
    assert_close(f.weight, np.ones(2))
    assert_close(f.bias, np.zeros(2))
    f.train()
    f(fw.randn(2, 2, 2, 2, 2) * 3 + 1)
    f.reset_running_stats()
    assert_close(f.running_mean, np.zeros(2))
    assert_close(f.running_var, np.ones(2))
    assert int(f.num_batches_tracked) == 0


def test_batchnorm_errors(device):
    for cls, shape, msg in [(nn.BatchNorm1d, (2, 3, 4, 5), "expected 2D or 3D input (got 4D "
                                                            "input)"),
                            (nn.BatchNorm1d, (3,), "expected 2D or 3D input (got 1D input)"),
                            (nn.BatchNorm2d, (2, 3, 4), "expected 4D input (got 3D input)"),
                            (nn.BatchNorm3d, (2, 3, 4), "expected 5D input (got 3D input)")]:
        with pytest.raises(ValueError) as e:
            cls(3).to(device)(fw.randn(*shape, device=device))
        assert str(e.value) == msg
    with pytest.raises(ValueError) as e:
        nn.BatchNorm1d(3).to(device)(fw.randn(1, 3, device=device))
    assert str(e.value) == ("Expected more than 1 value per channel when training, got input "
                            "size framework.Size([1, 3])")
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        nn.BatchNorm2d(3).to(device)(fw.randn(1, 3, 1, 1, device=device))
    # batch of one is fine in eval mode
    nn.BatchNorm1d(3).to(device).eval()(fw.randn(1, 3, device=device))
    with pytest.raises(RuntimeError, match="running_mean should contain 4 elements not 3"):
        nn.BatchNorm1d(3).to(device)(fw.randn(2, 4, device=device))
    x = fw.randn(4, 3, device=device)
    with pytest.raises(RuntimeError, match="weight should contain 3 elements not 4"):
        F.batch_norm(x, None, None, fw.ones(4, device=device), training=True)
    with pytest.raises(RuntimeError, match="running_mean must be defined in evaluation mode"):
        F.batch_norm(x, None, None, training=False)


def test_functional_batch_norm(device):
    x = _rand(6, 3, 4)
    w, b = _rand(3), _rand(3)
    tx = torch.tensor(x, requires_grad=True)
    fx = fw_tensor(x, device, requires_grad=True)
    tw, tb = torch.tensor(w, requires_grad=True), torch.tensor(b, requires_grad=True)
    fw_, fb = fw_tensor(w, device, True), fw_tensor(b, device, True)
    trm, trv = torch.zeros(3) + 0.3, torch.ones(3) * 2
    frm, frv = fw_tensor(trm, device), fw_tensor(trv, device)
    t_out = torch.nn.functional.batch_norm(tx, trm, trv, tw, tb, True, 0.25, 1e-3)
    f_out = F.batch_norm(fx, frm, frv, fw_, fb, True, 0.25, 1e-3)
    assert_close(f_out, to_np(t_out), rtol=RT, atol=AT)
    assert_close(frm, to_np(trm), rtol=1e-5, atol=1e-6)
    assert_close(frv, to_np(trv), rtol=1e-5, atol=1e-6)
    t_out.sum().backward()
    f_out.sum().backward()
    for a, e in ((fx, tx), (fw_, tw), (fb, tb)):
        assert_close(a.grad, to_np(e.grad), rtol=RT, atol=AT)
    # no running statistics at all, training
    t_out = torch.nn.functional.batch_norm(torch.tensor(x), None, None, training=True)
    assert_close(F.batch_norm(fw_tensor(x, device), None, None, training=True),
                 to_np(t_out), rtol=RT, atol=AT)
    # eval with running statistics: they are not modified, gradient flows to the input
    before = to_np(frm).copy()
    ex = fw_tensor(x, device, True)
    out = F.batch_norm(ex, frm, frv, fw_, fb, False)
    ref = torch.nn.functional.batch_norm(torch.tensor(x), trm, trv, tw, tb, False)
    assert_close(out, to_np(ref), rtol=RT, atol=AT)
    np.testing.assert_array_equal(to_np(frm), before)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("make", [lambda m: m.LayerNorm(6), lambda m: m.GroupNorm(2, 6),
                                  lambda m: m.BatchNorm1d(6), lambda m: m.RMSNorm(6),
                                  lambda m: m.InstanceNorm1d(6, affine=True)])
def test_norms_half_precision(device, dtype, make):
    # statistics in float32 (as PyTorch's opmath), output and grads in the input's dtype
    t, f = make(torch.nn), make(nn)
    with torch.no_grad():
        t.weight.uniform_(0.5, 1.5)
    copy_state(f, t)
    t, f = t.to(getattr(torch, dtype)), f.to(device).to(getattr(fw, dtype))
    last = isinstance(t, (torch.nn.LayerNorm, torch.nn.RMSNorm))
    x = _rand(4, 5, 6) if last else _rand(4, 6, 5)
    tx = torch.tensor(x).to(getattr(torch, dtype)).requires_grad_()
    fx = fw_tensor(x, device, dtype=getattr(fw, dtype)).requires_grad_()
    t_out, f_out = t(tx), f(fx)
    assert f_out.dtype == getattr(fw, dtype)
    tol = 3e-2 if dtype == "bfloat16" else 4e-3
    assert_close(f_out.float(), t_out.float().detach().numpy(), rtol=tol, atol=tol)
    g = np.random.randn(*x.shape).astype(np.float32)
    t_out.backward(torch.tensor(g).to(tx.dtype))
    f_out.backward(fw_tensor(g, device, dtype=getattr(fw, dtype)))
    assert fx.grad.dtype == getattr(fw, dtype)
    assert_close(fx.grad.float(), tx.grad.float().numpy(), rtol=tol, atol=tol * 4)
    assert_close(f.weight.grad.float(), t.weight.grad.float().numpy(), rtol=tol,
                 atol=tol * 8)


def test_rmsnorm_half_default_eps(device):
    # the default eps is float32's for a half input (1e-3 inputs would otherwise shrink)
    x = np.full((1, 4), 1e-3, np.float16)
    out = F.rms_norm(fw_tensor(x, device), [4])
    ref = torch.nn.functional.rms_norm(torch.tensor(x), [4])
    assert_close(out.float(), ref.float().numpy(), rtol=1e-3, atol=1e-3)


# ---------------------------------------------------------------------------- LayerNorm
@pytest.mark.parametrize("normalized,shape", [(7, (4, 7)), ([3, 7], (2, 3, 7)), ((5,), (5,)),
                                              ([2, 3], (1, 2, 3)), (7, (0, 7)),
                                              (7, (2, 0, 7))])
@pytest.mark.parametrize("affine,bias", [(True, True), (True, False), (False, True)])
def test_layernorm(device, normalized, shape, affine, bias):
    t = torch.nn.LayerNorm(normalized, elementwise_affine=affine, bias=bias)
    f = nn.LayerNorm(normalized, elementwise_affine=affine, bias=bias)
    if affine:
        with torch.no_grad():
            t.weight.uniform_(0.5, 1.5)
            if bias:
                t.bias.uniform_(-1, 1)
    _check_repr(f, t)
    compare_module(torch, f, t, [_rand(*shape)], device)


def test_layernorm_eps_float64_wide(device):
    t = torch.nn.LayerNorm(1100, eps=1e-2).double()
    f = nn.LayerNorm(1100, eps=1e-2, dtype=fw.float64)
    with torch.no_grad():
        t.weight.uniform_(0.5, 1.5)
    compare_module(torch, f, t, [np.random.randn(3, 1100)], device, rtol=1e-9, atol=1e-9)


def test_layernorm_errors(device):
    x = fw.randn(2, 3, 4, device=device)
    with pytest.raises(RuntimeError) as e:
        F.layer_norm(x, [5])
    assert str(e.value) == ("Given normalized_shape=[5], expected input with shape [*, 5], but "
                            "got input of size[2, 3, 4]")
    with pytest.raises(RuntimeError, match=r"expected input with shape \[\*, 2, 3, 4, 4\]"):
        F.layer_norm(x, [2, 3, 4, 4])
    with pytest.raises(RuntimeError) as e:
        F.layer_norm(x, [3, 4], fw.randn(4, device=device))
    assert str(e.value) == ("Expected weight to be of same shape as normalized_shape, but got "
                            "weight of shape [4] and normalized_shape = [3, 4]")
    with pytest.raises(RuntimeError, match="Expected bias to be of same shape"):
        F.layer_norm(x, [3, 4], None, fw.randn(4, device=device))
    with pytest.raises(TypeError, match="must be tuple of ints, not int"):
        F.layer_norm(x, 4)
    with pytest.raises(RuntimeError, match=r"expected input with shape \[\*, 5\]"):
        nn.LayerNorm(5).to(device)(x)


# ---------------------------------------------------------------------------- RMSNorm
@pytest.mark.parametrize("normalized,shape", [(7, (4, 7)), ([3, 7], (2, 3, 7)), (5, (5,)),
                                              (7, (0, 7))])
@pytest.mark.parametrize("eps", [None, 1e-2])
@pytest.mark.parametrize("affine", [True, False])
def test_rmsnorm(device, normalized, shape, eps, affine):
    t = torch.nn.RMSNorm(normalized, eps=eps, elementwise_affine=affine)
    f = nn.RMSNorm(normalized, eps=eps, elementwise_affine=affine)
    if affine:
        with torch.no_grad():
            t.weight.uniform_(0.5, 1.5)
    assert repr(f) == repr(t)
    compare_module(torch, f, t, [_rand(*shape) * 1e-2], device)


def test_rmsnorm_errors(device):
    x = fw.randn(2, 3, 4, device=device)
    with pytest.raises(RuntimeError) as e:
        F.rms_norm(x, [3, 5])
    assert str(e.value) == ("Given normalized_shape=[3, 5], expected input with shape [*3, 5], "
                            "but got input of size[2, 3, 4]")
    with pytest.raises(RuntimeError, match="Expected weight to be of same shape"):
        F.rms_norm(x, [4], fw.ones(3, device=device))


# ---------------------------------------------------------------------------- GroupNorm
@pytest.mark.parametrize("groups,shape", [(1, (2, 6, 5)), (2, (2, 6, 5)), (3, (1, 6, 3, 2)),
                                          (6, (3, 6, 4)), (2, (4, 6)), (3, (0, 6, 3)),
                                          (2, (2, 6, 2, 2, 3))])
@pytest.mark.parametrize("affine,bias", [(True, True), (False, True), (True, False)])
def test_groupnorm(device, groups, shape, affine, bias):
    _needs_norm_bias(torch.nn.GroupNorm)
    t = torch.nn.GroupNorm(groups, 6, affine=affine, bias=bias)
    f = nn.GroupNorm(groups, 6, affine=affine, bias=bias)
    if affine:
        with torch.no_grad():
            t.weight.uniform_(0.5, 1.5)
            if bias:
                t.bias.uniform_(-1, 1)
    _check_repr(f, t)
    compare_module(torch, f, t, [_rand(*shape)], device)


def test_groupnorm_errors(device):
    with pytest.raises(ValueError) as e:
        nn.GroupNorm(2, 5)
    assert str(e.value) == "num_channels (5) must be divisible by num_groups (2)"
    with pytest.raises(RuntimeError) as e:
        F.group_norm(fw.randn(2, 5, 3, device=device), 2)
    assert str(e.value) == ("Expected number of channels in input to be divisible by "
                            "num_groups, but got input of shape [2, 5, 3] and num_groups=2")
    with pytest.raises(RuntimeError, match="Expected weight to be a vector of size equal to "
                                           "the number of channels in input, but got weight "
                                           r"of shape \[3\] and input of shape \[2, 4, 3\]"):
        F.group_norm(fw.randn(2, 4, 3, device=device), 2, fw.ones(3, device=device))
    with pytest.raises(RuntimeError, match="Expected at least 2 dimensions for input tensor "
                                           "but received 1"):
        F.group_norm(fw.randn(4, device=device), 2)


# ---------------------------------------------------------------------------- InstanceNorm
IN_CASES = [("InstanceNorm1d", (3, 4, 5)), ("InstanceNorm1d", (4, 5)),
            ("InstanceNorm2d", (2, 4, 3, 5)), ("InstanceNorm2d", (4, 3, 2)),
            ("InstanceNorm3d", (2, 4, 2, 3, 2)), ("InstanceNorm3d", (4, 2, 2, 3))]


@pytest.mark.parametrize("name,shape", IN_CASES)
@pytest.mark.parametrize("affine,track", [(False, False), (True, False), (True, True),
                                          (False, True)])
def test_instancenorm(device, name, shape, affine, track):
    t = getattr(torch.nn, name)(4, affine=affine, track_running_stats=track, momentum=0.3)
    f = getattr(nn, name)(4, affine=affine, track_running_stats=track, momentum=0.3)
    assert list(f.state_dict()) == list(t.state_dict())
    _check_repr(f, t)
    if affine:
        with torch.no_grad():
            t.weight.uniform_(0.5, 1.5)
            t.bias.uniform_(-1, 1)
    copy_state(f, t)
    _steps(t, f, shape, device, steps=2, train=True)
    _steps(t, f, shape, device, steps=1, train=False)


def test_instancenorm_functional(device):
    x = _rand(2, 3, 5)
    trm, trv = torch.zeros(3), torch.ones(3)
    frm, frv = fw_tensor(trm, device), fw_tensor(trv, device)
    t_out = torch.nn.functional.instance_norm(torch.tensor(x), trm, trv, momentum=0.5)
    f_out = F.instance_norm(fw_tensor(x, device), frm, frv, momentum=0.5)
    assert_close(f_out, to_np(t_out), rtol=RT, atol=AT)
    assert_close(frm, to_np(trm), rtol=1e-5, atol=1e-6)
    assert_close(frv, to_np(trv), rtol=1e-5, atol=1e-6)
    t_out = torch.nn.functional.instance_norm(torch.tensor(x), trm, trv, use_input_stats=False)
    f_out = F.instance_norm(fw_tensor(x, device), frm, frv, use_input_stats=False)
    assert_close(f_out, to_np(t_out), rtol=RT, atol=AT)


def test_instancenorm_errors(device):
    with pytest.raises(ValueError) as e:
        nn.InstanceNorm1d(3).to(device)(fw.randn(2, 3, 4, 5, device=device))
    assert str(e.value) == "expected 2D or 3D input (got 4D input)"
    with pytest.raises(ValueError, match=r"expected 3D or 4D input \(got 2D input\)"):
        nn.InstanceNorm2d(3)(fw.randn(2, 3, device=device))
    with pytest.raises(ValueError, match=r"expected 4D or 5D input \(got 3D input\)"):
        nn.InstanceNorm3d(3)(fw.randn(2, 3, 2, device=device))
    with pytest.raises(ValueError) as e:
        nn.InstanceNorm1d(3, affine=True).to(device)(fw.randn(2, 4, 5, device=device))
    assert str(e.value) == ("expected input's size at dim=1 to match num_features (3), but "
                            "got: 4.")
    with pytest.warns(UserWarning, match="does not match num_features"):
        nn.InstanceNorm1d(3)(fw.randn(2, 4, 5, device=device))
    with pytest.raises(ValueError) as e:
        F.instance_norm(fw.randn(2, 3, 1, device=device))
    assert str(e.value) == ("Expected more than 1 spatial element when training, got input "
                            "size framework.Size([2, 3, 1])")
    with pytest.raises(RuntimeError, match="Expected running_mean and running_var to be "
                                           "defined when use_input_stats is false"):
        F.instance_norm(fw.randn(2, 3, 4, device=device), use_input_stats=False)


# ---------------------------------------------------------------------------- LRN
@pytest.mark.parametrize("size", [1, 2, 3, 5])
@pytest.mark.parametrize("shape", [(2, 6, 4), (1, 4, 3, 3), (2, 3, 2, 2, 2), (0, 3, 4)])
def test_local_response_norm(device, size, shape):
    t = torch.nn.LocalResponseNorm(size, alpha=0.5, beta=0.6, k=1.5)
    f = nn.LocalResponseNorm(size, alpha=0.5, beta=0.6, k=1.5)
    assert repr(f) == repr(t)
    compare_module(torch, f, t, [_rand(*shape)], device)


def test_local_response_norm_defaults_and_errors(device):
    t, f = torch.nn.LocalResponseNorm(3), nn.LocalResponseNorm(3)
    assert repr(f) == repr(t) == "LocalResponseNorm(3, alpha=0.0001, beta=0.75, k=1.0)"
    compare_module(torch, f, t, [_rand(2, 5, 7) * 30], device)
    with pytest.raises(ValueError, match=r"Expected 3D or higher dimensionality\s+input "
                                         r"\(got 2 dimensions\)"):
        F.local_response_norm(fw.randn(2, 3, device=device), 2)


# ---------------------------------------------------------------------------- normalize
@pytest.mark.parametrize("p,dim", [(2.0, 1), (1.0, 0), (float("inf"), -1), (3.0, 1)])
def test_normalize(device, p, dim):
    x = _rand(4, 5, 3)
    x[1, :, :] = 0  # zero vectors: divided by eps, finite gradient
    tx = torch.tensor(x, requires_grad=True)
    fx = fw_tensor(x, device, requires_grad=True)
    t_out = torch.nn.functional.normalize(tx, p, dim)
    f_out = F.normalize(fx, p, dim)
    assert_close(f_out, to_np(t_out), rtol=RT, atol=AT)
    g = np.random.randn(*x.shape).astype(np.float32)
    t_out.backward(torch.tensor(g))
    f_out.backward(fw_tensor(g, device))
    assert_close(fx.grad, to_np(tx.grad), rtol=1e-4, atol=1e-4)


def test_normalize_eps_and_out(device):
    x = np.array([[1e-3, 0.0], [3.0, 4.0]], np.float32)
    out = fw.empty(2, 2, device=device)
    r = F.normalize(fw_tensor(x, device), eps=0.1, out=out)
    assert r is out
    assert_close(out, to_np(torch.nn.functional.normalize(torch.tensor(x), eps=0.1)))
