"""framework.quasirandom.SobolEngine against torch.quasirandom.SobolEngine (unscrambled:
the same points bit for bit; scrambled: the properties of the points)."""
import numpy as np
import pytest

import framework as fw
from framework.quasirandom import SobolEngine

torch = pytest.importorskip("torch")


def _np(t):
    return t.cpu().numpy() if isinstance(t, fw.Tensor) else t.numpy()


def test_direction_numbers_match_torch():
    d = SobolEngine.MAXDIM_SUPPORTED
    np.testing.assert_array_equal(SobolEngine(d).sobolstate.numpy(),
                                  torch.quasirandom.SobolEngine(d).sobolstate.numpy())


@pytest.mark.parametrize("dim", [1, 2, 7, 40, SobolEngine.MAXDIM_SUPPORTED])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_draw_matches_torch(dim, dtype):
    f, t = SobolEngine(dim), torch.quasirandom.SobolEngine(dim)
    for n in (1, 5, 1, 100, 0, 33):
        a = f.draw(n, dtype=getattr(fw, dtype))
        b = t.draw(n, dtype=getattr(torch, dtype))
        assert a.dtype == getattr(fw, dtype) and tuple(a.shape) == (n, dim)
        np.testing.assert_array_equal(_np(a), _np(b))
    assert f.num_generated == t.num_generated
    np.testing.assert_array_equal(f.quasi.numpy(), t.quasi.numpy())


def test_default_dtype_and_first_draw():
    f, t = SobolEngine(3), torch.quasirandom.SobolEngine(3)
    a, b = f.draw(4), t.draw(4)
    assert a.dtype == fw.float32
    np.testing.assert_array_equal(_np(a), _np(b))


@pytest.mark.parametrize("start", [0, 1, 7, 1000])
def test_fast_forward_reset_base2(start):
    f, t = SobolEngine(5), torch.quasirandom.SobolEngine(5)
    assert f.fast_forward(start) is f
    t.fast_forward(start)
    np.testing.assert_array_equal(_np(f.draw(9)), _np(t.draw(9)))
    assert f.reset() is f
    t.reset()
    np.testing.assert_array_equal(_np(f.draw_base2(4)), _np(t.draw_base2(4)))
    np.testing.assert_array_equal(_np(f.draw_base2(4)), _np(t.draw_base2(4)))


def _err(fn, lib_engine):
    try:
        fn(lib_engine)
    except Exception as e:  # noqa: BLE001
        return type(e), str(e).replace("framework.", "torch.")
    return None


@pytest.mark.parametrize("fn", [
    lambda E: E(0),
    lambda E: E(21202),
    lambda E: E(3).draw(0),
    lambda E: E(3).draw(-2),
    lambda E: (E(3).draw(3), E(3).draw_base2(2)),
    lambda E: E(2).draw(3, dtype=getattr(fw if E is SobolEngine else torch, "bfloat16")),
    lambda E: E(2).draw(3, dtype=getattr(fw if E is SobolEngine else torch, "int64")),
])
def test_errors_match_torch(fn):
    assert _err(fn, SobolEngine) == _err(fn, torch.quasirandom.SobolEngine)


def test_draw_base2_error_text():
    e, t = SobolEngine(2), torch.quasirandom.SobolEngine(2)
    e.draw(3)
    t.draw(3)
    with pytest.raises(ValueError) as a:
        e.draw_base2(2)
    with pytest.raises(ValueError) as b:
        t.draw_base2(2)
    assert str(a.value) == str(b.value)


def test_draw_out():
    f, t = SobolEngine(3), torch.quasirandom.SobolEngine(3)
    o1, o2 = fw.empty(0), torch.empty(0)
    assert f.draw(6, out=o1) is o1
    t.draw(6, out=o2)
    np.testing.assert_array_equal(_np(o1), _np(o2))


def test_beyond_table():
    with pytest.raises(ValueError, match="direction numbers for dimensions 1 to"):
        SobolEngine(SobolEngine.MAXDIM_SUPPORTED + 1)


def test_repr():
    for args in [(3,), (3, True), (3, True, 7), (3, False, 7)]:
        assert repr(SobolEngine(*args)) == repr(torch.quasirandom.SobolEngine(*args))


@pytest.mark.parametrize("seed", [0, 1, 123])
def test_scrambled_properties(seed):
    dim, m = 6, 7
    e = SobolEngine(dim, scramble=True, seed=seed)
    x = _np(e.draw_base2(m, dtype=fw.float64))
    assert x.shape == (2 ** m, dim)
    assert (x >= 0).all() and (x < 1).all()
    # every coordinate: exactly one point in each interval [k/2^m, (k+1)/2^m)
    for j in range(dim):
        assert (np.bincount((x[:, j] * 2 ** m).astype(int), minlength=2 ** m) == 1).all()
    # every pair of coordinates: the (t, m, s)-net property at a coarse level, 4x4 cells of
    # 2^m / 16 points each (Sobol' pairs of the first dimensions are (0, m, 2)-nets)
    for j in range(3):
        cells = (x[:, j] * 4).astype(int) * 4 + (x[:, j + 1] * 4).astype(int)
        assert (np.bincount(cells, minlength=16) == 2 ** m // 16).all()
    # the mean of each coordinate is close to 1/2
    assert np.abs(x.mean(0) - 0.5).max() < 0.02
    # a different seed gives different points; the same seed the same points
    y = _np(SobolEngine(dim, scramble=True, seed=seed).draw_base2(m, dtype=fw.float64))
    np.testing.assert_array_equal(x, y)
    z = _np(SobolEngine(dim, scramble=True, seed=seed + 1000).draw_base2(m, dtype=fw.float64))
    assert not np.array_equal(x, z)
    # the scrambled sequence is not the plain one
    assert not np.array_equal(x, _np(SobolEngine(dim).draw_base2(m, dtype=fw.float64)))


def test_scrambled_continuation_and_fast_forward():
    a = SobolEngine(4, scramble=True, seed=5)
    full = _np(a.draw(20, dtype=fw.float64))
    b = SobolEngine(4, scramble=True, seed=5)
    parts = np.concatenate([_np(b.draw(n, dtype=fw.float64)) for n in (1, 6, 13)])
    np.testing.assert_array_equal(full, parts)
    c = SobolEngine(4, scramble=True, seed=5).fast_forward(9)
    np.testing.assert_array_equal(full[9:], _np(c.draw(11, dtype=fw.float64)))
