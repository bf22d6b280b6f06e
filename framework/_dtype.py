"""dtypes and PyTorch's type promotion rules."""
import numpy as np

__all__ = [
    "dtype", "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
    "float32", "float64", "complex64", "complex128", "cfloat", "cdouble", "half", "float",
    "double", "short", "int", "long",
    "get_default_dtype", "set_default_dtype", "promote_types", "result_type", "can_cast",
    "finfo", "iinfo", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
]

_builtin_bool, _builtin_int, _builtin_float, _builtin_complex = bool, int, float, complex


class dtype:
    """A tensor element type. ``str(framework.float32) == "framework.float32"``; Triton reads
    the text after the last dot to pick the pointer type."""

    __slots__ = ("name", "code", "itemsize", "is_floating_point", "is_complex", "is_signed", "np",
                 "category", "rank", "triton_name", "scalar_name", "_real", "is_float8")

    def __init__(self, name, code, itemsize, category, rank, np_dtype, signed, triton_name,
                 scalar_name):
        self.name = name
        self.code = code                # dtype code shared with native/common.h
        self.itemsize = itemsize
        self.category = category        # 0 bool, 1 integer, 2 floating, 3 complex
        self.rank = rank                # order within the category for promotion
        self.is_floating_point = category == 2
        self.is_complex = category == 3
        self._real = self
        self.is_signed = signed
        self.np = np_dtype              # NumPy dtype used for I/O (bfloat16: uint16 bits)
        self.triton_name = triton_name
        self.scalar_name = scalar_name  # PyTorch's ScalarType name, used in error messages
        self.is_float8 = name.startswith("float8")  # storage only: see framework/_float8.py

    @property
    def itemsize_bits(self):
        return self.itemsize * 8

    def to_real(self):
        """The real dtype of a complex dtype's parts (complex64: float32); others: itself."""
        return self._real

    def to_complex(self):
        """The complex dtype whose parts are this floating dtype (float32: complex64)."""
        if self.is_complex:
            return self
        if self is float64:
            return complex128
        if self.is_floating_point:
            return complex64
        raise RuntimeError(f"to_complex is not supported for {self}")

    def __repr__(self):
        return "framework." + self.name

    __str__ = __repr__

    def __reduce__(self):
        return (_by_name, (self.name,))


bool = dtype("bool", 0, 1, 0, 0, np.dtype(np.bool_), False, "int1", "Bool")
uint8 = dtype("uint8", 1, 1, 1, 1, np.dtype(np.uint8), False, "uint8", "Byte")
int8 = dtype("int8", 2, 1, 1, 1, np.dtype(np.int8), True, "int8", "Char")
int16 = dtype("int16", 3, 2, 1, 2, np.dtype(np.int16), True, "int16", "Short")
int32 = dtype("int32", 4, 4, 1, 3, np.dtype(np.int32), True, "int32", "Int")
int64 = dtype("int64", 5, 8, 1, 4, np.dtype(np.int64), True, "int64", "Long")
float16 = dtype("float16", 6, 2, 2, 1, np.dtype(np.float16), True, "fp16", "Half")
bfloat16 = dtype("bfloat16", 7, 2, 2, 1, np.dtype(np.uint16), True, "bf16", "BFloat16")
float32 = dtype("float32", 8, 4, 2, 2, np.dtype(np.float32), True, "fp32", "Float")
float64 = dtype("float64", 9, 8, 2, 3, np.dtype(np.float64), True, "fp64", "Double")
# complex dtypes: kernels never see them; framework/_ops/complex_ops.py computes on the
# float32/float64 view of (real, imag) pairs (view_as_real)
complex64 = dtype("complex64", 10, 8, 3, 1, np.dtype(np.complex64), True, "complex64",
                  "ComplexFloat")
complex128 = dtype("complex128", 11, 16, 3, 2, np.dtype(np.complex128), True, "complex128",
                   "ComplexDouble")
