"""``FullyShardedDataParallel`` (FSDP1) in its simplest form: the wrapped module is one
unit, sharded by the machinery of ``fully_shard``.

``FULL_SHARD`` frees the full parameters after forward, ``SHARD_GRAD_OP`` keeps them until
backward, ``NO_SHARD`` keeps full copies and all-reduces gradients (as DDP). The sharded
parameters are per-parameter shards named as the wrapped module's (PyTorch's
``use_orig_params=True`` names), not one flat parameter.
"""
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum, auto

from ...nn.modules.module import Module
from ..process_group import _resolve, get_global_rank
from ..collectives import all_reduce, broadcast
from ..mpi_backend import ReduceOp
from ._fsdp_state import FSDPState
from ._fully_shard import MixedPrecisionPolicy, _managed_params

__all__ = ["FullyShardedDataParallel", "ShardingStrategy", "StateDictType",
           "StateDictConfig", "FullStateDictConfig", "LocalStateDictConfig",
           "ShardedStateDictConfig", "CPUOffload", "MixedPrecision", "BackwardPrefetch"]


class ShardingStrategy(Enum):
    FULL_SHARD = auto()
    SHARD_GRAD_OP = auto()
    NO_SHARD = auto()
    HYBRID_SHARD = auto()
    _HYBRID_SHARD_ZERO2 = auto()


class StateDictType(Enum):
    FULL_STATE_DICT = auto()
    LOCAL_STATE_DICT = auto()
    SHARDED_STATE_DICT = auto()


class BackwardPrefetch(Enum):
    BACKWARD_PRE = auto()
    BACKWARD_POST = auto()


@dataclass
class StateDictConfig:
    offload_to_cpu: bool = False


@dataclass
class FullStateDictConfig(StateDictConfig):
    rank0_only: bool = False


@dataclass
class LocalStateDictConfig(StateDictConfig):
    pass


@dataclass
class ShardedStateDictConfig(StateDictConfig):
    _use_dtensor: bool = True


@dataclass
class CPUOffload:
    offload_params: bool = False


@dataclass
class MixedPrecision:
    """``param_dtype`` for compute, ``reduce_dtype`` for the gradient reduction;
    ``buffer_dtype`` and the rest are accepted."""
    param_dtype: object = None
    reduce_dtype: object = None
    buffer_dtype: object = None
    keep_low_precision_grads: bool = False
    cast_forward_inputs: bool = False
    cast_root_forward_inputs: bool = True
    _module_classes_to_ignore: tuple = ()


