"""Pipeline schedules: the order in which a rank runs forwards and backwards of
microbatches (PyTorch's ``torch.distributed.pipelining.schedules``).

``step(*args, target=None, losses=None, **kwargs)`` takes the whole batch: the first stage
gets the inputs, the last stage the ``target``; both are split into ``n_microbatches``
along dimension 0. The last stage computes ``loss_fn(output, target)`` per microbatch,
fills ``losses`` with those losses and returns the merged output (None elsewhere).
Parameter gradients accumulate over the microbatches and, with ``scale_grads=True``, are
divided by ``n_microbatches`` at the end, which matches a ``loss_fn`` that averages.
"""
from ..._tensor import Tensor
from ...autograd import is_grad_enabled
from ...utils._pytree import tree_flatten
from .. import collectives as C
from .microbatch import TensorChunkSpec, _split_tensor, merge_chunks, \
    split_args_kwargs_into_chunks

_TARGET_CHUNK_SPEC = TensorChunkSpec(0)


def _start(ops):
    return C.batch_isend_irecv(ops) if ops else []


def _wait(works):
    for w in works:
        if w is not None:
            w.wait()


class _PipelineSchedule:
    def __init__(self, n_microbatches, loss_fn=None, args_chunk_spec=None,
                 kwargs_chunk_spec=None, output_merge_spec=None, scale_grads=True):
        self._n_microbatches = n_microbatches
        self._loss_fn = loss_fn
        self.scale_grads = scale_grads
        self._args_chunk_spec = args_chunk_spec
        self._kwargs_chunk_spec = kwargs_chunk_spec
        self._output_merge_spec = output_merge_spec
        self._has_backward = loss_fn is not None
        self._internal_losses = []

    def _maybe_compute_loss(self, stage, output, target_mbs, mb_index, loss_kwargs=None):
        if stage.is_last and self._loss_fn is not None:
            self._internal_losses.append(
                self._loss_fn(output, target_mbs[mb_index], **(loss_kwargs or {})))

    def _maybe_get_loss(self, stage, mb_index):
        if stage.is_last and self._loss_fn is not None:
            if not 0 <= mb_index < len(self._internal_losses):
                raise RuntimeError(
                    f"Loss for microbatch {mb_index} is not available. "
                    f"Available losses for microbatches: {self._internal_losses}")
            return self._internal_losses[mb_index]
        return None

    def _update_losses(self, stages, losses):
        if any(s.is_last for s in stages) and losses is not None:
            if len(self._internal_losses) != self._n_microbatches:
                raise RuntimeError(f"Expecting {self._n_microbatches} losses but got "
                                   f"{len(self._internal_losses)}")
            losses.clear()
            losses.extend(self._internal_losses)
        self._internal_losses.clear()

    def _check_inputs(self, arg_mbs, kwarg_mbs, target_mbs, losses):
        def check(mbs, name):
            if not isinstance(mbs, list):
                raise TypeError(f"{name} must be a list but got a {type(mbs)}")
            if len(mbs) != self._n_microbatches:
                raise ValueError(f"Expecting {self._n_microbatches} {name} but got {len(mbs)}")

        if arg_mbs is not None:
            check(arg_mbs, "arg_mbs")
        else:
            arg_mbs = [()] * self._n_microbatches
        if kwarg_mbs is not None:
            check(kwarg_mbs, "kwarg_mbs")
        else:
            kwarg_mbs = [{}] * self._n_microbatches
        if target_mbs is not None:
            check(target_mbs, "target_mbs")
        if losses is not None and not isinstance(losses, list):
            raise TypeError(f"losses must be a list but got a {type(losses)}")
        return arg_mbs, kwarg_mbs

    def _split_inputs(self, args, kwargs=None):
        if args or kwargs:
            return split_args_kwargs_into_chunks(args, kwargs, self._n_microbatches,
                                                 self._args_chunk_spec,
                                                 self._kwargs_chunk_spec)
        # middle and last stages get no inputs
        return [()] * self._n_microbatches, [{}] * self._n_microbatches

    def _merge_outputs(self, output_chunks):
        return merge_chunks(output_chunks, self._output_merge_spec)

    def step(self, *args, target=None, losses=None, return_outputs=True, loss_kwargs=None,
             **kwargs):
        """Runs one iteration with the *whole-batch* input, split into microbatches."""
        if self._has_backward and not is_grad_enabled():
            raise RuntimeError(
                "step() requires gradients to be enabled for backward computation; it "
                "should not be used under torch.no_grad() context. Please call eval() "
                "instead.")
        for stage in self._stages:
            stage.has_backward = self._has_backward
            stage.clear_runtime_states()
        args_split, kwargs_split = self._split_inputs(args, kwargs)
        targets_split = list(_split_tensor(target, _TARGET_CHUNK_SPEC, self._n_microbatches)) \
            if target is not None else None
        if self._num_stages > 1:
            self._check_even(args_split, "inputs")
            self._check_even(kwargs_split, "keyword inputs")
            self._check_even(targets_split or [], "target")
        self._step_microbatches(args_split, kwargs_split, targets_split, losses,
                                return_outputs, loss_kwargs)
        for stage in self._stages:
            if stage.is_last and return_outputs:
                return self._merge_outputs(stage.output_chunks)
        return None

    def _check_even(self, chunks, what):
        shapes = [[tuple(t.shape) for t in tree_flatten(c)[0] if isinstance(t, Tensor)]
                  for c in chunks]
        if any(sh != shapes[0] for sh in shapes):
            raise ValueError(
                f"{type(self).__name__}: the {what} do not split into {self._n_microbatches} "
                f"microbatches of equal shape (got {[sh[0] for sh in shapes if sh]}); stages "
                "exchange activations of a fixed shape, so n_microbatches must divide the "
                "batch size")

    def eval(self, *args, target=None, losses=None, **kwargs):
        """Runs the whole batch through the pipeline, forward only."""
        saved = self._has_backward
        try:
            self._has_backward = False
            return self.step(*args, target=target, losses=losses, **kwargs)
        finally:
            self._has_backward = saved


