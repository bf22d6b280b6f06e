"""Collectives and point-to-point operations on framework tensors, in place, over MPI.

Every operation starts MPI's nonblocking form (``Iallreduce``, ``Ibcast``, ...) and waits
for it by polling until the group's timeout, so a rank that died makes the others raise
instead of hang. ``async_op=True`` returns the ``Work`` handle instead of waiting.
"""
import pickle

import numpy as np

from .._tensor import Tensor
from . import mpi_backend as _mb
from .mpi_backend import ReduceOp
from .process_group import _resolve, _mpi

__all__ = [
    "ReduceOp", "Work", "all_reduce", "broadcast", "reduce", "all_gather",
    "all_gather_into_tensor", "reduce_scatter", "reduce_scatter_tensor", "all_to_all_single",
    "all_to_all", "gather", "scatter", "barrier", "send", "recv", "isend", "irecv",
    "broadcast_object_list", "all_gather_object", "gather_object", "scatter_object_list",
    "P2POp", "batch_isend_irecv", "send_object_list", "recv_object_list",
]


class Work:
    """A started operation. ``wait()`` blocks until it is done (raising on a timeout),
    ``is_completed()`` tells without blocking."""

    def __init__(self, pg, what, requests, finish=None, result=None, statuses=None):
        self._pg = pg
        self._statuses = statuses
        self._what = what
        self._requests = requests
        self._finish = finish
        self._result = result
        self._done = False

    def _complete(self):
        self._done = True
        self._requests = []
        if self._finish is not None:
            f, self._finish = self._finish, None
            f()

    def is_completed(self):
        if not self._done and _mpi().Request.Testall(self._requests, self._statuses):
            self._complete()
        return self._done

    def is_success(self):
        return self.is_completed()

    def wait(self, timeout=None):
        if not self._done:
            _mb.wait(_mpi(), self._requests, self._pg, self._what, timeout, self._statuses)
            self._complete()
        return True

    def result(self):
        self.wait()
        return self._result

    def source_rank(self):
        return self._result

    def get_future(self):
        """A ``framework.futures.Future`` completed with the operation's output tensors
        (a list) once it finishes; waiting on the future waits for the operation."""
        from ..futures import Future

        def complete(fut):
            self.wait()
            fut.set_result(list(getattr(self, "_outputs", ())))
        return Future(_waiter=complete)


def _wait_requests(requests, pg, what):
    _mb.wait(_mpi(), requests, pg, what)


def _run(pg, what, requests, finish, async_op, result=None):
    w = Work(pg, what, requests, finish, result)
    if async_op:
        return w
    w.wait()
    return None


def _outputs(work, *tensors):
    """``work`` (None when not async) knowing the tensors its future is completed with."""
    if work is not None:
        work._outputs = tensors
    return work


def _nccl(pg, *tensors):
    """The NCCL implementation (nccl_collectives) when ``pg`` sends these tensors through
    NCCL, else None (MPI serves them)."""
    if getattr(pg, "nccl", None) is None:
        return None
    from . import nccl_collectives as nc
    return nc if nc.routes(pg, tensors) else None


def _check_tensor(t, name, what):
    if not isinstance(t, Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"Tensor but got {type(t)} instead.")


def _check_per_rank(op, name, seq, pg, what="tensors"):
    if len(seq) != pg.size():
        raise ValueError(f"{op}: {name} has {len(seq)} {what}, expected one per rank "
                         f"({pg.size()})")


def _check_numels(tensors, ref):
    for t in tensors:
        if t.numel() != ref.numel():
            raise ValueError("All tensor operands to scatter/gather must have the same "
                             f"number of elements: {list(t.shape)} vs {list(ref.shape)}")


def _check_list(ts, name, what):
    if not isinstance(ts, (list, tuple)):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"List[Tensor] but got {type(ts)} instead.")
    for t in ts:
        _check_tensor(t, name, what)


