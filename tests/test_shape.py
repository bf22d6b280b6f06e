"""Joining and shaping ops against PyTorch itself: the same expression is evaluated with
``m = framework`` and ``m = torch`` on the same data, and must give the same values and
dtype, or raise the same exception type with the same message."""
import warnings

import numpy as np
import pytest

import framework as fw

torch = pytest.importorskip("torch")

A = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
I = np.arange(6).reshape(2, 3)


def _env(m, device):
    def t(x, dtype=None):
        r = m.tensor(x, device=device)
        return r if dtype is None else r.to(getattr(m, dtype))
    a = t(A)
    return {
        "m": m, "F": m.nn.functional, "t": t,
        "a": a, "nc": t(np.arange(24.0).reshape(3, 8) - 3)[:, ::2],    # strided (3, 4)
        "at": t(A.T.copy()).T,                                          # transposed (3, 4)
        "i": t(I), "b": t(np.zeros((2, 5)), "int32"), "z": t(1.5), "c": t(np.zeros(0)),
        "v": t(np.array([1.0, -2.0, 3.0])), "x3": t(np.arange(30.0).reshape(2, 3, 5)),
        "x4": t(np.arange(40.0).reshape(1, 2, 4, 5)), "bo": t(I % 2 == 0),
        "r": t(np.array([2, 0, 1])),
    }


