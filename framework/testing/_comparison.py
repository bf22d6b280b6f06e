"""``assert_close`` (and the deprecated ``assert_allclose``): torch.testing's comparison
semantics and messages, computed on host copies so that cuda tensors compare the same way.

Values are compared in their (promoted) dtype as torch does: float16 and bfloat16 round each
intermediate to the dtype; integers and bool compare in the default float dtype when a
tolerance is non-zero; so the pass/fail boundary and the differences a message quotes match
torch's.
"""
import cmath
import collections.abc
import contextlib
import warnings

import numpy as np

import framework as _fw
from .. import _dtype as _dt   # module-level tables: whatever order framework imports in

__all__ = ["assert_close", "assert_allclose"]

# {dtype: (rtol, atol)}; any other dtype (integers, bool) compares with (0, 0)
_DTYPE_PRECISIONS = {
    _dt.float16: (0.001, 1e-5),
    _dt.bfloat16: (0.016, 1e-5),
    _dt.float32: (1.3e-6, 1e-5),
    _dt.float64: (1e-7, 1e-7),
    _dt.complex64: (1.3e-6, 1e-5),
    _dt.complex128: (1e-7, 1e-7),
}
_REPORT = ("If you are a user and see this message during normal operation please file an "
           "issue at https://github.com/pytorch/pytorch/issues. If you are a developer and "
           "working on the comparison functions, please except the previous error and raise "
           "an expressive `ErrorMeta` instead.")


def _id_suffix(id):
    return "".join(str([item]) for item in id)


class _Failure(Exception):
    """A user-facing error (its type and message) found while comparing item ``id``."""

    def __init__(self, type, msg, *, id=()):
        super().__init__(msg)
        self.type, self.msg, self.id = type, msg, id

    def to_error(self, msg=None):
        if isinstance(msg, str):
            return self.type(msg)
        text = self.msg
        if self.id:
            text += f"\n\nThe failure occurred for item {_id_suffix(self.id)}"
        return self.type(msg(text) if callable(msg) else text)


class _Unsupported(Exception):
    """Raised by a pair's constructor when it does not handle the inputs."""


def _default_tolerances(*dtypes, precisions=None):
    precisions = precisions or _DTYPE_PRECISIONS
    tols = [precisions.get(d, (0.0, 0.0)) for d in dtypes]
    return max(t[0] for t in tols), max(t[1] for t in tols)


def _tolerances(*dtypes, rtol, atol, id=()):
    if (rtol is None) != (atol is None):
        raise _Failure(ValueError, "Both 'rtol' and 'atol' must be either specified or omitted, "
                       f"but got no {'rtol' if rtol is None else 'atol'}.", id=id)
    if rtol is not None:
        return rtol, atol
    return _default_tolerances(*dtypes)


def _diff_line(kind, diff, idx, tol, equality):
    if idx is None:
        line = f"{kind.title()} difference: {diff}"
    else:
        line = f"Greatest {kind} difference: {diff} at index {idx}"
    return line + ("" if equality else f" (up to {tol} allowed)") + "\n"


def _mismatch_msg(identifier, default, extra, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol):
    equality = rtol == 0 and atol == 0
    if identifier is None:
        identifier = default
    elif callable(identifier):
        identifier = identifier(default)
    text = f"{identifier} are not {'equal' if equality else 'close'}!\n\n"
    if extra:
        text += extra.strip() + "\n"
    text += _diff_line("absolute", abs_diff, abs_idx, atol, equality)
    text += _diff_line("relative", rel_diff, rel_idx, rtol, equality)
    return text.strip()


def _scalar_mismatch_msg(actual, expected, *, rtol, atol, identifier=None):
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_msg(identifier, "Scalars", f"Expected {expected} but got {actual}.",
                         abs_diff, None, atol, rel_diff, None, rtol)


# ---------------------------------------------------------------------------------------
# host arithmetic in a tensor's dtype
# ---------------------------------------------------------------------------------------

