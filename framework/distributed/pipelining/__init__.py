"""Pipeline parallelism (PyTorch's ``torch.distributed.pipelining``), manual split: each
rank wraps its part of the model in a ``PipelineStage`` and runs a schedule whose ``step``
trains on a whole batch split into microbatches: ``ScheduleGPipe`` and ``Schedule1F1B``
(one stage per rank), ``ScheduleLoopedBFS`` and ``ScheduleInterleaved1F1B`` (several).
``stage`` holds the stage and its communication, ``schedules`` the orders of forwards and
backwards, ``microbatch`` the splitting and merging of batches."""
from .microbatch import (  # noqa: F401
    TensorChunkSpec, merge_chunks, split_args_kwargs_into_chunks)
from .schedules import (  # noqa: F401
    PipelineScheduleMulti, PipelineScheduleSingle, Schedule1F1B, ScheduleGPipe,
    ScheduleInterleaved1F1B, ScheduleLoopedBFS)
from .stage import PipelineStage, PipeliningShapeError  # noqa: F401

__all__ = ["PipelineStage", "Schedule1F1B", "ScheduleGPipe", "ScheduleInterleaved1F1B",
           "ScheduleLoopedBFS", "TensorChunkSpec",
           "split_args_kwargs_into_chunks", "merge_chunks"]
