"""The dispatcher: turns each row of ops.yaml into the public function, the Tensor method
and the in-place method of that op.

A row:

    - func: add(Tensor input, Tensor other, *, Scalar alpha=1, Tensor? out=None) -> Tensor
      impl: pointwise.add            # framework._ops.pointwise.add, with this signature
      kind: binary                   # or: unary, ternary, ... (pointwise kinds need no impl)
      promote: default               # pointwise kinds: the promotion rule
      variants: [function, method, inplace]
      dispatch: {cpu: pointwise.binary, cuda: pointwise.binary}

Optional: ``method_impl`` (a method with another calling convention than the function) and
``inplace_impl`` (an in-place method that is not ``fn(self, ..., out=self)``).

``dispatch`` names the backend kernel an implementation calls on each device; the op-table
test checks that every named kernel exists. ``derivatives`` maps each differentiable input
to its gradient formula (framework/autograd/record.py); ``derivatives: none`` marks an op
whose outputs never need gradients (creation, comparisons, indices), ``derivatives:
composite`` one implemented with recorded ops (autograd goes through them). An op that takes
tensors and declares neither records a node that raises if a backward reaches it.
``output_differentiability`` (a flag per output) marks outputs that never get a gradient;
``node_name`` names the autograd node where PyTorch's is not the op's name in CamelCase.
"""
import importlib
import os
import re

import sys

import yaml

from .._tensor import Tensor
from . import numpy_names, pointwise
from .overlap import check_internal

OPS_YAML = os.path.join(os.path.dirname(os.path.dirname(__file__)), "ops.yaml")
_SCHEMA = re.compile(r"^\s*([\w.]+)\((.*)\)\s*->\s*(.+)$")


class Op:
    """One row of the op table."""

    __slots__ = ("name", "namespace", "schema", "args", "returns", "kind", "impl", "variants",
                 "dispatch", "derivatives", "promote", "kernel", "fn", "method_fn", "inplace_fn",
                 "row")

    def __repr__(self):
        return f"Op({self.schema})"


def parse_schema(func):
    """Splits ``name(args) -> returns`` into (qualified name, [(type, name, default,
    kwonly)], returns)."""
    m = _SCHEMA.match(func)
    if not m:
        raise ValueError(f"ops.yaml: bad schema {func!r}")
    name, argtext, returns = m.groups()
    args, kwonly, depth, cur = [], False, 0, ""
    for ch in argtext + ",":
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            part = cur.strip()
            cur = ""
            if not part:
                continue
            if part == "*":
                kwonly = True
                continue
            decl, _, default = part.partition("=")
            typ, _, argname = decl.strip().rpartition(" ")
            args.append((typ.strip(), argname, default.strip() or None, kwonly))
        else:
            cur += ch
    return name, args, returns.strip()


def _resolve(path):
    module, _, attr = path.rpartition(".")
    return getattr(importlib.import_module("framework._ops." + module), attr)


def _build(row):
    op = Op()
    op.row = row
    op.schema = row["func"]
    qualname, op.args, op.returns = parse_schema(op.schema)
    op.namespace, _, op.name = qualname.rpartition(".")
    op.kind = row.get("kind", "composite")
    op.variants = tuple(row.get("variants", ("function", "method")))
    op.dispatch = row.get("dispatch", {})
    derivatives = row.get("derivatives", {})
    op.derivatives = {} if derivatives in ("none", "composite") else derivatives
    op.promote = row.get("promote", "default")
    op.kernel = row.get("kernel", op.name)
    if "impl" in row:
        op.fn = _resolve(row["impl"])
    elif op.kind == "unary":
        op.fn = pointwise.make_unary(op.name, op.kernel, op.promote)
    elif op.kind == "binary":
        op.fn = pointwise.make_binary(op.name, op.kernel, op.promote)
    else:
        raise ValueError(f"ops.yaml: {op.name} needs an impl")
    # a method whose calling convention differs from the function's (Tensor.flip(*dims),
    # Tensor.where(condition, other))
    op.method_fn = _resolve(row["method_impl"]) if "method_impl" in row else op.fn
    op.inplace_fn = _resolve(row["inplace_impl"]) if "inplace_impl" in row else None
    if derivatives not in ("none", "composite"):
        _record_autograd(op)
        names = [name for _, name, _, _ in op.args]
        if "inplace" in names:
            op.fn = _safe_inplace(op.fn, names.index("inplace") - 1)
    if not op.namespace:    # x.sum(axis=-1): what the autograd wrapper did not take already
        method_is_fn = op.method_fn is op.fn
        if not getattr(op.fn, "_numpy_names", False):
            op.fn = numpy_names.wrap(op, op.fn)
        if method_is_fn:
            op.method_fn = op.fn
        elif not getattr(op.method_fn, "_numpy_names", False):
            op.method_fn = numpy_names.wrap(op, op.method_fn)
    return op


