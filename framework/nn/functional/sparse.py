"""Embeddings: ``embedding`` (the fused op framework.embedding, framework/_ops/embedding.py),
``embedding_bag`` and ``one_hot`` (composites of index ops over that lookup).

With ``sparse=True`` the weight's gradient is a sparse COO tensor (PyTorch's layout: one
entry per looked-up index, uncoalesced)."""
import framework as fw

__all__ = ["embedding", "embedding_bag", "one_hot"]


def _check_indices(input, fn):
    if input.dtype not in (fw.int64, fw.int32):
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           "following scalar types: Long, Int; but got "
                           f"{input.type()} instead (while checking arguments for {fn})")


def _renorm_(weight, indices, max_norm, norm_type):
    """Rescales, in place and unrecorded, the rows of ``weight`` named in ``indices`` whose
    ``norm_type``-norm exceeds ``max_norm`` to norm ``max_norm``."""
    with fw.no_grad():
        idx = fw.unique(indices.reshape(-1))
        if idx.numel() == 0:
            return
        rows = weight.index_select(0, idx)
        norms = fw.linalg.vector_norm(rows, norm_type, 1, keepdim=True)
        scale = fw.where(norms > max_norm, max_norm / (norms + 1e-7),
                         fw.ones_like(norms))
        weight.index_copy_(0, idx, rows * scale)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    r"""Looks up rows of ``weight`` (``(num_embeddings, embedding_dim)``) at the indices in
    ``input``; output shape ``input.shape + (embedding_dim,)``.

    ``padding_idx``'s row gets no gradient; ``max_norm`` renormalizes, in place, the looked-up
    rows whose ``norm_type``-norm exceeds it; ``scale_grad_by_freq`` divides gradients by
    each index's frequency in the batch. ``sparse``: the gradient of ``weight`` is a sparse
    COO tensor.
    """
    n = weight.shape[0] if weight.dim() > 0 else 0
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < n, "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -n, "Padding_idx must be within num_embeddings"
            padding_idx = n + padding_idx
    _check_indices(input, "embedding")
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    if max_norm is not None:
        _renorm_(weight, input, max_norm, norm_type)
    return fw.embedding(weight, input, -1 if padding_idx is None else padding_idx,
                        scale_grad_by_freq, sparse)


def _bag_ids(offsets, n, include_last_offset):
    """The bag of each of the ``n`` flattened indices (``num_bags`` for indices past the
    last offset when ``include_last_offset``), and the number of bags."""
    num_bags = offsets.shape[0] - 1 if include_last_offset else offsets.shape[0]
    pos = fw.arange(n, device=offsets.device, dtype=offsets.dtype)
    bag = fw.searchsorted(offsets, pos, right=True) - 1
    if include_last_offset:
        # indices at or after the last offset belong to no bag
        bag = bag.clamp_max(num_bags)
    return bag, num_bags


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
                  scale_grad_by_freq=False, mode="mean", sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=None):
    r"""Sums, averages or maxes bags of rows of ``weight`` (a composite: the rows are looked
    up, then reduced per bag with ``index_add`` / ``scatter_reduce``).

    ``input`` is 2-D ``(B, L)`` (fixed-length bags, ``offsets`` must be None) or 1-D with
    ``offsets`` giving each bag's start. ``per_sample_weights`` (mode ``'sum'`` only) scales
    each looked-up row; ``padding_idx`` entries are left out of every bag (and of the mean's
    count); an empty bag gives zeros. Output ``(B, embedding_dim)``.
    """
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape!r}) "
                         "is not None, then it must have the same shape as the input "
                         f"({input.shape!r})")
    if weight.dim() != 2:
        raise ValueError("weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is "
                             "treated is a mini-batch of fixed length sequences. However, "
                             f"found offsets of type {type(offsets)}")
        b, length = input.shape
        offsets = fw.arange(b, dtype=input.dtype, device=input.device) * length
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError("input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.dim()}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max":
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. "
                                  "per_sample_weights is only supported for mode='sum' (got "
                                  f"mode='{mode}'). Please open a feature request on GitHub.")
    _check_indices(input, "embedding_bag")
    num = weight.shape[0]
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, {-num} "
                               f"through {num - 1}, but got {padding_idx}")
        if padding_idx < 0:
            padding_idx += num
    n = input.shape[0]
    if offsets.numel() > 0:
        first, last = int(offsets[0]), int(offsets[-1])
        if first != 0:
            raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the "
                               f"mini-batch has to start from position 0. However, got {first}")
        if last > n:
            raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but "
                               f"got offsets[-1] of {last}")
        if offsets.numel() > 1 and bool((offsets[1:] < offsets[:-1]).any()):
            raise RuntimeError("offsets has to be non-decreasing")
    elif include_last_offset:
        raise RuntimeError("include_last_offset: number of offset should be at least 1")
    elif n > 0:
        raise RuntimeError(f"offsets has to hold at least one bag start for an input of "
                           f"length {n}, but got empty offsets")
    if n > 0:
        if int(input.min()) < 0 or int(input.max()) >= num:
            pos = int(((input < 0) | (input >= num)).nonzero()[0, 0])
            bad = int(input[pos])
            raise RuntimeError(f"Index {pos} of input takes value {bad} which is not in the "
                               f"valid range [0, {num})")
    if max_norm is not None:
        _renorm_(weight, input, max_norm, norm_type)

    bag, num_bags = _bag_ids(offsets, n, include_last_offset)
    # drop padding entries and (with include_last_offset) entries past the last offset:
    # they belong to no bag and count for nothing
    keep = None
    if padding_idx is not None:
        keep = input != padding_idx
    if include_last_offset:
        inside = bag < num_bags
        keep = inside if keep is None else keep & inside
    idx, psw = input, per_sample_weights
    if keep is not None and not bool(keep.all()):
        sel = keep.nonzero().reshape(-1)
        idx, bag = input.index_select(0, sel), bag.index_select(0, sel)
        if psw is not None:
            psw = psw.index_select(0, sel)
    emb = fw.embedding(weight, idx, -1, scale_grad_by_freq, sparse)
    if psw is not None:
        emb = emb * psw.unsqueeze(1).to(emb.dtype)
    dim = weight.shape[1]
    bag = bag.to(fw.int64)
    zeros = weight.new_zeros((num_bags, dim))
    if mode == "max":
        index = bag.unsqueeze(1).expand(bag.shape[0], dim)
        return zeros.scatter_reduce(0, index, emb, "amax", include_self=False)
    out = zeros.index_add(0, bag, emb)
    if mode == "mean":
        counts = fw.bincount(bag, minlength=num_bags).clamp_min(1).to(out.dtype)
        out = out / counts.unsqueeze(1)
    return out


def one_hot(tensor, num_classes=-1):
    r"""Returns a ``(*, num_classes)`` int64 tensor that is 1 at each index of ``tensor`` and
    0 elsewhere; ``num_classes=-1`` means ``tensor.max() + 1``."""
    if tensor.dtype != fw.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor.numel() == 0:
        if num_classes == -1:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
    else:
        if int(tensor.min()) < 0:
            raise RuntimeError("Class values must be non-negative.")
        if num_classes == -1:
            num_classes = int(tensor.max()) + 1
        elif int(tensor.max()) >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    classes = fw.arange(num_classes, device=tensor.device)
    return (tensor.unsqueeze(-1) == classes).to(fw.int64)
