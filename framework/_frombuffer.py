"""``framework.frombuffer`` and ``framework.from_file``: CPU tensors over the memory of a
Python buffer object or of a file (PyTorch's ``torch.frombuffer`` / ``torch.from_file``)."""
import os
import warnings

import numpy as np

from . import _dtype

__all__ = ["frombuffer", "from_file"]

_warned_readonly = False


def _np_dtype(dtype):
    """The NumPy dtype whose bytes a framework dtype reads (bfloat16: as int16, then
    reinterpreted)."""
    if dtype == _dtype.bfloat16:
        return np.dtype(np.int16)
    for npd, d in _dtype._FROM_NP.items():
        if d == dtype:
            return npd
    raise TypeError(f"frombuffer: unsupported dtype {dtype}")


def _wrap(arr, dtype):
    from ._ops import creation
    t = creation.from_numpy(arr)
    if dtype == _dtype.bfloat16:
        t = t.view(dtype)
    return t


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    r"""frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False) -> Tensor

    Creates a 1-dimensional :class:`Tensor` from an object that implements the Python
    buffer protocol. The returned tensor and the buffer share the same memory:
    modifications to the tensor are reflected in the buffer and vice versa. The returned
    tensor is not resizable.

    Args:
        buffer (object): a Python object that exposes the buffer interface.
        dtype (:class:`framework.dtype`): the desired data type of returned tensor.
        count (int, optional): the number of desired elements to be read. If negative,
            all the elements (until the end of the buffer) will be read. Default: -1.
        offset (int, optional): the number of bytes to skip at the start of the buffer.
            Default: 0.
        requires_grad (bool, optional): If autograd should record operations on the
            returned tensor. Default: ``False``.
    """
    global _warned_readonly
    if not isinstance(dtype, _dtype.dtype):
        raise TypeError(f"frombuffer(): argument 'dtype' must be torch.dtype, not "
                        f"{type(dtype).__name__}")
    try:
        mv = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    length = mv.nbytes
    elsize = dtype.itemsize
    if length <= 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if offset < 0 or offset >= length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({length} bytes) minus 1")
    if count < 0:
        if (length - offset) % elsize != 0:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} "
                             f"bytes) must be a multiple of element size ({elsize})")
        actual_count = (length - offset) // elsize
    else:
        actual_count = count
    if offset + actual_count * elsize > length:
        raise ValueError(f"requested buffer length ({actual_count} * {elsize} bytes) after "
                         f"offset ({offset} bytes) must not be greater than actual buffer "
                         f"length ({length} bytes)")
    if mv.readonly and not _warned_readonly:
        _warned_readonly = True
        warnings.warn(
            "The given buffer is not writable, and PyTorch does not support non-writable "
            "tensors. This means you can write to the underlying (supposedly non-writable) "
            "buffer using the tensor. You may want to copy the buffer to protect its data or "
            "make it writable before converting it to a tensor. This type of warning will be "
            "suppressed for the rest of this program.", UserWarning, stacklevel=2)
    # the bytes, whatever the buffer's own format (array.array('i'), memoryview slices...)
    raw = mv.cast("B") if (mv.format != "B" or mv.ndim != 1) and mv.c_contiguous else mv
    arr = np.frombuffer(raw, dtype=_np_dtype(dtype), count=actual_count, offset=offset)
    t = _wrap(arr, dtype)
    if requires_grad:
        t.requires_grad_(True)
    return t


def from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None,
              pin_memory=False):
    r"""from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None,
    pin_memory=False)

    Creates a CPU tensor with a storage backed by a memory-mapped file.

    If ``shared`` is True, then memory is shared between processes. All changes are written
    to the file (which is created, or extended with zeros, to hold ``size`` elements). If
    ``shared`` is False, then changes to the tensor do not affect the file.

    ``size`` is the number of elements in the Tensor. If ``shared`` is ``False``, then the
    file must contain at least ``size * sizeof(dtype)`` bytes.

    Args:
        filename (str): file name to map
        shared (bool): whether to share memory (whether ``MAP_SHARED`` or ``MAP_PRIVATE``
            is passed to the underlying mmap)
        size (int): number of elements in the tensor
        dtype (:class:`framework.dtype`, optional): default: the default dtype.
    """
    from ._device import device as _device_cls
    if dtype is None:
        dtype = _dtype.get_default_dtype()
    if device is not None and _device_cls(device).type != "cpu":
        raise RuntimeError("from_file: only CPU tensors can be backed by a file")
    filename = os.fspath(filename)
    nbytes = size * dtype.itemsize
    if size < 0:
        raise RuntimeError(f"unable to mmap {nbytes} bytes from file <{filename}>: Cannot "
                           f"allocate memory (12)")
    npd = _np_dtype(dtype)
    if shared:
        if not os.path.exists(filename):
            open(filename, "wb").close()
        if os.path.getsize(filename) < nbytes:
            with open(filename, "r+b") as f:
                f.truncate(nbytes)
        if size == 0:
            arr = np.empty(0, dtype=npd)
        else:
            arr = np.memmap(filename, dtype=npd, mode="r+", shape=(size,))
    else:
        try:
            fsize = os.path.getsize(filename)
        except OSError as e:
            raise RuntimeError(f"unable to open file <{filename}> in read-only mode: "
                               f"{e.strerror} ({e.errno})") from None
        if fsize < nbytes:
            raise RuntimeError(f"file <{filename}> size <{fsize}> is smaller than the required "
                               f"mapping size <{nbytes}>")
        if size == 0:
            arr = np.empty(0, dtype=npd)
        else:
            # copy-on-write: the tensor can be written, the file is left alone
            arr = np.memmap(filename, dtype=npd, mode="c", shape=(size,))
    t = _wrap(arr, dtype)
    if pin_memory:
        t = t.pin_memory()
    return t
