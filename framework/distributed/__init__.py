"""Distributed communication (PyTorch's ``torch.distributed``) on existing engines: MPI
through mpi4py (cpu tensors, and simulated cuda ones through host memory) and NCCL through
ctypes (GPU tensors, ``libnccl.so.2`` from the nvidia-nccl-cu12 wheel).

Start the processes with ``mpiexec -n N python script.py`` or
``python -m framework.distributed.run --nproc-per-node N script.py``, then call
``init_process_group("mpi")`` or ``init_process_group("nccl")``. ``process_group`` says how
ranks are formed (MPI starts them and carries NCCL's unique id), ``collectives`` holds the
operations, ``mpi_backend`` how tensors reach MPI, ``nccl_backend`` and
``nccl_collectives`` the NCCL binding and its collectives on the framework's streams;
``store`` the key-value stores (``store_init`` the default group's), ``c10d_extras`` the
rest of the group API (subgroups, monitored_barrier, coalesced collectives, debug levels).
Importing this package does not start MPI (mpi4py is imported by ``init_process_group``).
"""
from .process_group import (  # noqa: F401
    Backend, ProcessGroup, GroupMember, group, init_process_group, destroy_process_group,
    is_available, is_initialized, is_mpi_available, is_nccl_available, is_gloo_available,
    is_torchelastic_launched, get_rank, get_world_size, get_backend, new_group,
    get_global_rank, get_group_rank, get_process_group_ranks, default_pg_timeout,
    get_node_local_rank, is_backend_available, get_default_backend_for_device,
)
from .collectives import (  # noqa: F401
    Work, all_reduce, broadcast, reduce, all_gather, all_gather_into_tensor, reduce_scatter,
    reduce_scatter_tensor, all_to_all_single, all_to_all, gather, scatter, barrier, send,
    recv, isend, irecv, broadcast_object_list, all_gather_object, gather_object,
    scatter_object_list, P2POp, batch_isend_irecv, send_object_list, recv_object_list,
)
from .mpi_backend import ReduceOp  # noqa: F401
from .device_mesh import DeviceMesh, init_device_mesh  # noqa: F401
from .grad_bucket import GradBucket  # noqa: F401
from .store import (  # noqa: F401
    DistError, DistBackendError, DistNetworkError, DistStoreError, QueueEmptyError, Store,
    HashStore, TCPStore, FileStore, PrefixStore,
)
from .c10d_extras import (  # noqa: F401
    new_subgroups, new_subgroups_by_enumeration, monitored_barrier, all_gather_coalesced,
    all_reduce_coalesced, get_pg_count, DebugLevel, get_debug_level, set_debug_level,
    set_debug_level_from_env, is_ucc_available, is_xccl_available, breakpoint,
    get_backend_config, BackendConfig, AllreduceOptions, AllreduceCoalescedOptions,
    AllToAllOptions, BarrierOptions, BroadcastOptions, GatherOptions, ReduceOptions,
    ReduceScatterOptions, ScatterOptions, GroupName, RankType, BuiltinCommHookType,
)
from . import distributed_c10d  # noqa: F401,E402
