"""The storage layer's interface (PyTorch's ``torch.distributed.checkpoint.storage``):
``StorageWriter`` and ``StorageReader``, which ``save``/``load`` drive in this order::

    writer.reset(checkpoint_id); writer.set_up_storage_writer(is_coordinator)
    writer.prepare_local_plan(plan); writer.prepare_global_plan(plans)  # coordinator
    writer.write_data(plan, planner).wait() -> [WriteResult]; writer.finish(metadata, results)

    reader.reset(checkpoint_id); reader.read_metadata()
    reader.set_up_storage_reader(metadata, is_coordinator)
    reader.prepare_local_plan(plan); reader.prepare_global_plan(plans)
    reader.read_data(plan, planner).wait()
"""
from dataclasses import dataclass
from typing import Any

from .metadata import MetadataIndex

__all__ = ["WriteResult", "StorageWriter", "StorageReader"]


@dataclass(frozen=True)
class WriteResult:
    """Where ``index`` was written: ``storage_data`` is the writer's own record."""
    index: MetadataIndex
    size_in_bytes: int
    storage_data: Any


class StorageWriter:
    """Writes the items of a save plan and the metadata (subclass it for another store)."""

    def reset(self, checkpoint_id=None):
        raise NotImplementedError

    def set_up_storage_writer(self, is_coordinator, *args, **kwargs):
        raise NotImplementedError

    def prepare_local_plan(self, plan):
        raise NotImplementedError

    def prepare_global_plan(self, plans):
        raise NotImplementedError

    def write_data(self, plan, planner):
        """Writes ``plan``'s items (their data from ``planner.resolve_data``); returns a
        future of the list of ``WriteResult``."""
        raise NotImplementedError

    def finish(self, metadata, results):
        """Coordinator only: records ``metadata`` with every rank's ``results``."""
        raise NotImplementedError

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id):
        raise NotImplementedError

    def storage_meta(self):
        return None


class StorageReader:
    """Reads the metadata and the items of a load plan (subclass it for another store)."""

    def reset(self, checkpoint_id=None):
        raise NotImplementedError

    def read_metadata(self):
        raise NotImplementedError

    def set_up_storage_reader(self, metadata, is_coordinator, *args, **kwargs):
        raise NotImplementedError

    def prepare_local_plan(self, plan):
        raise NotImplementedError

    def prepare_global_plan(self, plans):
        raise NotImplementedError

    def read_data(self, plan, planner):
        """Reads ``plan``'s items, handing each to ``planner`` (``load_bytes``, or
        ``resolve_tensor`` + copy + ``commit_tensor``); returns a future of None."""
        raise NotImplementedError

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id):
        raise NotImplementedError
