"""Cases for pointwise ops against NumPy in float64, over dtypes, broadcasting, strided
inputs, 0-d and empty tensors."""
import numpy as np

from helpers import make, FLOAT_DTYPES, INT_DTYPES
from opdb import Case

SHAPES = [((3, 5), (3, 5)), ((4, 1, 3), (5, 1)), ((), (2, 3)), ((0, 3), (3,)), ((7,), ())]


def binary(op, ref, dtypes, low=-5, high=5):
    def fn(fw, device):
        out = []
        for dt in dtypes:
            for i, (sa, sb) in enumerate(SHAPES):
                x, a = make(sa, dt, device, low, high, noncontig=i == 0, seed=i)
                y, b = make(sb, dt, device, low, high, seed=i + 10)
                out.append((op(fw, x, y), ref(a.astype(np.float64), b.astype(np.float64))))
        return out
    return [Case(fn)]


def unary(op, ref, dtypes, low=-5, high=5):
    def fn(fw, device):
        out = []
        for dt in dtypes:
            for i, s in enumerate([(3, 7), (), (0,), (2, 3, 4)]):
                x, a = make(s, dt, device, low, high, noncontig=i == 0, seed=i)
                out.append((op(fw, x), ref(a.astype(np.float64))))
        return out
    return [Case(fn)]


NUM = INT_DTYPES + FLOAT_DTYPES

CASES = {
    "add": binary(lambda fw, x, y: fw.add(x, y, alpha=2), lambda a, b: a + 2 * b, NUM),
    "sub": binary(lambda fw, x, y: x - y, lambda a, b: a - b, [d for d in NUM if d.name != "uint8"]),
    "mul": binary(lambda fw, x, y: x * y, lambda a, b: a * b, NUM),
    "maximum": binary(lambda fw, x, y: fw.maximum(x, y), np.maximum, NUM),
    "eq": binary(lambda fw, x, y: x == y, np.equal, NUM, 0, 3),
    "ne": binary(lambda fw, x, y: x != y, np.not_equal, NUM, 0, 3),
    "lt": binary(lambda fw, x, y: x < y, np.less, NUM, 0, 3),
    "le": binary(lambda fw, x, y: x <= y, np.less_equal, NUM, 0, 3),
    "gt": binary(lambda fw, x, y: x > y, np.greater, NUM, 0, 3),
    "ge": binary(lambda fw, x, y: x >= y, np.greater_equal, NUM, 0, 3),
    "neg": unary(lambda fw, x: -x, np.negative, [d for d in NUM if d.name != "uint8"]),
    "abs": unary(lambda fw, x: fw.abs(x), np.abs, NUM),
    "exp": unary(lambda fw, x: fw.exp(x), np.exp, FLOAT_DTYPES),
    "sqrt": unary(lambda fw, x: fw.sqrt(x), np.sqrt, FLOAT_DTYPES, 0, 9),
    "isnan": unary(lambda fw, x: fw.isnan(fw.sqrt(x)), lambda a: np.isnan(np.sqrt(a)), FLOAT_DTYPES, -1, 1),
}
