"""Pytrees (PyTorch's ``torch.utils._pytree``): nested containers (tuples, lists, dicts,
OrderedDicts, defaultdicts, deques, namedtuples and registered types) whose non-container
values are the *leaves*.

``tree_flatten(tree)`` gives the leaves, in order (a dict's in its insertion order), and a
:class:`TreeSpec` that ``tree_unflatten(leaves, spec)`` rebuilds the tree from. ``None`` is
a leaf, as in PyTorch 2.13. ``register_pytree_node`` adds a container type.
"""
import dataclasses
import functools
import threading
import types
import warnings
from collections import OrderedDict, defaultdict, deque, namedtuple
from typing import Any, NamedTuple

__all__ = [
    "PyTree", "Context", "TreeSpec", "PyTreeSpec", "LeafSpec", "keystr", "key_get",
    "register_pytree_node", "tree_is_leaf", "tree_flatten", "tree_flatten_with_path",
    "tree_unflatten", "tree_iter", "tree_leaves", "tree_leaves_with_path", "tree_structure",
    "tree_map", "tree_map_with_path", "tree_map_", "tree_map_only", "tree_map_only_",
    "tree_all", "tree_any", "tree_all_only", "tree_any_only", "treespec_pprint",
    "is_namedtuple", "is_namedtuple_class", "is_namedtuple_instance",
]

PyTree = Any
Context = Any


class NodeDef(NamedTuple):
    type: Any
    flatten_fn: Any
    unflatten_fn: Any
    flatten_with_keys_fn: Any


_NODE_REGISTRY_LOCK = threading.RLock()
SUPPORTED_NODES = {}


def register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None,
                         to_dumpable_context=None, from_dumpable_context=None,
                         flatten_with_keys_fn=None):
    """Registers ``cls`` as a container: ``flatten_fn(obj) -> (children, context)`` and
    ``unflatten_fn(children, context) -> obj``. (Serialization arguments are accepted and
    checked, not used: this module has no treespec_dumps.)"""
    with _NODE_REGISTRY_LOCK:
        if cls in SUPPORTED_NODES:
            raise ValueError(f"{cls} is already registered as pytree node.")
    _private_register_pytree_node(cls, flatten_fn, unflatten_fn,
                                  serialized_type_name=serialized_type_name,
                                  to_dumpable_context=to_dumpable_context,
                                  from_dumpable_context=from_dumpable_context,
                                  flatten_with_keys_fn=flatten_with_keys_fn)


def _private_register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None,
                                  to_dumpable_context=None, from_dumpable_context=None,
                                  flatten_with_keys_fn=None):
    with _NODE_REGISTRY_LOCK:
        if cls in SUPPORTED_NODES:
            warnings.warn(f"{cls} is already registered as pytree node. "
                          "Overwriting the previous registration.", stacklevel=2)
        if (to_dumpable_context is None) ^ (from_dumpable_context is None):
            raise ValueError(f"Both to_dumpable_context and from_dumpable_context for {cls} "
                             "must be None or registered.")
        SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)


def _deregister_pytree_node(cls):
    with _NODE_REGISTRY_LOCK:
        del SUPPORTED_NODES[cls]


# ---- key paths ----------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class SequenceKey:
    idx: int

    def __str__(self):
        return f"[{self.idx!r}]"

    def get(self, sequence):
        return sequence[self.idx]


@dataclasses.dataclass(frozen=True)
class MappingKey:
    key: Any

    def __str__(self):
        return f"[{self.key!r}]"

    def get(self, mapping):
        return mapping[self.key]


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    name: str

    def __str__(self):
        return f".{self.name}"

    def get(self, obj):
        return getattr(obj, self.name)


def keystr(kp):
    """A key path as text: ``[0]['a'].x``."""
    return "".join(str(k) for k in kp)


def key_get(obj, kp):
    for k in kp:
        obj = k.get(obj)
    return obj


# ---- namedtuples --------------------------------------------------------------------------

def is_namedtuple_class(cls):
    """Whether ``cls`` is a subclass of a namedtuple."""
    return (isinstance(cls, type) and issubclass(cls, tuple)
            and isinstance(getattr(cls, "_fields", None), tuple)
            and all(type(f) is str for f in cls._fields)
            and callable(getattr(cls, "_make", None))
            and callable(getattr(cls, "_asdict", None)))


