"""Function transforms over modules (the part of PyTorch's ``torch.func`` this framework
has: ``functional_call``)."""
from collections.abc import Sequence

from .nn.utils.stateless import _functional_call

__all__ = ["functional_call"]


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    r"""Call ``module`` with its parameters and buffers replaced by the tensors of
    ``parameter_and_buffer_dicts`` (a dict, or a sequence of dicts with distinct keys,
    keyed by dotted names as in ``named_parameters``); the module is restored afterwards.

    ``tie_weights``: a value given for one of several tied names is used for all of them.
    ``strict``: every parameter and buffer must be given, and nothing else.
    """
    if isinstance(parameter_and_buffer_dicts, dict):
        parameters_and_buffers = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be "
                             "dictionaries")
        counts = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                             "functional call is ambiguous")
        parameters_and_buffers = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of "
                         f"dicts, but got {type(parameter_and_buffer_dicts)}")
    return _functional_call(module, parameters_and_buffers, args, kwargs,
                            tie_weights=tie_weights, strict=strict)
