"""Convolution: the im2col/col2im ops (1 to 3 spatial dims), ``nn.functional.unfold`` and
``fold`` (their 2-d public forms), and conv1d/2d/3d and conv_transpose1d/2d/3d composed
of them and the GEMM.

The columns of x (N, C, *spatial), KK = prod(kernel): row c*KK + k (k the kernel offset,
row-major) holds, at grid position g of sample n, the element of x at
g * stride - padding + k * dilation (zero in the padding). The internal ops keep the batch
inside the rows: _im2col returns (C*KK, N, *grid), so that one GEMM with N*L columns covers
the whole batch; PyTorch's unfold/fold use (N, C*KK, L). col2im sums columns back (the
adjoint, so each op is the other's derivative). The grid is normally
(spatial + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1; ``grid_size`` may set
it, which gives asymmetric padding (the right side is implied by the grid) for
padding="same" with even kernels, and lets col2im's derivative read the grid it was given.

A convolution with weight (O, C/G, *kernel) in G groups is a GEMM per group
    out[g] (O/G, N*L) = W[g] (O/G, C/G*KK) @ columns[g] (C/G*KK, N*L)
(framework.matmul); its derivatives (the GEMM's, and col2im for im2col) give the input
gradient col2im(W^T @ grad) and the weight gradient grad @ columns^T, each one GEMM. The
output comes out (O, N, *grid) and is transposed into place. A 1x1 convolution with stride
1 and no padding multiplies the input itself: as a GEMM per sample with the weight
broadcast over the batch (whose weight gradient is N products summed), unless its columns
are tall (C/G > 2 L), when a copy of x into the folded layout costs less. A transposed
convolution is the adjoint, columns = W^T @ x then col2im; it folds the batch (a copy of
x) when the weight is larger than twice x's sample.
"""
import builtins
import math
import warnings

from .. import _dtype
from .._tensor import Tensor
from . import alloc, args, conv_gemm, memory_format
from .pointwise import cpp_type_name, require_tensor, type_name
from .views import contiguous

_make = Tensor._make


# ---- im2col / col2im (internal ops, N-d) ---------------------------------------------------

def _grid(spatial, kernel, dilation, padding, stride):
    """Sliding-block counts per spatial dim (floor division, as PyTorch's div_rtn)."""
    return tuple((n + 2 * p - d * (k - 1) - 1) // s + 1
                 for n, k, d, p, s in zip(spatial, kernel, dilation, padding, stride))


def _sizes(op, name, value, n):
    v = args.int_list(op, name, (value,))
    if len(v) != n:
        raise RuntimeError(f"{op}: {name} must have {n} values, got {list(v)}")
    return v


def _geometry(op, nsp, kernel_size, dilation, padding, stride):
    k = _sizes(op, "kernel_size", kernel_size, nsp)
    d = _sizes(op, "dilation", dilation, nsp)
    p = _sizes(op, "padding", padding, nsp)
    s = _sizes(op, "stride", stride, nsp)
    if builtins.min(k) < 1 or builtins.min(d) < 1 or builtins.min(s) < 1 or builtins.min(p) < 0:
        raise RuntimeError(f"{op}: expected kernel_size, dilation and stride >= 1 and padding "
                           f">= 0, got kernel_size={list(k)}, dilation={list(d)}, "
                           f"padding={list(p)}, stride={list(s)}")
    return k, d, p, s


def _columns(t, n, rows, grid, batch_stride, row_stride):
    """The (N, rows, *grid) view the launchers take, over t's storage (grid contiguous)."""
    shape = (n, rows) + tuple(grid)
    strides = (batch_stride, row_stride) + alloc.contiguous_strides(tuple(grid))
    return _make(t._storage, shape, strides, t._offset, t.dtype)


def _grid_contiguous(t, first):
    """Whether the dims of t from ``first`` on are laid out contiguously."""
    shape = t._shape[first:]
    want = alloc.contiguous_strides(shape)
    return all(n <= 1 or s == w for n, s, w in zip(shape, t._stride[first:], want))


