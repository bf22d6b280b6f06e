"""Max pooling with indices, the pooling rows of the op table:
nn.functional.max_pool{1,2,3}d_with_indices and adaptive_max_pool{1,2,3}d_with_indices.
Each returns (values, indices), indices being positions within one input plane (volume),
as PyTorch's; the backward (ops.yaml) scatter-adds the gradient at those positions.

Also here: PyTorch's argument parsing, output-size rule and shape checks for pooling (error
class and text as PyTorch's), which the composites of framework/nn/functional/pooling.py
(average, adaptive average, Lp pooling, unpooling) share.

The kernels (native/pool.cpp, framework/kernels/pool.py) take a contiguous stack of
(D, H, W) volumes: 1d and 2d pooling are 3d pooling with D = H = 1 or D = 1.
"""
import builtins

from . import alloc
from .args import int_tuple
from .pointwise import require_tensor


# ---- argument parsing ----------------------------------------------------------------------

def ints(op, name, value, pos):
    """An ``int`` or a sequence of ints as a tuple (PyTorch's ``int[]`` argument)."""
    if value.__class__ is builtins.int or (hasattr(type(value), "__index__")
                                           and not isinstance(value, builtins.bool)
                                           and not hasattr(value, "dtype")):
        return (int(value),)
    return int_tuple(op, name, value, pos)


def expand(values, n):
    """A 1-element tuple repeated n times (PyTorch's single-int shorthand)."""
    return values * n if len(values) == 1 else values


def trunc_div(a, b):
    """C++ integer division (rounds toward zero), which PyTorch's checks use."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def out_size(size, k, p, s, d, ceil_mode):
    """PyTorch's pooling output size along one dim (a window starting in the right padding
    is dropped in ceil mode)."""
    o = (size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (o - 1) * s >= size + p:
        o -= 1
    return o


def checked_out_size(size, k, p, s, d, ceil_mode):
    """out_size with the checks PyTorch makes while computing it."""
    if s == 0:
        raise RuntimeError("stride should not be zero")
    if p < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
    if p > trunc_div((k - 1) * d + 1, 2):
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                           f"pad={p}, kernel_size={k} and dilation={d}")
    return out_size(size, k, p, s, d, ceil_mode)


def sizes_text(shape):
    return "[" + ", ".join(str(s) for s in shape) + "]"


def parse_nd(op, nd, kernel_size, stride, padding, dilation, messages):
    """kernel, stride, padding, dilation as nd-tuples; ``messages`` maps each argument to
    PyTorch's error for a wrong length. stride None or [] means the kernel size."""
    k = ints(op, "kernel_size", kernel_size, 2)
    if len(k) not in (1, nd):
        raise RuntimeError(messages["kernel_size"])
    k = expand(k, nd)
    if stride is None:
        s = k
    else:
        s = ints(op, "stride", stride, 3)
        if len(s) not in (0, 1, nd):
            raise RuntimeError(messages["stride"])
        s = expand(s, nd) if s else k
    p = ints(op, "padding", padding, 4)
    if len(p) not in (1, nd):
        raise RuntimeError(messages["padding"])
    p = expand(p, nd)
    d = ints(op, "dilation", dilation, 5)
    if len(d) not in (1, nd):
        raise RuntimeError(messages.get("dilation", ""))
    return k, s, p, expand(d, nd)


def messages_2d(op):
    """PyTorch's length errors of max_pool2d / avg_pool2d."""
    return {"kernel_size": f"{op}: kernel_size must either be a single int, or a tuple of two "
                           "ints",
            "stride": f"{op}: stride must either be omitted, a single int, or a tuple of two "
                      "ints",
            "padding": f"{op}: padding must either be a single int, or a tuple of two ints",
            "dilation": f"{op}: dilation must be either a single int, or a tuple of two ints"}


def messages_3d(op):
    if op == "avg_pool3d":
        return {"kernel_size": "avg_pool3d: kernel_size must be a single int, or a tuple of "
                               "three ints",
                "stride": "avg_pool3d: stride must be omitted, a single int, or a tuple of "
                          "three ints",
                "padding": "avg_pool3d: padding must be a single int, or a tuple of three ints"}
    return {"kernel_size": f"{op}: kernel_size must either be a single int, or a tuple of "
                           "three ints",
            "stride": f"{op}: stride must either be omitted, a single int, or a tuple of three "
                      "ints",
            "padding": f"{op}: padding must either be a single int, or a tuple of three ints",
            "dilation": f"{op}: dilation must be either a single int, or a tuple of three ints"}


def parse_1d(op, kernel_size, stride, padding, dilation):
    """Arguments of a 1d op that PyTorch runs as 2d: each must have one element."""
    out = []
    for i, (name, v) in enumerate((("kernel_size", kernel_size), ("stride", stride),
                                   ("padding", padding), ("dilation", dilation))):
        if name == "stride" and v is None:
            out.append(out[0])
            continue
        t = ints(op, name, v, i + 2)
        if name == "stride" and not t:
            out.append(out[0])
            continue
        if len(t) != 1:
            raise RuntimeError(f"{op}() argument '{name}' should contain one int (got {len(t)})")
        out.append(t)
    return out


