"""The machinery under ``fully_shard`` and ``FullyShardedDataParallel``: one ``FSDPState``
per sharded module, one ``FSDPParam`` per parameter it manages.

A managed parameter is replaced by its dim-0 shard: rank ``r`` of a group of ``W`` keeps
rows ``[r*c, (r+1)*c)`` of the full parameter, ``c = ceil(dim0 / W)`` (the last ranks may
hold fewer rows, or none); collectives work on buffers padded to ``c*W`` rows. Unlike
PyTorch, where the sharded parameter is a ``DTensor``, it is a plain ``Parameter`` holding
the local rows (PyTorch's ``param.to_local()``); ``FSDPParam.full_tensor()`` gathers it.

The module's forward pre-hook all-gathers its parameters (one collective per dtype, the
shards side by side) and passes them through ``_Unshard``, an autograd function whose
outputs are the full parameters and whose backward, once the gradients of all of them are
there, reduce-scatters the full gradients (averaged over the group, in one collective)
into the shards' ``.grad``. While forward runs with ``reshard_after_forward``, tensors
saved for backward that are (views of) full parameters are packed as a token, so the full
parameters are freed after forward; backward gathers them again when it first unpacks
one, and frees them once their gradients were reduced.

Differences from PyTorch: a parameter of the module that forward did not use gets a zero
gradient rather than None; inside forward, the full parameters are non-leaf tensors (the
outputs of ``_Unshard``), not ``Parameter``s.
"""
import math

from ...autograd import grad_mode
from ...autograd.function import Function
from ...autograd.graph import saved_tensors_hooks
from ..._tensor import Tensor
from .. import collectives as C
from ..mpi_backend import ReduceOp
from ..process_group import _resolve

__all__ = ["FSDPParam", "FSDPState"]

# storage id -> FSDPParam of every full parameter now visible to a forward; what the pack
# hook recognises
_LIVE = {}
# number of FSDP forwards in progress: the first one to start is the root's
_ACTIVE = [0]


def _empty(shape, dtype, device):
    from ..._ops import creation
    return creation.empty(tuple(shape), dtype=dtype, device=device)


def _zeros(shape, dtype, device):
    from ..._ops import creation
    return creation.zeros(tuple(shape), dtype=dtype, device=device)


class FSDPParam:
    """One managed parameter: its shard (``sharded_param``), where the module holds it
    (``slots``), and how to gather it and reduce its gradient."""

    def __init__(self, state, param, slots):
        from ...nn.parameter import Parameter
        self.state = state
        self.slots = slots                  # (module, attribute name) holding it
        self.full_shape = tuple(param.shape)
        self.orig_dtype = param.dtype
        group = state.group
        self.world = _resolve(group).size() if not state.replicate else 1
        self.rank = _resolve(group).rank() if not state.replicate else 0
        rows = self.full_shape[0] if self.full_shape else 1
        self.rows = rows
        self.rest = self.full_shape[1:] if self.full_shape else ()
        self.row_numel = math.prod(self.rest)
        self.chunk = max(1, math.ceil(rows / self.world))
        start = min(self.rank * self.chunk, rows)
        stop = min(start + self.chunk, rows)
        self.local_rows = stop - start
        with grad_mode.no_grad():
            full = param.detach().reshape((rows,) + self.rest)
            shard = full[start:stop].clone()
        self.sharded_param = Parameter(shard, requires_grad=param.requires_grad)
        self.sharded_param._fsdp_param = self
        self.acc_grad = None                # full gradient kept while sync is off
        self.bwd_full = None                # the full parameter gathered again for backward
        self.keep_full = False              # bwd_full kept for the next forward

    # ---- communication --------------------------------------------------------------
    def gather(self, dtype=None):
        """The full parameter (no autograd) in ``dtype`` (default: the shard's), laid out
        at offset 0 of a fresh buffer of ``chunk*world`` rows."""
        shard = self.sharded_param.detach()
        dtype = dtype or shard.dtype
        if self.state.replicate:
            out = _empty(shard.shape, dtype, shard.device)
            out.copy_(shard)
            return out.view(self.full_shape)
        with grad_mode.no_grad():
            if self.local_rows == self.chunk and shard.dtype is dtype:
                src = shard.contiguous()
            else:
                src = _zeros((self.chunk,) + self.rest, dtype, shard.device)
                if self.local_rows:
                    src[:self.local_rows].copy_(shard)
            out = _empty((self.chunk * self.world,) + self.rest, dtype, shard.device)
            C.all_gather_into_tensor(out, src, group=self.state.group)
            full = out[:self.rows] if self.rows != self.chunk * self.world else out
            return full.view(self.full_shape)

    def full_tensor(self):
        """The full parameter as a new tensor in the shard's dtype (every rank calls it)."""
        full = self.gather()
        # without padding the gathered buffer is the whole full parameter already
        return full if self.rows == self.chunk * self.world else full.clone()

    def shard_of(self, full):
        """This rank's rows of a full value of the parameter."""
        start = min(self.rank * self.chunk, self.rows)
        return full.reshape((self.rows,) + self.rest)[start:start + self.local_rows]

    # ---- the module's attribute -------------------------------------------------------
    def show(self, tensor):
        for module, name in self.slots:
            module._parameters[name] = tensor


