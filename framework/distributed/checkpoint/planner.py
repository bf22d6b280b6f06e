"""Save and load planners (PyTorch's ``torch.distributed.checkpoint.planner`` and
``default_planner``).

Saving: each rank's ``create_local_plan`` lists a ``WriteItem`` per tensor chunk it holds
and per non-tensor value; the coordinator's ``create_global_plan`` drops the duplicates
(a replicated tensor or a value every rank holds is written once, by the lowest rank that
has it) and builds the ``Metadata``. Loading: each rank's ``create_local_plan`` lists a
``ReadItem`` for every overlap between a chunk its state dict needs and a chunk that was
saved, so a checkpoint loads into any world size and sharding (resharding)."""
import io
from dataclasses import dataclass
from enum import Enum, auto
from typing import Any, List, Optional

from ..._tensor import Size
from ._traverse import flatten_state_dict, local_chunk, set_element
from .metadata import (BytesStorageMetadata, ChunkStorageMetadata, Metadata, MetadataIndex,
                       TensorProperties, TensorStorageMetadata)

__all__ = ["WriteItemType", "LoadItemType", "TensorWriteData", "WriteItem", "ReadItem",
           "SavePlan", "LoadPlan", "SavePlanner", "LoadPlanner", "DefaultSavePlanner",
           "DefaultLoadPlanner"]


class WriteItemType(Enum):
    TENSOR = auto()
    SHARD = auto()
    BYTE_IO = auto()


class LoadItemType(Enum):
    TENSOR = auto()
    BYTE_IO = auto()


@dataclass(frozen=True)
class TensorWriteData:
    chunk: ChunkStorageMetadata
    properties: TensorProperties
    size: Any


@dataclass(frozen=True)
class WriteItem:
    """One item to write: a tensor chunk (``tensor_data`` says where it sits) or a value."""
    index: MetadataIndex
    type: WriteItemType
    tensor_data: Optional[TensorWriteData] = None

    def tensor_storage_size(self):
        """The chunk's size in bytes, or None for a non-tensor item."""
        if self.tensor_data is None:
            return None
        n = 1
        for s in self.tensor_data.chunk.sizes:
            n *= s
        return n * self.tensor_data.properties.dtype.itemsize


@dataclass(frozen=True)
class ReadItem:
    """Copy the block ``lengths`` at ``storage_offsets`` of the saved item
    ``storage_index`` to ``dest_offsets`` of the value ``dest_index``."""
    type: LoadItemType
    dest_index: MetadataIndex
    dest_offsets: Any
    storage_index: MetadataIndex
    storage_offsets: Any
    lengths: Any


@dataclass(frozen=True)
class SavePlan:
    items: List[WriteItem]
    storage_data: Any = None
    planner_data: Any = None
    usable: bool = True


@dataclass
class LoadPlan:
    items: List[ReadItem]
    storage_data: Any = None
    planner_data: Any = None


class SavePlanner:
    """The interface of a save planner: ``set_up_planner``, ``create_local_plan``,
    ``create_global_plan`` (coordinator only), ``finish_plan`` and ``resolve_data``."""

    def set_up_planner(self, state_dict, storage_meta=None, is_coordinator=False):
        raise NotImplementedError

    def create_local_plan(self):
        raise NotImplementedError

    def create_global_plan(self, all_plans):
        raise NotImplementedError

    def finish_plan(self, new_plan):
        raise NotImplementedError

    def resolve_data(self, write_item):
        """The data of ``write_item``: a tensor (its chunk), or a ``BytesIO``."""
        raise NotImplementedError


