"""Converting between a distributed checkpoint and a ``framework.save`` file (PyTorch's
``torch.distributed.checkpoint.format_utils``)."""
import os

from ..._ops import creation
from .filesystem import FileSystemReader, FileSystemWriter
from .metadata import TensorStorageMetadata
from .state_dict_loader import _load_state_dict
from .state_dict_saver import _save_state_dict

__all__ = ["dcp_to_torch_save", "torch_save_to_dcp"]


def _put(root, path, value):
    """Sets ``value`` at ``path`` of the nested ``root``, making the dicts and lists on the
    way (an int key: a list index)."""
    obj = root
    for i, p in enumerate(path[:-1]):
        nxt = path[i + 1]
        if isinstance(obj, list):
            while len(obj) <= p:
                obj.append(None)
            if obj[p] is None:
                obj[p] = [] if isinstance(nxt, int) else {}
            obj = obj[p]
        else:
            obj = obj.setdefault(p, [] if isinstance(nxt, int) else {})
    if isinstance(obj, list):
        while len(obj) <= path[-1]:
            obj.append(None)
    obj[path[-1]] = value


def dcp_to_torch_save(dcp_checkpoint_dir, torch_save_path):
    """Loads the distributed checkpoint in ``dcp_checkpoint_dir`` whole (one process) and
    writes it with ``framework.save`` to ``torch_save_path``."""
    from ...serialization import save
    reader = FileSystemReader(dcp_checkpoint_dir)
    metadata = reader.read_metadata()
    mappings = metadata.planner_data or {}
    sd = {}
    for fqn, md in metadata.state_dict_metadata.items():
        value = creation.empty(tuple(md.size), dtype=md.properties.dtype) \
            if isinstance(md, TensorStorageMetadata) else None
        _put(sd, tuple(mappings.get(fqn, [fqn])), value)
    _load_state_dict(sd, reader, None, True, None)
    save(sd, os.fspath(torch_save_path))


def torch_save_to_dcp(torch_save_path, dcp_checkpoint_dir):
    """Loads ``torch_save_path`` (a dict saved with ``framework.save``, loaded with
    ``weights_only=True``) and saves it as a distributed checkpoint (one process)."""
    from ...serialization import load
    sd = load(os.fspath(torch_save_path), weights_only=True)
    if not isinstance(sd, dict):
        raise TypeError(f"torch_save_to_dcp: {torch_save_path} holds a "
                        f"{type(sd).__name__}, not a state dict")
    _save_state_dict(sd, FileSystemWriter(dcp_checkpoint_dir), None, True, None)
