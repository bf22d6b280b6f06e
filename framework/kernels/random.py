"""Random number kernels (Triton): Philox 4x32-10, bit-identical to native/random.cpp.

Element i of a launch with (seed, offset) is computed from the four 32-bit words of
``tl.randint4x(seed, offset + i)`` (Philox 4x32-10, key = seed, counter = offset + i), so
every element is independent of the block layout, and the CPU kernels reproduce it
exactly. How the words become values (the same formulas as native/random.cpp):

- uniform [0, 1): float32 is ``tl.rand(seed, offset + i)``; float16 is ``(w0 >> 21) * 2**-11``
  and bfloat16 ``(w0 >> 24) * 2**-8`` (exact and below 1 after rounding); float64 is
  ``u53(w0, w1) = ((w0 << 32 | w1) >> 11) * 2**-53``.
- normal: Box-Muller in float64, ``sqrt(-2 log(1 - u53(w0, w1))) * cos(2 pi u53(w2, w3))``,
  then rounded to the dtype (float64 -> float32 -> 16-bit). log and cos are computed here
  (``_log_m53``, ``_sincos_turns``) from +, -, *, /, sqrt, fma and integer operations only,
  which IEEE fixes to the bit, so every dtype agrees with the CPU. (``tl.randn`` itself uses
  the device's float32 log/cos and an approximate sqrt, whose last bits differ between the
  GPU, NumPy (the interpreter) and C's libm, so no CPU code could reproduce it.)
- integers in [low, low + range): ``w0 % range`` if range <= 2**32, else the 64-bit word
  ``(w0 << 32 | w1) % range``; range 0 stands for 2**64.
- bernoulli: ``u53(w0, w1) < p``.

Sums of products are written as explicit ``tl.fma`` (``std::fma`` in C++) so neither
compiler's contraction choices change a bit, and negation as ``0 - x``. Only log_normal_
uses the device's ``exp``: its float64 results may differ from the CPU in the last bit.
Kernels write a contiguous output of ``n`` elements; the launchers fill strided outputs
through a contiguous buffer (alloc.empty, then the copy kernel).
"""
import triton
import triton.language as tl

from .. import _dtype
from .._ops import alloc
from .copy import copy
from .launcher import cached, cdiv

# Distribution kinds of random_fill (same numbers as native/random.cpp).
UNIFORM, NORMAL, EXPONENTIAL, CAUCHY, LOG_NORMAL, GEOMETRIC = 0, 1, 2, 3, 4, 5

BLOCK = 1024


@triton.jit
def _counters(offset, n, BLOCK: tl.constexpr):
    """Element indices of this program and their Philox counters (uint64)."""
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    ctr = offset.to(tl.uint64) + idx.to(tl.uint64)
    return idx, ctr, idx < n


@triton.jit
def _u53(hi, lo):
    """A float64 in [0, 1) from the top 53 bits of the 64-bit word hi:lo."""
    bits = (hi.to(tl.uint64) << 32) | lo.to(tl.uint64)
    return (bits >> 11).to(tl.float64) * 1.1102230246251565e-16


@triton.jit
def _uniform(w0, w1, DTYPE: tl.constexpr):
    """The uniform [0, 1) of an output dtype, as float64 (exact)."""
    if DTYPE == tl.float32:
        u = tl.random.uint_to_uniform_float(w0).to(tl.float64)
    elif DTYPE == tl.float16:
        u = (w0 >> 21).to(tl.float64) * 0.00048828125
    elif DTYPE == tl.bfloat16:
        u = (w0 >> 24).to(tl.float64) * 0.00390625
    else:
        u = _u53(w0, w1)
    return u


@triton.jit
def _top53(hi, lo):
    """The top 53 bits of the 64-bit word hi:lo, as int64."""
    return (((hi.to(tl.uint64) << 32) | lo.to(tl.uint64)) >> 11).to(tl.int64)


