"""``Graph``: the list of nodes of an FX program, and the Python code it stands for
(torch.fx.graph)."""
import builtins
import collections
import keyword
import math
import operator
import re

from .node import Node, _format_target, _qualified_name, _type_repr, map_arg

reflectable_magic_methods = {
    "add": "{} + {}", "sub": "{} - {}", "mul": "{} * {}", "floordiv": "{} // {}",
    "truediv": "{} / {}", "div": "{} / {}", "mod": "{} % {}", "pow": "{} ** {}",
    "lshift": "{} << {}", "rshift": "{} >> {}", "and_": "{} & {}", "or_": "{} | {}",
    "xor": "{} ^ {}", "getitem": "{}[{}]", "matmul": "{} @ {}",
}
magic_methods = {
    "eq": "{} == {}", "ne": "{} != {}", "lt": "{} < {}", "gt": "{} > {}", "le": "{} <= {}",
    "ge": "{} >= {}", "pos": "+{}", "neg": "-{}", "invert": "~{}",
    **reflectable_magic_methods,
}


class _CustomBuiltin:
    def __init__(self, import_str, obj):
        self.import_str, self.obj = import_str, obj


def _custom_builtins():
    import framework
    return {"inf": _CustomBuiltin("from math import inf", math.inf),
            "nan": _CustomBuiltin("from math import nan", math.nan),
            "NoneType": _CustomBuiltin("NoneType = type(None)", type(None)),
            "framework": _CustomBuiltin("import framework", framework),
            "device": _CustomBuiltin("from framework import device", framework.device)}


_illegal_char = re.compile("[^0-9a-zA-Z_]+")
_name_suffix = re.compile(r"(.*)_(\d+)$")
_snake_case_sub = re.compile(r"(?<=[a-z])([A-Z])").sub


def _snake_case(s):
    """``fooBar`` -> ``foo_bar``, as node names read."""
    return _snake_case_sub(r"_\1", s).lower()


class _Namespace:
    """Hands out unique, legal Python names: ``add``, ``add_1``, ``getattr_1``."""

    def __init__(self):
        self._obj_to_name = {}
        self._used_names = set()
        self._base_count = collections.defaultdict(int)

    def create_name(self, candidate, obj):
        if obj is not None and obj in self._obj_to_name:
            return self._obj_to_name[obj]
        candidate = _illegal_char.sub("_", candidate) or "_unnamed"
        if candidate[0].isdigit():
            candidate = f"_{candidate}"
        match = _name_suffix.match(candidate)
        if match is None:
            base, num = candidate, None
        else:
            base, num = match.group(1), int(match.group(2))
        candidate = base if num is None else f"{base}_{num}"
        if not num:
            num = self._base_count[base]
        while candidate in self._used_names or self._is_illegal_name(candidate, obj):
            num += 1
            candidate = f"{base}_{num}"
        self._used_names.add(candidate)
        self._base_count[base] = num
        if obj is not None:
            self._obj_to_name[obj] = candidate
        return candidate

    def associate_name_with_obj(self, name, obj):
        self._obj_to_name[obj] = name

    def _is_illegal_name(self, name, obj):
        if name in keyword.kwlist:
            return True
        if name in builtins.__dict__:
            return obj is not builtins.__dict__[name]
        cb = _custom_builtins().get(name)
        return cb is not None and obj is not cb.obj


class PythonCode:
    """The source of a ``forward`` and the globals it needs."""

    def __init__(self, src, globals_):
        self.src, self.globals = src, globals_


def _is_framework_path(func):
    """``func``'s qualified name when following it from ``framework`` finds ``func``."""
    try:
        name = _qualified_name(func)
    except Exception:
        return None
    parts = name.split(".")
    if parts[0] != "framework":
        return None
    import framework
    obj = framework
    for p in parts[1:]:
        obj = getattr(obj, p, None)
    return name if obj is func else None