def _by_key(items, key):
    """``items`` grouped by ``key(item)``, groups in first-seen order (the same on every
    rank, which MPI needs: collectives match by order)."""
    out = {}
    for it in items:
        out.setdefault(key(it), []).append(it)
    return out.values()


def _gather_many(fps, dtype):
    """The full parameters of ``fps`` (no autograd), each in a buffer of its own: one
    all-gather per dtype of the shards of all of them, side by side."""
    out = {}
    for group in _by_key(fps, lambda fp: (dtype or fp.sharded_param.dtype,
                                          str(fp.sharded_param.device))):
        fp0 = group[0]
        if fp0.state.replicate or len(group) == 1:
            for fp in group:
                out[fp] = fp.gather(dtype)
            continue
        dt, device, world = dtype or fp0.sharded_param.dtype, fp0.sharded_param.device, \
            fp0.world
        sizes = [fp.chunk * fp.row_numel for fp in group]
        total = sum(sizes)
        src = _zeros((total,), dt, device)
        off = 0
        for fp, n in zip(group, sizes):
            if fp.local_rows:
                src[off:off + fp.local_rows * fp.row_numel].copy_(
                    fp.sharded_param.detach().reshape(-1))
            off += n
        flat = _empty((world * total,), dt, device)
        C.all_gather_into_tensor(flat, src, group=fp0.state.group)
        table = flat.view(world, total)
        off = 0
        for fp, n in zip(group, sizes):
            buf = _empty((fp.chunk * world,) + fp.rest, dt, device)
            buf.view(world, n).copy_(table[:, off:off + n])
            full = buf[:fp.rows] if fp.rows != fp.chunk * world else buf
            out[fp] = full.view(fp.full_shape)
            off += n
    return [out[fp] for fp in fps]


