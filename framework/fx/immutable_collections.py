"""Lists and dicts a ``Node``'s arguments are stored in: mutating them in place would
bypass the bookkeeping of ``users``, so it raises; assign ``node.args`` instead."""


def _no_mutation(self, *args, **kwargs):
    raise NotImplementedError(f"'{type(self).__name__}' object does not support mutation. "
                              "If you are attempting to modify the kwargs or args of a "
                              "torch.fx.Node object,\ninstead create a new copy of it and "
                              "assign the copy to the node:\n    new_args = ... # copy and "
                              "mutate args\n    node.args = new_args\n")


class immutable_list(list):
    """A list that raises on mutation."""
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _no_mutation
    append = extend = insert = pop = remove = clear = sort = reverse = _no_mutation

    def __hash__(self):
        return hash(tuple(self))

    def __reduce__(self):
        return (immutable_list, (tuple(self),))


class immutable_dict(dict):
    """A dict that raises on mutation."""
    __setitem__ = __delitem__ = __ior__ = _no_mutation
    clear = pop = popitem = setdefault = update = _no_mutation

    def __hash__(self):
        return hash(tuple(self.items()))

    def __reduce__(self):
        return (immutable_dict, (tuple(self.items()),))
