"""``load`` and the deprecated ``load_state_dict`` (PyTorch's
``torch.distributed.checkpoint.state_dict_loader``)."""
import warnings

from .api import _DistWrapper
from .filesystem import FileSystemReader
from .planner import DefaultLoadPlanner
from .state_dict_saver import _use_dist
from .stateful import Stateful

__all__ = ["load", "load_state_dict"]


def load(state_dict, *, checkpoint_id=None, storage_reader=None, planner=None,
         process_group=None, no_dist=False):
    """Loads a distributed checkpoint into ``state_dict`` in place: tensors (DTensors and
    FSDP shards: this rank's chunk) are copied into from the saved chunks that overlap them,
    whatever the world size and sharding at save time; other values are replaced. Every
    rank calls it; without an initialized process group it loads as a single process. A key
    of ``state_dict`` that the checkpoint lacks raises (``CheckpointException``). Top-level
    ``Stateful`` values get what was loaded through their ``load_state_dict``."""
    if not isinstance(state_dict, dict):
        raise TypeError(f"load: state_dict must be a dict, got {type(state_dict).__name__}")
    if storage_reader is None:
        if checkpoint_id is None:
            raise RuntimeError("`checkpoint_id` must be specified if storage_reader is None.")
        storage_reader = FileSystemReader(checkpoint_id)
    stateful = {k: v for k, v in state_dict.items() if isinstance(v, Stateful)}
    inner = {k: stateful[k].state_dict() if k in stateful else v
             for k, v in state_dict.items()}
    _load_state_dict(inner, storage_reader, process_group, no_dist, planner, checkpoint_id)
    for k, v in inner.items():
        if k in stateful:
            stateful[k].load_state_dict(v)
        else:
            state_dict[k] = v


def _load_state_dict(state_dict, reader, process_group, no_dist, planner, checkpoint_id=None,
                     coordinator_rank=0):
    dist = _DistWrapper(process_group, _use_dist(process_group, no_dist, "load"),
                        coordinator_rank)
    planner = planner if planner is not None else DefaultLoadPlanner()
    reader.reset(checkpoint_id)

    def local_step():
        metadata = reader.read_metadata()
        planner.set_up_planner(state_dict, metadata, dist.is_coordinator)
        reader.set_up_storage_reader(metadata, dist.is_coordinator)
        return reader.prepare_local_plan(planner.create_local_plan())

    def global_step(all_plans):
        return reader.prepare_global_plan(planner.create_global_plan(all_plans))

    central = dist.reduce_scatter("plan", local_step, global_step)

    def read_data():
        plan = planner.finish_plan(central)
        reader.read_data(plan, planner).wait()

    dist.all_reduce("read", read_data, lambda _: None)


def load_state_dict(state_dict, storage_reader, process_group=None, coordinator_rank=0,
                    no_dist=False, planner=None):
    """Deprecated: use ``load``."""
    warnings.warn("'load_state_dict' is deprecated and will be removed in future versions. "
                  "Please use 'load' instead.", FutureWarning, stacklevel=2)
    storage_reader.reset()
    _load_state_dict(state_dict, storage_reader, process_group, no_dist, planner,
                     coordinator_rank=coordinator_rank)
