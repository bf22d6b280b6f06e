"""FlexAttention: scaled dot product attention with a user ``score_mod`` and a block-sparse
``BlockMask`` built from a ``mask_mod`` (PyTorch's ``torch.nn.attention.flex_attention``).

This is an eager implementation built from framework ops, so autograd reaches ``query``,
``key``, ``value`` and every tensor a ``score_mod`` captures (a learnable bias, say).
``score_mod(score, b, h, q_idx, kv_idx)`` and ``mask_mod(b, h, q_idx, kv_idx)`` are called
once, not once per element as under ``vmap``: ``score`` is the whole ``(B, Hq, L, S)``
score tensor and the indices are int32 tensors that broadcast against it (``b``:
``(B, 1, 1, 1)``, ``h``: ``(1, Hq, 1, 1)``, ``q_idx``: ``(1, 1, L, 1)``, ``kv_idx``:
``(1, 1, 1, S)``). Mods written with tensor ops (``torch.where``, arithmetic, indexing a
captured tensor with the indices) therefore give the same values as in PyTorch; a mod
that branches in Python on an index value does not work (it does not under PyTorch's
vmap either).

Memory: calls with a ``block_mask`` and no ``score_mod`` take the fused path
(``_flex_fused``): the flash-attention kernels walk only the blocks the BlockMask lists and
never hold the scores. Otherwise the ``B * Hq * L * S`` scores (and the mask) are
materialised in float32 (float64 for float64 inputs), as PyTorch's own eager path does.
Which positions take part follows PyTorch's kernels on both paths: positions in blocks
absent from the BlockMask are masked, positions in its "full" blocks are kept without
calling ``mask_mod``, and ``mask_mod`` decides inside its partial blocks.
"""
import itertools
import math
import warnings
from enum import Enum
from typing import Callable, NamedTuple, Optional

import framework

from . import _flex_fused

__all__ = ["BlockMask", "flex_attention", "AuxOutput", "AuxRequest", "FlexKernelOptions",
           "create_block_mask", "create_mask", "or_masks", "and_masks", "noop_mask"]

Tensor = framework.Tensor
_score_mod_signature = Callable[[Tensor, Tensor, Tensor, Tensor, Tensor], Tensor]
_mask_mod_signature = Callable[[Tensor, Tensor, Tensor, Tensor], Tensor]
FlexKernelOptions = dict   # Triton kernel options; accepted and ignored by the eager path

_DEFAULT_SPARSE_BLOCK_SIZE = 128
_LARGE_SPARSE_BLOCK_SIZE = 1 << 30
_WARNINGS_SHOWN = set()


class AuxRequest(NamedTuple):
    """Request which auxiliary outputs to compute from flex_attention."""
    lse: bool = False
    max_scores: bool = False


class AuxOutput(NamedTuple):
    """Auxiliary outputs from flex_attention; a field is None when not requested."""
    lse: Optional[Tensor] = None
    max_scores: Optional[Tensor] = None


class _ModificationType(Enum):
    SCORE_MOD = 1
    MASK_MOD = 2


def _get_mod_type(fn):
    """SCORE_MOD for a function of 5 positional arguments, MASK_MOD for one of 4."""
    code = getattr(fn, "__code__", None)
    if code is not None:
        n = code.co_argcount - len(getattr(fn, "__defaults__", None) or ())
    else:
        import inspect
        n = sum(1 for p in inspect.signature(fn).parameters.values()
                if p.default is inspect.Parameter.empty)
    if n not in (4, 5):
        raise AssertionError(f"Expected 4 or 5 positional args, got {n}")
    return _ModificationType.SCORE_MOD if n == 5 else _ModificationType.MASK_MOD


def noop_mask(batch, head, token_q, token_kv):
    """Returns a noop mask_mod"""
    return batch.new_ones((), dtype=framework.bool)


def _sliced_mask_mod_error(batch, head, token_q, token_kv):
    raise RuntimeError(
        "Cannot use mask_mod from a sliced BlockMask. When you slice a BlockMask using [], "
        "the mask_mod attribute is reset. You must set it from the original BlockMask's "
        "mask_mod.")


