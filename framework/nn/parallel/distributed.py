"""``DistributedDataParallel``: data parallelism across the processes of a group.

Each process holds a replica of the module and trains on its own part of the batch. The
parameters are averaged into the same values everywhere by averaging the gradients: they
are grouped in buckets (about ``bucket_cap_mb`` each, in the reverse order of the
parameters, the order backward produces their gradients), and a bucket's all-reduce starts
(nonblocking) as soon as the gradients of all its parameters were accumulated, while the
backward pass goes on. The gradient hook that completes the last bucket waits for them all
and writes the averages back into ``.grad``, so ``.grad`` holds them when ``backward()``
returns.
"""
from contextlib import contextmanager

from ... import distributed as dist
from ...autograd import grad_mode
from ...autograd.graph import reached_leaves
from ...distributed.algorithms.join import Join, Joinable, _JoinConfig
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]

from . import join_hooks as _join_hooks  # noqa: E402

_UNFINISHED = (
    "Expected to have finished reduction in the prior iteration before starting a new one. "
    "This error indicates that your module has parameters that were not used in producing "
    "loss. You can enable unused parameter detection by passing the keyword argument "
    "`find_unused_parameters=True` to `framework.nn.parallel.DistributedDataParallel`, and "
    "by making sure all `forward` function outputs participate in calculating loss.")


class _Bucket:
    def __init__(self, params):
        self.params = params
        self.offsets = []
        n = 0
        for p in params:
            self.offsets.append(n)
            n += p.numel()
        self.numel = n
        self.flat = None
        self.pending = 0
        self.work = None


def _tensors_in(obj, out):
    from ..._tensor import Tensor
    if isinstance(obj, Tensor):
        out.append(obj)
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            _tensors_in(o, out)
    elif isinstance(obj, dict):
        for o in obj.values():
            _tensors_in(o, out)
    return out


def _used_leaves(outputs):
    """The ids of the leaf tensors the autograd graph of ``outputs`` reaches."""
    return {id(v) for v in reached_leaves(_tensors_in(outputs, []))}


