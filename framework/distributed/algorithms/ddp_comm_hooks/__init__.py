"""DDP communication hooks (``torch.distributed.algorithms.ddp_comm_hooks``): functions
``hook(state, bucket) -> Future`` that ``DistributedDataParallel.register_comm_hook`` runs
in place of each bucket's all-reduce."""
from enum import Enum, member
from functools import partial

from . import default_hooks as default
from . import powerSGD_hook as powerSGD

__all__ = ["DDPCommHookType", "register_ddp_comm_hook"]


def _ddp_comm_hook_wrapper(comm_hook, model, state):
    model.register_comm_hook(state, comm_hook)


def _powerSGD_comm_hook_wrapper(comm_hook, model, state, matrix_approximation_rank,
                                start_powerSGD_iter=1_000):
    # ``state`` is the process group here, as for the other hook types
    ps = powerSGD.PowerSGDState(process_group=state,
                                matrix_approximation_rank=matrix_approximation_rank,
                                start_powerSGD_iter=start_powerSGD_iter)
    model.register_comm_hook(ps, comm_hook)


class DDPCommHookType(Enum):
    """The hooks of ``ddp_comm_hooks`` by name: ``DDPCommHookType.ALLREDUCE.value(model=
    model, state=process_group)`` registers one."""
    ALLREDUCE = member(partial(_ddp_comm_hook_wrapper, comm_hook=default.allreduce_hook))
    FP16_COMPRESS = member(partial(_ddp_comm_hook_wrapper,
                                   comm_hook=default.fp16_compress_hook))
    BF16_COMPRESS = member(partial(_ddp_comm_hook_wrapper,
                                   comm_hook=default.bf16_compress_hook))
    POWER_SGD = member(partial(_powerSGD_comm_hook_wrapper,
                               comm_hook=powerSGD.powerSGD_hook, matrix_approximation_rank=1))
    POWER_SGD_RANK2 = member(partial(_powerSGD_comm_hook_wrapper,
                                     comm_hook=powerSGD.powerSGD_hook,
                                     matrix_approximation_rank=2))
    BATCHED_POWER_SGD = member(partial(_powerSGD_comm_hook_wrapper,
                                       comm_hook=powerSGD.batched_powerSGD_hook,
                                       matrix_approximation_rank=1))
    BATCHED_POWER_SGD_RANK2 = member(partial(_powerSGD_comm_hook_wrapper,
                                             comm_hook=powerSGD.batched_powerSGD_hook,
                                             matrix_approximation_rank=2))


def register_ddp_comm_hook(comm_hook_type, model, state=None):
    """Registers the hook named by ``comm_hook_type`` on the DDP ``model`` with ``state``."""
    comm_hook_type.value(model=model, state=state)
