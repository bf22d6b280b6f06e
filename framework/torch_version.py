"""``TorchVersion``: a version string that compares with strings and tuples by version
order (``framework.__version__ >= "0.1"``, ``>= (0, 1)``)."""
import re

__all__ = ["TorchVersion"]

_RELEASE = re.compile(r"^v?(\d+(?:\.\d+)*)(.*)$")


def _key(v):
    """(release numbers, is-final, local part): "2.1.0a0" < "2.1.0" < "2.1.0+cpu"."""
    if isinstance(v, (tuple, list)):
        v = ".".join(str(p) for p in v)
    if not isinstance(v, str):
        raise TypeError(f"'{v}' (type {type(v).__name__}) cannot be compared to a TorchVersion")
    public, _, local = v.strip().partition("+")
    m = _RELEASE.match(public)
    if m is None:
        raise ValueError(f"Invalid version: '{v}'")
    release = tuple(int(p) for p in m.group(1).split("."))
    return release, 0 if m.group(2) else 1, local


def _cmp_key(a, b):
    (ra, fa, la), (rb, fb, lb) = _key(a), _key(b)
    n = max(len(ra), len(rb))
    return (ra + (0,) * (n - len(ra)), fa, la), (rb + (0,) * (n - len(rb)), fb, lb)


class TorchVersion(str):
    """A ``str`` that compares by version order with strings, tuples and lists."""

    def __lt__(self, other):
        a, b = _cmp_key(str(self), other)
        return a < b

    def __le__(self, other):
        a, b = _cmp_key(str(self), other)
        return a <= b

    def __gt__(self, other):
        a, b = _cmp_key(str(self), other)
        return a > b

    def __ge__(self, other):
        a, b = _cmp_key(str(self), other)
        return a >= b

    def __eq__(self, other):
        try:
            a, b = _cmp_key(str(self), other)
        except (TypeError, ValueError):
            return False
        return a == b

    def __ne__(self, other):
        return not self == other

    __hash__ = str.__hash__


__version__ = TorchVersion("0.1.0")
