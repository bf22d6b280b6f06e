"""Argument helpers shared by the layers (PyTorch's ``torch.nn.modules.utils``)."""
import collections.abc
import itertools

__all__ = []


def _ntuple(n, name="parse"):
    """A function turning an iterable into a tuple and a scalar into ``n`` copies of it."""
    def parse(x):
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(itertools.repeat(x, n))

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n):
    r"""Reverse the order of ``t`` and repeat each element ``n`` times: turns the padding
    of Conv and Pooling modules into F.pad's order (last dim first)."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _list_with_default(out_size, defaults):
    """``out_size`` with each None replaced by the matching trailing entry of ``defaults``
    (an int ``out_size`` is returned as is)."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size):])]
