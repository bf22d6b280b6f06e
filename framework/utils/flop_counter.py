"""``FlopCounterMode``: counts the floating-point operations of matrix products,
convolutions and attention run inside it, per op and per module (PyTorch's
``torch.utils.flop_counter``).

PyTorch counts at its dispatcher, after composite ops have decomposed. Here the counting
wrappers go where the profiler puts its recording wrappers (framework/profiler/_record.py:
its ``targets()`` and ``Patches``), only on the ops that have a flop formula, and each
counted call is translated to the ATen op PyTorch would have run (``F.linear`` on a 2-D
input with a bias is ``aten.addmm``, a batched ``matmul`` is ``aten.bmm``...). Counts are
keyed by that op's name as a string, ``"aten.mm"`` (PyTorch keys by the op packet, whose
``str`` is the same text). Ops called inside a counted op are not counted again.

The backward pass: when a counted op records an autograd node, its backward flops (the
products PyTorch's backward would run, for the inputs that require grad) are attached to
that node, and counted when the engine runs it inside the mode (the engine's
``profile_hook``, chained with the profiler's). The formulas' own calls are not counted
again; a custom ``autograd.Function``'s backward is counted op by op.

Per-module counts come from global module forward hooks; an op's backward flops go to the
modules that were running when its forward ran.
"""
import functools
from collections import defaultdict
from math import prod

from ._flop_ops import Counting

__all__ = ["FlopCounterMode", "register_flop_formula"]

# op name ("aten.mm") -> formula(*shapes, out_shape=...) -> flops
flop_registry = {}


def register_flop_formula(targets, get_raw=False):
    """Registers ``fn(*args, out_shape=None, **kwargs)`` as the flop formula of the ops
    ``targets`` (names such as ``"aten.mm"``, or a list of them). With ``get_raw=False``
    tensor arguments arrive as their shapes."""
    def register_fun(fn):
        wrapped = fn if get_raw else _shape_wrapper(fn)
        for t in targets if isinstance(targets, (list, tuple)) else [targets]:
            if not isinstance(t, str):
                raise ValueError("register_flop_formula(targets): expected each target to "
                                 f"be an op name such as 'aten.mm', but got {t!r}")
            if t in flop_registry:
                raise RuntimeError(f"duplicate registrations for {t}")
            flop_registry[t] = wrapped
        return fn
    return register_fun


def _shape(x):
    from .._tensor import Tensor
    if isinstance(x, Tensor):
        return tuple(x.shape)
    if isinstance(x, (list, tuple)):
        return type(x)(_shape(i) for i in x)
    return x


def _shape_wrapper(fn):
    @functools.wraps(fn)
    def nf(*args, out_val=None, **kwargs):
        return fn(*_shape(args), out_shape=_shape(out_val), **_shape(kwargs))
    return nf


# ---- the formulas (PyTorch's conventions: a multiply-add is 2 flops, biases are free) ----

@register_flop_formula("aten.mm")
def mm_flop(a_shape, b_shape, *args, out_shape=None, **kwargs):
    """Count flops for matmul."""
    m, k = a_shape
    k2, n = b_shape
    assert k == k2, f"mm: inner dimensions must match, got {k} and {k2}"
    return m * n * 2 * k


@register_flop_formula("aten.addmm")
def addmm_flop(self_shape, a_shape, b_shape, out_shape=None, **kwargs):
    """Count flops for addmm."""
    return mm_flop(a_shape, b_shape)


@register_flop_formula("aten.bmm")
def bmm_flop(a_shape, b_shape, out_shape=None, **kwargs):
    """Count flops for the bmm operation."""
    b, m, k = a_shape
    b2, k2, n = b_shape
    assert b == b2 and k == k2, f"bmm: shapes {a_shape} and {b_shape} do not match"
    return b * m * n * 2 * k


