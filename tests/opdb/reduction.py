"""Cases for reductions against NumPy in float64: every dtype an op supports, all dims or
sets of dims (negative, repeated order), keepdim, 0-d, empty, non-contiguous (strided and
transposed) inputs, NaN handling, and sizes large enough for the parallel and column
layouts of the kernel."""
import warnings

import numpy as np

from helpers import make, FLOAT_DTYPES, INT_DTYPES, ALL_DTYPES
from opdb import Case

# (shape, dim) pairs; dim None reduces all
SHAPES = [((3, 5), None), ((3, 5), 0), ((3, 5), 1), ((3, 5), -1), ((2, 3, 4), (0, 2)),
          ((2, 3, 4), (-1, 0)), ((2, 3, 4), [1]), ((4, 1, 3), 1), ((), None), ((), 0),
          ((), -1), ((0, 3), 1), ((0, 3), 0), ((0, 3), None), ((5,), 0), ((2, 3, 4), (0, 1, 2))]
NONEMPTY = [(s, d) for s, d in SHAPES if 0 not in s]
# one int dim (max/min/argmax with dim)
INT_DIMS = [((3, 5), 0), ((3, 5), 1), ((3, 5), -1), ((2, 3, 4), 1), ((2, 3, 4), -3), ((), 0),
            ((), -1), ((7,), 0), ((0, 3), 1)]
# sizes that reach the split, column and multi-run paths of the kernel
BIG = [((70001,), None), ((3, 70001), 1), ((70001, 3), 0), ((70001, 5), 0), ((5, 9001), 0),
       ((257, 300), 0), ((64, 33, 65), (0, 2)), ((300, 257), (1, 0))]
NUM = INT_DTYPES + FLOAT_DTYPES


def axis(dim, ndim):
    if dim is None or ndim == 0:
        return None
    return dim if isinstance(dim, int) else tuple(dim)


def inputs(fw, device, dt, shapes, low, high):
    """(x, a, dim, i) for each shape, alternating contiguous, strided and transposed.
    On the simulated cuda device (Triton's interpreter, slow) the BIG sizes run for float32
    only; tests/kernels/test_reduction_kernels.py forces the split paths on small shapes."""
    slow = device == "cuda" and fw.cuda.is_simulated() and dt is not fw.float32
    for i, (shape, dim) in enumerate(shapes):
        if slow and np.prod(shape) > 20000:
            continue
        if i % 3 == 2 and len(shape) >= 2:
            x, a = make(shape[::-1], dt, device, low, high, seed=i)
            perm = list(range(len(shape)))[::-1]
            yield x.permute(*perm), a.transpose(perm), dim, i
        else:
            x, a = make(shape, dt, device, low, high, noncontig=i % 3 == 1, seed=i)
            yield x, a, dim, i


def reduce_cases(fw_op, np_op, dtypes, shapes=SHAPES, low=-5, high=5, keepdims=(False, True)):
    """fw_op(fw, x, dim, keepdim) against np_op(float64 array, axis, keepdims)."""
    def fn(fw, device):
        out = []
        for dt in dtypes:
            for x, a, dim, _ in inputs(fw, device, dt, shapes, low, high):
                for keepdim in keepdims:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        ref = np_op(a.astype(np.float64), axis(dim, a.ndim), keepdim)
                        got = fw_op(fw, x, dim, keepdim)
                    out.append((got, np.asarray(ref)))
        return out
    return fn


def case_list(*fns):
    return [Case(f, getattr(f, "name", "")) for f in fns]


def nan_case(fw_op, np_op):
    """Inputs with NaNs in some rows (float32 and float64)."""
    def fn(fw, device):
        out = []
        a = np.array([[1.0, np.nan, 3.0, np.nan], [4.0, -2.0, 7.0, 0.5], [np.nan] * 4])
        for dt in (fw.float32, fw.float64):
            x = fw.tensor(a, dtype=dt, device=device)
            for dim in (None, 0, 1):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    out.append((fw_op(fw, x, dim), np.asarray(np_op(a, dim))))
        return out
    return fn


# ---- NumPy references -----------------------------------------------------------------

def np_sum(a, ax, k):
    return np.sum(a, axis=ax, keepdims=k)


def np_mean(a, ax, k):
    return np.mean(a, axis=ax, keepdims=k)


def np_lse(a, ax, k):
    if a.size == 0:
        shape = np.sum(a, axis=ax, keepdims=k).shape
        return np.full(shape, -np.inf)
    m = np.max(a, axis=ax, keepdims=True)
    m = np.where(np.isinf(m), 0, m)
    r = np.log(np.sum(np.exp(a - m), axis=ax, keepdims=True)) + m
    return r if k else np.squeeze(r, axis=ax) if ax is not None else r.reshape(())