@triton.jit
def _log_m53(m):
    """log(m * 2**-53) for int64 1 <= m <= 2**53 (native/random.cpp: log_m53)."""
    bits = m.to(tl.float64).to(tl.int64, bitcast=True)
    e = (bits >> 52) - 1023
    f = ((bits & 0x000FFFFFFFFFFFFF) | 0x3FF0000000000000).to(tl.float64, bitcast=True)
    big = f > 1.4142135623730951
    f = tl.where(big, f * 0.5, f)
    e = e + big.to(tl.int64)
    s = (f - 1.0) / (f + 1.0)
    z = s * s
    p = tl.fma(z, 0.08695652173913043, 0.09523809523809523)
    p = tl.fma(p, z, 0.10526315789473684)
    p = tl.fma(p, z, 0.11764705882352941)
    p = tl.fma(p, z, 0.13333333333333333)
    p = tl.fma(p, z, 0.15384615384615385)
    p = tl.fma(p, z, 0.18181818181818182)
    p = tl.fma(p, z, 0.2222222222222222)
    p = tl.fma(p, z, 0.2857142857142857)
    p = tl.fma(p, z, 0.4)
    p = tl.fma(p, z, 0.6666666666666666)
    p = tl.fma(p, z, 2.0)
    return tl.fma((e - 53).to(tl.float64), 0.6931471805599453, s * p)


@triton.jit
def _sincos_turns(b):
    """sin and cos of 2 pi b / 2**53 for int64 0 <= b < 2**53 (native/random.cpp:
    sincos_turns): exact reduction to the nearest quarter turn, then Taylor polynomials."""
    q = (b + (1 << 50)) >> 51
    r = (b - (q << 51)).to(tl.float64) * 4.440892098500626e-16
    z = r * r
    c = tl.fma(z, 6.565963114979468e-11, -6.386603083791849e-09)
    s = tl.fma(z, 6.066935731106192e-12, -6.688035109811464e-10)
    c = tl.fma(c, z, 4.710874778818169e-07)
    s = tl.fma(s, z, 5.692172921967924e-08)
    c = tl.fma(c, z, -2.5202042373060596e-05)
    s = tl.fma(s, z, -3.598843235212084e-06)
    c = tl.fma(c, z, 0.0009192602748394263)
    s = tl.fma(s, z, 0.00016044118478735975)
    c = tl.fma(c, z, -0.020863480763352957)
    s = tl.fma(s, z, -0.004681754135318687)
    c = tl.fma(c, z, 0.253669507901048)
    s = tl.fma(s, z, 0.07969262624616703)
    c = tl.fma(c, z, -1.2337005501361697)
    s = tl.fma(s, z, -0.6459640975062462)
    c = tl.fma(c, z, 1.0)
    s = tl.fma(s, z, 1.5707963267948966)
    s = s * r
    k = q & 3
    ns = 0.0 - s
    nc = 0.0 - c
    sin = tl.where(k == 0, s, tl.where(k == 1, c, tl.where(k == 2, ns, nc)))
    cos = tl.where(k == 0, c, tl.where(k == 1, ns, tl.where(k == 2, nc, s)))
    return sin, cos


@triton.jit
def _normal(w0, w1, w2, w3):
    """Standard normal (Box-Muller, cosine branch) in float64."""
    r = tl.sqrt(-2.0 * _log_m53((1 << 53) - _top53(w0, w1)))
    _, c = _sincos_turns(_top53(w2, w3))
    return r * c


@triton.jit
def _to_bf16(x):
    """float32 -> bfloat16, round to nearest even, with integer ops: the interpreter's own
    cast truncates, and this is what native/common.h does (no NaNs reach it here)."""
    bits = x.to(tl.uint32, bitcast=True)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return bits.to(tl.uint16).to(tl.bfloat16, bitcast=True)


@triton.jit
def _store(ptr, v, mask):
    """Stores float64 values rounded like native/random.cpp (from_double)."""
    ty = ptr.dtype.element_ty
    if ty == tl.float64:
        tl.store(ptr, v, mask=mask)
    elif ty == tl.float32:
        tl.store(ptr, v.to(tl.float32), mask=mask)
    elif ty == tl.float16:
        tl.store(ptr, v.to(tl.float32).to(tl.float16), mask=mask)
    elif ty == tl.bfloat16:
        tl.store(ptr, _to_bf16(v.to(tl.float32)), mask=mask)
    elif ty == tl.int1:
        tl.store(ptr, v != 0.0, mask=mask)
    else:
        c = tl.minimum(tl.maximum(v, -9223372036854775808.0), 9223372036854774784.0)
        tl.store(ptr, c.to(tl.int64).to(ty), mask=mask)


