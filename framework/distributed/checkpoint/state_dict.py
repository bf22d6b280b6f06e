"""Model and optimizer state dicts across FSDP's sharding (PyTorch's
``torch.distributed.checkpoint.state_dict``): ``get_model_state_dict``,
``set_model_state_dict``, ``get_optimizer_state_dict``, ``set_optimizer_state_dict``,
``get_state_dict`` and ``set_state_dict``. Optimizer state dicts are keyed by parameter
names (``{"state": {name: {...}}, "param_groups": [{..., "params": [names]}]}``).

With ``StateDictOptions(full_state_dict=True)`` the values are full tensors (every rank
gathers them, or rank 0 only with ``cpu_offload=True``); otherwise they are this rank's
shards (PyTorch gives ``DTensor``s there; here the local rows, as ``Tensor``s). Keys are
the module's names without the ``_fsdp_wrapped_module.`` of ``FullyShardedDataParallel``.
The local shards (of parameters and of their optimizer states) carry where they sit in the
full tensor, so that ``framework.distributed.checkpoint.save``/``load`` reshard them.
"""
from dataclasses import dataclass

from ...autograd import grad_mode
from ..process_group import get_rank, is_initialized

__all__ = ["StateDictOptions", "get_model_state_dict", "set_model_state_dict",
           "get_optimizer_state_dict", "set_optimizer_state_dict", "get_state_dict",
           "set_state_dict"]

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


def _rank():
    """This rank (0 without a process group: one process)."""
    return get_rank() if is_initialized() else 0


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
    rank0 = _rank() == 0
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
            if fp is not None and not options.full_state_dict:
                t._dcp_fsdp = fp        # where the shard sits, for distributed checkpoints
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
        box = [model_state_dict if _rank() == 0 else None]
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


def _optimizers(optimizers):
    from ...optim.optimizer import Optimizer
    if isinstance(optimizers, Optimizer):
        return [optimizers]
    return list(optimizers)


def _param_names(model):
    """id(parameter) -> its clean name (a shared parameter: its first name)."""
    names = {}
    for name, p in model.named_parameters(remove_duplicate=False):
        names.setdefault(id(p), _clean(name))
    return names


def _gather_rows(fp, local):
    """The full value of a tensor laid out as ``fp``'s shard (every rank calls it)."""
    from .. import collectives as C
    if fp.state.replicate or fp.world == 1:
        return local.clone()
    rest = tuple(local.shape[1:])
    src = local.new_zeros((fp.chunk,) + rest)
    if fp.local_rows:
        src[:fp.local_rows].copy_(local)
    out = local.new_empty((fp.chunk * fp.world,) + rest)
    C.all_gather_into_tensor(out, src.contiguous(), group=fp.state.group)
    return out[:fp.rows].clone().view(fp.full_shape)


def _is_shard_shaped(value, fp):
    from ..._tensor import Tensor
    return fp is not None and isinstance(value, Tensor) and \
        tuple(value.shape) == tuple(fp.sharded_param.shape) and value.dim() > 0


def get_optimizer_state_dict(model, optimizers, *, submodules=None, options=None):
    """The state of ``optimizers`` over ``model``'s parameters, keyed by parameter names:
    full tensors with ``options.full_state_dict`` (states of FSDP parameters gathered,
    every rank calls it), else this rank's shards."""
    if submodules is not None:
        raise NotImplementedError("get_optimizer_state_dict: submodules is not supported")
    options = options or StateDictOptions()
    names = _param_names(model)
    state, groups = {}, []
    with grad_mode.no_grad():
        for opt in _optimizers(optimizers):
            osd = opt.state_dict()
            params = [p for g in opt.param_groups for p in g["params"]]
            for group in osd["param_groups"]:
                g = {k: v for k, v in group.items() if k != "params"}
                g["params"] = [names[id(params[i])] for i in group["params"]]
                groups.append(g)
            for idx, st in osd["state"].items():
                p = params[idx]
                fp = getattr(p, "_fsdp_param", None)
                out = {}
                for k, v in st.items():
                    if _is_shard_shaped(v, fp) and options.full_state_dict:
                        v = _gather_rows(fp, v)
                    elif hasattr(v, "detach"):
                        v = v.detach()
                    if options.cpu_offload and hasattr(v, "cpu"):
                        v = v.cpu()
                    if _is_shard_shaped(v, fp) and not options.full_state_dict:
                        v._dcp_fsdp = fp
                    out[k] = v
                state[names[id(p)]] = out
    if options.full_state_dict and options.cpu_offload and _rank() != 0:
        return {}
    return {"state": state, "param_groups": groups}


def set_optimizer_state_dict(model, optimizers, optim_state_dict, *, options=None):
    """Loads ``optim_state_dict`` (keyed by parameter names, as
    ``get_optimizer_state_dict`` gives it: full tensors with ``options.full_state_dict``,
    else shards) into ``optimizers``."""
    options = options or StateDictOptions()
    if options.broadcast_from_rank0:
        from ..collectives import broadcast_object_list
        box = [optim_state_dict if _rank() == 0 else None]
        broadcast_object_list(box, src=0)
        optim_state_dict = box[0]
    names = _param_names(model)
    saved_state = optim_state_dict.get("state", {})
    saved_groups = optim_state_dict.get("param_groups", [])
    for opt in _optimizers(optimizers):
        params = [p for g in opt.param_groups for p in g["params"]]
        index = {names[id(p)]: i for i, p in enumerate(params)}
        state = {}
        for name, i in index.items():
            if name not in saved_state:
                continue
            fp = getattr(params[i], "_fsdp_param", None)
            st = {}
            for k, v in saved_state[name].items():
                if options.full_state_dict and fp is not None and hasattr(v, "shape") and \
                        tuple(v.shape) == fp.full_shape and v.dim() > 0:
                    v = fp.shard_of(v.to(params[i].device)).clone()
                st[k] = v
            state[i] = st
        groups = []
        for g in saved_groups:
            mine = [index[n] for n in g["params"] if n in index]
            if mine:
                groups.append({**{k: v for k, v in g.items() if k != "params"},
                               "params": mine})
        opt.load_state_dict({"state": state, "param_groups": groups})


def get_state_dict(model, optimizers, *, submodules=None, options=None):
    """``(get_model_state_dict(model), get_optimizer_state_dict(model, optimizers))``."""
    return (get_model_state_dict(model, submodules, options=options),
            get_optimizer_state_dict(model, optimizers, submodules=submodules,
                                     options=options))


def set_state_dict(model, optimizers, *, model_state_dict, optim_state_dict, options=None):
    """Loads both state dicts; returns the model's ``_IncompatibleKeys``."""
    keys = set_model_state_dict(model, model_state_dict, options=options)
    set_optimizer_state_dict(model, optimizers, optim_state_dict, options=options)
    return keys
