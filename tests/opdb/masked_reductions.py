"""Cases for framework.masked (framework/_ops/masked_reductions.py) against torch.masked:
a random mask with a fully masked-out row, on a (3, 7) float64 input. Their thorough tests
(broadcast masks, integers, gradients) are in tests/test_masked_reductions.py."""
import math

import numpy as np

from opdb import Case

CALLS = {
    "sum": ((1,), {}), "prod": ((1,), {}), "amax": ((1,), {}), "amin": ((0,), {}),
    "argmax": ((1,), {}), "argmin": ((1,), {}), "mean": ((1,), {}), "median": ((1,), {}),
    "norm": ((2.0, 1), {}), "var": ((1,), {}), "std": ((0,), {"keepdim": True}),
    "logsumexp": ((1,), {}), "cumsum": ((1,), {}), "cumprod": ((1,), {}),
    "softmax": ((1,), {}), "log_softmax": ((1,), {}), "softmin": ((1,), {}),
    "normalize": ((math.inf, 1), {}),
}


def _inputs(fw, d, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-2, 2, (3, 7))
    m = rng.random((3, 7)) > 0.4
    m[1] = False
    return fw.tensor(a, device=d), fw.tensor(m, device=d), a, m


def _case(name, args, kwargs):
    def fn(fw, d):
        try:
            import torch
        except ImportError:
            return None
        x, m, a, mm = _inputs(fw, d)
        got = getattr(fw.masked, name)(x, *args, **kwargs, mask=m)
        ref = getattr(torch.masked, name)(torch.tensor(a), *args, **kwargs,
                                          mask=torch.tensor(mm))
        return got, ref.numpy()
    return fn


def _logaddexp(fw, d):
    try:
        import torch
    except ImportError:
        return None
    x, m, a, mm = _inputs(fw, d)
    y, n, b, nn = _inputs(fw, d, 1)
    ref = torch.masked.logaddexp(torch.tensor(a), torch.tensor(b), input_mask=torch.tensor(mm),
                                 other_mask=torch.tensor(nn))
    return fw.masked.logaddexp(x, y, input_mask=m, other_mask=n), ref.numpy()


CASES = {f"masked.{k}": [Case(_case(k, *v))] for k, v in CALLS.items()}
CASES["masked.logaddexp"] = [Case(_logaddexp)]
