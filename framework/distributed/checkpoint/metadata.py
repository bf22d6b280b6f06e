"""What a checkpoint holds (PyTorch's ``torch.distributed.checkpoint.metadata``): for each
flattened key either a tensor (its global size and the chunks saved, each at its global
offsets) or a non-tensor value (bytes), plus where the storage keeps each item.

The ``.metadata`` file is JSON (``Metadata.to_json``/``from_json``), not a pickle as in
PyTorch: reading a checkpoint never runs code from it. Files are not interchangeable with
PyTorch's."""
import json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

__all__ = ["ChunkStorageMetadata", "TensorProperties", "TensorStorageMetadata",
           "BytesStorageMetadata", "MetadataIndex", "StorageMeta", "Metadata"]


@dataclass
class ChunkStorageMetadata:
    """One saved chunk of a tensor: its ``offsets`` in the global tensor and its ``sizes``."""
    offsets: Any
    sizes: Any


@dataclass
class TensorProperties:
    """The dtype (and, for PyTorch compatibility, layout and memory flags) of a tensor."""
    dtype: Any = None
    layout: Any = None
    requires_grad: bool = False
    memory_format: Any = None
    pin_memory: bool = False


@dataclass
class TensorStorageMetadata:
    """A tensor of global ``size`` saved as ``chunks``."""
    properties: TensorProperties
    size: Any
    chunks: List[ChunkStorageMetadata]


@dataclass
class BytesStorageMetadata:
    """A non-tensor value, saved as the bytes of ``framework.save``."""


@dataclass(frozen=True)
class MetadataIndex:
    """Names one item: the flattened key ``fqn``, and for a tensor chunk its ``offset``
    (``index`` is a hint into the chunk list)."""
    fqn: str
    offset: Optional[tuple] = None
    index: Optional[int] = field(hash=False, compare=False, default=None)

    def __post_init__(self):
        if self.offset is not None:
            object.__setattr__(self, "offset", tuple(int(o) for o in self.offset))


@dataclass
class StorageMeta:
    checkpoint_id: Any = None
    save_id: Optional[str] = None
    load_id: Optional[str] = None


@dataclass
class Metadata:
    """The checkpoint's table: ``state_dict_metadata`` maps each flattened key to its
    ``TensorStorageMetadata`` or ``BytesStorageMetadata``; ``storage_data`` is the storage
    layer's (for the file system: ``MetadataIndex`` -> file, offset, length)."""
    state_dict_metadata: Dict[str, Any]
    planner_data: Any = None
    storage_data: Any = None
    storage_meta: Optional[StorageMeta] = None
    version: Optional[str] = None

    def to_json(self):
        """The metadata as JSON text (``storage_data`` must be the file system's)."""
        entries = {}
        for fqn, md in self.state_dict_metadata.items():
            if isinstance(md, BytesStorageMetadata):
                entries[fqn] = {"type": "bytes"}
            else:
                entries[fqn] = {"type": "tensor", "dtype": str(md.properties.dtype),
                                "requires_grad": bool(md.properties.requires_grad),
                                "size": list(md.size),
                                "chunks": [[list(c.offsets), list(c.sizes)]
                                           for c in md.chunks]}
        storage = None
        if self.storage_data is not None:
            storage = [[i.fqn, None if i.offset is None else list(i.offset),
                        s.relative_path, s.offset, s.length]
                       for i, s in self.storage_data.items()]
        return json.dumps({"version": self.version or "1", "state_dict_metadata": entries,
                           "planner_data": _jsonable(self.planner_data),
                           "storage_data": storage})

    @classmethod
    def from_json(cls, text):
        from ... import _dtype
        from .filesystem import _StorageInfo
        raw = json.loads(text)
        sdm = {}
        for fqn, e in raw["state_dict_metadata"].items():
            if e["type"] == "bytes":
                sdm[fqn] = BytesStorageMetadata()
                continue
            name = e["dtype"].rsplit(".", 1)[-1]
            dtype = getattr(_dtype, name, None)
            if not isinstance(dtype, _dtype.dtype):
                raise ValueError(f"checkpoint metadata: unknown dtype {e['dtype']!r} for {fqn}")
            sdm[fqn] = TensorStorageMetadata(
                TensorProperties(dtype=dtype, requires_grad=e["requires_grad"]),
                _size(e["size"]),
                [ChunkStorageMetadata(_size(o), _size(s)) for o, s in e["chunks"]])
        storage = None
        if raw.get("storage_data") is not None:
            storage = {MetadataIndex(fqn, None if off is None else tuple(off)):
                       _StorageInfo(path, int(o), int(n))
                       for fqn, off, path, o, n in raw["storage_data"]}
        return cls(sdm, planner_data=raw.get("planner_data"), storage_data=storage,
                   version=raw.get("version"))


def _size(seq):
    from ..._tensor import Size
    return Size(tuple(int(s) for s in seq))


def _jsonable(x):
    """``planner_data`` as JSON can hold it (the flattening mappings: key paths)."""
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if x is None or isinstance(x, (str, int, float, bool)):
        return x
    return str(x)