def im2col(input, kernel_size, dilation, padding, stride, grid_size=None):
    """The sliding blocks of ``input`` (N, C, *spatial; 1 to 3 spatial dims) as columns
    (C * prod(kernel_size), N, *grid); ``grid_size`` overrides the number of blocks per dim
    (blocks past the right padding read zeros)."""
    require_tensor("_im2col", input, "input", 1)
    nsp = input.dim() - 2
    if not 1 <= nsp <= 3:
        raise RuntimeError(f"_im2col: expected a 3-d to 5-d input, got {list(input._shape)}")
    k, d, p, s = _geometry("_im2col", nsp, kernel_size, dilation, padding, stride)
    grid = _grid(input._shape[2:], k, d, p, s) if grid_size is None else \
        _sizes("_im2col", "grid_size", grid_size, nsp)
    if builtins.min(grid) < 0:
        raise RuntimeError(f"_im2col: negative number of blocks {list(grid)}")
    n, c = input._shape[:2]
    rows, length = c * math.prod(k), math.prod(grid)
    out = alloc.empty((rows, n) + tuple(grid), input.dtype, input._storage.device)
    if out.numel():
        alloc.backend(input._storage.device).conv.im2col(
            input, _columns(out, n, rows, grid, length, n * length), k, d, p, s)
    return out


def col2im(input, output_size, kernel_size, dilation, padding, stride):
    """The adjoint of :func:`im2col`: columns ``input`` (C * prod(kernel_size), N, *grid)
    summed back into an (N, C, *output_size) tensor."""
    require_tensor("_col2im", input, "input", 1)
    nsp = input.dim() - 2
    if not 1 <= nsp <= 3:
        raise RuntimeError(f"_col2im: expected a 3-d to 5-d input, got {list(input._shape)}")
    k, d, p, s = _geometry("_col2im", nsp, kernel_size, dilation, padding, stride)
    size = _sizes("_col2im", "output_size", output_size, nsp)
    kk = math.prod(k)
    rows, n = input._shape[:2]
    if rows % kk or builtins.min(size) < 0:
        raise RuntimeError(f"_col2im: input of size {list(input._shape)} does not hold "
                           f"columns of kernel {list(k)} for an output of size {list(size)}")
    out = alloc.empty((n, rows // kk) + tuple(size), input.dtype, input._storage.device)
    if out.numel():
        x = input if _grid_contiguous(input, 2) else contiguous(input)
        cols = _columns(x, n, rows, x._shape[2:], x._stride[1], x._stride[0])
        alloc.backend(out._storage.device).conv.col2im(cols, out, k, d, p, s)
    return out


# ---- nn.functional.unfold / fold (PyTorch's im2col / col2im, 2 spatial dims) ---------------

def _pair_arg(op, name, pos, value):
    if not isinstance(value, (tuple, list)) and not (
            hasattr(value, "__iter__") and not isinstance(value, (str, Tensor))):
        value = (value, value)      # F.unfold's _pair: a non-iterable is repeated
    value = tuple(value)
    for i, v in enumerate(value[1:], 2):
        # PyTorch's parser judges the sequence by its first element; a later bad one fails
        # to unpack
        if (isinstance(v, (builtins.bool, str)) or not hasattr(v, "__index__")) and \
                hasattr(value[0], "__index__"):
            raise TypeError(f"{op}(): argument '{name}' failed to unpack the object at pos {i} "
                            f"with error \"type must be tuple of ints,but got "
                            f"{type(v).__name__}\"")
    return args.int_list(op, name, (value,), pos)


def _two(op, name, value):
    if len(value) != 2:
        raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(value)}")


def _check_hw(what, name, values, positive=True):
    h, w = values
    if (positive and (h <= 0 or w <= 0)) or (not positive and (h < 0 or w < 0)):
        label = {"kernel size": "kernel", "padding": "pad"}.get(name, name)
        raise RuntimeError(f"{name} should be {what}, but got {label}_height: {h} "
                           f"{label}_width: {w}")


def _float_only(op, x):
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f"\"{op}_{x._storage.device.type}\" not implemented for "
                                  f"'{type_name(x.dtype)}'")


