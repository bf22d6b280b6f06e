"""The rest of ``torch.distributed``'s process-group API: subgroups, ``monitored_barrier``,
the coalesced collectives, debug levels, backend configs, option structs and
``breakpoint``."""
import enum
import os
import time
import typing
import warnings
from datetime import timedelta

import numpy as np

from . import collectives as _c
from .mpi_backend import ReduceOp
from .process_group import (
    Backend, _groups, _resolve, get_process_group_ranks, get_rank, get_world_size,
    new_group,
)

__all__ = [
    "new_subgroups", "new_subgroups_by_enumeration", "monitored_barrier",
    "all_gather_coalesced", "all_reduce_coalesced", "get_pg_count", "DebugLevel",
    "get_debug_level", "set_debug_level", "set_debug_level_from_env", "is_ucc_available",
    "is_xccl_available", "breakpoint", "get_backend_config", "BackendConfig",
    "AllreduceOptions", "AllreduceCoalescedOptions", "AllToAllOptions", "BarrierOptions",
    "BroadcastOptions", "GatherOptions", "ReduceOptions", "ReduceScatterOptions",
    "ScatterOptions", "GroupName", "RankType", "BuiltinCommHookType",
]

GroupName = typing.NewType("GroupName", str)
RankType = int


# ---- subgroups --------------------------------------------------------------------------------
def new_subgroups(group_size=None, group=None, timeout=None, backend=None, pg_options=None,
                  group_desc=None):
    """Splits the ranks of ``group`` (default: the world) into consecutive subgroups of
    ``group_size`` ranks (default: the number of cuda devices of a machine). Every rank
    must call it. Returns (the subgroup of this rank, all the subgroups)."""
    if group_size is None:
        from .. import cuda
        if not cuda.is_available():
            raise ValueError(
                "Default group size only takes effect when CUDA is available.If your "
                "subgroup using a backend that does not depend on CUDA,please pass in "
                "'group_size' correctly.")
        group_size = cuda.device_count()
    if group_size <= 0:
        raise ValueError(f"The arg 'group_size' ({group_size}) must be positive")
    world_size = get_world_size(group)
    if world_size < group_size:
        raise ValueError(f"The arg 'group_size' ({group_size}) must not exceed the world "
                         f"size ({world_size})")
    if world_size % group_size != 0:
        raise ValueError(f"The world size ({world_size}) must be divisible by "
                         f"'group_size={group_size}'")
    ranks = get_process_group_ranks(group if group is not None else _resolve(None))
    return new_subgroups_by_enumeration(
        [ranks[i:i + group_size] for i in range(0, len(ranks), group_size)],
        timeout=timeout, backend=backend, pg_options=pg_options, group_desc=group_desc)


def new_subgroups_by_enumeration(ranks_per_subgroup_list, timeout=None, backend=None,
                                 pg_options=None, group_desc=None):
    """A subgroup for each list of global ranks in ``ranks_per_subgroup_list`` (they must
    not overlap). Every rank must call it. Returns (the subgroup of this rank or None, all
    the subgroups)."""
    if ranks_per_subgroup_list is None or len(ranks_per_subgroup_list) == 0:
        raise ValueError("The arg 'ranks_per_subgroup_list' cannot be empty")
    seen = {}
    # check the overlaps before making any group: every rank fails the same way
    for ranks in ranks_per_subgroup_list:
        for r in ranks:
            if r in seen:
                raise ValueError(f"Rank {r} has appeared in both subgroup {seen[r]} and "
                                 f"{ranks}")
            seen[r] = ranks
    me = get_rank()
    subgroups, cur = [], None
    for ranks in ranks_per_subgroup_list:
        sub = new_group(ranks=ranks, timeout=timeout, backend=backend,
                        pg_options=pg_options, group_desc=group_desc)
        subgroups.append(sub)
        if me in ranks:
            cur = sub
    return cur, subgroups


def get_pg_count():
    """The number of live process groups, the default one included."""
    return len(_groups)