def _round_bf16(x):
    """Rounds float32 values to the nearest bfloat16 (ties to even), kept as float32."""
    x = np.asarray(x, np.float32)
    bits = x.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    return np.where(np.isnan(x), x, rounded.view(np.float32))


class _Arith:
    """Elementwise ops on host arrays that round each result to ``dtype`` (as torch's CPU
    kernels do: float16/bfloat16 compute in float32 and round back; the Python scalar of
    a tensor-scalar op is taken in that compute type)."""

    def __init__(self, dtype):
        self.dtype = dtype
        if dtype in (_fw.float16, _fw.bfloat16):
            self.compute = np.float32
        else:
            self.compute = np.dtype(dtype.np).type
        self.real = {np.complex64: np.float32, np.complex128: np.float64}.get(self.compute,
                                                                              self.compute)

    def round(self, x):
        if self.dtype is _fw.float16:
            return np.asarray(x).astype(np.float16)
        if self.dtype is _fw.bfloat16:
            return _round_bf16(x)
        return np.asarray(x)

    def wide(self, x):
        return np.asarray(x).astype(self.compute)

    def sub(self, a, b):
        return self.round(self.wide(a) - self.wide(b))

    def abs(self, a):
        return self.round(np.abs(self.wide(a)))

    def mul_scalar(self, a, s):
        return self.round(self.wide(a) * self.compute(s))

    def add_scalar(self, a, s):
        return self.round(np.asarray(a).astype(self.real) + self.real(s))

    def div(self, a, b):
        with np.errstate(divide="ignore", invalid="ignore"):
            return self.round(np.asarray(a).astype(self.real) / np.asarray(b).astype(self.real))


def _isclose(actual, expected, dtype, rtol, atol, equal_nan):
    """torch.isclose on host arrays holding values of ``dtype``."""
    # torch's checks (a C++ double prints as %g)
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol:g}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol:g}")
    floating = dtype.is_floating_point or dtype.is_complex
    close = actual == expected
    if equal_nan and floating:
        close |= np.isnan(actual) & np.isnan(expected)
    if rtol == 0 and atol == 0:
        return close
    with np.errstate(over="ignore", invalid="ignore"):
        if floating:
            ar = _Arith(dtype)
            allowed = ar.add_scalar(ar.abs(ar.mul_scalar(expected, rtol)), atol)
            error = ar.abs(ar.sub(actual, expected))
        else:
            # integers and bool are cast to the default float dtype first (as torch 2.13;
            # _Arith's ops widen their inputs to it)
            ar = _Arith(_fw.get_default_dtype())
            allowed = ar.add_scalar(ar.abs(ar.mul_scalar(expected, rtol)), atol)
            error = ar.abs(ar.sub(actual, expected))
        return close | (np.isfinite(error) & (error <= allowed))


def _tensor_mismatch_msg(actual, expected, matches, dtype, *, rtol, atol, identifier=None):
    total = matches.size
    mismatches = total - int(np.count_nonzero(matches))
    extra = f"Mismatched elements: {mismatches} / {total} ({mismatches / total:.1%})"
    a, e, m = actual.reshape(-1), expected.reshape(-1), matches.reshape(-1)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if dtype.is_floating_point or dtype.is_complex:
            ar = _Arith(dtype)
            abs_diff = ar.abs(ar.sub(a, e))
            real = _Arith(dtype.to_real()) if dtype.is_complex else ar
            abs_e = ar.abs(e)
            abs_diff, abs_e = np.real(abs_diff), np.real(abs_e)
            abs_diff = np.where(m, 0, abs_diff).astype(abs_diff.dtype)
            rel_diff = real.div(abs_diff, abs_e)
            to_py = float
        else:
            # integers (and bool) are widened to int64; their quotient is in the default dtype
            a, e = a.astype(np.int64), e.astype(np.int64)
            abs_diff = np.where(m, 0, np.abs(a - e))
            rel_diff = _Arith(_fw.get_default_dtype()).div(abs_diff, np.abs(e))
            to_py = int
        rel_diff = np.where(m, 0, rel_diff).astype(rel_diff.dtype)

    def unravel(flat):
        return tuple(int(i) for i in np.unravel_index(int(flat), matches.shape))

    abs_idx, rel_idx = int(np.argmax(abs_diff)), int(np.argmax(rel_diff))
    return _mismatch_msg(identifier, "Tensor-likes", extra,
                         to_py(abs_diff[abs_idx]), unravel(abs_idx), atol,
                         float(rel_diff[rel_idx]), unravel(rel_idx), rtol)


