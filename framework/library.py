"""``framework.library``: PyTorch's ``torch.library`` Python custom-op API (torch 2.13).

The way a user turns a function (typically one that launches a Triton kernel on framework
tensors) into an op::

    @framework.library.custom_op("mylib::scaled_add", mutates_args=())
    def scaled_add(x: Tensor, y: Tensor, alpha: float) -> Tensor:
        out = framework.empty_like(x)
        scaled_add_kernel[grid](x, y, out, x.numel(), alpha, BLOCK=1024)
        return out

    scaled_add.register_autograd(backward, setup_context=setup_context)
    framework.ops.mylib.scaled_add(x, y, 0.5)        # the same op

What it does, as PyTorch does:

* the schema is inferred from the type hints (``infer_schema``, PyTorch's rules and error
  texts) or given as ``schema=``; calls are checked against it (argument count, names,
  types, defaults) with PyTorch's messages;
* a call goes to the kernel registered for the device type of its tensor arguments
  (``register_kernel``), else to the default one (the decorated function); on ``meta``
  tensors to the fake impl (``register_fake``);
* arguments named in ``mutates_args`` have their version counter bumped (so a tensor saved
  for backward and then changed by the op is caught); outputs may not alias inputs;
* with grad mode on and an input that requires grad, one autograd node
  (``GeneratedBackwardFor_<ns>_<name>_defaultBackward``, an ``autograd.Function``) is
  recorded: ``setup_context(ctx, inputs, output)`` runs after the forward and
  ``backward(ctx, *grads)`` in the backward pass; without ``register_autograd`` the
  backward raises PyTorch's "no autograd formula was registered" error.

Differences from PyTorch: there is no dispatcher in C++, no torch.compile/export, so the
fake impl is used only for ``meta`` tensors, ``register_torch_dispatch`` /
``register_vmap`` / ``register_autocast`` raise NotImplementedError, tags are accepted and
ignored except for the schema (``Tag`` is not modelled), and ``triton_op`` is
``custom_op`` (its kernels run eagerly; ``wrap_triton(k)`` returns ``k``).
"""
import collections.abc
import contextlib
import inspect
import logging
import re
import typing
from types import GenericAlias

from ._tensor import Tensor
from ._dtype import dtype as _dtype_cls
from ._device import device as _device_cls

__all__ = [
    "Library", "impl", "define", "fallthrough_kernel", "impl_abstract", "register_fake",
    "register_torch_dispatch", "register_vmap", "register_autocast", "get_ctx", "get_kernel",
    "custom_op", "triton_op",
    "wrap_triton", "infer_schema", "register_autograd", "register_kernel", "CustomOpDef",
    "opcheck",
]

log = logging.getLogger(__name__)

_Number_new = int | float | bool      # torch.types.Number


# ----------------------------------------------------------------------------------------
# schema inference (torch/_library/infer_schema.py)
# ----------------------------------------------------------------------------------------

def _derived_types(base_type, cpp_type, list_base, optional_base_list, optional_list_base):
    result = [(base_type, cpp_type), (typing.Optional[base_type], f"{cpp_type}?")]

    def derived_seq_types(typ):
        return (typing.Sequence[typ], typing.List[typ],  # noqa: UP006
                GenericAlias(collections.abc.Sequence, (typ,)), GenericAlias(list, (typ,)))

    if list_base:
        result.extend((t, f"{cpp_type}[]") for t in derived_seq_types(base_type))
    if optional_base_list:
        result.extend((t, f"{cpp_type}?[]")
                      for t in derived_seq_types(typing.Optional[base_type]))
    if optional_list_base:
        result.extend((typing.Optional[t], f"{cpp_type}[]?")
                      for t in derived_seq_types(base_type))
    return result


def _supported_param_types():
    data = [
        (Tensor, "Tensor", True, True, False),
        (int, "SymInt", True, False, True),
        (float, "float", True, False, True),
        (bool, "bool", True, False, True),
        (str, "str", False, False, False),
        (_Number_new, "Scalar", True, False, False),
        (_dtype_cls, "ScalarType", False, False, False),
        (_device_cls, "Device", False, False, False),
    ]
    result = []
    for line in data:
        result.extend(_derived_types(*line))
    return dict(result)


SUPPORTED_PARAM_TYPES = _supported_param_types()

SUPPORTED_RETURN_TYPES = {
    Tensor: "Tensor",
    typing.List[Tensor]: "Tensor[]",  # noqa: UP006
    list[Tensor]: "Tensor[]",
    int: "SymInt",
    float: "float",
    bool: "bool",
    _Number_new: "Scalar",
}


def _tuple_to_list(tuple_type):
    type_args = typing.get_args(tuple_type)
    if tuple_type is typing.Tuple or tuple_type is tuple or not type_args:  # noqa: UP006
        return list
    if len(type_args) == 1:
        return list[type_args[0]]
    if len(type_args) == 2 and type_args[1] is Ellipsis:
        return list[type_args[0]]
    return list[typing.Union[tuple(type_args)]]


def _parse_return(annotation, error_fn):
    if annotation is None:
        return "()"
    if annotation is inspect.Parameter.empty:
        error_fn("No return type annotation was provided. Please add one.")
    origin = typing.get_origin(annotation)
    if origin is not tuple:
        if annotation not in SUPPORTED_RETURN_TYPES:
            error_fn(f"Return has unsupported type {annotation}. "
                     f"The valid types are: {SUPPORTED_RETURN_TYPES}.")
        return SUPPORTED_RETURN_TYPES[annotation]
    args = typing.get_args(annotation)
    for arg in args:
        if arg not in SUPPORTED_RETURN_TYPES:
            error_fn(f"Return has unsupported type {annotation}. "
                     f"The valid types are: {SUPPORTED_RETURN_TYPES}.")
    output_ty = ", ".join(SUPPORTED_RETURN_TYPES[arg] for arg in args)
    if len(args) == 1:
        output_ty = "(" + output_ty + ")"
    return "(" + output_ty + ")"


