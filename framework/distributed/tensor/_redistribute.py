"""Moving a DTensor's local data between placements with collectives, differentiably:
Shard -> Replicate is an all-gather (backward: take the local chunk), Replicate -> Shard a
local chunk (backward: all-gather), Partial -> Replicate an all-reduce (backward: the
gradient as it is), Partial -> Shard a reduce-scatter (backward: all-gather), Replicate ->
Partial a local split of the value (backward: the gradient as it is), as PyTorch does.

Uneven shards follow ``torch.chunk``; the collectives need equal parts, so a shard is
padded to ``ceil(n / ranks)`` rows before the all-gather or reduce-scatter."""
from ...autograd.function import Function
from ...autograd import grad_mode
from .. import collectives as C
from ..mpi_backend import ReduceOp
from .placement_types import Partial, Replicate, Shard, chunk_range

_OPS = {"sum": ReduceOp.SUM, "avg": ReduceOp.AVG, "max": ReduceOp.MAX, "min": ReduceOp.MIN}


def _zeros(shape, like):
    from ..._ops import creation
    return creation.zeros(tuple(shape), dtype=like.dtype, device=like.device)


def _empty(shape, like):
    from ..._ops import creation
    return creation.empty(tuple(shape), dtype=like.dtype, device=like.device)


def _cat0(a, b):
    from ..._ops import shape as _shape
    return _shape.cat([a, b], 0)


def _padded_rows(x, rows):
    """``x`` (rows first) with zero rows appended up to ``rows``, contiguous."""
    if x.shape[0] < rows:
        x = _cat0(x, _zeros((rows - x.shape[0],) + tuple(x.shape[1:]), x))
    return x.contiguous()


