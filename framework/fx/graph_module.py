"""``GraphModule``: a module whose ``forward`` is Python code generated from a ``Graph``
(torch.fx.graph_module)."""
import copy
import itertools
import linecache

from ..nn import Module
from .graph import Graph

_next_id = itertools.count()


def _exec_with_source(src, globals_):
    """Runs ``src`` in ``globals_``, registered with ``linecache`` so tracebacks and
    ``inspect`` show the generated code."""
    key = f"<eval_with_key>.{next(_next_id)}"
    linecache.cache[key] = (len(src), None, src.splitlines(True), key)
    exec(compile(src, key, "exec"), globals_)


def _forward_from_src(src, globals_):
    globals_copy = dict(globals_)
    _exec_with_source(src, globals_copy)
    fn = globals_copy["forward"]
    del globals_copy["forward"]
    return fn


def _copy_attr(from_module, to_module, target):
    *prefix, field = target.split(".")
    for item in prefix:
        f = getattr(from_module, item)
        t = getattr(to_module, item, None)
        if f is t:
            return   # already installed, a whole submodule at once
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        from_module, to_module = f, t
    orig = getattr(from_module, field)
    _install(to_module, field, orig)


def _assign_attr(from_obj, to_module, target):
    *prefix, field = target.split(".")
    for item in prefix:
        t = getattr(to_module, item, None)
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        to_module = t
    _install(to_module, field, from_obj)


def _install(module, field, value):
    from .._tensor import Tensor
    from ..nn import Parameter
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        module.register_buffer(field, value)
    else:
        setattr(module, field, value)


