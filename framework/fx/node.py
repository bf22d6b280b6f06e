"""``Node``: one operation of an FX ``Graph`` (torch.fx.node)."""
import builtins
import types

from .immutable_collections import immutable_dict, immutable_list

base_types = (str, int, float, bool, complex, type(None), slice, type(Ellipsis), range)

# functions a graph calls for their effect (assertions): dead-code elimination keeps them
_side_effectful_functions = set()

# the six kinds of node, in the order a well-formed graph holds them
_OPS = ("placeholder", "call_method", "call_module", "call_function", "get_attr", "output",
        "root")


def map_aggregate(a, fn):
    """Applies ``fn`` to every leaf of the nested tuples/lists/dicts/slices in ``a``."""
    if isinstance(a, tuple):
        t = tuple(map_aggregate(elem, fn) for elem in a)
        # a namedtuple keeps its type
        return t if not hasattr(a, "_fields") else type(a)(*t)
    if isinstance(a, list):
        return immutable_list(map_aggregate(elem, fn) for elem in a)
    if isinstance(a, dict):
        return immutable_dict((k, map_aggregate(v, fn)) for k, v in a.items())
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn),
                     map_aggregate(a.step, fn))
    return fn(a)


def map_arg(a, fn):
    """Applies ``fn`` to every ``Node`` in the nested structure ``a``."""
    if not callable(fn):
        raise AssertionError("torch.fx.map_arg(a, fn): fn must be a callable")
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


def _qualified_name(func):
    """``module.name`` under which ``func`` can be reached (``framework.relu``,
    ``operator.add``, ``builtins.getattr``)."""
    from ._bindings import public_name
    public = public_name(func)
    if public is not None:
        return public[0]
    if getattr(builtins, getattr(func, "__name__", ""), None) is func:
        return func.__name__
    if isinstance(func, (types.MethodDescriptorType, types.WrapperDescriptorType)) and \
            func is getattr(getattr(builtins, func.__objclass__.__name__, None),
                            func.__name__, None):
        return f"{func.__objclass__.__name__}.{func.__name__}"
    name = func.__name__
    if name == "<lambda>":
        raise RuntimeError(f"Unable to represent lambda {func}")
    module = getattr(func, "__module__", None) or ""
    if module == "_operator":
        module = "operator"
    return f"{module}.{name}" if module else name


def _format_target(base, target):
    elems = target.split(".")
    r = base
    for e in elems:
        r = f"{r}.{e}" if e.isidentifier() else f'getattr({r}, "{e}")'
    return r


def _type_repr(obj):
    if isinstance(obj, type):
        if obj.__module__ == "builtins":
            return obj.__qualname__
        return f"{obj.__module__}.{obj.__qualname__}"
    return repr(obj)


