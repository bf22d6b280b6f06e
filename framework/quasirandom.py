"""``framework.quasirandom.SobolEngine``: Sobol' low-discrepancy sequences (PyTorch's
``torch.quasirandom``), with Joe and Kuo's direction numbers and optional scrambling
(a random linear matrix scramble and a digital shift, as Owen's LMS + shift).

The direction numbers are those of Joe & Kuo's ``new-joe-kuo-6.21201`` table (public data,
S. Joe and F. Y. Kuo, "Constructing Sobol sequences with better two-dimensional
projections", SIAM J. Sci. Comput. 30, 2635-2654, 2008), written out here for the first
``SobolEngine.MAXDIM_SUPPORTED`` dimensions; PyTorch ships all 21201. Unscrambled points are
bit for bit PyTorch's.
"""
import numpy as np

from . import _dtype

__all__ = ["SobolEngine"]

# Joe & Kuo's table, dimensions 2.. : one row each, "s a m_1 ... m_s" (s: degree of the
# primitive polynomial, a: its inner coefficients as bits, m: initial direction numbers).
_JOE_KUO = (
    "1 0 1|2 1 1 3|3 1 1 3 1|3 2 1 1 1|4 1 1 1 3 3|4 4 1 3 5 13|5 2 1 1 5 5 17|5 4 1 1 5 5 5|"
    "5 7 1 1 7 11 19|5 11 1 1 5 1 1|5 13 1 1 1 3 11|5 14 1 3 5 5 31|6 1 1 3 3 9 7 49|"
    "6 13 1 1 1 15 21 21|6 16 1 3 1 13 27 49|6 19 1 1 1 15 7 5|6 22 1 3 1 15 13 25|"
    "6 25 1 1 5 5 19 61|7 1 1 3 7 11 23 15 103|7 4 1 3 7 13 13 15 69|7 7 1 1 3 13 7 35 63|"
    "7 8 1 3 5 9 1 25 53|7 14 1 3 1 13 9 35 107|7 19 1 3 1 5 27 61 31|7 21 1 1 5 11 19 41 61|"
    "7 28 1 3 5 3 3 13 69|7 31 1 1 7 13 1 19 1|7 32 1 3 7 5 13 19 59|7 37 1 1 3 9 25 29 41|"
    "7 41 1 3 5 13 23 1 55|7 42 1 3 7 3 13 59 17|7 50 1 3 1 3 5 53 69|7 55 1 1 5 5 23 33 13|"
    "7 56 1 1 7 7 1 61 123|7 59 1 1 7 9 13 61 49|7 62 1 3 3 5 3 55 33|"
    "8 14 1 3 1 15 31 13 49 245|8 21 1 3 5 15 31 59 63 97|8 22 1 3 1 11 11 11 77 249|"
    "8 38 1 3 1 11 27 43 71 9|8 47 1 1 7 15 21 11 81 45|8 49 1 3 7 3 25 31 65 79|"
    "8 50 1 3 1 1 19 11 3 205|8 52 1 1 5 9 19 21 29 157|8 56 1 3 7 11 1 33 89 185|"
    "8 67 1 3 3 3 15 9 79 71|8 70 1 3 7 11 15 39 119 27|8 84 1 1 3 1 11 31 97 225|"
    "8 97 1 1 1 3 23 43 57 177|8 103 1 3 7 7 17 17 37 71|8 115 1 3 1 5 27 63 123 213|"
    "8 122 1 1 3 5 11 43 53 133|9 8 1 3 5 5 29 17 47 173 479|9 13 1 3 3 11 3 1 109 9 69|"
    "9 16 1 1 1 5 17 39 23 5 343|9 22 1 3 1 5 25 15 31 103 499|9 25 1 1 1 11 11 17 63 105 183|"
    "9 44 1 1 5 11 9 29 97 231 363|9 47 1 1 5 15 19 45 41 7 383|9 52 1 3 7 7 31 19 83 137 221|"
    "9 55 1 1 1 3 23 15 111 223 83|9 59 1 1 5 13 31 15 55 25 161|9 62 1 1 3 13 25 47 39 87 257|"
    "9 67 1 1 1 11 21 53 125 249 293|9 74 1 1 7 11 11 7 57 79 323|9 81 1 1 5 5 17 13 81 3 131|"
    "9 82 1 1 7 13 23 7 65 251 475|9 87 1 3 5 1 9 43 3 149 11|9 91 1 1 3 13 31 13 13 255 487|"
    "9 94 1 3 3 1 5 63 89 91 127|9 103 1 1 3 3 1 19 123 127 237|9 104 1 1 5 7 23 31 37 243 289|"
    "9 109 1 1 5 11 17 53 117 183 491|9 122 1 1 1 5 1 13 13 209 345|"
    "9 124 1 1 3 15 1 57 115 7 33|9 137 1 3 1 11 7 43 81 207 175|9 138 1 3 1 1 15 27 63 255 49|"
    "9 143 1 3 5 3 27 61 105 171 305|9 145 1 1 5 3 1 3 57 249 149|9 152 1 1 3 5 5 57 15 13 159|"
    "9 157 1 1 1 11 7 11 105 141 225|9 167 1 3 3 5 27 59 121 101 271|"
    "9 173 1 3 5 9 11 49 51 59 115|9 176 1 1 7 1 23 45 125 71 419|9 181 1 1 3 5 23 5 105 109 75|"
    "9 182 1 1 7 15 7 11 67 121 453|9 185 1 3 7 3 9 13 31 27 449|9 191 1 3 1 15 19 39 39 89 15|"
    "9 194 1 1 1 1 1 33 73 145 379|9 199 1 3 1 15 15 43 29 13 483|9 218 1 1 7 3 19 27 85 131 431|"
    "9 220 1 3 3 3 5 35 23 195 349|9 227 1 3 3 7 9 27 39 59 297|9 229 1 1 3 9 11 17 13 241 157|"
    "9 230 1 3 7 15 25 57 33 189 213|9 234 1 1 7 1 9 55 73 83 217|9 236 1 3 3 13 19 27 23 113 249|"
    "9 241 1 3 5 3 23 43 3 253 479|9 244 1 1 5 5 11 5 45 117 217|9 253 1 3 3 7 29 37 33 123 147|"
    "10 4 1 3 1 15 5 5 37 227 223 459|10 13 1 1 7 5 5 39 63 255 135 487|"
    "10 19 1 3 1 7 9 7 87 249 217 599|10 22 1 1 3 13 9 47 7 225 363 247|"
    "10 50 1 3 7 13 19 13 9 67 9 737|10 55 1 3 5 5 19 59 7 41 319 677|"
    "10 64 1 1 5 3 31 63 15 43 207 789|10 69 1 1 7 9 13 39 3 47 497 169|"
    "10 98 1 3 1 7 21 17 97 19 415 905|10 107 1 3 7 1 3 31 71 111 165 127|"
    "10 115 1 1 5 11 1 61 83 119 203 847|10 121 1 3 3 13 9 61 19 97 47 35|"
    "10 127 1 1 7 7 15 29 63 95 417 469|10 134 1 3 1 9 25 9 71 57 213 385|"
    "10 140 1 3 5 13 31 47 101 57 39 341|10 145 1 1 3 3 31 57 125 173 365 551|"
    "10 152 1 3 7 1 13 57 67 157 451 707|10 158 1 1 1 7 21 13 105 89 429 965|"
    "10 161 1 1 5 9 17 51 45 119 157 141|10 171 1 3 7 7 13 45 91 9 129 741|"
    "10 181 1 3 7 1 23 57 67 141 151 571|10 194 1 1 3 11 17 47 93 107 375 157|"
    "10 199 1 3 3 5 11 21 43 51 169 915|10 203 1 1 5 3 15 55 101 67 455 625|"
    "10 208 1 3 5 9 1 23 29 47 345 595|10 227 1 3 7 7 5 49 29 155 323 589|"
    "10 242 1 3 3 7 5 41 127 61 261 717"
)

