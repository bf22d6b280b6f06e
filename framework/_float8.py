"""The float8 formats (PyTorch's float8_e4m3fn, float8_e5m2, float8_e4m3fnuz,
float8_e5m2fnuz): their bit layouts and the host-side conversions to and from float32.

The same rules are written three times, as integer bit manipulation: here in NumPy (host
values: tolist, item, printing, tensor()), in native/float8.h (the CPU copy) and in
framework/kernels/float8.py (the Triton copy). All three round to nearest even like
PyTorch's plain cast:
  - e4m3fn (no inf; NaN is S.1111.111): finite overflow and +-inf saturate to +-448.
  - e5m2 (IEEE-like): overflow rounds to +-inf.
  - *fnuz (no inf, no -0, one NaN 0x80): overflow and +-inf become NaN; -0 becomes 0.
"""
import numpy as np

# name: (exponent bits, mantissa bits, exponent bias, kind)
FORMATS = {
    "float8_e4m3fn": (4, 3, 7, "fn"),
    "float8_e5m2": (5, 2, 15, "ieee"),
    "float8_e4m3fnuz": (4, 3, 8, "fnuz"),
    "float8_e5m2fnuz": (5, 2, 16, "fnuz"),
}


def max_code(name):
    """The largest finite magnitude's code (e4m3fn: 0x7e = 448)."""
    e, m, _, kind = FORMATS[name]
    if kind == "fn":
        return 0x7E
    if kind == "ieee":
        return ((1 << e) - 1 << m) - 1
    return 0x7F


def decode_bits(codes, name):
    """float32 bit patterns (uint32) of float8 codes (any integer array)."""
    e, m, bias, kind = FORMATS[name]
    c = np.asarray(codes).astype(np.uint32) & 0xFF
    sign = (c >> 7) << 31
    ex = (c >> m) & ((1 << e) - 1)
    man = c & ((1 << m) - 1)
    normal = ((ex + (127 - bias)) << 23) | (man << (23 - m))
    # subnormal: man * 2**(1 - bias - m), exact in float32
    sub = (man.astype(np.float32) * np.float32(2.0 ** (1 - bias - m))).view(np.uint32)
    out = np.where(ex == 0, sub, normal)
    if kind == "ieee":
        # NaNs come out quiet, as PyTorch widens them (through float16)
        special = 0x7F800000 | (man << (23 - m)) | np.where(man != 0, 0x400000, 0)
        out = np.where(ex == (1 << e) - 1, special, out)
    elif kind == "fn":
        out = np.where((c & 0x7F) == 0x7F, 0x7F800000 | (man << (23 - m)), out)
    out = (out | sign).astype(np.uint32)
    if kind == "fnuz":   # 0x80 is the NaN (PyTorch widens it to the bits 0x7f800001)
        out = np.where(c == 0x80, np.uint32(0x7F800001), out).astype(np.uint32)
    return out


_TABLES = {}


def decode(codes, name):
    """float32 values of float8 codes (a 256-entry table lookup)."""
    table = _TABLES.get(name)
    if table is None:
        table = _TABLES[name] = decode_bits(np.arange(256), name).view(np.float32)
    return table[np.asarray(codes, dtype=np.uint8)]


def encode(values, name):
    """float8 codes (uint8) of values, converted to float32 first as PyTorch does."""
    e, m, bias, kind = FORMATS[name]
    with np.errstate(over="ignore"):
        b = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    sign = (b >> 31).astype(np.uint32)
    a = b & np.uint32(0x7FFFFFFF)
    with np.errstate(over="ignore", invalid="ignore"):
        # below the smallest normal: one float add rounds to the subnormal step
        magic = np.float32(2.0 ** (24 - bias - m))
        sub = (a.view(np.float32) + magic).view(np.uint32) - magic.view(np.uint32)
        shift = 23 - m
        odd = (a >> shift) & 1
        rebias = np.int64(bias - 127) << 23
        normal = ((a.astype(np.int64) + rebias + (1 << (shift - 1)) - 1 + odd) >> shift)
    r = np.where(a < ((128 - bias) << 23), sub.astype(np.int64), normal)
    top = max_code(name)
    over = (r > top) | (a == 0x7F800000)
    nan = a > 0x7F800000
    if kind == "fn":
        r = np.where(over, top, r)
        r = np.where(nan, 0x7F, r) | (sign << 7)
    elif kind == "ieee":
        r = np.where(over, 0x7C, r)
        r = np.where(nan, 0x7F, r) | (sign << 7)
    else:
        r = np.where(r == 0, 0, r | (sign << 7))
        r = np.where(over | nan, 0x80, r)
    return r.astype(np.uint8)


def fits(value, name):
    """Whether a Python number converts to the format without overflow, as PyTorch checks
    a fill value: NaN fits, inf only e5m2 (the one format with infinities), finite values
    within +-max."""
    if value != value:
        return True
    if value in (np.inf, -np.inf):
        return FORMATS[name][3] == "ieee"
    top = float(decode(max_code(name), name))
    return -top <= value <= top
