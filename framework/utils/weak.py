"""Weak references and dictionaries keyed by object identity (PyTorch's
``torch.utils.weak``): tensors compare elementwise, so a ``WeakKeyDictionary`` cannot key
on them; these key on ``id`` and drop an entry when its key is collected."""
import weakref
from collections.abc import MutableMapping
from weakref import ref

from .._tensor import Tensor

__all__ = ["TensorWeakRef", "WeakIdRef", "WeakIdKeyDictionary", "WeakTensorKeyDictionary"]

WeakRef = ref


class WeakIdRef(weakref.ref):
    """A weak reference hashed and compared by the identity of its referent (while it
    lives; by the reference itself after)."""

    __slots__ = ["_id"]

    @staticmethod
    def _key(obj):
        return id(obj)

    def __init__(self, key, callback=None):
        self._id = self._key(key)
        super().__init__(key, callback)

    def __hash__(self):
        return self._id

    def __eq__(self, other):
        a, b = self(), other()
        if a is not None and b is not None:
            return self._key(a) == self._key(b)
        return self is other

    def __ne__(self, other):
        # weakref.ref's own != would compare the referents (elementwise for tensors)
        return not self.__eq__(other)


class _WeakHashRef(WeakIdRef):
    """A weak reference hashed and compared by its referent's ``hash``."""

    __slots__ = []
    _key = staticmethod(hash)


class WeakIdKeyDictionary(MutableMapping):
    """A mapping whose keys are held weakly and compared by identity (``ref_type``: the
    reference class that keys are wrapped in)."""

    def __init__(self, dict=None, ref_type=WeakIdRef):  # noqa: A002
        self.data = {}
        self.ref_type = ref_type

        def remove(k, selfref=ref(self)):
            self = selfref()
            if self is not None:
                self.data.pop(k, None)
        self._remove = remove
        if dict is not None:
            self.update(dict)

    def __delitem__(self, key):
        del self.data[self.ref_type(key)]

    def __getitem__(self, key):
        return self.data[self.ref_type(key)]

    def __setitem__(self, key, value):
        self.data[self.ref_type(key, self._remove)] = value

    def __contains__(self, key):
        try:
            wr = self.ref_type(key)
        except TypeError:
            return False
        return wr in self.data

    def __len__(self):
        return sum(1 for k in list(self.data) if k() is not None)

    def __iter__(self):
        for wr in list(self.data):
            obj = wr()
            if obj is not None:
                yield obj

    def __repr__(self):
        return f"<{self.__class__.__name__} at {id(self):#x}>"

    def keys(self):
        return list(iter(self))

    def items(self):
        return [(k, v) for wr, v in list(self.data.items()) if (k := wr()) is not None]

    def values(self):
        return [v for wr, v in list(self.data.items()) if wr() is not None]

    def keyrefs(self):
        """The weak references to the keys."""
        return list(self.data)

    def copy(self):
        new = WeakIdKeyDictionary(ref_type=self.ref_type)
        new.update(self.items())
        return new

    __copy__ = copy

    def __deepcopy__(self, memo):
        from copy import deepcopy
        new = self.__class__(ref_type=self.ref_type)
        for key, value in self.items():
            new[key] = deepcopy(value, memo)
        return new

    def get(self, key, default=None):
        return self.data.get(self.ref_type(key), default)

    def pop(self, key, *args):
        return self.data.pop(self.ref_type(key), *args)

    def popitem(self):
        while True:
            wr, value = self.data.popitem()
            o = wr()
            if o is not None:
                return o, value

    def setdefault(self, key, default=None):
        return self.data.setdefault(self.ref_type(key, self._remove), default)

    def update(self, dict=None, **kwargs):  # noqa: A002
        if dict is not None:
            if not hasattr(dict, "items"):
                dict = type({})(dict)  # noqa: A001
            for key, value in dict.items():
                self[key] = value
        if kwargs:
            self.update(kwargs)

    def __eq__(self, other):
        if not isinstance(other, MutableMapping):
            return NotImplemented
        return {id(k): v for k, v in self.items()} == {id(k): v for k, v in other.items()}

    __hash__ = None


# tensors are keyed by identity (``==`` on them is elementwise)
WeakTensorKeyDictionary = WeakIdKeyDictionary


class TensorWeakRef:
    """A weak reference to a tensor."""

    def __init__(self, tensor):
        if not isinstance(tensor, Tensor):
            raise AssertionError(f"expected torch.Tensor, got {type(tensor)}.")
        self.ref = weakref.ref(tensor)

    def __call__(self):
        return self.ref()