class PipelineScheduleSingle(_PipelineSchedule):
    """A schedule with one stage per rank. Gradients are divided by ``n_microbatches``
    when ``scale_grads`` is True (for a ``loss_fn`` that averages) and left summed
    otherwise."""

    def __init__(self, stage, n_microbatches, loss_fn=None, args_chunk_spec=None,
                 kwargs_chunk_spec=None, output_merge_spec=None, scale_grads=True):
        super().__init__(n_microbatches, loss_fn, args_chunk_spec, kwargs_chunk_spec,
                         output_merge_spec, scale_grads)
        self._stage = stage
        self._stages = [stage]
        self._num_stages = stage.num_stages
        if stage.group_size != stage.num_stages:
            raise ValueError(f"{type(self).__name__} runs one stage per rank: "
                             f"{stage.num_stages} stages on {stage.group_size} ranks")

    def _forward(self, i, arg_mbs, kwarg_mbs, target_mbs, return_outputs, loss_kwargs):
        _wait(_start(self._stage.get_fwd_recv_ops(i)))
        out = self._stage.forward_one_chunk(i, arg_mbs[i], kwarg_mbs[i],
                                            save_forward_output=return_outputs)
        self._maybe_compute_loss(self._stage, out, target_mbs, i, loss_kwargs)

    def _backward(self, i):
        self._stage.backward_one_chunk(i, loss=self._maybe_get_loss(self._stage, i),
                                       last_backward=i == self._n_microbatches - 1)

    def _finish(self, losses):
        self._update_losses([self._stage], losses)
        if self._has_backward:
            self._stage.perform_reduce_grad(self._n_microbatches if self.scale_grads else 1)


class ScheduleGPipe(PipelineScheduleSingle):
    """The GPipe schedule: all forwards (fill), then all backwards (drain)."""

    def _step_microbatches(self, arg_mbs=None, kwarg_mbs=None, target_mbs=None, losses=None,
                           return_outputs=True, loss_kwargs=None):
        arg_mbs, kwarg_mbs = self._check_inputs(arg_mbs, kwarg_mbs, target_mbs, losses)
        sends = []
        for i in range(self._n_microbatches):
            self._forward(i, arg_mbs, kwarg_mbs, target_mbs, return_outputs, loss_kwargs)
            sends += _start(self._stage.get_fwd_send_ops(i))
        _wait(sends)
        if self._has_backward:
            sends = []
            for i in range(self._n_microbatches):
                _wait(_start(self._stage.get_bwd_recv_ops(i)))
                self._backward(i)
                sends += _start(self._stage.get_bwd_send_ops(i))
            _wait(sends)
        self._finish(losses)