def check_rank_2_to_3(op, input):
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional "
                           f"tensor for argument #1 'self' (while checking arguments for {op})")


def shape_check_2d(x, k, s, p, d, out):
    """PyTorch's pool2d_shape_check on a 3-d or 4-d input x and output size ``out``."""
    if k[0] <= 0 or k[1] <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {k[0]} "
                           f"kW: {k[1]}")
    if s[0] <= 0 or s[1] <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got dH: {s[0]} dW: {s[1]}")
    if d[0] <= 0 or d[1] <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: {d[0]} "
                           f"dilationW: {d[1]}")
    shape = x.shape
    if 0 in shape[-3:] or x.dim() not in (3, 4):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                           f"size for input, but got:{sizes_text(shape)}")
    if k[1] // 2 < p[1] or k[0] // 2 < p[0]:
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but "
                           f"got padW = {p[1]}, padH = {p[0]}, kW = {k[1]}, kH = {k[0]}")
    if out[0] < 1 or out[1] < 1:
        c = shape[-3]
        raise RuntimeError(f"Given input size: ({c}x{shape[-2]}x{shape[-1]}). Calculated "
                           f"output size: ({c}x{out[0]}x{out[1]}). Output size is too small")


def shape_check_3d(fn, x, k, s, p, d, out, avg=False):
    """PyTorch's pool3d_shape_check on a 4-d or 5-d input x; ``fn`` names the op in the
    empty-input error."""
    if min(k) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kT: {k[0]} "
                           f"kH: {k[1]} kW: {k[2]}")
    if min(s) <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got dT: {s[0]} dH: {s[1]} "
                           f"dW: {s[2]}")
    if min(d) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationT: {d[0]} "
                           f"dilationH: {d[1]} dilationW: {d[2]}")
    shape = x.shape
    if 0 in shape[-4:]:
        raise RuntimeError(f"{fn}(): Expected input's non-batch dimensions to have positive "
                           f"length, but input has a shape of {sizes_text(shape)} and "
                           "non-batch dimension 0 has length zero!")
    t, h, w = shape[-3:]
    if avg and (t < k[0] or h < k[1] or w < k[2]):
        raise RuntimeError(f"input image (T: {t} H: {h} W: {w}) smaller than kernel size "
                           f"(kT: {k[0]} kH: {k[1]} kW: {k[2]})")
    if k[0] // 2 < p[0] or k[2] // 2 < p[2] or k[1] // 2 < p[1]:
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but "
                           f"got kT: {k[0]} kW: {k[2]} kH: {k[1]} padT: {p[0]} padW: {p[2]} "
                           f"padH: {p[1]}")
    if min(out) < 1:
        c = shape[-4]
        raise RuntimeError(f"Given input size: ({c}x{t}x{h}x{w}). Calculated output size: "
                           f"({c}x{out[0]}x{out[1]}x{out[2]}). Output size is too small")


def check_dtype(op, x, ints_ok):
    if x.dtype.name == "bool" or (not ints_ok and not x.dtype.is_floating_point):
        raise NotImplementedError(f"\"{op}\" not implemented for '{x.dtype.scalar_name}'")


# ---- the kernel call -----------------------------------------------------------------------

def _run(x, nd, out, k, s, p, d, adaptive):
    """(values, indices) of max pooling x's last nd dims into ``out`` (nd sizes)."""
    device = x._storage.device
    if not x.is_contiguous():
        x = x.contiguous()
    lead = x.shape[:x.dim() - nd]
    planes = alloc.numel(lead)
    pad3 = (3 - nd)
    in3 = (1,) * pad3 + tuple(x.shape[x.dim() - nd:])
    out3 = (1,) * pad3 + tuple(out)
    one, zero = (1,) * pad3, (0,) * pad3
    values = alloc.empty(tuple(lead) + tuple(out), x.dtype, device)
    indices = alloc.empty(tuple(lead) + tuple(out), _int64(), device)
    if values.numel():
        alloc.backend(device).pool.max_pool(x, values, indices, planes, in3, out3,
                                            one + tuple(k), one + tuple(s), zero + tuple(p),
                                            one + tuple(d), adaptive)
    return values, indices


def _int64():
    from .. import _dtype
    return _dtype.int64


def _max_pool2d(x, k, s, p, d, ceil_mode):
    """Max pooling of a 3-d or 4-d x over its last two dims, with PyTorch's checks."""
    h, w = x.shape[-2:]
    oh = checked_out_size(h, k[0], p[0], s[0], d[0], ceil_mode)
    ow = checked_out_size(w, k[1], p[1], s[1], d[1], ceil_mode)
    shape_check_2d(x, k, s, p, d, (oh, ow))
    check_dtype("max_pool2d", x, True)
    return _run(x, 2, (oh, ow), k, s, p, d, False)


# ---- the ops -------------------------------------------------------------------------------