def _same_dtype(what, *tensors):
    dts = {t.dtype for t in tensors}
    if len(dts) > 1:
        raise RuntimeError(f"{what}: tensors must have the same dtype, got "
                           f"{sorted(str(d) for d in dts)}")


def _group_rank(pg, global_rank, group_rank, what):
    if group_rank is not None:
        if not 0 <= group_rank < pg.size():
            raise ValueError(f"{what}: group rank {group_rank} is not part of the group")
        return group_rank
    return pg.group_rank(global_rank)


def _finish_all(bufs, after=None):
    def finish():
        if after is not None:
            after()
        for b in bufs:
            b.finish()
    return finish


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduces ``tensor`` across all ranks of the group; every rank gets the result."""
    _check_tensor(tensor, "tensor", "all_reduce")
    _mb._check_op(op)
    pg = _resolve(group)
    if pg is None:
        return None
    if (nc := _nccl(pg, tensor)) is not None:
        return _outputs(nc.all_reduce(pg, tensor, op, async_op), tensor)
    MPI = _mpi()
    b = _mb.Buffer(tensor, reduce=True)
    mop = _mb.mpi_op(MPI, op, tensor.dtype)
    req = pg.comm.Iallreduce(MPI.IN_PLACE, b.arr, mop)
    after = (lambda: _mb.average(b.arr, pg.size(), tensor.dtype)) if op is ReduceOp.AVG \
        else None
    return _outputs(_run(pg, "allreduce", [req], _finish_all([b], after), async_op), tensor)


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Copies ``tensor`` of rank ``src`` (a global rank) into ``tensor`` of every rank."""
    _check_tensor(tensor, "tensor", "broadcast")
    pg = _resolve(group)
    if pg is None:
        return None
    root = _group_rank(pg, 0 if src is None else src, group_src, "broadcast")
    if (nc := _nccl(pg, tensor)) is not None:
        return _outputs(nc.broadcast(pg, tensor, root, async_op), tensor)
    b = _mb.Buffer(tensor)
    req = pg.comm.Ibcast(b.arr, root=root)
    return _outputs(_run(pg, "broadcast", [req], _finish_all([b]), async_op), tensor)


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Reduces ``tensor`` across the group into ``tensor`` of rank ``dst`` only."""
    _check_tensor(tensor, "tensor", "reduce")
    _mb._check_op(op)
    pg = _resolve(group)
    if pg is None:
        return None
    MPI = _mpi()
    root = _group_rank(pg, 0 if dst is None else dst, group_dst, "reduce")
    if (nc := _nccl(pg, tensor)) is not None:
        return nc.reduce(pg, tensor, root, op, async_op)
    b = _mb.Buffer(tensor, reduce=True)
    mop = _mb.mpi_op(MPI, op, tensor.dtype)
    if pg.rank() == root:
        req = pg.comm.Ireduce(MPI.IN_PLACE, b.arr, mop, root=root)
        after = (lambda: _mb.average(b.arr, pg.size(), tensor.dtype)) \
            if op is ReduceOp.AVG else None
        return _run(pg, "reduce", [req], _finish_all([b], after), async_op)
    req = pg.comm.Ireduce(b.arr, None, mop, root=root)
    return _run(pg, "reduce", [req], None, async_op)


def _flat_out(tensor, n, what):
    """A contiguous host buffer for ``n`` tensors like ``tensor``: (Buffer, numpy view)."""
    from .._ops import creation
    out = creation.empty((n * tensor.numel(),), dtype=tensor.dtype)
    return _mb.Buffer(out), out


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Gathers ``tensor`` of every rank into ``tensor_list`` (one tensor per rank)."""
    _check_list(tensor_list, "tensor_list", "all_gather")
    _check_tensor(tensor, "tensor", "all_gather")
    pg = _resolve(group)
    if pg is None:
        return None
    _check_per_rank("all_gather", "tensor_list", tensor_list, pg)
    _same_dtype("all_gather", tensor, *tensor_list)
    _check_numels(tensor_list, tensor)
    if (nc := _nccl(pg, tensor, *tensor_list)) is not None:
        return nc.all_gather(pg, tensor_list, tensor, async_op)
    src = _mb.Buffer(tensor)
    ob, out = _flat_out(tensor, pg.size(), "all_gather")
    req = pg.comm.Iallgather(src.arr, ob.arr)

    def finish():
        n = tensor.numel()
        with _mb._no_grad():
            for i, t in enumerate(tensor_list):
                t.copy_(out[i * n:(i + 1) * n].view(t.shape))
    return _run(pg, "allgather", [req], finish, async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Gathers ``input_tensor`` of every rank, concatenated (along dim 0 or stacked), into
    ``output_tensor``."""
    _check_tensor(output_tensor, "output_tensor", "all_gather_into_tensor")
    _check_tensor(input_tensor, "input_tensor", "all_gather_into_tensor")
    pg = _resolve(group)
    if pg is None:
        return None
    if output_tensor.dtype is not input_tensor.dtype:
        raise RuntimeError("Tensor input and output of _allgather_base must have the same "
                           f"dtype, got {input_tensor.dtype} and {output_tensor.dtype}")
    if output_tensor.numel() != pg.size() * input_tensor.numel():
        raise ValueError("output tensor size must be equal to world_size times input tensor "
                         f"size: output {list(output_tensor.shape)}, input "
                         f"{list(input_tensor.shape)}, world_size {pg.size()}")
    if (nc := _nccl(pg, output_tensor, input_tensor)) is not None:
        return nc.all_gather_into_tensor(pg, output_tensor, input_tensor, async_op)
    src = _mb.Buffer(input_tensor)
    ob = _mb.Buffer(output_tensor)
    req = pg.comm.Iallgather(src.arr, ob.arr)
    return _run(pg, "allgather", [req], _finish_all([ob]), async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduces ``input`` across the group and scatters it: rank ``i`` gets part ``i``."""
    _check_tensor(output, "output", "reduce_scatter_tensor")
    _check_tensor(input, "input", "reduce_scatter_tensor")
    _mb._check_op(op)
    pg = _resolve(group)
    if pg is None:
        return None
    _same_dtype("reduce_scatter_tensor", output, input)
    if input.numel() != pg.size() * output.numel():
        raise ValueError("input tensor must be the same size as output size times world "
                         f"size: input {list(input.shape)}, output {list(output.shape)}, "
                         f"world_size {pg.size()}")
    if (nc := _nccl(pg, output, input)) is not None:
        return nc.reduce_scatter_tensor(pg, output, input, op, async_op)
    MPI = _mpi()
    ib = _mb.Buffer(input, reduce=True)
    ob = _mb.Buffer(output, reduce=True)
    req = pg.comm.Ireduce_scatter_block(ib.arr, ob.arr, _mb.mpi_op(MPI, op, output.dtype))
    after = (lambda: _mb.average(ob.arr, pg.size(), output.dtype)) \
        if op is ReduceOp.AVG else None
    return _run(pg, "reduce_scatter", [req], _finish_all([ob], after), async_op)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduces the ``input_list`` of every rank elementwise; rank ``i`` gets entry ``i``."""
    _check_tensor(output, "output", "reduce_scatter")
    _check_list(input_list, "input_list", "reduce_scatter")
    pg = _resolve(group)
    if pg is None:
        return None
    _check_per_rank("reduce_scatter", "input_list", input_list, pg)
    _check_numels(input_list, output)
    from .._ops import shape as _shape
    flat = _shape.cat([t.detach().reshape(-1) for t in input_list]) if input_list else None
    return reduce_scatter_tensor(output, flat, op, group, async_op)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                      group=None, async_op=False):
    """Splits ``input`` along dim 0 into one part per rank, sends part ``i`` to rank ``i``
    and concatenates the parts received into ``output``."""
    _check_tensor(output, "output", "all_to_all_single")
    _check_tensor(input, "input", "all_to_all_single")
    pg = _resolve(group)
    if pg is None:
        return None
    _same_dtype("all_to_all_single", output, input)
    n = pg.size()

    def counts(t, splits, name):
        row = t.numel() // t.shape[0] if t.dim() and t.shape[0] else 0
        if splits is None or len(splits) == 0:
            if t.dim() == 0 or t.shape[0] % n:
                raise ValueError(f"all_to_all_single: {name} dim 0 ({list(t.shape)}) must "
                                 f"divide by the world size {n} without split sizes")
            return [t.numel() // n] * n
        splits = [int(s) for s in splits]
        if len(splits) != n or sum(splits) != t.shape[0]:
            raise ValueError(f"all_to_all_single: {name}_split_sizes {splits} must have "
                             f"{n} entries summing to dim 0 of {list(t.shape)}")
        return [s * row for s in splits]
    sc = counts(input, input_split_sizes, "input")
    rc = counts(output, output_split_sizes, "output")
    if (nc := _nccl(pg, output, input)) is not None:
        return nc.all_to_all_single(pg, output, input, sc, rc, async_op)
    ib = _mb.Buffer(input)
    ob = _mb.Buffer(output)
    sd = np.concatenate([[0], np.cumsum(sc)[:-1]]).astype(np.int64).tolist()
    rd = np.concatenate([[0], np.cumsum(rc)[:-1]]).astype(np.int64).tolist()
    req = pg.comm.Ialltoallv([ib.arr, (sc, sd)], [ob.arr, (rc, rd)])
    return _run(pg, "alltoall", [req], _finish_all([ob]), async_op)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """Sends ``input_tensor_list[i]`` to rank ``i``; receives into ``output_tensor_list``."""
    _check_list(output_tensor_list, "output_tensor_list", "all_to_all")
    _check_list(input_tensor_list, "input_tensor_list", "all_to_all")
    pg = _resolve(group)
    if pg is None:
        return None
    from .._ops import creation, shape as _shape
    dt = input_tensor_list[0].dtype
    _same_dtype("all_to_all", *output_tensor_list, *input_tensor_list)
    if (nc := _nccl(pg, *output_tensor_list, *input_tensor_list)) is not None:
        return nc.all_to_all(pg, output_tensor_list, input_tensor_list, async_op)
    src = _shape.cat([t.detach().reshape(-1) for t in input_tensor_list])
    out = creation.empty((sum(t.numel() for t in output_tensor_list),), dtype=dt)
    ib, ob = _mb.Buffer(src), _mb.Buffer(out)
    sc = [t.numel() for t in input_tensor_list]
    rc = [t.numel() for t in output_tensor_list]
    sd = np.concatenate([[0], np.cumsum(sc)[:-1]]).astype(np.int64).tolist()
    rd = np.concatenate([[0], np.cumsum(rc)[:-1]]).astype(np.int64).tolist()
    req = pg.comm.Ialltoallv([ib.arr, (sc, sd)], [ob.arr, (rc, rd)])

    def finish():
        with _mb._no_grad():
            for t, o, c in zip(output_tensor_list, rd, rc):
                t.copy_(out[o:o + c].view(t.shape))
    return _run(pg, "alltoall", [req], finish, async_op)


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """Gathers ``tensor`` of every rank into ``gather_list`` on rank ``dst``."""
    _check_tensor(tensor, "tensor", "gather")
    pg = _resolve(group)
    if pg is None:
        return None
    root = _group_rank(pg, 0 if dst is None else dst, group_dst, "gather")
    if pg.rank() != root:
        if gather_list:
            raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination "
                             "ranks.")
        if (nc := _nccl(pg, tensor)) is not None:
            return nc.gather(pg, tensor, None, root, async_op)
        src = _mb.Buffer(tensor)
        req = pg.comm.Igather(src.arr, None, root=root)
        return _run(pg, "gather", [req], None, async_op)
    _check_list(gather_list if gather_list is not None else 0, "gather_list", "gather")
    _check_per_rank("gather", "gather_list", gather_list, pg)
    _check_numels(gather_list, tensor)
    _same_dtype("gather", tensor, *gather_list)
    if (nc := _nccl(pg, tensor, *gather_list)) is not None:
        return nc.gather(pg, tensor, gather_list, root, async_op)
    src = _mb.Buffer(tensor)
    ob, out = _flat_out(tensor, pg.size(), "gather")
    req = pg.comm.Igather(src.arr, ob.arr, root=root)

    def finish():
        n = tensor.numel()
        with _mb._no_grad():
            for i, t in enumerate(gather_list):
                t.copy_(out[i * n:(i + 1) * n].view(t.shape))
    return _run(pg, "gather", [req], finish, async_op)


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """Rank ``src`` sends ``scatter_list[i]`` to rank ``i``, which receives it in
    ``tensor``."""
    _check_tensor(tensor, "tensor", "scatter")
    pg = _resolve(group)
    if pg is None:
        return None
    root = _group_rank(pg, 0 if src is None else src, group_src, "scatter")
    if pg.rank() != root:
        if scatter_list:
            raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source "
                             "ranks.")
        if (nc := _nccl(pg, tensor)) is not None:
            return nc.scatter(pg, tensor, None, root, async_op)
        ob = _mb.Buffer(tensor)
        req = pg.comm.Iscatter(None, ob.arr, root=root)
        return _run(pg, "scatter", [req], _finish_all([ob]), async_op)
    _check_list(scatter_list if scatter_list is not None else 0, "scatter_list", "scatter")
    _check_per_rank("scatter", "scatter_list", scatter_list, pg)
    _check_numels(scatter_list, tensor)
    _same_dtype("scatter", tensor, *scatter_list)
    if (nc := _nccl(pg, tensor, *scatter_list)) is not None:
        return nc.scatter(pg, tensor, scatter_list, root, async_op)
    ob = _mb.Buffer(tensor)
    from .._ops import shape as _shape
    flat = _shape.cat([t.detach().reshape(-1) for t in scatter_list])
    ib = _mb.Buffer(flat)
    req = pg.comm.Iscatter(ib.arr, ob.arr, root=root)
    return _run(pg, "scatter", [req], _finish_all([ob]), async_op)


def barrier(group=None, async_op=False, device_ids=None):
    """Waits until every rank of the group reached it."""
    pg = _resolve(group)
    if pg is None:
        return None
    if (nc := _nccl(pg)) is not None:
        return nc.barrier(pg, async_op, device_ids)
    return _run(pg, "barrier", [pg.comm.Ibarrier()], None, async_op)


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Starts sending ``tensor`` to rank ``dst``; returns a Work."""
    _check_tensor(tensor, "tensor", "isend")
    pg = _resolve(group)
    if pg is None:
        return None
    peer = _group_rank(pg, dst, group_dst, "isend")
    if (nc := _nccl(pg, tensor)) is not None:
        return nc.isend(pg, tensor, peer)
    b = _mb.Buffer(tensor)
    return Work(pg, "send", [pg.comm.Isend(b.arr, dest=peer, tag=tag)])


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Starts receiving into ``tensor`` from rank ``src`` (None: any rank); returns a
    Work."""
    _check_tensor(tensor, "tensor", "irecv")
    pg = _resolve(group)
    if pg is None:
        return None
    if (nc := _nccl(pg, tensor)) is not None:
        return nc.irecv(pg, tensor, None if src is None and group_src is None else
                        _group_rank(pg, src, group_src, "irecv"))
    MPI = _mpi()
    peer = MPI.ANY_SOURCE if src is None and group_src is None else \
        _group_rank(pg, src, group_src, "irecv")
    b = _mb.Buffer(tensor)
    status = MPI.Status()
    req = pg.comm.Irecv(b.arr, source=peer, tag=tag)
    w = Work(pg, "recv", [req], statuses=[status])

    def finish():
        # the sender's rank comes from the status of the completed request
        w._result = pg.ranks[status.Get_source() if peer == MPI.ANY_SOURCE else peer]
        b.finish()
    w._finish = finish
    return w


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Sends ``tensor`` to rank ``dst``."""
    w = isend(tensor, dst, group, tag, group_dst)
    if w is not None:
        w.wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receives into ``tensor`` from rank ``src`` (None: any); returns the sender's rank."""
    w = irecv(tensor, src, group, tag, group_src)
    if w is None:
        return -1
    w.wait()
    return w._result


class P2POp:
    """A point-to-point operation for ``batch_isend_irecv``: ``P2POp(isend, t, peer)``."""

    def __init__(self, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        if op not in (isend, irecv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type "
                             "``dist.isend`` or ``dist.irecv``.")
        self.op, self.tensor, self.peer, self.group, self.tag = op, tensor, peer, group, tag


def batch_isend_irecv(p2p_op_list):
    """Starts every operation of the list; returns their Works."""
    pg = _resolve(p2p_op_list[0].group) if p2p_op_list else None
    if pg is not None and (nc := _nccl(pg, *[p.tensor for p in p2p_op_list])) is not None:
        return nc.batch_isend_irecv(pg, [(p.op is isend, p.tensor, _group_rank(
            pg, p.peer, None, "batch_isend_irecv")) for p in p2p_op_list])
    return [p.op(p.tensor, p.peer, p.group, p.tag) for p in p2p_op_list]


# ---- Python objects (pickled) ----

_OBJ_TAG = 32001     # send_object_list's messages: apart from tensor sends' tags (< MPI_TAG_UB)


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Replaces ``object_list`` on every rank by the (picklable) objects of rank ``src``."""
    pg = _resolve(group)
    if pg is None:
        return
    root = _group_rank(pg, 0 if src is None else src, group_src, "broadcast_object_list")
    if (nc := _nccl(pg)) is not None:
        return nc.broadcast_object_list(pg, object_list, root, device)
    if pg.rank() == root:
        data = pickle.dumps(list(object_list))
        size = np.array([len(data)], np.int64)
    else:
        size = np.zeros(1, np.int64)
    _wait_requests([pg.comm.Ibcast(size, root=root)], pg, "broadcast")
    buf = np.frombuffer(bytearray(data), np.uint8) if pg.rank() == root else \
        np.empty(int(size[0]), np.uint8)
    _wait_requests([pg.comm.Ibcast(buf, root=root)], pg, "broadcast")
    if pg.rank() != root:
        objs = pickle.loads(buf.tobytes())
        for i, o in enumerate(objs[:len(object_list)]):
            object_list[i] = o


def _gather_bytes(pg, data, root=None):
    """Every rank's bytes (all of them when ``root`` is None, else on ``root`` only)."""
    if (nc := _nccl(pg)) is not None:
        return nc.gather_bytes(pg, data, root)
    n = pg.size()
    sizes = np.zeros(n, np.int64)
    mine = np.array([len(data)], np.int64)
    if root is None:
        _wait_requests([pg.comm.Iallgather(mine, sizes)], pg, "allgather")
    else:
        _wait_requests([pg.comm.Igather(mine, sizes if pg.rank() == root else None,
                                        root=root)], pg, "gather")
    src = np.frombuffer(bytearray(data), np.uint8)
    if root is not None and pg.rank() != root:
        _wait_requests([pg.comm.Igatherv(src, None, root=root)], pg, "gather")
        return None
    out = np.empty(int(sizes.sum()), np.uint8)
    counts = sizes.tolist()
    displs = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64).tolist()
    if root is None:
        req = pg.comm.Iallgatherv(src, [out, (counts, displs)])
    else:
        req = pg.comm.Igatherv(src, [out, (counts, displs)], root=root)
    _wait_requests([req], pg, "allgather" if root is None else "gather")
    return [out[d:d + c].tobytes() for d, c in zip(displs, counts)]


def all_gather_object(object_list, obj, group=None):
    """Fills ``object_list`` (one entry per rank) with ``obj`` of every rank."""
    pg = _resolve(group)
    if pg is None:
        return
    _check_per_rank("all_gather_object", "object_list", object_list, pg, "entries")
    for i, b in enumerate(_gather_bytes(pg, pickle.dumps(obj))):
        object_list[i] = pickle.loads(b)


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    """Gathers ``obj`` of every rank into ``object_gather_list`` on rank ``dst``."""
    pg = _resolve(group)
    if pg is None:
        return
    root = _group_rank(pg, 0 if dst is None else dst, group_dst, "gather_object")
    got = _gather_bytes(pg, pickle.dumps(obj), root)
    if got is not None:
        if object_gather_list is None or len(object_gather_list) != pg.size():
            raise ValueError("gather_object: object_gather_list must have one entry per rank "
                             "on the destination rank")
        for i, b in enumerate(got):
            object_gather_list[i] = pickle.loads(b)


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None,
                        src=None, group=None, group_src=None):
    """Rank ``src`` sends ``scatter_object_input_list[i]`` to rank ``i``, which finds it in
    ``scatter_object_output_list[0]``."""
    pg = _resolve(group)
    if pg is None:
        return
    root = _group_rank(pg, 0 if src is None else src, group_src, "scatter_object_list")
    objs = [None]
    if pg.rank() == root:
        objs = [list(scatter_object_input_list)]
    broadcast_object_list(objs, pg.ranks[root], group)
    scatter_object_output_list[0] = objs[0][pg.rank()]