def _reduce_many(state, fps, grads):
    """The full gradients of this rank to the shards' gradients, averaged over the group:
    one reduce-scatter (NO_SHARD: all-reduce) per dtype. While gradient sync is off they
    are kept (summed) instead, and None returned."""
    rdtype = state.mp.reduce_dtype or state.mp.param_dtype
    gs = []
    for fp, grad in zip(fps, grads):
        g = grad.detach().to(rdtype or grad.dtype)
        if fp.acc_grad is not None:
            g = g + fp.acc_grad
            fp.acc_grad = None
        gs.append(g)
    if not state.requires_gradient_sync:
        for fp, g, grad in zip(fps, gs, grads):
            # the incoming gradient may be shared with other branches of the graph: what
            # is kept must be a buffer of our own
            fp.acc_grad = g if g._storage is not grad._storage else g.clone()
        return [None] * len(fps)
    out = {}
    for group in _by_key(list(zip(fps, gs)), lambda x: (x[1].dtype, str(x[1].device))):
        dt, device = group[0][1].dtype, group[0][1].device
        world = group[0][0].world
        sizes = [fp.chunk * fp.row_numel for fp, _ in group]
        total = sum(sizes)
        # rank r's segment holds rows [r*chunk, (r+1)*chunk) of every padded gradient
        table = _zeros((world, total), dt, device)
        off = 0
        for (fp, g), n in zip(group, sizes):
            if fp.rows == fp.chunk * world:
                table[:, off:off + n].copy_(g.reshape(world, n))
            else:
                padded = _zeros((world * n,), dt, device)
                padded[:g.numel()].copy_(g.reshape(-1))
                table[:, off:off + n].copy_(padded.view(world, n))
            off += n
        if state.replicate:
            C.all_reduce(table, ReduceOp.AVG, group=state.group)
            mine = table.view(-1)
        else:
            mine = _empty((total,), dt, device)
            C.reduce_scatter_tensor(mine, table.view(-1), ReduceOp.AVG, group=state.group)
        off = 0
        for (fp, _), n in zip(group, sizes):
            part = mine[off:off + fp.local_rows * fp.row_numel]
            shard = fp.sharded_param
            # a buffer of its own per parameter (.grad must not alias another's)
            g = part.to(shard.dtype) if part.dtype is not shard.dtype else part.clone()
            out[fp] = g.view(tuple(shard.shape))
            off += n
    return [out[fp] for fp in fps]


class _Unshard(Function):
    """The shards of a module's parameters -> their full values (gathered beforehand);
    backward: the full gradients -> the shards' gradients, all at once."""

    @staticmethod
    def forward(ctx, state, fps, *tensors):
        ctx.state, ctx.fps = state, fps
        return tuple(tensors[len(fps):])

    @staticmethod
    def backward(ctx, *grads):
        state, fps = ctx.state, ctx.fps
        for fp in fps:
            if state.reshard_after_backward:
                fp.bwd_full = None
            else:
                fp.keep_full = fp.bwd_full is not None
        shard_grads = _reduce_many(state, fps, grads)
        return (None, None) + tuple(shard_grads) + (None,) * len(fps)


class _Token:
    """A saved (view of a) full parameter, packed while forward reshards after it."""
    __slots__ = ("fp", "shape", "stride", "offset")

    def __init__(self, fp, t):
        self.fp, self.shape, self.stride, self.offset = fp, tuple(t.shape), t.stride(), \
            t.storage_offset()


def _pack(t):
    fp = _LIVE.get(id(t._storage))
    return t if fp is None else _Token(fp, t)


def _unpack(x):
    if x.__class__ is not _Token:
        return x
    full = x.fp.state.full_for_backward(x.fp)
    return full.as_strided(x.shape, x.stride, x.offset)


