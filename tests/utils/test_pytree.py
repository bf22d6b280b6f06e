"""framework.utils._pytree against torch.utils._pytree: the same leaves in the same order,
the same spec reprs, unflatten round trips, maps, key paths and errors."""
import collections
import warnings

import pytest

import framework as fw
import framework.utils._pytree as fp

torch = pytest.importorskip("torch")
tp = pytest.importorskip("torch.utils._pytree")

NT = collections.namedtuple("NT", "a b")


def _trees():
    dd = collections.defaultdict(list)
    dd["q"] = 1
    dd["p"] = (2, 3)
    return [
        1, None, "s", [], (), {}, [1, 2, 3], (1, [2, (3, None)]),
        {"b": [1, (2, None)], "a": collections.OrderedDict(z=3, y=4)},
        {"z": 1, "a": 2, "m": {"y": [], "x": ()}},        # insertion order, not sorted
        NT(1, [2, {"k": 3}]), dd, collections.deque([1, [2]], maxlen=5),
        [None, None], {"x": None},
    ]


@pytest.mark.parametrize("i", range(len(_trees())))
def test_flatten_matches_torch(i):
    tree = _trees()[i]
    leaves, spec = fp.tree_flatten(tree)
    t_leaves, t_spec = tp.tree_flatten(tree)
    assert leaves == t_leaves
    assert repr(spec) == repr(t_spec)
    assert str(spec) == str(t_spec)
    assert (spec.num_leaves, spec.num_nodes, spec.num_children) == \
        (t_spec.num_leaves, t_spec.num_nodes, t_spec.num_children)
    assert spec.is_leaf() == t_spec.is_leaf()
    assert fp.tree_leaves(tree) == tp.tree_leaves(tree)
    assert fp.tree_structure(tree) == spec
    back = fp.tree_unflatten(leaves, spec)
    assert back == tree and type(back) is type(tree)
    assert fp.treespec_pprint(spec) == tp.treespec_pprint(t_spec)
    assert fp.tree_is_leaf(tree) == tp.tree_is_leaf(tree)


def test_none_is_a_leaf_and_leafspec():
    assert fp.tree_leaves([None, 1]) == [None, 1]
    spec = fp.tree_structure(1)
    assert repr(spec) == "*" and spec.is_leaf()
    assert isinstance(spec, fp.LeafSpec) and spec == fp.LeafSpec()
    assert fp.tree_structure([1]) != fp.tree_structure((1,))
    assert hash(fp.tree_structure({"a": [1]})) == hash(fp.tree_structure({"a": [2]}))


def test_map_and_friends():
    tree = {"x": 7, "y": (42, 64), "z": None}
    assert fp.tree_map(lambda x: x is None, tree) == tp.tree_map(lambda x: x is None, tree)
    assert fp.tree_map(lambda x, y: [x] + y, [5, 6], [[7, 9], [1, 2]]) == \
        [[5, 7, 9], [6, 1, 2]]
    f = fp.tree_map_only(int, lambda x: x + 1, tree)
    assert f == tp.tree_map_only(int, lambda x: x + 1, tree)
    assert fp.tree_map_only((int, type(None)), str, tree) == {"x": "7", "y": ("42", "64"),
                                                             "z": "None"}
    seen = []
    assert fp.tree_map_(seen.append, tree) is tree and seen == [7, 42, 64, None]
    seen = []
    fp.tree_map_only_(int, seen.append, tree)
    assert seen == [7, 42, 64]
    assert fp.tree_all(lambda x: x is not None, tree) is False
    assert fp.tree_any(lambda x: x == 64, tree) is True
    assert fp.tree_all_only(int, lambda x: x > 0, tree) is True
    assert fp.tree_any_only(str, lambda x: True, tree) is False
    # is_leaf stops the descent
    assert fp.tree_leaves([(1, 2), [3]], is_leaf=lambda x: isinstance(x, tuple)) == \
        [(1, 2), 3]
    # dicts of different kinds but the same keys map together, in the spec's key order
    assert fp.tree_map(lambda a, b: a + b, {"a": 1, "b": 2},
                       collections.OrderedDict(b=20, a=10)) == {"a": 11, "b": 22}


