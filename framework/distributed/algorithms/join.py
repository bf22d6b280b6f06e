"""The generic join context manager for uneven inputs (PyTorch's
``torch.distributed.algorithms.join``).

Ranks that run out of inputs first ("join") keep answering the collectives of the ranks
still training: each training iteration of a ``Joinable`` starts with an all-reduce of a
1 (``notify_join_context``), which a joined rank matches with an all-reduce of a 0 in
``__exit__``; while the sum is not 0, the joined rank runs every join hook's
``main_hook`` (the shadow of one iteration's collectives), and once it is 0 every rank runs
the ``post_hook``s.
"""
import warnings
from abc import ABC, abstractmethod

from ..collectives import all_reduce
from ..process_group import get_rank

__all__ = ["JoinHook", "Joinable", "Join"]


class JoinHook:
    """What a joined rank does for a ``Joinable``: ``main_hook`` once per iteration the
    other ranks still train, ``post_hook(is_last_joiner)`` once all have joined."""

    def main_hook(self):
        """Shadows one training iteration's collectives while some rank has not joined."""

    def post_hook(self, is_last_joiner):
        """Runs once every rank joined; ``is_last_joiner``: this rank was among the last."""


class _JoinConfig:
    def __init__(self, enable, throw_on_early_termination, is_first_joinable):
        self.enable = enable
        self.throw_on_early_termination = throw_on_early_termination
        self.is_first_joinable = is_first_joinable

    @staticmethod
    def construct_disabled_join_config():
        return _JoinConfig(False, False, False)


class Joinable(ABC):
    """A class whose instances can take part in ``Join``: it gives a ``join_hook``, the
    ``join_device`` and ``join_process_group`` of its collectives, and calls
    ``Join.notify_join_context(self)`` at the start of each iteration."""

    @abstractmethod
    def __init__(self):
        super().__init__()
        self._join_config = _JoinConfig.construct_disabled_join_config()

    @abstractmethod
    def join_hook(self, **kwargs):
        """The ``JoinHook`` of this joinable (``kwargs``: those given to ``Join``)."""

    @property
    @abstractmethod
    def join_device(self):
        """The device of the join context's collectives."""

    @property
    @abstractmethod
    def join_process_group(self):
        """The process group of the join context's collectives."""


class Join:
    """Context manager for training with uneven inputs across ranks: a rank whose loop ends
    first shadows the collectives of the others until every rank's loop ended.

    ``joinables``: the ``Joinable``s of the loop (they must share a process group).
    ``enable``: False makes the context do nothing. ``throw_on_early_termination``: raise on
    every rank as soon as one rank runs out of inputs, instead of shadowing. ``kwargs`` go
    to each ``join_hook`` (e.g. DDP's ``divide_by_initial_world_size``)."""

    def __init__(self, joinables, enable=True, throw_on_early_termination=False, **kwargs):
        if len(joinables) == 0:
            raise ValueError("The join context manager requires at least one joinable")
        self._joinables = joinables
        self._join_hooks = [j.join_hook(**kwargs) for j in joinables]
        self._enable = enable
        self._throw_on_early_termination = throw_on_early_termination
        for i, j in enumerate(joinables):
            j._join_config = _JoinConfig(enable, throw_on_early_termination, i == 0)
        groups = {id(j.join_process_group) for j in joinables}
        if len(groups) > 1:
            raise ValueError("Using join context manager with multiple process groups")
        self._process_group = joinables[0].join_process_group
        self._device = joinables[-1].join_device
        self._rank = get_rank(self._process_group)

    def __enter__(self):
        return self

    def __exit__(self, type, value, traceback):
        if not self._enable or type is not None:
            return False    # an exception propagates as is
        is_last_joiner = True
        i = 0
        while True:
            if i == 1000:
                warnings.warn(f"Detected uneven input skew of greater than 1000. This means "
                              f"that rank {self._rank} has at least 1000 fewer inputs than "
                              "other currently-active ranks. This level of skew could lead "
                              "to performance degradation during training.")
            if self._count(0) == 0:
                break
            if self._throw_on_early_termination:
                self._count(1)          # tells the others (their notify) to raise too
                raise RuntimeError(f"Rank {self._rank} exhausted all inputs.")
            for hook in self._join_hooks:
                hook.main_hook()
            is_last_joiner = False
            i += 1
        for hook in self._join_hooks:
            hook.post_hook(is_last_joiner)
        return False

    def _count(self, value):
        """All-reduces ``value`` over the group: the number of ranks that sent 1."""
        from ..._ops import creation
        t = creation.full((1,), float(value), device=self._device)   # float32, as notify's
        all_reduce(t, group=self._process_group)
        return int(t.item())

    @staticmethod
    def notify_join_context(joinable):
        """Called by ``joinable`` at the start of each iteration, before its collectives:
        the first joinable of the context all-reduces a 1, which the joined ranks match.
        Returns that all-reduce's work (its result: the number of ranks not joined), or
        None."""
        if not hasattr(joinable, "_join_config"):
            raise AssertionError(f"Check that the {type(joinable)} constructor calls the "
                                 "``Joinable`` constructor")
        config = joinable._join_config
        if not config.is_first_joinable or not config.enable:
            return None
        from ..._ops import creation
        device, pg = joinable.join_device, joinable.join_process_group
        ones = creation.ones((1,), device=device)
        work = all_reduce(ones, group=pg, async_op=True)
        work._join_count = ones
        if config.throw_on_early_termination:
            zeros = creation.zeros((1,), device=device)
            all_reduce(zeros, group=pg)
            if zeros.item():
                raise RuntimeError("Detected at least one rank that exhausted inputs. "
                                   "Throwing across all ranks.")
        return work
