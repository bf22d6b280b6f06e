"""Vision functions and modules against torch: interpolate/upsample (every mode and option),
grid_sample, affine_grid, pixel and channel shuffles, with input (and grid/theta) gradients
on cpu and cuda, and torch's errors."""
import warnings

import numpy as np
import pytest

import framework as fw
import framework.nn as nn
import framework.nn.functional as F
from tests.helpers import assert_close, skip_unless_torch
from tests.nn.common import compare_module, fw_tensor, to_np

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def run_both(t_fn, f_fn, arrays, device, rtol=1e-5, atol=1e-5, grad_rtol=1e-4,
             grad_atol=1e-4, dtype=np.float32):
    """Calls ``t_fn`` on torch tensors and ``f_fn`` on framework tensors made from
    ``arrays`` (all requiring grad), compares the outputs, then backpropagates one random
    cotangent and compares every input gradient."""
    t_in = [torch.tensor(a.astype(dtype), requires_grad=True) for a in arrays]
    f_in = [fw_tensor(a.astype(dtype), device, requires_grad=True) for a in arrays]
    t_out = t_fn(*t_in)
    f_out = f_fn(*f_in)
    assert tuple(f_out.shape) == tuple(t_out.shape)
    assert str(f_out.dtype).split(".")[-1] == str(t_out.dtype).split(".")[-1]
    assert_close(f_out, to_np(t_out), rtol=rtol, atol=atol)
    if t_out.numel() == 0:
        return f_out
    g = np.random.default_rng(1).standard_normal(tuple(t_out.shape)).astype(dtype)
    (t_out * torch.tensor(g)).sum().backward()
    (f_out * fw.tensor(g, device=device)).sum().backward()
    for t, f in zip(t_in, f_in):
        assert f.grad is not None
        assert_close(f.grad, to_np(t.grad), rtol=grad_rtol, atol=grad_atol)
    return f_out


def same_error(t_fn, f_fn):
    with pytest.raises(Exception) as want:
        t_fn()
    with pytest.raises(type(want.value)) as got:
        f_fn()
    assert str(got.value) == str(want.value).replace("torch.", "framework.")


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


# ---- interpolate ---------------------------------------------------------------------------
SIZE_CASES = [
    # (input shape, kwargs)
    ((2, 3, 5), dict(size=9, mode="nearest")),
    ((2, 3, 9), dict(size=4, mode="nearest")),
    ((1, 2, 7), dict(size=7, mode="nearest")),
    ((2, 3, 5), dict(size=11, mode="nearest-exact")),
    ((2, 3, 11), dict(size=3, mode="nearest-exact")),
    ((2, 2, 5, 7), dict(size=(8, 3), mode="nearest")),
    ((1, 2, 3, 4, 5), dict(size=(5, 2, 7), mode="nearest")),
    ((1, 2, 3, 4, 5), dict(size=(5, 2, 7), mode="nearest-exact")),
    ((2, 3, 6), dict(size=13, mode="linear")),
    ((2, 3, 13), dict(size=6, mode="linear", align_corners=True)),
    ((2, 3, 5), dict(size=1, mode="linear", align_corners=True)),
    ((2, 3, 1), dict(size=4, mode="linear", align_corners=True)),
    ((2, 2, 5, 7), dict(size=(9, 4), mode="bilinear")),
    ((2, 2, 5, 7), dict(size=(9, 4), mode="bilinear", align_corners=True)),
    ((1, 3, 6, 6), dict(size=(6, 6), mode="bilinear")),
    ((2, 2, 5, 7), dict(size=(9, 4), mode="bicubic")),
    ((2, 2, 5, 7), dict(size=(3, 11), mode="bicubic", align_corners=True)),
    ((1, 1, 2, 2), dict(size=(7, 5), mode="bicubic")),
    ((1, 2, 3, 4, 5), dict(size=(6, 3, 4), mode="trilinear")),
    ((1, 2, 3, 4, 5), dict(size=(6, 3, 4), mode="trilinear", align_corners=True)),
    ((2, 3, 10), dict(size=4, mode="area")),
    ((2, 3, 7), dict(size=3, mode="area")),
    ((2, 3, 4), dict(size=9, mode="area")),
    ((1, 2, 7, 9), dict(size=(3, 4), mode="area")),
    ((1, 2, 4, 6, 5), dict(size=(2, 3, 4), mode="area")),
    ((1, 2, 9, 11), dict(size=(4, 5), mode="bilinear", antialias=True)),
    ((1, 2, 9, 11), dict(size=(4, 5), mode="bicubic", antialias=True)),
    ((1, 2, 9, 11), dict(size=(4, 5), mode="bilinear", antialias=True, align_corners=True)),
    ((1, 2, 4, 5), dict(size=(7, 9), mode="bicubic", antialias=True)),
    ((1, 2, 13, 9), dict(size=(4, 5), mode="lanczos", antialias=True)),
    ((0, 3, 5, 4), dict(size=(3, 3), mode="bilinear")),
    ((0, 3, 5), dict(size=3, mode="nearest")),
]


