"""The safetensors format (``safetensors.torch``'s API): a flat dict of named tensors.

A file is an 8-byte little-endian header length ``N``, a JSON header of ``N`` bytes
(padded with spaces to a multiple of 8) mapping each name to ``{"dtype", "shape",
"data_offsets": [begin, end]}`` (offsets into the data that follows) plus an optional
``"__metadata__"`` dict of strings, then the tensors' bytes, little-endian, row-major.
Tensors are laid out as the ``safetensors`` package lays them out (by dtype, larger first,
then by name), so that both write the same header for the same tensors.
"""
import contextlib
import ctypes
import json
import os
import struct

import numpy as np

from .. import _dtype
from .._device import CPU, device as _device
from .._storage import cpu_alloc
from .._tensor import Tensor

__all__ = ["SafetensorError", "save", "save_file", "load", "load_file", "safe_open"]

_NAMES = {
    _dtype.float64: "F64", _dtype.float32: "F32", _dtype.float16: "F16",
    _dtype.bfloat16: "BF16", _dtype.int64: "I64", _dtype.int32: "I32",
    _dtype.int16: "I16", _dtype.int8: "I8", _dtype.uint8: "U8", _dtype.bool: "BOOL",
    _dtype.float8_e4m3fn: "F8_E4M3", _dtype.float8_e5m2: "F8_E5M2",
    _dtype.float8_e4m3fnuz: "F8_E4M3FNUZ", _dtype.float8_e5m2fnuz: "F8_E5M2FNUZ",
}
_DTYPES = {v: k for k, v in _NAMES.items()}
# the order of the package's Dtype enum (restricted to ours): files sort by it, descending
_RANK = {n: i for i, n in enumerate(("BOOL", "U8", "I8", "F8_E5M2", "F8_E4M3", "F8_E4M3FNUZ",
                                     "F8_E5M2FNUZ", "I16", "F16", "BF16", "I32", "F32",
                                     "F64", "I64"))}
_KNOWN = ("BOOL", "F4", "F6_E2M3", "F6_E3M2", "U8", "I8", "F8_E5M2", "F8_E4M3", "F8_E8M0",
          "F8_E4M3FNUZ", "F8_E5M2FNUZ", "I16", "U16", "F16", "BF16", "I32", "U32", "F32",
          "C64", "F64", "I64", "U64")
_MAX_HEADER = 100_000_000


class SafetensorError(Exception):
    """A malformed safetensors file or buffer (the package's ``SafetensorError``)."""


def _host_view(t):
    """(uint8 view of a contiguous tensor's bytes on the host, owner to keep alive)."""
    n = t.numel() * t.dtype.itemsize
    if n == 0:
        return memoryview(b""), None
    st = t._storage
    if st.device.type != "cpu":
        t = t.cpu()
        st = t._storage
    ptr = st.ptr + t._offset * t.dtype.itemsize
    return memoryview((ctypes.c_char * n).from_address(ptr)).cast("B"), t


def _overlapping(tensors, names):
    """Groups of the tensors (of one storage) whose memory overlaps, as the package finds
    them: tensors over disjoint parts of one storage may be saved together."""
    areas = []
    for name in names:
        t = tensors[name]
        start = stop = t.data_ptr()
        if t.numel():      # one past the last element
            last = sum((n - 1) * st for n, st in zip(t.shape, t.stride()))
            stop = start + (last + 1) * t.dtype.itemsize
        areas.append((start, stop, name))
    areas.sort()
    _, last_stop, last = areas[0]
    groups = [{last}]
    for start, stop, name in areas[1:]:
        if start >= last_stop:
            groups.append({name})
        else:
            groups[-1].add(name)
        last_stop = stop
    return groups


