"""CPU launchers: random family (Philox 4x32-10 kernels in native/random.cpp).

Every launcher takes the generator's ``seed`` and first counter ``offset``; element i (in
row-major order of the output's shape, whatever its strides) uses counter offset + i.
"""
from .. import _C

# distribution kinds of random_fill (native/random.cpp, framework/kernels/random.py)
UNIFORM, NORMAL, EXPONENTIAL, CAUCHY, LOG_NORMAL, GEOMETRIC = 0, 1, 2, 3, 4, 5


def random_fill(out, seed, offset, kind, a, b):
    """Fills ``out`` with a distribution: uniform a + u*b, normal a + n*b, exponential with
    scale b, cauchy(a, b), log-normal(a, b), geometric with b = 1/log1p(-p)."""
    _C.random_fill(out.dtype.code, out.data_ptr(), out._shape, out._stride, seed, offset, kind,
                   float(a), float(b))


def random_int(out, seed, offset, low, rng):
    """Fills ``out`` with integers in [low, low + rng); rng == 0 means 2**64."""
    _C.random_int(out.dtype.code, out.data_ptr(), out._shape, out._stride, seed, offset, low, rng)


def bernoulli_scalar(out, seed, offset, p):
    """out = 1 with probability p, else 0."""
    _C.bernoulli_scalar(out.dtype.code, out.data_ptr(), out._shape, out._stride, seed, offset,
                        float(p))


def bernoulli_tensor(out, p, p_stride, seed, offset):
    """out = 1 with probability p[...] (``p_stride`` broadcast to out's shape), else 0."""
    _C.bernoulli_tensor(out.dtype.code, out.data_ptr(), out._shape, out._stride, p.dtype.code,
                        p.data_ptr(), p_stride, seed, offset)


def randperm(out, seed, offset):
    """A random permutation of 0 .. n-1 into the contiguous 1-d ``out``."""
    _C.randperm(out.dtype.code, out.data_ptr(), out._shape[0], seed, offset)


def multinomial(out, probs, n_samples, replacement, seed, offset):
    """Samples ``n_samples`` categories per row of the 2-d ``probs`` into the contiguous
    int64 ``out`` of shape (rows, n_samples)."""
    rows, cats = probs._shape
    _C.multinomial(probs.dtype.code, probs.data_ptr(), rows, cats, probs._stride[0],
                   probs._stride[1], n_samples, replacement, out.data_ptr(), seed, offset)
