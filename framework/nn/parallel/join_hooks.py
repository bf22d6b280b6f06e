"""DDP's part in ``Join`` (uneven inputs): the collectives a rank that ran out of inputs
runs to match one training iteration of the others, in the same order.

A training iteration (forward then backward) of a rank not joined:
  1. ``Join.notify_join_context``: all-reduce of 1 (the joined ranks' ``Join`` sends 0);
  2. with ``broadcast_buffers``: all-reduce MAX of its group rank (joined: -1), then the
     broadcast of the buffers from that rank (the last one not joined);
  3. all-reduce of 1 if this iteration's backward averages gradients, else 0;
  4. in backward: the mask of used parameters (``find_unused_parameters``), then each
     bucket's all-reduce. A joined rank all-reduces zeros of the same sizes, so the
     average over the initial world size counts its gradients as zeros (PyTorch's shadow
     all-reduce); with ``divide_by_initial_world_size=False`` the ranks not joined rescale
     the average to one over the number of ranks not joined (the sum of step 1).
Once every rank joined, all of them take the parameters and buffers of the last rank to
join (the highest group rank among those).
"""
from ... import distributed as dist
from ...autograd import grad_mode
from ...distributed.algorithms.join import JoinHook


def _all_reduce_value(ddp, value, op=None):
    from ..._ops import creation
    t = creation.full((1,), float(value), device=ddp.join_device)
    dist.all_reduce(t, op if op is not None else dist.ReduceOp.SUM,
                    group=ddp.process_group)
    return int(t.item())


def _common_rank(ddp, take_part):
    """The highest group rank of the ranks with ``take_part``, as a global rank."""
    me = dist.get_rank(ddp.process_group)
    r = _all_reduce_value(ddp, me if take_part else -1, dist.ReduceOp.MAX)
    if r < 0:
        raise ValueError("No rank in the process group can be used as the source of the "
                         "join's model synchronization")
    return r if ddp.process_group is None else dist.get_global_rank(ddp.process_group, r)


def sync_buffers(ddp, joined):
    """Step 2: the buffers from the last rank not joined."""
    if not list(ddp.module.buffers()):
        return
    src = _common_rank(ddp, not joined)
    with grad_mode.no_grad():
        for b in ddp.module.buffers():
            dist.broadcast(b.detach(), src, group=ddp.process_group)


def forward_sync_flag(ddp, join_work):
    """Step 3 on a rank not joined; also the rescaling when the gradients are averaged
    over the ranks not joined."""
    sync = grad_mode.is_grad_enabled() and ddp.require_backward_grad_sync
    _all_reduce_value(ddp, 1 if sync else 0)
    ddp._join_scale = None
    if join_work is not None and not ddp._divide_by_initial_world_size:
        join_work.wait()
        active = int(join_work._join_count.item())
        if active != ddp._world:
            ddp._join_scale = ddp._world / active


class DDPJoinHook(JoinHook):
    """Shadows DDP's collectives on a joined rank (``main_hook``) and gives every rank the
    final model of the last rank to join (``post_hook``)."""

    def __init__(self, ddp, divide_by_initial_world_size):
        self.ddp = ddp
        ddp._divide_by_initial_world_size = divide_by_initial_world_size

    def main_hook(self):
        ddp = self.ddp
        if ddp.broadcast_buffers and ddp.require_forward_param_sync and ddp._world > 1:
            sync_buffers(ddp, joined=True)
        if _all_reduce_value(ddp, 0) == 0:
            return      # that iteration does not average gradients
        self._shadow_backward()

    def _shadow_backward(self):
        from ..._ops import creation
        from ... import int32
        ddp = self.ddp
        works = []
        if ddp.find_unused_parameters:
            mask = creation.zeros((len(ddp._params),), dtype=int32, device=ddp.join_device)
            works.append(dist.all_reduce(mask, dist.ReduceOp.MAX, group=ddp.process_group,
                                         async_op=True))
        for i, b in enumerate(ddp._buckets):
            p0 = b.params[0]
            zeros = creation.zeros((b.numel,), dtype=p0.dtype, device=p0.device)
            if ddp._comm_hook is not None:
                state, hook = ddp._comm_hook
                bucket = dist.GradBucket(i, len(ddp._buckets), zeros, b.offsets, b.params)
                works.append(hook(state, bucket))
            else:
                works.append(dist.all_reduce(zeros, dist.ReduceOp.AVG,
                                             group=ddp.process_group, async_op=True))
        for w in works:
            w.wait()

    def post_hook(self, is_last_joiner):
        ddp = self.ddp
        src = _common_rank(ddp, is_last_joiner)
        with grad_mode.no_grad():
            for t in list(ddp.module.parameters()) + list(ddp.module.buffers()):
                dist.broadcast(t.detach(), src, group=ddp.process_group)
