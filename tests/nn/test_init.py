"""framework.nn.init against torch.nn.init: gains and fans exactly, distributions by bounds
and moments (seeded generators), deterministic initialisers by value, errors by class and
message."""
import math
import warnings

import numpy as np
import pytest

import framework as fw
import framework.nn as nn
from framework.nn import init

torch = pytest.importorskip("torch")

NONLINEARITIES = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                  "conv_transpose2d", "conv_transpose3d", "sigmoid", "tanh", "relu",
                  "leaky_relu", "selu"]


def host(t):
    return t.detach().cpu().numpy().astype(np.float64)


def gen(seed, device="cpu"):
    g = fw.Generator(device=device)
    g.manual_seed(seed)
    return g


def same_error(t_fn, f_fn):
    """Both raise the same exception class with the same message."""
    with pytest.raises(Exception) as want:
        t_fn()
    with pytest.raises(type(want.value)) as got:
        f_fn()
    assert str(got.value) == str(want.value)


# ---- gains and fans ----------------------------------------------------------------------
@pytest.mark.parametrize("name", NONLINEARITIES)
def test_calculate_gain_equals_torch(name):
    assert init.calculate_gain(name) == torch.nn.init.calculate_gain(name)
    assert type(init.calculate_gain(name)) is type(torch.nn.init.calculate_gain(name))


@pytest.mark.parametrize("param", [None, 0.2, 0, 1, 3, -0.5])
def test_calculate_gain_leaky_relu_param(param):
    assert init.calculate_gain("leaky_relu", param) == \
        torch.nn.init.calculate_gain("leaky_relu", param)


@pytest.mark.parametrize("args", [("leaky_relu", True), ("leaky_relu", "0.1"), ("softmax",),
                                  ("ReLU",)])
def test_calculate_gain_errors(args):
    same_error(lambda: torch.nn.init.calculate_gain(*args), lambda: init.calculate_gain(*args))


@pytest.mark.parametrize("shape", [(3, 5), (7, 2), (4, 3, 2, 5), (2, 3, 4, 5, 6), (5, 0),
                                   (0, 3, 3)])
def test_fans_equal_torch(shape):
    t = torch.empty(shape)
    f = fw.empty(shape)
    assert init._calculate_fan_in_and_fan_out(f) == \
        torch.nn.init._calculate_fan_in_and_fan_out(t)
    for mode in ["fan_in", "fan_out", "FAN_OUT"]:
        assert init._calculate_correct_fan(f, mode) == \
            torch.nn.init._calculate_correct_fan(t, mode)


@pytest.mark.parametrize("shape", [(5,), ()])
def test_fans_need_two_dims(shape):
    same_error(lambda: torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape)),
               lambda: init._calculate_fan_in_and_fan_out(fw.empty(shape)))
    same_error(lambda: torch.nn.init.xavier_uniform_(torch.empty(shape)),
               lambda: init.xavier_uniform_(fw.empty(shape)))
    same_error(lambda: torch.nn.init.kaiming_normal_(torch.empty(shape)),
               lambda: init.kaiming_normal_(fw.empty(shape)))


def test_bad_fan_mode():
    same_error(lambda: torch.nn.init.kaiming_uniform_(torch.empty(3, 4), mode="fan_avg"),
               lambda: init.kaiming_uniform_(fw.empty(3, 4), mode="fan_avg"))


# ---- random initialisers -------------------------------------------------------------------
def test_uniform_and_normal_moments(device):
    w = fw.empty(300, 200, device=device)
    out = init.uniform_(w, -2.0, 3.0, generator=gen(1, device))
    assert out is w
    a = host(w)
    assert a.min() >= -2.0 and a.max() <= 3.0
    assert abs(a.mean() - 0.5) < 0.03 and abs(a.std() - 5 / math.sqrt(12)) < 0.02
    init.normal_(w, 1.5, 0.5, generator=gen(2, device))
    a = host(w)
    assert abs(a.mean() - 1.5) < 0.005 and abs(a.std() - 0.5) < 0.005
    init.uniform_(w)        # defaults U(0, 1)
    a = host(w)
    assert a.min() >= 0 and a.max() <= 1 and abs(a.mean() - 0.5) < 0.01


def test_generator_makes_draws_reproducible(device):
    fns = [lambda t, g: init.uniform_(t, generator=g), lambda t, g: init.normal_(t, generator=g),
           lambda t, g: init.xavier_uniform_(t, generator=g),
           lambda t, g: init.xavier_normal_(t, generator=g),
           lambda t, g: init.kaiming_uniform_(t, generator=g),
           lambda t, g: init.kaiming_normal_(t, generator=g),
           lambda t, g: init.trunc_normal_(t, generator=g),
           lambda t, g: init.orthogonal_(t, generator=g),
           lambda t, g: init.sparse_(t, 0.5, generator=g)]
    for fn in fns:
        a, b, c = (fw.empty(6, 5, device=device) for _ in range(3))
        fn(a, gen(7, device))
        fn(b, gen(7, device))
        fn(c, gen(8, device))
        np.testing.assert_array_equal(host(a), host(b))
        assert not np.array_equal(host(a), host(c))