@cached
@triton.jit
def _random_fill_kernel(out_ptr, n, seed: tl.uint64, offset: tl.uint64, a: tl.float64,
                        b: tl.float64, KIND: tl.constexpr, BLOCK: tl.constexpr):
    """Each program fills BLOCK elements of out with the distribution KIND(a, b)."""
    idx, ctr, mask = _counters(offset, n, BLOCK)
    w0, w1, w2, w3 = tl.randint4x(seed, ctr)
    if KIND == 0:  # uniform: a + u * b
        v = tl.fma(_uniform(w0, w1, out_ptr.dtype.element_ty), b, a)
    elif KIND == 1:  # normal: a + n * b
        v = tl.fma(_normal(w0, w1, w2, w3), b, a)
    elif KIND == 2:  # exponential: -log(1 - u) * b, b = 1 / lambda
        v = (0.0 - _log_m53((1 << 53) - _top53(w0, w1))) * b
    elif KIND == 3:  # cauchy: a + tan(theta - pi/2) * b = a - cos/sin theta * b, theta in (0, pi)
        bt = ((((w0.to(tl.uint64) << 32) | w1.to(tl.uint64)) >> 13) << 1 | 1).to(tl.int64)
        sn, cs = _sincos_turns(bt)
        v = tl.fma((0.0 - cs) / sn, b, a)
    elif KIND == 4:  # log-normal: exp(a + n * b)
        v = tl.exp(tl.fma(_normal(w0, w1, w2, w3), b, a))
    else:  # geometric: ceil(log(v) * b), v = (2k + 1) 2**-53 in (0, 1), b = 1/log1p(-p)
        k = (((w0.to(tl.uint64) << 32) | w1.to(tl.uint64)) >> 12).to(tl.int64)
        v = tl.maximum(tl.ceil(_log_m53(2 * k + 1) * b), 1.0)
    _store(out_ptr + idx, v, mask)


@cached
@triton.jit
def _random_int_kernel(out_ptr, n, seed: tl.uint64, offset: tl.uint64, low: tl.int64,
                       rng: tl.uint64, SMALL: tl.constexpr, FULL: tl.constexpr,
                       BLOCK: tl.constexpr):
    """Each program fills BLOCK elements with integers in [low, low + rng) (FULL: rng = 2^64)."""
    idx, ctr, mask = _counters(offset, n, BLOCK)
    w0, w1, _, _ = tl.randint4x(seed, ctr)
    if SMALL:
        r = (w0.to(tl.uint64) % rng.to(tl.uint64))
    else:
        r = (w0.to(tl.uint64) << 32) | w1.to(tl.uint64)
        if not FULL:
            r = r % rng.to(tl.uint64)
    v = (low.to(tl.int64).to(tl.uint64, bitcast=True) + r).to(tl.int64, bitcast=True)
    ty = out_ptr.dtype.element_ty
    if ty == tl.int1:
        tl.store(out_ptr + idx, v != 0, mask=mask)
    elif ty == tl.float64 or ty == tl.float32 or ty == tl.float16 or ty == tl.bfloat16:
        _store(out_ptr + idx, v.to(tl.float64), mask)
    else:
        tl.store(out_ptr + idx, v.to(ty), mask=mask)


@cached
@triton.jit
def _bernoulli_kernel(out_ptr, p_ptr, n, seed: tl.uint64, offset: tl.uint64, p: tl.float64,
                      P_TENSOR: tl.constexpr, BLOCK: tl.constexpr):
    """Each program writes BLOCK elements of u53 < p (p a scalar, or a contiguous tensor)."""
    idx, ctr, mask = _counters(offset, n, BLOCK)
    w0, w1, _, _ = tl.randint4x(seed, ctr)
    if P_TENSOR:
        pv = tl.load(p_ptr + idx, mask=mask, other=0.0).to(tl.float64)
    else:
        pv = p
    hit = _u53(w0, w1) < pv
    ty = out_ptr.dtype.element_ty
    if ty == tl.int1:
        tl.store(out_ptr + idx, hit, mask=mask)
    elif ty == tl.float64 or ty == tl.float32 or ty == tl.float16 or ty == tl.bfloat16:
        _store(out_ptr + idx, hit.to(tl.float64), mask)
    else:
        tl.store(out_ptr + idx, hit.to(ty), mask=mask)