complex64._real, complex128._real = float32, float64
cfloat, cdouble = complex64, complex128
# float8: stored as bytes (NumPy sees uint8); only copies, casts and views run on them,
# as in PyTorch (framework/_float8.py)
float8_e4m3fn = dtype("float8_e4m3fn", 12, 1, 2, 0, np.dtype(np.uint8), True, "fp8e4nv",
                      "Float8_e4m3fn")
float8_e5m2 = dtype("float8_e5m2", 13, 1, 2, 0, np.dtype(np.uint8), True, "fp8e5",
                    "Float8_e5m2")
float8_e4m3fnuz = dtype("float8_e4m3fnuz", 14, 1, 2, 0, np.dtype(np.uint8), True, "fp8e4b8",
                        "Float8_e4m3fnuz")
float8_e5m2fnuz = dtype("float8_e5m2fnuz", 15, 1, 2, 0, np.dtype(np.uint8), True, "fp8e5b16",
                        "Float8_e5m2fnuz")
FLOAT8 = (float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz)

half, float, double = float16, float32, float64
short, int, long = int16, int32, int64

ALL = (bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, complex64,
       complex128) + FLOAT8
BY_CODE = ALL
_NAMES = {d.name: d for d in ALL}
_FROM_NP = {np.dtype(np.bool_): bool, np.dtype(np.uint8): uint8, np.dtype(np.int8): int8,
            np.dtype(np.int16): int16, np.dtype(np.int32): int32, np.dtype(np.int64): int64,
            np.dtype(np.float16): float16, np.dtype(np.float32): float32,
            np.dtype(np.float64): float64, np.dtype(np.complex64): complex64,
            np.dtype(np.complex128): complex128}


def _by_name(name):
    return _NAMES[name]


def from_numpy_dtype(npd):
    try:
        return _FROM_NP[np.dtype(npd)]
    except KeyError:
        if not np.dtype(npd).isnative:
            raise ValueError("given numpy array has byte order different from the native byte "
                             "order. Conversion between byte orders is currently not "
                             "supported.") from None
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{np.dtype(npd).type.__name__}. The only "
            "supported types are: "
            "float64, float32, float16, complex64, complex128, int64, int32, int16, int8, uint8, "
            "and bool.") from None


_default_float = float32


def get_default_dtype():
    """The dtype of floating tensors made from Python floats (float32 unless changed)."""
    return _default_float


def set_default_dtype(d):
    """Sets the default floating dtype; only floating dtypes are accepted, as in PyTorch."""
    global _default_float
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _default_float = d


def _promote(a, b):
    if a is b:
        return a
    if a.category == 3 or b.category == 3:
        if a.category < 2 or b.category < 2:
            return a if a.category == 3 else b
        # complex with floating or complex: the complex dtype whose parts hold both
        # (complex64 + float64 = complex128)
        return _promote(a.to_real(), b.to_real()).to_complex()
    if a.category != b.category:
        return a if a.category > b.category else b
    if a.category == 2:
        if {a, b} == {float16, bfloat16}:
            return float32
        return a if a.rank > b.rank else b
    if a.category == 1:
        if a is uint8 or b is uint8:
            other = b if a is uint8 else a
            return int16 if other is int8 else other
        return a if a.rank > b.rank else b
    return a


class _PromoteTable(dict):
    """(dtype, dtype) -> promoted dtype; a float8 dtype promotes with nothing but itself."""

    def __missing__(self, key):
        a, b = key
        raise RuntimeError("Promotion for Float8 Types is not supported, attempted to "
                           f"promote {a.scalar_name} and {b.scalar_name}")


_PROMOTE = _PromoteTable({(a, b): _promote(a, b) for a in ALL for b in ALL
                          if a is b or not (a.is_float8 or b.is_float8)})


def promote_types(type1, type2):
    """The smallest dtype to which both dtypes can be cast (PyTorch's promotion lattice)."""
    return _PROMOTE[(type1, type2)]


