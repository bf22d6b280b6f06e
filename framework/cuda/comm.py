"""Copies of tensors across a list of GPUs (PyTorch's ``torch.cuda.comm``, which is
``torch.nn.parallel.comm``): broadcast, scatter, gather and sums, for single-process
multi-GPU code such as ``DataParallel``. Device to device copies go through the framework's
``to``; there is no NCCL path (with one process the copies are what NCCL would do)."""
import warnings

__all__ = ["broadcast", "broadcast_coalesced", "reduce_add", "reduce_add_coalesced",
           "scatter", "gather"]


def _index(d, allow_cpu=False, optional=False):
    """A device argument as a cuda index (-1: the cpu, where ``allow_cpu``)."""
    from .._device import device as _dev
    from . import _device_index
    if allow_cpu and (d == "cpu" or (isinstance(d, _dev) and d.type == "cpu")):
        return -1
    if isinstance(d, int) and allow_cpu and d == -1:
        return -1
    return _device_index(d, optional=optional)


def _on(index):
    return "cpu" if index == -1 else f"cuda:{index}"


def _to(t, index):
    return t.to(_on(index), copy=True)


def broadcast(tensor, devices=None, *, out=None):
    """Broadcasts a tensor to the specified GPU devices: a tuple of copies of ``tensor``,
    one on each of ``devices``, or the ``out`` tensors filled with it."""
    if not ((devices is None) ^ (out is None)):
        raise RuntimeError("Exactly one of 'devices' and 'out' must be specified, but got "
                           f"devices={devices} and out={out}")
    if devices is not None:
        return tuple(_to(tensor, _index(d)) for d in devices)
    for i, o in enumerate(out):
        if o.device.type != "cuda":
            raise RuntimeError(f"Expected all output tensors to be CUDA tensors, but output "
                               f"tensor at index {i} has device '{o.device}'")
        if tuple(o.shape) != tuple(tensor.shape):
            raise RuntimeError(f"Expected all output tensors to have same shape as the source "
                               f"tensor {list(tensor.shape)}, but output tensor at index {i} "
                               f"has shape {list(o.shape)}")
        o.copy_(tensor)
    return tuple(out)


def broadcast_coalesced(tensors, devices, buffer_size=10485760):
    """Broadcasts a sequence of tensors to the specified GPUs: one tuple of copies per
    device (``buffer_size``, the size of PyTorch's coalescing buffer, changes nothing
    here: each tensor is one copy)."""
    devices = [_index(d) for d in devices]
    return [tuple(_to(t, d) for t in tensors) for d in devices]


def reduce_add(inputs, destination=None):
    """Sums tensors from multiple GPUs into a tensor on ``destination`` (default: the
    current device), which must hold one of them."""
    destination = _index(destination, optional=True)
    input_size = tuple(inputs[0].shape)
    root_index = None
    for i, inp in enumerate(inputs):
        if inp.device.type == "cpu":
            raise AssertionError(
                f"reduce_add expects all inputs to be on GPUs, but input {i} is on CPU")
        if inp.get_device() == destination:
            root_index = i
        if tuple(inp.shape) != input_size:
            got = "x".join(str(x) for x in inp.shape)
            expected = "x".join(str(x) for x in input_size)
            raise ValueError(f"input {i} has invalid size: got {got}, but expected {expected}")
    if root_index is None:
        raise RuntimeError(
            "reduce_add expects destination to be on the same GPU with one of the tensors")
    if len(inputs) == 1:
        return inputs[0]
    nonroot = [t for i, t in enumerate(inputs) if i != root_index]
    result = inputs[root_index] + nonroot[0].to(_on(destination))
    for other in nonroot[1:]:
        result.add_(other.to(_on(destination)))
    return result


def reduce_add_coalesced(inputs, destination=None, buffer_size=10485760):
    """Sums tensors from multiple GPUs: ``inputs[g]`` are the tensors of GPU ``g``; returns
    one sum per position, on ``destination``."""
    if len({len(t) for t in inputs}) > 1:
        raise ValueError("zip() argument 2 is shorter than argument 1")
    return tuple(reduce_add(list(ts), destination) for ts in zip(*inputs))


def scatter(tensor, devices=None, chunk_sizes=None, dim=0, streams=None, *, out=None):
    """Scatters ``tensor`` across GPUs: chunks along ``dim`` (of ``chunk_sizes``, else as
    equal as ``chunk`` makes them), one on each of ``devices``, or into the ``out``
    tensors. ``streams`` is accepted; the copies run on the current stream."""
    if out is None:
        devices = [_index(d) for d in devices]
        if chunk_sizes is None:
            parts = tensor.chunk(len(devices), dim)
        else:
            chunk_sizes = list(chunk_sizes)
            if len(chunk_sizes) != len(devices):
                raise RuntimeError(f"Expected devices and chunk_sizes to be of same length, "
                                   f"but got len(devices) = {len(devices)} and "
                                   f"len(chunk_sizes) = {len(chunk_sizes)}")
            if sum(chunk_sizes) != tensor.shape[dim]:
                raise RuntimeError(f"Expected chunk sizes {chunk_sizes} to sum to "
                                   f"{tensor.shape[dim]} (=tensor.size({dim}))")
            parts = tensor.split(chunk_sizes, dim)
        return tuple(_to(p.contiguous(), d) for p, d in zip(parts, devices))
    if devices is not None:
        raise RuntimeError("'devices' must not be specified when 'out' is specified, but got "
                           f"devices={devices}")
    if chunk_sizes is not None:
        raise RuntimeError("'chunk_sizes' must not be specified when 'out' is specified, but "
                           f"got chunk_sizes={chunk_sizes}")
    sizes = [o.shape[dim] for o in out]
    if sum(sizes) != tensor.shape[dim]:
        raise RuntimeError(f"Expected chunk sizes {sizes} to sum to {tensor.shape[dim]} "
                           f"(=tensor.size({dim}))")
    for o, p in zip(out, tensor.split(sizes, dim)):
        o.copy_(p)
    return tuple(out)


def gather(tensors, dim=0, destination=None, *, out=None):
    """Gathers tensors from multiple GPUs: their concatenation along ``dim`` on
    ``destination`` (cpu or cuda; default: the current device), or into ``out``."""
    from .._ops import shape as _shape
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("Expected at least one tensor to gather from")
    if out is None:
        if destination == -1:
            warnings.warn('Using -1 to represent CPU tensor is deprecated. Please use a '
                          'device object or string instead, e.g., "cpu".', FutureWarning,
                          stacklevel=2)
        destination = _index(destination, allow_cpu=True, optional=True)
        return _shape.cat([t.to(_on(destination)) for t in tensors], dim)
    if destination is not None:
        raise RuntimeError("'destination' must not be specified when 'out' is specified, but "
                           f"got destination={destination}")
    out.copy_(_shape.cat([t.to(out.device) for t in tensors], dim))
    return out
