"""framework.backends.cuda: ``matmul.allow_tf32`` (PyTorch's ``torch.backends.cuda``)."""
from .. import _matmul_precision


class _CuBLASModule:
    """``matmul.allow_tf32``: True when float32 GEMMs may use TF32; setting it is
    ``set_float32_matmul_precision("high" if value else "highest")``, as in PyTorch."""

    def __getattr__(self, name):
        if name == "allow_tf32":
            return _matmul_precision.allow_tf32()
        raise AttributeError(f"Unknown attribute {name}")

    def __setattr__(self, name, value):
        if name != "allow_tf32":
            raise AttributeError(f"Unknown attribute {name}")
        if not isinstance(value, bool):
            raise RuntimeError(f"set_allow_tf32_cublas expects a bool, but got "
                               f"{type(value).__name__}")
        _matmul_precision.set_float32_matmul_precision("high" if value else "highest")


matmul = _CuBLASModule()
