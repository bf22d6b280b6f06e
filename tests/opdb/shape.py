"""Cases for joining and shaping ops against NumPy: every dtype, 0-d and empty inputs,
non-contiguous inputs (strided and transposed), and mixed dtypes (promoted results)."""
import itertools

import numpy as np

from helpers import ALL_DTYPES, make
from opdb import Case


def c(fn):
    return [Case(fn)]


def _t(fw, device, shape, dtype=None, kind="contig", seed=0):
    """A tensor of ``shape`` and its NumPy value: contiguous, strided (every other column)
    or transposed (a contiguous tensor of the reversed shape, transposed)."""
    dtype = dtype or fw.float32
    if kind == "transposed" and len(shape) >= 2:
        t, a = make(tuple(reversed(shape)), dtype, device, seed=seed)
        order = tuple(reversed(range(len(shape))))
        return t.permute(order), a.transpose(order)
    return make(shape, dtype, device, noncontig=kind == "strided", seed=seed)


KINDS = ("contig", "strided", "transposed")
F64 = np.float64


def _dtype_is(got, dtype):
    assert got.dtype is dtype, f"dtype {got.dtype} != {dtype}"
    return got


# ---- joining ----------------------------------------------------------------------------

def _cat_cases(name):
    def fn(fw, d):
        op = getattr(fw, name)
        kw = "axis" if name == "concatenate" else "dim"
        out = []
        for dt in ALL_DTYPES:
            for k, kind in enumerate(KINDS):
                x, a = _t(fw, d, (3, 4), dt, kind, seed=k)
                y, b = _t(fw, d, (2, 4), dt, "strided", seed=k + 5)
                out.append((_dtype_is(op([x, y]), dt), np.concatenate([a, b])))
                z, e = _t(fw, d, (3, 5), dt, "transposed", seed=k + 7)
                out.append((op((x, z, x), **{kw: -1}), np.concatenate([a, e, a], -1)))
        # mixed dtypes promote like torch; legacy (0,) tensors are skipped; empty slabs
        x, a = _t(fw, d, (2, 3), fw.int32)
        h, b = _t(fw, d, (1, 3), fw.float16, seed=1)
        out.append((_dtype_is(op([x, h]), fw.float16), np.concatenate([a, b])))
        u, e = _t(fw, d, (2, 3), fw.uint8, seed=2)
        i8, f = _t(fw, d, (2, 3), fw.int8, seed=3)
        out.append((_dtype_is(op([u, i8], **{kw: 1}), fw.int16), np.concatenate([e, f], 1)))
        bl, g = _t(fw, d, (2, 3), fw.bool, seed=4)
        out.append((_dtype_is(op([bl, u]), fw.uint8), np.concatenate([g, e])))
        empty = fw.zeros(0, dtype=fw.float64, device=d)
        out.append((_dtype_is(op([empty, x, empty]), fw.float64), a.astype(F64)))
        out.append((op([x, fw.zeros(0, 3, dtype=fw.int32, device=d)]), a))
        out.append((op([empty, empty]), np.zeros(0)))
        res = fw.zeros(1, dtype=fw.float64, device=d)
        got = op([x, x], **{kw: 1}, out=res[:0])
        out.append((got, np.concatenate([a, a], 1)))
        return out
    return c(fn)


def _stack_case(fw, d):
    out = []
    for dt in ALL_DTYPES:
        for k, kind in enumerate(KINDS):
            x, a = _t(fw, d, (3, 4), dt, kind, seed=k)
            y, b = _t(fw, d, (3, 4), dt, "strided", seed=k + 3)
            for dim in (0, 1, 2, -1, -3):
                out.append((_dtype_is(fw.stack([x, y, x], dim), dt), np.stack([a, b, a], dim)))
    s, e = _t(fw, d, (), fw.int64)
    out.append((fw.stack([s, s]), np.stack([e, e])))
    out.append((fw.stack([fw.zeros(0, 2, device=d)] * 3, 1), np.zeros((0, 3, 2))))
    x, a = _t(fw, d, (2, 3), fw.int16)
    y, b = _t(fw, d, (2, 3), fw.bfloat16, seed=1)
    out.append((_dtype_is(fw.stack((x, y), 2), fw.bfloat16), np.stack([a, b], 2)))
    o = fw.empty(2, 2, 3, dtype=fw.float64, device=d)
    out.append((fw.stack([x, x], out=o), np.stack([a, a]).astype(F64)))
    return out