class Schedule1F1B(PipelineScheduleSingle):
    """The 1F1B schedule: after a warmup of forwards, one forward and one backward in turn,
    so that a stage holds at most ``num_stages`` microbatches' activations."""

    def __init__(self, stage, n_microbatches, loss_fn=None, args_chunk_spec=None,
                 kwargs_chunk_spec=None, output_merge_spec=None, scale_grads=True):
        super().__init__(stage, n_microbatches, loss_fn, args_chunk_spec, kwargs_chunk_spec,
                         output_merge_spec, scale_grads)
        if n_microbatches < self._num_stages:
            raise ValueError(f"Number of microbatches ({n_microbatches}) must be greater than "
                             f"or equal to the number of stages ({self._num_stages}).")

    def _step_microbatches(self, arg_mbs=None, kwarg_mbs=None, target_mbs=None, losses=None,
                           return_outputs=True, loss_kwargs=None):
        arg_mbs, kwarg_mbs = self._check_inputs(arg_mbs, kwarg_mbs, target_mbs, losses)
        n, stage = self._n_microbatches, self._stage
        if not self._has_backward:     # forward only: 1F1B has nothing to interleave
            return ScheduleGPipe._step_microbatches(self, arg_mbs, kwarg_mbs, target_mbs,
                                                    losses, return_outputs, loss_kwargs)
        # the last stage warms up with 1 forward, the first with num_stages
        warmup = min(n, self._num_stages - stage.stage_index)
        fwd = bwd = 0
        sent, pending = [], []
        for _ in range(warmup):
            self._forward(fwd, arg_mbs, kwarg_mbs, target_mbs, return_outputs, loss_kwargs)
            _wait(sent)
            pending = stage.get_fwd_send_ops(fwd)
            if fwd != warmup - 1:
                sent, pending = _start(pending), []
            fwd += 1
        # steady state: the held-back forward send goes out with the next backward's
        # receive (one batch, so that NCCL pairs them without deadlock), and each
        # backward's send with the next forward's receive
        while True:
            _wait(_start(pending + stage.get_bwd_recv_ops(bwd)))
            self._backward(bwd)
            bwd_sends = stage.get_bwd_send_ops(bwd)
            bwd += 1
            if fwd == n:
                break
            _wait(_start(bwd_sends + stage.get_fwd_recv_ops(fwd)))
            out = stage.forward_one_chunk(fwd, arg_mbs[fwd], kwarg_mbs[fwd],
                                          save_forward_output=return_outputs)
            self._maybe_compute_loss(stage, out, target_mbs, fwd, loss_kwargs)
            pending = stage.get_fwd_send_ops(fwd)
            fwd += 1
        sent = _start(bwd_sends)
        while bwd < n:     # cooldown
            _wait(_start(stage.get_bwd_recv_ops(bwd)))
            self._backward(bwd)
            _wait(sent)
            sent = _start(stage.get_bwd_send_ops(bwd))
            bwd += 1
        _wait(sent)
        self._finish(losses)