def test_init_on_parameter_is_not_recorded(device):
    p = nn.Parameter(fw.empty(4, 6, device=device))
    for fn in [init.uniform_, init.normal_, init.xavier_uniform_, init.kaiming_normal_,
               init.trunc_normal_, init.orthogonal_, init.ones_, init.zeros_, init.eye_,
               lambda t: init.constant_(t, 0.3), lambda t: init.sparse_(t, 0.3)]:
        out = fn(p)
        assert out is p
        assert p.is_leaf and p.grad_fn is None and p.requires_grad


@pytest.mark.parametrize("gain", [1.0, 2.5])
def test_xavier(device, gain):
    w = fw.empty(120, 80, 3, device=device)
    fan_in, fan_out = torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(120, 80, 3))
    std = gain * math.sqrt(2.0 / (fan_in + fan_out))
    init.xavier_uniform_(w, gain=gain, generator=gen(3, device))
    a = host(w)
    bound = math.sqrt(3.0) * std
    assert np.abs(a).max() <= bound * (1 + 1e-6) and np.abs(a).max() > 0.99 * bound
    assert abs(a.std() / std - 1) < 0.02
    init.xavier_normal_(w, gain, generator=gen(4, device))
    a = host(w)
    assert abs(a.std() / std - 1) < 0.02 and abs(a.mean()) < 0.02 * std * 10


@pytest.mark.parametrize("a,mode,nonlinearity", [
    (0, "fan_in", "leaky_relu"), (math.sqrt(5), "fan_in", "leaky_relu"),
    (0, "fan_out", "relu"), (0.1, "fan_out", "leaky_relu"), (0, "fan_in", "tanh"),
    (0, "fan_in", "selu"), (0, "fan_out", "conv2d")])
def test_kaiming(device, a, mode, nonlinearity):
    shape = (90, 40, 3, 2)
    fan = torch.nn.init._calculate_correct_fan(torch.empty(shape), mode)
    std = torch.nn.init.calculate_gain(nonlinearity, a) / math.sqrt(fan)
    w = fw.empty(shape, device=device)
    init.kaiming_uniform_(w, a=a, mode=mode, nonlinearity=nonlinearity, generator=gen(5, device))
    x = host(w)
    bound = math.sqrt(3.0) * std
    assert np.abs(x).max() <= bound * (1 + 1e-6) and np.abs(x).max() > 0.99 * bound
    assert abs(x.std() / std - 1) < 0.02
    init.kaiming_normal_(w, a, mode, nonlinearity, generator=gen(6, device))
    x = host(w)
    assert abs(x.std() / std - 1) < 0.02 and abs(x.mean()) < 0.05 * std


def test_kaiming_zero_element_warns_and_returns():
    for fn in (init.kaiming_uniform_, init.kaiming_normal_):
        w = fw.empty(0, 3)
        with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
            assert fn(w) is w


def _trunc_moments(mean, std, a, b):
    phi = lambda x: math.exp(-x * x / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda x: (1 + math.erf(x / math.sqrt(2))) / 2  # noqa: E731
    al, be = (a - mean) / std, (b - mean) / std
    z = cdf(be) - cdf(al)
    m = mean + std * (phi(al) - phi(be)) / z
    var = std ** 2 * (1 + (al * phi(al) - be * phi(be)) / z - ((phi(al) - phi(be)) / z) ** 2)
    return m, math.sqrt(var)


@pytest.mark.parametrize("mean,std,a,b", [(0.0, 1.0, -2.0, 2.0), (0.5, 2.0, -1.0, 1.5),
                                          (0.0, 0.02, -0.04, 0.04), (1.0, 1.0, 1.5, 4.0)])
def test_trunc_normal(device, mean, std, a, b):
    w = fw.empty(200, 150, device=device)
    assert init.trunc_normal_(w, mean, std, a, b, generator=gen(9, device)) is w
    x = host(w)
    assert x.min() >= a and x.max() <= b
    m, s = _trunc_moments(mean, std, a, b)
    assert abs(x.mean() - m) < 0.02 * s + 1e-6 and abs(x.std() / s - 1) < 0.02


def test_trunc_normal_defaults_and_dtypes(device):
    for dtype in (fw.float16, fw.float64):
        w = fw.empty(100, 100, dtype=dtype, device=device)
        init.trunc_normal_(w)
        x = host(w)
        assert w.dtype == dtype and x.min() >= -2 and x.max() <= 2
        assert abs(x.std() / _trunc_moments(0, 1, -2, 2)[1] - 1) < 0.03


def test_trunc_normal_warns_far_mean():
    with pytest.warns(UserWarning, match="mean is more than 2 std from"):
        init.trunc_normal_(fw.empty(3, 3), mean=10.0, std=1.0, a=-1.0, b=1.0)


@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (5, 5), (3, 2, 4), (1, 7)])
@pytest.mark.parametrize("gain", [1.0, 0.5])
def test_orthogonal(device, shape, gain):
    w = fw.empty(shape, device=device)
    assert init.orthogonal_(w, gain, generator=gen(11, device)) is w
    m = host(w).reshape(shape[0], -1)
    rows, cols = m.shape
    g = m.T @ m if rows >= cols else m @ m.T
    np.testing.assert_allclose(g, gain ** 2 * np.eye(min(rows, cols)), atol=1e-5)


