"""``save``, ``async_save`` and the deprecated ``save_state_dict`` (PyTorch's
``torch.distributed.checkpoint.state_dict_saver``)."""
import concurrent.futures
import warnings

from .api import _DistWrapper
from .filesystem import FileSystemWriter
from .planner import DefaultSavePlanner
from .stateful import _to_state_dict

__all__ = ["save", "async_save", "save_state_dict"]

_EXECUTOR = []


def _use_dist(process_group, no_dist, what="save"):
    from ..process_group import is_initialized
    if no_dist:
        return False
    if not is_initialized():
        warnings.warn("framework.distributed is disabled, unavailable or uninitialized, "
                      f"assuming the intent is to {what} in a single process.", UserWarning,
                      stacklevel=4)
        return False
    return True


def _writer(storage_writer, checkpoint_id):
    if storage_writer is not None:
        return storage_writer
    if checkpoint_id is None:
        raise RuntimeError("`checkpoint_id` must be specified if storage_writer is None.")
    return FileSystemWriter(checkpoint_id)


def save(state_dict, *, checkpoint_id=None, storage_writer=None, planner=None,
         process_group=None, no_dist=False, use_collectives=True):
    """Saves ``state_dict`` (nested dicts of tensors, DTensors, FSDP shards and other
    values) as a distributed checkpoint: every rank calls it and writes its own shards,
    replicated items are written once. Without an initialized process group (or with
    ``no_dist=True``) it saves as a single process. Returns the ``Metadata``.

    ``checkpoint_id`` is the directory (for the default ``FileSystemWriter``). Top-level
    ``Stateful`` values are saved as their ``state_dict()``. The files are this
    framework's, not PyTorch's. ``use_collectives`` is accepted for PyTorch compatibility
    (the ranks always coordinate through collectives)."""
    if not isinstance(state_dict, dict):
        raise TypeError(f"save: state_dict must be a dict, got {type(state_dict).__name__}")
    writer = _writer(storage_writer, checkpoint_id)
    return _save_state_dict(_to_state_dict(state_dict), writer, process_group, no_dist, planner,
                            checkpoint_id)


def _save_state_dict(state_dict, writer, process_group, no_dist, planner, checkpoint_id=None,
                     coordinator_rank=0):
    dist = _DistWrapper(process_group, _use_dist(process_group, no_dist), coordinator_rank)
    planner = planner if planner is not None else DefaultSavePlanner()
    writer.reset(checkpoint_id)
    holder = {}

    def local_step():
        writer.set_up_storage_writer(dist.is_coordinator)
        planner.set_up_planner(state_dict, writer.storage_meta(), dist.is_coordinator)
        return writer.prepare_local_plan(planner.create_local_plan())

    def global_step(all_plans):
        plans, holder["metadata"] = planner.create_global_plan(all_plans)
        return writer.prepare_global_plan(plans)

    central = dist.reduce_scatter("plan", local_step, global_step)

    def write_data():
        plan = planner.finish_plan(central)
        return writer.write_data(plan, planner).wait()

    def finish(all_results):
        writer.finish(holder["metadata"], all_results)
        return holder["metadata"]

    return dist.all_reduce("write", write_data, finish)


def save_state_dict(state_dict, storage_writer, process_group=None, coordinator_rank=0,
                    no_dist=False, planner=None):
    """Deprecated: use ``save``."""
    warnings.warn("'save_state_dict' is deprecated and will be removed in future versions."
                  "Please use 'save' instead.", FutureWarning, stacklevel=2)
    storage_writer.reset()
    return _save_state_dict(state_dict, storage_writer, process_group, no_dist, planner,
                            coordinator_rank=coordinator_rank)


def _stage(obj):
    """A copy of the state dict whose tensors live on the cpu and belong to it (what the
    background save writes while training goes on)."""
    from ..._tensor import Tensor
    from ._traverse import StagedChunk, local_chunk
    if isinstance(obj, Tensor):
        got = local_chunk(obj)
        return StagedChunk(got) if got[3] or got[2] is None else obj.detach().cpu().clone()
    if isinstance(obj, dict):
        return {k: _stage(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_stage(v) for v in obj) if not hasattr(obj, "_fields") else obj
    return obj


def async_save(state_dict, *, checkpoint_id=None, storage_writer=None, planner=None,
               process_group=None, async_checkpointer_type=None, async_stager=None,
               no_dist=False, use_collectives=True):
    """``save`` in a background thread, after copying the state dict's tensors to the cpu
    (so training may change them meanwhile). Returns a ``concurrent.futures.Future`` of the
    ``Metadata``; with several ranks, run no other collective until it is done (the save's
    own collectives run in that thread). ``async_checkpointer_type`` and ``async_stager``
    are accepted for PyTorch compatibility (a thread stages and writes)."""
    if not isinstance(state_dict, dict):
        raise TypeError(f"async_save: state_dict must be a dict, got "
                        f"{type(state_dict).__name__}")
    writer = _writer(storage_writer, checkpoint_id)
    staged = _stage(_to_state_dict(state_dict))
    if not _EXECUTOR:
        _EXECUTOR.append(concurrent.futures.ThreadPoolExecutor(
            1, thread_name_prefix="dcp_async_save"))
    return _EXECUTOR[0].submit(_save_state_dict, staged, writer, process_group, no_dist,
                               planner, checkpoint_id)