class PipelineScheduleMulti(_PipelineSchedule):
    """A schedule with several stages per rank: stage ``i`` lives on rank
    ``i % group_size``. Subclasses list each rank's computations as ``(stage_index, "F" or
    "B", microbatch)``; receives are waited on just before the computation that needs them,
    sends complete in the background until the end of the step."""

    def __init__(self, stages, n_microbatches, loss_fn=None, args_chunk_spec=None,
                 kwargs_chunk_spec=None, output_merge_spec=None, scale_grads=True):
        super().__init__(n_microbatches, loss_fn, args_chunk_spec, kwargs_chunk_spec,
                         output_merge_spec, scale_grads)
        self._stages = list(stages)
        self._num_stages = self._stages[0].num_stages
        self.pp_group_size = self._stages[0].group_size
        self.rank = self._stages[0].group_rank
        self.n_local_stages = len(self._stages)
        if self._num_stages != self.pp_group_size * self.n_local_stages:
            raise ValueError(f"{type(self).__name__}: {self._num_stages} stages cannot be "
                             f"{self.n_local_stages} per rank on {self.pp_group_size} ranks")
        mine = [s.stage_index for s in self._stages]
        expected = list(range(self.rank, self._num_stages, self.pp_group_size))
        if sorted(mine) != expected:
            raise ValueError(f"{type(self).__name__}: rank {self.rank} must hold stages "
                             f"{expected}, got {mine}")

    def _step_microbatches(self, arg_mbs=None, kwarg_mbs=None, target_mbs=None, losses=None,
                           return_outputs=True, loss_kwargs=None):
        arg_mbs, kwarg_mbs = self._check_inputs(arg_mbs, kwarg_mbs, target_mbs, losses)
        by_index = {s.stage_index: s for s in self._stages}
        sends = []
        for stage_index, kind, mb in self._rank_ops(self.rank):
            stage = by_index[stage_index]
            if kind == "F":
                _wait(_start(stage.get_fwd_recv_ops(mb)))
                out = stage.forward_one_chunk(
                    mb, arg_mbs[mb] if stage.is_first else (),
                    kwarg_mbs[mb] if stage.is_first else {}, save_forward_output=return_outputs)
                self._maybe_compute_loss(stage, out, target_mbs, mb, loss_kwargs)
                sends += _start(stage.get_fwd_send_ops(mb))
            elif self._has_backward:
                _wait(_start(stage.get_bwd_recv_ops(mb)))
                stage.backward_one_chunk(mb, loss=self._maybe_get_loss(stage, mb),
                                         last_backward=mb == self._n_microbatches - 1)
                sends += _start(stage.get_bwd_send_ops(mb))
        _wait(sends)
        self._update_losses(self._stages, losses)
        if self._has_backward:
            for stage in self._stages:
                stage.perform_reduce_grad(self._n_microbatches if self.scale_grads else 1)


class ScheduleLoopedBFS(PipelineScheduleMulti):
    """Breadth-first pipeline (https://arxiv.org/abs/2211.05953): a rank runs every
    microbatch of its earlier stage before its later one, then backwards in reverse."""

    def __init__(self, stages, n_microbatches, loss_fn=None, output_merge_spec=None,
                 scale_grads=True):
        super().__init__(stages, n_microbatches, loss_fn, output_merge_spec=output_merge_spec,
                         scale_grads=scale_grads)

    def _rank_ops(self, rank):
        own = range(rank, self._num_stages, self.pp_group_size)
        n = self._n_microbatches
        return [(s, "F", mb) for s in own for mb in range(n)] + \
            [(s, "B", mb) for s in reversed(own) for mb in reversed(range(n))]


class ScheduleInterleaved1F1B(PipelineScheduleMulti):
    """Interleaved 1F1B (https://arxiv.org/pdf/2104.04473): 1F1B over several stages per
    rank, preferring the earlier microbatch ("depth first"). Microbatches go in rounds of
    ``n_microbatches // max(1, n_microbatches // group_size)``."""

    def __init__(self, stages, n_microbatches, loss_fn=None, args_chunk_spec=None,
                 kwargs_chunk_spec=None, output_merge_spec=None, scale_grads=True):
        super().__init__(stages, n_microbatches, loss_fn, args_chunk_spec, kwargs_chunk_spec,
                         output_merge_spec, scale_grads)
        self.number_of_rounds = max(1, n_microbatches // self.pp_group_size)
        self.microbatches_per_round = n_microbatches // self.number_of_rounds
        if n_microbatches % self.number_of_rounds != 0:
            raise ValueError("Interleaved 1F1B requires the number of microbatches to be a "
                             f"multiple of the number of rounds ({self.number_of_rounds}), "
                             f"but got {n_microbatches}.")

    def _rank_ops(self, rank):
        v, w, per_round = self.n_local_stages, self.pp_group_size, self.microbatches_per_round
        total = v * self._n_microbatches
        # the last rank warms up with one round per extra local stage, each earlier rank
        # with two more forwards
        warmup = min((v - 1) * per_round + 2 * (w - 1 - rank), total)

        def fwd_stage(k):
            return (k // per_round) % v * w + rank

        def bwd_stage(k):
            return (v - 1 - ((k - warmup) // per_round) % v) * w + rank

        fwd_mb, bwd_mb, ops = {}, {}, []

        def take(counter, s):
            counter[s] = counter.get(s, 0) + 1
            return counter[s] - 1

        # warmup forwards, then one forward and one backward each, then cooldown backwards
        for k in range(total + warmup):
            if k < total:
                s = fwd_stage(k)
                ops.append((s, "F", take(fwd_mb, s)))
            if k >= warmup:
                s = bwd_stage(k)
                ops.append((s, "B", take(bwd_mb, s)))
        return ops