def infer_schema(prototype_function, /, *, mutates_args, op_name=None, tags=()):
    """Parses the schema of a function from its type hints, as ``torch.library.infer_schema``:
    ``infer_schema(f, mutates_args=())`` gives e.g. ``"(Tensor x, SymInt n=3) -> Tensor"``
    (with ``op_name``, the name comes first). ``mutates_args`` is an iterable of argument
    names or the string ``"unknown"`` (every Tensor argument is then mutable)."""
    UNKNOWN_MUTATES = "unknown"
    pf_globals = getattr(prototype_function, "__globals__", {})
    sig = inspect.signature(prototype_function)
    if type(mutates_args) is not str:
        mutates_args = tuple(mutates_args)

    def error_fn(what):
        raise ValueError(f"infer_schema(func): {what} Got func with signature {sig})")

    def convert_type_string(annotation_type):
        ns = dict(pf_globals)
        import framework
        for k in ("device", "dtype", "Tensor", "types"):
            ns.setdefault(k, getattr(framework, k, None) if k != "types" else None)
        ns.setdefault("Optional", typing.Optional)
        ns.setdefault("List", typing.List)
        ns.setdefault("Sequence", typing.Sequence)
        ns.setdefault("Union", typing.Union)
        try:
            return eval(annotation_type, ns, None)
        except NameError as e:
            error_fn(f"Unsupported type annotation {annotation_type}. It is not a type. "
                     f"({e}). "
                     f"If you are using 'from __future__ import annotations', note that "
                     f"annotations are evaluated lazily as strings; make sure all types "
                     f"referenced in annotations are importable at module scope, not only "
                     f"inside a local function.")
        except Exception as e:
            error_fn(f"Unsupported type annotation {annotation_type}. It is not a type. "
                     f"({type(e).__name__}: {e})")

    def unstringify_type(ty):
        if isinstance(ty, str):
            return convert_type_string(ty), True
        origin = typing.get_origin(ty)
        if origin:
            changed = False
            res = []
            for a in typing.get_args(ty):
                a2, c = unstringify_type(a)
                res.append(a2)
                changed |= c
            if changed:
                return GenericAlias(origin, tuple(res)), True
        return ty, False

    params = []
    seen_args = set()
    saw_kwarg_only_arg = False
    for idx, (name, param) in enumerate(sig.parameters.items()):
        if param.kind not in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                              inspect.Parameter.KEYWORD_ONLY):
            error_fn("We do not support positional-only args, varargs, or varkwargs.")
        if param.kind == inspect.Parameter.KEYWORD_ONLY and not saw_kwarg_only_arg:
            params.append("*")
            saw_kwarg_only_arg = True
        if param.annotation is inspect.Parameter.empty:
            error_fn(f"Parameter {name} must have a type annotation.")
        annotation_type, _ = unstringify_type(param.annotation)
        try:
            supported = annotation_type in SUPPORTED_PARAM_TYPES
        except TypeError:       # an unhashable annotation
            supported = False
        if not supported:
            if hasattr(annotation_type, "__origin__") and annotation_type.__origin__ is tuple:
                list_type = _tuple_to_list(annotation_type)
                example_type_str = "\n\n"
                if list_type in SUPPORTED_PARAM_TYPES:
                    example_type_str = f"For example, {list_type}.\n\n"
                error_fn(f"Parameter {name} has unsupported type {param.annotation}. "
                         f"We do not support Tuple inputs in schema. As a workaround, please "
                         f"try to use List instead. {example_type_str}"
                         f"The valid types are: {SUPPORTED_PARAM_TYPES.keys()}.")
            error_fn(f"Parameter {name} has unsupported type {param.annotation}. "
                     f"The valid types are: {SUPPORTED_PARAM_TYPES.keys()}.")
        schema_type = SUPPORTED_PARAM_TYPES[annotation_type]
        if type(mutates_args) is str:
            if mutates_args != UNKNOWN_MUTATES:
                raise ValueError("mutates_args must either be a sequence of the names of "
                                 "the arguments that are mutated or the string 'unknown'. ")
            if schema_type.startswith("Tensor"):
                schema_type = f"Tensor(a{idx}!){schema_type[len('Tensor'):]}"
        elif name in mutates_args:
            if not schema_type.startswith("Tensor"):
                error_fn(f"Parameter {name} is in mutable_args but only Tensors or "
                         "collections of Tensors can be mutated")
            schema_type = f"Tensor(a{idx}!){schema_type[len('Tensor'):]}"
        seen_args.add(name)
        if param.default is inspect.Parameter.empty:
            params.append(f"{schema_type} {name}")
        else:
            d = param.default
            if d is None or isinstance(d, (int, float, bool)):
                default_repr = str(d)
            elif isinstance(d, (str, _device_cls)):
                default_repr = f'"{d}"'
            elif isinstance(d, _dtype_cls):
                default_repr = str(d).rpartition(".")[2]
            else:
                error_fn(f"Parameter {name} has an unsupported default value type {type(d)}. "
                         f"Please file an issue on GitHub so we can prioritize this.")
            params.append(f"{schema_type} {name}={default_repr}")
    if mutates_args != UNKNOWN_MUTATES:
        not_seen = set(mutates_args) - seen_args
        if len(not_seen) > 0:
            error_fn(f"{not_seen} in mutates_args were not found in "
                     f"the custom op's signature. "
                     f"mutates_args should contain the names of all args that the "
                     f"custom op mutates, or just the string 'unknown' if you don't know.")
    return_annotation, _ = unstringify_type(sig.return_annotation)
    ret = _parse_return(return_annotation, error_fn)
    if op_name is not None:
        return f"{op_name}({', '.join(params)}) -> {ret}"
    return f"({', '.join(params)}) -> {ret}"


# ----------------------------------------------------------------------------------------
# schema parsing, argument binding and checking
# ----------------------------------------------------------------------------------------

_SCALAR_TYPE_NUM = {"uint8": 0, "int8": 1, "int16": 2, "int32": 3, "int64": 4, "float16": 5,
                    "float32": 6, "float64": 7, "complex32": 8, "complex64": 9,
                    "complex128": 10, "bool": 11, "bfloat16": 15}
_TYPE_RE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(\(([a-z0-9]+)(!?)\))?((?:\?|\[\d*\])*)$")


class _Arg:
    __slots__ = ("name", "type", "base", "suffix", "alias", "is_write", "has_default",
                 "default", "default_text", "kwarg_only")

    @property
    def is_tensor_like(self):
        return self.base == "Tensor"

    @property
    def is_list(self):
        return "[" in self.suffix

    @property
    def optional(self):
        return self.suffix.endswith("?") or self.suffix == "?"

    def type_name(self):
        """The type's name in PyTorch's argument-error messages."""
        base = {"SymInt": "int", "ScalarType": "int", "Scalar": "number"}.get(self.base, self.base)
        s = self.suffix
        t = base
        if s.startswith("?"):
            t = f"Optional[{t}]"
            s = s[1:]
        if s.startswith("["):
            t = f"List[{t}]"
            s = s[s.index("]") + 1:]
        if s.startswith("?"):
            t = f"Optional[{t}]"
        return t

    def decl(self):
        s = self.type + " " + self.name
        if self.has_default:
            s += "=" + self.default_text
        return s


def _split_top(text):
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


def _parse_default(text, base):
    t = text.strip()
    if t == "None":
        return None, "None"
    if t in ("True", "False"):
        return t == "True", t
    if t.startswith(("'", '"')):
        return t[1:-1], f'"{t[1:-1]}"'
    if t.startswith("["):
        items = [_parse_default(x, base)[0] for x in _split_top(t[1:-1])]
        return items, t
    if base == "ScalarType":
        from . import _dtype
        name = t.rpartition(".")[2]
        d = _dtype._by_name(name) if not name.isdigit() else None
        if d is None and name.isdigit():
            rev = {v: k for k, v in _SCALAR_TYPE_NUM.items()}
            d = _dtype._by_name(rev.get(int(name), "float32"))
        return d, str(_SCALAR_TYPE_NUM.get(str(d).rpartition(".")[2], t))
    if base == "Device":
        return _device_cls(t), f'"{t}"'
    try:
        v = int(t)
        if base == "float":
            v = float(v)
            return v, _fmt_float(v)
        return v, str(v)
    except ValueError:
        pass
    try:
        v = float(t)
        return v, _fmt_float(v)
    except ValueError:
        return t, t


