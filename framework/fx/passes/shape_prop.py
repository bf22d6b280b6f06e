"""``ShapeProp``: runs a ``GraphModule`` and records each node's tensor metadata in
``node.meta['tensor_meta']`` (torch.fx.passes.shape_prop)."""
from typing import NamedTuple

from ..._tensor import Tensor
from ..interpreter import Interpreter
from ..node import map_aggregate


class TensorMetadata(NamedTuple):
    shape: object
    dtype: object
    requires_grad: bool
    stride: tuple
    memory_format: object
    is_quantized: bool
    qparams: dict


def _extract_tensor_metadata(result):
    import framework
    memory_format = None
    for fmt in (framework.contiguous_format, framework.channels_last):
        if result.is_contiguous(memory_format=fmt):
            memory_format = fmt
            break
    return TensorMetadata(result.shape, result.dtype, result.requires_grad, result.stride(),
                          memory_format, False, {})


class ShapeProp(Interpreter):
    """Runs the module on example inputs (``propagate(*args)``) and stores, for each node
    that yields tensors, their ``TensorMetadata`` (shape, dtype, requires_grad, stride,
    memory format) in ``node.meta['tensor_meta']`` and the value's type in
    ``node.meta['type']``."""

    def __init__(self, gm, fake_mode=None):
        super().__init__(gm)

    def run_node(self, n):
        result = super().run_node(n)
        found = [False]

        def extract(obj):
            if isinstance(obj, Tensor):
                found[0] = True
                return _extract_tensor_metadata(obj)
            return obj
        meta = map_aggregate(result, extract)
        if found[0]:
            n.meta["tensor_meta"] = meta
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args):
        """Runs the module on ``args``, filling in the metadata; returns its result."""
        return super().run(*args)
