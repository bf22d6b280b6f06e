"""Distributed checkpointing (PyTorch's ``torch.distributed.checkpoint``): ``save`` and
``load`` of state dicts whose tensors may be sharded over ranks (DTensors, FSDP shards),
each rank writing its own chunks and reading back the chunks it needs, whatever the world
size and sharding at save time; ``async_save``; the planners and the file-system storage;
``state_dict`` (model and optimizer state dicts across FSDP's sharding) and
``format_utils`` (to and from a ``framework.save`` file).

The checkpoint files are not PyTorch's: ``.metadata`` is JSON and non-tensor values are
``framework.save`` bytes loaded with ``weights_only=True``, so loading runs no code."""
from . import state_dict  # noqa: F401
from .api import CheckpointException
from .filesystem import FileSystemReader, FileSystemWriter
from .metadata import (BytesStorageMetadata, ChunkStorageMetadata, Metadata, MetadataIndex,
                       TensorStorageMetadata)
from .planner import (DefaultLoadPlanner, DefaultSavePlanner, LoadPlan, LoadPlanner, ReadItem,
                      SavePlan, SavePlanner, WriteItem)
from .state_dict_loader import load, load_state_dict
from .state_dict_saver import async_save, save, save_state_dict
from .stateful import Stateful
from .storage import StorageReader, StorageWriter
from . import format_utils  # noqa: F401

__all__ = ["save", "load", "async_save", "save_state_dict", "load_state_dict",
           "FileSystemWriter", "FileSystemReader", "StorageWriter", "StorageReader",
           "Metadata", "MetadataIndex", "TensorStorageMetadata", "BytesStorageMetadata",
           "ChunkStorageMetadata", "DefaultSavePlanner", "DefaultLoadPlanner", "SavePlanner",
           "LoadPlanner", "SavePlan", "LoadPlan", "WriteItem", "ReadItem",
           "CheckpointException", "Stateful"]
