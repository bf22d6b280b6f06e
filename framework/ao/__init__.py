"""``framework.ao``: quantization (observers, fake quantization, quantized tensors and
modules).

The quantized dtypes (``quint8``, ``qint8``, ``qint32``) and the quantization schemes
(``per_tensor_affine``, ...) are named sentinels here, exported at the top level under
PyTorch's spellings; a quantized tensor (``framework.ao._qtensor``) carries one as its dtype.
"""


class _Sentinel:
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "framework." + self.name

    def __reduce__(self):
        return (_lookup, (self.name,))

    # what code asks of a tensor's dtype (a quantized tensor carries one of these)
    is_floating_point = is_complex = False
    category, rank = 0, 0       # promotion reads these before the op refuses the tensor

    @property
    def itemsize(self):
        return 4 if self.name == "qint32" else 1

    @property
    def is_signed(self):
        raise RuntimeError("isSignedType not supported for quantized types")


def _lookup(name):
    return globals()[name]


quint8, qint8, qint32 = _Sentinel("quint8"), _Sentinel("qint8"), _Sentinel("qint32")
per_tensor_affine = _Sentinel("per_tensor_affine")
per_tensor_symmetric = _Sentinel("per_tensor_symmetric")
per_channel_affine = _Sentinel("per_channel_affine")
per_channel_symmetric = _Sentinel("per_channel_symmetric")
per_channel_affine_float_qparams = _Sentinel("per_channel_affine_float_qparams")

SENTINELS = ("quint8", "qint8", "qint32", "per_tensor_affine", "per_tensor_symmetric",
             "per_channel_affine", "per_channel_symmetric",
             "per_channel_affine_float_qparams")


def __getattr__(name):
    # framework.ao.quantization is imported on first use, as PyTorch does
    if name in ("quantization", "nn"):
        import importlib
        return importlib.import_module(__name__ + "." + name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
