"""``DataParallel``: PyTorch's single-process wrapper that splits each batch across the
GPUs of the machine.

Without a cuda device it only wraps the module (``forward`` calls it directly). With one
device it moves the module there, moves each input there, and calls it: PyTorch's
behaviour. With several devices PyTorch scatters the batch, runs a replica per GPU and
gathers the outputs on ``output_device``; here the whole batch runs on ``device_ids[0]``
(no replicas: the same outputs and gradients as one device, with the batch statistics of
BatchNorm layers over the whole batch rather than per replica) and the outputs are
gathered on ``output_device``; a warning says so once. For real multi-GPU data
parallelism use :class:`framework.nn.parallel.DistributedDataParallel`.
"""
import warnings
from itertools import chain

import framework as fw

from .module import Module

__all__ = ["DataParallel"]


def _device_index(device):
    """An int index from an int, a ``"cuda:i"`` string or a device (PyTorch's
    ``_get_device_index(device, optional=True)``)."""
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = fw.device(device)
    if isinstance(device, fw.device):
        if device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        return fw.cuda.current_device() if device.index is None else device.index
    raise ValueError(f"Expected a torch.device with a specified index or an integer, but got:"
                     f"{device}")


def _to_device(obj, device):
    """``obj`` with every tensor inside (tuples, lists, dicts) moved to ``device``."""
    if isinstance(obj, fw.Tensor):
        return obj.to(device)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):      # namedtuple
        return type(obj)(*(_to_device(o, device) for o in obj))
    if isinstance(obj, (tuple, list)):
        return type(obj)(_to_device(o, device) for o in obj)
    if isinstance(obj, dict):
        return type(obj)((k, _to_device(v, device)) for k, v in obj.items())
    return obj


_MULTI_WARNED = False


class DataParallel(Module):
    r"""Implements data parallelism at the module level (PyTorch's
    ``torch.nn.DataParallel``).

    Args:
        module (Module): module to be parallelized
        device_ids (list of int or device): cuda devices (default: all devices)
        output_device (int or device): device of the output (default: ``device_ids[0]``)
        dim (int): the dimension the batch is split along. Default: 0

    The wrapped module is ``self.module``, so the state dict keys start with ``module.``.
    With several devices the batch is not split (see the module docstring).
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        if not fw.cuda.is_available():
            self.module = module
            self.device_ids = []
            return
        if device_ids is None:
            device_ids = list(range(fw.cuda.device_count()))
        if device_ids is None:
            raise RuntimeError("no available devices were found")
        if output_device is None:
            output_device = device_ids[0]
        self.dim = dim
        self.module = module
        self.device_ids = [_device_index(x) for x in device_ids]
        self.output_device = _device_index(output_device)
        self.src_device_obj = fw.device("cuda", self.device_ids[0])
        if len(self.device_ids) == 1:
            self.module.to(self.src_device_obj)

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        for t in chain(self.module.parameters(), self.module.buffers()):
            if t.device != self.src_device_obj:
                raise RuntimeError("module must have its parameters and buffers on device "
                                   f"{self.src_device_obj} (device_ids[0]) but found one of "
                                   f"them on device: {t.device}")
        inputs = _to_device(inputs, self.src_device_obj)
        kwargs = _to_device(kwargs, self.src_device_obj)
        if len(self.device_ids) == 1:
            return self.module(*inputs, **kwargs)
        global _MULTI_WARNED
        if not _MULTI_WARNED:
            _MULTI_WARNED = True
            warnings.warn("framework's DataParallel runs the whole batch on device_ids[0] "
                          "(no replicas on the other devices); use "
                          "framework.nn.parallel.DistributedDataParallel to train on several "
                          "GPUs", stacklevel=2)
        outputs = self.module(*inputs, **kwargs)
        return _to_device(outputs, fw.device("cuda", self.output_device))
