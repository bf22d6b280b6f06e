"""Tensor printing, character for character as PyTorch prints (``repr(tensor)``).

Works on a NumPy array of the tensor's values (16-bit floats already widened to float32),
so that it needs no tensor ops and prints CPU and CUDA tensors alike.
"""
import contextlib
import dataclasses
import math

import numpy as np

from framework import _dtype

__all__ = ["set_printoptions", "get_printoptions", "printoptions", "tensor_repr", "tensor_str",
           "repr_tensor"]


@dataclasses.dataclass
class _PrinterOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: object = None


PRINT_OPTS = _PrinterOptions()


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """Changes how tensors print; arguments left as None keep their current value, except
    ``sci_mode``, which every call resets (None: choose scientific notation automatically).

    ``precision`` digits after the point, ``threshold`` element count above which a print is
    summarized with ``...``, ``edgeitems`` items kept at each end of a summarized dim,
    ``linewidth`` characters per line, ``profile`` one of "default", "short", "full".
    """
    if profile is not None:
        if profile == "default":
            PRINT_OPTS.precision, PRINT_OPTS.threshold = 4, 1000
            PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 3, 80
        elif profile == "short":
            PRINT_OPTS.precision, PRINT_OPTS.threshold = 2, 1000
            PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 2, 80
        elif profile == "full":
            PRINT_OPTS.precision, PRINT_OPTS.threshold = 4, math.inf
            PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 3, 80
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    # As in PyTorch, every call resets sci_mode (None means automatic).
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions():
    """The print options now in force, as keyword arguments for set_printoptions."""
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs):
    """Applies set_printoptions(**kwargs) inside a ``with`` block and restores the
    previous options after it."""
    old_kwargs = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old_kwargs)


class _Formatter:
    """Chooses one width and one notation for all the printed values of a tensor."""

    def __init__(self, values, floating):
        # values: 1-d array of the values that will be printed
        self.floating_dtype = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        precision = PRINT_OPTS.precision

        if not floating:
            for value in np.unique(values).tolist():
                self.max_width = max(self.max_width, len(f"{value}"))
            return

        with np.errstate(invalid="ignore"):     # a signaling NaN (float8 *fnuz's) widens
            vals = values.astype(np.float64)
        vals = vals[np.isfinite(vals) & (vals != 0)]
        if vals.size == 0:
            return
        absvals = np.abs(vals)
        vmin, vmax = float(absvals.min()), float(absvals.max())
        self.int_mode = bool(np.all(vals == np.ceil(vals)))
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = vmax / vmin > 1000.0 or vmax > 1.0e8 or vmin < 1.0e-4
        else:
            self.sci_mode = PRINT_OPTS.sci_mode

        # Only the distinct values matter for the widest one.
        uniq = np.unique(vals).tolist()
        if self.sci_mode:
            widths = [len(f"{value:.{precision}e}") for value in uniq]
        elif self.int_mode:
            # a trailing "." marks the tensor as floating: one more character
            widths = [len(f"{value:.0f}") + 1 for value in uniq]
        else:
            widths = [len(f"{value:.{precision}f}") for value in uniq]
        self.max_width = max(self.max_width, max(widths))

    def width(self):
        return self.max_width

    def format(self, value):
        if self.floating_dtype:
            if self.sci_mode:
                ret = f"{value:{self.max_width}.{PRINT_OPTS.precision}e}"
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{value:.{PRINT_OPTS.precision}f}"
        else:
            ret = f"{value}"
        return (self.max_width - len(ret)) * " " + ret


def _summarized_values(arr):
    """The values that a summarized print shows, flattened (PyTorch's get_summarized_data)."""
    edge = PRINT_OPTS.edgeitems
    if arr.ndim == 0:
        return arr.reshape(-1)
    if arr.ndim == 1:
        if arr.shape[0] > 2 * edge:
            # arr[-0:] is the whole vector when edgeitems is 0, as in PyTorch
            return np.concatenate((arr[:edge], arr[-edge:]))
        return arr
    if not edge:
        return arr.reshape(-1)[:0]
    if arr.shape[0] > 2 * edge:
        rows = list(range(edge)) + list(range(arr.shape[0] - edge, arr.shape[0]))
    else:
        rows = range(arr.shape[0])
    return np.concatenate([_summarized_values(arr[i]) for i in rows])


def _format(fmt, value):
    """One value as printed: ``fmt`` is (formatter,), or (real, imaginary formatters) for
    complex values, printed as PyTorch does (``1.+2.j``, ``-1.5000-0.2500j``)."""
    if len(fmt) == 1:
        return fmt[0].format(value)
    real = fmt[0].format(value.real)
    imag = (fmt[1].format(value.imag) + "j").lstrip()
    return real + imag if imag[0] in "+-" else real + "+" + imag


