"""The float32 matmul precision (PyTorch's ``torch.set_float32_matmul_precision``).

"highest" (the default) multiplies float32 matrices in IEEE float32; "high" and "medium"
let the cuda GEMM kernel use TF32 tensor cores (10-bit mantissa inputs, float32
accumulation), as PyTorch does on CUDA. The CPU backend always computes in float32.
``framework.backends.cuda.matmul.allow_tf32`` reads and writes the same state."""
import warnings

_PRECISIONS = ("highest", "high", "medium")
_precision = "highest"


def get_float32_matmul_precision():
    """The current float32 matmul precision: "highest", "high" or "medium"."""
    return _precision


def set_float32_matmul_precision(precision):
    """Sets the float32 matmul precision ("highest", "high" or "medium"); another string
    only warns and changes nothing, as in PyTorch."""
    global _precision
    if not isinstance(precision, str):
        raise RuntimeError(f"set_float32_matmul_precision expects a str, but got "
                           f"{type(precision).__name__}")
    if precision not in _PRECISIONS:
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      f"setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _precision = precision


def allow_tf32():
    """Whether float32 GEMMs on cuda may use TF32."""
    return _precision != "highest"


# float32 convolutions' TF32 switch (PyTorch's torch.backends.cudnn.allow_tf32: on by
# default, apart from the matmul precision)
_conv_tf32 = True


def allow_conv_tf32():
    """Whether float32 convolutions on cuda may use TF32."""
    return _conv_tf32


def set_conv_tf32(value):
    global _conv_tf32
    _conv_tf32 = value