def scalar_category(x):
    """Category of a Python scalar: 0 bool, 1 int, 2 float, 3 complex."""
    t = type(x)
    if t is _builtin_bool:
        return 0
    if t is _builtin_int:
        return 1
    if t is _builtin_float:
        return 2
    if isinstance(x, (np.bool_,)):
        return 0
    if isinstance(x, np.integer):
        return 1
    if isinstance(x, np.floating):
        return 2
    if t is _builtin_complex or isinstance(x, np.complexfloating):
        return 3
    raise TypeError(f"expected a number, got {type(x).__name__}")


def default_for_category(cat):
    if cat == 3:
        return _default_float.to_complex()
    return (bool, int64, _default_float)[cat]


def result_type_of(dim_dtypes, zerodim_dtypes, scalar_cats):
    """PyTorch's result type: dimensioned tensors beat 0-d tensors, which beat Python
    scalars, unless the lower-priority group is of a higher category (bool < int < float)."""
    state = None
    for d in dim_dtypes:
        state = d if state is None else _PROMOTE[(state, d)]
    zd = None
    for d in zerodim_dtypes:
        zd = d if zd is None else _PROMOTE[(zd, d)]
    if zd is not None:
        if state is None or zd.category > state.category:
            state = _combine(state, zd)
    if scalar_cats:
        cat = max(scalar_cats)
        if state is None or cat > state.category:
            state = _combine(state, default_for_category(cat))
    return state


def _combine(higher, lower):
    """A lower-priority dtype of a higher category over ``higher`` (PyTorch's
    combine_categories): complex over a floating dtype keeps its precision (a float64
    tensor times 1j is complex128), else the lower one wins."""
    if lower.category == 3 and higher is not None and higher.category == 2:
        return higher.to_complex()
    return lower


def result_type(tensor1, tensor2):
    """The dtype an arithmetic op on the two arguments (tensors or numbers) would produce."""
    from ._tensor import Tensor
    dims, zeros, cats = [], [], []
    for t in (tensor1, tensor2):
        if isinstance(t, Tensor):
            (dims if t.dim() else zeros).append(t.dtype)
        else:
            cats.append(scalar_category(t))
    return result_type_of(dims, zeros, cats)


def can_cast(from_, to):
    """Whether PyTorch's in-place rules allow casting ``from_`` into ``to`` (no lowering of
    category: float to int and int to bool are refused)."""
    return from_.category <= to.category


class finfo:
    """Machine limits of a floating dtype (of the parts, for a complex dtype)."""

    def __init__(self, type=None):
        type = (type or _default_float).to_real()
        if not type.is_floating_point:
            raise TypeError(f"finfo expects a floating point dtype, got {type}")
        if type.is_float8:
            # PyTorch's numeric_limits (its e5m2fnuz eps is 2**-3, not 2**-2)
            self.bits, self.resolution = 8, 1.0
            self.eps, self.max, self.tiny = _FLOAT8_LIMITS[type.name]
        elif type is bfloat16:
            self.bits, self.eps, self.max, self.tiny = 16, 2.0 ** -7, 3.3895313892515355e38, 2.0 ** -126
            self.resolution = 0.01
        else:
            fi = np.finfo(type.np)
            self.bits, self.eps, self.max = fi.bits, _builtin_float(fi.eps), _builtin_float(fi.max)
            self.tiny, self.resolution = _builtin_float(fi.tiny), _builtin_float(fi.resolution)
        self.min = -self.max
        self.smallest_normal = self.tiny
        self.dtype = type.name


_FLOAT8_LIMITS = {"float8_e4m3fn": (0.125, 448.0, 2.0 ** -6),
                  "float8_e5m2": (0.25, 57344.0, 2.0 ** -14),
                  "float8_e4m3fnuz": (0.125, 240.0, 2.0 ** -7),
                  "float8_e5m2fnuz": (0.125, 57344.0, 2.0 ** -15)}


class iinfo:
    """Machine limits of an integer dtype."""

    def __init__(self, type):
        if type.category > 1:
            raise TypeError(f"iinfo expects an integer dtype, got {type}")
        ii = np.iinfo(type.np) if type is not bool else None
        self.bits = type.itemsize * 8
        self.min = _builtin_int(ii.min) if ii else 0
        self.max = _builtin_int(ii.max) if ii else 1
        self.dtype = type.name