@register_flop_formula("aten.baddbmm")
def baddbmm_flop(self_shape, a_shape, b_shape, out_shape=None, **kwargs):
    """Count flops for the baddbmm operation."""
    return bmm_flop(a_shape, b_shape)


def conv_flop_count(x_shape, w_shape, out_shape, transposed=False):
    """Count flops for convolution: 2 per multiply of the input and weight channels at
    each point of the output (of the input, for a transposed convolution)."""
    conv_shape = (x_shape if transposed else out_shape)[2:]
    c_out, c_in, *filter_size = w_shape
    return prod(conv_shape) * prod(filter_size) * x_shape[0] * c_out * c_in * 2


@register_flop_formula("aten.convolution")
def conv_flop(x_shape, w_shape, _bias, _stride, _padding, _dilation, transposed, *args,
              out_shape=None, **kwargs):
    """Count flops for convolution."""
    return conv_flop_count(x_shape, w_shape, out_shape, transposed=transposed)


def _t(shape):
    return [shape[1], shape[0]] + list(shape[2:])


@register_flop_formula("aten.convolution_backward")
def conv_backward_flop(grad_out_shape, x_shape, w_shape, _bias, _stride, _padding,
                       _dilation, transposed, _output_padding, _groups, output_mask,
                       out_shape, **kwargs):
    """Count flops for the convolution backward: grad_input is a transposed convolution
    of grad_output with the weight, grad_weight a convolution of the input with
    grad_output."""
    flops = 0
    if output_mask[0]:
        flops += conv_flop_count(grad_out_shape, w_shape, out_shape[0], not transposed)
    if output_mask[1]:
        if transposed:
            flops += conv_flop_count(_t(grad_out_shape), _t(x_shape), _t(out_shape[1]))
        else:
            flops += conv_flop_count(_t(x_shape), _t(grad_out_shape), _t(out_shape[1]))
    return flops


def sdpa_flop_count(query_shape, key_shape, value_shape):
    """Count flops for self-attention (query heads may be a multiple of key heads)."""
    b, h, s_q, d_q = query_shape
    s_k, d_v = key_shape[-2], value_shape[-1]
    return (bmm_flop((b * h, s_q, d_q), (b * h, d_q, s_k))
            + bmm_flop((b * h, s_q, s_k), (b * h, s_k, d_v)))


def sdpa_backward_flop_count(grad_out_shape, query_shape, key_shape, value_shape):
    """Count flops for the self-attention backward of a flash kernel: the scores are
    recomputed, then four products give the gradients."""
    b, h, s_q, d_q = query_shape
    s_k, d_v = key_shape[-2], value_shape[-1]
    bh = b * h
    return (bmm_flop((bh, s_q, d_q), (bh, d_q, s_k))      # scores, recomputed
            + bmm_flop((bh, s_q, d_v), (bh, d_v, s_k))    # grad of the scores
            + bmm_flop((bh, s_k, s_q), (bh, s_q, d_v))    # grad_value
            + bmm_flop((bh, s_q, s_k), (bh, s_k, d_q))    # grad_query
            + bmm_flop((bh, d_q, s_q), (bh, s_q, s_k)))   # grad_key


@register_flop_formula("aten._scaled_dot_product_flash_attention")
def sdpa_flop(query_shape, key_shape, value_shape, *args, out_shape=None, **kwargs):
    """Count flops for self-attention (causal masking is not discounted)."""
    return sdpa_flop_count(query_shape, key_shape, value_shape)


@register_flop_formula("aten._scaled_dot_product_flash_attention_backward")
def sdpa_backward_flop(grad_out_shape, query_shape, key_shape, value_shape, *args,
                       out_shape=None, **kwargs):
    """Count flops for self-attention backward."""
    return sdpa_backward_flop_count(grad_out_shape, query_shape, key_shape, value_shape)



# ---- the table ------------------------------------------------------------------------------

suffixes = ["", "K", "M", "B", "T"]