def is_namedtuple_instance(obj):
    return is_namedtuple_class(type(obj))


def is_namedtuple(obj):
    """Whether ``obj`` is a namedtuple or a namedtuple class."""
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


# ---- the built-in containers --------------------------------------------------------------

def _seq_keys(values, context):
    return [(SequenceKey(i), v) for i, v in enumerate(values)], context


def _tuple_flatten(d):
    return list(d), None


def _tuple_unflatten(values, context):
    return tuple(values)


def _list_flatten(d):
    return d, None


def _list_unflatten(values, context):
    return list(values)


def _dict_flatten(d):
    return list(d.values()), list(d.keys())


def _dict_keys(d):
    values, context = _dict_flatten(d)
    return [(MappingKey(k), v) for k, v in zip(context, values)], context


def _dict_unflatten(values, context):
    return dict(zip(context, values))


def _namedtuple_flatten(d):
    return list(d), type(d)


def _namedtuple_keys(d):
    values, context = _namedtuple_flatten(d)
    return [(GetAttrKey(f), v) for f, v in zip(context._fields, values)], context


def _namedtuple_unflatten(values, context):
    return context(*values)


def _ordereddict_flatten(d):
    return list(d.values()), list(d.keys())


def _ordereddict_unflatten(values, context):
    return OrderedDict((k, v) for k, v in zip(context, values))


def _defaultdict_flatten(d):
    values, keys = _dict_flatten(d)
    return values, [d.default_factory, keys]


def _defaultdict_keys(d):
    values, context = _defaultdict_flatten(d)
    return [(MappingKey(k), v) for k, v in zip(context[1], values)], context


def _defaultdict_unflatten(values, context):
    factory, keys = context
    return defaultdict(factory, _dict_unflatten(values, keys))


def _deque_flatten(d):
    return list(d), d.maxlen


def _deque_unflatten(values, context):
    return deque(values, maxlen=context)


_private_register_pytree_node(tuple, _tuple_flatten, _tuple_unflatten,
                              flatten_with_keys_fn=lambda d: _seq_keys(*_tuple_flatten(d)))
_private_register_pytree_node(list, _list_flatten, _list_unflatten,
                              flatten_with_keys_fn=lambda d: _seq_keys(*_list_flatten(d)))
_private_register_pytree_node(dict, _dict_flatten, _dict_unflatten,
                              flatten_with_keys_fn=_dict_keys)
_private_register_pytree_node(namedtuple, _namedtuple_flatten, _namedtuple_unflatten,
                              flatten_with_keys_fn=_namedtuple_keys)
_private_register_pytree_node(OrderedDict, _ordereddict_flatten, _ordereddict_unflatten,
                              flatten_with_keys_fn=_dict_keys)
_private_register_pytree_node(defaultdict, _defaultdict_flatten, _defaultdict_unflatten,
                              flatten_with_keys_fn=_defaultdict_keys)
_private_register_pytree_node(deque, _deque_flatten, _deque_unflatten,
                              flatten_with_keys_fn=lambda d: _seq_keys(*_deque_flatten(d)))

STANDARD_DICT_TYPES = frozenset({dict, OrderedDict, defaultdict})
BUILTIN_TYPES = frozenset({tuple, list, dict, namedtuple, OrderedDict, defaultdict, deque})


def _register_framework_types():
    """``framework.Size`` and the ``framework.return_types`` tuples are nodes whose spec
    names their own type with no context, as PyTorch's ``torch.Size`` and structseqs."""
    from .. import return_types
    from .._tensor import Size

    def plain(cls):
        _private_register_pytree_node(
            cls, _tuple_flatten, lambda values, context, cls=cls: cls(*values),
            flatten_with_keys_fn=lambda d: _seq_keys(*_tuple_flatten(d)))

    _private_register_pytree_node(Size, _tuple_flatten,
                                  lambda values, context: Size(tuple(values)),
                                  flatten_with_keys_fn=lambda d: _seq_keys(*_tuple_flatten(d)))
    for v in vars(return_types).values():
        if (isinstance(v, type) and is_namedtuple_class(v)
                and v.__module__ == "framework.return_types"):
            plain(v)


_register_framework_types()


