"""``ZeroRedundancyOptimizer``: optimizer state sharded across the ranks (ZeRO stage 1).

Each parameter is owned by one rank (greedily, the largest first, to the rank holding the
fewest elements so far). A rank keeps the optimizer state of its own parameters only and
updates only them; after the update every parameter is broadcast from its owner. The
gradients must already be the same everywhere (DistributedDataParallel averages them).
"""
from ... import distributed as dist
from ...optim.optimizer import Optimizer

__all__ = ["ZeroRedundancyOptimizer"]


class ZeroRedundancyOptimizer(Optimizer):
    """Wraps ``optimizer_class(params, **defaults)`` so that each rank of ``process_group``
    holds the state of about ``1/world_size`` of the parameters."""

    def __init__(self, params, optimizer_class, process_group=None,
                 parameters_as_bucket_view=False, overlap_with_ddp=False, **defaults):
        if overlap_with_ddp:
            raise NotImplementedError("ZeroRedundancyOptimizer: overlap_with_ddp is not "
                                      "supported")
        super().__init__(params, defaults)
        self.process_group = process_group
        self.optimizer_class = optimizer_class
        self.world_size = dist.get_world_size(process_group)
        self.rank = dist.get_rank(process_group)
        self._global_ranks = dist.get_process_group_ranks(process_group) \
            if process_group is not None else list(range(self.world_size))
        self._partition()
        local_groups = [dict({k: v for k, v in g.items() if k != "params"},
                             params=[p for p in g["params"] if self._owner[id(p)] == self.rank])
                        for g in self.param_groups]
        self.optim = optimizer_class(local_groups, **defaults)
        # the full groups carry every hyper-parameter the local optimizer filled in
        for g, lg in zip(self.param_groups, self.optim.param_groups):
            for k, v in lg.items():
                if k != "params":
                    g.setdefault(k, v)
        self._all_state_dicts = None

    def _partition(self):
        sizes = [0] * self.world_size
        self._owner = {}
        for g in self.param_groups:
            for p in sorted(g["params"], key=lambda p: -p.numel()):
                if id(p) in self._owner:
                    continue
                r = min(range(self.world_size), key=lambda i: sizes[i])
                self._owner[id(p)] = r
                sizes[r] += p.numel()
        self._all_params = [p for g in self.param_groups for p in g["params"]]
        self._local_params = [p for p in self._all_params if self._owner[id(p)] == self.rank]

    def _sync_param_groups(self):
        """Hyper-parameters changed on the full groups (an LR scheduler) reach the local
        optimizer."""
        for g, lg in zip(self.param_groups, self.optim.param_groups):
            for k, v in g.items():
                if k != "params":
                    lg[k] = v

    def add_param_group(self, param_group):
        super().add_param_group(param_group)
        if hasattr(self, "optim"):
            # repartition: the new parameters get owners, the local optimizer a group
            g = self.param_groups[-1]
            self._partition()
            self.optim.add_param_group(dict({k: v for k, v in g.items() if k != "params"},
                                            params=[p for p in g["params"]
                                                    if self._owner[id(p)] == self.rank]))

    def step(self, closure=None):
        """Updates this rank's parameters, then broadcasts every parameter from its
        owner."""
        self._sync_param_groups()
        loss = self.optim.step(closure) if closure is not None else self.optim.step()
        for p in self._all_params:
            dist.broadcast(p.detach(), self._global_ranks[self._owner[id(p)]],
                           group=self.process_group)
        return loss

    # ---- state dicts --------------------------------------------------------------------
    def _index(self):
        return {id(p): i for i, p in enumerate(self._all_params)}

    def consolidate_state_dict(self, to=0):
        """Gathers the shards of the optimizer state on rank ``to`` (every rank calls it)."""
        index = self._index()
        local = self.optim.state_dict()
        flat_local = [p for g in self.optim.param_groups for p in g["params"]]
        shard = {index[id(flat_local[i])]: v for i, v in local["state"].items()}
        got = [None] * self.world_size if self.rank == self._group_rank(to) else None
        dist.gather_object(shard, got, dst=to, group=self.process_group)
        if got is None:
            self._all_state_dicts = None
            return
        state = {}
        for s in got:
            state.update(s)
        groups = []
        for g in self.param_groups:
            packed = {k: v for k, v in g.items() if k != "params"}
            packed["params"] = [index[id(p)] for p in g["params"]]
            groups.append(packed)
        self._all_state_dicts = {"state": dict(sorted(state.items())), "param_groups": groups}

    def _group_rank(self, global_rank):
        return self._global_ranks.index(global_rank)

    def state_dict(self):
        """The whole optimizer state, on the rank ``consolidate_state_dict`` gathered it to."""
        if self._all_state_dicts is None:
            raise RuntimeError("Optimizer state has not been consolidated on this rank. "
                               "Please call `consolidate_state_dict(to=0)` on all ranks "
                               "beforehand if you meant to save the global state.")
        return self._all_state_dicts

    def load_state_dict(self, state_dict):
        """Loads a whole state (from ``state_dict()``); each rank keeps its own shard."""
        index = self._index()
        saved = state_dict["param_groups"]
        if len(saved) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for g, s in zip(self.param_groups, saved):
            for k, v in s.items():
                if k != "params":
                    g[k] = v
        groups, state, n = [], {}, 0
        for g in self.param_groups:
            packed = {k: v for k, v in g.items() if k != "params"}
            packed["params"] = []
            for p in g["params"]:
                if self._owner[id(p)] != self.rank:
                    continue
                i = index[id(p)]
                if i in state_dict["state"]:
                    state[n] = state_dict["state"][i]
                packed["params"].append(n)
                n += 1
            groups.append(packed)
        self.optim.load_state_dict({"state": state, "param_groups": groups})