def _np_stacker(name, shapes_list, ref_name=None):
    def fn(fw, d):
        op, ref = getattr(fw, name), getattr(np, ref_name or name)
        out = []
        for dt in (fw.bool, fw.int64, fw.float16, fw.float32):
            for shapes in shapes_list:
                ts, arrs = [], []
                for k, s in enumerate(shapes):
                    t, a = _t(fw, d, s, dt, KINDS[k % 3], seed=k)
                    ts.append(t)
                    arrs.append(a)
                out.append((_dtype_is(op(ts), dt), ref(arrs)))
        x, a = _t(fw, d, shapes_list[0][0], fw.int8)
        y, b = _t(fw, d, shapes_list[0][1], fw.float64, seed=1)
        out.append((_dtype_is(op([x, y]), fw.float64), ref([a.astype(F64), b])))
        return out
    return c(fn)


def _atleast(name):
    def fn(fw, d):
        op, ref = getattr(fw, name), getattr(np, name)
        out = []
        for dt in ALL_DTYPES:
            for s in [(), (3,), (0,), (2, 3), (2, 0, 3), (2, 3, 4, 1)]:
                t, a = _t(fw, d, s, dt, "strided" if s else "contig")
                out.append((op(t), ref(a)))
        ts = [_t(fw, d, s, seed=i) for i, s in enumerate([(), (4,), (2, 3)])]
        got = op(*[t for t, _ in ts])
        out += list(zip(got, ref(*[a for _, a in ts])))
        got = op([t for t, _ in ts])
        out += list(zip(got, ref(*[a for _, a in ts])))
        return out
    return c(fn)


# ---- reordering -------------------------------------------------------------------------

def _flip_case(fw, d):
    out = []
    for dt in ALL_DTYPES:
        for k, kind in enumerate(KINDS):
            x, a = _t(fw, d, (3, 4, 5), dt, kind, seed=k)
            for dims in [(0,), (2,), (-1, 0), (0, 1, 2), ()]:
                out.append((fw.flip(x, dims), np.flip(a, dims) if dims else a))
            out.append((x.flip(1), np.flip(a, 1)))
    s, e = _t(fw, d, ())
    out.append((fw.flip(s, (0,)), e))
    out.append((fw.flip(fw.zeros(0, 3, device=d), (0, 1)), np.zeros((0, 3))))
    return out


def _flip_lr_ud(name):
    def fn(fw, d):
        out = []
        for dt in ALL_DTYPES:
            for k, kind in enumerate(KINDS):
                shape = (3, 4, 2) if k else (5, 6)
                x, a = _t(fw, d, shape, dt, kind, seed=k)
                out.append((getattr(fw, name)(x), getattr(np, name)(a)))
                out.append((getattr(x, name)(), getattr(np, name)(a)))
        if name == "flipud":
            x, a = _t(fw, d, (7,), fw.int32)
            out.append((fw.flipud(x), a[::-1]))
        return out
    return c(fn)


def _roll_case(fw, d):
    out = []
    for dt in ALL_DTYPES:
        for k, kind in enumerate(KINDS):
            x, a = _t(fw, d, (3, 4, 5), dt, kind, seed=k)
            out.append((fw.roll(x, 7), np.roll(a, 7)))
            out.append((fw.roll(x, -2, 1), np.roll(a, -2, 1)))
            out.append((x.roll((1, -6, 5), (0, 2, 1)), np.roll(a, (1, -6, 5), (0, 2, 1))))
            out.append((fw.roll(x, (1, 2), (-1, -1)), np.roll(a, (1, 2), (-1, -1))))
            out.append((fw.roll(x, [0], [1]), a))
    s, e = _t(fw, d, ())
    out.append((fw.roll(s, 3), e))
    out.append((fw.roll(fw.zeros(0, 3, device=d), 2), np.zeros((0, 3))))
    out.append((fw.roll(fw.zeros(2, 0, device=d), 1, 1), np.zeros((2, 0))))
    return out