@pytest.mark.parametrize("shape,kw", SIZE_CASES, ids=lambda v: str(v))
def test_interpolate_size(device, shape, kw):
    if kw.get("mode") == "lanczos" and kw.get("antialias"):
        skip_unless_torch(torch, "antialiased lanczos interpolation")
    run_both(lambda x: TF.interpolate(x, **kw), lambda x: F.interpolate(x, **kw),
             [rand(*shape)], device)


SCALE_CASES = [
    ((2, 3, 11), "nearest", {}), ((2, 3, 11), "nearest-exact", {}),
    ((2, 3, 11), "linear", dict(align_corners=False)),
    ((2, 3, 11), "linear", dict(align_corners=True)),
    ((1, 2, 5, 7), "bilinear", {}), ((1, 2, 5, 7), "bicubic", {}),
    ((1, 2, 5, 7), "area", {}), ((1, 1, 3, 4, 5), "trilinear", {}),
]


@pytest.mark.parametrize("shape,mode,extra", SCALE_CASES, ids=lambda v: str(v))
@pytest.mark.parametrize("scale", [0.6, 1.7, 2.0, 3.3])
@pytest.mark.parametrize("recompute", [None, True, False])
def test_interpolate_scale_factor(device, shape, mode, extra, scale, recompute):
    kw = dict(scale_factor=scale, mode=mode, recompute_scale_factor=recompute, **extra)
    run_both(lambda x: TF.interpolate(x, **kw), lambda x: F.interpolate(x, **kw),
             [rand(*shape)], device)


def test_interpolate_scale_factor_per_dim_and_float64(device):
    kw = dict(scale_factor=(1.5, 0.75), mode="bilinear")
    run_both(lambda x: TF.interpolate(x, **kw), lambda x: F.interpolate(x, **kw),
             [rand(1, 2, 6, 8)], device)
    kw = dict(size=(7, 3), mode="bicubic", align_corners=True)
    run_both(lambda x: TF.interpolate(x, **kw), lambda x: F.interpolate(x, **kw),
             [rand(1, 2, 4, 5)], device, rtol=1e-12, atol=1e-12, grad_rtol=1e-12,
             grad_atol=1e-12, dtype=np.float64)


def test_interpolate_nearest_integer_dtype_and_new_tensor(device):
    a = np.arange(24).reshape(1, 2, 3, 4).astype(np.uint8)
    t = TF.interpolate(torch.tensor(a), size=(5, 7), mode="nearest")
    f = F.interpolate(fw.tensor(a, device=device), size=(5, 7), mode="nearest")
    assert f.dtype == fw.uint8
    np.testing.assert_array_equal(to_np(f), t.numpy())
    x = fw.randn(1, 1, 3, device=device)
    y = F.interpolate(x, size=3)
    assert y is not x
    assert_close(y, to_np(x))


def test_interpolate_size_types():
    x = fw.randn(1, 1, 4, 4)
    assert tuple(F.interpolate(x, size=fw.tensor(3)).shape) == (1, 1, 3, 3)
    assert tuple(F.interpolate(x, size=[3, np.int64(2)]).shape) == (1, 1, 3, 2)
    assert tuple(F.interpolate(x, scale_factor=fw.tensor(2.0)).shape) == (1, 1, 8, 8)