def test_orthogonal_errors_and_empty():
    same_error(lambda: torch.nn.init.orthogonal_(torch.empty(3)),
               lambda: init.orthogonal_(fw.empty(3)))
    w = fw.empty(0, 4)
    assert init.orthogonal_(w) is w


@pytest.mark.parametrize("sparsity", [0.1, 0.5, 0.75])
def test_sparse(device, sparsity):
    rows, cols = 40, 30
    w = fw.empty(rows, cols, device=device)
    assert init.sparse_(w, sparsity, std=0.5, generator=gen(12, device)) is w
    x = host(w)
    zeros = (x == 0).sum(0)
    assert (zeros == math.ceil(sparsity * rows)).all()
    nz = x[x != 0]
    assert abs(nz.std() / 0.5 - 1) < 0.1


def test_sparse_needs_2d():
    same_error(lambda: torch.nn.init.sparse_(torch.empty(3, 4, 5), 0.1),
               lambda: init.sparse_(fw.empty(3, 4, 5), 0.1))


# ---- deterministic initialisers ------------------------------------------------------------
def test_constant_ones_zeros(device):
    w = fw.empty(3, 5, device=device)
    assert init.constant_(w, 0.25) is w
    np.testing.assert_array_equal(host(w), np.full((3, 5), 0.25))
    assert init.ones_(w) is w
    np.testing.assert_array_equal(host(w), np.ones((3, 5)))
    assert init.zeros_(w) is w
    np.testing.assert_array_equal(host(w), np.zeros((3, 5)))
    i = fw.empty(4, dtype=fw.int64, device=device)
    init.constant_(i, 7)
    np.testing.assert_array_equal(host(i), [7, 7, 7, 7])


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 4)])
def test_eye(device, shape):
    w = fw.empty(shape, device=device)
    assert init.eye_(w) is w
    np.testing.assert_array_equal(host(w), np.eye(*shape))


def test_eye_needs_2d():
    same_error(lambda: torch.nn.init.eye_(torch.empty(2, 3, 4)),
               lambda: init.eye_(fw.empty(2, 3, 4)))


@pytest.mark.parametrize("shape,groups", [((4, 3, 5), 1), ((6, 2, 3, 3), 2), ((4, 4, 3, 2), 1),
                                          ((6, 1, 3, 3, 3), 3), ((2, 5, 4, 4), 1),
                                          ((8, 2, 3), 4)])
def test_dirac_equals_torch(device, shape, groups):
    t = torch.nn.init.dirac_(torch.empty(shape), groups)
    w = fw.empty(shape, device=device)
    assert init.dirac_(w, groups) is w
    np.testing.assert_array_equal(host(w), t.numpy())


@pytest.mark.parametrize("shape,groups", [((4, 3), 1), ((5, 2, 3, 3), 2)])
def test_dirac_errors(shape, groups):
    same_error(lambda: torch.nn.init.dirac_(torch.empty(shape), groups),
               lambda: init.dirac_(fw.empty(shape), groups))


def test_deprecated_aliases_warn():
    for name in ["uniform", "normal", "xavier_uniform", "xavier_normal", "kaiming_uniform",
                 "kaiming_normal", "orthogonal"]:
        with pytest.warns(FutureWarning, match=f"nn.init.{name}` is now deprecated"):
            getattr(init, name)(fw.empty(3, 4))
    with pytest.warns(FutureWarning):
        init.constant(fw.empty(2), 1.0)
    with pytest.warns(FutureWarning):
        init.eye(fw.empty(2, 2))
    with pytest.warns(FutureWarning):
        init.dirac(fw.empty(2, 2, 3))
    with pytest.warns(FutureWarning):
        init.sparse(fw.empty(2, 2), 0.5)


def test_public_names_match_torch():
    assert sorted(init.__all__) == sorted(torch.nn.init.__all__)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        init.xavier_uniform_(fw.empty(2, 3))