def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """1d max pooling over (C, L) or (N, C, L): (values, indices)."""
    require_tensor("max_pool1d", input, "input", 1)
    check_rank_2_to_3("max_pool1d", input)
    k, s, p, d = parse_1d("max_pool1d", kernel_size, stride, padding, dilation)
    v, i = _max_pool2d(input.unsqueeze(-2), (1,) + k, (1,) + s, (0,) + p, (1,) + d,
                       ceil_mode)
    return v.squeeze(-2), i.squeeze(-2)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """2d max pooling over (C, H, W) or (N, C, H, W): (values, indices)."""
    require_tensor("max_pool2d", input, "input", 1)
    k, s, p, d = parse_nd("max_pool2d", 2, kernel_size, stride, padding, dilation,
                          messages_2d("max_pool2d"))
    if input.dim() not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    return _max_pool2d(input, k, s, p, d, ceil_mode)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """3d max pooling over (C, D, H, W) or (N, C, D, H, W): (values, indices)."""
    require_tensor("max_pool3d", input, "input", 1)
    k, s, p, d = parse_nd("max_pool3d", 3, kernel_size, stride, padding, dilation,
                          messages_3d("max_pool3d"))
    if input.dim() not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    out = tuple(checked_out_size(input.shape[i - 3], k[i], p[i], s[i], d[i], ceil_mode)
                for i in range(3))
    shape_check_3d("max_pool3d_with_indices_out_cpu_template", input, k, s, p, d, out)
    check_dtype("max_pool3d", input, True)
    return _run(input, 3, out, k, s, p, d, False)


def adaptive_output_size(op, input, output_size, nd):
    """PyTorch's output_size argument of adaptive pooling: an int, or a sequence whose None
    entries keep the input's size."""
    if isinstance(output_size, (tuple, list)) or output_size.__class__.__name__ == "Size":
        if input.dim() <= len(output_size):
            raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
        sizes = input.shape[input.dim() - len(output_size):]
        return tuple(int(sizes[i]) if v is None else v for i, v in enumerate(output_size))
    if output_size is None or isinstance(output_size, float):
        raise TypeError(f"object of type '{type(output_size).__name__}' has no len()")
    return (output_size,) * nd


def _adaptive_checks(op, kernel_op, input, nd, out, ranks_text):
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{op}(): Expected {ranks_text} tensor, but got: "
                           f"{sizes_text(input.shape)}")
    for i in range(1, input.dim()) if input.dim() == nd + 2 else range(input.dim()):
        if input.shape[i] == 0:
            raise RuntimeError(f"{op}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {sizes_text(input.shape)} with "
                               f"dimension {i} being empty")
    if len(out) != nd:
        raise RuntimeError(f"{op}(): internal error: output_size.size() must be {nd}")
    shape = tuple(input.shape[:input.dim() - nd]) + tuple(out)
    for v in out:
        if v < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {v}: "
                               f"{sizes_text(shape)}")
    check_dtype(kernel_op, input, False)


def _adaptive_max(input, nd, out):
    sizes = input.shape[input.dim() - nd:]
    # the largest bin along each dim bounds the kernel's window walk
    k = tuple(min(L, -(-L // o) + 1) if o else 1 for L, o in zip(sizes, out))
    return _run(input, nd, out, k, (1,) * nd, (0,) * nd, (1,) * nd, True)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """Adaptive 1d max pooling of (C, L) or (N, C, L) to output_size: (values, indices)."""
    require_tensor("adaptive_max_pool1d", input, "input", 1)
    check_rank_2_to_3("adaptive_max_pool1d", input)
    o = ints("adaptive_max_pool1d", "output_size", output_size, 2)
    if len(o) != 1:
        raise RuntimeError(f"adaptive_max_pool1d() argument 'output_size' should contain one "
                           f"int (got {len(o)})")
    for i in range(input.dim() - 2, input.dim()):
        if input.shape[i] == 0 and (i > 0 or input.dim() == 2):
            raise RuntimeError("adaptive_max_pool1d(): Expected input to have non-zero size for "
                               "non-batch dimensions, but input has sizes "
                               f"{sizes_text(input.shape)} with dimension {i} being empty")
    x = input.unsqueeze(-2)
    _adaptive_checks("adaptive_max_pool2d", "adaptive_max_pool2d", x, 2, (1,) + o, "3D or 4D")
    v, i = _adaptive_max(x, 2, (1,) + o)
    return v.squeeze(-2), i.squeeze(-2)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    """Adaptive 2d max pooling of (C, H, W) or (N, C, H, W): (values, indices)."""
    require_tensor("adaptive_max_pool2d", input, "input", 1)
    out = adaptive_output_size("adaptive_max_pool2d", input, output_size, 2)
    _adaptive_checks("adaptive_max_pool2d", "adaptive_max_pool2d", input, 2, out, "3D or 4D")
    return _adaptive_max(input, 2, out)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    """Adaptive 3d max pooling of (C, D, H, W) or (N, C, D, H, W): (values, indices)."""
    require_tensor("adaptive_max_pool3d", input, "input", 1)
    out = adaptive_output_size("adaptive_max_pool3d", input, output_size, 3)
    _adaptive_checks("adaptive_max_pool3d", "adaptive_max_pool3d_cpu", input, 3, out,
                     "4D or 5D")
    return _adaptive_max(input, 3, out)