def np_norm(p):
    def ref(a, ax, k):
        b = np.abs(a)
        if p == np.inf:
            return np.max(b, axis=ax, keepdims=k)
        if p == -np.inf:
            return np.min(b, axis=ax, keepdims=k)
        if p == 0:
            return np.sum(b != 0, axis=ax, keepdims=k).astype(np.float64)
        return np.sum(b ** p, axis=ax, keepdims=k) ** (1.0 / p)
    return ref


def np_var(correction, sqrt=False):
    def ref(a, ax, k):
        n = a.size // max(np.sum(a, axis=ax).size, 1) if a.size else 0
        m = np.mean(a, axis=ax, keepdims=True)
        v = np.sum((a - m) ** 2, axis=ax, keepdims=k) / max(0, n - correction)
        return np.sqrt(v) if sqrt else v
    return ref


# ---- cases per op ---------------------------------------------------------------------

def sum_extra(fw, device):
    out = []
    x, a = make((4, 5), fw.int32, device, seed=1)
    out.append((fw.sum(x, 1, dtype=fw.float64), a.astype(np.float64).sum(1)))
    out.append((x.sum(dtype=fw.int32), np.array(a.sum(), np.int32)))
    r = fw.empty(3, dtype=fw.float64, device=device)
    y, b = make((4, 3), fw.float32, device, seed=2)
    res = fw.sum(y, 0, out=r)
    assert res is r
    out.append((r, b.astype(np.float64).sum(0)))
    # accuracy: pairwise summation keeps float32 close to the float64 sum
    big, c = make((1 << 20,), fw.float32, device, 0, 1, seed=3)
    out.append((big.sum(), c.astype(np.float64).sum()))
    col, d = make((5000, 16), fw.float32, device, 0, 1, seed=4)
    out.append((col.sum(0), d.astype(np.float64).sum(0)))
    # dtypes: int and bool sums are int64
    assert fw.sum(fw.ones(3, dtype=fw.int8, device=device)).dtype is fw.int64
    assert fw.sum(fw.ones(3, dtype=fw.bool, device=device)).dtype is fw.int64
    assert fw.sum(fw.ones(3, dtype=fw.float16, device=device)).dtype is fw.float16
    # float16 accumulates in float32: 4096 * 1.0 would stall at 2048 in float16
    out.append((fw.ones(4096, dtype=fw.float16, device=device).sum(), np.array(4096.0)))
    return out


def mean_extra(fw, device):
    x, a = make((4, 6), fw.int64, device, seed=1)
    return [(fw.mean(x, 1, dtype=fw.float32), a.mean(1)),
            (fw.mean(fw.ones(4096, dtype=fw.bfloat16, device=device)), np.array(1.0))]


def nan_sum(fw, x, dim):
    return x.sum(dim) if dim is not None else x.sum()


def max_dim_case(fn_name, np_val, np_idx):
    def fn(fw, device):
        out = []
        for dt in ALL_DTYPES:
            for x, a, dim, _ in inputs(fw, device, dt, INT_DIMS, -3, 3):
                for keepdim in (False, True):
                    r = getattr(fw, fn_name)(x, dim, keepdim)
                    assert type(r).__name__ == fn_name and r._fields == ("values", "indices")
                    ax = axis(dim, a.ndim)
                    if a.size == 0:
                        shape = np.sum(a, axis=ax, keepdims=keepdim).shape
                        out += [(r.values, np.zeros(shape)), (r.indices, np.zeros(shape, int))]
                        continue
                    out.append((r.values, np_val(a, axis=ax, keepdims=keepdim)))
                    out.append((r.indices, np_idx(a, axis=ax, keepdims=keepdim)))
        return out
    return fn


def max_full_case(fn_name, np_fn):
    def fn(fw, device):
        out = []
        for dt in ALL_DTYPES:
            for x, a, _, _ in inputs(fw, device, dt, NONEMPTY, -3, 3):
                out.append((getattr(fw, fn_name)(x), np.asarray(np_fn(a))))
        a = np.array([1.0, np.nan, 3.0])
        out.append((getattr(fw, fn_name)(fw.tensor(a, device=device)), np.array(np.nan)))
        # max(a, b) / min(a, b) are maximum / minimum
        b = fw.tensor([2.0, 0.0, 4.0], device=device)
        pair = np.array([2.0, np.nan, 4.0]) if fn_name == "max" else np.array([1.0, np.nan, 3.0])
        out.append((getattr(fw, fn_name)(fw.tensor(a, device=device), b), pair))
        return out
    return fn


