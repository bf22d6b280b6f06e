"""``default_collate`` (a list of samples to a batch) and ``default_convert`` (one sample's
NumPy arrays to tensors), with PyTorch's rules for nested containers."""
import collections.abc
import copy
import re

from . import _worker

__all__ = ["default_collate", "default_convert", "collate", "default_collate_fn_map"]

np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = ("default_collate: batch must contain tensors, numpy arrays, "
                                  "numbers, dicts or lists; found {}")


def _tensor_type():
    from ..._tensor import Tensor
    return Tensor


def _is_numpy(obj):
    t = type(obj)
    return t.__module__ == "numpy" and t.__name__ not in ("str_", "string_")


def _is_namedtuple(obj):
    return isinstance(obj, tuple) and hasattr(obj, "_fields")


def default_convert(data):
    """Converts NumPy arrays and scalars inside ``data`` to tensors, keeping tensors, and
    rebuilding mappings, namedtuples and sequences (tuples become lists, as in PyTorch).
    Everything else is returned unchanged. Used when automatic batching is off."""
    from ..._ops.creation import as_tensor
    if isinstance(data, _tensor_type()):
        return data
    if _is_numpy(data):
        # arrays of strings or objects have no tensor equivalent
        if (type(data).__name__ == "ndarray"
                and np_str_obj_array_pattern.search(data.dtype.str) is not None):
            return data
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update({key: default_convert(data[key]) for key in data})
                return clone
            return type(data)({key: default_convert(data[key]) for key in data})
        except TypeError:
            return {key: default_convert(data[key]) for key in data}
    if _is_namedtuple(data):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                for i, d in enumerate(data):
                    clone[i] = default_convert(d)
                return clone
            return type(data)([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def collate(batch, *, collate_fn_map=None):
    """Collates ``batch`` (a sequence of samples of the same structure): element types found
    in ``collate_fn_map`` (exact type first, then ``isinstance``) are collated by their
    function; mappings, namedtuples and sequences are collated field by field."""
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                clone = copy.copy(elem)
                clone.update({key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map)
                              for key in elem})
                return clone
            return elem_type({key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map)
                              for key in elem})
        except TypeError:
            # the mapping type may not take a dict in its constructor
            return {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map)
                    for key in elem}
    if _is_namedtuple(elem):
        return elem_type(*(collate(samples, collate_fn_map=collate_fn_map)
                           for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone = copy.copy(elem)
                for i, samples in enumerate(transposed):
                    clone[i] = collate(samples, collate_fn_map=collate_fn_map)
                return clone
            return elem_type([collate(samples, collate_fn_map=collate_fn_map)
                              for samples in transposed])
        except TypeError:
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def _shared_out(elem, n):
    """In a worker process, an uninitialised CPU batch tensor in shared memory, so that the
    batch crosses to the main process by handle instead of by pickled bytes; else None."""
    if _worker.get_worker_info() is None or elem.device.type != "cpu":
        return None
    try:
        from ..._shared_memory import empty_shared
    except ImportError:
        return None
    return empty_shared((n,) + tuple(elem.shape), elem.dtype)


def collate_tensor_fn(batch, *, collate_fn_map=None):
    from ..._ops.shape import stack
    elem = batch[0]
    out = _shared_out(elem, len(batch))
    if out is not None:
        return stack(batch, 0, out=out)
    return stack(batch, 0)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    from ..._ops.creation import as_tensor
    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return collate([as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    from ..._ops.creation import as_tensor
    return as_tensor(batch)


def collate_float_fn(batch, *, collate_fn_map=None):
    from ..._ops.creation import tensor
    from ... import _dtype
    return tensor(batch, dtype=_dtype.float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    # bools are ints: a batch of bools gives a bool tensor, as torch.tensor does
    from ..._ops.creation import tensor
    return tensor(batch)


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map = {_tensor_type(): collate_tensor_fn}
try:
    import numpy as _np
except ImportError:  # NumPy is optional
    _np = None
if _np is not None:
    default_collate_fn_map[_np.ndarray] = collate_numpy_array_fn
    # NumPy scalars (np.str_ and np.bytes_ are not among these: they stay a list)
    default_collate_fn_map[(_np.bool_, _np.number, _np.object_)] = collate_numpy_scalar_fn
default_collate_fn_map[float] = collate_float_fn
default_collate_fn_map[int] = collate_int_fn
default_collate_fn_map[str] = collate_str_fn
default_collate_fn_map[bytes] = collate_str_fn


def default_collate(batch):
    """Collates a list of samples into a batch, keeping the structure of a sample:

    * tensors are stacked on a new first dimension (in a worker process, into shared memory);
    * NumPy arrays become stacked tensors and NumPy scalars a 1-d tensor;
    * Python floats a float64 tensor, ints an int64 tensor, bools a bool tensor;
    * strings and bytes stay a list;
    * mappings, namedtuples and sequences are collated field by field (tuples become lists).
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)
