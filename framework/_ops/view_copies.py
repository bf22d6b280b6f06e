"""tensor_split / hsplit / vsplit / dsplit (views made by recorded narrows) and the
``*_copy`` ops: each view op of PyTorch with its result copied into a new contiguous
tensor (``clone`` records, so autograd goes through)."""
import framework as fw

from .. import _dtype
from .._tensor import Tensor, _wrap_dim
from .composites import write_out
from .pointwise import require_tensor, type_name
from .view_scatter import slice_key


# ---- splits -------------------------------------------------------------------------------

def _piece(input, d, start, end):
    n = input.shape[d]
    start = min(max(start + n if start < 0 else start, 0), n)
    end = min(max(end + n if end < 0 else end, 0), n)
    return input.narrow(d, start, max(end - start, 0))


def tensor_split(input, indices_or_sections, dim=0):
    """Views of ``input`` split along ``dim`` into ``n`` nearly equal parts (an int) or at
    the given indices (a list or a 1-d int64 tensor; a 0-d one is a number of parts)."""
    require_tensor("tensor_split", input, "input")
    if input.dim() == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    d = _wrap_dim(dim, input.dim(), "tensor_split")
    ios = indices_or_sections
    if isinstance(ios, Tensor):
        if ios.device.type != "cpu":
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be on "
                               f"cpu, but it's on {ios.device}")
        if ios.dtype is not _dtype.int64:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have "
                               f"dtype of long, but got {type_name(ios.dtype)}")
        if ios.dim() > 1:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be a "
                               f"zero-dimensional or one-dimensional tensor, but got a tensor "
                               f"with {ios.dim()} dims")
        ios = int(ios.item()) if ios.dim() == 0 else [int(v) for v in ios.tolist()]
    n = input.shape[d]
    if isinstance(ios, int):
        if ios <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {ios}")
        size, extra = divmod(n, ios)
        bounds, pos = [], 0
        for i in range(ios):
            step = size + (1 if i < extra else 0)
            bounds.append((pos, pos + step))
            pos += step
    else:
        idx = [int(v) for v in ios]
        starts = [0] + idx
        ends = idx + [n]
        bounds = list(zip(starts, ends))
    return tuple(_piece(input, d, s, e) for s, e in bounds)


def _dir_split(name, input, ios, min_dim, dim):
    require_tensor(name, input, "input")
    if input.dim() < min_dim:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dim} dimension, "
                           f"but got a tensor with {input.dim()} dimensions!")
    if isinstance(ios, int) and not isinstance(ios, bool):
        size = input.shape[dim]
        if ios == 0 or size % ios:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but "
                               f"the size of the dimension {size} is not divisible by the "
                               f"split_size {ios}!")
    return tensor_split(input, ios, dim)


def hsplit(input, indices_or_sections):
    """tensor_split along dim 1 (dim 0 for 1-d input); an int must divide that dim."""
    dim = 1 if isinstance(input, Tensor) and input.dim() > 1 else 0
    return _dir_split("hsplit", input, indices_or_sections, 1, dim)


def vsplit(input, indices_or_sections):
    """tensor_split along dim 0 of an at least 2-d input; an int must divide that dim."""
    return _dir_split("vsplit", input, indices_or_sections, 2, 0)


def dsplit(input, indices_or_sections):
    """tensor_split along dim 2 of an at least 3-d input; an int must divide that dim."""
    return _dir_split("dsplit", input, indices_or_sections, 3, 2)


# ---- *_copy ---------------------------------------------------------------------------------

def _contiguous_copy(t):
    return t.clone(memory_format=fw.contiguous_format)


def _copy(op, res, out):
    return write_out(op, _contiguous_copy(res), out)


def view_copy(input, size, *, out=None):
    """``input.view(size)`` (a shape or a dtype) copied."""
    require_tensor("view_copy", input, "input")
    return _copy("view_copy", input.view(size), out)


def permute_copy(input, dims, *, out=None):
    """``input.permute(dims)`` copied."""
    return _copy("permute_copy", fw.permute(input, dims), out)


def transpose_copy(input, dim0, dim1, *, out=None):
    """``input.transpose(dim0, dim1)`` copied."""
    return _copy("transpose_copy", fw.transpose(input, dim0, dim1), out)