ERROR_CASES = [
    ((2, 3, 4, 4), dict(size=(0, 3))),
    ((2, 3, 4, 4), dict(scale_factor=0.1)),
    ((2, 3, 4), dict(size=0)),
    ((2, 3, 4, 4, 4), dict(size=(0, 1, 1), mode="trilinear")),
    ((2, 0, 4, 4), dict(size=3, mode="bilinear")),
    ((2, 0, 4), dict(size=3, mode="linear")),
    ((2, 3, 0, 4), dict(size=3, mode="nearest")),
    ((2, 3, 0, 4), dict(size=3, mode="area")),
    ((2, 3, 0), dict(size=3, mode="area")),
    ((2, 0, 4, 4, 4), dict(size=3, mode="area")),
    ((3, 4), dict(size=(3,))),
    ((2, 3, 4, 4), dict(size=(3,))),
    ((2, 3, 4, 4), dict(size=(3, 3), mode="bogus")),
    ((2, 3, 4, 4), dict(size=(3, 3), mode="linear")),
    ((2, 3, 4), dict(size=3, mode="bilinear")),
    ((2, 3, 4, 4, 4), dict(size=3, mode="bilinear")),
    ((2, 3, 4), dict(size=3, mode="trilinear")),
    ((2, 3, 4, 4, 4), dict(size=3, mode="bicubic")),
    ((2, 3, 4, 4), dict(size=(3, 3), mode="nearest", align_corners=True)),
    ((2, 3, 4), dict(size=3, mode="area", align_corners=False)),
    ((2, 3, 4, 4), dict(size=(3.0, 3))),
    ((2, 3, 4, 4), dict(size=3, scale_factor=2)),
    ((2, 3, 4, 4), dict()),
    ((2, 3, 4, 4), dict(scale_factor=(2, 2, 2))),
    ((2, 3, 4, 4), dict(size=(3, 3), recompute_scale_factor=True)),
    ((2, 3, 4, 4), dict(size=(3, 3), antialias=True)),
    ((2, 3, 4), dict(size=3, mode="linear", antialias=True)),
    ((2, 3, 4, 4), dict(size=(3, 3), mode="lanczos")),
    ((2, 3, 4, 4), dict(size=(3, 3), mode="lanczos", antialias=True, align_corners=True)),
    ((2, 3, 4), dict(size=3, mode="lanczos")),
    ((2, 3), dict(size=3)),
    ((2, 3, 4, 4), dict(scale_factor=-1.0)),
]


@pytest.mark.parametrize("shape,kw", ERROR_CASES, ids=lambda v: str(v))
def test_interpolate_errors(shape, kw):
    same_error(lambda: TF.interpolate(torch.zeros(shape), **kw),
               lambda: F.interpolate(fw.zeros(shape), **kw))


def test_upsample_aliases(device):
    x = rand(1, 2, 3, 4)
    with pytest.warns(UserWarning, match="nn.functional.upsample_nearest` is deprecated"):
        run_both(lambda t: TF.upsample_nearest(t, scale_factor=2),
                 lambda f: F.upsample_nearest(f, scale_factor=2), [x], device)
    with pytest.warns(UserWarning, match="nn.functional.upsample_bilinear` is deprecated"):
        run_both(lambda t: TF.upsample_bilinear(t, size=(5, 7)),
                 lambda f: F.upsample_bilinear(f, size=(5, 7)), [x], device)
    with pytest.warns(UserWarning, match="nn.functional.upsample` is deprecated"):
        run_both(lambda t: TF.upsample(t, size=(5, 7), mode="bicubic"),
                 lambda f: F.upsample(f, size=(5, 7), mode="bicubic"), [x], device)