def _fmt_float(v):
    if v == int(v) and abs(v) < 1e16:
        return f"{int(v)}."
    return "%.17g" % v


class _Schema:
    """A parsed ``(args) -> returns`` schema."""

    def __init__(self, qualname, text):
        self.qualname = qualname
        self.text = text
        m = re.match(r"^\s*\((.*)\)\s*->\s*(.*)$", text, re.S)
        if not m:
            raise RuntimeError(f"expected '(' but found 'ident' here:\n{text}\n")
        self.arguments = []
        kw = False
        for p in _split_top(m.group(1)):
            if p == "*":
                kw = True
                continue
            a = _Arg()
            decl, eq, default = p.partition("=")
            ty, _, name = decl.strip().rpartition(" ")
            tm = _TYPE_RE.match(ty.strip())
            if not tm or not name:
                raise RuntimeError(f"unknown type specifier in schema: {p!r}\n{text}")
            a.name, a.type, a.base = name, ty.strip(), tm.group(1)
            a.alias, a.is_write = tm.group(3), bool(tm.group(4))
            a.suffix = tm.group(5) or ""
            a.kwarg_only = kw
            a.has_default = bool(eq)
            a.default, a.default_text = (_parse_default(default, a.base) if eq else (None, ""))
            self.arguments.append(a)
        ret = m.group(2).strip()
        if ret.startswith("("):
            inner = ret[1:-1].strip()
            self.returns = _split_top(inner) if inner else []
            self.returns_tuple = True
        else:
            self.returns = [ret]
            self.returns_tuple = False
        self.returns = [r.strip().split(" ")[0] for r in self.returns]

    @property
    def is_mutable(self):
        return any(a.is_write for a in self.arguments)

    def declaration(self):
        args, kw = [], False
        for a in self.arguments:
            if a.kwarg_only and not kw:
                args.append("*")
                kw = True
            args.append(a.decl())
        if self.returns_tuple:
            ret = "(" + ", ".join(self.returns) + ")"
        else:
            ret = self.returns[0]
        return f"{self.qualname}({', '.join(args)}) -> {ret}"

    def __str__(self):
        return self.declaration()

    # -- binding -----------------------------------------------------------------------------
    def bind(self, args, kwargs):
        """(positional arguments, keyword-only arguments) with defaults filled in and values
        converted as PyTorch converts them, or PyTorch's error."""
        pos = [a for a in self.arguments if not a.kwarg_only]
        decl = self.declaration()
        if len(args) > len(pos):
            if len(pos) < len(self.arguments):
                raise RuntimeError(f"{self.qualname}() takes {len(pos)} positional argument(s) "
                                   f"but {len(args)} was/were given.  Declaration: {decl}")
            raise RuntimeError(f"{self.qualname}() expected at most {len(pos)} argument(s) but "
                               f"received {len(args)} argument(s). Declaration: {decl}")
        kwargs = dict(kwargs)
        values = []
        for i, a in enumerate(self.arguments):
            if i < len(args):
                if a.name in kwargs:
                    raise RuntimeError(f"Argument '{a.name}' specified both as positional "
                                       f"and keyword argument. Schema: {decl}")
                v = args[i]
            elif a.name in kwargs:
                v = kwargs.pop(a.name)
            elif a.has_default:
                v = a.default
                if isinstance(v, list):
                    v = list(v)
            else:
                raise RuntimeError(f"{self.qualname}() is missing value for argument "
                                   f"'{a.name}'. Declaration: {decl}")
            values.append(self._convert(a, v, i, decl))
        if kwargs:
            k = next(iter(kwargs))
            raise RuntimeError(f"Unknown keyword argument '{k}' for operator "
                               f"'{self.qualname}'. Schema: {decl}")
        npos = len(pos)
        return (tuple(values[:npos]),
                {a.name: v for a, v in zip(self.arguments[npos:], values[npos:])})

    def _convert(self, a, v, pos, decl):
        ok, v2 = _convert_value(a.base, a.suffix, v)
        if ok:
            return v2
        found = "Tensor" if isinstance(v, Tensor) else type(v).__name__
        if a.base == "Tensor" and not a.suffix and not isinstance(v, (list, tuple)):
            details = f"Unable to cast {v!r} to Tensor"
        else:
            details = (f"Unable to cast Python instance of type {type(v)} to C++ type '?' "
                       "(#define PYBIND11_DETAILED_ERROR_MESSAGES or compile in debug mode "
                       "for details)")
        raise RuntimeError(f"{self.qualname}() Expected a value of type '{a.type_name()}' for "
                           f"argument '{a.name}' but instead found type '{found}'.\n"
                           f"Position: {pos}\nValue: {v!r}\nDeclaration: {decl}\n"
                           f"Cast error details: {details}")


def _convert_scalar(base, v):
    if base == "Tensor":
        return isinstance(v, Tensor), v
    if base in ("SymInt", "int"):
        if isinstance(v, int):
            return True, v
        if isinstance(v, Tensor) and v.dim() == 0 and v.dtype.category <= 1:
            return True, int(v.item())
        return False, v
    if base == "float":
        if isinstance(v, (int, float)):
            return True, float(v)
        if isinstance(v, Tensor) and v.dim() == 0:
            return True, float(v.item())
        return False, v
    if base == "bool":
        return isinstance(v, bool), v
    if base == "str":
        return isinstance(v, str), v
    if base == "Scalar":
        return isinstance(v, (int, float, bool, complex)), v
    if base == "ScalarType":
        return isinstance(v, _dtype_cls), v
    if base == "Device":
        if isinstance(v, (str, int, _device_cls)):
            try:
                return True, _device_cls(v)
            except Exception:
                return False, v
        return False, v
    return True, v      # a type this module does not model: passed through


def _convert_value(base, suffix, v):
    if suffix.startswith("?") and not suffix.startswith("?["):
        if v is None:
            return True, None
        suffix = suffix[1:]
    if suffix.endswith("?"):
        if v is None:
            return True, None
        suffix = suffix[:-1]
    if suffix.startswith("?["):           # list of optionals
        if not isinstance(v, (list, tuple)):
            return False, v
        out = []
        for x in v:
            if x is None:
                out.append(None)
                continue
            ok, x2 = _convert_scalar(base, x)
            if not ok:
                return False, v
            out.append(x2)
        return True, out
    if suffix.startswith("["):
        if not isinstance(v, (list, tuple)):
            if base in ("SymInt", "int") and isinstance(v, int) and suffix != "[]":
                n = int(suffix[1:-1])
                return True, [v] * n
            return False, v
        out = []
        for x in v:
            ok, x2 = _convert_scalar(base, x)
            if not ok:
                return False, v
            out.append(x2)
        return True, out
    return _convert_scalar(base, v)


def _detached(v):
    if isinstance(v, Tensor):
        return v.detach() if v._requires_grad else v
    if isinstance(v, (list, tuple)) and any(isinstance(x, Tensor) for x in v):
        return type(v)(_detached(x) for x in v)
    return v


def _iter_tensors(values):
    for v in values:
        if isinstance(v, Tensor):
            yield v
        elif isinstance(v, (list, tuple)):
            for x in v:
                if isinstance(x, Tensor):
                    yield x