def _get_node_type(tree):
    t = type(tree)
    if t not in SUPPORTED_NODES and is_namedtuple_class(t):
        return namedtuple
    return t


def tree_is_leaf(tree, is_leaf=None):
    """Whether ``tree`` is a leaf (not a registered container, or ``is_leaf(tree)``)."""
    if is_leaf is not None and is_leaf(tree):
        return True
    return _get_node_type(tree) not in SUPPORTED_NODES


# ---- tree specs ---------------------------------------------------------------------------

class TreeSpec:
    """The structure of a pytree: its node type, context (a dict's keys, a namedtuple's
    class...) and the specs of its children. A leaf's spec has type None (``*``)."""

    __slots__ = ("type", "_context", "_children", "num_nodes", "num_leaves", "num_children")

    def __init__(self, type, context, children_specs):  # noqa: A002 (PyTorch's name)
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "_context", context)
        object.__setattr__(self, "_children", children_specs)
        self._count()

    def _count(self):
        if self.type is None:
            if self._context is not None:
                raise AssertionError("leaf node should not have a context")
            if len(self._children) != 0:
                raise AssertionError("leaf node should not have children")
            nodes, leaves, n = 1, 1, 0
        else:
            nodes, leaves = 1, 0
            for c in self._children:
                nodes += c.num_nodes
                leaves += c.num_leaves
            n = len(self._children)
        object.__setattr__(self, "num_nodes", nodes)
        object.__setattr__(self, "num_leaves", leaves)
        object.__setattr__(self, "num_children", n)

    def __setattr__(self, name, value):
        raise dataclasses.FrozenInstanceError(f"cannot assign to field '{name}'")

    def __repr__(self, indent=0):
        if self.type is None:
            return "*"
        s = f"TreeSpec({self.type.__name__}, {self._context}, ["
        if self.num_children > 0:
            indent += 2
            s += self._children[0].__repr__(indent)
            s += "," if self.num_children > 1 else ""
            s += ",".join("\n" + " " * indent + c.__repr__(indent) for c in self._children[1:])
        return s + "])"

    def __eq__(self, other):
        if self is other:
            return True
        if isinstance(other, TreeSpec):
            return (str(self.type) == str(other.type) and self._context == other._context
                    and self._children == other._children)
        return NotImplemented

    def __hash__(self):
        t = self.type
        if t is defaultdict:
            ctx = (self._context[0], tuple(self._context[1]))
        elif t in (dict, OrderedDict):
            ctx = tuple(self._context)
        elif t is None or t in BUILTIN_TYPES:
            ctx = self._context
        else:
            ctx = None
        return hash((t, ctx, tuple(self._children)))

    @property
    def context(self):
        return self._context

    @property
    def children_specs(self):
        warnings.warn("`treespec.children_specs` is deprecated. Use `treespec.child(index)` "
                      "to access a single child, or `treespec.children()` to get all "
                      "children.", FutureWarning, stacklevel=2)
        return self._children

    def is_leaf(self):
        return self.num_nodes == 1 and self.num_leaves == 1

    def children(self):
        return self._children.copy()

    def child(self, index):
        return self._children[index]

    def flatten_up_to(self, tree):
        """The subtrees of ``tree`` at the leaves of this spec (``tree`` must have this
        spec as a prefix)."""
        out = []
        self._flatten_up_to(tree, out)
        return out

    def _flatten_up_to(self, node, out):
        if self.is_leaf():
            out.append(node)
            return
        node_type = _get_node_type(node)
        if self.type not in BUILTIN_TYPES:
            if node_type != self.type:
                raise ValueError(f"Type mismatch; expected {self.type!r}, but got "
                                 f"{node_type!r}.")
            children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
            if len(children) != self.num_children:
                raise ValueError(f"Node arity mismatch; expected {self.num_children}, but "
                                 f"got {len(children)}.")
            if context != self._context:
                raise ValueError(f"Node context mismatch for custom node type "
                                 f"{self.type!r}.")
        else:
            both_dict = self.type in STANDARD_DICT_TYPES and node_type in STANDARD_DICT_TYPES
            if not both_dict and node_type != self.type:
                raise ValueError(f"Node type mismatch; expected {self.type!r}, but got "
                                 f"{node_type!r}.")
            if len(node) != self.num_children:
                raise ValueError(f"Node arity mismatch; expected {self.num_children}, but "
                                 f"got {len(node)}.")
            if both_dict:
                keys = self._context if self.type is not defaultdict else self._context[1]
                got, expected = set(node), set(keys)
                if got != expected:
                    msg = ""
                    if expected - got:
                        msg += f"; missing key(s): {expected - got}"
                    if got - expected:
                        msg += f"; extra key(s): {got - expected}"
                    raise ValueError(f"Node keys mismatch{msg}.")
                children = [node[k] for k in keys]
            else:
                children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
                if node_type is not deque and context != self._context:
                    raise ValueError(f"Node context mismatch for node type {self.type!r}; "
                                     f"expected {self._context!r}, but got {context!r}.")
        for sub, spec in zip(children, self._children):
            spec._flatten_up_to(sub, out)

    def unflatten(self, leaves):
        """The pytree of this structure with ``leaves``."""
        if not isinstance(leaves, (list, tuple)):
            leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} "
                             f"but the spec refers to a pytree that holds {self.num_leaves} "
                             f"items ({self}).")
        return self._unflatten(leaves, 0)

    def _unflatten(self, leaves, start):
        if self.is_leaf():
            return leaves[start]
        kids = []
        for c in self._children:
            kids.append(c._unflatten(leaves, start))
            start += c.num_leaves
        return SUPPORTED_NODES[self.type].unflatten_fn(kids, self._context)