def _rot90_case(fw, d):
    out = []
    for dt in ALL_DTYPES:
        for k, kind in enumerate(KINDS):
            x, a = _t(fw, d, (3, 4, 2), dt, kind, seed=k)
            for rot in range(-5, 6):
                out.append((fw.rot90(x, rot), np.rot90(a, rot)))
            out.append((x.rot90(1, (2, 0)), np.rot90(a, 1, (2, 0))))
            out.append((fw.rot90(x, -1, [-1, 1]), np.rot90(a, -1, (2, 1))))
    out.append((fw.rot90(fw.zeros(0, 3, device=d)), np.zeros((3, 0))))
    return out


# ---- repetition -------------------------------------------------------------------------

def _repeat_case(fw, d):
    out = []
    for dt in ALL_DTYPES:
        for k, kind in enumerate(KINDS):
            x, a = _t(fw, d, (2, 3), dt, kind, seed=k)
            out.append((x.repeat(2, 3), np.tile(a, (2, 3))))
            out.append((x.repeat((3, 1, 2)), np.tile(a, (3, 1, 2))))
            out.append((x.repeat([1, 0]), np.zeros((2, 0))))
    s, e = _t(fw, d, (), fw.int64)
    out.append((s.repeat(2, 3), np.tile(e, (2, 3))))
    out.append((s.repeat(()), e))
    out.append((fw.zeros(0, 2, device=d).repeat(3, 2), np.zeros((0, 4))))
    return out


def _tile_case(fw, d):
    out = []
    for dt in ALL_DTYPES:
        for k, kind in enumerate(KINDS):
            x, a = _t(fw, d, (2, 3, 2), dt, kind, seed=k)
            for reps in [(2,), (2, 1), (1, 2, 3), (2, 1, 1, 2), ()]:
                out.append((fw.tile(x, reps), np.tile(a, reps) if reps else a))
            out.append((x.tile(2, 2), np.tile(a, (2, 2))))
    s, e = _t(fw, d, ())
    out.append((fw.tile(s, (3,)), np.tile(e, 3)))
    return out


def _repeat_interleave_case(fw, d):
    out = []
    for dt in ALL_DTYPES:
        for k, kind in enumerate(KINDS):
            x, a = _t(fw, d, (3, 4), dt, kind, seed=k)
            out.append((fw.repeat_interleave(x, 2), np.repeat(a, 2)))
            out.append((x.repeat_interleave(3, 1), np.repeat(a, 3, 1)))
            out.append((fw.repeat_interleave(x, 0, -2), np.zeros((0, 4))))
            counts = [2, 0, 1, 3]
            for rdt in (fw.int64, fw.int32):
                r = fw.tensor(counts, dtype=rdt, device=d)
                out.append((fw.repeat_interleave(x, r, 1), np.repeat(a, counts, 1)))
            r = fw.tensor([1, 2, 0], device=d)
            out.append((fw.repeat_interleave(x, r, dim=0, output_size=3),
                        np.repeat(a, [1, 2, 0], 0)))
            out.append((fw.repeat_interleave(x, fw.tensor(2, device=d), 0), np.repeat(a, 2, 0)))
            # outer dims that cannot be merged into one stride (copied first)
            y, b = _t(fw, d, (2, 3, 4), dt, kind, seed=k)
            r = fw.tensor([0, 3, 1, 2], device=d)[::1]
            out.append((fw.repeat_interleave(y, r, 2), np.repeat(b, [0, 3, 1, 2], 2)))
            r = fw.tensor([9, 1, 2, 1, 0, 1], device=d)[::2]
            out.append((fw.repeat_interleave(y, r, -2), np.repeat(b, [9, 2, 0], 1)))
            out.append((fw.repeat_interleave(x, fw.tensor([3], device=d)), np.repeat(a, 3)))
    counts = fw.tensor([2, 0, 3, 1], device=d)
    out.append((_dtype_is(fw.repeat_interleave(counts), fw.int64),
                np.repeat(np.arange(4), [2, 0, 3, 1])))
    c32 = fw.tensor([1, 2], dtype=fw.int32, device=d)[::1]
    out.append((_dtype_is(c32.repeat_interleave(output_size=3), fw.int32), np.array([0, 1, 1])))
    out.append((fw.repeat_interleave(fw.zeros(0, dtype=fw.int64, device=d)), np.zeros(0)))
    s, e = _t(fw, d, ())
    out.append((fw.repeat_interleave(s, 3), np.repeat(e, 3)))
    return out