# ----------------------------------------------------------------------------------------
# the op registry and framework.ops
# ----------------------------------------------------------------------------------------

OPDEFS = {}          # "ns::name" -> CustomOpDef (or a Library-defined op)


class OpOverload:
    """``framework.ops.<ns>.<name>.default``: the one overload of a custom op."""

    def __init__(self, opdef, overload="default"):
        self._opdef = opdef
        self._overloadname = overload

    @property
    def _schema(self):
        return self._opdef._parsed

    @property
    def _name(self):
        return self._opdef._qualname

    @property
    def _namespace(self):
        return self._opdef._namespace

    @property
    def _opname(self):
        return self._opdef._name

    @property
    def __name__(self):
        return f"{self._opdef._name}.{self._overloadname}"

    def __call__(self, *args, **kwargs):
        return self._opdef(*args, **kwargs)

    def __str__(self):
        return f"{self._opdef._namespace}.{self._opdef._name}.{self._overloadname}"

    def __repr__(self):
        return (f"<OpOverload(op='{self._opdef._namespace}.{self._opdef._name}', "
                f"overload='{self._overloadname}')>")

    def __hash__(self):
        return hash((self._opdef._qualname, self._overloadname))

    def __eq__(self, other):
        return (isinstance(other, OpOverload) and other._opdef is self._opdef
                and other._overloadname == self._overloadname)


class OpOverloadPacket:
    """``framework.ops.<ns>.<name>``: calls the op; ``.default`` is its overload."""

    def __init__(self, opdef):
        self._opdef = opdef
        self.default = OpOverload(opdef)

    @property
    def __name__(self):
        return self._opdef._name

    @property
    def _qualified_op_name(self):
        return self._opdef._qualname

    @property
    def _schema(self):
        return self._opdef._parsed

    def overloads(self):
        return ["default"]

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(f"The underlying op of '{self}' has no overload name '{name}'")

    def __call__(self, *args, **kwargs):
        return self._opdef(*args, **kwargs)

    def __str__(self):
        return f"{self._opdef._namespace}.{self._opdef._name}"

    def __repr__(self):
        return f"<OpOverloadPacket(op='{self}')>"


class _AtenOp:
    """``framework.ops.aten.<name>`` (and any overload of it): framework's own function of
    that name."""

    def __init__(self, name, fn, overload=None):
        self._name, self._fn, self._overload = name, fn, overload

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)

    def __getattr__(self, name):
        if name.startswith("__") or self._overload is not None:
            raise AttributeError(name)
        return _AtenOp(self._name, self._fn, name)

    def overloads(self):
        return ["default"]

    def __repr__(self):
        if self._overload is None:
            return f"<OpOverloadPacket(op='aten.{self._name}')>"
        return f"<OpOverload(op='aten.{self._name}', overload='{self._overload}')>"

    def __str__(self):
        return f"aten.{self._name}" + (f".{self._overload}" if self._overload else "")


class _OpNamespace:
    def __init__(self, name):
        self.name = name

    def __getattr__(self, op_name):
        if op_name.startswith("__"):
            raise AttributeError(op_name)
        opdef = OPDEFS.get(f"{self.name}::{op_name}")
        if opdef is not None:
            return opdef._packet
        if self.name == "aten":
            import framework
            for holder in (framework, framework.nn.functional, framework.linalg,
                           framework.special, framework.fft):
                fn = getattr(holder, op_name, None) or getattr(holder, op_name.lstrip("_"),
                                                               None)
                if callable(fn):
                    return _AtenOp(op_name, fn)
            fn = getattr(Tensor, op_name, None)
            if callable(fn):
                return _AtenOp(op_name, fn)
        raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute "
                             f"'{op_name}'")

    def __repr__(self):
        return f"<module 'framework.ops.{self.name}' from 'framework.ops'>"


class _Ops:
    """``framework.ops``: ``framework.ops.<namespace>.<name>`` is a registered custom op
    (``framework.ops.aten.<name>``: framework's own function of that name)."""

    __name__ = "framework.ops"

    def __init__(self):
        self._namespaces = {}

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        ns = self._namespaces.get(name)
        if ns is None:
            ns = self._namespaces[name] = _OpNamespace(name)
        return ns

    def __iter__(self):
        return iter(self._namespaces)

    def load_library(self, path):
        raise NotImplementedError(
            "framework.ops.load_library: loading a compiled PyTorch extension library is not "
            "supported (it is built against PyTorch's C++ ABI); register the op from Python "
            "with framework.library.custom_op instead")

    def __repr__(self):
        return "<module 'framework.ops' from 'framework.ops'>"


ops = _Ops()


# ----------------------------------------------------------------------------------------
# custom_op and CustomOpDef
# ----------------------------------------------------------------------------------------

def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None, tags=None):
    """Wraps a function into a custom operator named ``"namespace::name"``, as
    ``torch.library.custom_op``: the function needs type hints (the schema is inferred from
    them unless ``schema`` is given); ``mutates_args`` names the arguments it writes in place
    (or ``"unknown"``); ``device_types`` restricts the function to those device types (it
    is the kernel for every device type when None). Usable as a decorator."""

    def inner(fn):
        if schema is None:
            schema_str = infer_schema(fn, mutates_args=mutates_args)
        else:
            schema_str = schema
        namespace, opname = name.split("::")
        result = CustomOpDef(namespace, opname, schema_str, fn)
        if schema is not None:
            expected = {a.name for a in result._parsed.arguments if a.is_write}
            if expected != set(mutates_args):
                raise ValueError(
                    f"Attempted to create a custom op with `mutates_args={mutates_args}` "
                    f"and `schema={schema}. The schema suggests that the op mutates {expected}"
                    f"which is different from what was provided to us in `mutates_args`. "
                    f"Please make these consistent.")
        result.register_kernel(device_types)(fn)
        return result

    if fn is None:
        return inner
    return inner(fn)