def get_suffix_str(number):
    # one more digit before switching suffix: 1.01B shows as 1001M
    return suffixes[max(0, min(len(suffixes) - 1, (len(str(number)) - 2) // 3))]


def convert_num_with_suffix(number, suffix):
    return f"{number / 1000 ** suffixes.index(suffix):.3f}" + suffix


def convert_to_percent_str(num, denom):
    return "0%" if denom == 0 else f"{num / denom:.2%}"


def _number(text):
    try:
        return float(text)
    except ValueError:
        return None


def _tabulate(rows, headers):
    """tabulate's ``simple`` table (which PyTorch prints with): the first column
    left-aligned, the others right, each at least two wider than its header; a column of
    plain numbers shown as tabulate shows it (``%g``)."""
    rows = [list(r) for r in rows]
    for i in range(1, len(headers)):
        values = [_number(r[i]) for r in rows]
        if all(v is not None for v in values):
            for r, v in zip(rows, values):
                r[i] = format(v, "g")
    widths = [max([len(h) + 2] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]

    def line(cells):
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()
    return "\n".join([line(headers), "  ".join("-" * w for w in widths)]
                     + [line(r) for r in rows])


class FlopCounterMode:
    """A context manager that counts the flops run inside it, per op and per module.

    Example::

        with FlopCounterMode(display=False) as flop_counter:
            mod(inp).sum().backward()
        flop_counter.get_total_flops()
    """

    def __init__(self, mods=None, depth=2, display=True, custom_mapping=None):
        self.flop_counts = defaultdict(lambda: defaultdict(int))
        self.depth = depth
        self.display = display
        if mods is not None:
            import warnings
            warnings.warn("mods argument is not needed anymore, you can stop passing it",
                          stacklevel=2)
        self.flop_registry = dict(flop_registry)
        for k, v in (custom_mapping or {}).items():
            self.flop_registry[k] = v if getattr(v, "_get_raw", False) else _shape_wrapper(v)
        self._counting = None

    def get_total_flops(self):
        return sum(self.flop_counts["Global"].values())

    def get_flop_counts(self):
        """The flop counts as ``{module name: {op name: flops}}``; ``"Global"`` holds all."""
        return {k: dict(v) for k, v in self.flop_counts.items()}

    def get_table(self, depth=None):
        if depth is None:
            depth = self.depth
        if depth is None:
            depth = 999999
        global_flops = self.get_total_flops()
        suffix = get_suffix_str(global_flops)
        subsumed = False

        def process_mod(name, indent):
            nonlocal subsumed
            total = sum(self.flop_counts[name].values())
            subsumed |= total >= global_flops
            pad = " " * indent
            rows = [[pad + name, convert_num_with_suffix(total, suffix),
                     convert_to_percent_str(total, global_flops)]]
            for k, v in self.flop_counts[name].items():
                rows.append([pad + " - " + str(k), convert_num_with_suffix(v, suffix),
                             convert_to_percent_str(v, global_flops)])
            return rows

        rows = []
        for mod in sorted(self.flop_counts):
            if mod == "Global":
                continue
            mod_depth = mod.count(".") + 1
            if mod_depth <= depth:
                rows.extend(process_mod(mod, mod_depth - 1))
        # "Global" is shown only when some flops ran outside every module
        if "Global" in self.flop_counts and not subsumed:
            for r in rows:
                r[0] = " " + r[0]
            rows = process_mod("Global", 0) + rows
        if not rows:
            rows = [["Global", "0", "0%"]]
        return _tabulate(rows, ["Module", "FLOP", "% Total"])

    def _count(self, op, flops, parents):
        for p in parents:
            self.flop_counts[p][op] += flops

    # not reentrant, as PyTorch's
    def __enter__(self):
        self.flop_counts.clear()
        self._counting = Counting(self)
        self._counting.start()
        return self

    def __exit__(self, *args):
        self._counting.stop()
        self._counting = None
        if self.display:
            print(self.get_table(self.depth))
        return False