# ---- diagonals --------------------------------------------------------------------------

def _diag_case(fw, d):
    out = []
    for dt in ALL_DTYPES:
        for k, kind in enumerate(KINDS):
            v, a = _t(fw, d, (4,), dt, "strided" if k else "contig", seed=k)
            m, b = _t(fw, d, (3, 5), dt, kind, seed=k)
            for off in (0, 1, -2, 6, -7):
                out.append((fw.diag(v, off), np.diag(a, off)))
                out.append((m.diag(off), np.diag(b, off)))
    v, a = _t(fw, d, (3,))
    o = fw.empty(0, dtype=fw.float64, device=d)
    out.append((fw.diag(v, -1, out=o), np.diag(a, -1).astype(F64)))
    out.append((o, np.diag(a, -1)))
    out.append((fw.diag(fw.zeros(0, device=d)), np.zeros((0, 0))))
    return out


def _diag_embed_ref(a, off, d1, d2):
    n = a.shape[-1]
    m = n + abs(off)
    res = np.zeros(a.shape[:-1] + (m, m), a.dtype)
    for i in range(n):
        r, col = (i, i + off) if off >= 0 else (i - off, i)
        res[..., r, col] = a[..., i]
    nd = res.ndim
    return np.moveaxis(res, (-2, -1), (d1 % nd, d2 % nd))


def _diag_embed_case(fw, d):
    out = []
    for dt in ALL_DTYPES:
        for k, kind in enumerate(KINDS):
            x, a = _t(fw, d, (2, 3), dt, kind, seed=k)
            for off, d1, d2 in [(0, -2, -1), (1, 0, 2), (-2, 2, 0), (0, 1, 0)]:
                out.append((fw.diag_embed(x, off, d1, d2), _diag_embed_ref(a, off, d1, d2)))
            out.append((x.diag_embed(), _diag_embed_ref(a, 0, -2, -1)))
    v, a = _t(fw, d, (3,))
    out.append((fw.diag_embed(v, -1), np.diag(a, -1)))
    out.append((fw.diag_embed(fw.zeros(0, 2, device=d), 1), np.zeros((0, 3, 3))))
    return out


def _diagflat_case(fw, d):
    out = []
    for dt in ALL_DTYPES:
        for k, kind in enumerate(KINDS):
            x, a = _t(fw, d, (2, 3), dt, kind, seed=k)
            for off in (0, 2, -1):
                out.append((fw.diagflat(x, off), np.diagflat(a, off)))
            out.append((x.diagflat(), np.diagflat(a)))
    s, e = _t(fw, d, ())
    out.append((fw.diagflat(s), np.diagflat(e)))
    return out


def _block_diag_ref(arrs):
    arrs = [np.atleast_2d(a) if a.ndim else a.reshape(1, 1) for a in arrs]
    rows = sum(a.shape[0] for a in arrs)
    cols = sum(a.shape[1] for a in arrs)
    res = np.zeros((rows, cols), np.result_type(*arrs))
    r = col = 0
    for a in arrs:
        res[r:r + a.shape[0], col:col + a.shape[1]] = a
        r += a.shape[0]
        col += a.shape[1]
    return res