class CustomOpDef:
    """A function made a custom op (``custom_op`` returns it): callable, with
    ``register_kernel``, ``register_fake``, ``register_autograd`` and
    ``set_kernel_enabled``."""

    def __init__(self, namespace, name, schema, fn, tags=None):
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", name):
            bad = f"{name}{schema}"
            raise RuntimeError(f"expected eof but found 'ident' here:\n{bad}\n")
        self._namespace = namespace
        self._name = name
        self._schema = schema
        self._tags = tags
        self._init_fn = fn
        self._parsed = _Schema(f"{namespace}::{name}", schema)
        self._backend_fns = {}
        self._abstract_fn = None
        self._setup_context_fn = None
        self._backward_fn = None
        self._torch_dispatch_fns = {}
        self._disabled_kernel = set()
        self._has_kwarg_only = any(a.kwarg_only for a in self._parsed.arguments)
        if any(a.kwarg_only and a.is_tensor_like for a in self._parsed.arguments):
            raise NotImplementedError(
                f"custom_op with kwarg-only Tensor args. Please make your "
                f"tensors not kwarg-only. Got: {name}{schema}")
        self._opoverload = OpOverload(self)
        self._packet = OpOverloadPacket(self)
        self._packet.default = self._opoverload
        self._autograd_fn = _make_autograd_function(self)
        if fn is not None:
            self.__name__ = getattr(fn, "__name__", name)
            self.__doc__ = getattr(fn, "__doc__", None)
            self.__module__ = getattr(fn, "__module__", __name__)
            self.__qualname__ = getattr(fn, "__qualname__", name)
        else:
            self.__name__ = name
        OPDEFS[self._qualname] = self

    @property
    def _qualname(self):
        return f"{self._namespace}::{self._name}"

    def __repr__(self):
        return f"<CustomOpDef({self._qualname})>"

    # -- registration ------------------------------------------------------------------------
    @contextlib.contextmanager
    def set_kernel_enabled(self, device_type, enabled=True):
        """Disables (or re-enables) the kernel registered for ``device_type`` within the
        block: the default kernel runs instead."""
        action = "enable" if enabled else "disable"
        originally_disabled = device_type in self._disabled_kernel
        if device_type not in self._backend_fns:
            log.warning("Attempted to %s kernel for %s but no kernel was registered for this "
                        "device type.", action, device_type)
        if not enabled:
            if originally_disabled:
                log.warning("Attempted to disable kernel for %s but it was already disabled.",
                            device_type)
            else:
                self._disabled_kernel.add(device_type)
        else:
            if not originally_disabled:
                log.warning("Attempted to enable kernel for  %s but it was already enabled.",
                            device_type)
            else:
                self._disabled_kernel.remove(device_type)
        try:
            yield
        finally:
            if originally_disabled:
                self._disabled_kernel.add(device_type)
            else:
                self._disabled_kernel.discard(device_type)

    def register_kernel(self, device_types, fn=None, /):
        """Registers ``fn`` as this op's implementation for ``device_types`` ("cpu",
        "cuda", or a sequence of them; None: every device type). Usable as a decorator."""

        def inner(fn):
            if device_types is None or isinstance(device_types, str):
                dtypes = [device_types]
            else:
                dtypes = list(device_types)
            for device_type in dtypes:
                if device_type is not None and not isinstance(device_type, str):
                    raise TypeError(f"register_kernel: device type must be a str, got "
                                    f"{type(device_type).__name__}")
                self._backend_fns[device_type] = fn
            return fn

        if device_types is not None and not any(a.is_tensor_like
                                                for a in self._parsed.arguments):
            if not any(a.base == "Device" for a in self._parsed.arguments):
                raise ValueError("Functions without tensor inputs are required to have a "
                                 "`device: torch.device` argument")
        if fn is None:
            return inner
        return inner(fn)

    def register_fake(self, fn, /):
        """Registers the fake (meta) implementation: it gives the outputs' shapes, dtypes
        and devices without computing them. Here it runs for ``meta`` tensors."""
        self._abstract_fn = fn
        return fn

    def register_torch_dispatch(self, torch_dispatch_class, fn=None, /):
        raise NotImplementedError(
            "register_torch_dispatch: framework has no __torch_dispatch__ (tensor subclasses "
            "and dispatch modes are not supported)")

    def register_vmap(self, func=None):
        raise NotImplementedError("register_vmap: framework has no vmap")

    def register_autocast(self, device_type, cast_inputs):
        raise NotImplementedError("register_autocast is not supported for custom ops here; "
                                  "cast the inputs inside the op")

    def register_autograd(self, backward, /, *, setup_context=None):
        """Registers the backward formula: ``backward(ctx, *grads)`` returns one gradient
        per input (None for non-Tensor inputs), ``setup_context(ctx, inputs, output)`` (with
        keyword-only arguments: ``setup_context(ctx, inputs, keyword_only_inputs,
        output)``) saves what it needs on ``ctx`` in the forward pass."""
        s = self._parsed
        if not _is_functional(s):
            raise RuntimeError(
                f"Cannot register autograd formula for non-functional operator "
                f"{self} with schema {s}. Please create "
                f"a functional operator and register an autograd formula for that.")
        self._backward_fn = backward
        self._setup_context_fn = setup_context

    # -- calling -----------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        args, kwargs = self._parsed.bind(args, kwargs)
        from .autograd import grad_mode
        if (grad_mode._mode.enabled
                and any(t._requires_grad for t in _iter_tensors(args))):
            return self._autograd_fn.apply_op(args, kwargs)
        return self._dispatch(args, kwargs)

    def _kernel_for(self, args, kwargs):
        tensors = list(_iter_tensors(args))
        if tensors:     # a cuda tensor wins over cpu ones, as in PyTorch's dispatcher
            types = [t.device.type for t in tensors]
            device_type = next((d for d in types if d != "cpu"), "cpu")
        else:
            devs = [v for a, v in zip(self._parsed.arguments, list(args) + list(kwargs.values()))
                    if a.base == "Device" and v is not None]
            device_type = devs[0].type if devs else None
            if (device_type is not None and device_type not in self._backend_fns
                    and any(k is not None for k in self._backend_fns)):
                raise RuntimeError(f"{self._name} does not have a kernel registered for "
                                   f"{device_type}. Please use register_kernel to do so.")
        if device_type == "meta":
            if self._abstract_fn is None:
                raise RuntimeError(
                    f"There was no fake impl registered for {self}. "
                    f"This is necessary for torch.compile/export/fx tracing to work. "
                    f"Please use `{getattr(self._init_fn, '__name__', self._name)}"
                    f".register_fake` to add an fake impl.")
            return self._abstract_fn
        fn = self._backend_fns.get(device_type)
        if fn is not None:
            if device_type in self._disabled_kernel and self._init_fn is not None:
                return self._init_fn
            return fn
        fn = self._backend_fns.get(None)
        if fn is not None:
            return fn
        key = {"cpu": "CPU", "cuda": "CUDA"}.get(device_type, str(device_type))
        avail = ", ".join({"cpu": "CPU", "cuda": "CUDA"}.get(k, str(k))
                          for k in self._backend_fns)
        raise NotImplementedError(
            f"Could not run '{self._qualname}' with arguments from the '{key}' backend. This "
            f"could be because the operator doesn't exist for this backend, or was omitted "
            f"during the selective/custom build process (if using custom build). "
            f"'{self._qualname}' is only available for these backends: [{avail}].")

    def _dispatch(self, args, kwargs):
        """Runs the kernel for the arguments' device (no autograd): bumps the version
        counters of the mutated arguments and checks the outputs."""
        s = self._parsed
        for a, v in zip(s.arguments, list(args) + list(kwargs.values())):
            if a.is_write and v is not None:
                for t in _iter_tensors([v]):
                    t._storage.version += 1
        fn = self._kernel_for(args, kwargs)
        # the kernel sees the inputs detached (same memory and version counter): PyTorch
        # runs it below autograd, where e.g. x.numpy() is allowed on an input requiring grad
        result = fn(*(_detached(a) for a in args), **kwargs)
        return self._check_result(result, args, kwargs)

    def _check_result(self, result, args, kwargs):
        s = self._parsed
        rets = s.returns
        if not s.returns_tuple:
            _check_ret(rets[0], result)
            outs = list(result) if rets[0].startswith("Tensor[") else [result]
        else:
            if len(rets) == 0:
                if result is not None:
                    raise RuntimeError(f"{self._name}: expected the implementation to return "
                                       f"None (the schema returns ()), got "
                                       f"{type(result).__name__}")
                return None
            if not isinstance(result, (tuple, list)) or len(result) != len(rets):
                raise RuntimeError(
                    f"Expected the implementation of {self._qualname} to return a tuple of "
                    f"{len(rets)} values (schema {s.declaration()}), got {type(result).__name__}")
            for r, v in zip(rets, result):
                _check_ret(r, v)
            outs = []
            for r, v in zip(rets, result):
                outs.extend(v if r.startswith("Tensor[") else [v])
            result = tuple(result)
        # aliasing: no output may be an input or share its memory (PyTorch's check)
        ins = list(_iter_tensors(list(args) + list(kwargs.values())))
        out_t = [o for o in outs if isinstance(o, Tensor)]
        bad = any(o._storage is i._storage for o in out_t for i in ins)
        bad = bad or any(o._storage is p._storage for k, o in enumerate(out_t)
                         for p in out_t[k + 1:])
        if bad:
            raise RuntimeError(
                f"{self._name} (with implementation in {inspect.getmodule(_check_ret)}): The "
                "output of this custom operator (1) must not also be an input to this custom "
                "operator and (2) may not alias any inputs to this custom operator or other "
                "returns. The most common way to trigger this error is if we have y = "
                "custom_op(x) and y and x are the same Tensor. Please instead return a clone "
                "of the offending output tensor(s) (e.g. return x.clone()) or refactor the "
                "custom operator to not return y.")
        return result