def _host(t):
    """A host NumPy copy of a framework tensor (bfloat16 holds its values as float32)."""
    return np.array(t._host_array())


def _py_item(arr, dtype):
    value = arr[()]
    if dtype is _fw.bool:
        return bool(value)
    if dtype.is_complex:
        return complex(value)
    if dtype.is_floating_point:
        return float(value)
    return int(value)


# ---------------------------------------------------------------------------------------
# pairs: one per kind of leaf input
# ---------------------------------------------------------------------------------------

class _Pair:
    def __init__(self, actual, expected, *, id=(), **options):
        self.actual, self.expected, self.id = actual, expected, id

    def _fail(self, type, msg):
        raise _Failure(type, msg, id=self.id)

    _fields = ()

    def __repr__(self):
        rows = [("id", self.id), ("actual", self.actual), ("expected", self.expected)]
        rows += [(name, getattr(self, name)) for name in self._fields]
        return "\n".join([f"{type(self).__name__[1:]}("]
                         + [f"    {name}={value!s}," for name, value in rows] + [")"])


class _NonePair(_Pair):
    def __init__(self, actual, expected, **options):
        if actual is not None and expected is not None:
            raise _Unsupported
        super().__init__(actual, expected, **options)

    def compare(self):
        if not (self.actual is None and self.expected is None):
            self._fail(AssertionError, f"None mismatch: {self.actual} is not {self.expected}")


class _BooleanPair(_Pair):
    def __init__(self, actual, expected, **options):
        if not all(isinstance(x, (bool, np.bool_)) for x in (actual, expected)):
            raise _Unsupported
        super().__init__(*(bool(x) for x in (actual, expected)), **options)

    def compare(self):
        if self.actual is not self.expected:
            self._fail(AssertionError,
                       f"Booleans mismatch: {self.actual} is not {self.expected}")


class _NumberPair(_Pair):
    _TYPE_TO_DTYPE = {int: _dt.int64, float: _dt.float64, complex: _dt.complex128}
    _fields = ("rtol", "atol", "equal_nan", "check_dtype")

    def __init__(self, actual, expected, *, id=(), rtol=None, atol=None, equal_nan=False,
                 check_dtype=False, **options):
        kinds = (int, float, complex, np.number)
        if not all(isinstance(x, kinds) for x in (actual, expected)):
            raise _Unsupported
        actual, expected = (x.item() if isinstance(x, np.number) else x
                            for x in (actual, expected))
        super().__init__(actual, expected, id=id, **options)
        # a bool against a number has no dtype here: a KeyError, as torch's
        self.rtol, self.atol = _tolerances(*(self._TYPE_TO_DTYPE[type(x)]
                                             for x in (actual, expected)),
                                           rtol=rtol, atol=atol, id=id)
        self.equal_nan, self.check_dtype = equal_nan, check_dtype

    def compare(self):
        actual, expected = self.actual, self.expected
        if self.check_dtype and type(actual) is not type(expected):
            self._fail(AssertionError,
                       f"The (d)types do not match: {type(actual)} != {type(expected)}.")
        if actual == expected:
            return
        if self.equal_nan and cmath.isnan(actual) and cmath.isnan(expected):
            return
        abs_diff = abs(actual - expected)
        if cmath.isfinite(abs_diff) and abs_diff <= self.atol + self.rtol * abs(expected):
            return
        self._fail(AssertionError, _scalar_mismatch_msg(actual, expected,
                                                        rtol=self.rtol, atol=self.atol))