class Node:
    """One operation in a ``Graph``: ``op`` (``placeholder``, ``get_attr``,
    ``call_function``, ``call_module``, ``call_method``, ``output``), its ``target``, its
    ``args``/``kwargs`` (which may hold other nodes) and the nodes that use it (``users``)."""

    def __init__(self, graph, name, op, target, args, kwargs, return_type=None):
        if op not in _OPS:
            raise ValueError(f"Node op must be one of {_OPS[:-1]}, got {op!r}")
        if op == "call_function" and not callable(target):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has "
                             f"type {type(target)} but a Callable is expected")
        if op in ("placeholder", "call_method", "call_module", "get_attr") and \
                not isinstance(target, str):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has "
                             f"type {type(target)} but a str is expected")
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self._input_nodes = {}
        self.users = {}
        self.type = return_type
        self._prev = self
        self._next = self
        self._erased = False
        self.meta = {}
        self._args = ()
        self._kwargs = {}
        self.__update_args_kwargs(args, kwargs)

    # ---- linked list -------------------------------------------------------------------
    @property
    def next(self):
        """The node after this one in the graph's list."""
        return self._next

    @property
    def prev(self):
        """The node before this one in the graph's list."""
        return self._prev

    def prepend(self, x):
        """Moves ``x`` right before this node."""
        if x is self:   # already in place (``a.append(a.next)``): nothing to move
            return
        if self.graph is not x.graph:
            raise AssertionError("Attempting to move a Node into a different Graph")
        x._remove_from_list()
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x

    def append(self, x):
        """Moves ``x`` right after this node."""
        self._next.prepend(x)

    def _remove_from_list(self):
        p, n = self._prev, self._next
        p._next, n._prev = n, p

    # ---- arguments ---------------------------------------------------------------------
    @property
    def args(self):
        """The positional arguments (nodes and constants)."""
        return self._args

    @args.setter
    def args(self, a):
        self.__update_args_kwargs(a, self._kwargs)

    @property
    def kwargs(self):
        """The keyword arguments (nodes and constants)."""
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k):
        self.__update_args_kwargs(self._args, k)

    @property
    def all_input_nodes(self):
        """The distinct nodes in ``args`` and ``kwargs``, in order of appearance."""
        return list(self._input_nodes.keys())

    def update_arg(self, idx, arg):
        """Sets ``self.args[idx] = arg``."""
        args = list(self.args)
        args[idx] = arg
        self.args = tuple(args)

    def insert_arg(self, idx, arg):
        """Inserts ``arg`` at position ``idx`` of ``self.args``."""
        args = list(self.args)
        args.insert(idx, arg)
        self.args = tuple(args)

    def update_kwarg(self, key, arg):
        """Sets ``self.kwargs[key] = arg``."""
        self.kwargs = {**self.kwargs, key: arg}

    def __update_args_kwargs(self, new_args, new_kwargs):
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._input_nodes = {}

        def collect(n):
            if n.graph is not self.graph:
                raise AssertionError(f"Argument '{n}' of Node '{self}' was used before it "
                                     "has been defined! (it belongs to another graph)")
            self._input_nodes.setdefault(n)
            return n
        self._args = map_arg(tuple(new_args), collect)
        self._kwargs = map_arg(dict(new_kwargs), collect)
        for n in self._input_nodes:
            n.users.setdefault(self)

    # ---- rewriting ---------------------------------------------------------------------
    def replace_all_uses_with(self, replace_with, delete_user_cb=lambda user: True, *,
                              propagate_meta=False):
        """Replaces every use of this node by ``replace_with``; returns the users changed."""
        if propagate_meta:
            for k, v in self.meta.items():
                replace_with.meta.setdefault(k, v)
        to_process = [u for u in self.users if delete_user_cb(u)]
        for user in to_process:
            user.replace_input_with(self, replace_with)
        return to_process

    def replace_input_with(self, old_input, new_input):
        """Replaces ``old_input`` by ``new_input`` in this node's arguments."""
        def swap(n):
            return new_input if n is old_input else n
        self.__update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    def is_impure(self):
        """Placeholders, outputs and in-place calls have effects beyond their value."""
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_function":
            return self.target in _side_effectful_functions
        if self.op == "call_method":
            return isinstance(self.target, str) and self.target.endswith("_") and \
                not self.target.startswith("_")
        if self.op == "call_module":
            mod = self.graph.owning_module
            if mod is not None:
                sub = mod.get_submodule(self.target)
                return getattr(sub, "_is_impure", False)
        return False

    # ---- printing ----------------------------------------------------------------------
    def _pretty_print_target(self, target):
        if isinstance(target, str):
            return target
        module = getattr(target, "__module__", None)
        if module == "builtins":
            return f"builtins.{target.__name__}"
        return _qualified_name(target)

    def format_node(self, placeholder_names=None, maybe_return_typename=None):
        """This node as one line of ``str(graph)``."""
        if self.op == "placeholder":
            arg_str = self.target
            arg_str += f": {_type_repr(self.type)}" if self.type else ""
            if placeholder_names is not None:
                placeholder_names.append(arg_str)
                return None
            maybe_default = f"(default={self.args[0]})" if self.args else ""
            return f"%{self.name} : [num_users={len(self.users)}] = " \
                   f"{self.op}[target={self.target}]{maybe_default}"
        if self.op == "get_attr":
            return f"%{self.name} : [num_users={len(self.users)}] = " \
                   f"{self.op}[target={self._pretty_print_target(self.target)}]"
        if self.op == "output":
            if self.type and maybe_return_typename is not None:
                maybe_return_typename[0] = f" -> {_type_repr(self.type)}"
            return f"return {self.args[0]}"
        return (f"%{self.name} : [num_users={len(self.users)}] = "
                f"{self.op}[target={self._pretty_print_target(self.target)}]"
                f"(args = {_format_arg(self.args)}, kwargs = {_format_arg(self.kwargs)})")

    def __repr__(self):
        return self.name


def _format_arg(arg, max_list_len=float("inf")):
    if hasattr(arg, "_custom_fx_repr_fn"):
        return arg._custom_fx_repr_fn()
    if isinstance(arg, list):
        items = ", ".join(_format_arg(a) for idx, a in enumerate(arg) if idx < max_list_len)
        maybe_len = "" if len(arg) < max_list_len + 1 else f", ...[total_len={len(arg)}]"
        return f"[{items}{maybe_len}]"
    if isinstance(arg, tuple):
        items = ", ".join(_format_arg(a) for idx, a in enumerate(arg) if idx < max_list_len)
        maybe_len = "" if len(arg) < max_list_len + 1 else f", ...[total_len={len(arg)}]"
        maybe_comma = "," if len(arg) == 1 else ""
        return f"({items}{maybe_comma}{maybe_len})"
    if isinstance(arg, dict):
        items = ", ".join(f"{k}: {_format_arg(v)}" for k, v in arg.items())
        return f"{{{items}}}"
    if isinstance(arg, Node):
        return "%" + str(arg)
    return str(arg)
