"""``framework.ao.nn.intrinsic``: the fused module containers that ``fuse_modules`` builds
(a convolution or linear layer followed by its ReLU, kept in one ``Sequential``)."""
from ....nn import (BatchNorm2d, BatchNorm3d, Conv1d, Conv2d, Conv3d, Linear, ReLU,
                    Sequential)

__all__ = ["ConvReLU1d", "ConvReLU2d", "ConvReLU3d", "LinearReLU", "BNReLU2d", "BNReLU3d"]


class _FusedModule(Sequential):
    _types = ()

    def __init__(self, *mods):
        if tuple(type(m) for m in mods) != self._types:
            raise AssertionError(
                f"Incorrect types for input modules{tuple(type(m).__name__ for m in mods)}")
        super().__init__(*mods)


def _fused(name, first):
    return type(name, (_FusedModule,), {
        "_types": (first, ReLU),
        "__doc__": f"A ``{first.__name__}`` followed by ``ReLU``, as one module.",
        "__module__": __name__})


ConvReLU1d = _fused("ConvReLU1d", Conv1d)
ConvReLU2d = _fused("ConvReLU2d", Conv2d)
ConvReLU3d = _fused("ConvReLU3d", Conv3d)
LinearReLU = _fused("LinearReLU", Linear)
BNReLU2d = _fused("BNReLU2d", BatchNorm2d)
BNReLU3d = _fused("BNReLU3d", BatchNorm3d)