# ---- grid_sample / affine_grid -------------------------------------------------------------
def grid_values(shape, seed=3, spread=1.3):
    # points inside and outside [-1, 1], plus exact pixel centres and borders
    g = np.random.default_rng(seed).uniform(-spread, spread, shape)
    g.reshape(-1)[:4] = [-1.0, 1.0, 0.0, -1.0]
    return g


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_2d(device, mode, padding_mode, align_corners):
    kw = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    run_both(lambda x, g: TF.grid_sample(x, g, **kw), lambda x, g: F.grid_sample(x, g, **kw),
             [rand(2, 3, 5, 7), grid_values((2, 4, 6, 2))], device, grad_rtol=1e-3,
             grad_atol=1e-4)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_3d(device, mode, padding_mode, align_corners):
    kw = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    run_both(lambda x, g: TF.grid_sample(x, g, **kw), lambda x, g: F.grid_sample(x, g, **kw),
             [rand(1, 2, 3, 4, 5), grid_values((1, 2, 3, 4, 3))], device, grad_rtol=1e-3,
             grad_atol=1e-4)


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_grid_sample_unit_and_empty(device, mode):
    for pad in ("zeros", "reflection"):
        kw = dict(mode=mode, padding_mode=pad, align_corners=True)
        run_both(lambda x, g: TF.grid_sample(x, g, **kw),
                 lambda x, g: F.grid_sample(x, g, **kw),
                 [rand(1, 2, 1, 4), grid_values((1, 3, 2, 2))], device, grad_rtol=1e-3)
    kw = dict(mode=mode, align_corners=False)
    for shapes in (((0, 2, 3, 3), (0, 2, 2, 2)), ((2, 2, 3, 3), (2, 0, 2, 2)),
                   ((2, 0, 3, 3), (2, 2, 2, 2))):
        t = TF.grid_sample(torch.zeros(shapes[0]), torch.zeros(shapes[1]), **kw)
        f = F.grid_sample(fw.zeros(shapes[0], device=device),
                          fw.zeros(shapes[1], device=device), **kw)
        assert tuple(f.shape) == tuple(t.shape)


def test_grid_sample_identity_and_float64(device):
    # an identity affine grid reproduces the input exactly
    x = rand(2, 3, 4, 6)
    theta = fw.tensor(np.tile(np.array([[1.0, 0, 0], [0, 1.0, 0]]), (2, 1, 1)), device=device)
    for ac in (False, True):
        grid = F.affine_grid(theta, [2, 3, 4, 6], align_corners=ac)
        out = F.grid_sample(fw.tensor(x, device=device), grid, align_corners=ac)
        assert_close(out, x, rtol=1e-12, atol=1e-12)
    kw = dict(mode="bicubic", padding_mode="border", align_corners=False)
    run_both(lambda a, g: TF.grid_sample(a, g, **kw), lambda a, g: F.grid_sample(a, g, **kw),
             [rand(1, 2, 4, 5), grid_values((1, 3, 3, 2))], device, rtol=1e-12, atol=1e-12,
             grad_rtol=1e-10, grad_atol=1e-10, dtype=np.float64)


def test_grid_sample_errors(device):
    x, g = torch.zeros(2, 3, 4, 4), torch.zeros(2, 3, 3, 2)

    def both(fn_t, fn_f):
        same_error(fn_t, fn_f)
    fx, fg = fw.zeros(2, 3, 4, 4, device=device), fw.zeros(2, 3, 3, 2, device=device)
    both(lambda: TF.grid_sample(x, g, mode="x", align_corners=False),
         lambda: F.grid_sample(fx, fg, mode="x", align_corners=False))
    both(lambda: TF.grid_sample(x, g, padding_mode="wrap", align_corners=False),
         lambda: F.grid_sample(fx, fg, padding_mode="wrap", align_corners=False))
    both(lambda: TF.grid_sample(x, g[:1], align_corners=False),
         lambda: F.grid_sample(fx, fg[:1], align_corners=False))
    both(lambda: TF.grid_sample(x, torch.zeros(2, 3, 3, 3), align_corners=False),
         lambda: F.grid_sample(fx, fw.zeros(2, 3, 3, 3, device=device), align_corners=False))
    both(lambda: TF.grid_sample(x, torch.zeros(2, 3, 3, 3, 3), align_corners=False),
         lambda: F.grid_sample(fx, fw.zeros(2, 3, 3, 3, 3, device=device),
                               align_corners=False))
    both(lambda: TF.grid_sample(torch.zeros(2, 3, 4, 4, 4), torch.zeros(2, 3, 3, 3, 3),
                                mode="bicubic", align_corners=False),
         lambda: F.grid_sample(fw.zeros(2, 3, 4, 4, 4), fw.zeros(2, 3, 3, 3, 3),
                               mode="bicubic", align_corners=False))
    both(lambda: TF.grid_sample(torch.zeros(2, 3, 0, 4), g, align_corners=False),
         lambda: F.grid_sample(fw.zeros(2, 3, 0, 4), fw.zeros(2, 3, 3, 2),
                               align_corners=False))
    both(lambda: TF.grid_sample(x, g.double(), align_corners=False),
         lambda: F.grid_sample(fx, fg.double(), align_corners=False))
    both(lambda: TF.grid_sample(torch.zeros(3, 4, 4), torch.zeros(3, 3, 2),
                                align_corners=False),
         lambda: F.grid_sample(fw.zeros(3, 4, 4), fw.zeros(3, 3, 2), align_corners=False))
    with pytest.warns(UserWarning, match="Default grid_sample and affine_grid behavior has "
                                         "changed to align_corners=False"):
        F.grid_sample(fx, fg)