def _vector_str(arr, indent, summarize, fmt):
    # length includes spaces and comma between elements (and, for complex values, the
    # imaginary part and its "j")
    element_length = fmt[0].width() + 2
    if len(fmt) == 2:
        element_length += fmt[1].width() + 1
    elements_per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / element_length))
    edge = PRINT_OPTS.edgeitems
    if summarize and not edge:
        data = ["..."]
    elif summarize and arr.shape[0] > 2 * edge:
        data = ([_format(fmt, v) for v in arr[:edge].tolist()] + [" ..."]
                + [_format(fmt, v) for v in arr[-edge:].tolist()])
    else:
        data = [_format(fmt, v) for v in arr.tolist()]
    lines = [", ".join(data[i:i + elements_per_line])
             for i in range(0, len(data), elements_per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested_str(arr, indent, summarize, fmt):
    if arr.ndim == 0:
        return _format(fmt, arr.item())
    if arr.ndim == 1:
        return _vector_str(arr, indent, summarize, fmt)
    edge = PRINT_OPTS.edgeitems
    n = arr.shape[0]
    if summarize and n > 2 * edge:
        slices = ([_nested_str(arr[i], indent + 1, summarize, fmt) for i in range(edge)]
                  + ["..."]
                  + [_nested_str(arr[i], indent + 1, summarize, fmt)
                     for i in range(n - edge, n)])
    else:
        slices = [_nested_str(arr[i], indent + 1, summarize, fmt) for i in range(n)]
    # blocks of 3-d and more are separated by (ndim - 2) blank lines
    return "[" + ("," + "\n" * (arr.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def tensor_str(values, floating, indent):
    """The bracketed body of a tensor's print, lines after the first indented by
    ``indent + 1`` spaces. ``floating`` says whether the tensor's dtype is floating; complex
    values get one formatter for the real parts and one for the imaginary parts."""
    values = np.asarray(values)
    if values.size == 0:
        return "[]"
    if floating and values.dtype.kind not in "fc":
        values = values.astype(np.float64)
    summarize = values.size > PRINT_OPTS.threshold
    flat = _summarized_values(values) if summarize else values.reshape(-1)
    if values.dtype.kind == "c":
        fmt = (_Formatter(flat.real, True), _Formatter(flat.imag, True))
    else:
        fmt = (_Formatter(flat, floating),)
    return _nested_str(values, indent, summarize, fmt)


def _torch_len(suffix):
    # Line breaks fall where PyTorch puts them: "framework." counts as "torch." would.
    return len(suffix) - (len("framework.") - len("torch.")) * suffix.count("framework.")


def _add_suffixes(text, suffixes, indent):
    parts = [text]
    # PyTorch's count: two more than the characters on the last line
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        suffix_len = _torch_len(suffix)
        if last_line_len + suffix_len + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + suffix_len
        else:
            parts.append(", " + suffix)
            last_line_len += suffix_len + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(values, dtype_name, device_str="cpu", suffixes=None, prefix="tensor("):
    """``repr`` of a tensor, as PyTorch writes it with ``torch.`` read as ``framework.``.

    Args:
        values: NumPy array of the tensor's values and shape (float16/bfloat16 given as
            float32; complex values as a complex array).
        dtype_name: the tensor's dtype name, e.g. ``"float32"``, ``"bfloat16"``.
        device_str: ``str(tensor.device)``; printed unless it is ``"cpu"``.
        suffixes: further ``key=value`` texts, e.g. ``["grad_fn=<AddBackward0>"]``.
        prefix: text before the values.
    """
    values = np.asarray(values)
    if dtype_name not in _dtype._NAMES:
        raise ValueError(f"tensor_repr(): unknown dtype name {dtype_name!r}")
    dt = _dtype._by_name(dtype_name)
    if dt.is_complex and values.dtype.kind != "c":
        values = values.astype(np.complex128)
    default = _dtype.get_default_dtype()
    default_name = default.name
    indent = len(prefix)
    all_suffixes = []
    if device_str is not None and str(device_str) != "cpu":
        all_suffixes.append("device='" + str(device_str) + "'")
    if values.size == 0:
        # print the shape unless it is (0,), as NumPy does
        if values.ndim != 1:
            all_suffixes.append("size=" + str(tuple(values.shape)))
        # no values to infer an integer dtype from: any non-default dtype is shown
        if dtype_name != default_name:
            all_suffixes.append("dtype=" + str(dt))
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            all_suffixes.append("size=" + str(tuple(values.shape)))
        if dtype_name not in (default_name, default.to_complex().name, "int64", "bool"):
            all_suffixes.append("dtype=" + str(dt))
        body = tensor_str(values, dt.is_floating_point or dt.is_complex, indent)
    all_suffixes.extend(suffixes or ())
    return _add_suffixes(prefix + body, all_suffixes, indent)


def _grad_fn_name(grad_fn):
    name = getattr(grad_fn, "name", None)
    return name() if callable(name) else type(grad_fn).__name__


def repr_tensor(t):
    """``repr(t)`` for a framework Tensor, as PyTorch prints it."""
    from framework._tensor import Tensor

    suffixes = []
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{_grad_fn_name(t.grad_fn)}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    plain = type(t) is Tensor or type(t).__name__ == "Parameter"
    prefix = "tensor(" if plain else type(t).__name__ + "("
    if t.device.type == "meta":    # no values to print
        meta = [f"device='meta', size={tuple(t.shape)}"]
        if t.dtype is not _dtype.get_default_dtype():
            meta.append(f"dtype={t.dtype}")
        return _add_suffixes(prefix + "...", meta + suffixes, len(prefix))
    return tensor_repr(t.detach()._host_array(), t.dtype.name, str(t.device), suffixes, prefix)