def _check_ret(rtype, v):
    base = rtype.split("(")[0].rstrip("[]?")
    if rtype.startswith("Tensor["):
        if not isinstance(v, (list, tuple)) or not all(isinstance(x, Tensor) for x in v):
            raise RuntimeError(f"Unable to cast {v!r} to Tensor[]")
        return
    if base == "Tensor":
        if not isinstance(v, Tensor):
            raise RuntimeError(f"Unable to cast {v!r} to Tensor")
        return
    ok, _ = _convert_scalar(base, v)
    if not ok:
        raise RuntimeError(f"Unable to cast {v!r} to {base}")


def _is_functional(s):
    if s.is_mutable:
        return False
    if len(s.returns) == 0:
        return False
    if any("(" in r for r in s.returns):     # an aliased return (a view op)
        return False
    return True


# ----------------------------------------------------------------------------------------
# autograd
# ----------------------------------------------------------------------------------------

class _Metadata:
    __slots__ = ("keyword_only_args", "spec", "list_out", "args")

    def __init__(self, kwargs, spec, args):
        self.keyword_only_args = kwargs
        self.spec = spec               # per positional argument: None or a list's length
        self.list_out = None           # per output: None or a Tensor list's length
        self.args = args


def _make_autograd_function(opdef):
    from .autograd.function import Function

    name = f"GeneratedBackwardFor_{opdef._namespace}_{opdef._name}_default"
    has_list = any(a.is_tensor_like and a.is_list for a in opdef._parsed.arguments)

    def forward(ctx, *flat):
        meta = flat[-1]
        ctx._op_meta = meta
        args, kwargs = meta.args, meta.keyword_only_args
        meta.args = None            # the node keeps no reference to the inputs
        result = opdef._dispatch(args, kwargs)
        if opdef._setup_context_fn:
            if opdef._has_kwarg_only:
                opdef._setup_context_fn(ctx=ctx, inputs=args, keyword_only_inputs=kwargs,
                                        output=result)
            else:
                opdef._setup_context_fn(ctx=ctx, inputs=args, output=result)
        # flatten Tensor-list outputs into the node's outputs
        rets = opdef._parsed.returns
        if opdef._parsed.returns_tuple:
            parts = list(result) if result is not None else []
        else:
            parts = [result]
        if any(r.startswith("Tensor[") for r in rets):
            meta.list_out = [len(p) if r.startswith("Tensor[") else None
                             for r, p in zip(rets, parts)]
            flat_out = []
            for r, p in zip(rets, parts):
                flat_out.extend(p if r.startswith("Tensor[") else [p])
            return tuple(flat_out)
        return result

    def backward(ctx, *grads):
        meta = ctx._op_meta
        if opdef._backward_fn is None and getattr(opdef, "_library_op", False):
            import warnings
            warnings.warn(_NOT_REGISTERED.format(opdef._qualname), UserWarning)
            return (None,) * len(ctx.needs_input_grad)
        if opdef._backward_fn is None:
            raise RuntimeError(
                f"Trying to backward through {opdef._opoverload} but no autograd "
                f"formula was registered. "
                f"Please use register_autograd to add one.")
        if meta.list_out is not None:     # regroup the flat output grads per output
            it = iter(grads)
            grads = tuple([next(it) for _ in range(n)] if n is not None else next(it)
                          for n in meta.list_out)
        prev = ctx.needs_input_grad
        flat_nig = prev[:-1]
        it = iter(flat_nig)
        nig = tuple([next(it) for _ in range(n)] if n is not None else next(it)
                    for n in meta.spec)
        try:
            ctx.needs_input_grad = nig
            result = opdef._backward_fn(ctx, *grads)
        finally:
            ctx.needs_input_grad = prev
        if has_list:
            res = result if isinstance(result, tuple) else (result,)
            ok = len(res) == len(meta.spec)
            flat = []
            if ok:
                for r, n in zip(res, meta.spec):
                    if n is None:
                        if isinstance(r, list):
                            ok = False
                            break
                        flat.append(r)
                    elif r is None:
                        flat.extend([None] * n)
                    elif isinstance(r, (list, tuple)) and len(r) == n:
                        flat.extend(r)
                    else:
                        ok = False
                        break
            if not ok:
                raise RuntimeError(
                    f"Expected the return from backward to be of the same structure "
                    f"as the inputs. Got: {_struct(res)} (return from backward), "
                    f"{_struct_spec(meta.spec)} (inputs)")
            return (*flat, None)
        out = (*result, None) if isinstance(result, tuple) else (result, None)
        n_in = len(flat_nig) + 1
        if len(out) > n_in and all(g is None for g in out[n_in:]):
            out = out[:n_in]
        if len(out) != n_in:
            raise RuntimeError(f"function {name}Backward returned an incorrect number of "
                               f"gradients (expected {n_in}, got {len(out)})")
        for i, (g, is_t) in enumerate(zip(out, ctx._arg_is_tensor)):
            if g is not None and not is_t:
                raise RuntimeError(
                    f"function {name}Backward returned a gradient different than None at "
                    f"position {i + 1}, but the corresponding forward input was not a "
                    f"Variable")
        return out

    cls = type(name, (Function,), {"forward": staticmethod(forward),
                                   "backward": staticmethod(backward)})

    def apply_op(args, kwargs):
        spec, flat = [], []
        for a, v in zip([x for x in opdef._parsed.arguments if not x.kwarg_only], args):
            if a.is_tensor_like and a.is_list and isinstance(v, (list, tuple)):
                spec.append(len(v))
                flat.extend(v)
            else:
                spec.append(None)
                flat.append(v)
        meta = _Metadata(kwargs, spec, args)
        out = cls.apply(*flat, meta)
        if meta.list_out is not None:
            it = iter(out if isinstance(out, tuple) else (out,))
            parts = [[next(it) for _ in range(n)] if n is not None else next(it)
                     for n in meta.list_out]
            return tuple(parts) if opdef._parsed.returns_tuple else parts[0]
        return out

    cls.apply_op = staticmethod(apply_op)
    return cls