@pytest.mark.parametrize("size", [(2, 3, 4, 5), (1, 1, 1, 3), (2, 1, 3, 4, 5), (1, 2, 1, 1, 2)])
@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid(device, size, align_corners):
    nd = len(size) - 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)      # unit-size grids warn in both
        run_both(lambda th: TF.affine_grid(th, size, align_corners=align_corners),
                 lambda th: F.affine_grid(th, size, align_corners=align_corners),
                 [rand(size[0], nd, nd + 1)], device)


def test_affine_grid_errors():
    th = torch.zeros(2, 2, 3)
    ft = fw.zeros(2, 2, 3)
    same_error(lambda: TF.affine_grid(th, (2, 3, 4), align_corners=False),
               lambda: F.affine_grid(ft, (2, 3, 4), align_corners=False))
    same_error(lambda: TF.affine_grid(torch.zeros(2, 3, 3), (2, 3, 4, 5), align_corners=False),
               lambda: F.affine_grid(fw.zeros(2, 3, 3), (2, 3, 4, 5), align_corners=False))
    same_error(lambda: TF.affine_grid(th, (2, 3, 4, 5, 6), align_corners=False),
               lambda: F.affine_grid(ft, (2, 3, 4, 5, 6), align_corners=False))
    same_error(lambda: TF.affine_grid(th.int(), (2, 3, 4, 5), align_corners=False),
               lambda: F.affine_grid(ft.int(), (2, 3, 4, 5), align_corners=False))
    same_error(lambda: TF.affine_grid(th, (2, 3, 0, 5), align_corners=False),
               lambda: F.affine_grid(ft, (2, 3, 0, 5), align_corners=False))
    same_error(lambda: TF.affine_grid(th, (3, 3, 4, 5), align_corners=False),
               lambda: F.affine_grid(ft, (3, 3, 4, 5), align_corners=False))
    with pytest.warns(UserWarning, match="affine_grid behavior has changed for unit-size"):
        F.affine_grid(ft, (2, 3, 1, 5), align_corners=True)


# ---- pixel / channel shuffle ---------------------------------------------------------------
@pytest.mark.parametrize("shape,r", [((2, 8, 3, 5), 2), ((1, 9, 2, 2), 3), ((18, 1, 3), 3),
                                     ((2, 3, 4, 2, 3), 2), ((0, 4, 2, 2), 2), ((3, 4, 5), 1)])
def test_pixel_shuffle(device, shape, r):
    run_both(lambda x: TF.pixel_shuffle(x, r), lambda x: F.pixel_shuffle(x, r),
             [rand(*shape)], device, rtol=0, atol=0, grad_rtol=0, grad_atol=0)


@pytest.mark.parametrize("shape,r", [((2, 2, 6, 4), 2), ((1, 1, 3, 6), 3), ((5, 6, 4), 2),
                                     ((2, 3, 1, 4, 4), 4), ((0, 2, 2, 2), 2)])
def test_pixel_unshuffle(device, shape, r):
    run_both(lambda x: TF.pixel_unshuffle(x, r), lambda x: F.pixel_unshuffle(x, r),
             [rand(*shape)], device, rtol=0, atol=0, grad_rtol=0, grad_atol=0)
    if 0 not in shape:      # torch hands empty inputs back unchanged in shape
        x = fw.tensor(rand(*shape), device=device)
        assert_close(F.pixel_shuffle(F.pixel_unshuffle(x, r), r), to_np(x), rtol=0, atol=0)