# ---- monitored_barrier ------------------------------------------------------------------------
_MONITOR_TAG = 0x7FF0       # a tag user point-to-point traffic is unlikely to take


def _poll(requests, deadline):
    """The indices of ``requests`` not done by ``deadline``."""
    while True:
        left = [i for i, r in enumerate(requests) if r is not None and not r.Test()]
        if not left or time.monotonic() > deadline:
            return left
        for i, r in enumerate(requests):
            if i not in left:
                requests[i] = None
        time.sleep(0.0005)


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """A barrier that says which ranks did not reach it: rank 0 of the group waits (up to
    ``timeout``, default the group's) for every other rank, then releases them; it raises
    naming the first rank that failed (all of them with ``wait_all_ranks=True``)."""
    pg = _resolve(group)
    if pg is None:
        warnings.warn("Running monitored_barrier on global rank "
                      f"{get_rank()} which does not belong to the given group.")
        return None
    if pg.backend not in (Backend.GLOO, Backend.MPI):
        raise ValueError("monitored_barrier is only implemented for GLOO backend.")
    if timeout is None:
        timeout = pg.timeout
    elif isinstance(timeout, float):
        warnings.warn("Please specify timeout arg as a timedelta. Converting current value "
                      f"of {timeout} assuming it represents seconds", stacklevel=2)
        timeout = timedelta(seconds=timeout)
    if not isinstance(timeout, timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got "
                        f"{type(timeout)}")
    ms = int(timeout.total_seconds() * 1000)
    deadline = time.monotonic() + timeout.total_seconds()
    me, n = pg.rank(), pg.size()
    token = [np.zeros(1, np.int8) for _ in range(n)]
    if me != 0:
        reqs = [pg.comm.Isend(token[0], dest=0, tag=_MONITOR_TAG),
                pg.comm.Irecv(token[1], source=0, tag=_MONITOR_TAG)]
        if _poll(reqs, deadline):
            for r in reqs:
                if r is not None:
                    r.Cancel()
            raise RuntimeError(f"[Rank {me}]: monitored barrier: rank 0 did not release "
                               f"this rank within {ms} ms")
        return None
    recvs = [None] + [pg.comm.Irecv(token[r], source=r, tag=_MONITOR_TAG)
                      for r in range(1, n)]
    late = _poll(recvs, deadline)
    if late:
        for i in late:
            recvs[i].Cancel()
        if wait_all_ranks:
            raise RuntimeError(f"[Rank 0]: Ranks {', '.join(map(str, late))} failed to pass "
                               f"monitoredBarrier in {ms} ms")
        raise RuntimeError(f"[Rank 0]: Rank {late[0]} failed to pass monitoredBarrier in "
                           f"{ms} ms")
    sends = [pg.comm.Isend(token[0], dest=r, tag=_MONITOR_TAG) for r in range(1, n)]
    _c._wait_requests(sends, pg, "monitored_barrier")
    return None


# ---- coalesced collectives (deprecated in PyTorch) ------------------------------------------
class _Coalesced:
    """The works of a coalesced collective, waited for together (``async_op=True``)."""

    def __init__(self, works, outputs):
        self._works = works
        self._outputs = outputs

    def wait(self, timeout=None):
        for w in self._works:
            w.wait()
        return True

    def is_completed(self):
        return all(w.is_completed() for w in self._works)

    def get_future(self):
        from ..futures import Future

        def complete(fut):
            self.wait()
            fut.set_result(list(self._outputs))
        return Future(_waiter=complete)


def all_reduce_coalesced(tensors, op=ReduceOp.SUM, group=None, async_op=False):
    """All-reduces each tensor of ``tensors`` (one collective each, matched in order)."""
    warnings.warn("torch.distributed.all_reduce_coalesced will be deprecated. If you must "
                  "use it, please revisit our documentation later at "
                  "https://pytorch.org/docs/main/distributed.html#collective-functions",
                  FutureWarning, stacklevel=2)
    from .._tensor import Tensor
    if isinstance(tensors, Tensor):
        tensors = [tensors]
    _c._check_list(tensors, "tensor", "all_reduce_coalesced")
    _c._same_dtype("all_reduce_coalesced", *tensors)
    if _resolve(group) is None:
        return None
    works = [_c.all_reduce(t, op, group=group, async_op=True) for t in tensors]
    done = _Coalesced(works, tensors)
    if async_op:
        return done.get_future()
    done.wait()
    return None


