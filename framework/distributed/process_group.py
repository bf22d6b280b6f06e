"""Process groups: ``init_process_group``, ``new_group``, ranks, world sizes and backends.

The ``"mpi"`` backend runs on MPI through mpi4py. MPI forms the world when its processes
start: they must be started by ``mpiexec -n N python script.py`` or by
``python -m framework.distributed.run --nproc-per-node N script.py`` (which calls the
``mpiexec`` of the ``mpich`` wheel and also sets ``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE``,
``MASTER_ADDR`` and ``MASTER_PORT``). ``init_process_group`` then takes ``MPI.COMM_WORLD``;
the init methods (``env://``, ``tcp://``, ``file://``, ``store=``) and explicit
``rank``/``world_size`` are checked against it rather than used to connect processes (MPI
has already connected them); they only make the group's key-value store (store_init.py). The
``"nccl"`` backend forms its groups the same way and sends NCCL's unique id over them
(nccl_backend.py).
"""
import importlib.util
import os
from datetime import timedelta

__all__ = [
    "Backend", "ProcessGroup", "GroupMember", "group", "init_process_group",
    "destroy_process_group", "is_available", "is_initialized", "is_mpi_available",
    "is_nccl_available", "is_gloo_available", "is_torchelastic_launched", "get_rank",
    "get_world_size", "get_backend", "new_group", "get_global_rank", "get_group_rank",
    "get_process_group_ranks", "default_pg_timeout", "get_node_local_rank",
    "is_backend_available", "get_default_backend_for_device",
]

# PyTorch's default for every backend but NCCL (which uses 10 minutes)
default_pg_timeout = timedelta(minutes=30)

_NOT_INIT = ("Default process group has not been initialized, please make sure to call "
             "init_process_group.")


class Backend(str):
    """A backend name: ``Backend.MPI``, ``Backend.NCCL``, ``Backend.GLOO``."""
    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    MPI = "mpi"

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, but got: "
                             f"{type(name)}")
        value = name.lower()
        if value not in (cls.GLOO, cls.NCCL, cls.MPI):
            raise ValueError(f"Invalid backend: '{name}'")
        return super().__new__(cls, value)


def is_mpi_available():
    """Whether the MPI backend can be used (mpi4py is installed)."""
    return importlib.util.find_spec("mpi4py") is not None


def is_nccl_available():
    """Whether the NCCL backend can be used (a GPU and the ``nvidia-nccl-cu12`` wheel)."""
    from . import nccl_backend
    return nccl_backend.is_available()


def is_gloo_available():
    """Gloo is not built in: ``"gloo"`` is served by MPI, so it is as available as MPI."""
    return is_mpi_available()


def is_available():
    """Whether ``framework.distributed`` can be used (some backend is installed)."""
    return is_mpi_available() or is_nccl_available()


def is_torchelastic_launched():
    """Whether this process was started by the launcher (``framework.distributed.run``)."""
    return os.environ.get("TORCHELASTIC_RUN_ID") is not None


_MPI = []


def _mpi():
    """mpi4py's ``MPI`` module (imported once: the import initializes MPI)."""
    if _MPI:
        return _MPI[0]
    if not is_mpi_available():
        raise RuntimeError("Distributed package doesn't have MPI built in. MPI is only "
                           "included if you build with MPI support (pip install mpich "
                           "mpi4py, or make install with the 'distributed' extra).")
    from mpi4py import MPI
    _MPI.append(MPI)
    return MPI


class ProcessGroup:
    """A set of ranks that run collectives together, over one MPI communicator.

    ``ranks`` are the global ranks of its members in group-rank order."""

    def __init__(self, comm, ranks, backend, timeout):
        self.comm = comm
        self.ranks = list(ranks)
        self.backend = backend
        self.timeout = timeout
        self._rank = comm.Get_rank()
        self.broken = None      # the error that left a collective unfinished (a timeout)
        self.nccl = None        # nccl_backend.GroupState: cuda tensors go through NCCL
        self.store = None       # the key-value store (store_init.py)
        self.owned_store = None  # the TCPStore this group made (shut down with it)

    def rank(self):
        return self._rank

    def size(self):
        return len(self.ranks)

    def name(self):
        return self.backend

    def group_rank(self, global_rank):
        try:
            return self.ranks.index(global_rank)
        except ValueError:
            raise ValueError(f"Group {self!r} does not contain rank {global_rank}") from None

    def __repr__(self):
        return f"ProcessGroup(backend={self.backend}, ranks={self.ranks})"


class GroupMember:
    """``GroupMember.WORLD``: the default group; ``NON_GROUP_MEMBER``: what ``new_group``
    returns to ranks outside the new group."""
    WORLD = None
    NON_GROUP_MEMBER = object()


group = GroupMember     # ``dist.group.WORLD`` as PyTorch spells it