class _TensorLikePair(_Pair):
    _fields = ("rtol", "atol", "equal_nan", "check_device", "check_dtype", "check_layout",
               "check_stride")

    def __init__(self, actual, expected, *, id=(), allow_subclasses=True, rtol=None,
                 atol=None, equal_nan=False, check_device=True, check_dtype=True,
                 check_layout=True, check_stride=False, **options):
        if not (isinstance(actual, type(expected)) or isinstance(expected, type(actual))):
            raise _Unsupported
        if not allow_subclasses and type(actual) is not type(expected):
            raise _Unsupported
        actual, expected = self._to_tensor(actual), self._to_tensor(expected)
        for t in (actual, expected):
            layout = getattr(t, "layout", _fw.strided)
            if layout != _fw.strided:
                raise _Failure(ValueError, f"Unsupported tensor layout {layout}", id=id)
        super().__init__(actual, expected, id=id, **options)
        self.rtol, self.atol = _tolerances(actual.dtype, expected.dtype, rtol=rtol, atol=atol,
                                           id=id)
        self.equal_nan = equal_nan
        self.check_device, self.check_dtype = check_device, check_dtype
        self.check_layout, self.check_stride = check_layout, check_stride

    @staticmethod
    def _to_tensor(x):
        if isinstance(x, _fw.Tensor):
            return x
        try:
            return _fw.as_tensor(x)
        except Exception:
            raise _Unsupported from None

    def _attribute_mismatch(self, name, a, e):
        self._fail(AssertionError,
                   f"The values for attribute '{name}' do not match: {a} != {e}.")

    def compare(self):
        a, e = self.actual, self.expected
        if a.shape != e.shape:
            self._attribute_mismatch("shape", a.shape, e.shape)
        a_layout = getattr(a, "layout", _fw.strided)
        e_layout = getattr(e, "layout", _fw.strided)
        if a_layout != e_layout:
            if self.check_layout:
                self._attribute_mismatch("layout", a_layout, e_layout)
        elif self.check_stride and a.stride() != e.stride():
            self._attribute_mismatch("stride()", a.stride(), e.stride())
        if self.check_device and a.device != e.device:
            self._attribute_mismatch("device", a.device, e.device)
        if self.check_dtype and a.dtype != e.dtype:
            self._attribute_mismatch("dtype", a.dtype, e.dtype)
        if "meta" in (a.device.type, e.device.type):
            return
        # host copies in the common dtype (devices need not match once their check passed)
        dtype = a.dtype if a.dtype == e.dtype else _fw.promote_types(a.dtype, e.dtype)
        a, e = (_host(t.detach().cpu().to(dtype)) for t in (a, e))
        matches = _isclose(a, e, dtype, self.rtol, self.atol, self.equal_nan)
        if matches.all():
            return
        if a.ndim == 0:
            msg = _scalar_mismatch_msg(_py_item(a, dtype), _py_item(e, dtype),
                                       rtol=self.rtol, atol=self.atol)
        else:
            msg = _tensor_mismatch_msg(a, e, matches, dtype, rtol=self.rtol, atol=self.atol)
        self._fail(AssertionError, msg)


_PAIR_TYPES = (_NonePair, _BooleanPair, _NumberPair, _TensorLikePair)


