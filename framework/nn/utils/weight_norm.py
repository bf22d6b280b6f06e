"""Weight normalisation through a forward pre-hook (PyTorch's deprecated
``torch.nn.utils.weight_norm`` API: ``weight_g``/``weight_v`` parameters)."""
import warnings

import framework as _fw

from ..._tensor import _wrap_dim
from ..parameter import Parameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


def _norm_except_dim(v, pow=2, dim=0):
    """The ``pow``-norm of ``v`` over every dimension but ``dim``, kept broadcastable to
    ``v``; ``dim=-1`` means the norm of the whole tensor (a 0-dim tensor), as in torch."""
    if dim == -1:
        return _fw.linalg.vector_norm(v, pow)
    dim = _wrap_dim(dim, v.dim())  # PyTorch's IndexError, not a silent wrap
    others = tuple(d for d in range(v.dim()) if d != dim)
    if not others:
        # a 1-D tensor normalised along its only dimension: each entry is its own norm
        return v.abs()
    return _fw.linalg.vector_norm(v, pow, dim=others, keepdim=True)


def _weight_norm(v, g, dim=0):
    """w = g * v / ||v|| (norm over all dimensions but ``dim``)."""
    return v * (g / _norm_except_dim(v, 2, dim))


class WeightNorm:
    """The forward pre-hook that recomputes ``module.<name>`` from ``<name>_g`` and
    ``<name>_v`` before every forward."""

    def __init__(self, name, dim):
        if dim is None:
            dim = -1
        self.name = name
        self.dim = dim

    def compute_weight(self, module):
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module, name, dim):
        warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                      "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning,
                      stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError("Cannot register two weight_norm hooks on the same "
                                   f"parameter {name}")
        if dim is None:
            dim = -1
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        # the weight leaves the parameters; its magnitude and direction replace it
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(_norm_except_dim(weight, 2, dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    r"""Apply weight normalization to a parameter in the given module:
    ``w = g * v / ||v||``, with ``<name>_g`` (magnitude) and ``<name>_v`` (direction)
    as the new parameters and ``<name>`` recomputed before every forward.
    ``dim=None`` normalises over the whole tensor."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    r"""Remove the weight normalization reparameterization from a module."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