def test_map_tensors():
    t = fw.ones(2)
    out = fp.tree_map_only(fw.Tensor, lambda x: x * 2, {"t": t, "n": 3, "l": [t, None]})
    assert out["n"] == 3 and out["l"][1] is None
    assert out["t"].tolist() == [2.0, 2.0] and out["l"][0].tolist() == [2.0, 2.0]


def test_register_pytree_node():
    class Point:
        def __init__(self, x, y):
            self.x, self.y = x, y

    def flat(p):
        return [p.x, p.y], "ctx"

    def unflat(values, ctx):
        return Point(*values)

    tree = [Point(1, (2, 3)), 4]
    fp.register_pytree_node(Point, flat, unflat)
    tp.register_pytree_node(Point, flat, unflat)
    try:
        leaves, spec = fp.tree_flatten(tree)
        t_leaves, t_spec = tp.tree_flatten(tree)
        assert leaves == t_leaves == [1, 2, 3, 4]
        assert repr(spec) == repr(t_spec)
        back = fp.tree_unflatten([10, 20, 30, 40], spec)
        assert isinstance(back[0], Point) and back[0].y == (20, 30) and back[1] == 40
        with pytest.raises(ValueError) as e1:
            fp.register_pytree_node(Point, flat, unflat)
        with pytest.raises(ValueError) as e2:
            tp.register_pytree_node(Point, flat, unflat)
        assert str(e1.value) == str(e2.value)
        with pytest.raises(ValueError, match="flatten_with_keys_fn"):
            fp.tree_leaves_with_path(tree)
    finally:
        fp._deregister_pytree_node(Point)
        tp._deregister_pytree_node(Point)
    assert fp.tree_leaves(tree)[0] is tree[0]


def _same_error(fn_fw, fn_torch, exc=ValueError):
    with pytest.raises(exc) as a:
        fn_fw()
    with pytest.raises(exc) as b:
        fn_torch()
    assert str(a.value) == str(b.value)


def test_errors_match_torch():
    spec, t_spec = fp.tree_structure([1, {"a": 2}]), tp.tree_structure([1, {"a": 2}])
    _same_error(lambda: fp.tree_unflatten([1], spec), lambda: tp.tree_unflatten([1], t_spec))
    _same_error(lambda: fp.tree_map(lambda a, b: a, [1, {"a": 2}], [1, {"b": 2}]),
                lambda: tp.tree_map(lambda a, b: a, [1, {"a": 2}], [1, {"b": 2}]))
    _same_error(lambda: fp.tree_map(lambda a, b: a, [1, 2], (1, 2)),
                lambda: tp.tree_map(lambda a, b: a, [1, 2], (1, 2)))
    _same_error(lambda: fp.tree_map(lambda a, b: a, [1, 2], [1]),
                lambda: tp.tree_map(lambda a, b: a, [1, 2], [1]))
    _same_error(lambda: fp.tree_unflatten([1], 3), lambda: tp.tree_unflatten([1], 3),
                TypeError)


def test_key_paths():
    tree = {"a": [1, NT(2, 3)], "b": collections.OrderedDict(c=4)}
    kl, spec = fp.tree_flatten_with_path(tree)
    t_kl, t_spec = tp.tree_flatten_with_path(tree)
    assert [fp.keystr(k) for k, _ in kl] == [tp.keystr(k) for k, _ in t_kl] == \
        ["['a'][0]", "['a'][1].a", "['a'][1].b", "['b']['c']"]
    assert [v for _, v in kl] == [1, 2, 3, 4]
    assert all(fp.key_get(tree, k) == v for k, v in kl)
    out = fp.tree_map_with_path(lambda k, v: fp.keystr(k), tree)
    assert out["a"][1] == NT("['a'][1].a", "['a'][1].b")


def test_framework_types_as_torch_types():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = fw.max(fw.ones(2, 2), 0)
        t_r = torch.max(torch.ones(2, 2), 0)
    spec, t_spec = fp.tree_structure(r), tp.tree_structure(t_r)
    assert repr(spec) == repr(t_spec)
    back = fp.tree_unflatten([1, 2], spec)
    assert type(back) is type(r) and back.values == 1 and back.indices == 2
    size = fw.Size([2, 3])
    assert repr(fp.tree_structure(size)) == repr(tp.tree_structure(torch.Size([2, 3])))
    assert fp.tree_map(lambda v: v * 2, size) == fw.Size([4, 6])
    assert isinstance(fp.tree_map(lambda v: v, size), fw.Size)