class _Codegen:
    def __init__(self, graph):
        self.graph = graph
        self.namespace = _Namespace()
        for node in graph.nodes:
            self.namespace.create_name(node.name, node)
        self.globals = {name: cb.obj for name, cb in _custom_builtins().items()}
        self.globals["builtins"] = builtins

    def add_global(self, name_hint, obj):
        if _is_framework_path(obj):
            return _qualified_name(obj)
        if getattr(builtins, getattr(obj, "__name__", ""), None) is obj:
            return obj.__name__
        for k, v in self.globals.items():
            if v is obj:
                return k
        name = self.namespace.create_name(name_hint, obj)
        self.globals[name] = obj
        return name

    def type_repr(self, o):
        if o is None or o is type(None):
            return "None"
        return _type_repr(o)

    def gen(self, root_module="self"):
        nodes = list(self.graph.nodes)
        last_use = {}
        user_to_last_uses = collections.defaultdict(list)
        for node in reversed(nodes):
            for n in node.all_input_nodes:
                if n not in last_use:
                    last_use[n] = node
                    user_to_last_uses[node].append(n)
        free_vars, body, wrapped = [], [], {}
        ret_type = ""
        for node in nodes:
            if node.op == "placeholder":
                default = f" = {node.args[0]!r}" if node.args else ""
                ann = f": {self.type_repr(node.type)}" if node.type is not None else ""
                free_vars.append(f"{node.target}{ann}{default}")
                raw = node.target.replace("*", "")
                if raw != node.name:
                    body.append(f"{node.name} = {raw}\n")
                continue
            if node.op == "output":
                if node.type is not None:
                    ret_type = f" -> {self.type_repr(node.type)}"
                body.append(f"return {_repr_args(node.args[0])}\n")
                continue
            body.append(self.emit(node, root_module, wrapped))
            dead = list(user_to_last_uses.get(node, []))
            if not node.users:
                dead.append(node)
            if dead:
                body.append(";  " + " = ".join([n.name for n in dead] + ["None"]) + "\n")
            else:
                body.append("\n")
        if not any(n.op == "output" for n in nodes):
            body.append("pass\n")
        wrap_stmts = ""
        if wrapped:
            from .tracer import wrap
            w = self.add_global("wrap", wrap)
            wrap_stmts = "\n".join(f'{w}("{name}")' for name in wrapped)
        code = "".join(body).lstrip("\n")
        code = "\n".join("    " + line for line in code.split("\n"))
        prologue = f"def forward({', '.join([root_module] + free_vars)}){ret_type}:"
        return PythonCode(f"\n{wrap_stmts}\n\n{prologue}\n{code}", self.globals)

    def emit(self, node, root_module, wrapped):
        name = node.name
        if node.op == "get_attr":
            return f"{name} = {_format_target(root_module, node.target)}"
        if node.op == "call_module":
            return f"{name} = {_format_target(root_module, node.target)}" \
                   f"({_format_args(node.args, node.kwargs)})"
        if node.op == "call_method":
            return f"{name} = {_repr_args(node.args[0])}.{node.target}" \
                   f"({_format_args(node.args[1:], node.kwargs)})"
        target = node.target
        tname = getattr(target, "__name__", "")
        if getattr(target, "__module__", "") == "_operator" and tname in magic_methods \
                and not node.kwargs and getattr(operator, tname, None) is target:
            return f"{name} = " + magic_methods[tname].format(
                *(_repr_args(a) for a in node.args))
        if target is getattr and len(node.args) == 2 and not node.kwargs and \
                isinstance(node.args[1], str) and node.args[1].isidentifier():
            return f"{name} = {_format_target(_repr_args(node.args[0]), node.args[1])}"
        qual = _qualified_name(target)
        g = self.add_global(qual, target)
        if node.meta.get("is_wrapped"):
            wrapped.setdefault(g)
        return f"{name} = {g}({_format_args(node.args, node.kwargs)})"


def _repr_args(a):
    return repr(a)


def _format_args(args, kwargs):
    parts = [repr(a) for a in args] + [f"{k} = {v!r}" for k, v in kwargs.items()]
    return ", ".join(parts)


class _InsertPoint:
    def __init__(self, graph, new_insert):
        self.graph = graph
        self.orig, graph._insert = graph._insert, new_insert

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        self.graph._insert = self.orig