_groups = []            # every live group; the default group first


def is_initialized():
    """Whether the default process group has been initialized."""
    return GroupMember.WORLD is not None


def _default_group():
    if GroupMember.WORLD is None:
        raise ValueError(_NOT_INIT)
    return GroupMember.WORLD


def _resolve(group):
    """The ProcessGroup meant by ``group`` (None: the default one), or None for a rank that
    is not a member."""
    if group is None or group is GroupMember.WORLD:
        return _default_group()
    _default_group()
    if group is GroupMember.NON_GROUP_MEMBER:
        return None
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup, got {type(group).__name__}")
    if group.comm is None:
        raise ValueError("Invalid process group specified (it was destroyed)")
    return group


def _check_env(init_method, world_size, rank, comm):
    """Checks what the init method or the arguments say against the MPI world."""
    if init_method is not None:
        if not isinstance(init_method, str) or not init_method.startswith(
                ("env://", "file://", "tcp://")):
            raise ValueError(f"Invalid init_method {init_method!r}: expected 'env://', "
                             "'file://<path>' or 'tcp://<addr>:<port>'")
    if init_method is None or init_method.startswith("env://"):
        if world_size == -1 and "WORLD_SIZE" in os.environ:
            world_size = int(os.environ["WORLD_SIZE"])
        if rank == -1 and "RANK" in os.environ:
            rank = int(os.environ["RANK"])
    size, me = comm.Get_size(), comm.Get_rank()
    if world_size not in (-1, size):
        raise RuntimeError(
            f"init_process_group: world_size={world_size} but the MPI world has {size} "
            f"process(es). The MPI backend needs its processes started together: use "
            f"'mpiexec -n {world_size} python script.py' or 'python -m "
            f"framework.distributed.run --nproc-per-node {world_size} script.py'")
    if rank not in (-1, me):
        raise RuntimeError(f"init_process_group: rank={rank} but this process is MPI rank "
                           f"{me}; with the MPI backend the rank is the MPI rank")


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1,
                       rank=-1, store=None, group_name="", pg_options=None, device_id=None):
    """Initializes the default process group over all the processes of the MPI world.

    ``backend``: ``"mpi"`` (CPU tensors, and ``cuda`` tensors through host memory),
    ``"gloo"`` (served by MPI as well) or ``"nccl"`` (GPU tensors through NCCL; MPI only
    carries its unique id). ``timeout``: how long a collective may wait for the other ranks
    before raising (default 30 minutes, 10 for NCCL). ``device_id``: with NCCL, make that
    device's communicator now rather than at the first collective."""
    if GroupMember.WORLD is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if store is not None:
        # PyTorch's checks (assertions there)
        if world_size <= 0:
            raise AssertionError("world_size must be positive if using store")
        if rank < 0:
            raise AssertionError("rank must be non-negative if using store")
        if init_method is not None:
            raise AssertionError("Cannot specify both init_method and store.")
    if timeout is None:    # NCCL's default is 10 minutes in PyTorch
        timeout = timedelta(minutes=10) if str(backend).lower() == "nccl" else \
            default_pg_timeout
    if not isinstance(timeout, timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got "
                        f"{type(timeout)}")
    name = Backend(backend if backend is not None else "mpi")
    from . import nccl_backend
    # "cpu:gloo,cuda:nccl": MPI serves cpu tensors, and cuda ones too without NCCL here
    mixed = ":" in str(backend or "")
    if mixed:
        name = Backend("mpi")
    if name == Backend.NCCL:
        nccl_backend.require()
    MPI = _mpi()
    _guard_exit()
    world = MPI.COMM_WORLD
    _check_env(init_method, world_size, rank, world)
    # a communicator of our own: user traffic on COMM_WORLD cannot match ours
    comm = world.Dup()
    comm.Set_errhandler(MPI.ERRORS_RETURN)
    pg = ProcessGroup(comm, range(comm.Get_size()), str(name), timeout)
    from .store_init import default_store
    pg.store, pg.owned_store = default_store(store, init_method, comm, timeout)
    if name == Backend.NCCL or (mixed and "nccl" in backend and nccl_backend.is_available()):
        nccl_backend.attach(pg, device_id)
    GroupMember.WORLD = pg
    _groups.append(pg)


_guarded = []


def _guard_exit():
    # registered after mpi4py's import, so it runs before mpi4py finalizes MPI
    if not _guarded:
        import atexit
        import sys
        from . import mpi_backend
        atexit.register(mpi_backend.exit_guard)
        sys.excepthook = mpi_backend.excepthook(sys.excepthook)
        _guarded.append(True)


