"""``CheckpointException`` (PyTorch's ``torch.distributed.checkpoint.api``) and the rank
coordination that ``save``/``load`` run their steps through: a step that fails on any rank
fails on every rank, with each failing rank's error."""
import traceback

__all__ = ["CheckpointException"]


class _Failure:
    """An exception of one rank, with its traceback as text (picklable)."""

    def __init__(self, exc):
        self.exc = exc
        self.trace = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))

    def __reduce__(self):
        return (_rebuild_failure, (self.exc, self.trace))


def _rebuild_failure(exc, trace):
    f = _Failure.__new__(_Failure)
    f.exc, f.trace = exc, trace
    return f


class CheckpointException(BaseException):
    """A checkpoint step failed: ``failures`` maps each failing rank to its exception."""

    def __init__(self, msg, failures):
        super().__init__(msg, failures)
        self._failures = failures

    @property
    def failures(self):
        return {r: f.exc if isinstance(f, _Failure) else f for r, f in self._failures.items()}

    def __str__(self):
        text = f"CheckpointException ranks:{self._failures.keys()}\n"
        for rank, f in self._failures.items():
            trace = f.trace if isinstance(f, _Failure) else repr(f)
            text += f"{trace.rstrip()} (RANK {rank})\n"
        return text


class _DistWrapper:
    """Runs checkpoint steps on the ranks of ``group`` (or alone with ``use_dist=False``)
    with group rank ``coordinator_rank`` as the coordinator."""

    def __init__(self, group, use_dist, coordinator_rank=0):
        from ..process_group import _resolve
        self.pg = _resolve(group) if use_dist else None
        self.rank = self.pg.rank() if self.pg is not None else 0
        self.coordinator = coordinator_rank if self.pg is not None else 0
        self.is_coordinator = self.rank == self.coordinator
        self.group = group

    def _global(self, group_rank):
        return self.pg.ranks[group_rank]

    def _gather(self, obj):
        from ..collectives import gather_object
        if self.pg is None:
            return [obj]
        out = [None] * self.pg.size() if self.is_coordinator else None
        gather_object(obj, out, dst=self._global(self.coordinator), group=self.group)
        return out

    def _scatter(self, objs):
        from ..collectives import scatter_object_list
        if self.pg is None:
            return objs[0]
        box = [None]
        scatter_object_list(box, objs if self.is_coordinator else None,
                            src=self._global(self.coordinator), group=self.group)
        return box[0]

    def _broadcast(self, obj):
        from ..collectives import broadcast_object_list
        if self.pg is None:
            return obj
        box = [obj]
        broadcast_object_list(box, src=self._global(self.coordinator), group=self.group)
        return box[0]

    @staticmethod
    def _try(fn, *args):
        try:
            return fn(*args)
        except Exception as e:      # reported to every rank as a CheckpointException
            return _Failure(e)

    @staticmethod
    def _failures(values):
        return {r: v for r, v in enumerate(values) if isinstance(v, _Failure)}

    def reduce_scatter(self, step, map_fun, reduce_fun):
        """``map_fun()`` on every rank, ``reduce_fun(all results)`` on the coordinator (one
        result per rank), each rank's result scattered back."""
        local = self._try(map_fun)
        gathered = self._gather(local)
        out = None
        if self.is_coordinator:
            bad = self._failures(gathered)
            if bad:
                out = [CheckpointException(step, bad)] * len(gathered)
            else:
                res = self._try(reduce_fun, gathered)
                out = [CheckpointException(step, {self.rank: res})] * len(gathered) \
                    if isinstance(res, _Failure) else res
        mine = self._scatter(out)
        if isinstance(mine, CheckpointException):
            raise mine
        return mine

    def all_reduce(self, step, map_fun, reduce_fun):
        """``map_fun()`` on every rank, ``reduce_fun(all results)`` on the coordinator, its
        result broadcast to every rank."""
        local = self._try(map_fun)
        gathered = self._gather(local)
        out = None
        if self.is_coordinator:
            bad = self._failures(gathered)
            if bad:
                out = CheckpointException(step, bad)
            else:
                res = self._try(reduce_fun, gathered)
                out = CheckpointException(step, {self.rank: res}) \
                    if isinstance(res, _Failure) else res
        out = self._broadcast(out)
        if isinstance(out, CheckpointException):
            raise out
        return out