def argmax_case(fn_name, np_fn):
    def fn(fw, device):
        out = []
        shapes = INT_DIMS[:-1] + [(s, None) for s, _ in NONEMPTY[:6]] + BIG[:4]
        for dt in NUM:
            for x, a, dim, _ in inputs(fw, device, dt, shapes, -3, 3):
                if dim is not None and not isinstance(dim, int):
                    continue
                for keepdim in (False, True):
                    ax = axis(dim, a.ndim)
                    ref = np_fn(a, axis=ax, keepdims=keepdim) if a.ndim else np.zeros((), int)
                    out.append((getattr(fw, fn_name)(x, dim, keepdim), ref))
        nan = np.array([[1.0, np.nan, 5.0, np.nan], [7.0, 2.0, 7.0, 1.0]])
        xn = fw.tensor(nan, device=device)
        out.append((getattr(fw, fn_name)(xn), np.array(1)))
        out.append((getattr(fw, fn_name)(xn, 1), np.array([1, 0 if fn_name == "argmax" else 3])))
        # ties keep the first occurrence, also across the parallel chunks of a long input
        ones = fw.ones(200003, device=device)
        out.append((getattr(fw, fn_name)(ones), np.array(0)))
        return out
    return fn


def aminmax_case(fw, device):
    out = []
    for dt in ALL_DTYPES:
        for x, a, dim, _ in inputs(fw, device, dt, NONEMPTY + BIG[:3], -3, 3):
            if dim is not None and not isinstance(dim, int):
                continue
            for keepdim in (False, True):
                ax = axis(dim, a.ndim)
                if dim is None:
                    r, k = fw.aminmax(x), False
                else:
                    r, k = fw.aminmax(x, dim=dim, keepdim=keepdim), keepdim
                out.append((r.min, np.min(a, axis=ax, keepdims=k)))
                out.append((r.max, np.max(a, axis=ax, keepdims=k)))
    return out


def var_case(fw_fn, sqrt):
    def fn(fw, device):
        out = []
        for dt in FLOAT_DTYPES:
            for x, a, dim, _ in inputs(fw, device, dt, SHAPES + BIG, -5, 5):
                for corr, kw in ((1, {}), (0, {"unbiased": False}), (2, {"correction": 2})):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        got = fw_fn(fw, x, dim, True, **kw)
                        ref = np_var(corr, sqrt)(a.astype(np.float64), axis(dim, a.ndim), True)
                        mean = np.mean(a.astype(np.float64), axis=axis(dim, a.ndim),
                                       keepdims=True)
                    if isinstance(got, tuple):
                        out.append((got[1], mean))
                        got = got[0]
                    out.append((got, ref))
        return out
    return fn


def norm_case(fw, device):
    out = []
    for p in (2, "fro", 1, float("inf"), float("-inf"), 0, 3.0, 0.5):
        ref = np_norm(2 if p == "fro" else float(p))
        shapes = NONEMPTY if p in (float("inf"), float("-inf")) else SHAPES
        out += reduce_cases(lambda fw, x, d, k: fw.norm(x, p, d, k), ref, FLOAT_DTYPES,
                            shapes)(fw, device)
    x, a = make((3, 4), fw.float32, device, seed=3)
    out.append((x.norm(dtype=fw.float64), np.sqrt((a.astype(np.float64) ** 2).sum())))
    return out


def logsumexp_case(fw, device):
    out = reduce_cases(lambda fw, x, d, k: fw.logsumexp(x, d if d is not None else (), k),
                       np_lse, FLOAT_DTYPES + [fw.int32, fw.bool])(fw, device)
    big = fw.tensor([[1000.0, 1000.0], [-np.inf, -np.inf], [np.inf, 1.0]], device=device)
    out.append((fw.logsumexp(big, 1), np.array([1000 + np.log(2), -np.inf, np.inf])))
    return out


def count_case(fw, device):
    out = []
    for dt in ALL_DTYPES:
        for x, a, dim, _ in inputs(fw, device, dt, SHAPES + BIG, -2, 2):
            out.append((fw.count_nonzero(x, dim), np.asarray(np.count_nonzero(
                a, axis=axis(dim, a.ndim)))))
    return out


def all_any_case(name):
    def fn(fw, device):
        out = []
        for dt in ALL_DTYPES:
            for x, a, dim, _ in inputs(fw, device, dt, SHAPES + BIG, 0, 2):
                for k in (False, True):
                    got = getattr(fw, name)(x, dim, k) if dim is not None else \
                        getattr(fw, name)(x)
                    kk = k if dim is not None else False
                    ref = getattr(np, name)(a, axis=axis(dim, a.ndim), keepdims=kk)
                    assert got.dtype is (fw.uint8 if dt is fw.uint8 else fw.bool)
                    out.append((got, ref.astype(np.uint8) if dt is fw.uint8 else ref))
        x = fw.tensor([np.nan, 1.0], device=device)
        out.append((getattr(fw, name)(x), np.array(True)))
        return out
    return fn