def _struct_spec(spec):
    return "(" + ", ".join("*" if n is None else "[" + ", ".join("*" * n) + "]"
                           for n in spec) + ")"


def _struct(x):
    if isinstance(x, (list, tuple)):
        inner = ", ".join(_struct(v) for v in x)
        return f"[{inner}]" if isinstance(x, list) else f"({inner})"
    return "*"


# ----------------------------------------------------------------------------------------
# module-level registration functions
# ----------------------------------------------------------------------------------------

def _opdef(op, what):
    if isinstance(op, CustomOpDef):
        return op
    if isinstance(op, (OpOverload, OpOverloadPacket)):
        return op._opdef
    if isinstance(op, str):
        d = OPDEFS.get(op)
        if d is not None:
            return d
        raise RuntimeError(f"{what}: no custom op named '{op}' was defined "
                           "(define it with framework.library.custom_op or Library.define)")
    raise ValueError(f"{what}(op): got unexpected type for op: {type(op)}")


def register_kernel(op, device_types, func=None, /, *, lib=None):
    """``torch.library.register_kernel``: ``op`` is a custom op or its name."""
    return _opdef(op, "register_kernel").register_kernel(device_types, func)


def register_fake(op, func=None, /, *, lib=None, _stacklevel=1, allow_override=True):
    """``torch.library.register_fake``: registers the op's fake (meta) implementation."""
    d = _opdef(op, "register_fake")
    if func is None:
        return d.register_fake
    return d.register_fake(func)


impl_abstract = register_fake


def register_autograd(op, backward, /, *, setup_context=None, lib=None):
    """``torch.library.register_autograd``."""
    return _opdef(op, "register_autograd").register_autograd(backward,
                                                              setup_context=setup_context)


def register_torch_dispatch(op, torch_dispatch_class, func=None, /, *, lib=None):
    raise NotImplementedError(
        "register_torch_dispatch: framework has no __torch_dispatch__ (tensor subclasses "
        "and dispatch modes are not supported)")


def register_vmap(op, func=None, /, *, lib=None):
    raise NotImplementedError("register_vmap: framework has no vmap")


def register_autocast(op, device_type, cast_inputs, /, *, lib=None):
    raise NotImplementedError("register_autocast is not supported for custom ops here; "
                              "cast the inputs inside the op")


def get_kernel(op, dispatch_key, /):
    """The kernel registered for ``op`` and a dispatch key ("CPU", "CUDA",
    "CompositeExplicitAutograd") or device type, as a plain callable."""
    d = _opdef(op, "get_kernel")
    key = dispatch_key if isinstance(dispatch_key, str) else str(dispatch_key)
    dev = _DEVICE_OF_KEY.get(key, key)
    fn = d._backend_fns.get(dev) or d._backend_fns.get(None)
    if fn is None:
        raise RuntimeError(f"no kernel registered for {d._qualname} and dispatch key "
                           f"{dispatch_key}")
    return fn


def get_ctx():
    raise RuntimeError("get_ctx() called outside of a fake (meta) implementation: "
                       "framework has no fake tensors or data-dependent output shapes")


def opcheck(op, args, kwargs=None, *, test_utils=None, raise_exception=True, atol=None,
            rtol=None):
    """A small ``torch.library.opcheck``: calls the op and checks that its outputs are
    fresh tensors and (with ``register_autograd``) that a backward runs. Returns a dict of
    test name -> "SUCCESS" (PyTorch's format)."""
    kwargs = kwargs or {}
    d = _opdef(op, "opcheck")
    results = {}
    try:
        out = d(*args, **kwargs)
        results["test_schema"] = "SUCCESS"
        from . import autograd
        outs = [o for o in (out if isinstance(out, (tuple, list)) else (out,))
                if isinstance(o, Tensor) and o.requires_grad]
        ins = [t for t in _iter_tensors(list(args) + list(kwargs.values())) if t.requires_grad]
        if outs and ins:
            autograd.grad([o.sum() for o in outs], ins, allow_unused=True)
        results["test_autograd_registration"] = "SUCCESS"
    except Exception as e:
        if raise_exception:
            raise
        results.setdefault("test_schema", e)
        results["test_autograd_registration"] = e
    return results


# ----------------------------------------------------------------------------------------
# triton_op / wrap_triton
# ----------------------------------------------------------------------------------------

def triton_op(name, fn=None, /, *, mutates_args, schema=None):
    """``torch.library.triton_op``: a custom op whose implementation launches Triton
    kernels (through ``wrap_triton``). Here it is ``custom_op``: the kernels run eagerly."""

    def dec(fn):
        def backend_fn(*args, **kwargs):
            return fn(*args, **kwargs)
        backend_fn.__name__ = getattr(fn, "__name__", "backend_fn")
        backend_fn.__qualname__ = getattr(fn, "__qualname__", "backend_fn")
        backend_fn.__module__ = getattr(fn, "__module__", __name__)
        result = custom_op(name, backend_fn, mutates_args=mutates_args,
                           schema=schema if schema is not None
                           else infer_schema(fn, mutates_args=mutates_args))
        result._init_fn = fn
        result.register_fake(fn)
        return result

    if fn is None:
        return dec
    return dec(fn)


def wrap_triton(triton_kernel, /):
    """``torch.library.wrap_triton``: makes a Triton kernel callable from a ``triton_op``
    so ``torch.compile`` can trace it. Here there is no tracing: ``wrap_triton(k)[grid](...)``
    launches ``k``, so the kernel itself is returned."""
    try:
        from triton.runtime.autotuner import Autotuner
        from triton.runtime.jit import JITFunction
        kinds = (JITFunction, Autotuner)
    except ImportError:          # pragma: no cover
        kinds = ()
    try:
        from triton.runtime.interpreter import InterpretedFunction
        kinds = kinds + (InterpretedFunction,)
    except ImportError:          # pragma: no cover
        pass
    if kinds and isinstance(triton_kernel, kinds):
        return triton_kernel
    raise RuntimeError("wrap_triton only works on functions annotated with triton.jit or "
                       "triton.autotune")


# ----------------------------------------------------------------------------------------
# the older API: Library, define, impl
# ----------------------------------------------------------------------------------------

_DEVICE_OF_KEY = {"CPU": "cpu", "CUDA": "cuda", "Meta": "meta",
                  "CompositeExplicitAutograd": None, "CompositeImplicitAutograd": None,
                  "Autograd": None, "AutogradCPU": "cpu", "AutogradCUDA": "cuda",
                  "": None, "Default": None}


def fallthrough_kernel():
    """A dummy kernel marking a dispatch key to fall through (accepted and ignored)."""
    raise NotImplementedError("fallthrough_kernel() should never be called.")


