"""Cases for random ops: reproducible under a seeded generator, and the right support.
Distribution checks live in tests/test_random.py."""
import numpy as np

from opdb import Case


def _np(t):
    return np.array(t.cpu()._host_array())


def twice(make):
    """Runs ``make(fw, d, generator)`` twice from equal generator states: the results must be
    equal (the reference is the first result's values)."""
    def fn(fw, d):
        a = make(fw, d, fw.Generator(device=d).manual_seed(5))
        b = make(fw, d, fw.Generator(device=d).manual_seed(5))
        return (b, _np(a))
    return [Case(fn)]


def within(make, low, high, shape, integral=False):
    """The result has ``shape`` and its values lie in [low, high) (integers if integral)."""
    def fn(fw, d):
        t = make(fw, d, fw.Generator(device=d).manual_seed(3))
        a = _np(t).astype(np.float64)
        assert tuple(t.shape) == shape, (tuple(t.shape), shape)
        assert a.size == 0 or (a.min() >= low and a.max() < high), (a.min(), a.max())
        if integral:
            assert np.array_equal(a, np.round(a))
        return None
    return [Case(fn)]


def _perm(fw, d):
    t = fw.randperm(9, device=d)
    assert t.dtype is fw.int64
    return (fw.tensor(np.sort(_np(t))), np.arange(9))


CASES = {
    "rand": twice(lambda fw, d, g: fw.rand(3, 4, generator=g, device=d))
    + within(lambda fw, d, g: fw.rand(5, 7, generator=g, device=d, dtype=fw.float16), 0, 1, (5, 7)),
    "randn": twice(lambda fw, d, g: fw.randn((2, 5), generator=g, device=d, dtype=fw.float64)),
    "rand_like": within(lambda fw, d, g: fw.rand_like(fw.zeros(2, 3, device=d), generator=g),
                        0, 1, (2, 3)),
    "randn_like": twice(lambda fw, d, g: fw.randn_like(fw.zeros(4, device=d), generator=g)),
    "randint": twice(lambda fw, d, g: fw.randint(-3, 9, (20,), generator=g, device=d))
    + within(lambda fw, d, g: fw.randint(7, (4, 5), generator=g, device=d), 0, 7, (4, 5), True),
    "randint_like": within(lambda fw, d, g: fw.randint_like(fw.zeros(6, device=d), 2, 5,
                                                          generator=g), 2, 5, (6,), True),
    "randperm": [Case(_perm)] + twice(lambda fw, d, g: fw.randperm(30, generator=g, device=d)),
    "normal": twice(lambda fw, d, g: fw.normal(fw.zeros(3, device=d), fw.ones(3, device=d),
                                              generator=g))
    + twice(lambda fw, d, g: fw.normal(1.0, 2.0, (2, 2), generator=g, device=d)),
    "bernoulli": [Case(lambda fw, d: [(fw.bernoulli(fw.tensor([0.0, 1.0, 1.0], device=d)),
                                       np.array([0.0, 1.0, 1.0])),
                                      (fw.tensor([0.5, 0.5], device=d).bernoulli(0.0),
                                       np.zeros(2))])],
    # the draws' distributions are checked in tests/test_random_counts.py; here the
    # outcomes that are certain
    "poisson": [Case(lambda fw, d: [
        (fw.poisson(fw.tensor([0.0, float("inf")], device=d)), np.array([0.0, np.inf]))])],
    "binomial": [Case(lambda fw, d: [
        (fw.binomial(fw.tensor([7.0, 5.0, 0.0], device=d), fw.tensor([1.0, 0.0, 0.5], device=d)),
         np.array([7.0, 0.0, 0.0]))])],
    "multinomial": [Case(lambda fw, d: [
        (fw.multinomial(fw.tensor([0.0, 0.0, 3.0], device=d), 4, True), np.full(4, 2)),
        (fw.tensor([[0.0, 1.0], [1.0, 0.0]], device=d).multinomial(1), np.array([[1], [0]]))])],
    "uniform_": within(lambda fw, d, g: fw.empty(3, 3, device=d).uniform_(-2, 5, generator=g),
                       -2, 5, (3, 3)),
    "normal_": twice(lambda fw, d, g: fw.empty(5, device=d).normal_(3, 0.5, generator=g)),
    "random_": within(lambda fw, d, g: fw.empty(50, dtype=fw.uint8, device=d).random_(generator=g),
                      0, 256, (50,), True)
    + within(lambda fw, d, g: fw.empty(9, device=d).random_(-4, 4, generator=g), -4, 4, (9,), True),
    "bernoulli_": within(lambda fw, d, g: fw.empty(30, dtype=fw.int32, device=d).bernoulli_(
        0.5, generator=g), 0, 2, (30,), True),
    "exponential_": within(lambda fw, d, g: fw.empty(40, device=d).exponential_(2.0, generator=g),
                           0, np.inf, (40,)),
    "geometric_": within(lambda fw, d, g: fw.empty(40, dtype=fw.int64, device=d).geometric_(
        0.5, generator=g), 1, np.inf, (40,), True),
    "log_normal_": within(lambda fw, d, g: fw.empty(40, device=d).log_normal_(generator=g),
                          0, np.inf, (40,)),
    "cauchy_": twice(lambda fw, d, g: fw.empty(6, device=d).cauchy_(1.0, 2.0, generator=g)),
}