def _prepare(tensors, metadata):
    """(header bytes, [(name, tensor)] in file order)."""
    if not isinstance(tensors, dict):
        raise ValueError(f"Expected a dict of [str, Tensor] but received {type(tensors)}")
    if metadata is not None:
        if not isinstance(metadata, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
            raise ValueError("metadata must be a dict of str to str")
    shared = {}
    for name, t in tensors.items():
        if not isinstance(name, str):
            raise ValueError(f"Expected a dict of [str, Tensor] but received a key {name!r}")
        if not isinstance(t, Tensor):
            raise ValueError(f"Key `{name}` is invalid, expected Tensor but received "
                             f"{type(t)}")
        if t.dtype not in _NAMES:
            raise ValueError(f"unsupported dtype {t.dtype} of tensor `{name}`")
        if t._storage.nbytes != 0:
            shared.setdefault(id(t._storage), []).append(name)
    groups = [g for names in shared.values() if len(names) > 1
              for g in _overlapping(tensors, names) if len(g) > 1]
    if groups:
        raise RuntimeError(
            f"\n            Some tensors share memory, this will lead to duplicate memory on "
            f"disk and potential differences when loading them again: {groups}.\n"
            f"            A potential way to correctly save your model is to use "
            f"`save_model`.\n            More information at "
            f"https://huggingface.co/docs/safetensors/torch_shared_tensors\n            ")
    for name, t in tensors.items():
        if not t.is_contiguous():
            raise ValueError(
                f"You are trying to save a non contiguous tensor: `{name}` which is not "
                f"allowed. It either means you are trying to save tensors which are reference "
                f"of each other in which case it's recommended to save only the full tensors, "
                f"and reslice at load time, or simply call `.contiguous()` on your tensor to "
                f"pack it before saving.")
    order = sorted(tensors.items(), key=lambda kv: (-_RANK[_NAMES[kv[1].dtype]], kv[0]))
    header = {}
    if metadata is not None:
        header["__metadata__"] = metadata
    pos = 0
    for name, t in order:
        n = t.numel() * t.dtype.itemsize
        header[name] = {"dtype": _NAMES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [pos, pos + n]}
        pos += n
    hb = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    hb += b" " * (-len(hb) % 8)
    return struct.pack("<Q", len(hb)) + hb, order


def _write(f, tensors, metadata):
    head, order = _prepare(tensors, metadata)
    f.write(head)
    for _, t in order:
        mv, keep = _host_view(t)
        if len(mv):
            f.write(mv)       # one write per tensor, straight from its memory
        del keep


def save(tensors, metadata=None):
    """The safetensors bytes of a dict of contiguous tensors that share no memory.

    Args:
        tensors (Dict[str, Tensor]): the tensors.
        metadata (Dict[str, str], optional): free text stored in the header.
    """
    import io
    buf = io.BytesIO()
    _write(buf, tensors, metadata)
    return buf.getvalue()


def save_file(tensors, filename, metadata=None):
    """Writes a dict of contiguous tensors that share no memory to ``filename``."""
    with open(filename, "wb") as f:
        _write(f, tensors, metadata)


# ---- reading ----------------------------------------------------------------------------

def _err(why):
    return SafetensorError(f"Error while deserializing: {why}")


def _parse_header(head, data_len):
    """Validates a decoded header against ``data_len`` bytes of data. Returns (metadata,
    {name: (dtype name, shape, begin, end)} in offset order)."""
    try:
        h = json.loads(head.decode("utf-8").rstrip(" "))
    except (UnicodeDecodeError, ValueError) as e:
        raise _err(f"invalid JSON in header: {e}") from None
    if not isinstance(h, dict):
        raise _err(f"invalid JSON in header: expected an object, got {type(h).__name__}")
    meta = h.pop("__metadata__", None)
    if meta is not None and not (isinstance(meta, dict) and all(
            isinstance(v, str) for v in meta.values())):
        raise _err("invalid JSON in header: __metadata__ must be a map of strings")
    entries = []
    for name, info in h.items():
        try:
            dt, shape, (begin, end) = info["dtype"], info["shape"], info["data_offsets"]
        except (KeyError, TypeError, ValueError):
            raise _err(f"invalid JSON in header: bad entry for tensor `{name}`") from None
        if dt not in _KNOWN:
            raise _err(f"invalid JSON in header: unknown dtype `{dt}`")
        if not (isinstance(shape, list) and all(type(s) is int and s >= 0 for s in shape)
                and type(begin) is int and type(end) is int and 0 <= begin <= end):
            raise _err(f"invalid shape, data type, or offset for tensor `{name}`")
        entries.append((begin, end, name, dt, tuple(shape)))
    entries.sort()
    pos = 0
    out = {}
    for begin, end, name, dt, shape in entries:
        if begin != pos:
            raise _err(f"invalid offset for tensor `{name}`")
        if dt not in _DTYPES:
            raise _err(f"dtype {dt} of tensor `{name}` is not supported by framework")
        n = _DTYPES[dt].itemsize
        for s in shape:
            n *= s
        if end - begin != n:
            raise _err("invalid shape, data type, or offset for tensor")
        out[name] = (dt, shape, begin, end)
        pos = end
    if pos != data_len:
        raise _err("incomplete metadata, file not fully covered")
    return meta, out


def _split(read_head, total):
    """(header length, header bytes) of a file or buffer of ``total`` bytes."""
    if total < 8:
        raise _err("header too small")
    (n,) = struct.unpack("<Q", read_head(0, 8))
    if n > _MAX_HEADER:
        raise _err("header too large")
    if 8 + n > total:
        raise _err("invalid header length")
    return n, read_head(8, n)


def _tensor(dt, shape, storage, device):
    from .._ops.alloc import contiguous_strides
    t = Tensor._make(storage, tuple(shape), contiguous_strides(tuple(shape)), 0, _DTYPES[dt])
    return t if device.type == "cpu" else t.to(device)


def load(data):
    """The dict of tensors in safetensors bytes (CPU tensors, copies of the data)."""
    buf = np.frombuffer(data, np.uint8)
    n, head = _split(lambda o, k: buf[o:o + k].tobytes(), len(buf))
    _, entries = _parse_header(head, len(buf) - 8 - n)
    base = 8 + n
    out = {}
    for name, (dt, shape, b, e) in entries.items():
        st = cpu_alloc(e - b)
        if e > b:
            ctypes.memmove(st.ptr, buf[base + b:].ctypes.data, e - b)
        out[name] = _tensor(dt, shape, st, CPU)
    return {k: out[k] for k in sorted(out)}


def _as_device(device):
    if isinstance(device, int):
        return _device("cuda", device)
    return _device(device)


def load_file(filename, device="cpu"):
    """The dict of tensors of a safetensors file, on ``device`` (``"cpu"``, ``"cuda:0"``,
    an int for a cuda index). Each tensor's bytes are read once, into its own memory."""
    dev = _as_device(device)
    with open(filename, "rb") as f:
        total = os.fstat(f.fileno()).st_size

        def read_head(o, k):
            f.seek(o)
            return f.read(k)
        n, head = _split(read_head, total)
        _, entries = _parse_header(head, total - 8 - n)
        out = {}
        f.seek(8 + n)
        for name, (dt, shape, b, e) in entries.items():   # offset order: one pass
            st = cpu_alloc(e - b)
            if e > b:
                mv = memoryview((ctypes.c_char * (e - b)).from_address(st.ptr)).cast("B")
                got = f.readinto(mv)
                if got != e - b:
                    raise _err("file truncated")
            out[name] = _tensor(dt, shape, st, dev)
    return {k: out[k] for k in sorted(out)}


class _Slice:
    """A lazily read tensor of a safe_open file (``get_slice``): ``get_shape()``,
    ``get_dtype()``, and indexing with ints and slices reads only what it needs."""

    def __init__(self, handle, name):
        self._h, self._name = handle, name
        self._dt, self._shape, _, _ = handle._entries[name]

    def get_shape(self):
        return list(self._shape)

    def get_dtype(self):
        return self._dt

    def __getitem__(self, index):
        arr = self._h._array(self._name)[index]
        return _from_array(np.ascontiguousarray(arr), self._dt, self._h._device)


def _from_array(arr, dt, device):
    st = cpu_alloc(arr.nbytes)
    if arr.nbytes:
        ctypes.memmove(st.ptr, arr.ctypes.data, arr.nbytes)
    return _tensor(dt, arr.shape, st, device)


class safe_open:
    """Opens a safetensors file for lazy reads (the file is memory-mapped; each
    ``get_tensor`` copies only that tensor's bytes). Use as a context manager::

        with safe_open("model.safetensors", framework="pt", device="cpu") as f:
            for k in f.keys():
                t = f.get_tensor(k)
    """

    def __init__(self, filename, framework="pt", device="cpu"):
        if framework not in ("pt", "torch", "framework", "np", "numpy"):
            raise SafetensorError(f"framework {framework} is not handled")
        self._device = _as_device(device)
        self._filename = os.fspath(filename)
        total = os.path.getsize(self._filename)
        with open(self._filename, "rb") as f:
            def read_head(o, k):
                f.seek(o)
                return f.read(k)
            n, head = _split(read_head, total)
        self._meta, self._entries = _parse_header(head, total - 8 - n)
        self._base = 8 + n
        self._mm = (np.memmap(self._filename, dtype=np.uint8, mode="r")
                    if total > self._base else np.empty(0, np.uint8))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        mm = getattr(self._mm, "_mmap", None)
        self._mm = None
        if mm is not None:
            with contextlib.suppress(BufferError):
                mm.close()

    def _check(self):
        if self._mm is None:
            raise SafetensorError("File is closed")

    def keys(self):
        """The tensor names, sorted."""
        self._check()
        return sorted(self._entries)

    def offset_keys(self):
        """The tensor names in the order of their data in the file."""
        self._check()
        return list(self._entries)

    def metadata(self):
        """The header's ``__metadata__`` dict, or None."""
        return None if self._meta is None else dict(self._meta)

    def _array(self, name):
        self._check()
        if name not in self._entries:
            raise SafetensorError(f"File does not contain tensor {name}")
        dt, shape, b, e = self._entries[name]
        raw = self._mm[self._base + b:self._base + e]
        return raw.view(_DTYPES[dt].np).reshape(shape)

    def get_tensor(self, name):
        """The tensor ``name``, read from the file now (a copy on ``device``)."""
        arr = self._array(name)
        return _from_array(arr, self._entries[name][0], self._device)

    def get_slice(self, name):
        """A lazy view of tensor ``name``: index it to read part of it."""
        self._array(name)
        return _Slice(self, name)

    def get_tensors(self):
        return {k: self.get_tensor(k) for k in self.keys()}