@cached
@triton.jit
def _philox_words_kernel(out_ptr, n, seed: tl.uint64, offset: tl.uint64, BLOCK: tl.constexpr):
    """Each program writes the four Philox words of BLOCK counters into out (n, 4) uint32."""
    idx, ctr, mask = _counters(offset, n, BLOCK)
    w0, w1, w2, w3 = tl.randint4x(seed, ctr)
    tl.store(out_ptr + 4 * idx, w0, mask=mask)
    tl.store(out_ptr + 4 * idx + 1, w1, mask=mask)
    tl.store(out_ptr + 4 * idx + 2, w2, mask=mask)
    tl.store(out_ptr + 4 * idx + 3, w3, mask=mask)


@cached
@triton.jit
def _randperm_keys_kernel(out_ptr, n, seed: tl.uint64, offset: tl.uint64, BLOCK: tl.constexpr):
    """Each program writes BLOCK sort keys of randperm: the 64-bit word w0:w1 with its top bit
    flipped, so that int64 order is the unsigned order native/random.cpp sorts by."""
    idx, ctr, mask = _counters(offset, n, BLOCK)
    w0, w1, _, _ = tl.randint4x(seed, ctr)
    key = ((w0.to(tl.uint64) << 32) | w1.to(tl.uint64)) ^ 0x8000000000000000
    tl.store(out_ptr + idx, key.to(tl.int64, bitcast=True), mask=mask)


@cached
@triton.jit
def _multinomial_kernel(out_ptr, p_ptr, rs, cs, cats, n_samples, seed: tl.uint64,
                        offset: tl.uint64, BLOCK: tl.constexpr):
    """With replacement. Program (row, j) draws samples j*BLOCK .. of one row: the first
    category whose running sum exceeds u53 * total. Sums run in category order, as on the
    CPU, so the sums (and the draws) are the same bits."""
    row = tl.program_id(0)
    s = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = s < n_samples
    ctr = offset.to(tl.uint64) + (row.to(tl.int64) * n_samples + s).to(tl.uint64)
    w0, w1, _, _ = tl.randint4x(seed, ctr)
    base = p_ptr + row.to(tl.int64) * rs
    total = tl.zeros((), tl.float64)
    last = tl.zeros((), tl.int64)
    for j in range(cats):
        pj = tl.load(base + j * cs).to(tl.float64)
        total = total + pj
        last = tl.where(pj > 0, j, last)
    target = _u53(w0, w1) * total
    acc = tl.zeros((), tl.float64)
    sel = tl.full((BLOCK,), cats, tl.int64)
    for j in range(cats):
        acc = acc + tl.load(base + j * cs).to(tl.float64)
        sel = tl.where((acc > target) & (sel == cats), j, sel)
    tl.store(out_ptr + row.to(tl.int64) * n_samples + s, tl.minimum(sel, last), mask=mask)


@cached
@triton.jit
def _multinomial_keys_kernel(keys_ptr, p_ptr, rs, cs, cats, seed: tl.uint64, offset: tl.uint64,
                             BLOCK: tl.constexpr):
    """Without replacement. Program (row, j) writes the exponential-race keys -log(1-u) / p
    of BLOCK categories of one row (inf where p = 0); the smallest keys win, in order."""
    row = tl.program_id(0)
    c = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = c < cats
    ctr = offset.to(tl.uint64) + (row.to(tl.int64) * cats + c).to(tl.uint64)
    w0, w1, _, _ = tl.randint4x(seed, ctr)
    pv = tl.load(p_ptr + row.to(tl.int64) * rs + c * cs, mask=mask, other=1.0).to(tl.float64)
    e = 0.0 - _log_m53((1 << 53) - _top53(w0, w1))
    key = tl.where(pv > 0, e / tl.where(pv > 0, pv, 1.0), float("inf"))
    tl.store(keys_ptr + row.to(tl.int64) * cats + c, key, mask=mask)


