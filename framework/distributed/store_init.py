"""The key-value store of the default process group (``_get_default_store()``).

MPI has connected the processes before ``init_process_group`` runs, and the collectives run
over MPI (or NCCL): the store is only the shared key-value table PyTorch's groups also
have. Its rank and world size are MPI's (``init_process_group`` checks what it was given
against them). Which store:

- ``store=``: that store;
- ``"tcp://host:port"``: a ``TCPStore`` served on that port by rank 0 (it waits until every
  rank connected, as PyTorch's rendezvous);
- ``"file://path"``: a ``FileStore`` on that file;
- ``"env://"`` or no init method: a ``TCPStore`` that rank 0 serves on a free port, whose
  address MPI sends to the other ranks (``MASTER_PORT`` is not bound: MPI already did the
  rendezvous it is for; ``MASTER_ADDR``, if set, is the address the others connect to;
  if some rank cannot connect, the group goes without a store, with a warning).

PyTorch hands the group the store behind a ``PrefixStore`` named for the group's
generation (``"0/"`` for the first default group); so do we.
"""
import os
import socket
import warnings
from datetime import timedelta
from urllib.parse import urlparse

from .store import DistNetworkError, FileStore, PrefixStore, TCPStore

_CONNECT_S = 60.0   # how long a rank tries to reach rank 0's store at most

_generation = [0]


def default_store(store, init_method, comm, timeout):
    """(the group's store, the TCPStore to shut down with the group or None)."""
    rank, size = comm.Get_rank(), comm.Get_size()
    owned = None
    if store is None:
        if init_method is not None and init_method.startswith("tcp://"):
            url = urlparse(init_method)
            if url.hostname is None or url.port is None:
                raise ValueError(f"Invalid init_method {init_method!r}: expected "
                                 "'tcp://<host>:<port>'")
            store = owned = TCPStore(url.hostname, url.port, size, rank == 0, timeout)
        elif init_method is not None and init_method.startswith("file://"):
            path = urlparse(init_method).path
            if not path:
                raise ValueError(f"Invalid init_method {init_method!r}: expected "
                                 "'file://<path>'")
            store = FileStore(path, size)
        else:
            store = owned = _mpi_rendezvous_store(comm, timeout)
    gen = _generation[0]
    _generation[0] += 1
    if store is None:
        return None, None
    return PrefixStore(f"{gen}/", store), owned


def _mpi_rendezvous_store(comm, timeout):
    """A TCPStore served by rank 0 on a free port; its address goes out over MPI. If some
    rank cannot connect (e.g. rank 0's host name does not resolve there), the group has no
    store (a warning says so) rather than failing: MPI does not need it."""
    seconds = min(timeout.total_seconds(), _CONNECT_S)
    store, err = None, None
    if comm.Get_rank() == 0:
        store = TCPStore("127.0.0.1", 0, None, True, timeout, wait_for_workers=False)
        comm.bcast((os.environ.get("MASTER_ADDR") or socket.gethostname(), store.port),
                   root=0)
    else:
        host, port = comm.bcast(None, root=0)
        if host == socket.gethostname():
            host = "127.0.0.1"      # same machine: no name resolution needed
        try:
            store = TCPStore(host, port, None, False, timedelta(seconds=seconds))
            store.set_timeout(timeout)
        except DistNetworkError as e:
            err = str(e)
    # the rendezvous: every rank connected (or failed) before any goes on, so rank 0
    # cannot destroy the group, closing the server, while a slow rank still connects
    errors = [e for e in comm.allgather(err) if e is not None]
    if errors:
        warnings.warn("init_process_group: the default group has no key-value store (the "
                      f"collectives do not need one): {errors[0]}")
        if store is not None:
            store._shutdown()
        return None
    return store
