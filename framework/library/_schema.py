"""Schema inference from type hints (``infer_schema``), schema parsing, and argument binding
and conversion for ``framework.library`` custom ops."""
import collections.abc
import inspect
import re
import typing
from types import GenericAlias

from .._tensor import Tensor
from .._dtype import dtype as _dtype_cls
from .._device import device as _device_cls

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
        from .. import _dtype
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