def _safe_inplace(fn, pos):
    """``fn`` (an nn.functional op with an ``inplace`` flag, ``pos``: its place among the
    arguments after ``input``) whose ``inplace=True`` is safe under autograd: when the call
    records, the op runs on a clone and ``copy_`` writes the result back, which refuses a
    leaf that requires grad and leaves a correct history (the op's own formula reads its
    input, which an in-place run would have overwritten)."""
    from ..autograd import grad_mode
    mode = grad_mode._mode

    def safe(input, *args, **kwargs):
        inplace = kwargs.get("inplace", args[pos] if len(args) > pos else False)
        if inplace and mode.enabled and getattr(input, "_requires_grad", False):
            kwargs.pop("inplace", None)
            return input.copy_(fn(input.clone(), *args[:pos], **kwargs))
        return fn(input, *args, **kwargs)
    safe.__name__, safe.__qualname__ = fn.__name__, fn.__qualname__
    safe.__module__, safe.__doc__, safe.__wrapped__ = fn.__module__, fn.__doc__, fn
    return safe


def _record_autograd(op):
    """Wraps the op's function (and in-place method) so that calls needing gradients
    record a node of the autograd graph (framework/autograd/codegen.py)."""
    from ..autograd import codegen
    tensors = [(name, "[]" in typ or "..." in typ) for typ, name, _, _ in op.args
               if typ.startswith("Tensor") and name != "out"]
    if not tensors:
        return
    plain = op.fn
    # ops named like in-place methods (copy_, fill_, relu_) modify their first argument
    op.fn, _ = codegen.make_wrapper(op, plain, tensors, inplace=op.name.endswith("_"))
    if op.method_fn is plain:
        op.method_fn = op.fn
    if op.inplace_fn is not None:
        op.inplace_fn, _ = codegen.make_wrapper(op, op.inplace_fn, tensors, inplace=True)


from ..autograd.grad_mode import _seen as _inf_seen, check_inplace as _inf_inplace  # noqa: E402


def _inplace_method(op):
    if op.inplace_fn is not None:
        return op.inplace_fn
    fn = op.fn

    def method(self, *args, **kwargs):
        # a tensor whose elements share memory cannot be written in place (PyTorch's rule);
        # ``0 in stride`` keeps the common case to one test
        if 0 in self._stride:
            check_internal(self)
        if _inf_seen[0]:    # once an inference tensor exists: PyTorch's in-place rule
            _inf_inplace(self)
        return fn(self, *args, out=self, **kwargs)
    method.__name__ = method.__qualname__ = op.name + "_"
    method.__doc__ = f"In-place version of :func:`{op.name}`."
    return method


_OPS = {}


def load(path=OPS_YAML):
    """Reads the op table (once) and returns {qualified name: Op}."""
    if not _OPS:
        with open(path) as f:
            rows = yaml.load(f, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        for row in rows:
            op = _build(row)
            key = f"{op.namespace}.{op.name}" if op.namespace else op.name
            if key in _OPS:
                raise ValueError(f"ops.yaml: {key} is declared twice")
            _OPS[key] = op
    return _OPS


def install(modules):
    """Binds every op as ``modules[namespace].<name>``, ``Tensor.<name>`` and
    ``Tensor.<name>_`` according to its variants."""
    for op in load().values():
        if "function" in op.variants:
            setattr(modules[op.namespace], op.name, op.fn)
            _name_for_pickle(op.fn, op.namespace, op.name)
        if "method" in op.variants:
            setattr(Tensor, op.name, op.method_fn)
        if "inplace" in op.variants:
            setattr(Tensor, op.name + "_", _inplace_method(op))


def install_operators():
    """Binds Tensor's operators (``Tensor._OPERATOR_METHODS``): each calls its method as it
    is at the call (autocast's and the profiler's wrappers included)."""
    for dunder, method in Tensor._OPERATOR_METHODS.items():
        setattr(Tensor, dunder, _operator(dunder, method))


def _operator(name, method):
    """``Tensor.<name>`` calling ``self.<method>(other)``; NotImplemented where it raises
    TypeError (PyTorch's operators do the same)."""
    def operator(self, other):
        try:
            return getattr(self, method)(other)
        except TypeError:
            return NotImplemented
    operator.__name__ = operator.__qualname__ = name
    return operator


def _name_for_pickle(fn, namespace, name):
    """Points ``fn.__module__``/``__qualname__`` at its public home (``framework.nn.functional.
    relu``), unless they already lead back to it, so that pickle (and deepcopy of modules
    holding ``activation=F.relu``) finds the function by name."""
    module = sys.modules.get(getattr(fn, "__module__", None))
    if module is not None and getattr(module, getattr(fn, "__qualname__", ""), None) is fn:
        return
    try:
        fn.__module__ = "framework" + ("." + namespace if namespace else "")
        fn.__qualname__ = name
    except (AttributeError, TypeError):
        pass


def function(name):
    """The public function of an op by qualified name (``"add"``, ``"linalg.norm"``)."""
    return _OPS[name].fn


def ops():
    return load()
