"""``fully_shard`` (FSDP2): shard a module's parameters over a data-parallel mesh.

``fully_shard(module)`` makes ``module`` an ``FSDPModule``: its class becomes a subclass
of ``FSDPModule`` and of its own class, as in PyTorch. Apply it to each block, then to the
root; each call manages the parameters not already managed by a call on a submodule. See
``_fsdp_state`` for how parameters are gathered, freed and their gradients reduced.

Difference from PyTorch: the sharded parameters are plain ``Parameter``s holding this
rank's rows (PyTorch's ``DTensor.to_local()``), not ``DTensor``s, so ``model.state_dict()``
holds local shards (which ``framework.distributed.checkpoint.save`` writes as shards of
the full parameters); ``framework.distributed.checkpoint.state_dict.get_model_state_dict``
with ``full_state_dict=True`` gives the full tensors.
"""
from dataclasses import dataclass

from ..._tensor import Tensor
from ..device_mesh import DeviceMesh, init_device_mesh
from ..process_group import get_world_size
from ._fsdp_state import FSDPState

__all__ = ["fully_shard", "FSDPModule", "MixedPrecisionPolicy", "OffloadPolicy",
           "CPUOffloadPolicy", "UnshardHandle"]


@dataclass(frozen=True)
class MixedPrecisionPolicy:
    """``param_dtype``: dtype of the full parameters (forward and backward compute);
    ``reduce_dtype``: dtype of the gradient reduction (default: ``param_dtype``);
    ``output_dtype``: cast of the forward outputs; ``cast_forward_inputs``: cast the
    floating-point forward inputs to ``param_dtype``."""
    param_dtype: object = None
    reduce_dtype: object = None
    output_dtype: object = None
    cast_forward_inputs: bool = True


@dataclass
class OffloadPolicy:
    """No offloading (the base policy)."""


@dataclass
class CPUOffloadPolicy(OffloadPolicy):
    """Keep shards and their gradients in host memory (not implemented here)."""
    pin_memory: bool = True


class UnshardHandle:
    """What ``unshard(async_op=True)`` returns; ``wait()`` (the gather is already done)."""

    def wait(self):
        return None


def _fsdp_states(module, recurse):
    mods = module.modules() if recurse else [module]
    return [m._fsdp_state for m in mods if isinstance(m, FSDPModule)]


class FSDPModule:
    """Mixed into the class of every module ``fully_shard`` was applied to."""

    def unshard(self, async_op=False):
        """Gathers this module's parameters, so its forward (or the user) sees them
        full until ``reshard()``."""
        self._fsdp_state.unshard()
        return UnshardHandle() if async_op else None

    def reshard(self):
        """Frees the full parameters: the module holds its shards again."""
        self._fsdp_state.reshard()

    def set_requires_gradient_sync(self, requires_gradient_sync, *, recurse=True):
        """False: backward keeps the full gradients on each rank (gradient accumulation
        without communication); the next backward with True reduces their sum."""
        for s in _fsdp_states(self, recurse):
            s.requires_gradient_sync = bool(requires_gradient_sync)

    def set_reshard_after_forward(self, reshard_after_forward, recurse=True):
        """Whether forward frees the full parameters (backward gathers them again)."""
        if not isinstance(reshard_after_forward, bool):
            raise ValueError(f"reshard_after_forward should be a bool, got "
                             f"{type(reshard_after_forward)}")
        for s in _fsdp_states(self, recurse):
            s.reshard_after_forward = reshard_after_forward

    def set_reshard_after_backward(self, reshard_after_backward, *, recurse=True):
        """Whether backward frees the full parameters it gathered again; False keeps them
        for the next forward (for accumulation steps without an optimizer step)."""
        for s in _fsdp_states(self, recurse):
            s.reshard_after_backward = bool(reshard_after_backward)

    def set_is_last_backward(self, is_last_backward):
        """Accepted for compatibility (nothing is deferred to the last backward here)."""

    def set_modules_to_forward_prefetch(self, modules):
        """Accepted for compatibility (gathers are not prefetched here)."""

    def set_modules_to_backward_prefetch(self, modules):
        """Accepted for compatibility (gathers are not prefetched here)."""