def destroy_process_group(group=None):
    """Destroys ``group`` (default: every group, the default one included)."""
    if group is None or group is GroupMember.WORLD:
        if GroupMember.WORLD is None:
            raise ValueError(_NOT_INIT)
        doomed = list(_groups)
        _groups.clear()
        GroupMember.WORLD = None
    elif group is GroupMember.NON_GROUP_MEMBER:
        return
    else:
        doomed = [group]
        if group in _groups:
            _groups.remove(group)
    for pg in doomed:
        if getattr(pg, "owned_store", None) is not None:
            pg.owned_store._shutdown()
            pg.owned_store = None
        if pg.nccl is not None:
            pg.nccl.destroy()
        if pg.comm is not None:
            try:
                # a group left broken by a timeout has a request in flight: freeing its
                # communicator would wait for it
                if pg.broken is None:
                    pg.comm.Free()
            finally:
                pg.comm = None


def get_rank(group=None):
    """This process's rank in ``group`` (default: the default group); -1 outside it."""
    pg = _resolve(group)
    return -1 if pg is None else pg.rank()


def get_world_size(group=None):
    """The number of processes in ``group``; -1 for a rank outside it."""
    pg = _resolve(group)
    return -1 if pg is None else pg.size()


def get_backend(group=None):
    """The backend of ``group``, e.g. ``"mpi"``."""
    pg = _resolve(group)
    if pg is None:
        raise ValueError("Invalid process group specified")
    return pg.backend


def get_process_group_ranks(group):
    """The global ranks of ``group``'s members, in group-rank order."""
    pg = _resolve(group)
    if pg is None:
        raise ValueError("Invalid process group specified")
    return list(pg.ranks)


def get_global_rank(group, group_rank):
    """The global rank of ``group``'s member ``group_rank``."""
    ranks = get_process_group_ranks(group)
    if not 0 <= group_rank < len(ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {group}")
    return ranks[group_rank]


def get_group_rank(group, global_rank):
    """The rank in ``group`` of the process with global rank ``global_rank``."""
    pg = _resolve(group)
    if pg is None:
        raise ValueError("Invalid process group specified")
    return pg.group_rank(global_rank)


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization=False, group_desc=None, device_id=None):
    """A new group of the processes with global ranks ``ranks`` (default: all). Every
    process of the default group must call it, members or not; the others get
    ``GroupMember.NON_GROUP_MEMBER``."""
    world = _default_group()
    size = world.size()
    ranks = list(range(size)) if ranks is None else sorted(int(r) for r in ranks)
    if len(set(ranks)) != len(ranks):
        raise ValueError(f"new_group: ranks must be distinct, got {ranks}")
    for r in ranks:
        if not 0 <= r < size:
            raise ValueError(f"The new group's rank should be within the world_size set by "
                             f"init_process_group, got rank {r} for world size {size}")
    nccl = backend is not None and Backend(backend) == Backend.NCCL
    if nccl:
        from . import nccl_backend
        nccl_backend.require()
    MPI = _mpi()
    from .collectives import _wait_requests
    # agree on a tag first (a nonblocking barrier, so a dead rank times out here too)
    _wait_requests([world.comm.Ibarrier()], world, "new_group")
    sub = world.comm.Create(world.comm.Get_group().Incl(ranks))
    if sub == MPI.COMM_NULL:
        return GroupMember.NON_GROUP_MEMBER
    sub.Set_errhandler(MPI.ERRORS_RETURN)
    pg = ProcessGroup(sub, ranks, str(Backend(backend)) if backend else world.backend,
                      timeout if timeout is not None else world.timeout)
    if nccl or (backend is None and world.nccl is not None):
        from . import nccl_backend
        nccl_backend.attach(pg, device_id)
    _groups.append(pg)
    return pg


def is_backend_available(backend):
    """Whether ``backend`` (``"mpi"``, ``"gloo"``, ``"nccl"``, or ``"cpu:gloo,cuda:nccl"``)
    can be used here."""
    if ":" in backend:
        return all(is_backend_available(part.split(":")[-1]) for part in backend.split(","))
    check = {"mpi": is_mpi_available, "gloo": is_gloo_available,
             "nccl": is_nccl_available}.get(backend.lower())
    return bool(check is not None and check())


def get_default_backend_for_device(device):
    """The backend PyTorch uses by default for ``device``: ``"gloo"`` for cpu (served by
    MPI here), ``"nccl"`` for cuda."""
    kind = device.type if hasattr(device, "type") else str(device).split(":")[0]
    backend = {"cpu": "gloo", "cuda": "nccl"}.get(kind)
    if backend is None:
        raise ValueError(f"Default backend not registered for device : {device}")
    return backend


def get_node_local_rank(fallback_rank=None):
    """This process's rank on its node: ``LOCAL_RANK`` as the launcher sets it, else
    ``fallback_rank``."""
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError(
        "LOCAL_RANK is not in the environment. Consider passing fallback_rank to allow "
        "`get_node_local_rank` to work, assuming you are not running in a multi-device "
        "context and want the code to run locally instead.")