class Library:
    """``torch.library.Library(ns, kind)``: ``kind`` is "DEF" (a new namespace), "FRAGMENT"
    (more ops in one) or "IMPL" (kernels for existing ops). ``define(schema)`` declares an
    op (``"foo(Tensor x) -> Tensor"``), ``impl(name, fn, dispatch_key)`` registers a kernel
    ("CPU", "CUDA", "Meta", "CompositeExplicitAutograd"; "CompositeImplicitAutograd" and
    "Autograd" kernels are differentiable through the framework ops they call)."""

    def __init__(self, ns, kind, dispatch_key=""):
        if kind not in ("IMPL", "DEF", "FRAGMENT"):
            raise ValueError("Unsupported kind: ", kind)
        if ns in ("aten",) and kind == "DEF":
            raise ValueError(f"Creating library with kind {kind} for namespace {ns} is not "
                             "allowed")
        self.ns = ns
        self.kind = kind
        self.dispatch_key = dispatch_key
        self._op_defs = set()

    def __repr__(self):
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})>"

    def define(self, schema, alias_analysis="", *, tags=()):
        """Defines a new op from a schema string; returns its name."""
        m = re.match(r"^\s*([A-Za-z_][A-Za-z0-9_]*)(\.[A-Za-z0-9_]+)?\s*(\(.*)$", schema, re.S)
        if not m:
            raise RuntimeError(f"expected ident but found '(' here:\n{schema}\n")
        name = m.group(1)
        qual = f"{self.ns}::{name}"
        d = CustomOpDef(self.ns, name, m.group(3), None)
        d._library_op = True
        d._autograd_keys = set()
        self._op_defs.add(qual)
        return name

    def _register_fake(self, op_name, fn, _stacklevel=1, *, allow_override=False):
        _opdef(self._qual(op_name), "register_fake").register_fake(fn)

    def _qual(self, op_name):
        if isinstance(op_name, (OpOverload, OpOverloadPacket)):
            return op_name._opdef._qualname
        if callable(op_name) and not isinstance(op_name, str):
            return _opdef(op_name, "impl")._qualname
        name = op_name.split(".")[0]
        return name if "::" in name else f"{self.ns}::{name}"

    def impl(self, op_name, fn, dispatch_key="", *, with_keyset=False, allow_override=False):
        """Registers ``fn`` as the kernel of ``op_name`` for ``dispatch_key``."""
        if not callable(fn):
            raise TypeError(f"Input function is required to be a callable but found type "
                            f"{type(fn)}")
        if dispatch_key == "":
            dispatch_key = self.dispatch_key or "CompositeImplicitAutograd"
        qual = self._qual(op_name)
        d = OPDEFS.get(qual)
        if d is None:
            if self.ns == "aten" or qual.startswith("aten::"):
                raise NotImplementedError(
                    "Library.impl: overriding framework's built-in (aten) ops is not "
                    "supported")
            raise RuntimeError(f"operator {qual} does not exist; define it first with "
                               f"Library.define")
        if with_keyset:
            inner = fn

            def fn(*args, **kwargs):      # noqa: F811  (no dispatch key sets here)
                return inner(None, *args, **kwargs)
        if fn is fallthrough_kernel:
            return
        if dispatch_key not in _DEVICE_OF_KEY:
            raise ValueError(f"Library.impl: dispatch key {dispatch_key!r} is not supported "
                             f"here (use one of {', '.join(k for k in _DEVICE_OF_KEY if k)})")
        dev = _DEVICE_OF_KEY[dispatch_key]
        if dispatch_key == "Meta":
            d.register_fake(fn)
        elif dispatch_key in ("CompositeImplicitAutograd", "Autograd", "AutogradCPU",
                              "AutogradCUDA"):
            # differentiable through the framework ops fn calls: no generated node
            d._implicit = getattr(d, "_implicit", {})
            d._implicit[dev] = fn
        else:
            d._backend_fns[dev] = fn
        d._patch_library_call()

    def fallback(self, fn, dispatch_key="", *, with_keyset=False):
        raise NotImplementedError("Library.fallback is not supported")

    def _destroy(self):
        for q in self._op_defs:
            OPDEFS.pop(q, None)
        self._op_defs = set()


_NOT_REGISTERED = (
    "{}: an autograd kernel was not registered to the Autograd key(s) but we are trying to "
    "backprop through it. This may lead to silently incorrect behavior. This behavior is "
    "deprecated and will be removed in a future version of PyTorch. If your operator is "
    "differentiable, please ensure you have registered an autograd kernel to the correct "
    "Autograd key (e.g. DispatchKey::Autograd, DispatchKey::CompositeImplicitAutograd). If "
    "your operator is not differentiable, or to squash this warning and use the previous "
    "behavior, please register torch::CppFunction::makeFallthrough() to "
    "DispatchKey::Autograd.")


def _library_call(self, *args, **kwargs):
    """Call of an op defined with ``Library.define``: an implicit-autograd kernel runs with
    autograd (framework records what it calls); a backend kernel runs as a custom op's."""
    args, kwargs = self._parsed.bind(args, kwargs)
    implicit = getattr(self, "_implicit", {})
    if implicit:
        tensors = list(_iter_tensors(args))
        dev = tensors[0].device.type if tensors else None
        fn = implicit.get(dev) or implicit.get(None)
        if fn is not None and not (dev in self._backend_fns):
            return fn(*args, **kwargs)
    from .autograd import grad_mode
    if grad_mode._mode.enabled and any(t._requires_grad for t in _iter_tensors(args)):
        return self._autograd_fn.apply_op(args, kwargs)
    return self._dispatch(args, kwargs)


def _patch_library_call(self):
    if getattr(self, "_library_op", False):
        self.__class__ = _LibraryOpDef


CustomOpDef._patch_library_call = _patch_library_call


class _LibraryOpDef(CustomOpDef):
    __call__ = _library_call


_defs = set()
_keep_alive = []


def define(qualname, schema, *, lib=None, tags=()):
    """``torch.library.define("mylib::foo", "(Tensor x) -> Tensor")``: defines an op."""
    if not isinstance(qualname, str):
        raise ValueError(f"define(qualname, schema): expected qualname to be instance of "
                         f"str, got {type(qualname)}")
    namespace, name = qualname.split("::")
    if lib is None:
        lib = Library(namespace, "FRAGMENT")
        _keep_alive.append(lib)
    if not schema.lstrip().startswith("("):
        raise ValueError(f"define(qualname, schema, ...): expected schema to look like e.g. "
                         f"\"(Tensor x) -> Tensor\" but got \"{schema}\"")
    lib.define(name + schema, tags=tags)
    _defs.add(qualname)


def impl(qualname, types, func=None, *, lib=None):
    """``torch.library.impl("mylib::foo", "cpu")``: registers a kernel for device types
    ("cpu", "cuda", or "default" for every device). Usable as a decorator."""
    if isinstance(types, str):
        types = (types,)
    keys = set()
    for typ in types:
        if typ in ("default", "CompositeImplicitAutograd"):
            keys.add("CompositeImplicitAutograd")
        elif typ in _DEVICE_OF_KEY:
            keys.add(typ)
        else:
            keys.add({"cpu": "CPU", "cuda": "CUDA", "meta": "Meta"}.get(typ, typ))

    def register(func):
        namespace, _ = _opdef(qualname, "impl")._qualname.split("::")
        use = lib
        if use is None:
            use = Library(namespace, "FRAGMENT")
            _keep_alive.append(use)
        for key in keys:
            use.impl(qualname, func, key)
        return func

    if func is None:
        return register
    return register(func)