class DistributedDataParallel(Module, Joinable):
    """Wraps ``module`` for data-parallel training over ``process_group`` (default: the
    default group). Parameters and buffers are broadcast from rank 0 at construction, the
    gradients averaged over the ranks during ``backward``.

    ``find_unused_parameters``: find, after each forward, the parameters the output does not
    depend on, and count them as ready (their gradient as zero) so the reduction finishes.
    ``broadcast_buffers``: copy rank 0's buffers to every rank at each forward.
    ``join()``: the context manager for uneven inputs across ranks (join_hooks.py)."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, **kwargs):
        super().__init__()
        self.module = module
        self.process_group = process_group
        self.device_ids = device_ids
        self.output_device = output_device
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb)
                                    * 1024 * 1024)
        self._world = dist.get_world_size(process_group)
        params = [p for p in module.parameters() if p.requires_grad]
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        self._params = params
        self._verify_same_model(params)
        self._sync_states()
        self._build_buckets(params)
        self._grad_hook_handles = [p.register_post_accumulate_grad_hook(self._grad_ready) for p in params]
        self._sync_now = False          # this forward's backward averages gradients
        self._started = False           # a gradient hook ran in the current backward
        self._unused = ()
        self._used_work = None
        self._comm_hook = None
        self._join_config = _JoinConfig.construct_disabled_join_config()
        self._divide_by_initial_world_size = True
        self._join_scale = None     # world size / ranks not joined, when not dividing by
        #                             the initial world size

    def register_comm_hook(self, state, hook):
        """Replaces the all-reduce of each gradient bucket by ``hook(state, bucket)``, which
        gets a ``GradBucket`` (the bucket's local, not yet averaged gradients) and returns a
        future whose value is the reduced flat buffer; DDP writes it into ``.grad``."""
        if not callable(hook):
            raise TypeError("Communication hook must be callable.")
        if self._comm_hook is not None:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only "
                               "be called once.")
        self._comm_hook = (state, hook)

    # ---- construction ---------------------------------------------------------------------
    def _verify_same_model(self, params):
        shapes = [(tuple(p.shape), str(p.dtype)) for p in params]
        everyone = [None] * self._world
        dist.all_gather_object(everyone, shapes, group=self.process_group)
        for r, s in enumerate(everyone):
            if len(s) != len(shapes):
                raise RuntimeError(
                    f"DDP expects same model across all ranks, but Rank "
                    f"{dist.get_rank(self.process_group)} has {len(shapes)} params, while "
                    f"rank {r} has inconsistent {len(s)} params.")
            for i, (a, b) in enumerate(zip(shapes, s)):
                if a != b:
                    raise RuntimeError(
                        f"DDP expects same model across all ranks, but parameter {i} has "
                        f"shape/dtype {a} here and {b} on rank {r}.")

    def _sync_states(self):
        """Rank 0's parameters and buffers to every rank."""
        src = 0 if self.process_group is None else \
            dist.get_global_rank(self.process_group, 0)
        with grad_mode.no_grad():
            for t in list(self.module.parameters()) + list(self.module.buffers()):
                dist.broadcast(t.detach(), src, group=self.process_group)

    def _build_buckets(self, params):
        """Buckets of about ``bucket_bytes_cap`` bytes (the first: at most 1 MiB), one dtype
        and device each, in the reverse order of ``params``."""
        self._buckets = []
        self._where = {}
        open_ = {}
        for p in reversed(params):
            key = (p.dtype, str(p.device))
            cur = open_.get(key)
            # the first bucket is small (1 MiB, as PyTorch's) so its all-reduce starts early
            cap = min(self.bucket_bytes_cap, 1 << 20) if not self._buckets else \
                self.bucket_bytes_cap
            if cur is not None and (sum(q.numel() for q in cur) + p.numel())\
                    * p.element_size() > cap:
                self._buckets.append(_Bucket(cur))
                cur = None
            if cur is None:
                cur = open_[key] = []
            cur.append(p)
        for cur in open_.values():
            if cur:
                self._buckets.append(_Bucket(cur))
        for bi, b in enumerate(self._buckets):
            for j, p in enumerate(b.params):
                self._where[id(p)] = (bi, j)
        self._index = {id(p): i for i, p in enumerate(params)}

    # ---- forward ----------------------------------------------------------------------------
    def forward(self, *inputs, **kwargs):
        if self._started and self._pending_buckets():
            raise RuntimeError(_UNFINISHED)
        self._reset()
        join_work = Join.notify_join_context(self)
        if self.broadcast_buffers and self.require_forward_param_sync and self._world > 1:
            if self._join_config.enable:
                _join_hooks.sync_buffers(self, joined=False)
            else:
                src = 0 if self.process_group is None else \
                    dist.get_global_rank(self.process_group, 0)
                with grad_mode.no_grad():
                    for b in self.module.buffers():
                        dist.broadcast(b.detach(), src, group=self.process_group)
        if self._join_config.enable:
            _join_hooks.forward_sync_flag(self, join_work)
        out = self.module(*inputs, **kwargs)
        if grad_mode.is_grad_enabled() and self.require_backward_grad_sync:
            self._sync_now = True
            if self.find_unused_parameters:
                used = _used_leaves(out)
                self._unused = [p for p in self._params if id(p) not in used]
        return out

    def _reset(self):
        self._sync_now = False
        self._started = False
        self._unused = ()
        self._used_work = None
        self._join_scale = None
        self._next_bucket = 0
        self._ready = set()
        for b in self._buckets:
            b.pending = len(b.params)
            b.work = None

    def _pending_buckets(self):
        return self._next_bucket < len(self._buckets) or any(
            b.work is not None for b in self._buckets)

    # ---- uneven inputs (join_hooks.py) -----------------------------------------------------
    def join(self, divide_by_initial_world_size=True, enable=True,
             throw_on_early_termination=False):
        """Context manager for training with uneven inputs: a rank that runs out of inputs
        shadows the gradient all-reduces of the others (contributing zeros) until all are
        done, then every rank takes the parameters of the last rank to finish.
        ``divide_by_initial_world_size``: average the gradients over the whole world size
        (True) or over the ranks not yet joined (False)."""
        return Join([self], enable, throw_on_early_termination,
                    divide_by_initial_world_size=divide_by_initial_world_size)

    def join_hook(self, **kwargs):
        """DDP's ``JoinHook`` (``divide_by_initial_world_size``, default True)."""
        divide = kwargs.get("divide_by_initial_world_size", True)
        return _join_hooks.DDPJoinHook(self, divide)

    @property
    def join_device(self):
        return self._params[0].device

    @property
    def join_process_group(self):
        return self.process_group

    @contextmanager
    def no_sync(self):
        """Gradients accumulate locally inside this context; the first backward after it
        averages the accumulated gradients."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    # ---- the reducer ------------------------------------------------------------------------
    def _grad_ready(self, p):
        """The post-accumulate-grad hook of every parameter."""
        if not self._sync_now:
            return
        if not self._started:
            self._started = True
            if self.find_unused_parameters:
                self._start_used_mask()
                for q in self._unused:
                    self._mark_ready(q)
        self._mark_ready(p)

    def _start_used_mask(self):
        """All-reduces (MAX) which parameters were used, so that one unused by every rank
        keeps ``.grad`` None as without DDP."""
        from ..._ops import creation
        from ... import int32
        unused = {id(q) for q in self._unused}
        # on the parameters' device: an nccl group carries no cpu tensors
        mask = creation.tensor([0 if id(q) in unused else 1 for q in self._params],
                               dtype=int32, device=self._params[0].device)
        self._used_mask = mask
        self._used_work = dist.all_reduce(mask, dist.ReduceOp.MAX,
                                          group=self.process_group, async_op=True)

    def _mark_ready(self, p):
        if id(p) in self._ready:
            raise RuntimeError(
                f"Expected to mark a variable ready only once. This error is caused by one "
                f"of the following reasons: 1) Use of a module parameter outside the "
                f"`forward` function. 2) Reused parameters in multiple reentrant backward "
                f"passes. Parameter index {self._index[id(p)]} was marked ready twice.")
        self._ready.add(id(p))
        bi, _ = self._where[id(p)]
        b = self._buckets[bi]
        b.pending -= 1
        if b.pending == 0:
            # buckets start in order on every rank: MPI matches collectives by order
            while self._next_bucket < len(self._buckets) and \
                    self._buckets[self._next_bucket].pending == 0:
                self._launch(self._buckets[self._next_bucket])
                self._next_bucket += 1
            if self._next_bucket == len(self._buckets):
                self._finalize()

    def _launch(self, b):
        from ..._ops import creation
        p0 = b.params[0]
        if b.flat is None:
            b.flat = creation.empty((b.numel,), dtype=p0.dtype, device=p0.device)
        with grad_mode.no_grad():
            for p, o in zip(b.params, b.offsets):
                view = b.flat[o:o + p.numel()]
                if p.grad is None:
                    view.zero_()
                else:
                    view.copy_(p.grad.detach().reshape(-1))
        if self._comm_hook is not None:
            state, hook = self._comm_hook
            bucket = dist.GradBucket(self._buckets.index(b), len(self._buckets), b.flat,
                                     b.offsets, b.params)
            b.work = hook(state, bucket)
            if not hasattr(b.work, "wait"):
                raise RuntimeError("A DDP communication hook must return a future, got "
                                   f"{type(b.work).__name__}")
            return
        b.work = dist.all_reduce(b.flat, dist.ReduceOp.AVG, group=self.process_group,
                                 async_op=True)

    def _finalize(self):
        """Waits for every bucket and writes the averaged gradients into ``.grad``."""
        used = None
        if self._used_work is not None:
            self._used_work.wait()
            used = self._used_mask.tolist()
        with grad_mode.no_grad():
            for b in self._buckets:
                # a Work fills b.flat in place; a comm hook's future gives the result
                reduced = b.work.wait()
                b.work = None
                if self._comm_hook is None:
                    reduced = b.flat
                elif isinstance(reduced, (list, tuple)) and len(reduced) == 1:
                    reduced = reduced[0]
                if self._join_scale is not None:
                    reduced.mul_(self._join_scale)
                for p, o in zip(b.params, b.offsets):
                    avg = reduced[o:o + p.numel()].view(p.shape)
                    if p.grad is not None:
                        p.grad.copy_(avg)
                    elif used is None or used[self._index[id(p)]]:
                        p.grad = avg.clone().to(p.dtype)
        self._sync_now = False
        self._started = False