def all_gather_coalesced(output_tensor_lists, input_tensor_list, group=None,
                         async_op=False):
    """Gathers each tensor of ``input_tensor_list`` from every rank:
    ``output_tensor_lists[r][i]`` receives rank r's ``input_tensor_list[i]``."""
    warnings.warn("torch.distributed.all_gather_coalesced will be deprecated. If you must "
                  "use it, please revisit our documentation later at "
                  "https://pytorch.org/docs/main/distributed.html#collective-functions",
                  FutureWarning, stacklevel=2)
    _c._check_list(input_tensor_list, "input_tensor_list", "all_gather_coalesced")
    _c._same_dtype("all_gather_coalesced", *input_tensor_list)
    if not isinstance(output_tensor_lists, list):
        raise TypeError("Invalid function argument: output_tensor_lists should be a list")
    for out in output_tensor_lists:
        _c._check_list(out, "output_tensor_lists", "all_gather_coalesced")
        _c._same_dtype("all_gather_coalesced", *out)
    pg = _resolve(group)
    if pg is None:
        return None
    _c._check_per_rank("all_gather_coalesced", "output_tensor_lists", output_tensor_lists,
                       pg, "lists")
    for r, out in enumerate(output_tensor_lists):
        if len(out) != len(input_tensor_list):
            raise ValueError(f"all_gather_coalesced: output_tensor_lists[{r}] has {len(out)}"
                             f" tensors, expected {len(input_tensor_list)} (one per input)")
    works = [_c.all_gather([out[i] for out in output_tensor_lists], t, group=group,
                           async_op=True) for i, t in enumerate(input_tensor_list)]
    done = _Coalesced(works, [t for out in output_tensor_lists for t in out])
    if async_op:
        return done.get_future()
    done.wait()
    return None


# ---- debug levels -----------------------------------------------------------------------------
class DebugLevel(enum.IntEnum):
    """``TORCH_DISTRIBUTED_DEBUG``'s levels."""
    OFF = 0
    INFO = 1
    DETAIL = 2


_debug_level = [None]


def set_debug_level(level):
    """Sets the debug level of ``framework.distributed``."""
    _debug_level[0] = DebugLevel(level)


def set_debug_level_from_env():
    """Sets the debug level from ``TORCH_DISTRIBUTED_DEBUG`` (OFF, INFO or DETAIL)."""
    value = os.environ.get("TORCH_DISTRIBUTED_DEBUG", "OFF").upper()
    if value not in DebugLevel.__members__:
        raise ValueError("The value of TORCH_DISTRIBUTED_DEBUG must be OFF, INFO, or DETAIL.")
    _debug_level[0] = DebugLevel[value]


def get_debug_level():
    """The debug level (read from ``TORCH_DISTRIBUTED_DEBUG`` the first time)."""
    if _debug_level[0] is None:
        set_debug_level_from_env()
    return _debug_level[0]


def is_ucc_available():
    """UCC is not built in."""
    return False


def is_xccl_available():
    """XCCL (Intel GPUs) is not built in."""
    return False