def _size_at(x, dim):
    """x.size(dim), raising PyTorch's IndexError when x has fewer dims."""
    nd = x.dim()
    if dim >= nd:
        if nd == 0:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, "
                         f"{nd - 1}], but got {dim})")
    return x._shape[dim]


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Extracts sliding local blocks from a batched (N, C, H, W) or unbatched (C, H, W)
    input: returns (N, C * kh * kw, L), L the number of blocks.

    See :class:`framework.nn.Unfold` for details.
    """
    require_tensor("im2col", input, "input", 1)
    k = _pair_arg("im2col", "kernel_size", 2, kernel_size)
    d = _pair_arg("im2col", "dilation", 3, dilation)
    p = _pair_arg("im2col", "padding", 4, padding)
    s = _pair_arg("im2col", "stride", 5, stride)
    for name, v in (("kernel_size", k), ("dilation", d), ("padding", p), ("stride", s)):
        _two("im2col", name, v)
    _check_hw("greater than zero", "kernel size", k)
    _check_hw("greater than zero", "dilation", d)
    _check_hw("non-negative", "padding", p, positive=False)
    _check_hw("greater than zero", "stride", s)
    nd = input.dim()
    valid = _size_at(input, 1) != 0 and _size_at(input, 2) != 0
    if not ((nd == 3 and input._shape[0] and valid) or (nd == 4 and valid and input._shape[3])):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with possibly 0 batch size "
                           f"and other non-zero dimensions for input, but got: "
                           f"{list(input._shape)}")
    x = input if nd == 4 else _make(input._storage, (1,) + input._shape,
                                    (0,) + input._stride, input._offset, input.dtype)
    h, w = x._shape[2:]
    grid = _grid((h, w), k, d, p, s)
    if grid[0] < 1 or grid[1] < 1:
        raise RuntimeError(f"Given input with spatial size ({h}, {w}), kernel_size=({k[0]}, "
                           f"{k[1]}), dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), "
                           f"calculated shape of the array of sliding blocks as ({grid[0]}, "
                           f"{grid[1]}), but its components must be at least one.")
    if input.dtype is _dtype.bool:      # PyTorch's im2col takes bool: the copy is exact
        return unfold(input.to(_dtype.float32), k, d, p, s).to(_dtype.bool)
    _float_only("im2col_out", input)
    n, c = x._shape[:2]
    rows, length = c * k[0] * k[1], grid[0] * grid[1]
    out = alloc.empty((rows, length) if nd == 3 else (n, rows, length), input.dtype,
                      input._storage.device)
    if out.numel():
        alloc.backend(input._storage.device).conv.im2col(
            x, _columns(out, n, rows, grid, rows * length, length), k, d, p, s)
    return out


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Combines an array of sliding local blocks (N, C * kh * kw, L), or (C * kh * kw, L),
    into a tensor (N, C, *output_size) by summing overlapping values: the adjoint of
    :func:`unfold`.

    See :class:`framework.nn.Fold` for details.
    """
    require_tensor("col2im", input, "input", 1)
    o = _pair_arg("col2im", "output_size", 2, output_size)
    k = _pair_arg("col2im", "kernel_size", 3, kernel_size)
    d = _pair_arg("col2im", "dilation", 4, dilation)
    p = _pair_arg("col2im", "padding", 5, padding)
    s = _pair_arg("col2im", "stride", 6, stride)
    for name, v in (("output_size", o), ("kernel_size", k), ("dilation", d), ("padding", p),
                    ("stride", s)):
        _two("col2im", name, v)
    _check_hw("greater than zero", "kernel size", k)
    _check_hw("greater than zero", "stride", s)
    _check_hw("greater than zero", "dilation", d)
    _check_hw("non-negative", "padding", p, positive=False)
    nd, sh = input.dim(), input._shape
    if not ((nd == 2 and sh[0] and sh[1]) or (nd == 3 and sh[1] and sh[2])):
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                           f"batch size and non-zero dimensions for input, but got: {list(sh)}")
    # PyTorch checks an unbatched input as a batch of one: messages name dims 1 and 2
    n = sh[0] if nd == 3 else 1
    planes, length = sh[-2:]
    kk = k[0] * k[1]
    if planes % kk:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the "
                           f"product of kernel_size, but got input.size(1)={planes} and "
                           f"kernel_size=({k[0]}, {k[1]}).")
    grid = _grid(o, k, d, p, s)
    where = (f"Given output_size=({o[0]}, {o[1]}), kernel_size=({k[0]}, {k[1]}), "
             f"dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), stride=({s[0]}, {s[1]}), ")
    if length != grid[0] * grid[1]:
        raise RuntimeError(f"{where}expected size of input's dimension 2 to match the "
                           f"calculated number of sliding blocks {grid[0]} * {grid[1]} = "
                           f"{grid[0] * grid[1]}, but got input.size(2)={length}.")
    if grid[0] < 1 or grid[1] < 1:
        raise RuntimeError(f"{where}calculated shape of the array of sliding blocks as "
                           f"({grid[0]}, {grid[1]}), which is too small (non-positive)")
    if o[0] < 1 or o[1] < 1:
        raise RuntimeError(f"Expected output spatial size to be positive, but got: "
                           f"output_size=({o[0]}, {o[1]}).")
    if input.dtype is _dtype.bool:      # overlapping blocks add: true where any is
        return fold(input.to(_dtype.float32), o, k, d, p, s).to(_dtype.bool)
    _float_only("col2im_out", input)
    c = planes // kk
    out = alloc.empty((c,) + o if nd == 2 else (n, c) + o, input.dtype, input._storage.device)
    if out.numel():
        x = input if _grid_contiguous(input, nd - 1) else contiguous(input)
        cols = _columns(x, n, planes, grid, x._stride[0] if nd == 3 else 0, x._stride[-2])
        alloc.backend(out._storage.device).conv.col2im(
            cols, _make(out._storage, (n, c) + o, alloc.contiguous_strides((n, c) + o),
                        out._offset, out.dtype), k, d, p, s)
    return out


