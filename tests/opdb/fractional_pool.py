"""Cases for fractional max pooling (framework/_ops/fractional_pool.py) with fixed
``_random_samples``, against a NumPy loop over PyTorch's interval rule."""
import itertools

import numpy as np

from opdb import Case


def _starts(u, size, out, k):
    if out == 1:
        return [size - k]
    alpha = (size - k) / (out - 1)
    return [int((i + u) * alpha) - int(u * alpha) for i in range(out - 1)] + [size - k]


def _ref(x, k, out, samples, order):
    N, C = x.shape[:2]
    res = np.zeros((N, C) + tuple(out))
    for n, c in itertools.product(range(N), range(C)):
        st = [_starts(samples[n, c, order[d]], x.shape[2 + d], out[d], k[d])
              for d in range(len(out))]
        for pos in itertools.product(*[range(o) for o in out]):
            sl = tuple(slice(st[d][p], st[d][p] + k[d]) for d, p in enumerate(pos))
            res[(n, c) + pos] = x[(n, c) + sl].max()
    return res


def _case(nd):
    def fn(fw, d):
        rng = np.random.default_rng(nd)
        shape, k, out = (((2, 2, 9, 7), (2, 3), (4, 3)) if nd == 2
                         else ((1, 2, 6, 5, 7), (2, 2, 3), (3, 2, 4)))
        x = rng.standard_normal(shape)
        u = rng.random(shape[:2] + (nd,))
        f = getattr(fw.nn.functional, f"fractional_max_pool{nd}d")
        got = f(fw.tensor(x, device=d), k, output_size=out,
                _random_samples=fw.tensor(u, device=d))
        return got, _ref(x, k, out, u, (1, 0) if nd == 2 else (0, 1, 2))
    return fn


CASES = {f"nn.functional.fractional_max_pool{nd}d": [Case(_case(nd))] for nd in (2, 3)}