PyTreeSpec = TreeSpec


class LeafSpec(TreeSpec):
    """The spec of a leaf (``*``)."""

    __slots__ = ()

    def __init__(self):
        super().__init__(None, None, [])

    def __repr__(self, indent=0):
        return "*"


_LEAF_SPEC = LeafSpec()


def treespec_leaf():
    return _LEAF_SPEC


def treespec_tuple(iterable=(), /):
    children = list(iterable)
    if any(not isinstance(c, TreeSpec) for c in children):
        raise ValueError(f"Expected a tuple of TreeSpec values, got: {children!r}.")
    return TreeSpec(tuple, None, children)


def treespec_dict(mapping=(), /, **kwargs):
    d = dict(mapping, **kwargs)
    if any(not isinstance(c, TreeSpec) for c in d.values()):
        raise ValueError(f"Expected a dictionary of TreeSpec values, got: {d!r}.")
    return TreeSpec(dict, list(d.keys()), list(d.values()))


# ---- flatten / unflatten / map ------------------------------------------------------------

def tree_flatten(tree, is_leaf=None):
    """The leaves of ``tree`` (depth first, left to right) and its :class:`TreeSpec`."""
    leaves = []

    def helper(node):
        if tree_is_leaf(node, is_leaf):
            leaves.append(node)
            return _LEAF_SPEC
        t = _get_node_type(node)
        children, context = SUPPORTED_NODES[t].flatten_fn(node)
        return TreeSpec(t, context, [helper(c) for c in children])

    spec = helper(tree)
    return leaves, spec


def _broadcast_to_and_flatten(tree, treespec, is_leaf=None):
    """``tree``, a prefix of ``treespec``'s structure (a leaf stands for the whole subtree
    under it), as one value per leaf of ``treespec``; None when it is not a prefix."""
    out = []

    def go(node, spec):
        if tree_is_leaf(node, is_leaf):
            out.extend([node] * spec.num_leaves)
            return True
        t = _get_node_type(node)
        if spec.is_leaf() or t is not spec.type:
            return False
        children, context = SUPPORTED_NODES[t].flatten_fn(node)
        if t is dict or t is OrderedDict:     # by key, in the spec's order
            if set(context) != set(spec.context):
                return False
            lookup = dict(zip(context, children))
            children = [lookup[k] for k in spec.context]
        elif context != spec.context or len(children) != spec.num_children:
            return False
        return all(go(c, cs) for c, cs in zip(children, spec.children()))

    return out if go(tree, treespec) else None


def tree_unflatten(leaves, treespec):
    """The pytree of structure ``treespec`` with ``leaves`` (inverse of tree_flatten)."""
    if not isinstance(treespec, TreeSpec):
        if not isinstance(leaves, TreeSpec):
            raise TypeError("Expected `treespec` to be an instance of PyTreeSpec but got "
                            f"item of type {type(treespec)}.")
        leaves, treespec = treespec, leaves
    return treespec.unflatten(leaves)