def _run(expr, m, device):
    env = _env(m, device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ("ok", eval(expr, {"np": np}, env))   # noqa: S307 - test expressions only
        except Exception as e:  # noqa: BLE001 - compared with torch's exception below
            return ("err", e)


def _as_np(x):
    if isinstance(x, (tuple, list)):
        return [_as_np(y) for y in x]
    if isinstance(x, fw.Tensor):
        return str(x.dtype).split(".")[-1], np.asarray(x.to(fw.float64).cpu().numpy())
    return str(x.dtype).split(".")[-1], x.to(torch.float64).cpu().numpy()


def _compare(got, ref):
    if isinstance(ref, list):
        assert isinstance(got, list) and len(got) == len(ref)
        for g, r in zip(got, ref):
            _compare(g, r)
        return
    assert got[0] == ref[0], f"dtype {got[0]} != torch {ref[0]}"
    assert got[1].shape == ref[1].shape, f"shape {got[1].shape} != torch {ref[1].shape}"
    np.testing.assert_array_equal(got[1], ref[1])


VALUES = """
m.cat([a, nc, at])
m.cat([a, nc, at], 1)
m.cat((a, i.T.reshape(3, 2)), -1)
m.cat([a, c, at])
m.cat([c, c.int()])
m.cat([bo, i])
m.cat([a.half(), a.bfloat16()])
m.cat([a.to(m.uint8), a.to(m.int8)])
m.cat([t(np.zeros((0, 4))), a])
m.concat([a, at], dim=1)
m.concatenate([a, at], axis=1)
m.stack([a, nc, at], 1)
m.stack([z, z.int()])
m.stack([c, c], -1)
m.stack([at, at, at])
m.stack([z, z])
m.stack([at.half(), at.half()])
m.stack([at, at], out=t(np.zeros(1), "float64"))
m.stack([at, at], out=t(np.zeros((3, 2, 4))).transpose(0, 1))
m.stack([at.to(m.complex64), (at * 2).to(m.complex64)])
m.stack(list(t(np.arange(98304.0).reshape(12, 128, 64)).transpose(1, 2)))
m.stack([a.int(), a.int() + 1])
m.hstack([z, v, v])
m.hstack([a, nc])
m.vstack([z, z])
m.vstack([a[0], nc])
m.row_stack([a[0], nc])
m.dstack([v, v])
m.dstack([a, at])
m.column_stack([v, t(np.ones((3, 2))), v])
m.column_stack([z, t(np.ones((1, 2)))])
m.atleast_1d(z)
m.atleast_2d(v)
m.atleast_3d(a)
m.atleast_3d(v)
m.atleast_2d(z, v, a)
m.atleast_1d([z, c])
m.flip(at, [0, 1])
m.flip(x3, (-1, 0))
m.flip(z, [0])
nc.flip(1)
m.fliplr(at)
m.flipud(x3)
m.roll(at, 5)
m.roll(x3, (1, -7), (2, 0))
m.roll(x3, (1, 1), (1, 1))
m.roll(z, 2)
m.roll(c, 3)
m.rot90(at)
m.rot90(x3, 3, [2, 1])
m.rot90(x3, -2, (0, 2))
m.rot90(nc, 0)
at.repeat(2, 1, 3)
z.repeat(2, 2)
i.repeat(m.Size([2, 2]))
m.tile(at, (2,))
m.tile(x3, (2, 1, 1, 2))
m.repeat_interleave(at, 2)
m.repeat_interleave(at, 3, dim=0)
m.repeat_interleave(x3, r, 1)
m.repeat_interleave(x3, t(np.array([2, 0, 1]), "int32"), dim=-2, output_size=3)
m.repeat_interleave(at, t(2), 1)
m.repeat_interleave(r)
m.repeat_interleave(t(np.array([1, 3]), "int32"))
m.repeat_interleave(z, 2)
m.diag(v, 1)
m.diag(at, -1)
m.diag(at, 7)
m.diag(bo)
m.diag(c)
m.diag_embed(at, 1, 0, 2)
m.diag_embed(v, -1)
m.diagflat(at, 2)
m.diagflat(z)
m.block_diag(z, v, at, i)
m.block_diag(bo, i.int())
m.block_diag()
m.meshgrid(v, r.double(), indexing="ij")
m.meshgrid([v, c, v], indexing="xy")
m.meshgrid(z.double(), v, indexing="xy")
m.cartesian_prod(v, v, r.double())
m.cartesian_prod(r)
F.pad(at, (1, 2))
F.pad(x4, (1, 0, 2, 1, 0, 1, 1, 1), value=-2.5)
F.pad(i, (2, 1), value=7.9)
F.pad(bo, (1, 1), value=1)
F.pad(at, (-1, 2, 1, -2))
F.pad(at, (-2, -2))
F.pad(z, ())
F.pad(x3, (2, 4), "reflect")
F.pad(x3, (-1, 2, 2, -1), "reflect")
F.pad(x4, (4, 4, 3, 3, 1, 1), "reflect")
F.pad(x3, (3, 6), "replicate")
F.pad(x3, (-2, 1), "replicate")
F.pad(x4, (5, -1, 2, 3, 2, 0), "replicate")
F.pad(x3.int(), (3, 1), "replicate")
F.pad(x3, (5, 5, 1, 3), "circular")
F.pad(x3, (-1, 1), "circular")
F.pad(x3, (1, -1, -1, 1), "circular")
F.pad(x4, (5, 0, 1, 2, 2, 2), "circular")
F.pad(bo.reshape(1, 2, 3), (3, 2), "circular")
F.pad(at.reshape(1, 3, 4), (1, 1), "reflect", value=0)
F.pad(t(np.zeros((0, 2, 3))), (1, 1), "reflect")
"""

# Expressions where only the exception type is compared (the message names a tensor).
TYPE_ONLY = {"m.meshgrid(a, v, indexing='ij')",
             # PyTorch's parser words these its own way (overloads, unpacking); class only
             "m.roll(a, 1, [0, 1.0])", "a.repeat(2.0, 1)", "m.tile(a, (2.0, 1))",
             "m.rot90(a, 1, (0, 1.0))", "m.diag_embed(v, 0, 0.0)", "m.flip(a, [True])"}

ERRORS = """
m.cat([])
m.cat(())
m.cat(a)
m.cat([a, 1])
m.cat([a, b])
m.cat([a, c, t(np.zeros((3, 5)))])
m.cat([a, t(np.zeros((2, 4)))], 1)
m.cat([a, z])
m.cat([z, z])
m.cat([a, a], 2)
m.cat([a, v])
m.cat([a, a], out=t(np.zeros(2), "int64"))
m.concat([a, b])
m.stack([])
m.stack([a, b])
m.stack([a, a], 3)
m.stack([a, a.T])
m.hstack([])
m.vstack([z, c])
m.column_stack([])
m.column_stack([z, v])
m.dstack([])
m.flip(a, [0, 0])
m.flip(a, (-1, 1))
m.flip(a, [2])
m.flip(a, [1.0])
m.fliplr(v)
m.flipud(z)
m.roll(a, (1, 2), (0,))
m.roll(a, [1, 2])
m.roll(a, (), ())
m.roll(a, 1, 2)
m.roll(z, 1, 0)
m.roll(a, 1.5)
m.rot90(a, 1, [0])
m.rot90(a, 1, [0, 0])
m.rot90(v, 1)
m.rot90(a, 1, (0, 1, 1))
a.repeat(2)
a.repeat(2, -1)
a.repeat()
m.tile(a, (-1,))
m.repeat_interleave(a, -1)
m.repeat_interleave(a, r, 1)
m.meshgrid(z, v, indexing="xy")
m.repeat_interleave(a, t(np.array([1, -2, 0])), 0)
m.repeat_interleave(a, t(np.array([[1, 2, 3]])), 0)
m.repeat_interleave(a, t(np.array([1.0, 2.0, 3.0])), 0)
m.repeat_interleave(a, 2, 0, output_size=5)
m.repeat_interleave(a, t(np.array([1, 2, 0])), 0, output_size=2)
m.repeat_interleave(r, output_size=4)
m.repeat_interleave(t(np.array([1.0, 2.0])))
m.repeat_interleave(t(3))
m.repeat_interleave(t(np.array([1, -1])))
m.diag(z)
m.diag(x3)
m.diag_embed(a, 0, 0, 0)
m.diag_embed(a, 0, 0, 3)
m.diag_embed(z)
m.block_diag(x3)
m.flip(a, 1.0)
m.flip(a, [True])
m.roll(a, 1, 1.0)
m.roll(a, 1, [0, 1.0])
a.repeat(2.0, 1)
m.tile(a, (2.0, 1))
m.rot90(a, 1, (0, 1.0))
m.diag(v, 1.0)
m.diag(v, 2**62)
m.diag_embed(v, 1.0)
m.diag_embed(v, 0, 0.0)
m.diag_embed(v, 2**62)
m.diagflat(v, 1.5)
m.meshgrid()
m.meshgrid([], indexing="ij")
m.meshgrid(v, i.float().reshape(-1), indexing="foo")
m.meshgrid(v, v, indexing="foo")
m.meshgrid(v, r, indexing="ij")
m.meshgrid(v, 1, indexing="ij")
m.meshgrid(a, v, indexing='ij')
m.cartesian_prod(a)
m.cartesian_prod(v, r)
m.cartesian_prod()
F.pad(a, (1,))
F.pad(a, (1, 1, 1, 1, 1, 1))
F.pad(z, (1, 1))
F.pad(a, (-3, -2))
F.pad(a, [1.0, 1])
F.pad(a, (1, 1), "foo")
F.pad(a, (1, 1), "reflect", value=2)
F.pad(z, (), "reflect")
F.pad(v, (1, 1), "reflect")
F.pad(a, (1, 1, 1, 1), "replicate")
F.pad(x4, (1, 1), "circular")
F.pad(a, (4, 0), "reflect")
F.pad(a, (1, 4), "reflect")
F.pad(x3, (1, 1, 3, 1), "reflect")
F.pad(x4, (1, 1, 1, 1, 2, 1), "reflect")
F.pad(a, (-4, 0), "reflect")
F.pad(a, (-4, 0), "replicate")
F.pad(x3, (-5, 0, -3, 0), "reflect")
F.pad(x3, (-5, 0, -3, 0), "replicate")
F.pad(x4, (-5, 0, -4, 0, -2, 0), "replicate")
F.pad(t(np.zeros((2, 0))), (1, 1), "reflect")
F.pad(t(np.zeros((2, 0, 3))), (1, 1, 1, 1), "replicate")
F.pad(bo.reshape(1, 2, 3), (1, 1), "reflect")
F.pad(bo.reshape(1, 1, 2, 3), (1, 1, 1, 1), "replicate")
F.pad(a, (5, 0), "circular")
F.pad(a, (-5, 0), "circular")
F.pad(t(np.zeros((2, 0, 3))), (1, 1, 1, 1), "circular")
"""


@pytest.mark.parametrize("expr", [e for e in VALUES.strip().split("\n")])
def test_values_match_torch(expr, device):
    kind, got = _run(expr, fw, device)
    rkind, ref = _run(expr, torch, "cpu")
    assert rkind == "ok", f"torch raised {ref!r}"
    assert kind == "ok", f"framework raised {got!r}"
    if isinstance(ref, torch.Tensor):
        _compare(_as_np(got), _as_np(ref))
    else:
        assert isinstance(got, tuple) and len(got) == len(ref)
        _compare(_as_np(list(got)), _as_np(list(ref)))


@pytest.mark.parametrize("expr", [e for e in ERRORS.strip().split("\n")])
def test_errors_match_torch(expr, device):
    kind, got = _run(expr, fw, device)
    rkind, ref = _run(expr, torch, "cpu")
    assert rkind == "err", f"torch did not raise for {expr}"
    assert kind == "err", f"framework did not raise for {expr}"
    assert type(got) is type(ref), \
        f"{type(got).__name__}: {got} != torch {type(ref).__name__}: {ref}"
    if expr not in TYPE_ONLY:
        msg = str(ref).split("\n")[0].split(" (Triggered internally")[0]
        assert str(got) == msg


def test_meshgrid_default_indexing_is_ij_and_warns_once():
    from framework._ops import diagonals
    diagonals._warned.clear()
    x, y = fw.arange(2), fw.arange(3)
    with pytest.warns(UserWarning, match="indexing argument"):
        gx, gy = fw.meshgrid(x, y)
    assert gx.shape == (2, 3) and gy.shape == (2, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fw.meshgrid(x, y)
        fw.meshgrid(x, y, indexing="xy")


def test_meshgrid_returns_views():
    x = fw.arange(3.0)
    gx, gy = fw.meshgrid(x, fw.arange(2.0), indexing="ij")
    assert gx._storage is x._storage and gx.stride() == (1, 0)
    x[0] = 7
    assert gx[0, 1].item() == 7


def test_cat_out_resizes_and_converts():
    out = fw.empty(0, dtype=fw.float64)
    r = fw.cat([fw.ones(2, 2, dtype=fw.int32), fw.zeros(1, 2, dtype=fw.int32)], out=out)
    assert r is out and out.shape == (3, 2) and out.dtype is fw.float64
    assert out.tolist() == [[1, 1], [1, 1], [0, 0]]


def test_cat_out_overlapping_input_raises():
    x = fw.ones(4)
    with pytest.raises(RuntimeError, match="cannot refer to any of the output memory"):
        fw.cat([x[:2], x[2:]], out=x)


def test_flip_copies():
    x = fw.arange(4)
    y = fw.flip(x, (0,))
    x[0] = 9
    assert y.tolist() == [3, 2, 1, 0] and y.is_contiguous()


def test_atleast_returns_views_and_same_tensor():
    x = fw.arange(3)
    assert fw.atleast_1d(x) is x
    y = fw.atleast_2d(x)
    assert y._storage is x._storage and y.shape == (1, 3)
    assert fw.atleast_1d() == ()


def test_pad_is_bound_in_nn_functional():
    import framework.nn.functional as F
    assert F.pad is fw.nn.functional.pad
    assert F.pad(fw.ones(2), (1, 0)).tolist() == [0.0, 1.0, 1.0]


def test_flip_method_forms():
    t = fw.arange(6).reshape(2, 3)
    ref = np.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(t.flip(0, 1).numpy(), ref[::-1, ::-1])
    np.testing.assert_array_equal(t.flip((1,)).numpy(), ref[:, ::-1])
    np.testing.assert_array_equal(t.flip(dims=[0]).numpy(), ref[::-1])
    with pytest.raises(TypeError):
        t.flip(0, dims=[1])


def test_where_method():
    t = fw.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(t.where(t > 2, -1).numpy(), np.where(np.arange(6).reshape(2, 3) > 2,
                                                                       np.arange(6).reshape(2, 3), -1))