# ---- backend configs --------------------------------------------------------------------------
class BackendConfig:
    """Which backend serves each device type, parsed from a backend string such as
    ``"gloo"``, ``"nccl"`` or ``"cpu:gloo,cuda:nccl"``."""

    def __init__(self, backend):
        backend = str(backend).lower()
        if backend == Backend.UNDEFINED:
            self.device_backend_map = {"cpu": "gloo", "cuda": "nccl"}
        elif ":" not in backend:
            name = str(Backend(backend))
            self.device_backend_map = {"cuda": "nccl"} if name == Backend.NCCL else \
                {"cpu": name, "cuda": name}
        else:
            self.device_backend_map = {}
            for pair in backend.split(","):
                if ":" not in pair:
                    raise ValueError(f"Invalid backend string {backend!r}: expected "
                                     "'<device_type>:<backend>' pairs separated by commas")
                device, name = (s.strip() for s in pair.split(":", 1))
                self.device_backend_map[device] = str(Backend(name))

    def get_device_backend_map(self):
        """The device type -> backend name map."""
        return dict(self.device_backend_map)

    def __repr__(self):
        return ",".join(f"{d}:{b}" for d, b in self.device_backend_map.items())


def get_backend_config(group=None):
    """The backend of each device type in ``group``, e.g. ``"cpu:mpi,cuda:mpi"``."""
    pg = _resolve(group)
    if pg is None:
        raise ValueError("Invalid process group specified")
    if pg.backend == Backend.NCCL:
        return "cuda:nccl"
    cuda = "nccl" if pg.nccl is not None else pg.backend
    return f"cpu:{pg.backend},cuda:{cuda}"


# ---- option structs ---------------------------------------------------------------------------
_UNSET = timedelta(milliseconds=-1)     # PyTorch's kUnsetTimeout


class _Options:
    _defaults = {}

    def __init__(self):
        self.timeout = _UNSET
        self.asyncOp = True
        for k, v in self._defaults.items():
            setattr(self, k, list(v) if isinstance(v, list) else v)

    def __repr__(self):
        return f"{type(self).__name__}({vars(self)})"


class AllreduceOptions(_Options):
    _defaults = {"reduceOp": ReduceOp.SUM}


class AllreduceCoalescedOptions(AllreduceOptions):
    pass


class AllToAllOptions(_Options):
    pass


class BarrierOptions(_Options):
    _defaults = {"device_ids": [], "device": None}


class BroadcastOptions(_Options):
    _defaults = {"rootRank": 0, "rootTensor": 0}


class GatherOptions(_Options):
    _defaults = {"rootRank": 0}


class ReduceOptions(_Options):
    _defaults = {"reduceOp": ReduceOp.SUM, "rootRank": 0, "rootTensor": 0}


class ReduceScatterOptions(_Options):
    _defaults = {"reduceOp": ReduceOp.SUM}


class ScatterOptions(_Options):
    _defaults = {"rootRank": 0}


class BuiltinCommHookType(enum.Enum):
    """DDP's built-in communication hooks."""
    ALLREDUCE = 1
    FP16_COMPRESS = 2


# ---- breakpoint -------------------------------------------------------------------------------
_breakpoint_calls = {}


def breakpoint(rank=0, skip=0, timeout_s=3600):
    """Stops rank ``rank`` in pdb (reading the terminal, as mpiexec gives a rank no stdin)
    while the others wait in a barrier. ``skip``: let the first ``skip`` calls from this
    place pass. ``timeout_s``: the groups' timeout from now on, so the wait does not fail."""
    import sys
    caller = sys._getframe(1)
    if skip > 0:
        where = (caller.f_code.co_filename, caller.f_lineno)
        _breakpoint_calls[where] = _breakpoint_calls.get(where, 0) + 1
        if _breakpoint_calls[where] <= skip:
            return
    if timeout_s is not None:
        for pg in _groups:
            pg.timeout = timedelta(seconds=timeout_s)
    if get_rank() == rank:
        import pdb
        try:
            tty = open("/dev/tty", "r+")
        except OSError:
            tty = None
        debugger = pdb.Pdb(stdin=tty, stdout=tty) if tty is not None else pdb.Pdb()
        if tty is not None:
            debugger.use_rawinput = False
        debugger.message(f"\n!!! ATTENTION !!!\n\nType 'up' to get to the frame that called "
                         f"dist.breakpoint(rank={rank})\n")
        debugger.set_trace()
    _c.barrier()
