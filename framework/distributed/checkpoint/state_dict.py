"""Model state dicts across FSDP's sharding (PyTorch's
``torch.distributed.checkpoint.state_dict``): ``get_model_state_dict`` and
``set_model_state_dict``.

With ``StateDictOptions(full_state_dict=True)`` the values are full tensors (every rank
gathers them, or rank 0 only with ``cpu_offload=True``); otherwise they are this rank's
shards (PyTorch gives ``DTensor``s there; here the local rows, as ``Tensor``s). Keys are
the module's names without the ``_fsdp_wrapped_module.`` of ``FullyShardedDataParallel``.
"""
from dataclasses import dataclass

from ...autograd import grad_mode
from ..process_group import get_rank

__all__ = ["StateDictOptions", "get_model_state_dict", "set_model_state_dict"]

_WRAPPED = "_fsdp_wrapped_module."


@dataclass
class StateDictOptions:
    """``full_state_dict``: full tensors rather than shards; ``cpu_offload``: values on the
    cpu (with ``full_state_dict``: on rank 0 only, the other ranks get an empty dict);
    ``ignore_frozen_params``: leave out parameters that do not require grad; ``strict``:
    ``set_model_state_dict`` raises on missing or unexpected keys;
    ``broadcast_from_rank0``: ``set_model_state_dict`` takes the full values of rank 0."""
    full_state_dict: bool = False
    cpu_offload: bool = False
    ignore_frozen_params: bool = False
    keep_submodule_prefixes: bool = True
    strict: bool = True
    broadcast_from_rank0: bool = False
    flatten_optimizer_state_dict: bool = False
    dsd_fqn_modifiers: str = "_fqn_modifiers"


def _clean(key):
    return key.replace(_WRAPPED, "")


def _entries(model):
    """(clean key, real key, tensor as the module holds it) for its whole state dict."""
    from ...nn.modules.module import Module
    raw = Module.state_dict(model, keep_vars=True)
    return [(_clean(k), k, v) for k, v in raw.items()]


def get_model_state_dict(model, submodules=None, *, options=None):
    """``model``'s state dict: full tensors with ``options.full_state_dict`` (every rank
    calls it: the shards are gathered), else this rank's shards."""
    from ...nn.parameter import Parameter
    if submodules is not None:
        raise NotImplementedError("get_model_state_dict: submodules is not supported")
    options = options or StateDictOptions()
    out = {}
    rank0 = get_rank() == 0
    with grad_mode.no_grad():
        for key, _, v in _entries(model):
            if options.ignore_frozen_params and isinstance(v, Parameter) and \
                    not v.requires_grad:
                continue
            fp = getattr(v, "_fsdp_param", None)
            if options.full_state_dict and fp is not None:
                t = fp.full_tensor()
            else:
                t = v.detach() if hasattr(v, "detach") else v
            if options.cpu_offload and hasattr(t, "cpu"):
                t = t.cpu()
            out[key] = t
    if options.full_state_dict and options.cpu_offload and not rank0:
        return {}
    return out


def set_model_state_dict(model, model_state_dict, *, options=None):
    """Loads ``model_state_dict`` (full tensors with ``options.full_state_dict``, else
    shards) into ``model``; returns ``_IncompatibleKeys``."""
    from ...nn.modules.module import Module
    options = options or StateDictOptions()
    if options.broadcast_from_rank0:
        from ..collectives import broadcast_object_list
        box = [model_state_dict if get_rank() == 0 else None]
        broadcast_object_list(box, src=0)
        model_state_dict = box[0]
    local = {}
    known = set()
    with grad_mode.no_grad():
        for key, real, v in _entries(model):
            known.add(key)
            if key not in model_state_dict:
                continue
            value = model_state_dict[key]
            fp = getattr(v, "_fsdp_param", None)
            if options.full_state_dict and fp is not None:
                if tuple(value.shape) != fp.full_shape:
                    raise RuntimeError(
                        f"Error(s) in loading state_dict: size mismatch for {key}: copying a "
                        f"param with shape {list(value.shape)} from checkpoint, the shape in "
                        f"current model is {list(fp.full_shape)}.")
                value = fp.shard_of(value.to(v.device))
            local[real] = value
    unexpected = [k for k in model_state_dict if k not in known]
    result = Module.load_state_dict(model, local, strict=False)
    missing = [_clean(k) for k in result.missing_keys]
    if options.strict and (missing or unexpected):
        raise RuntimeError(f"Error(s) in loading state_dict for {type(model).__name__}: "
                           f"Missing key(s): {missing}. Unexpected key(s): {unexpected}.")
    from ...nn.modules._state_dict import _IncompatibleKeys
    return _IncompatibleKeys(missing, unexpected)
