"""``framework.func.rearrange``: einops-style ``rearrange`` (PyTorch's ``torch.func.rearrange``)
without einops.

A pattern ``"b (h h1) w -> b h (h1 w)"`` is parsed into its two sides; the input is reshaped
to its elementary axes (every parenthesised group split), permuted into the order of the
right side and reshaped into the right side's groups: a view where strides allow. The
parser's checks and messages are PyTorch's (functorch.einops); size mismatches raise
``DimensionBindError`` with the messages of PyTorch's first-class dims, which name the
elementary axes of the left side ``d0, d1, ...``.
"""
import functools
import keyword
import warnings

_ELLIPSIS = "\u2026"   # "..." is replaced by this one character while parsing


class DimensionBindError(Exception):
    """An axis size that does not fit the tensor (PyTorch's functorch.dim error)."""


class _Side:
    """One side of a pattern: ``groups`` is a list with, per tensor dim, either the list of
    its axis names (``[]`` for an anonymous axis of size 1) or ``_ELLIPSIS``."""

    def __init__(self, expression):
        self.has_ellipsis = False
        self.ellipsis_parenthesized = None
        self.identifiers = set()
        self.non_unit_anonymous = False
        self.groups = []
        if "." in expression:
            if "..." not in expression:
                raise ValueError("Expression may contain dots only inside ellipsis (...)")
            if expression.count("...") != 1 or expression.count(".") != 3:
                raise ValueError("Expression may contain dots only inside ellipsis (...); only "
                                 "one ellipsis for tensor ")
            expression = expression.replace("...", _ELLIPSIS)
            self.has_ellipsis = True
        group = None
        name = None
        for char in expression + " ":
            if char in "() ":
                if name is not None:
                    self._add(name, group)
                name = None
                if char == "(":
                    if group is not None:
                        raise ValueError("Axis composition is one-level (brackets inside "
                                         "brackets not allowed)")
                    group = []
                elif char == ")":
                    if group is None:
                        raise ValueError("Brackets are not balanced")
                    self.groups.append(group)
                    group = None
            elif char.isalnum() or char in ("_", _ELLIPSIS):
                name = char if name is None else name + char
            else:
                raise ValueError(f"Unknown character '{char}'")
        if group is not None:
            raise ValueError(f"Imbalanced parentheses in expression: '{expression}'")

    def _add(self, name, group):
        if name in self.identifiers:
            raise ValueError(f"Indexing expression contains duplicate dimension '{name}'")
        if name == _ELLIPSIS:
            self.identifiers.add(name)
            self.ellipsis_parenthesized = group is not None
            (self.groups if group is None else group).append(name)
            return
        if name.isdecimal():
            value = int(name)
            if value == 1:
                if group is None:
                    self.groups.append([])   # a size-1 axis; inside a group it changes nothing
                return
            if value < 1:
                raise ValueError(f"Anonymous axis should have positive length, not {value}")
            self.non_unit_anonymous = True
            name = object()   # anonymous axes never match one another
        else:
            _check_axis_name(name)
        self.identifiers.add(name)
        (self.groups if group is None else group).append([name] if group is None else name)


def _check_axis_name(name):
    if not name.isidentifier():
        reason = "not a valid python identifier"
    elif name[0] == "_" or name[-1] == "_":
        reason = "axis name should should not start or end with underscore"
    else:
        if keyword.iskeyword(name):
            warnings.warn(f"It is discouraged to use axes names that are keywords: {name}",
                          RuntimeWarning)
        if name == "axis":
            warnings.warn("It is discouraged to use 'axis' as an axis name and will raise an "
                          "error in future", FutureWarning)
        return
    raise ValueError(f"Invalid axis identifier: {name}\n{reason}")


@functools.lru_cache(256)
def _parse(pattern, lengths):
    """The two sides of ``pattern``, checked as PyTorch checks them (``lengths``: the
    ``axes_lengths`` items, a tuple)."""
    try:
        left_str, right_str = pattern.split("->")
    except ValueError:
        raise ValueError("Pattern must contain a single '->' separator") from None
    axes_lengths = dict(lengths)
    if _ELLIPSIS in axes_lengths:
        raise ValueError(f"'{_ELLIPSIS}' is not an allowed axis identifier")
    left, right = _Side(left_str), _Side(right_str)
    if not left.has_ellipsis and right.has_ellipsis:
        raise ValueError(f"Ellipsis found in right side, but not left side of a pattern "
                         f"{pattern}")
    if left.has_ellipsis and left.ellipsis_parenthesized:
        raise ValueError(f"Ellipsis is parenthesis in the left side is not allowed: {pattern}")
    for length in axes_lengths.values():
        if type(length) is not int:
            raise TypeError(f"rearrange axis lengths must be integers, got: {type(length)}")
    if left.non_unit_anonymous or right.non_unit_anonymous:
        raise ValueError("rearrange only supports unnamed axes of size 1")
    difference = left.identifiers ^ right.identifiers
    if difference:
        raise ValueError(f"Identifiers only on one side of rearrange expression (should be on "
                         f"both): {difference}")
    unmatched = axes_lengths.keys() - left.identifiers
    if unmatched:
        raise ValueError(f"Identifiers not found in rearrange expression: {unmatched}")
    return left, right