# ---- convolutions (composites of the recorded ops: autograd goes through them) --------------

_recorded = {}


def _fn(name):
    """The public (recorded) function of an op of the table."""
    f = _recorded.get(name)
    if f is None:
        from . import dispatcher
        f = _recorded[name] = dispatcher.function(name)
    return f


def _check_types(op, input, weight, bias):
    for name, t, pos in (("input", input, 1), ("weight", weight, 2)):
        require_tensor(op, t, name, pos)
    if bias is not None:
        require_tensor(op, bias, "bias", 3)


def _ints(op, name, value, nsp):
    """An int (repeated ``nsp`` times, as PyTorch's ``int[nsp]``) or a sequence of ints."""
    if isinstance(value, (tuple, list)) or value.__class__.__name__ == "Size":
        return list(args.int_list(op, name, (tuple(value),)))
    if hasattr(value, "__index__") and not isinstance(value, builtins.bool):
        return [args.to_int(op, name, value)] * nsp
    raise TypeError(f"{op}(): argument '{name}' must be tuple of ints, not "
                    f"{type(value).__name__}")


def _expand(name, values, dim):
    if len(values) == 1:
        return values * dim
    if len(values) != dim:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {dim} "
                           f"values to match the convolution dimensions, but got "
                           f"{name}={values}")
    return values


def _batchify(op, input, nsp):
    nd = input.dim()
    if nd not in (nsp + 1, nsp + 2):
        raise RuntimeError(f"Expected {nsp + 1}D (unbatched) or {nsp + 2}D (batched) input to "
                           f"{op}, but got input of size: {list(input._shape)}")
    return (input, True) if nd == nsp + 2 else (input.unsqueeze(0), False)


def _common_checks(op, input, weight, bias, transposed=False):
    """PyTorch's checks before the geometry: argument types, bias dtype (a transposed
    convolution casts the bias instead)."""
    _check_types(op, input, weight, bias)
    if bias is not None and bias.dtype is not input.dtype and not transposed:
        raise RuntimeError(f"Input type ({cpp_type_name(input.dtype)}) and bias type "
                           f"({cpp_type_name(bias.dtype)}) should be the same")


def _weight_checks(weight, groups):
    if weight.dim() < 3:
        raise RuntimeError("weight should have at least three dimensions")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    return weight.dim() - 2