_ROWS = [tuple(int(x) for x in row.split()) for row in _JOE_KUO.split("|")]
_MAXBIT = 30
_STATE = None
_SCALAR_NAMES = {_dtype.float16: "Half", _dtype.bfloat16: "BFloat16", _dtype.int64: "Long",
                 _dtype.int32: "Int", _dtype.int16: "Short", _dtype.int8: "Char",
                 _dtype.uint8: "Byte", _dtype.bool: "Bool"}  # (MAXDIM_SUPPORTED, MAXBIT) int64 direction numbers, built on first use


def _direction_numbers():
    """v[d, j] = m_{d,j} << (MAXBIT - 1 - j), m from Joe & Kuo's recurrence (Bratley-Fox)."""
    global _STATE
    if _STATE is None:
        n = len(_ROWS) + 1
        m = np.zeros((n, _MAXBIT), dtype=np.int64)
        m[0, :] = 1                                  # dimension 1: van der Corput
        for d, row in enumerate(_ROWS, start=1):
            s, a, init = row[0], row[1], row[2:]
            assert len(init) == s
            m[d, :s] = init
            for j in range(s, _MAXBIT):
                v = m[d, j - s] ^ (m[d, j - s] << s)
                for k in range(1, s):
                    if (a >> (s - 1 - k)) & 1:
                        v ^= m[d, j - k] << k
                m[d, j] = v
        _STATE = m << np.arange(_MAXBIT - 1, -1, -1, dtype=np.int64)
    return _STATE


