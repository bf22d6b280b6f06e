"""The op registry (``OPDEFS``), ``OpOverload`` / ``OpOverloadPacket``, and the
``framework.ops`` namespace objects."""
from .._tensor import Tensor

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
