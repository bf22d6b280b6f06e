"""PyTorch's ``grad_fn._saved_<name>`` and ``grad_fn._raw_saved_<name>`` on op nodes: what
an op's node saved for backward, read by the argument's schema name (``_saved_self`` for
the first one, as in aten; ``_saved_exponent``) or as ``_saved_result`` (``_saved_result0``, ... for several outputs).
``_raw_saved_<name>.register_hooks(pack, unpack)`` packs that one saved tensor now and
unpacks it whenever backward (or ``_saved_<name>``) reads it."""
from .._tensor import Tensor
from .graph import _FREED, Packed, modified_error

_HOOKS_SET = ("Calling register_hooks on a saved tensor whose hooks have already been set. "
              "Hint: only one pair of hooks is allowed at a time.")


def _slot(node, key):
    """``("arg", index in node._saved)`` or ``("result", output index)`` for ``key``, or
    None when the node saved nothing by that name."""
    d = node._d
    saved = dict(d.save_at)
    if key == "self" and key not in saved:
        key = d.self_name    # PyTorch's nodes name the first argument ``self`` (aten)
    if key in saved:
        return "arg", saved[key]
    if d.save_result and key.startswith("result"):
        n = node._num_outputs
        if key == "result" and n == 1:
            return "result", 0
        if key[6:].isdigit() and int(key[6:]) < n and n > 1:
            return "result", int(key[6:])
    return None


def saved_names(node):
    """The ``_saved_*`` and ``_raw_saved_*`` attribute names of ``node``."""
    d = node._d
    keys = [("self" if k == d.self_name else k, _holds_tensor(node, p)) for k, p in d.save_at]
    if d.save_result:
        n = node._num_outputs
        keys += [("result", True)] if n == 1 else [(f"result{i}", True) for i in range(n)]
    return [f"_saved_{k}" for k, _ in keys] + [f"_raw_saved_{k}" for k, t in keys if t]


def _holds_tensor(node, p):
    from .record import TensorMeta
    return node._saved is None or isinstance(node._saved[p], (Tensor, Packed, TensorMeta))


def saved_attr(node, name):
    """The value of ``node.<name>`` for a ``_saved_*`` or ``_raw_saved_*`` name."""
    raw = name.startswith("_raw_saved_")
    slot = None
    if raw or name.startswith("_saved_"):
        slot = _slot(node, name[len("_raw_saved_"):] if raw else name[len("_saved_"):])
    if slot is None:
        raise AttributeError(f"'{node.name()}' object has no attribute '{name}'")
    if raw:
        if slot[0] == "arg" and not _holds_tensor(node, slot[1]):
            raise AttributeError(f"'{node.name()}' object has no attribute '{name}'")
        return RawSavedTensor(node, *slot)
    if node._saved is None:
        raise RuntimeError(_FREED)
    kind, i = slot
    if kind == "result":
        from .record import _unpack_results
        return _unpack_results(node)[i]
    v, version = node._saved[i], node._saved[i + 1]
    if v.__class__ is Packed:
        return v.unpack()
    if isinstance(v, (list, tuple)):
        from .record import _unpack
        return _unpack(v, node)
    if version is not None and v._storage.version != version:
        modified_error(v, version)
    return v


class RawSavedTensor:
    """One tensor an op's node saved (PyTorch's ``torch._C._autograd.SavedTensor``)."""

    def __init__(self, node, kind, index):
        self._node, self._kind, self._index = node, kind, index

    def register_hooks(self, pack_hook, unpack_hook):
        """Packs the saved tensor with ``pack_hook`` now; backward reads
        ``unpack_hook(packed)``."""
        if not (callable(pack_hook) and callable(unpack_hook)):
            raise TypeError("register_hooks(): expected two callables (pack_hook, "
                            f"unpack_hook), got {type(pack_hook).__name__} and "
                            f"{type(unpack_hook).__name__}")
        node, i = self._node, self._index
        if node._saved is None:
            raise RuntimeError(_FREED)
        if self._kind == "arg":
            saved = list(node._saved)
            v, version = saved[i], saved[i + 1]
            if not isinstance(v, Tensor):
                raise RuntimeError(_HOOKS_SET)
            if version is not None and v._storage.version != version:
                modified_error(v, version)
            saved[i], saved[i + 1] = Packed(v, (pack_hook, unpack_hook)), None
            node._saved = tuple(saved)
            return
        r = list(node._results)
        st = r[6 * i]
        if st is None or st.__class__ is Packed:
            raise RuntimeError(_HOOKS_SET)
        # the pack hook sees an alias without grad_fn: a packed value holding the output
        # itself would make a reference cycle through this node
        alias = Tensor._make(st, r[6 * i + 1], r[6 * i + 2], r[6 * i + 3], r[6 * i + 4])
        r[6 * i:6 * i + 6] = (Packed(alias, (pack_hook, unpack_hook)),) + (None,) * 5
        node._results = tuple(r)