def _gray_points(state, shift, index):
    """The (unscaled) points of the given indices: shift ^ XOR of v_j over the bits j of
    the Gray code of each index (the state after PyTorch's one-step-at-a-time updates)."""
    gray = index ^ (index >> 1)
    acc = np.broadcast_to(shift, (len(index), len(shift))).copy()
    for j in range(_MAXBIT):
        bit = ((gray >> j) & 1).astype(bool)
        if bit.any():
            acc[bit] ^= state[:, j]
    return acc


class SobolEngine:
    r"""
    The :class:`framework.quasirandom.SobolEngine` is an engine for generating
    (scrambled) Sobol sequences. Sobol sequences are an example of low
    discrepancy quasi-random sequences.

    This implementation of an engine for Sobol sequences is capable of
    sampling sequences up to a maximum dimension of ``SobolEngine.MAXDIM_SUPPORTED``
    (PyTorch: 21201). It uses direction numbers from Joe and Kuo's
    ``new-joe-kuo-6.21201`` table, and scrambles with a random lower triangular
    linear matrix and a digital shift when ``scramble=True``.

    Args:
        dimension (Int): The dimensionality of the sequence to be drawn
        scramble (bool, optional): Setting this to ``True`` will produce
                                   scrambled Sobol sequences. Scrambling is
                                   capable of producing better Sobol
                                   sequences. Default: ``False``.
        seed (Int, optional): This is the seed for the scrambling. The seed
                              of the random number generator is set to this,
                              if specified. Otherwise, it uses a random seed.
                              Default: ``None``
    """

    MAXBIT = _MAXBIT
    MAXDIM = 21201                       # PyTorch's bound (its full table)
    MAXDIM_SUPPORTED = len(_ROWS) + 1    # the dimensions whose direction numbers are here

    def __init__(self, dimension, scramble=False, seed=None):
        if dimension > self.MAXDIM or dimension < 1:
            raise ValueError("Supported range of dimensionality "
                             f"for SobolEngine is [1, {self.MAXDIM}]")
        if dimension > self.MAXDIM_SUPPORTED:
            raise ValueError(
                f"SobolEngine: this framework carries Joe and Kuo's direction numbers for "
                f"dimensions 1 to {self.MAXDIM_SUPPORTED} only (PyTorch: 1 to {self.MAXDIM}); "
                f"got dimension={dimension}")
        self.seed = seed
        self.scramble = scramble
        self.dimension = dimension
        self._state = _direction_numbers()[:dimension].copy()
        if not self.scramble:
            self._shift = np.zeros(dimension, dtype=np.int64)
        else:
            self._scramble()
        self._quasi = self._shift.copy()
        # as PyTorch: the first point is computed once, in the default dtype
        from ._ops import creation
        self._first_point = creation.from_numpy(
            self._quasi.astype(np.float64) / 2 ** self.MAXBIT).to(
                _dtype.get_default_dtype()).reshape(1, -1)
        self.num_generated = 0

    # PyTorch exposes these as tensors
    @property
    def sobolstate(self):
        from ._ops import creation
        return creation.from_numpy(self._state)

    @property
    def shift(self):
        from ._ops import creation
        return creation.from_numpy(self._shift)

    @property
    def quasi(self):
        from ._ops import creation
        return creation.from_numpy(self._quasi)

    def _scramble(self):
        from . import random as _random
        from ._ops import random as _rops
        g = None
        if self.seed is not None:
            g = _random.Generator()
            g.manual_seed(self.seed)
        d, nb = self.dimension, self.MAXBIT
        # digital shift: a random 30-bit integer per dimension
        shift_bits = _rops.randint(2, (d, nb), generator=g).numpy().astype(np.int64)
        self._shift = (shift_bits << np.arange(nb, dtype=np.int64)).sum(axis=1)
        # linear matrix scramble: a random lower triangular matrix over GF(2) with a unit
        # diagonal per dimension, acting on the binary digits of each direction number
        # from the most significant down (so output digit i depends on input digits 1..i:
        # the elementary intervals, hence the stratification, are kept)
        ltm = np.tril(_rops.randint(2, (d, nb, nb), generator=g).numpy().astype(np.int64))
        idx = np.arange(nb)
        ltm[:, idx, idx] = 1
        # digits of v, most significant first: digit k is bit (nb - 1 - k)
        shifts = np.arange(nb - 1, -1, -1, dtype=np.int64)
        digits = (self._state[:, :, None] >> shifts) & 1           # (d, nb_j, nb_k)
        new_digits = np.einsum("dpk,djk->djp", ltm, digits) & 1    # (d, nb_j, nb_p)
        self._state = (new_digits << shifts).sum(axis=2)

    def _points(self, start, n, dtype):
        from ._ops import creation
        if dtype not in (_dtype.float32, _dtype.float64):
            raise NotImplementedError(
                f'"_sobol_engine_draw" not implemented for \'{_SCALAR_NAMES.get(dtype, dtype)}\'')
        if n == 0:
            return creation.empty((0, self.dimension), dtype=dtype)
        index = np.arange(start, start + n, dtype=np.int64)
        pts = _gray_points(self._state, self._shift, index)
        # as PyTorch: the integers converted to dtype, then scaled by 2**-MAXBIT
        return creation.from_numpy(pts).to(dtype).mul_(1.0 / 2 ** self.MAXBIT)

    def draw(self, n=1, out=None, dtype=None):
        r"""
        Function to draw a sequence of :attr:`n` points from a Sobol sequence.
        Note that the samples are dependent on the previous samples. The size
        of the result is :math:`(n, dimension)`.

        Args:
            n (Int, optional): The length of sequence of points to draw.
                               Default: 1
            out (Tensor, optional): The output tensor
            dtype (:class:`framework.dtype`, optional): the desired data type of the
                                                    returned tensor.
                                                    Default: ``None``
        """
        import framework
        if dtype is None:
            dtype = _dtype.get_default_dtype()
        # as PyTorch: the first draw computes n - 1 points after the first one
        k = n - 1 if self.num_generated == 0 and n != 1 else n
        if k < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {k}: "
                               f"[{k}, {self.dimension}]")
        if self.num_generated == 0:
            result = self._first_point.to(dtype)
            if n > 1:
                result = framework.cat((result, self._points(1, n - 1, dtype)), dim=-2)
        else:
            result = self._points(self.num_generated, n, dtype)
        self.num_generated += n
        if self.num_generated > 0:
            self._quasi = _gray_points(self._state, self._shift,
                                       np.array([self.num_generated - 1], dtype=np.int64))[0]
        if out is not None:
            out.resize_as_(result).copy_(result)
            return out
        return result

    def draw_base2(self, m, out=None, dtype=None):
        r"""
        Function to draw a sequence of :attr:`2**m` points from a Sobol sequence.
        Note that the samples are dependent on the previous samples. The size
        of the result is :math:`(2**m, dimension)`.

        Args:
            m (Int): The (base2) exponent of the number of points to draw.
            out (Tensor, optional): The output tensor
            dtype (:class:`framework.dtype`, optional): the desired data type of the
                                                    returned tensor.
                                                    Default: ``None``
        """
        n = 2 ** m
        total_n = self.num_generated + n
        if not (total_n & (total_n - 1) == 0):
            raise ValueError(
                "The balance properties of Sobol' points require "
                f"n to be a power of 2. {self.num_generated} points have been "
                f"previously generated, then: n={self.num_generated}+2**{m}={total_n}. "
                "If you still want to do this, please use "
                "'SobolEngine.draw()' instead.")
        return self.draw(n=n, out=out, dtype=dtype)

    def reset(self):
        r"""
        Function to reset the ``SobolEngine`` to base state.
        """
        self._quasi = self._shift.copy()
        self.num_generated = 0
        return self

    def fast_forward(self, n):
        r"""
        Function to fast-forward the state of the ``SobolEngine`` by
        :attr:`n` steps. This is equivalent to drawing :attr:`n` samples
        without using the samples.

        Args:
            n (Int): The number of steps to fast-forward by.
        """
        self.num_generated += n
        if self.num_generated > 0:
            self._quasi = _gray_points(self._state, self._shift,
                                       np.array([self.num_generated - 1], dtype=np.int64))[0]
        return self

    def __repr__(self):
        fmt_string = [f"dimension={self.dimension}"]
        if self.scramble:
            fmt_string += ["scramble=True"]
        if self.seed is not None:
            fmt_string += [f"seed={self.seed}"]
        return self.__class__.__name__ + "(" + ", ".join(fmt_string) + ")"
