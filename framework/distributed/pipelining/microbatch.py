"""Splitting a whole batch into microbatches and merging outputs back (PyTorch's
``torch.distributed.pipelining.microbatch``)."""
from ... import _tensor, cat
from ...utils._pytree import tree_flatten, tree_map, tree_unflatten

DEFAULT_CHUNK_DIM = 0


class TensorChunkSpec:
    """Says along which dimension a tensor argument is split into microbatches."""

    def __init__(self, split_dim):
        self.split_dim = split_dim

    def __repr__(self):
        return f"{self.__class__.__module__}.{self.__class__.__name__}({self.split_dim})"

    def __str__(self):
        return f"TensorChunkSpec({self.split_dim})"

    @staticmethod
    def from_tuple(chunk_dims):
        """A tuple of specs from a tuple of split dimensions."""
        return tuple(TensorChunkSpec(d) for d in chunk_dims)

    @staticmethod
    def from_dict(chunk_dims):
        """A dict of specs from a dict of split dimensions."""
        return {k: TensorChunkSpec(d) for k, d in chunk_dims.items()}


class _Replicate:
    """Marks an argument that every microbatch receives whole."""


def _is_tensor(v):
    return isinstance(v, _tensor.Tensor)


def _split_tensor(tensor, spec, num_chunks):
    if tensor.size(spec.split_dim) < num_chunks:
        raise AssertionError(
            f"Tensor size {tensor.size(spec.split_dim)} is smaller than num_chunks")
    chunks = tensor.tensor_split(num_chunks, spec.split_dim)
    # views of a leaf get no .grad of their own unless asked
    if tensor.requires_grad and tensor.is_leaf:
        for c in chunks:
            c.retain_grad()
    return list(chunks)


def _shard_dict_of_args(args_dict, args_chunk_spec, num_chunks):
    if not args_dict:
        return [{} for _ in range(num_chunks)]
    if len(args_dict) != len(args_chunk_spec):
        raise AssertionError(f"args_dict.keys() = {list(args_dict.keys())} "
                             f"args_chunk_spec.keys() = {list(args_chunk_spec.keys())}")
    values, spec_tree = tree_flatten(args_dict)
    specs, _ = tree_flatten(args_chunk_spec, is_leaf=lambda s: isinstance(s, _Replicate))
    if len(specs) != len(values):
        raise AssertionError(f"{len(values)} arguments but {len(specs)} chunk specs")
    sizes = []
    for v, spec in zip(values, specs):
        if isinstance(spec, _Replicate) or spec is _Replicate:
            sizes.append(num_chunks)
        elif _is_tensor(v):
            sizes.append(v.size(spec.split_dim))
        else:
            raise ValueError(f"Unsupported chunk spec: {spec} and value: {v} combination.")
    n = min(*sizes, num_chunks)
    per_chunk = [[] for _ in range(n)]
    for v, spec in zip(values, specs):
        parts = [v] * n if not _is_tensor(v) or isinstance(spec, _Replicate) or \
            spec is _Replicate else _split_tensor(v, spec, n)
        for acc, p in zip(per_chunk, parts):
            acc.append(p)
    return [tree_unflatten(acc, spec_tree) for acc in per_chunk]


def split_args_kwargs_into_chunks(args, kwargs, chunks, args_chunk_spec=None,
                                  kwargs_chunk_spec=None):
    """Splits ``args`` and ``kwargs`` into ``chunks`` microbatches: tensors along their
    spec's dimension (dimension 0 by default, as ``tensor_split`` does), other values
    replicated. Returns ``(args_split, kwargs_split)``, lists of tuples and dicts."""
    kwargs = {} if kwargs is None else kwargs

    def default_spec(v):
        return TensorChunkSpec(DEFAULT_CHUNK_DIM) if _is_tensor(v) else _Replicate()

    if args_chunk_spec is None:
        args_chunk_spec = tree_map(default_spec, args)
    if kwargs_chunk_spec is None:
        kwargs_chunk_spec = tree_map(default_spec, kwargs)
    args_split = _shard_dict_of_args(dict(enumerate(args)), dict(enumerate(args_chunk_spec)),
                                     chunks)
    n = len(args_split)
    kwargs_split = _shard_dict_of_args(kwargs, kwargs_chunk_spec, n)
    if len(kwargs_split) < n:
        # kwargs hold fewer rows than args: both take the smaller count
        n = len(kwargs_split)
        args_split = _shard_dict_of_args(dict(enumerate(args)),
                                         dict(enumerate(args_chunk_spec)), n)
    if len(args_split) != len(kwargs_split):
        raise RuntimeError("args and kwargs are split into different number of chunks: "
                           f"{len(args_split)}, {len(kwargs_split)}")
    return [tuple(a[i] for i in range(len(a))) for a in args_split], kwargs_split


def merge_chunks(chunks, chunk_spec):
    """Merges microbatch outputs into one value: tensors concatenated along their spec's
    dimension (dimension 0 when ``chunk_spec`` is None), other values taken from the first
    chunk."""
    if chunk_spec is not None:
        specs, _ = tree_flatten(chunk_spec, is_leaf=lambda s: isinstance(s, _Replicate))
        _, out_tree = tree_flatten(chunks[0])
    else:
        first, out_tree = tree_flatten(chunks[0])
        specs = [TensorChunkSpec(DEFAULT_CHUNK_DIM)] * len(first)
    flat = []
    for c in chunks:
        leaves, _ = tree_flatten(c)
        if len(leaves) != len(specs):
            raise ValueError(f"Chunk {c} did not match chunk spec {chunk_spec}")
        flat.append(leaves)
    merged = []
    for i, spec in enumerate(specs):
        vals = [leaves[i] for leaves in flat]
        if isinstance(spec, TensorChunkSpec) and _is_tensor(vals[0]):
            merged.append(cat(vals, dim=spec.split_dim))
        else:
            merged.append(vals[0])
    return tree_unflatten(merged, out_tree)
