"""``FileSystemWriter`` and ``FileSystemReader`` (PyTorch's
``torch.distributed.checkpoint.filesystem``): a checkpoint is a directory holding
``.metadata`` (JSON, see ``metadata``) and one ``__<rank>_0.distcp`` file per writing rank,
in which each tensor chunk is its raw bytes (C order, little-endian as the host) and each
non-tensor value the bytes of ``framework.save``, loaded back with ``weights_only=True``.
The files are not PyTorch's (theirs pickle the metadata); use ``format_utils`` to convert
to and from a ``framework.save`` file."""
import io
import os
from dataclasses import dataclass

from ...futures import Future
from ...autograd import grad_mode
from .metadata import Metadata
from .planner import LoadItemType
from .storage import StorageReader, StorageWriter, WriteResult

__all__ = ["FileSystemWriter", "FileSystemReader"]

_METADATA = ".metadata"
_SUFFIX = ".distcp"


@dataclass(frozen=True)
class _StorageInfo:
    """Where an item lies: file (relative to the checkpoint directory), offset, length."""
    relative_path: str
    offset: int
    length: int


@dataclass(frozen=True)
class _StoragePrefix:
    prefix: str


def _done(value):
    fut = Future()
    fut.set_result(value)
    return fut


def _tensor_bytes(t):
    """A host array of the bytes of tensor ``t`` (C order)."""
    from ... import _dtype
    t = t.detach()
    if t.device.type != "cpu":
        t = t.cpu()
    return t.contiguous().reshape(-1).view(_dtype.uint8).numpy()


def _tensor_from(data, dtype, sizes):
    from ..._frombuffer import frombuffer
    from ..._ops import creation
    if len(data) == 0:
        return creation.empty(tuple(sizes), dtype=dtype)
    return frombuffer(bytearray(data), dtype=dtype).reshape(tuple(sizes))


def _as_path(checkpoint_id):
    return os.fspath(checkpoint_id)


class FileSystemWriter(StorageWriter):
    """Writes a checkpoint into directory ``path`` (created if missing). ``sync_files``:
    fsync every file; the other options are accepted for PyTorch compatibility (one file
    per rank, one writing thread)."""

    def __init__(self, path, single_file_per_rank=True, sync_files=True, thread_count=1,
                 per_thread_copy_ahead=10_000_000, cache_staged_state_dict=False,
                 overwrite=True, **kwargs):
        self.path = _as_path(path)
        self.sync_files = sync_files
        self.overwrite = overwrite

    def reset(self, checkpoint_id=None):
        if checkpoint_id is not None:
            self.path = _as_path(checkpoint_id)

    def set_up_storage_writer(self, is_coordinator, *args, **kwargs):
        self.is_coordinator = is_coordinator

    def prepare_local_plan(self, plan):
        os.makedirs(self.path, exist_ok=True)
        return plan

    def prepare_global_plan(self, plans):
        from dataclasses import replace
        return [replace(p, storage_data=_StoragePrefix(f"__{i}_")) for i, p in enumerate(plans)]

    def write_data(self, plan, planner):
        name = plan.storage_data.prefix + "0" + _SUFFIX
        if not self.overwrite and os.path.exists(os.path.join(self.path, name)):
            raise RuntimeError(f"FileSystemWriter: {os.path.join(self.path, name)} exists "
                               "and overwrite is False")
        results, pos = [], 0
        with open(os.path.join(self.path, name), "wb") as f:
            for item in plan.items:
                data = planner.resolve_data(item)
                raw = data.getbuffer() if isinstance(data, io.BytesIO) else _tensor_bytes(data)
                f.write(raw)
                n = raw.nbytes
                results.append(WriteResult(item.index, n, _StorageInfo(name, pos, n)))
                pos += n
            if self.sync_files:
                f.flush()
                os.fsync(f.fileno())
        return _done(results)

    def finish(self, metadata, results):
        storage = {}
        for rank_results in results:
            for r in rank_results:
                storage[r.index] = r.storage_data
        metadata.storage_data = storage
        tmp = os.path.join(self.path, _METADATA + ".tmp")
        with open(tmp, "w") as f:
            f.write(metadata.to_json())
            if self.sync_files:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, os.path.join(self.path, _METADATA))

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id):
        return isinstance(checkpoint_id, (str, os.PathLike))


class FileSystemReader(StorageReader):
    """Reads a checkpoint that ``FileSystemWriter`` wrote into directory ``path``."""

    def __init__(self, path, _extension_registry=None):
        self.path = _as_path(path)
        self.storage_data = {}

    def reset(self, checkpoint_id=None):
        self.storage_data = {}
        if checkpoint_id is not None:
            self.path = _as_path(checkpoint_id)

    def read_metadata(self):
        name = os.path.join(self.path, _METADATA)
        if not os.path.exists(name):
            raise FileNotFoundError(f"no distributed checkpoint at {self.path!r}: {name} is "
                                    "missing")
        with open(name) as f:
            return Metadata.from_json(f.read())

    def set_up_storage_reader(self, metadata, is_coordinator, *args, **kwargs):
        self.storage_data = metadata.storage_data
        self.metadata = metadata

    def prepare_local_plan(self, plan):
        return plan

    def prepare_global_plan(self, plans):
        return plans

    def _read(self, info, files):
        if os.path.basename(info.relative_path) != info.relative_path:
            # the metadata names files of this directory only
            raise ValueError(f"FileSystemReader: bad file name {info.relative_path!r} in "
                             f"{os.path.join(self.path, _METADATA)}")
        f = files.get(info.relative_path)
        if f is None:
            f = files[info.relative_path] = open(os.path.join(self.path, info.relative_path),
                                                 "rb")
        f.seek(info.offset)
        data = f.read(info.length)
        if len(data) != info.length:
            raise RuntimeError(f"FileSystemReader: {info.relative_path} is truncated (wanted "
                               f"{info.length} bytes at {info.offset}, got {len(data)})")
        return data

    def read_data(self, plan, planner):
        md = self.metadata.state_dict_metadata
        files, chunks = {}, {}
        try:
            for item in plan.items:
                info = self.storage_data[item.storage_index]
                if item.type is LoadItemType.BYTE_IO:
                    planner.load_bytes(item, io.BytesIO(self._read(info, files)))
                    continue
                src = chunks.get(item.storage_index)
                if src is None:
                    tmd = md[item.storage_index.fqn]
                    sizes = next(c.sizes for c in tmd.chunks
                                 if tuple(c.offsets) == item.storage_index.offset)
                    src = _tensor_from(self._read(info, files), tmd.properties.dtype, sizes)
                    chunks = {item.storage_index: src}     # items come chunk by chunk
                for d, (o, n) in enumerate(zip(item.storage_offsets, item.lengths)):
                    src = src.narrow(d, o, n)
                dest = planner.resolve_tensor(item)
                if tuple(dest.shape) != tuple(src.shape):
                    raise RuntimeError(f"FileSystemReader: read item {item.storage_index} of "
                                       f"shape {list(src.shape)} does not fit its "
                                       f"destination of shape {list(dest.shape)}")
                with grad_mode.no_grad():
                    dest.copy_(src)
                planner.commit_tensor(item, dest)
        finally:
            for f in files.values():
                f.close()
        return _done(None)

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id):
        return isinstance(checkpoint_id, (str, os.PathLike))