def _originate(actual, expected, *, id=(), **options):
    """The leaf pairs of two (possibly nested) sequences / mappings."""
    seq, mapping = collections.abc.Sequence, collections.abc.Mapping
    if (isinstance(actual, seq) and not isinstance(actual, str)
            and isinstance(expected, seq) and not isinstance(expected, str)):
        if len(actual) != len(expected):
            raise _Failure(AssertionError, "The length of the sequences mismatch: "
                           f"{len(actual)} != {len(expected)}", id=id)
        pairs = []
        for i in range(len(actual)):
            pairs += _originate(actual[i], expected[i], id=(*id, i), **options)
        return pairs
    if isinstance(actual, mapping) and isinstance(expected, mapping):
        a_keys, e_keys = set(actual.keys()), set(expected.keys())
        if a_keys != e_keys:
            raise _Failure(AssertionError,
                           "The keys of the mappings do not match:\n"
                           f"Missing keys in the actual mapping: {sorted(e_keys - a_keys)}\n"
                           f"Additional keys in the actual mapping: {sorted(a_keys - e_keys)}",
                           id=id)
        keys = a_keys
        with contextlib.suppress(Exception):   # deterministic order where keys sort
            keys = sorted(keys)
        pairs = []
        for key in keys:
            pairs += _originate(actual[key], expected[key], id=(*id, key), **options)
        return pairs
    for pair_type in _PAIR_TYPES:
        try:
            return [pair_type(actual, expected, id=id, **options)]
        except _Unsupported:
            continue
        except _Failure:
            raise
        except Exception as error:
            raise RuntimeError(
                f"Originating a {pair_type.__name__[1:]}() at item {_id_suffix(id)} with\n\n"
                f"{type(actual).__name__}(): {actual}\n\nand\n\n"
                f"{type(expected).__name__}(): {expected}\n\n"
                f"resulted in the unexpected exception above. {_REPORT}") from error
    raise _Failure(TypeError, "No comparison pair was able to handle inputs of type "
                   f"{type(actual)} and {type(expected)}.", id=id)


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, msg=None):
    r"""Asserts that ``actual`` and ``expected`` are close, as ``torch.testing.assert_close``.

    Tensors (and tensor-likes such as NumPy arrays) are close when they have the same shape
    (and, unless disabled, device, dtype, layout; stride with ``check_stride``) and
    ``|actual - expected| <= atol + rtol * |expected|`` elementwise; ``inf`` only equals
    itself and ``NaN`` equals ``NaN`` only with ``equal_nan``. Default ``rtol``/``atol``
    come from the dtypes (float16 1e-3/1e-5, bfloat16 1.6e-2/1e-5, float32 1.3e-6/1e-5,
    float64 1e-7/1e-7, complex like their float parts, others 0/0). Python scalars,
    sequences and mappings compare element by element. ``msg`` replaces the message (a
    str) or is called with it (a callable).
    """
    __tracebackhide__ = True
    try:
        pairs = _originate(actual, expected, allow_subclasses=allow_subclasses, rtol=rtol,
                           atol=atol, equal_nan=equal_nan, check_device=check_device,
                           check_dtype=check_dtype, check_layout=check_layout,
                           check_stride=check_stride)
    except _Failure as failure:
        raise failure.to_error() from None
    failures = []
    for pair in pairs:
        try:
            pair.compare()
        except _Failure as failure:
            failures.append(failure)
        except Exception as error:
            raise RuntimeError(f"Comparing\n\n{pair}\n\nresulted in the unexpected exception "
                               f"above. {_REPORT}") from error
    if failures:
        raise failures[0].to_error(msg)


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """Deprecated since torch 1.12: use :func:`assert_close`."""
    warnings.warn(
        "`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a "
        "future release. Please use `torch.testing.assert_close()` instead. You can find "
        "detailed upgrade instructions in https://github.com/pytorch/pytorch/issues/61844.",
        FutureWarning, stacklevel=2)
    if not isinstance(actual, _fw.Tensor):
        actual = _fw.tensor(actual)
    if not isinstance(expected, _fw.Tensor):
        expected = _fw.tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtol, atol = _default_tolerances(actual.dtype, expected.dtype, precisions={
            _fw.float16: (1e-3, 1e-3), _fw.float32: (1e-4, 1e-5), _fw.float64: (1e-5, 1e-8)})
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan,
                 check_device=True, check_dtype=False, check_stride=False, msg=msg or None)