class GraphModule(Module):
    """A module built from a ``root`` (a module, or a dict of qualified name -> object)
    and a ``Graph``: it holds the submodules, parameters and buffers the graph refers to,
    and its ``forward`` is the code generated from the graph (``code``). After editing
    ``graph``, call ``recompile()``."""

    def __new__(cls, *args, **kwargs):
        # each instance gets its own class: ``recompile`` sets ``forward`` on it
        for t in cls.__mro__:
            if t.__qualname__.split(".")[-1] != "GraphModuleImpl":
                cls = t
                break

        class GraphModuleImpl(cls):
            pass
        return super().__new__(GraphModuleImpl)

    def __init__(self, root, graph, class_name="GraphModule"):
        super().__init__()
        self.__class__.__name__ = class_name
        if isinstance(root, Module):
            if hasattr(root, "training"):
                self.training = root.training
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    _copy_attr(root, self, node.target)
        elif isinstance(root, dict):
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    if node.target not in root:
                        raise RuntimeError(f"Node {node} referenced target {node.target} but "
                                           "that target was not provided in ``root``!")
                    _assign_attr(root[node.target], self, node.target)
        else:
            raise RuntimeError("Unsupported type " + str(root) + " passed for root!")
        self.graph = graph

    @property
    def graph(self):
        """The ``Graph`` this module's code is generated from."""
        return self._graph

    @graph.setter
    def graph(self, g):
        if not isinstance(g, Graph):
            raise AssertionError(f"Expected a Graph instance, but got {type(g)}")
        object.__setattr__(self, "_graph", g)
        g.owning_module = self
        self.recompile()

    @property
    def code(self):
        """The Python source of ``forward``."""
        if not hasattr(self, "_code"):
            raise RuntimeError("Code has not been generated! Please report a bug to PyTorch")
        return self._code

    def recompile(self):
        """Regenerates ``forward`` from ``self.graph``; call it after editing the graph."""
        python_code = self._graph.python_code(root_module="self")
        object.__setattr__(self, "_code", python_code.src)
        cls = type(self)
        cls.forward = _forward_from_src(self._code, python_code.globals)
        return python_code

    def print_readable(self, print_output=True, include_stride=False, include_device=False,
                       colored=False):
        """The generated code as a module class; printed unless ``print_output=False``."""
        name = self._get_name()
        body = "\n".join("    " + line if line.strip() else "" for line in
                         self._code.strip("\n").split("\n"))
        out = f"class {name}(framework.nn.Module):\n{body}\n"
        if print_output:
            print(out)
        return out

    def __str__(self):
        return super().__str__() + "\n\n" + self._code

    def _get_name(self):
        return type(self).__name__

    # ---- submodules -----------------------------------------------------------------
    def add_submodule(self, target, m):
        """Installs ``m`` at the qualified name ``target``, creating empty parent modules
        as needed; False if a parent on the way is not a module."""
        *prefix, field = target.split(".")
        mod = self
        for item in prefix:
            sub = getattr(mod, item, None)
            if sub is None:
                sub = Module()
                mod.add_module(item, sub)
            if not isinstance(sub, Module):
                return False
            mod = sub
        mod.add_module(field, m)
        return True

    def delete_submodule(self, target):
        """Removes the submodule at ``target``; False if there is none."""
        atoms = target.split(".")
        path, target_submod = atoms[:-1], atoms[-1]
        mod = self
        for item in path:
            if not hasattr(mod, item):
                return False
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                return False
        if not hasattr(mod, target_submod) or \
                not isinstance(getattr(mod, target_submod), Module):
            return False
        delattr(mod, target_submod)
        return True

    def delete_all_unused_submodules(self):
        """Removes every submodule that no ``call_module`` or ``get_attr`` node needs."""
        used = set()
        for node in self.graph.nodes:
            if node.op in ("call_module", "get_attr"):
                fullpath = node.target.split(".")
                for i in range(1, len(fullpath)):
                    used.add(".".join(fullpath[:i]))
                used.add(node.target)
                if node.op == "call_module":
                    try:
                        sub = self.get_submodule(node.target)
                    except AttributeError:
                        continue
                    for name, _ in sub.named_modules():
                        if name:
                            used.add(node.target + "." + name)
        to_delete = [name for name, _ in self.named_modules() if name and name not in used]
        for name in to_delete:
            self.delete_submodule(name)

    # ---- copies ---------------------------------------------------------------------
    def __deepcopy__(self, memo):
        res = Module.__new__(type(self))
        fake_mod = Module()
        state = {k: v for k, v in self.__dict__.items() if k not in ("_graph", "_code")}
        fake_mod.__dict__.update(copy.deepcopy(state, memo))
        graph = copy.deepcopy(self._graph, memo)
        GraphModule.__init__(res, fake_mod, graph, self.__class__.__name__)
        for k, v in fake_mod.__dict__.items():
            if k not in res.__dict__:
                res.__dict__[k] = v
        return res

    def __copy__(self):
        res = GraphModule(self, self.graph, self.__class__.__name__)
        res.meta = getattr(self, "meta", {})
        return res

    def __reduce__(self):
        state = {k: v for k, v in self.__dict__.items() if k not in ("_graph", "_code")}
        return (_rebuild_graph_module, (state, _flatten_graph(self._graph),
                                        self.__class__.__name__))


def _flatten_graph(graph):
    """A graph as a flat list (pickling the linked nodes would recurse per node)."""
    from .node import map_arg
    out = []
    for n in graph.nodes:
        mark = lambda x: _NodeRef(x.name)  # noqa: E731
        out.append((n.name, n.op, n.target, map_arg(n.args, mark), map_arg(n.kwargs, mark),
                    n.type, n.meta))
    return out


class _NodeRef:
    def __init__(self, name):
        self.name = name


def _rebuild_graph_module(state, flat, class_name):
    from .node import map_aggregate
    graph = Graph()
    env = {}

    def load(x):
        return env[x.name] if isinstance(x, _NodeRef) else x
    for name, op, target, args, kwargs, type_, meta in flat:
        n = graph.create_node(op, target, map_aggregate(args, load),
                              map_aggregate(kwargs, load), name, type_)
        n.meta = meta
        env[name] = n
    root = Module()
    root.__dict__.update(state)
    gm = GraphModule(root, graph, class_name)
    for k, v in state.items():
        if k not in gm.__dict__:
            gm.__dict__[k] = v
    return gm