def send_object_list(object_list, dst=None, group=None, device=None, group_dst=None):
    """Sends the (picklable) objects of ``object_list`` to rank ``dst``."""
    pg = _resolve(group)
    if pg is None:
        return
    peer = _group_rank(pg, dst, group_dst, "send_object_list")
    if peer == pg.rank():
        raise ValueError("Invalid destination rank: destination rank should not be the "
                         "same as the rank of the current process.")
    data = np.frombuffer(bytearray(pickle.dumps(list(object_list))), np.uint8)
    size = np.array([len(data)], np.int64)
    _wait_requests([pg.comm.Isend(size, dest=peer, tag=_OBJ_TAG)], pg, "send")
    _wait_requests([pg.comm.Isend(data, dest=peer, tag=_OBJ_TAG)], pg, "send")


def recv_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Receives objects from rank ``src`` (None: any rank) into ``object_list``; returns
    the sender's global rank."""
    pg = _resolve(group)
    if pg is None:
        return -1
    MPI = _mpi()
    peer = MPI.ANY_SOURCE if src is None and group_src is None else \
        _group_rank(pg, src, group_src, "recv_object_list")
    size = np.zeros(1, np.int64)
    status = MPI.Status()
    _mb.wait(MPI, [pg.comm.Irecv(size, source=peer, tag=_OBJ_TAG)], pg, "recv",
             statuses=[status])
    # the payload comes from whoever sent the size (it matters with any source)
    sender = status.Get_source()
    data = np.empty(int(size[0]), np.uint8)
    _wait_requests([pg.comm.Irecv(data, source=sender, tag=_OBJ_TAG)], pg, "recv")
    objs = pickle.loads(data.tobytes())
    for i, o in enumerate(objs[:len(object_list)]):
        object_list[i] = o
    return pg.ranks[sender]