_CLASSES = {}


def _managed_params(module, ignored):
    """(parameter, [(module, name), ...]) for every parameter of ``module`` outside
    submodules already sharded, in ``named_parameters`` order."""
    found = {}
    order = []

    def walk(m):
        for name, p in m._parameters.items():
            if p is None or id(p) in ignored or getattr(p, "_fsdp_param", None) is not None:
                continue
            if id(p) not in found:
                found[id(p)] = (p, [])
                order.append(id(p))
            found[id(p)][1].append((m, name))
        for child in m._modules.values():
            if child is not None and not isinstance(child, FSDPModule):
                walk(child)
    walk(module)
    return [found[i] for i in order]


def _default_mesh(module):
    device = next((p.device.type for p in module.parameters()), "cpu")
    return init_device_mesh(device, (get_world_size(),))


def fully_shard(module, *, mesh=None, reshard_after_forward=None, shard_placement_fn=None,
                mp_policy=MixedPrecisionPolicy(), offload_policy=OffloadPolicy(),
                ignored_params=None):
    """Shards ``module``'s parameters on dim 0 over ``mesh`` (1-D; default: the whole
    world) and gathers them around its forward; returns ``module``, now an
    ``FSDPModule``. ``reshard_after_forward``: free the full parameters after forward
    (None: True except for the root module)."""
    from ...nn.modules.module import Module
    if isinstance(module, (list, tuple)):
        raise NotImplementedError("fully_shard: a list of modules is not supported; call it "
                                  "on one module")
    if not isinstance(module, Module):
        raise ValueError(f"fully_shard does not support containers that do not implement "
                         f"forward: {module}")
    if isinstance(module, FSDPModule):
        raise ValueError("fully_shard: the module already has fully_shard applied")
    if shard_placement_fn is not None:
        raise NotImplementedError("fully_shard: shard_placement_fn is not supported (shards "
                                  "are always on dim 0)")
    if type(offload_policy) is not OffloadPolicy:
        raise NotImplementedError("fully_shard: CPU offloading (CPUOffloadPolicy) is not "
                                  "implemented")
    if reshard_after_forward is not None and not isinstance(reshard_after_forward, bool):
        raise NotImplementedError("fully_shard: reshard_after_forward must be a bool here "
                                  f"(resharding to a smaller world is not supported), got "
                                  f"{reshard_after_forward!r}")
    mesh = mesh if mesh is not None else _default_mesh(module)
    if not isinstance(mesh, DeviceMesh):
        raise ValueError(f"fully_shard expects a DeviceMesh but got {mesh}")
    if mesh.ndim != 1:
        raise NotImplementedError(f"fully_shard: only a 1-D mesh is supported (HSDP on a "
                                  f"2-D mesh is not), got a {mesh.ndim}-D mesh")
    ignored = {id(p) for p in ignored_params} if ignored_params else set()
    for p in (ignored_params or ()):
        if not isinstance(p, Tensor):
            raise TypeError(f"ignored_params must hold parameters, got {type(p)}")
    state = FSDPState(module, _managed_params(module, ignored), mesh.get_group(),
                      reshard_after_forward, mp_policy)
    state.mesh = mesh
    module._fsdp_state = state
    from ..checkpoint._traverse import mark_fsdp_shards
    module.register_state_dict_post_hook(mark_fsdp_shards)
    cls = module.__class__
    new_cls = _CLASSES.get(cls)
    if new_cls is None:
        new_cls = _CLASSES[cls] = type(f"FSDP{cls.__name__}", (FSDPModule, cls), {})
    module.__class__ = new_cls
    return module


fully_shard.state = lambda module: module._fsdp_state
