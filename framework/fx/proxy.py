"""``Proxy``: the value a traced program sees in place of a tensor; every operation on it
records a node in the tracer's graph (torch.fx.proxy)."""
import operator

from .graph import magic_methods, reflectable_magic_methods
from .node import map_aggregate


class TraceError(ValueError):
    pass


class Proxy:
    """Stands for the value of ``node`` while a ``Tracer`` runs the program: operators,
    attribute access, method calls and framework functions on it add nodes to the graph.
    A proxy has no value, so it cannot decide control flow (``if``, ``bool``), be
    iterated or have a ``len``."""

    def __init__(self, node, tracer=None):
        if tracer is None:
            raise AssertionError("Proxy needs a tracer")
        self.tracer = tracer
        self.node = node

    def __repr__(self):
        return f"Proxy({self.node.name})"

    def __getattr__(self, k):
        if k.startswith("__") and k.endswith("__"):
            # copy, pickle and friends probe dunders: those are not graph attributes
            raise AttributeError(k)
        return Attribute(self, k)

    def __deepcopy__(self, memo):
        raise RuntimeError("Proxy objects cannot be deep-copied while tracing")

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    def __iter__(self):
        return self.tracer.iter(self)

    def __bool__(self):
        return self.tracer.to_bool(self)

    def keys(self):
        return self.tracer.keys(self)

    def __len__(self):
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you "
                           "want this call to be recorded, please call torch.fx.wrap('len') "
                           "at module scope")




class Attribute(Proxy):
    """``proxy.name``: a ``getattr`` node, made only when the attribute is used as a value;
    called right away it becomes a ``call_method`` node instead."""

    def __init__(self, root, attr):
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node = None

    @property
    def node(self):
        if self._node is None:
            self._node = self.tracer.create_proxy(
                "call_function", getattr, (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


class ParameterProxy(Proxy):
    """A ``get_attr`` proxy of a parameter: its shape and size are known while tracing,
    as in PyTorch."""

    def __init__(self, tracer, node, name, param):
        super().__init__(node, tracer)
        self.param, self.name = param, name

    @property
    def shape(self):
        return self.param.shape

    def size(self, dim=None):
        return self.param.size() if dim is None else self.param.size(dim)

    def dim(self):
        return self.param.dim()

    @property
    def ndim(self):
        return self.param.ndim

    def numel(self):
        return self.param.numel()

    def nelement(self):
        return self.param.nelement()


def _define_magic(name):
    target = getattr(operator, name)

    def impl(*args, **kwargs):
        tracer = args[0].tracer
        return tracer.create_proxy("call_function", target, args, kwargs)
    impl.__name__ = impl.__qualname__ = f"__{name.strip('_')}__"
    setattr(Proxy, f"__{name.strip('_')}__", impl)


def _define_reflectable(name):
    rname = f"__r{name.strip('_')}__"
    target = getattr(operator, name)

    def impl(self, rhs):
        return self.tracer.create_proxy("call_function", target, (rhs, self), {})
    impl.__name__ = impl.__qualname__ = rname
    setattr(Proxy, rname, impl)


# "div" is Python 2's ``/``: Python 3 calls __truediv__ (operator.truediv)
for _name in magic_methods:
    if _name != "div":
        _define_magic(_name)
for _name in reflectable_magic_methods:
    if _name != "div":
        _define_reflectable(_name)


def _find_proxy(*objects):
    """The first Proxy found in the nested ``objects``, else None."""
    found = []

    def find(x):
        if isinstance(x, Proxy) and not found:
            found.append(x)
        return x
    map_aggregate(objects, find)
    return found[0] if found else None
