"""Calling a module with substitute parameters and buffers (PyTorch's
``torch.nn.utils.stateless``; ``framework.func.functional_call`` is the public entry)."""
import contextlib
import warnings

import framework as _fw

from ..modules.module import Module

__all__ = ["functional_call"]

_MISSING = object()


def _get_submodule(module, path, memo):
    if not path:
        return module
    if path in memo:
        return memo[path]
    prefix, _, attr = path.rpartition(".")
    parent = _get_submodule(module, prefix, memo)
    try:
        sub = getattr(parent, attr)
    except AttributeError as ex:
        raise AttributeError(f"{parent._get_name()} has no attribute `{attr}`") from ex
    if not isinstance(sub, Module):
        raise TypeError(f"submodule `{path}`: {sub} is not an instance of torch.nn.Module")
    memo[path] = sub
    return sub


def _swap_tensor(module, name, tensor):
    """Puts ``tensor`` (or removes the entry, for _MISSING) at ``name`` of ``module``;
    returns what was there (_MISSING if nothing)."""
    if tensor is not _MISSING and tensor is not None and not isinstance(tensor, _fw.Tensor):
        raise TypeError(f"{tensor} is not an instance of torch.Tensor")
    if "." in name:
        raise KeyError('tensor name can\'t contain "."')
    if name == "":
        raise KeyError('tensor name can\'t be empty string ""')
    # the dicts are written directly: a plain tensor may stand in for a Parameter
    for store in (module._parameters, module._buffers):
        if name in store:
            orig = store[name]
            if tensor is _MISSING:
                del store[name]
            else:
                store[name] = tensor
            return orig
    orig = getattr(module, name) if hasattr(module, name) else _MISSING
    if orig is not _MISSING and orig is not None and not isinstance(orig, _fw.Tensor):
        raise TypeError(f"attribute `{name}`: {orig} is not an instance of torch.Tensor")
    if tensor is not _MISSING:
        setattr(module, name, tensor)
    elif hasattr(module, name):
        delattr(module, name)
    return orig


def _untie_named_tensors_map(module, parameters_and_buffers):
    """Extends the given names to every name tied to them (one tensor under several
    names), refusing different values for names of one tied group."""
    named = {}
    named.update(module.named_parameters(remove_duplicate=False))
    named.update(module.named_buffers(remove_duplicate=False))
    groups = {}
    for name, t in named.items():
        groups.setdefault(id(t), set()).add(name)
    tied = {n: names for names in groups.values() if len(names) > 1 for n in names}
    given = set(parameters_and_buffers)
    given_tied = {n for n in given if n in tied}
    for n in given_tied:
        names = tied[n]
        values = {id(parameters_and_buffers[m]) for m in names if m in parameters_and_buffers}
        if len(names & given_tied) > 1 and len(values) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, "
                             "which are tied. Consider using tie_weights=False")
    untied = dict(parameters_and_buffers)
    for n in given_tied:
        for m in tied[n]:
            untied[m] = parameters_and_buffers[n]
    return untied


@contextlib.contextmanager
def _reparametrize_module(module, parameters_and_buffers, tie_weights=False, strict=False):
    values = (_untie_named_tensors_map(module, parameters_and_buffers) if tie_weights
              else parameters_and_buffers)
    if strict:
        valid = {n for n, _ in module.named_parameters(remove_duplicate=False)}
        valid |= {n for n, _ in module.named_buffers(remove_duplicate=False)}
        missing, unexpected = sorted(valid - set(values)), sorted(set(values) - valid)
        msgs = []
        if unexpected:
            msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if msgs:
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(
                module._get_name(), "\n\t".join(msgs)))
    memo = {}

    def swap(name, tensor):
        prefix, _, attr = name.rpartition(".")
        return _swap_tensor(_get_submodule(module, prefix, memo), attr, tensor)

    originals = {}
    try:
        for name, tensor in values.items():
            originals[name] = swap(name, tensor)
        yield
    finally:
        current = {name: swap(name, orig) for name, orig in originals.items()}
        # a forward that reassigned a buffer hands the new tensor back through the dict
        parameters_and_buffers.update({k: current[k] for k in parameters_and_buffers
                                       if k in current})


def _functional_call(module, parameters_and_buffers, args=None, kwargs=None, *,
                     tie_weights=True, strict=False):
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize_module(module, parameters_and_buffers, tie_weights=tie_weights,
                               strict=strict):
        return module(*args, **kwargs)


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    r"""Perform a functional call on the module by replacing the module parameters and
    buffers with the provided ones (deprecated: use ``framework.func.functional_call``)."""
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 "
                  "and will be removed in a future version of PyTorch. Please use "
                  "`torch.func.functional_call` instead which is a drop-in replacement.",
                  FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs,
                            tie_weights=tie_weights, strict=strict)