class LoadPlanner:
    """The interface of a load planner: ``set_up_planner``, ``create_local_plan``,
    ``create_global_plan``, ``finish_plan``, ``load_bytes``, ``resolve_tensor`` and
    ``commit_tensor``."""

    def set_up_planner(self, state_dict, metadata=None, is_coordinator=False):
        raise NotImplementedError

    def create_local_plan(self):
        raise NotImplementedError

    def create_global_plan(self, global_plan):
        raise NotImplementedError

    def finish_plan(self, central_plan):
        raise NotImplementedError

    def load_bytes(self, read_item, value):
        raise NotImplementedError

    def resolve_tensor(self, read_item):
        raise NotImplementedError

    def commit_tensor(self, read_item, tensor):
        raise NotImplementedError


def _properties(t):
    return TensorProperties(dtype=t.dtype, requires_grad=bool(t.requires_grad))


class DefaultSavePlanner(SavePlanner):
    """Writes every tensor chunk and value of the (flattened) state dict; replicated items
    once. ``dedup_save_to_lowest_rank`` is accepted for PyTorch compatibility (the lowest
    rank always writes here)."""

    def __init__(self, flatten_state_dict=True, flatten_sharded_tensors=True,
                 dedup_replicated_tensors=None, dedup_save_to_lowest_rank=False,
                 enable_plan_caching=False):
        self.flatten_state_dict = flatten_state_dict
        self.mappings = {}

    def set_up_planner(self, state_dict, storage_meta=None, is_coordinator=False):
        if self.flatten_state_dict:
            state_dict, self.mappings = flatten_state_dict(state_dict)
        self.state_dict = state_dict
        self.is_coordinator = is_coordinator
        self._chunks = {}

    def create_local_plan(self):
        items = []
        for fqn, value in self.state_dict.items():
            got = local_chunk(value)
            if got is None:
                items.append(WriteItem(MetadataIndex(fqn), WriteItemType.BYTE_IO))
                continue
            data, size, offsets, sharded = got
            if offsets is None:
                continue
            self._chunks[fqn] = data
            chunk = ChunkStorageMetadata(Size(offsets), Size(tuple(data.shape)))
            items.append(WriteItem(MetadataIndex(fqn, offsets),
                                   WriteItemType.SHARD if sharded else WriteItemType.TENSOR,
                                   TensorWriteData(chunk, _properties(value), Size(size))))
        self.plan = SavePlan(items)
        return self.plan

    def create_global_plan(self, all_plans):
        seen = set()
        plans = []
        for plan in all_plans:
            keep = []
            for item in plan.items:
                if item.index in seen:
                    continue
                seen.add(item.index)
                keep.append(item)
            plans.append(SavePlan(keep, plan.storage_data, plan.planner_data, plan.usable))
        md = {}
        for plan in plans:
            for item in plan.items:
                fqn = item.index.fqn
                if item.tensor_data is None:
                    md[fqn] = BytesStorageMetadata()
                    continue
                td = item.tensor_data
                entry = md.setdefault(fqn, TensorStorageMetadata(td.properties, td.size, []))
                if not isinstance(entry, TensorStorageMetadata) or entry.size != td.size:
                    raise ValueError(f"distributed checkpoint: the ranks disagree about "
                                     f"{fqn!r}: {entry} and {td}")
                entry.chunks.append(td.chunk)
        self.metadata = Metadata(md, planner_data=self.mappings)
        return plans, self.metadata

    def finish_plan(self, new_plan):
        self.plan = new_plan
        return new_plan

    def resolve_data(self, write_item):
        fqn = write_item.index.fqn
        if write_item.type is WriteItemType.BYTE_IO:
            from ...serialization import save
            buf = io.BytesIO()
            save(self.state_dict[fqn], buf)
            buf.seek(0)
            return buf
        return self._chunks[fqn]


def _overlaps(dest_offsets, dest_sizes, saved):
    """(dest offsets, saved-chunk offsets, lengths) of each overlap between the block
    ``dest`` of the global tensor and the saved chunks."""
    for chunk in saved:
        d_off, s_off, lengths = [], [], []
        for do, ds, so, ss in zip(dest_offsets, dest_sizes, chunk.offsets, chunk.sizes):
            lo, hi = max(do, so), min(do + ds, so + ss)
            if hi <= lo:
                break
            d_off.append(lo - do)
            s_off.append(lo - so)
            lengths.append(hi - lo)
        else:
            yield chunk, tuple(d_off), tuple(s_off), tuple(lengths)


