"""Tracing with example values, the core that ``framework.compile`` and
``framework.export`` share: each recorded node's op runs eagerly on its arguments'
example values as it is recorded, and the result is kept in ``node.meta['val']``. A
traced tensor's sizes, rank, dtype and device are therefore concrete while tracing, so
Python code reading them runs as in eager mode; its data stays symbolic.

The tracers built on it differ in policy, which they set through the hooks here: what a
shape query or a constant attribute does (``shape_query``, ``constant_attribute``),
whether reading data is refused (``data_read``), where the example inputs and attributes
come from (``example_input``, ``attr_value``), and whether ops called without traced
arguments are recorded (``record_constant_ops``)."""
from .._tensor import Tensor
from .node import map_aggregate, map_arg
from .proxy import Attribute, Proxy
from .tracer import Tracer

# ops whose result's shape depends on the data, not only on the input shapes
DATA_SHAPED = {"nonzero", "argwhere", "masked_select", "unique", "unique_consecutive",
               "repeat_interleave", "bincount", "masked_scatter"}


def has_tensor(value):
    """Whether the (nested) ``value`` holds a tensor."""
    found = []
    map_aggregate(value, lambda v: found.append(v) if isinstance(v, Tensor) else v)
    return bool(found)


def target_name(node):
    """The op name of ``node``: the function's or method's name, or the attribute read
    by a ``getattr`` node."""
    t = node.target
    if node.op == "call_function" and getattr(t, "__name__", "") == "getattr":
        return node.args[1]
    return t if isinstance(t, str) else getattr(t, "__name__", "")


def data_shaped(node):
    """Whether the shape of ``node``'s value depends on data: a nonzero-like op, a
    boolean-mask index, or an input of that kind."""
    if any(a.meta.get("data_dependent_shape") for a in node.all_input_nodes):
        return True
    if node.op not in ("call_function", "call_method"):
        return False
    name = node.target if isinstance(node.target, str) else getattr(
        node.target, "__name__", "")
    if name in DATA_SHAPED or (name == "where" and len(node.args) == 1):
        return True
    if name in ("getitem", "__getitem__") and len(node.args) == 2:
        masks = []
        map_arg(node.args[1], lambda a: masks.append(a) if isinstance(
            a.meta.get("val"), Tensor) and a.meta["val"].dtype.name == "bool" else a)
        return bool(masks)
    return False


class ValueProxy(Proxy):
    """A traced value with its example value (``node.meta['val']``): its shape, sizes,
    rank, dtype, device and requires_grad are concrete; its data is not."""

    @property
    def value(self):
        return self.node.meta["val"]

    def _shaped(self, what):
        self.tracer.shape_query(self, what)
        return self.value

    @property
    def shape(self):
        return self._shaped("shape").shape

    def size(self, dim=None):
        v = self._shaped("size()")
        return v.size() if dim is None else v.size(dim)

    def dim(self):
        return self.value.dim()

    ndimension = dim

    def numel(self):
        return self._shaped("numel()").numel()

    def nelement(self):
        return self._shaped("nelement()").numel()

    def __len__(self):
        return len(self._shaped("len()"))

    def __getattr__(self, k):
        if k.startswith("__") and k.endswith("__"):
            raise AttributeError(k)
        self.tracer.data_read(self, k)
        v = getattr(self.value, k)
        if callable(v) and not isinstance(v, Tensor):
            return Attribute(self, k)     # a method: called, it becomes a call_method node
        if has_tensor(v):
            return self.tracer.create_proxy("call_function", getattr, (self, k), {})
        self.tracer.constant_attribute(self, k, v)
        return v                          # dtype, device, ndim, requires_grad, is_cuda...


class ValueTracer(Tracer):
    """A ``Tracer`` that runs the program on example values while recording it: every
    node but the output gets the value of its op run eagerly on its arguments' values
    (``meta['val']``), exactly once, in program order, so random ops draw what eager
    draws and in-place ops act once. Parameters and buffers are ``get_attr`` nodes."""

    # record framework ops called without traced arguments (``arange(T)``) as nodes
    record_constant_ops = False

    def __init__(self):
        super().__init__()
        self.proxy_buffer_attributes = True
        # > 0 while an op runs eagerly: the ops it calls are not traced
        self._computing = 0

    def proxy(self, node):
        return ValueProxy(node, self)

    # ---- policy hooks ---------------------------------------------------------------
    def shape_query(self, proxy, what):
        """Called before ``what`` (``shape``, ``size()``, ``len()``...) of ``proxy`` is
        answered from its example value."""

    def constant_attribute(self, proxy, name, value):
        """Called when the attribute ``name`` of ``proxy`` is answered with the constant
        ``value`` (a dtype, a device, a flag)."""

    def data_read(self, proxy, name):
        """Called before the attribute ``name`` of ``proxy`` is read: may refuse reading
        the data (``item``, ``tolist``)."""

    def example_input(self, node):
        """The example value of the placeholder ``node``."""
        raise NotImplementedError

    def attr_value(self, node):
        """The value of the ``get_attr`` node ``node``: a parameter, buffer or tensor
        constant of the root."""
        obj = self.root
        self._computing += 1      # read as the eager program reads it, not as a node
        try:
            for part in node.target.split("."):
                obj = getattr(obj, part)
        finally:
            self._computing -= 1
        return obj

    # ---- running nodes --------------------------------------------------------------
    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
        node = super().create_node(kind, target, args, kwargs, name, type_expr)
        if kind != "output":
            self.attach(node, self.run_node(node))
        return node

    def attach(self, node, value):
        """Stores ``value`` as the example value of ``node``."""
        node.meta["val"] = value
        if data_shaped(node):
            node.meta["data_dependent_shape"] = True

    def value_of(self, node):
        return node.meta["val"]

    def run_node(self, node):
        """The value of ``node``: its op run eagerly on its arguments' values."""
        if node.op == "placeholder":
            return self.example_input(node)
        if node.op == "get_attr":
            return self.attr_value(node)
        args = map_arg(node.args, self.value_of)
        kwargs = map_arg(node.kwargs, self.value_of)
        self._computing += 1
        try:
            if node.op == "call_function":
                return node.target(*args, **kwargs)
            if node.op == "call_method":
                return getattr(args[0], node.target)(*args[1:], **kwargs)
            return self.root.get_submodule(node.target)(*args, **kwargs)
        finally:
            self._computing -= 1

    def call_without_proxies(self, kind, target, fn, args, kwargs):
        if self._computing or not self.record_constant_ops:
            return fn(*args, **kwargs)
        self._computing += 1
        try:
            value = fn(*args, **kwargs)
        finally:
            self._computing -= 1
        if not has_tensor(value):
            return value          # sizes, dtypes, flags: constants of this trace
        # a tensor made from constants: recorded, so that it is made on every call
        node = Tracer.create_node(self, kind, target, self.create_arg(args),
                                  self.create_arg(kwargs))
        self.attach(node, value)
        return self.proxy(node)

    def call_module(self, m, forward, args, kwargs):
        if self._computing:       # a module called by an op run eagerly
            return forward(*args, **kwargs)
        return super().call_module(m, forward, args, kwargs)

    def getattr(self, attr, attr_val, parameter_proxy_cache):
        if self._computing:       # a module run eagerly reads its own parameters
            return attr_val
        return super().getattr(attr, attr_val, parameter_proxy_cache)

    def iter(self, obj):
        if not isinstance(obj, ValueProxy):
            return super().iter(obj)
        n = len(obj) if isinstance(obj.value, Tensor) else len(obj.value)
        return iter([obj[i] for i in range(n)])