def _pack(names):
    return "(" + ", ".join(names) + ("," if len(names) == 1 else "") + ")"


def _group_sizes(group, names, size, axes_lengths):
    """The sizes of the axes of one left group whose product is the tensor dim ``size``."""
    sizes = [axes_lengths.get(a) for a in group]
    unknown = [i for i, s in enumerate(sizes) if s is None]
    if len(unknown) > 1:
        raise DimensionBindError(f"cannot infer the sizes of two dimensions at once "
                                 f"{names[unknown[0]]} and {names[unknown[1]]}")
    known = 1
    for s in sizes:
        if s is not None:
            known *= s
    if unknown:
        if size % known != 0:
            shown = ", ".join("'?'" if s is None else str(s) for s in sizes)
            raise DimensionBindError(f"inferred dimension does not evenly fit into larger "
                                     f"dimension: {size} vs ({shown})")
        sizes[unknown[0]] = size // known
    elif known != size:
        raise DimensionBindError(f"Dimension sizes to do not match ({size} != {known}) when "
                                 f"matching dimension pack {_pack(names)}")
    for s in sizes:
        if s < 0:
            raise RuntimeError(f"rearrange: axis sizes must be non-negative, got {sizes} for "
                               f"a dimension of size {size}")
    return sizes


def rearrange(tensor, pattern, **axes_lengths):
    r"""einops' ``rearrange``: reorders, groups (``(h w)``) and splits the dims of ``tensor``
    (or of the stack of a sequence of tensors) as ``pattern`` says, e.g.
    ``"b (h h1) w -> b h (h1 w)"``; ``...`` stands for the dims not named, ``1`` and ``()``
    for axes of size 1, and ``axes_lengths`` give the sizes of axes split from a dim."""
    import framework as _fw
    if not isinstance(tensor, _fw.Tensor):
        tensor = _fw.stack(tensor)
    left, right = _parse(pattern, tuple(axes_lengths.items()))
    ndim = tensor.dim()
    n_unit = sum(1 for g in left.groups if g == [])
    if left.has_ellipsis:
        n_ellipsis = ndim - (len(left.groups) - 1)
        pattern_ndim = n_unit + len(left.identifiers) - 1
        if pattern_ndim > ndim:
            raise ValueError(f"Number of dimensions in pattern ({pattern_ndim}) must be less "
                             f"than or equal to the number of dimensions in the tensor ({ndim})")
    else:
        n_ellipsis = 0
        if len(left.groups) != ndim:
            raise ValueError(f"Number of dimensions in pattern ({len(left.groups)}) must be "
                             f"equal to the number of dimensions in the tensor ({ndim})")
    # the elementary axes of the left side, in order: (key, size); ellipsis dims and
    # anonymous size-1 axes get keys of their own
    axes = []
    dim = 0
    for group in left.groups:
        if group == _ELLIPSIS:
            for j in range(n_ellipsis):
                axes.append(((_ELLIPSIS, j), tensor.shape[dim + j]))
            dim += n_ellipsis
            continue
        if group == []:
            axes.append((("unit", dim), tensor.shape[dim]))
        else:
            names = [f"d{len(axes) + i}" for i in range(len(group))]
            sizes = _group_sizes(group, names, tensor.shape[dim], axes_lengths)
            axes.extend(zip(group, sizes))
        dim += 1
    position = {key: i for i, (key, _) in enumerate(axes)}
    x = tensor.reshape([s for _, s in axes])
    # anonymous size-1 axes of the left side are reduced away (a sum), as in PyTorch
    units = [i for i, (key, _) in enumerate(axes) if isinstance(key, tuple) and key[0] == "unit"]
    if units:
        x = x.sum(units)
        kept = [a for i, a in enumerate(axes) if i not in units]
        position = {key: i for i, (key, _) in enumerate(kept)}
        axes = kept
    order, shape = [], []
    for group in right.groups:
        if group == _ELLIPSIS:
            keys = [(_ELLIPSIS, j) for j in range(n_ellipsis)]
            order += [position[k] for k in keys]
            shape += [axes[position[k]][1] for k in keys]
            continue
        keys = []
        for name in group:
            keys += [(_ELLIPSIS, j) for j in range(n_ellipsis)] if name == _ELLIPSIS else [name]
        order += [position[k] for k in keys]
        size = 1
        for k in keys:
            size *= axes[position[k]][1]
        shape.append(size)
    if order != list(range(len(order))):
        x = x.permute(order)
    return x.reshape(shape)