def _grid(n):
    return (max(1, cdiv(n, BLOCK)),)


# ---- launchers: the cuda backend's random family, same names and arguments as
# framework/_cpu/random.py. Strided outputs are filled through a contiguous buffer.

def _fill(out, launch):
    """Runs ``launch(dst, n, grid)`` on a contiguous buffer for out (out itself when it is
    contiguous), then copies the buffer into out."""
    n = alloc.numel(out._shape)
    if n:
        dst = out if out.is_contiguous() else alloc.empty(out._shape, out.dtype,
                                                          out._storage.device)
        launch(dst, n, _grid(n))
        if dst is not out:
            copy(out, dst, dst._stride)


def random_fill(out, seed, offset, kind, a, b):
    """Fills ``out`` with distribution ``kind``(a, b); see native/random.cpp (value_of)."""
    _fill(out, lambda dst, n, grid: _random_fill_kernel[grid](
        dst, n, seed, offset, float(a), float(b), KIND=kind, BLOCK=BLOCK))


def random_int(out, seed, offset, low, rng):
    """Fills ``out`` with integers in [low, low + rng); rng 0 means 2**64."""
    _fill(out, lambda dst, n, grid: _random_int_kernel[grid](
        dst, n, seed, offset, low, max(rng, 1), SMALL=0 < rng <= 2**32, FULL=rng == 0,
        BLOCK=BLOCK))


def bernoulli_scalar(out, seed, offset, p):
    """out = 1 where u53 < p, else 0."""
    _fill(out, lambda dst, n, grid: _bernoulli_kernel[grid](
        dst, dst, n, seed, offset, float(p), P_TENSOR=False, BLOCK=BLOCK))


def bernoulli_tensor(out, p, p_stride, seed, offset):
    """out = 1 where u53 < p[...] (``p_stride``: p's strides broadcast to out's shape)."""
    def launch(dst, n, grid):
        pd = alloc.empty(out._shape, p.dtype, out._storage.device)
        copy(pd, p, p_stride)  # p in out's logical order
        _bernoulli_kernel[grid](dst, pd, n, seed, offset, 0.0, P_TENSOR=True, BLOCK=BLOCK)
    _fill(out, launch)


def randperm(out, seed, offset):
    """A random permutation of 0 .. n-1 into the 1-d ``out``: indices stably sorted by their
    64-bit keys (native/random.cpp sorts (key, index) pairs: the same order)."""
    n = out._shape[0]
    if n:
        keys = alloc.empty((n,), _dtype.int64, out._storage.device)
        _randperm_keys_kernel[_grid(n)](keys, n, seed, offset, BLOCK=BLOCK)
        order = keys.sort(stable=True)[1]
        copy(out, order, order._stride)


def multinomial(out, probs, n_samples, replacement, seed, offset):
    """Samples ``n_samples`` categories per row of the 2-d ``probs`` into the contiguous int64
    ``out`` (rows, n_samples). The caller has checked the probabilities."""
    rows, cats = probs._shape
    if not rows:
        return
    rs, cs = probs._stride
    if replacement:
        grid = (rows, cdiv(n_samples, BLOCK))
        _multinomial_kernel[grid](out, probs, rs, cs, cats, n_samples, seed, offset, BLOCK=BLOCK)
    else:
        keys = alloc.empty((rows, cats), _dtype.float64, probs._storage.device)
        grid = (rows, cdiv(cats, BLOCK))
        _multinomial_keys_kernel[grid](keys, probs, rs, cs, cats, seed, offset, BLOCK=BLOCK)
        first = keys.sort(dim=1, stable=True)[1][:, :n_samples]
        copy(out, first, first._stride)


def philox_words(out, n, seed, offset):
    """The raw Philox words of counters offset .. offset + n - 1 into ``out`` (n, 4) uint32
    (int32 bits), for tests."""
    _philox_words_kernel[_grid(n)](out, n, seed, offset, BLOCK=BLOCK)