def gather_dim(x, dim, full, mesh, mesh_dim):
    """The ``full``-row tensor whose chunks along ``dim`` the ranks of ``mesh_dim`` hold."""
    k = mesh.size(mesh_dim)
    if k == 1:
        return x
    step = -(-full // k)
    rows = _padded_rows(x.movedim(dim, 0), step)
    out = _empty((k * step,) + tuple(rows.shape[1:]), x)
    C.all_gather_into_tensor(out, rows, group=mesh.get_group(mesh_dim))
    return out[:full].movedim(0, dim).contiguous()


def chunk_dim(x, dim, mesh, mesh_dim):
    """This rank's ``torch.chunk`` part of ``x`` along ``dim`` (a copy)."""
    k = mesh.size(mesh_dim)
    start, length = chunk_range(x.shape[dim], k, mesh.get_local_rank(mesh_dim))
    return x.narrow(dim, start, length).contiguous()


def reduce_scatter_dim(x, dim, mesh, mesh_dim, reduce_op):
    """This rank's chunk along ``dim`` of the reduction of every rank's ``x``."""
    k = mesh.size(mesh_dim)
    if k == 1:
        return x.clone()
    size = x.shape[dim]
    step = -(-size // k)
    rows = _padded_rows(x.movedim(dim, 0), k * step)
    out = _empty((step,) + tuple(rows.shape[1:]), x)
    C.reduce_scatter_tensor(out, rows, op=_OPS[reduce_op], group=mesh.get_group(mesh_dim))
    _, length = chunk_range(size, k, mesh.get_local_rank(mesh_dim))
    return out[:length].movedim(0, dim).contiguous()


def all_reduce_(x, mesh, mesh_dim, reduce_op):
    y = x.contiguous().clone()
    if mesh.size(mesh_dim) > 1:
        C.all_reduce(y, op=_OPS[reduce_op], group=mesh.get_group(mesh_dim))
    return y


class _AllGather(Function):
    @staticmethod
    def forward(ctx, x, dim, full, mesh, mesh_dim):
        ctx.args = (dim, mesh, mesh_dim)
        return gather_dim(x, dim, full, mesh, mesh_dim)

    @staticmethod
    def backward(ctx, g):
        dim, mesh, mesh_dim = ctx.args
        return chunk_dim(g, dim, mesh, mesh_dim), None, None, None, None


class _Chunk(Function):
    @staticmethod
    def forward(ctx, x, dim, mesh, mesh_dim):
        ctx.args = (dim, x.shape[dim], mesh, mesh_dim)
        return chunk_dim(x, dim, mesh, mesh_dim)

    @staticmethod
    def backward(ctx, g):
        dim, full, mesh, mesh_dim = ctx.args
        return gather_dim(g, dim, full, mesh, mesh_dim), None, None, None


class _AllReduce(Function):
    @staticmethod
    def forward(ctx, x, mesh, mesh_dim, reduce_op):
        return all_reduce_(x, mesh, mesh_dim, reduce_op)

    @staticmethod
    def backward(ctx, g):
        return g, None, None, None


class _ReduceScatter(Function):
    @staticmethod
    def forward(ctx, x, dim, mesh, mesh_dim, reduce_op):
        ctx.args = (dim, x.shape[dim], mesh, mesh_dim)
        return reduce_scatter_dim(x, dim, mesh, mesh_dim, reduce_op)

    @staticmethod
    def backward(ctx, g):
        dim, full, mesh, mesh_dim = ctx.args
        return gather_dim(g, dim, full, mesh, mesh_dim), None, None, None, None


class _Partition(Function):
    @staticmethod
    def forward(ctx, x, mesh, mesh_dim, reduce_op):
        # every rank holds value / n, so that their sum is the value (other ops: the value)
        return x / mesh.size(mesh_dim) if reduce_op == "sum" else x.clone()

    @staticmethod
    def backward(ctx, g):
        return g, None, None, None


class _GradAllReduce(Function):
    """The identity, whose backward sums the gradient over ``mesh_dims``: a replicated
    operand used with a sharded one gets only this rank's part of its gradient."""

    @staticmethod
    def forward(ctx, x, mesh, mesh_dims):
        ctx.args = (mesh, mesh_dims)
        return x.view(x.shape)

    @staticmethod
    def backward(ctx, g):
        mesh, mesh_dims = ctx.args
        for d in mesh_dims:
            g = all_reduce_(g, mesh, d, "sum")
        return g, None, None


def grad_all_reduce(x, mesh, mesh_dims):
    if not mesh_dims or not (x._requires_grad and grad_mode._mode.enabled):
        return x
    return _GradAllReduce.apply(x, mesh, tuple(mesh_dims))


def normalize(placements, ndim):
    """The placements with every ``Shard`` dim made non-negative (checked against ndim)."""
    out = []
    for p in placements:
        if isinstance(p, Shard):
            if not -ndim <= p.dim < max(ndim, 1) or ndim == 0:
                raise IndexError(f"Shard(dim={p.dim}) is out of range for a tensor of "
                                 f"{ndim} dimensions")
            p = Shard(p.dim % ndim)
        elif not isinstance(p, (Replicate, Partial)):
            raise TypeError(f"placements must be Shard, Replicate or Partial, got {p!r}")
        out.append(p)
    return tuple(out)


def local_shape(shape, mesh, placements):
    """The shape of this rank's local tensor for a global ``shape``."""
    shape = list(shape)
    coord = mesh.get_coordinate()
    for i, p in enumerate(placements):
        if isinstance(p, Shard):
            shape[p.dim] = chunk_range(shape[p.dim], mesh.size(i), coord[i])[1]
    return tuple(shape)


def _size_before(shape, dim, mesh, placements, upto):
    size = shape[dim]
    coord = mesh.get_coordinate()
    for j in range(upto):
        if placements[j] == Shard(dim):
            size = chunk_range(size, mesh.size(j), coord[j])[1]
    return size


def redistribute_local(x, mesh, src, dst, shape):
    """The local tensor of placements ``dst`` from local tensor ``x`` of placements ``src``
    (both normalized) of a DTensor of global ``shape``; differentiable."""
    n = len(src)
    cur = list(src)
    need = [cur[i] != dst[i] for i in range(n)]
    # a dim sharded on several mesh dims nests in mesh-dim order: changing an outer one
    # means undoing the inner ones first and redoing them after
    for i in range(n):
        if need[i]:
            dims = {p.dim for p in (cur[i], dst[i]) if isinstance(p, Shard)}
            for j in range(i + 1, n):
                if any(cur[j] == Shard(d) or dst[j] == Shard(d) for d in dims):
                    need[j] = True
    for i in reversed(range(n)):
        if not need[i]:
            continue
        c, t = cur[i], dst[i]
        if isinstance(c, Shard):
            full = _size_before(shape, c.dim, mesh, cur, i)
            x = _AllGather.apply(x, c.dim, full, mesh, i)
            cur[i] = Replicate()
        elif isinstance(c, Partial):
            if isinstance(t, Shard):
                x = _ReduceScatter.apply(x, t.dim, mesh, i, c.reduce_op)
                cur[i] = t
            else:
                x = _AllReduce.apply(x, mesh, i, c.reduce_op)
                cur[i] = Replicate()
    for i in range(n):
        if cur[i] == dst[i]:
            continue
        t = dst[i]
        if isinstance(t, Shard):
            x = _Chunk.apply(x, t.dim, mesh, i)
        elif isinstance(t, Partial):
            x = _Partition.apply(x, mesh, i, t.reduce_op)
        cur[i] = t
    return x
