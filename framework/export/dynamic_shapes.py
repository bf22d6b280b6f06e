"""``Dim``, ``dims`` and the checking of ``dynamic_shapes`` (torch.export.dynamic_shapes),
with the errors export raises."""
import inspect
import math

__all__ = ["Dim", "dims", "UserError", "GuardOnDataDependentSymNode", "ValueRanges"]


class UserError(RuntimeError):
    """An export call the user must change: bad ``dynamic_shapes``, unsupported inputs
    (torch._dynamo.exc.UserError)."""


class GuardOnDataDependentSymNode(RuntimeError):
    """Python control flow decided by tensor data, which a traced graph cannot hold
    (torch.fx.experimental.symbolic_shapes.GuardOnDataDependentSymNode)."""


class ValueRanges:
    """The range ``[lower, upper]`` a dynamic dimension may take; ``upper`` may be
    ``math.inf`` (printed ``int_oo``, as PyTorch does)."""

    def __init__(self, lower, upper):
        self.lower, self.upper = lower, upper

    def __eq__(self, other):
        return isinstance(other, ValueRanges) and (self.lower, self.upper) == \
            (other.lower, other.upper)

    def __hash__(self):
        return hash((self.lower, self.upper))

    def __repr__(self):
        up = "int_oo" if self.upper == math.inf else self.upper
        return f"VR[{self.lower}, {up}]"


class _Symbol(str):
    """The name of a dynamic dimension (``s0``), a key of ``range_constraints``."""

    def __repr__(self):
        return str(self)


class _DimHint:
    def __init__(self, kind):
        self.kind = kind

    def __repr__(self):
        return f"DimHint({self.kind})"


class Dim:
    """A named dynamic dimension for ``export(..., dynamic_shapes=...)``: the same ``Dim``
    on two inputs says they are equal. ``Dim.AUTO`` lets export decide, ``Dim.DYNAMIC``
    asks for a dynamic dimension, ``Dim.STATIC`` a static one."""
    AUTO = _DimHint("AUTO")
    DYNAMIC = _DimHint("DYNAMIC")
    STATIC = _DimHint("STATIC")

    def __init__(self, name, *, min=None, max=None):
        lo = 0 if min is None else min
        hi = math.inf if max is None else max
        if hi < lo:
            raise AssertionError(f"Cannot create Dim with inconsistent min={min}, max={max}")
        if not name.isidentifier():
            raise AssertionError(f"Dim name must be a valid identifier, got {name}")
        self.__name__, self.min, self.max = name, lo, hi

    def __repr__(self):
        out = f"Dim('{self.__name__}'"
        if self.min != 2:
            out += f", min={self.min}"
        if self.max != math.inf:
            out += f", max={self.max}"
        return out + ")"


def dims(*names, min=None, max=None):
    """One ``Dim`` per name, all with the same bounds."""
    return tuple(Dim(name, min=min, max=max) for name in names)


def _spec_per_input(fn, args, kwargs, dynamic_shapes):
    """``dynamic_shapes`` as a dict: input name -> its spec (a dict or list over dims)."""
    params = list(inspect.signature(fn).parameters)[1:]   # after self
    names = params[:len(args)] + list(kwargs)
    if isinstance(dynamic_shapes, dict):
        if set(dynamic_shapes) - set(params):
            raise UserError(
                f"When `dynamic_shapes` is specified as a dict, its top-level keys must be "
                f"the arg names {names} of `inputs`, but here they are "
                f"{list(dynamic_shapes)}. Alternatively, you could also ignore arg names "
                "entirely and specify `dynamic_shapes` as a list/tuple matching `inputs`.")
        return dict(dynamic_shapes)
    if isinstance(dynamic_shapes, (list, tuple)):
        if len(dynamic_shapes) != len(names):
            raise UserError(f"dynamic_shapes has {len(dynamic_shapes)} entries but the "
                            f"inputs are {len(names)} ({names})")
        return dict(zip(names, dynamic_shapes))
    raise UserError(f"Unexpected dynamic_shapes of type {type(dynamic_shapes).__name__}: "
                    "expected a dict, list or tuple")


def process_dynamic_shapes(fn, args, kwargs, dynamic_shapes, values):
    """Checks ``dynamic_shapes`` against the example inputs ``values`` (name -> value).
    Returns (dims, range_constraints): ``dims`` maps an input name to {dim index:
    (symbol, min, max, hint)} for its dynamic dimensions, ``hint`` the Dim or _DimHint."""
    if dynamic_shapes is None:
        return {}, {}
    per_input = _spec_per_input(fn, args, kwargs, dynamic_shapes)
    symbols, out, ranges = {}, {}, {}
    for name, spec in per_input.items():
        if spec is None:
            continue
        value = values.get(name)
        if not hasattr(value, "shape"):
            raise UserError(f"dynamic_shapes for input '{name}' given, but it is not a "
                            "tensor")
        items = spec.items() if isinstance(spec, dict) else enumerate(spec)
        for i, d in items:
            if d is None or d is Dim.STATIC:
                continue
            if not 0 <= i < value.ndim:
                raise UserError(f"dynamic_shapes for input '{name}' names dim {i}, but it "
                                f"has {value.ndim} dims")
            size = value.shape[i]
            # the range PyTorch reports: a Dim's own bounds, [2, inf] for AUTO/DYNAMIC;
            # an example size of 0 or 1 is always specialized, so it is refused
            if isinstance(d, _DimHint):
                key, lo, hi = (id(d), name, i), 2, math.inf
            elif isinstance(d, Dim):
                key, lo, hi = id(d), d.min, d.max
            else:
                raise UserError(f"Unexpected dimension mapped to index {i} in input "
                                f"'{name}': expected Dim, Dim.AUTO/DYNAMIC/STATIC or None, "
                                f"got {d!r}")
            if not max(lo, 2) <= size <= hi:
                raise UserError(f"Constraints violated ({d!r})! The example value of "
                                f"{name}.size()[{i}] is {size}, outside "
                                f"[{max(lo, 2)}, {hi}]"
                                + (" (0/1 sizes are specialized)" if size < 2 else ""))
            if key not in symbols:
                symbols[key] = (_Symbol(f"s{len(symbols)}"), size)
            sym, first = symbols[key]
            if first != size:
                raise UserError(f"Constraints violated ({d!r})! Inputs sharing this Dim "
                                f"have different sizes: {first} and {size}")
            out.setdefault(name, {})[i] = (sym, lo, hi, d)
            ranges[sym] = ValueRanges(lo, hi)
    return out, ranges
