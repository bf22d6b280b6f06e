"""Flattening nested state dicts to dotted keys (as PyTorch's DCP does: ``{"model":
{"w": t}}`` -> ``{"model.w": t}``; lists holding tensors or dicts are walked by index,
other lists are one value), and the chunk of the global tensor that a value holds."""
from ..._tensor import Tensor

__all__ = ["flatten_state_dict", "set_element", "local_chunk", "StagedChunk"]


def _holds_container(seq):
    return any(isinstance(v, (Tensor, dict, list, tuple)) for v in seq)


def flatten_state_dict(state_dict):
    """(flat dict of dotted keys -> values, dotted key -> path of keys)."""
    flat, mapping = {}, {}

    def walk(obj, path):
        if isinstance(obj, dict) and obj:
            for k, v in obj.items():
                walk(v, path + (k,))
            return
        if isinstance(obj, (list, tuple)) and obj and _holds_container(obj):
            for i, v in enumerate(obj):
                walk(v, path + (i,))
            return
        fqn = ".".join(str(p) for p in path)
        if fqn in flat:
            raise ValueError(f"duplicated flatten key {fqn}")
        flat[fqn], mapping[fqn] = obj, path

    for key, value in state_dict.items():
        walk(value, (key,))
    return flat, mapping


def set_element(root, path, value):
    """Sets ``root[path[0]][path[1]]...`` to ``value`` (a tuple on the way becomes a list
    in its parent, so that it can hold the new value)."""
    obj = root
    for i, p in enumerate(path[:-1]):
        nxt = obj[p]
        if isinstance(nxt, tuple):
            nxt = list(nxt)
            obj[p] = nxt
        obj = nxt
    obj[path[-1]] = value


def _dtensor_chunk(dt):
    """(local data, global size, global offsets) of a DTensor: each Shard mesh dimension
    takes chunk ``coordinate`` (as torch.chunk) of what the earlier ones left."""
    from ..tensor._api import _alias
    from ..tensor.placement_types import Partial, Shard, chunk_range
    mesh, size = dt.device_mesh, tuple(dt._spec.shape)
    coord = mesh.get_coordinate()
    if coord is None:
        return None
    lengths, offsets = list(size), [0] * len(size)
    for i, p in enumerate(dt.placements):
        if isinstance(p, Partial):
            raise ValueError("distributed checkpoint: a DTensor with a Partial placement "
                             "cannot be saved; redistribute it to Replicate or Shard first")
        if isinstance(p, Shard):
            start, n = chunk_range(lengths[p.dim], mesh.size(i), coord[i])
            offsets[p.dim] += start
            lengths[p.dim] = n
    return _alias(dt).detach(), size, tuple(offsets)


def _dim0_chunk(local, fp):
    """(data, global size, offsets) of a local tensor of FSDP's dim-0 rows of ``fp``'s
    parameter shape; offsets None where this rank holds none of a 0-d parameter."""
    if not fp.full_shape:
        return local.reshape(()), (), (() if fp.local_rows else None)
    start = min(fp.rank * fp.chunk, fp.rows)
    return local, fp.full_shape, (start,) + (0,) * (len(fp.full_shape) - 1)


def local_chunk(value):
    """For a tensor value: (this rank's data, global size, offsets of the data in the global
    tensor or None if it holds none, sharded), where sharded says other ranks hold other
    chunks; None for other values.
    Sharded values are DTensors, FSDP's sharded parameters, and the local tensors of
    ``get_model_state_dict``/``get_optimizer_state_dict`` (marked ``_dcp_fsdp``)."""
    if isinstance(value, StagedChunk):
        return value.data, value.size, value.offsets, True
    if not isinstance(value, Tensor):
        return None
    from ..tensor._api import DTensor
    if isinstance(value, DTensor):
        got = _dtensor_chunk(value)
        if got is None:         # this rank is not in the DTensor's mesh
            return value, tuple(value._spec.shape), None, True
        return got + (any(p.is_shard() for p in value.placements),)
    fp = getattr(value, "_fsdp_param", None) or getattr(value, "_dcp_fsdp", None)
    if fp is not None and not fp.state.replicate and fp.world > 1:
        return _dim0_chunk(value.detach(), fp) + (True,)
    return value.detach(), tuple(value.shape), (0,) * value.dim(), False


class StagedChunk:
    """A sharded tensor's local chunk copied to the cpu, with where it sits (what
    ``async_save`` writes)."""

    def __init__(self, got):
        data, self.size, self.offsets, _ = got
        self.dtype, self.requires_grad = data.dtype, data.requires_grad
        self.data = data.cpu().clone() if self.offsets is not None else None


def mark_fsdp_shards(module, state_dict, prefix, local_metadata):
    """A state_dict post-hook of ``fully_shard`` modules: the local shards in
    ``module.state_dict()`` carry where they sit (``_dcp_fsdp``), so that a distributed
    checkpoint of ``model.state_dict()`` saves and loads them as shards."""
    by_storage = {id(fp.sharded_param._storage): fp
                  for fp in module._fsdp_state.fsdp_params}
    for key, value in state_dict.items():
        if key.startswith(prefix) and isinstance(value, Tensor):
            fp = by_storage.get(id(value._storage))
            if fp is not None and value is not fp.sharded_param:
                value._dcp_fsdp = fp
