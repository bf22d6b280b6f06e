"""Named tuple results of the sort family, like torch.return_types (fields values/indices).

Kept here until the project has a shared framework/return_types.py, which can re-export
these (their __module__ stays this module, so they pickle)."""
import collections

_FIELDS = ["values", "indices"]

sort = collections.namedtuple("sort", _FIELDS)
topk = collections.namedtuple("topk", _FIELDS)
kthvalue = collections.namedtuple("kthvalue", _FIELDS)
median = collections.namedtuple("median", _FIELDS)
nanmedian = collections.namedtuple("nanmedian", _FIELDS)
mode = collections.namedtuple("mode", _FIELDS)
cummax = collections.namedtuple("cummax", _FIELDS)
cummin = collections.namedtuple("cummin", _FIELDS)