@pytest.mark.parametrize("fn,shape,r", [
    ("pixel_shuffle", (2, 7, 3, 3), 2), ("pixel_shuffle", (7, 3), 2),
    ("pixel_shuffle", (8, 3, 3), 0), ("pixel_shuffle", (8, 3, 3), -1),
    ("pixel_unshuffle", (8, 3, 3), 2), ("pixel_unshuffle", (3, 3), 2),
    ("pixel_unshuffle", (2, 3, 4, 3), 2), ("pixel_unshuffle", (2, 3, 4, 4), 0),
    ("channel_shuffle", (2, 5, 3), 2), ("channel_shuffle", (2, 6, 3), 0),
    ("channel_shuffle", (2, 6), 2), ("channel_shuffle", (6,), 2),
    ("native_channel_shuffle", (2, 5, 3), 2), ("native_channel_shuffle", (2, 6), 2)])
def test_shuffle_errors(fn, shape, r):
    same_error(lambda: getattr(TF, fn)(torch.zeros(shape), r),
               lambda: getattr(F, fn)(fw.zeros(shape), r))


@pytest.mark.parametrize("shape,g", [((2, 6, 3), 2), ((1, 6, 2, 3), 3), ((2, 4, 1, 2, 2), 4),
                                     ((0, 6, 3), 3), ((2, 5, 3, 3), 1)])
def test_channel_shuffle(device, shape, g):
    run_both(lambda x: TF.channel_shuffle(x, g), lambda x: F.channel_shuffle(x, g),
             [rand(*shape)], device, rtol=0, atol=0, grad_rtol=0, grad_atol=0)
    # torch's native entry has no derivative: values only
    x = rand(*shape).astype(np.float32)
    assert_close(F.native_channel_shuffle(fw.tensor(x, device=device), g),
                 TF.native_channel_shuffle(torch.tensor(x), g).numpy(), rtol=0, atol=0)


# ---- modules -------------------------------------------------------------------------------
MODULES = [
    ("Upsample", dict(scale_factor=2), (1, 2, 3, 4)),
    ("Upsample", dict(scale_factor=(1.5, 2), mode="bilinear"), (1, 2, 3, 4)),
    ("Upsample", dict(size=5, mode="linear", align_corners=True), (2, 2, 3)),
    ("Upsample", dict(size=(4, 3, 5), mode="trilinear"), (1, 1, 2, 3, 2)),
    ("Upsample", dict(scale_factor=0.5, mode="bicubic", recompute_scale_factor=True),
     (1, 2, 6, 6)),
    ("UpsamplingNearest2d", dict(scale_factor=3), (1, 2, 2, 3)),
    ("UpsamplingNearest2d", dict(size=(5, 4)), (1, 2, 2, 3)),
    ("UpsamplingBilinear2d", dict(scale_factor=2), (1, 2, 2, 3)),
    ("UpsamplingBilinear2d", dict(size=(5, 4)), (2, 1, 2, 3)),
    ("PixelShuffle", dict(upscale_factor=2), (2, 8, 2, 3)),
    ("PixelUnshuffle", dict(downscale_factor=2), (2, 2, 4, 6)),
    ("ChannelShuffle", dict(groups=3), (2, 6, 2, 2)),
]


@pytest.mark.parametrize("name,kw,shape", MODULES, ids=lambda v: str(v))
def test_modules(device, name, kw, shape):
    t = getattr(torch.nn, name)(**kw)
    f = getattr(nn, name)(**kw)
    assert repr(f) == repr(t)
    compare_module(torch, f, t, [rand(*shape).astype(np.float32)], device)


def test_upsample_attributes():
    f = nn.Upsample(scale_factor=(2, 3), mode="bicubic", align_corners=True)
    t = torch.nn.Upsample(scale_factor=(2, 3), mode="bicubic", align_corners=True)
    for attr in ("name", "size", "scale_factor", "mode", "align_corners",
                 "recompute_scale_factor"):
        assert getattr(f, attr) == getattr(t, attr)
    assert nn.Upsample(size=3).scale_factor is None
    assert nn.Upsample(scale_factor=2).scale_factor == 2.0
    assert repr(nn.Upsample(size=(3, 4))) == repr(torch.nn.Upsample(size=(3, 4)))
    assert list(nn.PixelShuffle(2).state_dict()) == []