def t_copy(input, *, out=None):
    """``input.t()`` copied."""
    return _copy("t_copy", fw.t(input), out)


def expand_copy(input, size, *, implicit=False, out=None):
    """``input.expand(size)`` copied."""
    return _copy("expand_copy", input.expand(*size), out)


def diagonal_copy(input, offset=0, dim1=0, dim2=1, *, out=None):
    """``input.diagonal(offset, dim1, dim2)`` copied."""
    return _copy("diagonal_copy", fw.diagonal(input, offset, dim1, dim2), out)


def select_copy(input, dim, index, *, out=None):
    """``input.select(dim, index)`` copied."""
    return _copy("select_copy", fw.select(input, dim, index), out)


def slice_copy(input, dim=0, start=None, end=None, step=1, *, out=None):
    """``input[..., start:end:step, ...]`` (at ``dim``) copied."""
    require_tensor("slice_copy", input, "input")
    if input.dim() == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, max(input.dim(), 1), "slice_copy")
    return _copy("slice_copy", input[slice_key(input.dim(), d, start, end, step)], out)


def narrow_copy(input, dim, start, length, *, out=None):
    """``input.narrow(dim, start, length)`` copied."""
    return _copy("narrow_copy", fw.narrow(input, dim, start, length), out)


def unsqueeze_copy(input, dim, *, out=None):
    """``input.unsqueeze(dim)`` copied."""
    return _copy("unsqueeze_copy", fw.unsqueeze(input, dim), out)


def squeeze_copy(input, dim=None, *, out=None):
    """``input.squeeze(dim)`` copied."""
    res = fw.squeeze(input) if dim is None else fw.squeeze(input, dim)
    return _copy("squeeze_copy", res, out)


def unfold_copy(input, dimension, size, step, *, out=None):
    """``input.unfold(dimension, size, step)`` copied."""
    require_tensor("unfold_copy", input, "input")
    return _copy("unfold_copy", input.unfold(dimension, size, step), out)


def as_strided_copy(input, size, stride, storage_offset=None, *, out=None):
    """``input.as_strided(size, stride, storage_offset)`` copied."""
    return _copy("as_strided_copy", fw.as_strided(input, size, stride, storage_offset), out)


def alias_copy(input, *, out=None):
    """A copy of ``input`` (the copy variant of the identity view)."""
    require_tensor("alias_copy", input, "input")
    return _copy("alias_copy", input, out)


def detach_copy(input, *, out=None):
    """``input.detach()`` copied (no gradient flows back)."""
    require_tensor("detach_copy", input, "input")
    return _copy("detach_copy", input.detach(), out)


def _copies(op, pieces, out):
    res = [_contiguous_copy(p) for p in pieces]
    if out is None:
        return res
    if len(out) != len(res):
        raise RuntimeError(f"{op}_out() expected an out= argument of size {len(res)}, got "
                           f"size {len(out)}")
    for o, r in zip(out, res):
        write_out(op, r, o)
    return None


def split_copy(input, split_size, dim=0, *, out=None):
    """``input.split(split_size, dim)``, each piece copied."""
    require_tensor("split_copy", input, "input")
    if not isinstance(split_size, int):
        raise TypeError(f"split_copy(): argument 'split_size' (position 2) must be int, not "
                        f"{type(split_size).__name__}")
    return _copies("split_copy", fw.split(input, split_size, dim), out)


def split_with_sizes_copy(input, split_sizes, dim=0, *, out=None):
    """``input.split(split_sizes, dim)`` with a list of sizes, each piece copied."""
    require_tensor("split_with_sizes_copy", input, "input")
    d = _wrap_dim(dim, max(input.dim(), 1), "split_with_sizes_copy")
    sizes = [int(s) for s in split_sizes]
    if sum(sizes) != input.shape[d]:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to "
                           f"{input.shape[d]} (input tensor's size at dimension {dim}), but "
                           f"got split_sizes={sizes}")
    return _copies("split_with_sizes_copy", fw.split(input, sizes, dim), out)


def unbind_copy(input, dim=0, *, out=None):
    """``input.unbind(dim)``, each slice copied."""
    return _copies("unbind_copy", fw.unbind(input, dim), out)