def _block_diag_case(fw, d):
    out = []
    for dt in ALL_DTYPES:
        ts = [_t(fw, d, s, dt, kind, seed=i) for i, (s, kind) in
              enumerate([((), "contig"), ((3,), "strided"), ((2, 4), "transposed"),
                         ((0, 2), "contig"), ((3, 0), "contig"), ((2, 2), "strided")])]
        out.append((_dtype_is(fw.block_diag(*[t for t, _ in ts]), dt),
                    _block_diag_ref([a for _, a in ts])))
    x, a = _t(fw, d, (2, 2), fw.bool)
    y, b = _t(fw, d, (1, 3), fw.int32, seed=1)
    z, e = _t(fw, d, (2,), fw.float16, seed=2)
    out.append((_dtype_is(fw.block_diag(x, y), fw.int32), _block_diag_ref([a, b])))
    out.append((_dtype_is(fw.block_diag(y, z), fw.float16), _block_diag_ref([b, e])))
    out.append((fw.block_diag(), np.zeros((1, 0))))
    return out


# ---- grids ------------------------------------------------------------------------------

def _meshgrid_case(fw, d):
    out = []
    for dt in ALL_DTYPES:
        for indexing in ("ij", "xy"):
            x, a = _t(fw, d, (3,), dt, "strided")
            y, b = _t(fw, d, (4,), dt, seed=1)
            s, e = _t(fw, d, (), dt, seed=2)
            z, f = _t(fw, d, (2,), dt, "strided", seed=3)
            for ts, arrs in [((x, y), (a, b)), ((x, s, z, y), (a, e, f, b)), ((x,), (a,)),
                             ((y, fw.zeros(0, dtype=dt, device=d)), (b, np.zeros(0)))]:
                got = fw.meshgrid(*ts, indexing=indexing)
                out += list(zip(got, np.meshgrid(*arrs, indexing=indexing)))
            got = fw.meshgrid([x, y], indexing=indexing)
            out += list(zip(got, np.meshgrid(a, b, indexing=indexing)))
    return out


def _cartesian_prod_case(fw, d):
    out = []
    for dt in ALL_DTYPES:
        x, a = _t(fw, d, (3,), dt, "strided")
        y, b = _t(fw, d, (2,), dt, seed=1)
        z, e = _t(fw, d, (4,), dt, seed=2)
        for ts, arrs in [((x, y), (a, b)), ((x, y, z), (a, b, e))]:
            ref = np.array(list(itertools.product(*arrs)))
            out.append((_dtype_is(fw.cartesian_prod(*ts), dt), ref))
        out.append((fw.cartesian_prod(x), a))
    out.append((fw.cartesian_prod(fw.zeros(0, device=d), fw.ones(2, device=d)),
                np.zeros((0, 2))))
    return out


# ---- padding ----------------------------------------------------------------------------

_NP_MODE = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def _pad_ref(a, pad, mode, value=0):
    """np.pad of the positive parts, then the negative parts cropped (PyTorch crops after
    padding for constant/reflect/replicate, and before padding for circular)."""
    k = len(pad) // 2
    pairs = [(0, 0)] * (a.ndim - k) + [(pad[2 * i], pad[2 * i + 1]) for i in reversed(range(k))]
    pos = [(max(lo, 0), max(hi, 0)) for lo, hi in pairs]
    if mode == "circular":
        first = tuple(slice(max(-lo, 0), a.shape[i] - max(-hi, 0))
                      for i, (lo, hi) in enumerate(pairs))
        return np.pad(a[first], pos, "wrap")
    kw = {"constant_values": value} if mode == "constant" else {}
    padded = np.pad(a, pos, _NP_MODE[mode], **kw)
    crop = tuple(slice(max(-lo, 0), padded.shape[i] - max(-hi, 0))
                 for i, (lo, hi) in enumerate(pairs))
    return padded[crop]