def tree_iter(tree, is_leaf=None):
    """An iterator over the leaves of ``tree``."""
    if tree_is_leaf(tree, is_leaf):
        yield tree
        return
    children, _ = SUPPORTED_NODES[_get_node_type(tree)].flatten_fn(tree)
    for c in children:
        yield from tree_iter(c, is_leaf)


def tree_leaves(tree, is_leaf=None):
    return list(tree_iter(tree, is_leaf))


def tree_structure(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[1]


def tree_map(func, tree, *rests, is_leaf=None):
    """A tree of ``tree``'s structure whose leaves are ``func(leaf, *same leaf of rests)``
    (each of ``rests`` has ``tree``'s structure as a prefix)."""
    leaves, spec = tree_flatten(tree, is_leaf)
    flat = [leaves] + [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(map(func, *flat))


def tree_map_(func, tree, *rests, is_leaf=None):
    """Calls ``func`` on each leaf (for its side effect) and returns ``tree``."""
    leaves, spec = tree_flatten(tree, is_leaf)
    flat = [leaves] + [spec.flatten_up_to(r) for r in rests]
    deque(map(func, *flat), maxlen=0)
    return tree


def map_only(type_or_types_or_pred, /):
    """Decorator: the function applies to leaves of the given type(s) (or for which the
    predicate holds); other leaves pass through unchanged."""
    if isinstance(type_or_types_or_pred, (type, tuple, types.UnionType)):
        def pred(x):
            return isinstance(x, type_or_types_or_pred)
    elif callable(type_or_types_or_pred):
        pred = type_or_types_or_pred
    else:
        raise TypeError("Argument must be a type, a tuple of types, or a callable.")

    def wrapper(func):
        @functools.wraps(func)
        def wrapped(x):
            return func(x) if pred(x) else x
        return wrapped

    return wrapper


def tree_map_only(type_or_types_or_pred, /, func, tree, is_leaf=None):
    return tree_map(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types_or_pred, /, func, tree, is_leaf=None):
    return tree_map_(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_all(pred, tree, is_leaf=None):
    return all(map(pred, tree_iter(tree, is_leaf)))


def tree_any(pred, tree, is_leaf=None):
    return any(map(pred, tree_iter(tree, is_leaf)))


def tree_all_only(type_or_types, /, pred, tree, is_leaf=None):
    return all(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


def tree_any_only(type_or_types, /, pred, tree, is_leaf=None):
    return any(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


# ---- key paths ----------------------------------------------------------------------------

def _key_paths(path, tree, is_leaf):
    if is_leaf and is_leaf(tree):
        yield path, tree
        return
    t = _get_node_type(tree)
    node = SUPPORTED_NODES.get(t)
    if node is None:
        yield path, tree
        return
    if node.flatten_with_keys_fn is None:
        raise ValueError(f"Did not find a flatten_with_keys_fn for type: {t}. Please pass a "
                         "flatten_with_keys_fn argument to register_pytree_node.")
    kids, _ = node.flatten_with_keys_fn(tree)
    for k, c in kids:
        yield from _key_paths((*path, k), c, is_leaf)


def tree_flatten_with_path(tree, is_leaf=None):
    """``([(key_path, leaf), ...], spec)``."""
    _, spec = tree_flatten(tree, is_leaf)
    return list(_key_paths((), tree, is_leaf)), spec


def tree_leaves_with_path(tree, is_leaf=None):
    return list(_key_paths((), tree, is_leaf))


def tree_map_with_path(func, tree, *rests, is_leaf=None):
    """As tree_map, with ``func(key_path, leaf, *rest_leaves)``."""
    kl, spec = tree_flatten_with_path(tree, is_leaf)
    cols = list(zip(*kl)) if kl else [[], []]
    flat = cols + [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(func(*xs) for xs in zip(*flat))


class _Asterisk(str):
    __slots__ = ()

    def __new__(cls):
        return super().__new__(cls, "*")

    def __repr__(self):
        return "*"


_asterisk = _Asterisk()


def treespec_pprint(treespec):
    """The tree of ``treespec`` with ``*`` at its leaves, as text."""
    return repr(tree_unflatten([_asterisk] * treespec.num_leaves, treespec))