def _shape_checks(x, weight, bias, groups, padding, stride, dilation, output_padding=None):
    """PyTorch's check_shape_forward (the transposed form when output_padding is given)."""
    if builtins.min(padding) < 0:
        raise RuntimeError("negative padding is not supported")
    if output_padding is not None and builtins.min(output_padding) < 0:
        raise RuntimeError("negative output_padding is not supported")
    if builtins.min(stride) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    if builtins.min(dilation) < 0:
        raise RuntimeError("dilation should be greater than zero")
    ws, k = list(weight._shape), weight.dim()
    if x.dim() != k:
        raise RuntimeError(f"Expected {k}-dimensional input for {k}-dimensional weight {ws}, "
                           f"but got {x.dim()}-dimensional input of size {list(x._shape)} "
                           f"instead")
    if ws[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at "
                           f"dimension 0, but got weight of size {ws} instead")
    if ws[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size [{ws}] instead")
    c = x._shape[1]
    if output_padding is None:
        if c != ws[1] * groups:
            raise RuntimeError(f"Given groups={groups}, weight of size {ws}, expected "
                               f"input{list(x._shape)} to have {ws[1] * groups} channels, but "
                               f"got {c} channels instead")
        nb = ws[0]
        what = f"Given weight of size {ws}"
    else:
        if c != ws[0]:
            raise RuntimeError(f"Given transposed=1, weight of size {ws}, expected "
                               f"input{list(x._shape)} to have {ws[0]} channels, but got {c} "
                               f"channels instead")
        nb = ws[1] * groups
        what = f"Given transposed=1, weight of size {ws}"
    if bias is not None and (bias.dim() != 1 or bias._shape[0] != nb):
        raise RuntimeError(f"{what}, expected bias to be 1-dimensional with {nb} elements, but "
                           f"got bias of size {list(bias._shape)} instead")


def _dtype_checks(op, x, weight, names):
    if weight.dtype is not x.dtype:
        raise RuntimeError(f"expected scalar type {type_name(x.dtype)} but found "
                           f"{type_name(weight.dtype)}")
    if x.dtype is _dtype.bool:
        raise NotImplementedError(f"\"{names[x._storage.device.type == 'cpu']}\" not "
                                  f"implemented for 'Bool'")


_SAME_WARNED = []


def _same_padding(x, weight, stride, dilation):
    """(left padding, right padding) per dim for padding='same' (PyTorch's checks first)."""
    k = weight.dim()
    dim = k - 2
    if x.dim() != k:
        raise RuntimeError(f"Expected {k}-dimensional input for {k}-dimensional "
                           f"weight{list(weight._shape)}, but got {x.dim()}-dimensional input "
                           f"of size {list(x._shape)} instead")
    for name, v in (("stride", stride), ("dilation", dilation)):
        if len(v) not in (dim, 1):
            raise RuntimeError(f"{name} cannot broadcast to {dim} dimensions")
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    dilation = _expand("dilation", dilation, dim)
    total = [d * (n - 1) for d, n in zip(dilation, weight._shape[2:])]
    left = [t // 2 for t in total]
    if any(t % 2 for t in total) and not _SAME_WARNED:
        _SAME_WARNED.append(True)
        warnings.warn("Using padding='same' with even kernel lengths and odd dilation may "
                      "require a zero-padded copy of the input be created", UserWarning,
                      stacklevel=4)
    return left, [t - lo for t, lo in zip(total, left)]


def _bias(out, bias, nsp):
    if bias is None:
        return out
    return out + bias.reshape((bias._shape[0],) + (1,) * nsp)


def _conv(op, nsp, input, weight, bias, stride, padding, dilation, groups):
    _common_checks(op, input, weight, bias)
    x, batched = _batchify(op, input, nsp)
    groups = args.to_int(op, "groups", groups)
    stride = _ints(op, "stride", stride, nsp)
    dilation = _ints(op, "dilation", dilation, nsp)
    if isinstance(padding, str) and padding not in ("same", "valid"):
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    dim = _weight_checks(weight, groups)
    if padding == "same":
        left, right = _same_padding(x, weight, stride, dilation)
        stride = _expand("stride", stride, dim)
        dilation = _expand("dilation", dilation, dim)
    else:
        pad = [0] if padding == "valid" else _ints(op, "padding", padding, nsp)
        stride = _expand("stride", stride, dim)
        left = right = _expand("padding", pad, dim)
        dilation = _expand("dilation", dilation, dim)
    _shape_checks(x, weight, bias, groups, left, stride, dilation)
    if builtins.min(dilation) == 0:
        raise RuntimeError("non-positive dilation is not supported")
    ks = weight._shape[2:]
    padded = [n + a + b for n, a, b in zip(x._shape[2:], left, right)]
    reach = [d * (k - 1) + 1 for d, k in zip(dilation, ks)]
    if any(p < r for p, r in zip(padded, reach)):
        raise RuntimeError(f"Calculated padded input size per channel: "
                           f"({' x '.join(map(str, padded))}). Kernel size: "
                           f"({' x '.join(map(str, reach))}). Kernel size can't be greater "
                           f"than actual input size")
    if 0 in x._shape[2:] and x._shape[0] and x._shape[1]:
        raise RuntimeError(f"Only zero batch or zero channel inputs are supported, but got "
                           f"input shape: {list(x._shape)}")
    args.same_device(op, x, weight, bias)
    _dtype_checks(op, x, weight, ("slow_conv2d_cuda", "compute_columns3d" if dim == 3 else
                                  "slow_conv2d_cpu"))
    n, c = x._shape[:2]
    o = weight._shape[0]
    grid = tuple((p - r) // s + 1 for p, r, s in zip(padded, reach, stride))
    if c == 0:
        # PyTorch returns an empty (N, 0, *grid) result for inputs without channels
        parts = [t.sum() for t in (x, weight, bias) if t is not None]
        out = (builtins.sum(parts[1:], parts[0]) * 0).expand((n, 0) + grid).contiguous()
        return out if batched else out.squeeze(0)
    if conv_gemm.takes(x, dim):   # cuda: implicit GEMM, the columns are never written
        out = _fn("_conv_gemm")(x, weight, bias, stride, left, dilation, groups, grid)
        return memory_format.keep_format(out, x, weight) if batched else out.squeeze(0)
    kdim = c // groups * math.prod(ks)
    length = math.prod(grid)
    one_by_one = all(k == 1 for k in ks) and all(s == 1 for s in stride) and \
        not any(left + right)
    # one GEMM over the batch (see the module doc)
    fold = n > 1 and (not one_by_one or kdim > 2 * length)
    if one_by_one:      # the input is the columns
        cols = x.transpose(0, 1).reshape(groups, kdim, n * length) if fold else \
            x.reshape(n, groups, kdim, length)
    else:
        cols = _fn("_im2col")(x, ks, dilation, left, stride, grid)     # (C*KK, N, *grid)
        cols = cols.reshape(groups, kdim, n * length) if fold else \
            cols.reshape(c * math.prod(ks), n, length).transpose(0, 1).reshape(
                n, groups, kdim, length)
    out = weight.reshape(groups, o // groups, kdim).matmul(cols)
    out = out.reshape((o, n) + grid).transpose(0, 1) if fold else out.reshape((n, o) + grid)
    out = _bias(out, bias, dim).contiguous()
    return memory_format.keep_format(out, x, weight) if batched else out.squeeze(0)


def _transposed_checks(x, weight, stride, padding, output_padding, dilation):
    """PyTorch's slow_conv_transpose shape checks; returns the output spatial size."""
    dim = weight.dim() - 2
    names = ("depth", "height", "width")[3 - builtins.max(dim, 2):]
    lead = [] if dim > 1 else [None]    # 1-d runs as 2-d with a height of 1

    def show(label, values, fill, sep=" "):
        vals = ([fill] if lead else []) + list(values)
        return sep.join(f"{label}_{nm}: {v}" for nm, v in zip(names, vals))
    if builtins.min(dilation) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got "
                           f"{show('dilation', dilation, 1, ', ')}")
    if weight.numel() == 0:
        ws = list(weight._shape)
        if dim == 3:
            raise RuntimeError(f"non-empty 5D (n_output_plane x n_input_plane x kernel_depth x "
                               f"kernel_height x kernel_width) tensor expected for weight, but "
                               f"got: {ws}")
        raise RuntimeError(f"non-empty 2D or 4D weight tensor expected, but got: "
                           f"{ws[:2] + [1] * (2 - dim) + ws[2:]}")
    if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation)):
        raise RuntimeError(f"output padding must be smaller than either stride or dilation, "
                           f"but got {show('output_padding', output_padding, 0)} "
                           f"{show('stride', stride, 1)} {show('dilation', dilation, 1)}")
    sizes = x._shape[2:]
    out = [(i - 1) * s - 2 * p + d * (k - 1) + op + 1 for i, s, p, d, k, op in
           zip(sizes, stride, padding, dilation, weight._shape[2:], output_padding)]
    if builtins.min(out) < 1:
        raise RuntimeError(f"Given input size per channel: "
                           f"({' x '.join(map(str, ([1] if lead else []) + list(sizes)))}). "
                           f"Calculated output size per channel: "
                           f"({' x '.join(map(str, ([1] if lead else []) + out))}). Output "
                           f"size is too small")
    return tuple(out)


def _conv_transpose(op, nsp, input, weight, bias, stride, padding, output_padding, groups,
                    dilation):
    _common_checks(op, input, weight, bias, transposed=True)
    x, batched = _batchify(op, input, nsp)
    stride = _ints(op, "stride", stride, nsp)
    padding = _ints(op, "padding", padding, nsp)
    output_padding = _ints(op, "output_padding", output_padding, nsp)
    groups = args.to_int(op, "groups", groups)
    dilation = _ints(op, "dilation", dilation, nsp)
    dim = _weight_checks(weight, groups)
    stride, padding, dilation, output_padding = (
        _expand(name, v, dim) for name, v in (("stride", stride), ("padding", padding),
                                              ("dilation", dilation),
                                              ("output_padding", output_padding)))
    _shape_checks(x, weight, bias, groups, padding, stride, dilation, output_padding)
    size = _transposed_checks(x, weight, stride, padding, output_padding, dilation)
    args.same_device(op, x, weight, bias)
    name = f"slow_conv_transpose{builtins.max(dim, 2)}d_out"
    _dtype_checks(op, x, weight, (name + "_cuda", name + "_cpu"))
    if bias is not None and bias.dtype is not x.dtype:
        # PyTorch's 1-d and 2-d transposed convolutions cast the bias; the 3-d one refuses
        if dim == 3:
            raise RuntimeError(f"expected scalar type {type_name(x.dtype)} but found "
                               f"{type_name(bias.dtype)}")
        bias = bias.to(x.dtype)
    n, c = x._shape[:2]
    og, ks = weight._shape[1], weight._shape[2:]
    o, kk = og * groups, math.prod(ks)
    spatial = x._shape[2:]
    length = math.prod(spatial)
    wt = weight.reshape(groups, c // groups, og * kk).mT
    # one GEMM over the batch unless the per-sample weight gradients are the cheaper extra
    if n > 1 and weight.numel() > 2 * c * length:
        cols = wt.matmul(x.transpose(0, 1).reshape(groups, c // groups, n * length))
        cols = cols.reshape((o * kk, n) + spatial)
    else:
        cols = wt.matmul(x.reshape(n, groups, c // groups, length))
        cols = cols.reshape((n, o * kk) + spatial).transpose(0, 1)
    if all(k == 1 for k in ks) and all(s == 1 for s in stride) and not any(padding) and \
            not any(output_padding):
        out = cols.transpose(0, 1)      # 1x1, stride 1: the columns are the output
    else:
        out = _fn("_col2im")(cols, size, ks, dilation, padding, stride)
    out = _bias(out, bias, dim).contiguous()
    return out if batched else out.squeeze(0)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-d convolution over an input (N, C_in, L) or (C_in, L) with weight
    (C_out, C_in / groups, kL). ``padding`` is an int, a tuple, 'valid' or 'same'."""
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-d convolution over an input (N, C_in, H, W) or (C_in, H, W) with weight
    (C_out, C_in / groups, kH, kW). ``padding`` is an int, a tuple, 'valid' or 'same'."""
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-d convolution over an input (N, C_in, D, H, W) or (C_in, D, H, W) with weight
    (C_out, C_in / groups, kD, kH, kW). ``padding`` is an int, a tuple, 'valid' or 'same'."""
    return _conv("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """1-d transposed convolution ("deconvolution") of an input (N, C_in, L) or (C_in, L)
    with weight (C_in, C_out / groups, kL)."""
    return _conv_transpose("conv_transpose1d", 1, input, weight, bias, stride, padding,
                           output_padding, groups, dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """2-d transposed convolution of an input (N, C_in, H, W) or (C_in, H, W) with weight
    (C_in, C_out / groups, kH, kW)."""
    return _conv_transpose("conv_transpose2d", 2, input, weight, bias, stride, padding,
                           output_padding, groups, dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """3-d transposed convolution of an input (N, C_in, D, H, W) or (C_in, D, H, W) with
    weight (C_in, C_out / groups, kD, kH, kW)."""
    return _conv_transpose("conv_transpose3d", 3, input, weight, bias, stride, padding,
                           output_padding, groups, dilation)