def _pad_case(fw, d):
    F = fw.nn.functional
    out = []
    for dt in ALL_DTYPES:
        for k, kind in enumerate(KINDS):
            x, a = _t(fw, d, (2, 3, 4, 5), dt, kind, seed=k)
            for pad in [(1, 2), (0, 3, 2, 1), (1, 1, 2, 0, 1, 3), (2, 1, 0, 0, 1, 1, 3, 0)]:
                out.append((F.pad(x, pad), _pad_ref(a, pad, "constant")))
            out.append((F.pad(x, (-1, 2, 1, -2)), _pad_ref(a, (-1, 2, 1, -2), "constant")))
            if dt is not fw.bool:
                out.append((F.pad(x, (1, 1), value=3), _pad_ref(a, (1, 1), "constant", 3)))
    # the reflect/replicate/circular index maps do not depend on the dtype: on simulated
    # cuda (every case a kernel run in the interpreter) three dtypes of each width class
    mode_dtypes, mode_kinds = [t for t in ALL_DTYPES if t is not fw.bool], KINDS
    if d != "cpu":
        mode_dtypes, mode_kinds = [fw.float32, fw.int64, fw.bfloat16], ("strided", "transposed")
    for dt in mode_dtypes:
        for k, kind in enumerate(mode_kinds):
            x3, a3 = _t(fw, d, (2, 3, 5), dt, kind, seed=k)
            x4, a4 = _t(fw, d, (2, 3, 4, 5), dt, kind, seed=k)
            x5, a5 = _t(fw, d, (1, 2, 3, 4, 5), dt, kind, seed=k)
            for mode in ("reflect", "replicate", "circular"):
                for t, arr, pad in [(x3, a3, (2, 1)), (x3[0], a3[0], (4, 3)),
                                    (x3, a3, (1, 2, 2, 0)), (x4, a4, (3, 2, 1, 1)),
                                    (x4, a4, (1, 1, 2, 3, 1, 0)), (x5, a5, (2, 3, 1, 2, 1, 2)),
                                    (x3, a3, (-1, 2)), (x4, a4, (2, -1, -1, 1)),
                                    (x3, a3, (0, 0))]:
                    out.append((F.pad(t, pad, mode), _pad_ref(arr, pad, mode)))
    x, a = _t(fw, d, (0, 2, 3))
    out.append((F.pad(x, (1, 1), "reflect"), np.zeros((0, 2, 5))))
    out.append((F.pad(x, (1, 2, 0, 1), "circular"), np.zeros((0, 3, 6))))
    s, e = _t(fw, d, ())
    out.append((F.pad(s, ()), e))
    h, b = _t(fw, d, (2, 3), fw.float16)
    out.append((F.pad(h, (1, 0), value=0.5), _pad_ref(b, (1, 0), "constant", 0.5)))
    return out


CASES = {
    "cat": _cat_cases("cat"),
    "concat": _cat_cases("concat"),
    "concatenate": _cat_cases("concatenate"),
    "stack": c(_stack_case),
    "hstack": _np_stacker("hstack", [[(2, 3), (2, 1), (2, 4)], [(3,), (), (2,)], [(), ()]]),
    "vstack": _np_stacker("vstack", [[(2, 3), (1, 3), (3,)], [(), ()], [(2, 2, 3), (1, 2, 3)]]),
    "row_stack": _np_stacker("row_stack", [[(2, 3), (1, 3), (3,)], [(), ()]], "vstack"),
    "dstack": _np_stacker("dstack", [[(2, 3), (2, 3, 2)], [(3,), (3,)], [(), ()]]),
    "column_stack": _np_stacker("column_stack", [[(3,), (3, 2), (3,)], [(2, 3), (2, 1)],
                                                 [(), (1, 2)]]),
    "atleast_1d": _atleast("atleast_1d"),
    "atleast_2d": _atleast("atleast_2d"),
    "atleast_3d": _atleast("atleast_3d"),
    "flip": c(_flip_case),
    "fliplr": _flip_lr_ud("fliplr"),
    "flipud": _flip_lr_ud("flipud"),
    "roll": c(_roll_case),
    "rot90": c(_rot90_case),
    "repeat": c(_repeat_case),
    "tile": c(_tile_case),
    "repeat_interleave": c(_repeat_interleave_case),
    "diag": c(_diag_case),
    "diag_embed": c(_diag_embed_case),
    "diagflat": c(_diagflat_case),
    "block_diag": c(_block_diag_case),
    "meshgrid": c(_meshgrid_case),
    "cartesian_prod": c(_cartesian_prod_case),
    "nn.functional.pad": c(_pad_case),
}