class _NodeList:
    def __init__(self, graph, direction="_next"):
        self.graph, self.direction = graph, direction

    def __len__(self):
        return self.graph._len

    def __iter__(self):
        root = self.graph._root
        cur = getattr(root, self.direction)
        while cur is not root:
            nxt = getattr(cur, self.direction)
            if not cur._erased:
                yield cur
            cur = nxt

    def __reversed__(self):
        return iter(_NodeList(self.graph, "_prev" if self.direction == "_next" else "_next"))


class Graph:
    """The program of a ``GraphModule``: a list of ``Node`` objects, in execution order."""

    def __init__(self, owning_module=None, tracer_cls=None, tracer_extras=None):
        self._root = Node(self, "", "root", "", (), {})
        self._insert = self._root.prepend
        self._len = 0
        self._graph_namespace = _Namespace()
        self._owning_module = owning_module
        self._tracer_cls = tracer_cls
        self._tracer_extras = tracer_extras

    @property
    def owning_module(self):
        return self._owning_module

    @owning_module.setter
    def owning_module(self, mod):
        self._owning_module = mod

    @property
    def nodes(self):
        """The nodes in order; safe to erase the current node while iterating."""
        return _NodeList(self)

    def find_nodes(self, *, op, target=None):
        return [n for n in self.nodes if n.op == op and (target is None or n.target == target)]

    # ---- building ----------------------------------------------------------------------
    def create_node(self, op, target, args=None, kwargs=None, name=None, type_expr=None):
        """Creates a node and inserts it at the current insert point."""
        args = () if args is None else args
        kwargs = {} if kwargs is None else kwargs
        if not isinstance(args, tuple):
            raise AssertionError("args must be a tuple")
        if not isinstance(kwargs, dict):
            raise AssertionError("kwargs must be a dict")
        if op == "call_function":
            # a tracing wrapper handed in while patched: the graph holds the op itself
            target = getattr(target, "__fx_original__", target)
        candidate = name if name is not None else self._target_to_str(target)
        name = self._graph_namespace.create_name(candidate, None)
        n = Node(self, name, op, target, args, kwargs, type_expr)
        self._graph_namespace.associate_name_with_obj(name, n)
        self._insert(n)
        self._len += 1
        return n

    def placeholder(self, name, type_expr=None, default_value=None):
        """A function input named ``name``."""
        args = () if default_value is None else (default_value,)
        return self.create_node("placeholder", name, args=args, type_expr=type_expr)

    def get_attr(self, qualified_name, type_expr=None):
        """Fetches the attribute ``qualified_name`` (``"layer.weight"``) of the module."""
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(self, module_name, args=None, kwargs=None, type_expr=None):
        """Calls the submodule ``module_name`` of the owning module."""
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name, args=None, kwargs=None, type_expr=None):
        """Calls ``args[0].method_name(*args[1:], **kwargs)``."""
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function, args=None, kwargs=None, type_expr=None):
        """Calls the free function ``the_function``."""
        return self.create_node("call_function", the_function, args, kwargs,
                                type_expr=type_expr)

    def output(self, result, type_expr=None):
        """The value the graph returns."""
        return self.create_node("output", "output", (result,), type_expr=type_expr)

    def _target_to_str(self, target):
        if callable(target):
            from ._bindings import public_name
            public = public_name(target)
            op = public[1] if public is not None else target.__name__
        else:
            op = target
            if op.startswith("__") and op.endswith("__") and op[2:-2].isidentifier():
                op = op[2:-2]
        return _snake_case(op)

    def erase_node(self, to_erase):
        """Removes a node that has no users."""
        if len(to_erase.users) > 0:
            raise RuntimeError(f"Tried to erase Node {to_erase} but it still had "
                               f"{len(to_erase.users)} users in the graph: "
                               f"{to_erase.users}!")
        if to_erase.graph is not self:
            raise RuntimeError(f"Attempting to remove {to_erase} from wrong graph!")
        if to_erase._erased:
            return
        to_erase._remove_from_list()
        to_erase._erased = True
        self._len -= 1
        to_erase.args, to_erase.kwargs = (), {}

    def inserting_before(self, n=None):
        """Context manager: new nodes go right before ``n`` (the graph's start if None)."""
        if n is None:
            return self.inserting_after(self._root)
        if n.graph is not self:
            raise AssertionError("Node to insert before is not in graph.")
        return _InsertPoint(self, n.prepend)

    def inserting_after(self, n=None):
        """Context manager: new nodes go right after ``n`` (the graph's end if None)."""
        if n is None:
            return self.inserting_before(self._root)
        if n.graph is not self:
            raise AssertionError("Node to insert after is not in graph.")
        return _InsertPoint(self, n.append)

    def node_copy(self, node, arg_transform=lambda x: x):
        """Copies ``node`` from another graph into this one, its arguments mapped by
        ``arg_transform``."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        result = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        result.meta = dict(node.meta)
        return result

    def graph_copy(self, g, val_map, return_output_node=False):
        """Copies every node of ``g`` into this graph; ``val_map`` maps old nodes to new.
        Returns the value ``g`` outputs (mapped)."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                rv = map_arg(node.args[0], lambda n: val_map[n])
                return (rv, node) if return_output_node else rv
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __deepcopy__(self, memo=None):
        g = Graph(tracer_cls=self._tracer_cls)
        output_vals = g.graph_copy(self, val_map={}, return_output_node=True)
        if output_vals is not None:
            out_val, old_out = output_vals
            g.output(out_val, type_expr=old_out.type)
        return g

    # ---- passes ------------------------------------------------------------------------
    def eliminate_dead_code(self, is_impure_node=None):
        """Erases nodes whose values are never used and that have no side effect;
        returns whether anything changed."""
        self.lint()
        changed = False
        for node in reversed(self.nodes):
            impure = is_impure_node(node) if is_impure_node else node.is_impure()
            if not impure and len(node.users) == 0:
                self.erase_node(node)
                changed = True
        return changed

    def lint(self):
        """Checks that every node is well formed and used only after it is defined."""
        seen, names = set(), set()
        for node in self.nodes:
            if node.graph is not self:
                raise RuntimeError(f"Node '{node}' does not belong to this Graph!")
            for arg in node.all_input_nodes:
                if arg not in seen:
                    if arg.graph is not self:
                        raise RuntimeError(f"Argument '{arg}' of Node '{node}' does not "
                                           "belong to this Graph, but was used as an "
                                           "argument! If you are copying nodes from "
                                           "another graph, make sure to use ``arg_transform``"
                                           " on node_copy() to remap values\n" + str(self))
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' was used before "
                                       "it has been defined! Please check that Nodes in "
                                       "the graph are topologically ordered\n" + str(self))
            if node.name in names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            seen.add(node)
            names.add(node.name)
        mod = self.owning_module
        if mod is not None:
            for node in self.nodes:
                if node.op in ("get_attr", "call_module"):
                    obj = mod
                    for i, atom in enumerate(node.target.split(".")):
                        if not hasattr(obj, atom):
                            seen_qual = ".".join(node.target.split(".")[:i])
                            raise RuntimeError(
                                f"Node {node} target {node.target} references nonexistent "
                                f"attribute {atom} of {seen_qual}")
                        obj = getattr(obj, atom)

    # ---- printing ----------------------------------------------------------------------
    def python_code(self, root_module="self", *, verbose=False):
        """The Python source of ``forward`` for this graph, and its globals."""
        return _Codegen(self).gen(root_module)

    def __str__(self):
        ret = [None]
        lines = [n.format_node(maybe_return_typename=ret) for n in self.nodes]
        head = f"graph(){ret[0] or ''}:"
        return "\n".join([head] + ["    " + line for line in lines if line])

    def print_tabular(self):
        """Prints the nodes as a table (needs the ``tabulate`` package)."""
        try:
            from tabulate import tabulate
        except ImportError:
            print("`print_tabular` relies on the library `tabulate`, which could not be "
                  "found on this machine. Run `pip install tabulate` to install the "
                  "library.")
            raise
        rows = [[n.op, n.name, n.target, n.args, n.kwargs] for n in self.nodes]
        print(tabulate(rows, headers=["opcode", "name", "target", "args", "kwargs"]))