def _sum_to_size_cases():
    def case(fw, device):
        out = []
        for shape, size in [((2, 3, 4), (3, 1)), ((2, 3, 4), (1, 4)), ((3,), (3,)),
                            ((2, 1, 4), (1, 1, 1)), ((2, 3), ())]:
            x, ref = make(shape, fw.float64, device)
            lead = len(shape) - len(size)
            ref = ref.sum(axis=tuple(range(lead)))
            for i, s in enumerate(size):
                if s == 1 and ref.shape[i] != 1:
                    ref = ref.sum(axis=i, keepdims=True)
            out.append((x.sum_to_size(*size), ref.reshape(size)))
        x, _ = make((2, 3), fw.float32, device)
        try:
            x.sum_to_size(4)
        except RuntimeError as e:
            assert "is not expandable to size" in str(e)
        else:
            raise AssertionError("sum_to_size(4) of a (2, 3) tensor did not raise")
        return out
    return [Case(case, "shapes")]


CASES = {
    "sum_to_size": _sum_to_size_cases(),
    "sum": case_list(reduce_cases(lambda fw, x, d, k: fw.sum(x, d, k), np_sum, ALL_DTYPES),
                     reduce_cases(lambda fw, x, d, k: x.sum(d, keepdim=k), np_sum,
                                  FLOAT_DTYPES, BIG, 0, 1),
                     nan_case(nan_sum, lambda a, d: np.sum(a, axis=d)), sum_extra),
    "nansum": case_list(reduce_cases(lambda fw, x, d, k: fw.nansum(x, d, k), np_sum, NUM),
                        nan_case(lambda fw, x, d: fw.nansum(x, d),
                                 lambda a, d: np.nansum(a, axis=d))),
    "mean": case_list(reduce_cases(lambda fw, x, d, k: fw.mean(x, d, k), np_mean,
                                   FLOAT_DTYPES, SHAPES + BIG), mean_extra),
    "nanmean": case_list(reduce_cases(lambda fw, x, d, k: fw.nanmean(x, d, k), np_mean,
                                      FLOAT_DTYPES),
                         nan_case(lambda fw, x, d: fw.nanmean(x, d),
                                  lambda a, d: np.nanmean(a, axis=d))),
    "prod": case_list(reduce_cases(
        lambda fw, x, d, k: fw.prod(x, d, k) if d is not None else fw.prod(x),
        lambda a, ax, k: np.prod(a, axis=ax, keepdims=k and ax is not None), ALL_DTYPES,
        [(s, d) for s, d in SHAPES if d is None or isinstance(d, int)], -2, 2)),
    "max": case_list(max_dim_case("max", np.max, np.argmax), max_full_case("max", np.max)),
    "min": case_list(max_dim_case("min", np.min, np.argmin), max_full_case("min", np.min)),
    "amax": case_list(reduce_cases(lambda fw, x, d, k: fw.amax(x, d if d is not None else (), k),
                                   lambda a, ax, k: np.max(a, axis=ax, keepdims=k),
                                   ALL_DTYPES, NONEMPTY + BIG),
                      nan_case(lambda fw, x, d: fw.amax(x, d if d is not None else ()),
                               lambda a, d: np.max(a, axis=d))),
    "amin": case_list(reduce_cases(lambda fw, x, d, k: x.amin(d if d is not None else (), k),
                                   lambda a, ax, k: np.min(a, axis=ax, keepdims=k),
                                   ALL_DTYPES, NONEMPTY + BIG),
                      nan_case(lambda fw, x, d: fw.amin(x, d if d is not None else ()),
                               lambda a, d: np.min(a, axis=d))),
    "aminmax": case_list(aminmax_case),
    "argmax": case_list(argmax_case("argmax", np.argmax)),
    "argmin": case_list(argmax_case("argmin", np.argmin)),
    "var": case_list(var_case(lambda fw, x, d, k, **kw: fw.var(x, d, keepdim=k, **kw), False),
                     nan_case(lambda fw, x, d: fw.var(x, d), lambda a, d: np.var(a, axis=d,
                                                                                 ddof=1))),
    "std": case_list(var_case(lambda fw, x, d, k, **kw: x.std(d, keepdim=k, **kw), True)),
    "var_mean": case_list(var_case(lambda fw, x, d, k, **kw: fw.var_mean(x, d, keepdim=k, **kw),
                                   False)),
    "std_mean": case_list(var_case(lambda fw, x, d, k, **kw: fw.std_mean(x, d, keepdim=k, **kw),
                                   True)),
    "norm": case_list(norm_case),
    "logsumexp": case_list(logsumexp_case),
    "all": case_list(all_any_case("all")),
    "any": case_list(all_any_case("any")),
    "count_nonzero": case_list(count_case),
}