class FullyShardedDataParallel(Module):
    """Shards ``module``'s parameters over ``process_group`` (default: the world) and
    gathers them around its forward; gradients are averaged and reduce-scattered."""

    def __init__(self, module, process_group=None, sharding_strategy=None, cpu_offload=None,
                 auto_wrap_policy=None, backward_prefetch=BackwardPrefetch.BACKWARD_PRE,
                 mixed_precision=None, ignored_modules=None, param_init_fn=None,
                 device_id=None, sync_module_states=False, forward_prefetch=False,
                 limit_all_gathers=True, use_orig_params=False, ignored_states=None,
                 device_mesh=None):
        super().__init__()
        if auto_wrap_policy is not None:
            raise NotImplementedError("FullyShardedDataParallel: auto_wrap_policy is not "
                                      "supported; wrap the submodules yourself")
        if cpu_offload is not None and cpu_offload.offload_params:
            raise NotImplementedError("FullyShardedDataParallel: CPU offloading is not "
                                      "implemented")
        strategy = sharding_strategy or ShardingStrategy.FULL_SHARD
        if strategy in (ShardingStrategy.HYBRID_SHARD, ShardingStrategy._HYBRID_SHARD_ZERO2):
            raise NotImplementedError(f"FullyShardedDataParallel: {strategy} is not "
                                      "supported")
        if device_mesh is not None:
            if process_group is not None:
                raise ValueError("Cannot pass both process_group and device_mesh at the "
                                 "same time. Please just pass only one of them.")
            process_group = device_mesh.get_group()
        if param_init_fn is not None:
            param_init_fn(module)
        self._fsdp_wrapped_module = module
        self.process_group = process_group
        self.sharding_strategy = strategy
        self._state_dict_type = StateDictType.FULL_STATE_DICT
        self._state_dict_config = FullStateDictConfig()
        if sync_module_states:
            src = get_global_rank(process_group, 0) if process_group is not None else 0
            for t in list(module.parameters()) + list(module.buffers()):
                broadcast(t.detach(), src, group=process_group)
        ignored = set()
        for m in ignored_modules or ():
            ignored.update(id(p) for p in m.parameters())
        for s in ignored_states or ():
            ignored.update(id(p) for p in (s.parameters() if isinstance(s, Module) else [s]))
        mp = MixedPrecisionPolicy()
        if mixed_precision is not None:
            mp = MixedPrecisionPolicy(param_dtype=mixed_precision.param_dtype,
                                      reduce_dtype=mixed_precision.reduce_dtype,
                                      cast_forward_inputs=mixed_precision.cast_root_forward_inputs)
        self._fsdp_state = FSDPState(self, _managed_params(module, ignored), process_group,
                                     strategy is ShardingStrategy.FULL_SHARD, mp,
                                     replicate=strategy is ShardingStrategy.NO_SHARD)

    @property
    def module(self):
        """The wrapped module."""
        return self._fsdp_wrapped_module

    def forward(self, *args, **kwargs):
        return self._fsdp_wrapped_module(*args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self._fsdp_wrapped_module, name)

    # ---- gradient sync and clipping ---------------------------------------------------
    @contextmanager
    def no_sync(self):
        """Gradients accumulate unreduced on each rank inside it; the first backward
        after it reduces their sum."""
        states = [m._fsdp_state for m in self.modules() if hasattr(m, "_fsdp_state")]
        old = [s.requires_gradient_sync for s in states]
        for s in states:
            s.requires_gradient_sync = False
        try:
            yield
        finally:
            for s, o in zip(states, old):
                s.requires_gradient_sync = o

    def clip_grad_norm_(self, max_norm, norm_type=2.0):
        """Clips the gradients of the shards by the norm of the whole (unsharded)
        gradient, summed over the ranks; returns that total norm."""
        from ...nn.utils.clip_grad import clip_grads_with_norm_, get_total_norm
        params = list(self.parameters())
        # a rank may hold no rows of a parameter: its empty shard adds nothing
        grads = [p.grad for p in params if p.grad is not None and p.grad.numel()]
        norm_type = float(norm_type)
        device = params[0].device if params else None
        from ..._ops import creation
        local = get_total_norm(grads, norm_type) if grads else \
            creation.zeros((), dtype=params[0].dtype, device=device)
        local = local.to(device)
        if self.sharding_strategy is not ShardingStrategy.NO_SHARD and \
                _resolve(self.process_group).size() > 1:
            if norm_type == float("inf"):
                all_reduce(local, ReduceOp.MAX, group=self.process_group)
                total = local
            else:
                local = local ** norm_type
                all_reduce(local, ReduceOp.SUM, group=self.process_group)
                total = local ** (1.0 / norm_type)
        else:
            total = local
        clip_grads_with_norm_(params, max_norm, total)
        return total

    # ---- state dicts -------------------------------------------------------------------
    @staticmethod
    @contextmanager
    def state_dict_type(module, state_dict_type, state_dict_config=None,
                        optim_state_dict_config=None):
        """Inside it, ``state_dict()``/``load_state_dict()`` of every FSDP instance in
        ``module`` use ``state_dict_type`` (full tensors, or local shards)."""
        wrappers = [m for m in module.modules() if isinstance(m, FullyShardedDataParallel)]
        old = [(w._state_dict_type, w._state_dict_config) for w in wrappers]
        for w in wrappers:
            w._state_dict_type = state_dict_type
            w._state_dict_config = state_dict_config or (
                FullStateDictConfig() if state_dict_type is StateDictType.FULL_STATE_DICT
                else StateDictConfig())
        try:
            yield
        finally:
            for w, (t, c) in zip(wrappers, old):
                w._state_dict_type, w._state_dict_config = t, c

    def _options(self):
        from ..checkpoint.state_dict import StateDictOptions
        return StateDictOptions(
            full_state_dict=self._state_dict_type is StateDictType.FULL_STATE_DICT)

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """Full tensors (``FULL_STATE_DICT``, the default) or this rank's shards, keyed by
        the wrapped module's names; the config's ``offload_to_cpu`` moves them to the cpu,
        ``rank0_only`` leaves the other ranks an empty dict."""
        from ..checkpoint.state_dict import get_model_state_dict
        sd = get_model_state_dict(self, options=self._options())
        cfg = self._state_dict_config
        if getattr(cfg, "rank0_only", False) and _resolve(self.process_group).rank() != 0:
            sd = {}
        out = destination if destination is not None else {}
        for k, v in sd.items():
            out[prefix + k] = v.cpu() if cfg.offload_to_cpu else v
        return out

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Loads a state dict of the kind ``state_dict_type`` says."""
        from ..checkpoint.state_dict import set_model_state_dict
        opts = self._options()
        opts.strict = strict
        return set_model_state_dict(self, state_dict, options=opts)
