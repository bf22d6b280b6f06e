"""Converting convolution weights to a memory format (PyTorch's
``torch.nn.utils.memory_format``)."""
import framework as _fw

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module, memory_format, classes):
    if isinstance(module, classes):
        # a dense copy in the requested layout; the Parameter object stays (optimizers
        # hold it), its data is replaced. (PyTorch also calls resize_(size, memory_format)
        # on the copy to settle the strides of size-1 dims; clone already gives them.)
        module.weight.data = module.weight.detach().clone(memory_format=memory_format)
    for child in module.children():
        _convert(child, memory_format, classes)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    r"""Converts the weight of every ``nn.Conv2d`` and ``nn.ConvTranspose2d`` in ``module``
    (itself included, recursively) to ``memory_format`` (``framework.channels_last`` or
    ``framework.contiguous_format``), leaving other layers alone. Only the layout changes,
    not the meaning of the dims. Returns ``module``."""
    return _convert(module, memory_format, (_fw.nn.Conv2d, _fw.nn.ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    r"""Converts the weight of every ``nn.Conv3d`` and ``nn.ConvTranspose3d`` in ``module``
    (itself included, recursively) to ``memory_format`` (``framework.channels_last_3d`` or
    ``framework.contiguous_format``). Returns ``module``."""
    return _convert(module, memory_format, (_fw.nn.Conv3d, _fw.nn.ConvTranspose3d))