def or_masks(*mask_mods):
    """Returns a mask_mod that's the union of provided mask_mods"""
    if not all(callable(m) for m in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def or_mask(b, h, q_idx, kv_idx):
        result = b.new_zeros((), dtype=framework.bool)
        for m in mask_mods:
            result = result | m(b, h, q_idx, kv_idx)
        return result
    return or_mask


def and_masks(*mask_mods):
    """Returns a mask_mod that's the intersection of provided mask_mods"""
    if not all(callable(m) for m in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def and_mask(b, h, q_idx, kv_idx):
        result = b.new_ones((), dtype=framework.bool)
        for m in mask_mods:
            result = result & m(b, h, q_idx, kv_idx)
        return result
    return and_mask


# -- block-sparse layout helpers ---------------------------------------------------------------

def _ordered_to_dense(num_blocks_in_row, col_indices, num_cols):
    """The 0/1 int32 ``(..., rows, num_cols)`` matrix of a (num_blocks, indices) pair."""
    max_entries = col_indices.shape[-1]
    device = col_indices.device
    valid = (framework.arange(max_entries, device=device, dtype=framework.int32)
             < num_blocks_in_row.unsqueeze(-1))
    # invalid entries write into one extra column, cut off below
    cols = framework.where(valid, col_indices.long(), num_cols)
    dense = framework.zeros(tuple(col_indices.shape[:-1]) + (num_cols + 1,),
                            dtype=framework.int32, device=device)
    dense.scatter_(-1, cols, 1)
    return dense[..., :num_cols].contiguous()


def _dense_to_ordered(dense_mask):
    dense_mask = dense_mask.to(framework.int32)
    num_blocks_in_row = dense_mask.sum(dim=-1, dtype=framework.int32)
    # a stable descending sort lists the present blocks first, in ascending order
    col_indices = framework.argsort(dense_mask, dim=-1, descending=True, stable=True)
    return num_blocks_in_row.contiguous(), col_indices.to(framework.int32).contiguous()


def _transpose_ordered(num_blocks_in_row, col_indices):
    dense = _ordered_to_dense(num_blocks_in_row, col_indices, col_indices.shape[-1])
    return _dense_to_ordered(dense.transpose(-2, -1))


def _adjust_num_blocks_and_indices(num_blocks, indices, new_num_rows, new_num_cols):
    indices = indices[:, :, :new_num_rows, :new_num_cols]
    num_blocks = num_blocks[:, :, :new_num_rows].clamp(max=new_num_cols)
    num_blocks = (indices < num_blocks[:, :, :, None]).sum(dim=-1).to(framework.int32)
    return num_blocks, indices


class BlockMask:
    r"""A block-sparse attention mask: for each ``Q_BLOCK_SIZE`` row of blocks,
    ``kv_num_blocks`` counts the ``KV_BLOCK_SIZE`` column blocks that take part and
    ``kv_indices`` lists them (entries past the count are undefined). The optional
    ``full_kv_num_blocks``/``full_kv_indices`` list blocks in which every position takes
    part, so ``mask_mod`` is not applied there. ``q_num_blocks``/``q_indices`` (and their
    ``full_`` pair) are the same layout transposed, generated from the kv pair.
    """

    _TENSOR_ATTRS = ["kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices",
                     "q_num_blocks", "q_indices", "full_q_num_blocks", "full_q_indices"]

    def __init__(self, seq_lengths, kv_num_blocks, kv_indices, full_kv_num_blocks,
                 full_kv_indices, q_num_blocks, q_indices, full_q_num_blocks,
                 full_q_indices, BLOCK_SIZE=(_DEFAULT_SPARSE_BLOCK_SIZE,
                                             _DEFAULT_SPARSE_BLOCK_SIZE),
                 mask_mod=noop_mask):
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise AssertionError("full_kv_num_blocks and full_kv_indices must be both "
                                 "provided or omitted")
        if (full_q_num_blocks is None) != (full_q_indices is None):
            raise AssertionError("full_q_num_blocks and full_q_indices must be both "
                                 "provided or omitted")
        self.seq_lengths = tuple(seq_lengths)
        self.kv_num_blocks = kv_num_blocks
        self.kv_indices = kv_indices
        self.full_kv_num_blocks = full_kv_num_blocks
        self.full_kv_indices = full_kv_indices
        self.q_num_blocks = q_num_blocks
        self.q_indices = q_indices
        self.full_q_num_blocks = full_q_num_blocks
        self.full_q_indices = full_q_indices
        self.BLOCK_SIZE = tuple(BLOCK_SIZE)
        self.mask_mod = mask_mod

    @classmethod
    def from_kv_blocks(cls, kv_num_blocks, kv_indices, full_kv_num_blocks=None,
                       full_kv_indices=None, BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE,
                       mask_mod=None, seq_lengths=None, compute_q_blocks=True):
        """Creates a BlockMask from key-value block information; the q blocks are
        generated by transposing it."""
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise AssertionError("full_kv_num_blocks and full_kv_indices must be both "
                                 "provided or omitted")
        q_num_blocks = q_indices = full_q_num_blocks = full_q_indices = None
        if compute_q_blocks:
            q_num_blocks, q_indices = _transpose_ordered(kv_num_blocks, kv_indices)
            if full_kv_num_blocks is not None:
                full_q_num_blocks, full_q_indices = _transpose_ordered(full_kv_num_blocks,
                                                                       full_kv_indices)
        if isinstance(BLOCK_SIZE, int):
            BLOCK_SIZE = (BLOCK_SIZE, BLOCK_SIZE)
        if seq_lengths is None:
            seq_lengths = (kv_indices.shape[-2] * BLOCK_SIZE[0],
                           kv_indices.shape[-1] * BLOCK_SIZE[1])
        return cls(seq_lengths, kv_num_blocks, kv_indices, full_kv_num_blocks,
                   full_kv_indices, q_num_blocks, q_indices, full_q_num_blocks,
                   full_q_indices, BLOCK_SIZE=BLOCK_SIZE,
                   mask_mod=mask_mod if mask_mod is not None else noop_mask)

    def as_tuple(self, flatten=True):
        """The attributes of the BlockMask as a tuple (BLOCK_SIZE and seq_lengths
        flattened when ``flatten``)."""
        block_size = self.BLOCK_SIZE if flatten else (self.BLOCK_SIZE,)
        seq_lengths = self.seq_lengths if flatten else (self.seq_lengths,)
        return (*seq_lengths, self.kv_num_blocks, self.kv_indices, self.full_kv_num_blocks,
                self.full_kv_indices, self.q_num_blocks, self.q_indices,
                self.full_q_num_blocks, self.full_q_indices, *block_size, self.mask_mod)

    @property
    def shape(self):
        return tuple(self.kv_indices.shape[:-2]) + self.seq_lengths

    def numel(self):
        """Returns the number of elements (not accounting for sparsity) in the mask."""
        return math.prod(self.shape)

    def sparsity(self):
        """Computes the percentage of blocks that are sparse (i.e. not computed)"""
        computed = self.kv_num_blocks.sum().item()
        if self.full_kv_num_blocks is not None:
            computed += self.full_kv_num_blocks.sum().item()
        computed_size = computed * self.BLOCK_SIZE[0] * self.BLOCK_SIZE[1]
        return 100 * (1 - computed_size / self.numel())

    def to_dense(self):
        """Returns a dense block that is equivalent to the block mask."""
        dense = _ordered_to_dense(self.kv_num_blocks, self.kv_indices,
                                  self.kv_indices.shape[-1])
        if self.full_kv_num_blocks is not None:
            dense = dense | _ordered_to_dense(self.full_kv_num_blocks, self.full_kv_indices,
                                              self.full_kv_indices.shape[-1])
        return dense

    def to_string(self, grid_size=(20, 20), limit=4):
        """Returns a string drawing of the block mask, each cell summarising a section of
        blocks (full, empty or partly set). If grid_size is -1, every block is drawn."""
        dense = self.to_dense()
        *batch_dims, num_rows, num_cols = dense.shape
        if isinstance(grid_size, int) and grid_size == -1:
            max_rows, max_cols = num_rows, num_cols
        elif isinstance(grid_size, int):
            max_rows = max_cols = grid_size
        else:
            max_rows, max_cols = grid_size
        row_step = max(1, -(-num_rows // max_rows))
        col_step = max(1, -(-num_cols // max_cols))
        values = dense.tolist()
        parts = []
        for i, batch_idx in enumerate(itertools.product(*[range(n) for n in batch_dims])):
            if i == limit:
                parts += ["...", "To print out more, set BlockMask.to_string(limit=N)",
                          "You can also index (BlockMask[batch, head]) to choose a specific "
                          "batch or head"]
                break
            grid = values
            for j in batch_idx:
                grid = grid[j]
            vis = f"{batch_idx}\n"
            for r in range(0, num_rows, row_step):
                for c in range(0, num_cols, col_step):
                    cells = [x for row in grid[r:r + row_step] for x in row[c:c + col_step]]
                    share = sum(cells) / len(cells)
                    vis += ("█" if share == 1 else " " if share == 0 else "░") * 2
                vis += "\n"
            parts.append(vis)
        return "\n".join(parts)

    def __str__(self):
        return (f"BlockMask(shape={self.shape}, sparsity={self.sparsity():.2f}%, \n"
                f"{self.to_string().strip()}\n)")

    def __repr__(self):
        def shape_or_none(x):
            return x.shape if x is not None else None
        name = getattr(self.mask_mod, "__name__", self.mask_mod)
        return ("BlockMask(\n"
                f"    kv_num_blocks={self.kv_num_blocks.shape},\n"
                f"    kv_indices={self.kv_indices.shape},\n"
                f"    full_kv_num_blocks={shape_or_none(self.full_kv_num_blocks)},\n"
                f"    full_kv_indices={shape_or_none(self.full_kv_indices)},\n"
                f"    q_num_blocks={shape_or_none(self.q_num_blocks)},\n"
                f"    q_indices={shape_or_none(self.q_indices)},\n"
                f"    full_q_num_blocks={shape_or_none(self.full_q_num_blocks)},\n"
                f"    full_q_indices={shape_or_none(self.full_q_indices)},\n"
                f"    BLOCK_SIZE={self.BLOCK_SIZE},\n"
                f"    shape={self.shape},\n"
                f"    sparsity={self.sparsity():.2f}%,\n"
                f"    mask_mod={name}\n"
                ")")

    def __getitem__(self, index):
        """A new BlockMask for the given (batch, head, q block) index; its mask_mod is
        reset and must be set again from the original BlockMask's mask_mod."""
        index = index if isinstance(index, tuple) else (index,)
        padded = (*index, slice(None), slice(None), slice(None))[:3]
        sizes = self.kv_num_blocks.shape[:3]
        # an int keeps its dimension, as a slice of length one
        index = tuple((slice(i + n, i + n + 1) if -n <= i < 0 else slice(i, i + 1))
                      if isinstance(i, int) else i for i, n in zip(padded, sizes))
        full_num = full_idx = None
        if self.full_kv_num_blocks is not None:
            full_num, full_idx = self.full_kv_num_blocks[index], self.full_kv_indices[index]
        return BlockMask.from_kv_blocks(
            self.kv_num_blocks[index], self.kv_indices[index], full_num, full_idx,
            BLOCK_SIZE=self.BLOCK_SIZE, mask_mod=_sliced_mask_mod_error,
            seq_lengths=self.seq_lengths, compute_q_blocks=self.q_indices is not None)

    def _adjust(self, new_q_len, new_kv_len):
        """This BlockMask cropped to its upper left ``new_q_len x new_kv_len`` corner."""
        rows = -(-new_q_len // self.BLOCK_SIZE[0])
        cols = -(-new_kv_len // self.BLOCK_SIZE[1])
        num, idx = _adjust_num_blocks_and_indices(self.kv_num_blocks, self.kv_indices,
                                                  rows, cols)
        full_num = full_idx = None
        if self.full_kv_num_blocks is not None:
            full_num, full_idx = _adjust_num_blocks_and_indices(
                self.full_kv_num_blocks, self.full_kv_indices, rows, cols)
        return self.from_kv_blocks(num, idx, full_num, full_idx, BLOCK_SIZE=self.BLOCK_SIZE,
                                   mask_mod=self.mask_mod,
                                   seq_lengths=(new_q_len, new_kv_len),
                                   compute_q_blocks=self.q_indices is not None)

    def to(self, device):
        """A new BlockMask with its tensors moved to ``device``."""
        moved = {a: (None if getattr(self, a) is None else getattr(self, a).to(device))
                 for a in self._TENSOR_ATTRS}
        return BlockMask(self.seq_lengths, **moved, BLOCK_SIZE=self.BLOCK_SIZE,
                         mask_mod=self.mask_mod)


# -- building masks ----------------------------------------------------------------------------

def _default_device(device):
    if device is None:
        device = framework.accelerator.current_accelerator() or "cpu"
    return framework.device(device)


def _index_grids(B, H, Q_LEN, KV_LEN, device):
    """int32 index tensors b, h, q_idx, kv_idx that broadcast to (B, H, Q_LEN, KV_LEN)."""
    def ar(n, shape):
        return framework.arange(n, dtype=framework.int32, device=device).view(shape)
    return (ar(B, (B, 1, 1, 1)), ar(H, (1, H, 1, 1)), ar(Q_LEN, (1, 1, Q_LEN, 1)),
            ar(KV_LEN, (1, 1, 1, KV_LEN)))


def create_mask(mod_fn, B, H, Q_LEN, KV_LEN, device=None):
    r"""This function creates a mask tensor from a mod_fn function: the bool
    ``(B, H, Q_LEN, KV_LEN)`` mask of a mask_mod, or of where a score_mod does not give
    ``-inf``."""
    device = _default_device(device)
    B = 1 if B is None else B
    H = 1 if H is None else H
    b, h, m, n = _index_grids(B, H, Q_LEN, KV_LEN, device)
    if _get_mod_type(mod_fn) == _ModificationType.SCORE_MOD:
        out = mod_fn(framework.zeros(B, H, Q_LEN, KV_LEN, device=device), b, h, m, n)
        mask = framework.logical_not(framework.isneginf(out))
    else:
        mask = mod_fn(b, h, m, n)
    return mask.expand(B, H, Q_LEN, KV_LEN)


def _convert_mask_to_block_mask(mask, Q_BLOCK_SIZE, KV_BLOCK_SIZE, separate_full_blocks):
    """Per-block (partial, full) 0/1 tensors of a bool (B, H, Q, KV) mask; the mask is
    padded with False up to whole blocks."""
    if mask.dtype != framework.bool:
        raise AssertionError(f"mask.dtype must be torch.bool, got {mask.dtype}")
    B, H, Q, KV = mask.shape
    Qp = -(-Q // Q_BLOCK_SIZE) * Q_BLOCK_SIZE
    KVp = -(-KV // KV_BLOCK_SIZE) * KV_BLOCK_SIZE
    counts = framework.zeros(B, H, Qp, KVp, dtype=framework.int32, device=mask.device)
    counts[:, :, :Q, :KV] = mask
    counts = counts.view(B, H, Qp // Q_BLOCK_SIZE, Q_BLOCK_SIZE, KVp // KV_BLOCK_SIZE,
                         KV_BLOCK_SIZE).sum(dim=[3, 5])
    if not separate_full_blocks:
        return counts > 0, None
    whole = Q_BLOCK_SIZE * KV_BLOCK_SIZE
    return (counts > 0) & (counts < whole), counts == whole


def create_block_mask(mask_mod, B, H, Q_LEN, KV_LEN, device=None,
                      BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE, _compile=False,
                      separate_full_blocks=True, compute_dq_write_order=False,
                      dq_kv_order=True):
    r"""This function creates a block mask from a mask_mod function (which returns True
    where a query position may attend a key/value position). ``B``/``H`` of None mean 1
    (the mask broadcasts over batch/heads). ``BLOCK_SIZE`` is an int or a
    ``(Q_BLOCK_SIZE, KV_BLOCK_SIZE)`` pair. With ``separate_full_blocks`` fully unmasked
    blocks are stored apart, so mask_mod is not applied on them.
    """
    device = _default_device(device)
    if _get_mod_type(mask_mod) != _ModificationType.MASK_MOD:
        raise AssertionError(f"create-block_mask requires a mask_mod function! Got {mask_mod}")
    B = 1 if B is None else B
    H = 1 if H is None else H
    if isinstance(BLOCK_SIZE, int):
        Q_BLOCK_SIZE = KV_BLOCK_SIZE = BLOCK_SIZE
    else:
        Q_BLOCK_SIZE, KV_BLOCK_SIZE = BLOCK_SIZE
    if _compile:
        warnings.warn("_compile flag on create_block_mask was originally added to work around "
                      "a torch.compile limitation. That limitation has since been addressed. "
                      "So, to compile create_block_mask, we suggest doing "
                      "torch.compile(create_block_mask). This still works for now, but will "
                      "be removed in the future.", DeprecationWarning, stacklevel=2)
    if not isinstance(dq_kv_order, bool):
        raise ValueError("dq_kv_order must be a bool when using create_block_mask")
    if compute_dq_write_order:
        raise NotImplementedError("create_block_mask: compute_dq_write_order is not supported "
                                  "(no FLASH backward here)")
    mask = create_mask(mask_mod, B, H, Q_LEN, KV_LEN, device)
    partial, full = _convert_mask_to_block_mask(mask, Q_BLOCK_SIZE, KV_BLOCK_SIZE,
                                                separate_full_blocks)
    # the q-major layout is the transposed block matrix, which is at hand here
    kv_num, kv_idx = _dense_to_ordered(partial)
    q_num, q_idx = _dense_to_ordered(partial.transpose(-2, -1))
    full_kv_num = full_kv_idx = full_q_num = full_q_idx = None
    if full is not None:
        full_kv_num, full_kv_idx = _dense_to_ordered(full)
        full_q_num, full_q_idx = _dense_to_ordered(full.transpose(-2, -1))
    return BlockMask((Q_LEN, KV_LEN), kv_num, kv_idx, full_kv_num, full_kv_idx, q_num, q_idx,
                     full_q_num, full_q_idx, BLOCK_SIZE=(Q_BLOCK_SIZE, KV_BLOCK_SIZE),
                     mask_mod=mask_mod)


# -- flex_attention ----------------------------------------------------------------------------

def _warn_once(key, message, category):
    if key not in _WARNINGS_SHOWN:
        warnings.warn(message, category, stacklevel=3)
        _WARNINGS_SHOWN.add(key)


def _check_inputs(query, key, value, block_mask, enable_gqa):
    if query.device != key.device or query.device != value.device:
        raise ValueError(
            "Expected query, key, and value to have the same device type, but got "
            f"query.device: {query.device}, key.device: {key.device}, and value.device: "
            f"{value.device} instead.")
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise ValueError(
            "Expected query, key, and value to all be  at least 2 dimensional, but got "
            f"query.dim: {query.dim()}, key.dim: {key.dim()} and value.dim: {value.dim()} "
            "instead.")
    if query.size(-1) != key.size(-1):
        raise ValueError("Expect query and key/value to have the same embedding dimension "
                         f"but got E={query.size(-1)} and E={key.size(-1)}.")
    if not (query.dtype.is_floating_point and key.dtype.is_floating_point
            and value.dtype.is_floating_point):
        raise ValueError("flex_attention: expected floating point query, key and value, but "
                         f"got {query.dtype}, {key.dtype} and {value.dtype}")
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
        raise NotImplementedError("NYI: query, key, and value must be 4D tensors")
    if key.size(-2) != value.size(-2) or key.size(0) != value.size(0) \
            or key.size(1) != value.size(1):
        raise ValueError("flex_attention: key and value must have the same batch size, "
                         f"heads and length, but got key {tuple(key.shape)} and value "
                         f"{tuple(value.shape)}")
    if not enable_gqa and query.size(-3) != key.size(-3):
        raise ValueError(
            "Expect query and key/value to have the same number of heads but got "
            f"Hq={query.size(-3)} and Hkv={key.size(-3)}. Try setting enable_gqa=True for GQA.")
    if enable_gqa and query.size(1) % key.size(1) != 0:
        raise ValueError(
            "Expect number of query heads to be a multiple of kv heads for GQA but got "
            f"Hq={query.size(1)} and Hkv={key.size(1)}.")
    if query.size(0) != key.size(0):
        if block_mask is None:
            raise ValueError(
                "Expect query and key/value to have the same batch size, or non-none "
                f"block_mask, but got block_mask=None, Bq={query.size(0)}, and "
                f"Bkv={key.size(0)}.")
        if block_mask.kv_num_blocks.size(0) != query.size(0):
            raise ValueError(
                "Expect query and key/value to have the same batch size, or block_mask and "
                f"query to have the same batch size, but got Bq={query.size(0)}, "
                f"Bkv={key.size(0)}, B_block_mask={block_mask.kv_num_blocks.size(0)}.")
        if key.size(0) != 1:
            raise RuntimeError(f"Bq and Bkv must broadcast. Got Bq={query.size(0)} and "
                               f"Bkv={key.size(0)}")


def _check_block_mask(block_mask, query, key):
    if block_mask.mask_mod is _sliced_mask_mod_error:
        raise RuntimeError("Cannot use mask_mod from a sliced BlockMask")
    L, S = query.size(-2), key.size(-2)
    bm_q, bm_kv = block_mask.shape[-2], block_mask.shape[-1]
    if L > bm_q or S > bm_kv:
        raise ValueError(
            f"block_mask was created for block_mask.shape={block_mask.shape} but got "
            f"q_len={L} and kv_len={S}. As the block mask was created for a smaller length "
            "than you're using it for, you likely need to create a new block mask.")
    if L < bm_q or S < bm_kv:
        raise ValueError(
            f"block_mask was created for block_mask.shape={block_mask.shape} but got "
            f"q_len={L} and kv_len={S}. As the block mask was created for a larger length "
            "than you're using it for, you can either 1. create a new block mask with the "
            "correct length, or 2. 'adjust' the existing block mask to the correct length by "
            "calling block_mask._adjust(q_len, kv_len). This essentially 'crops' the block "
            "mask to the upper left corner, which does not work for all mask_mods!")
    if block_mask.kv_indices.dim() != 4:
        raise ValueError("flex_attention: block_mask must have (B, H, Q_BLOCKS, KV_BLOCKS) "
                         f"kv_indices, got shape {tuple(block_mask.kv_indices.shape)}")
    Bm, Hm = block_mask.kv_indices.shape[:2]
    if Bm not in (1, query.size(0)) or Hm not in (1, query.size(1)):
        raise ValueError(
            f"flex_attention: block_mask of shape {block_mask.shape} does not broadcast to "
            f"query batch {query.size(0)} and heads {query.size(1)}")
    if query.device != block_mask.kv_num_blocks.device:
        raise RuntimeError(
            "Expect q/k/v and block_mask to be on the same device but got "
            f"{query.device} and {block_mask.kv_num_blocks.device}.")


def _block_code(block_mask, L, S):
    """int32 (Bm, Hm, L, S) view of the block layout: 0 outside the listed blocks, 1 in
    partial blocks, 2 in full blocks. The block-level part and the row/column block
    numbers are kept on the BlockMask, which is usually reused for many calls."""
    tensors = (block_mask.kv_num_blocks, block_mask.kv_indices,
               block_mask.full_kv_num_blocks, block_mask.full_kv_indices)
    key = (L, S) + tuple((id(t), t._storage.version) for t in tensors if t is not None)
    cached = block_mask.__dict__.get("_code_cache")
    if cached is None or cached[0] != key:
        dense = _ordered_to_dense(block_mask.kv_num_blocks, block_mask.kv_indices,
                                  block_mask.kv_indices.shape[-1])
        if block_mask.full_kv_num_blocks is not None:
            dense = dense + 2 * _ordered_to_dense(block_mask.full_kv_num_blocks,
                                                  block_mask.full_kv_indices,
                                                  block_mask.full_kv_indices.shape[-1])
        device = dense.device
        q_block = framework.arange(L, dtype=framework.int32, device=device)
        kv_block = framework.arange(S, dtype=framework.int32, device=device)
        cached = (key, dense, q_block // block_mask.BLOCK_SIZE[0],
                  kv_block // block_mask.BLOCK_SIZE[1])
        block_mask._code_cache = cached
    _, dense, q_block, kv_block = cached
    return dense.index_select(-2, q_block).index_select(-1, kv_block)


def _position_mask(block_mask, grids, L, S):
    """Which positions take part, as the kernels decide: blocks of the BlockMask only;
    inside its full blocks every position, inside its partial blocks where mask_mod says
    so. None when every position does."""
    if block_mask is None or block_mask.BLOCK_SIZE == (_LARGE_SPARSE_BLOCK_SIZE,
                                                       _LARGE_SPARSE_BLOCK_SIZE):
        return None
    code = _block_code(block_mask, L, S)
    if block_mask.mask_mod is noop_mask:
        return code > 0
    partial = block_mask.mask_mod(*grids) & (code == 1)
    if block_mask.full_kv_num_blocks is None:
        return partial
    return partial | (code == 2)


def flex_attention(query, key, value, score_mod=None, block_mask=None, scale=None,
                   enable_gqa=False, return_lse=False, kernel_options=None, *,
                   return_aux=None):
    r"""Scaled dot product attention with an arbitrary score modification.

    ``scores = query @ key^T * scale``; then ``score_mod(scores, b, h, q_idx, kv_idx)``
    (see the module docstring for how the indices broadcast), positions masked out by
    ``block_mask`` set to ``-inf``, softmax over the key positions, times ``value``.
    query ``(B, Hq, L, E)``, key ``(B, Hkv, S, E)``, value ``(B, Hkv, S, Ev)``; returns
    ``(B, Hq, L, Ev)`` in query's dtype. ``scale`` defaults to ``1/sqrt(E)``.
    ``enable_gqa`` lets each key/value head serve ``Hq / Hkv`` query heads. Rows where
    every position is masked give zeros and a logsumexp of ``-inf``.

    With ``return_aux=AuxRequest(lse=..., max_scores=...)`` returns ``(output,
    AuxOutput)``; the deprecated ``return_lse=True`` returns ``(output, lse)``. lse and
    max_scores have shape ``(B, Hq, L)``, in float32 (float64 for float64 inputs).
    """
    _check_inputs(query, key, value, block_mask, enable_gqa)
    if block_mask is not None:
        _check_block_mask(block_mask, query, key)
    if return_lse and return_aux is not None:
        raise ValueError("Cannot specify both return_lse and return_aux. return_lse is "
                         "deprecated, please use return_aux=AuxRequest(lse=True) instead.")
    if return_lse:
        _warn_once("deprecated_return_lse", "return_lse is deprecated and will be removed in "
                   "v2.10. Please use return_aux=AuxRequest(lse=True) instead.", FutureWarning)
    if scale is None:
        scale = 1.0 / math.sqrt(query.size(-1))
    want_lse = return_lse or (return_aux is not None and return_aux.lse)
    want_max = return_aux is not None and return_aux.max_scores
    if _flex_fused.fusable(query, key, value, score_mod, block_mask, want_lse, want_max):
        out, lse = _flex_fused.fused_flex_attention(query, key, value, block_mask, scale,
                                                    want_lse)
        if return_aux is not None:
            return out, AuxOutput(lse=lse)
        return (out, lse) if return_lse else out
    B, Hq, L, _ = query.shape
    S = key.size(-2)
    work = framework.float64 if query.dtype == framework.float64 else framework.float32
    q, k, v = query.to(work), key.to(work), value.to(work)
    if Hq != k.size(1):
        k = k.repeat_interleave(Hq // k.size(1), dim=1)
        v = v.repeat_interleave(Hq // v.size(1), dim=1)
    if k.size(0) != B:
        k, v = k.expand(B, *k.shape[1:]), v.expand(B, *v.shape[1:])

    scores = framework.matmul(q, k.transpose(-2, -1)) * scale
    grids = _index_grids(B, Hq, L, S, query.device)
    if score_mod is not None:
        scores = score_mod(scores, *grids).to(work)
    mask = _position_mask(block_mask, grids, L, S)
    if mask is not None:
        scores = framework.where(mask, scores, float("-inf"))
    scores = scores.expand(B, Hq, L, S)

    # softmax shifted by a constant row max; rows masked everywhere take a shift of 0 and
    # a sum of 1, so they give zeros (and zero gradients) instead of NaN
    row_max = scores.amax(dim=-1, keepdim=True).detach()
    empty = row_max == float("-inf")
    shift = framework.where(empty, 0.0, row_max)
    exp = (scores - shift).exp()
    denom = framework.where(empty, 1.0, exp.sum(dim=-1, keepdim=True))
    out = framework.matmul(exp / denom, v).to(query.dtype)

    lse = max_scores = None
    if want_lse:
        lse = framework.where(empty, float("-inf"), denom.log() + shift).squeeze(-1)
    if want_max:
        max_scores = scores.amax(dim=-1)
    if return_aux is not None:
        return out, AuxOutput(lse=lse, max_scores=max_scores)
    if return_lse:
        return out, lse
    return out
