"""Fully sharded data parallelism (PyTorch's ``torch.distributed.fsdp``): ``fully_shard``
(FSDP2, per-module sharding) and the ``FullyShardedDataParallel`` wrapper (FSDP1, the
whole module as one unit), both on the machinery of ``_fsdp_state``."""
from ._fully_shard import (  # noqa: F401
    CPUOffloadPolicy, FSDPModule, MixedPrecisionPolicy, OffloadPolicy, UnshardHandle,
    fully_shard,
)
from .fully_sharded_data_parallel import (  # noqa: F401
    BackwardPrefetch, CPUOffload, FullStateDictConfig, FullyShardedDataParallel,
    LocalStateDictConfig, MixedPrecision, ShardedStateDictConfig, ShardingStrategy,
    StateDictConfig, StateDictType,
)

FSDP = FullyShardedDataParallel