def _map_tensors(obj, fn):
    if isinstance(obj, Tensor):
        return fn(obj)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(_map_tensors(o, fn) for o in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(_map_tensors(o, fn) for o in obj)
    if isinstance(obj, dict):
        return {k: _map_tensors(v, fn) for k, v in obj.items()}
    return obj


def _cast(dtype):
    return lambda t: t.to(dtype) if t.is_floating_point() and t.dtype is not dtype else t


class FSDPState:
    """The sharding state of one module: its managed parameters, the group they are
    sharded over, and the forward hooks that gather and free them."""

    def __init__(self, module, params, group, reshard_after_forward, mp, replicate=False):
        self.module = module
        self.group = group
        self.mp = mp
        self.replicate = replicate      # NO_SHARD: full copies, gradients all-reduced
        if _resolve(group) is None:
            raise ValueError("fully_shard: this rank is not a member of the mesh's group")
        self.reshard_after_forward = reshard_after_forward    # None: True but for the root
        self.reshard_after_backward = True
        self.requires_gradient_sync = True
        self.is_root = None
        self.unsharded = False
        self._hooks_ctx = []
        self.fsdp_params = [FSDPParam(self, p, slots) for p, slots in params]
        for fp in self.fsdp_params:
            fp.show(fp.sharded_param)
        self.handles = [
            module.register_forward_pre_hook(self._pre_forward, prepend=True,
                                             with_kwargs=True),
            module.register_forward_hook(self._post_forward, always_call=True),
        ]

    def _reshards_after_forward(self):
        if self.reshard_after_forward is None:
            return not self.is_root
        return bool(self.reshard_after_forward)

    # ---- unshard / reshard ---------------------------------------------------------------
    def unshard(self):
        """Gathers every managed parameter and shows the full ones to the module (through
        ``_Unshard``, so gradients flow back to the shards)."""
        if self.unsharded:
            return
        # what backward gathered is reused only when it kept it on purpose (no reshard
        # after backward: accumulation without an optimizer step in between)
        need = [fp for fp in self.fsdp_params if not fp.keep_full]
        gathered = dict(zip(need, _gather_many(need, self.mp.param_dtype)))
        fulls = {}
        for fp in self.fsdp_params:
            fulls[fp] = fp.bwd_full if fp.keep_full else gathered[fp]
            fp.bwd_full, fp.keep_full = None, False
        if grad_mode.is_grad_enabled():
            train = [fp for fp in self.fsdp_params if fp.sharded_param.requires_grad]
            if train:
                outs = _Unshard.apply(self, train, *[fp.sharded_param for fp in train],
                                      *[fulls[fp] for fp in train])
                fulls.update(zip(train, outs))
        for fp in self.fsdp_params:
            _LIVE[id(fulls[fp]._storage)] = fp
            fp.show(fulls[fp])
        self.unsharded = True

    def reshard(self):
        """Shows the shards to the module again and drops this state's full parameters."""
        for fp in self.fsdp_params:
            for module, name in fp.slots[:1]:
                cur = module._parameters.get(name)
                if cur is not None and cur is not fp.sharded_param:
                    _LIVE.pop(id(cur._storage), None)
            fp.show(fp.sharded_param)
        self.unsharded = False

    def full_for_backward(self, fp):
        """``fp``'s full parameter for a backward that unpacks it: gathered again (with
        every managed parameter freed since) at the first use."""
        if fp.bwd_full is None:
            with grad_mode.no_grad():
                missing = [q for q in self.fsdp_params if q.bwd_full is None]
                for q, full in zip(missing, _gather_many(missing, self.mp.param_dtype)):
                    q.bwd_full = full
        return fp.bwd_full

    # ---- forward hooks -------------------------------------------------------------------
    def _pre_forward(self, module, args, kwargs):
        if self.is_root is None:
            self.is_root = _ACTIVE[0] == 0
        _ACTIVE[0] += 1
        self.unshard()
        if self._reshards_after_forward():
            ctx = saved_tensors_hooks(_pack, _unpack)
            ctx.__enter__()
            self._hooks_ctx.append(ctx)
        else:
            self._hooks_ctx.append(None)
        if self.mp.param_dtype is not None and self.mp.cast_forward_inputs:
            cast = _cast(self.mp.param_dtype)
            args, kwargs = _map_tensors(args, cast), _map_tensors(kwargs, cast)
        return args, kwargs

    def _post_forward(self, module, args, output):
        _ACTIVE[0] = max(0, _ACTIVE[0] - 1)
        ctx = self._hooks_ctx.pop() if self._hooks_ctx else None
        if ctx is not None:
            ctx.__exit__(None, None, None)
        # the module shows its shards between forwards; with reshard_after_forward=False
        # the full parameters stay alive in the autograd graph until backward
        self.reshard()
        if self.mp.output_dtype is not None:
            output = _map_tensors(output, _cast(self.mp.output_dtype))
        return output

    def remove(self):
        for h in self.handles:
            h.remove()