class DefaultLoadPlanner(LoadPlanner):
    """Reads what each tensor chunk of the (flattened) state dict needs from the saved
    chunks that overlap it, and every non-tensor value; tensors are copied into in place.
    ``allow_partial_load``: keys missing from the checkpoint are left as they are instead
    of raising."""

    def __init__(self, flatten_state_dict=True, flatten_sharded_tensors=True,
                 allow_partial_load=False):
        self.flatten_state_dict = flatten_state_dict
        self.allow_partial_load = allow_partial_load
        self.mappings = {}

    def set_up_planner(self, state_dict, metadata=None, is_coordinator=False):
        self.original_state_dict = state_dict
        if self.flatten_state_dict:
            state_dict, self.mappings = flatten_state_dict(state_dict)
        self.state_dict = state_dict
        self.metadata = metadata
        self.is_coordinator = is_coordinator
        self._dest = {}

    def create_local_plan(self):
        items = []
        md = self.metadata.state_dict_metadata
        for fqn, value in self.state_dict.items():
            if fqn not in md:
                if self.allow_partial_load:
                    continue
                raise RuntimeError(f"Missing key in checkpoint state_dict: {fqn}.")
            saved = md[fqn]
            got = local_chunk(value)
            if isinstance(saved, BytesStorageMetadata):
                if got is not None:
                    raise RuntimeError(f"distributed checkpoint: {fqn!r} is a tensor in the "
                                       "state dict but was saved as a non-tensor value")
                items.append(ReadItem(LoadItemType.BYTE_IO, MetadataIndex(fqn), (0,),
                                      MetadataIndex(fqn), (0,), (0,)))
                continue
            if got is None:
                raise RuntimeError(f"distributed checkpoint: {fqn!r} was saved as a tensor "
                                   f"but the state dict holds {type(value).__name__}")
            data, size, offsets, _ = got
            if tuple(size) != tuple(saved.size):
                raise RuntimeError(
                    f"Size mismatch between saved {list(saved.size)} and current: "
                    f"{list(size)} for {fqn}")
            if offsets is None:
                continue
            self._dest[fqn] = data
            for chunk, d_off, s_off, lengths in _overlaps(offsets, tuple(data.shape),
                                                          saved.chunks):
                items.append(ReadItem(LoadItemType.TENSOR, MetadataIndex(fqn, offsets),
                                      d_off, MetadataIndex(fqn, chunk.offsets), s_off,
                                      lengths))
        return LoadPlan(items)

    def create_global_plan(self, global_plan):
        return global_plan

    def finish_plan(self, central_plan):
        return central_plan

    def load_bytes(self, read_item, value):
        from ...serialization import load
        fqn = read_item.dest_index.fqn
        obj = load(value, weights_only=True)
        self.state_dict[fqn] = obj
        if self.flatten_state_dict:
            set_element(self.original_state_dict, self.mappings[fqn], obj)

    def resolve_tensor(self, read_item):
        t = self._dest[read_item.dest_index.fqn]
        for d, (o, n) in enumerate(zip(read_item.dest_offsets, read_item.lengths)):
            t = t.narrow(d, o, n)
        return t

    def commit_tensor(self, read_item, tensor):
        """Called after ``tensor`` (from ``resolve_tensor``) was filled; the default
        planner's tensors are views of the destination, so nothing is left to do."""


def create_default_local_load_plan(state_dict, metadata, strict=True):
    planner = DefaultLoadPlanner(flatten_state_dict=False, allow_partial_load=not strict)
    planner.set_up_planner(state_dict, metadata)
    return planner.create_local_plan()
