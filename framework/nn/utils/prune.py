"""Pruning of module parameters (PyTorch's ``torch.nn.utils.prune``).

Pruning ``name`` moves the parameter to ``name + "_orig"``, stores a ``name + "_mask"``
buffer, and registers the pruning method as a forward pre-hook that sets the plain
attribute ``name`` to ``name_orig * name_mask`` before each forward. Pruning the same
parameter again chains the methods in a :class:`PruningContainer`, the new method acting
only on the units the earlier ones kept. :func:`remove` makes the pruning permanent.
"""
import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable

import framework as fw

__all__ = [
    "BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured",
    "L1Unstructured", "RandomStructured", "LnStructured", "CustomFromMask", "identity",
    "random_unstructured", "l1_unstructured", "random_structured", "ln_structured",
    "global_unstructured", "custom_from_mask", "remove", "is_pruned",
]


class BasePruningMethod(ABC):
    r"""Abstract base class for creation of new pruning techniques.

    Provides a skeleton for customization requiring the overriding of methods such as
    :meth:`compute_mask` and :meth:`apply`.
    """

    _tensor_name: str

    def __call__(self, module, inputs):
        """Multiplies the mask into the original tensor and stores the result in the
        module's attribute ``name`` (run as a forward pre-hook)."""
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """Computes the mask of ``t`` (same shape), starting from ``default_mask``."""

    def apply_mask(self, module):
        """Returns the pruned tensor: ``name_orig`` times ``name_mask``."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        r"""Adds the forward pre-hook that prunes tensor ``name`` of ``module`` on the fly,
        after reparametrizing it as ``name_orig`` and ``name_mask``."""
        method = _composite_method(cls, module, name, *args, **kwargs)
        orig = getattr(module, name)
        if importance_scores is not None:
            if importance_scores.shape != orig.shape:
                raise AssertionError(
                    f"importance_scores should have the same shape as parameter {name} of "
                    f"{module}, got {importance_scores.shape} vs {orig.shape}")
        else:
            importance_scores = orig
        first = not isinstance(method, PruningContainer)
        if first:
            # the parameter lives on as name_orig; name becomes a plain computed attribute
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = fw.ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone(
                memory_format=fw.contiguous_format)
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if first:
                orig = getattr(module, name + "_orig")
                module.register_parameter(name, orig)
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        r"""Computes and returns a pruned version of input tensor ``t`` according to the
        pruning rule specified in :meth:`compute_mask`."""
        if importance_scores is not None:
            if importance_scores.shape != t.shape:
                raise AssertionError(
                    "importance_scores should have the same shape as tensor t, got "
                    f"{importance_scores.shape} vs {t.shape}")
        else:
            importance_scores = t
        if default_mask is None:
            default_mask = fw.ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module):
        r"""Removes the pruning reparametrization from a module: ``name`` becomes a
        parameter again, holding the pruned values; ``name_orig`` and ``name_mask`` go."""
        if self._tensor_name is None:
            raise AssertionError(
                f"Module {module} has to be pruned before pruning can be removed")
        weight = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig.data = weight.data
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


def _composite_method(cls, module, name, *args, **kwargs):
    """The new method, or the container chaining it after the hook already pruning
    ``name`` (whose hook is taken off the module; apply registers the result)."""
    old_method, keys = None, []
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            old_method = hook
            keys.append(k)
    if len(keys) > 1:
        raise AssertionError(f"Avoid adding multiple pruning hooks to the same tensor {name} "
                             f"of module {module}. Use a PruningContainer.")
    for k in keys:
        del module._forward_pre_hooks[k]
    method = cls(*args, **kwargs)
    method._tensor_name = name
    if isinstance(old_method, PruningContainer):
        old_method.add_pruning_method(method)
        method = old_method
    elif old_method is not None:
        container = PruningContainer(old_method)
        container.add_pruning_method(method)
        method = container
    return method


class PruningContainer(BasePruningMethod):
    """Container holding a sequence of pruning methods for iterative pruning.

    Keeps track of the order in which pruning methods are applied and handles combining
    successive pruning calls.
    """

    def __init__(self, *args):
        self._pruning_methods = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method):
        r"""Adds a child pruning ``method`` to the container."""
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError("Can only add pruning methods acting on the parameter named "
                             f"'{self._tensor_name}' to PruningContainer {self}. Found "
                             f"'{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        r"""Applies the latest method to the units ``default_mask`` still keeps and
        returns the combined mask (the earlier methods' masks are in ``default_mask``)."""
        method = self._pruning_methods[-1]
        new_mask = default_mask.to(dtype=t.dtype)
        kind = method.PRUNING_TYPE
        if kind == "unstructured":
            # the entries still unpruned, as a 1-D selection
            slc = default_mask == 1
        elif kind == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError('Pruning methods of PRUNING_TYPE "structured" need to '
                                     "have the attribute `dim` defined.")
            n_dims = t.dim()
            dim = method.dim + n_dims if method.dim < 0 else method.dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor with dimensions {n_dims}")
            # the channels along dim that still have an unpruned entry
            others = [d for d in range(n_dims) if d != dim]
            keep = default_mask.sum(dim=others) != 0
            slc = tuple(keep if d == dim else slice(None) for d in range(n_dims))
        elif kind == "global":
            slc = (slice(None),) * t.dim()
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")
        partial = method.compute_mask(t[slc], default_mask=default_mask[slc])
        new_mask[slc] = partial.to(dtype=new_mask.dtype)
        return new_mask


class Identity(BasePruningMethod):
    r"""Utility pruning method that does not prune any units but generates the pruning
    parametrization with a mask of ones."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        r"""Adds the forward pre-hook that prunes nothing (a mask of ones)."""
        return super().apply(module, name)


class RandomUnstructured(BasePruningMethod):
    r"""Prune (currently unpruned) units in a tensor at random.

    Args:
        amount (int or float): quantity of parameters to prune. If ``float``, should be
            between 0.0 and 1.0 and represent the fraction of parameters to prune. If
            ``int``, it represents the absolute number of parameters to prune.
    """

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        # the random scores are drawn only when something is pruned (as PyTorch's)
        return _unstructured_mask(self.amount, t, default_mask, lambda: fw.rand_like(t), True)

    @classmethod
    def apply(cls, module, name, amount):
        r"""Adds the forward pre-hook that prunes ``amount`` random units of ``name``."""
        return super().apply(module, name, amount=amount)


def _unstructured_mask(amount, t, default_mask, scores, largest):
    """``default_mask`` with the ``amount`` units of ``t`` of largest (or smallest)
    ``scores()`` zeroed."""
    size = t.nelement()
    k = _compute_nparams_toprune(amount, size)
    _validate_pruning_amount(k, size)
    mask = default_mask.clone(memory_format=fw.contiguous_format)
    if k != 0:
        mask.view(-1)[fw.topk(scores().view(-1), k=k, largest=largest).indices] = 0
    return mask


class L1Unstructured(BasePruningMethod):
    r"""Prune (currently unpruned) units in a tensor by zeroing out the ones with the
    lowest L1-norm.

    Args:
        amount (int or float): quantity of parameters to prune (a fraction if float).
    """

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        return _unstructured_mask(self.amount, t, default_mask, lambda: fw.abs(t), False)

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        r"""Adds the forward pre-hook that prunes the ``amount`` units of ``name`` with the
        smallest absolute value (of ``importance_scores`` if given)."""
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    r"""Prune entire (currently unpruned) channels in a tensor at random.

    Args:
        amount (int or float): quantity of channels to prune (a fraction if float).
        dim (int, optional): index of the dim along which we define channels to prune.
            Default: -1.
    """

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1):
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t, default_mask):
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        nchannels = t.shape[self.dim]
        k = _compute_nparams_toprune(self.amount, nchannels)
        _validate_pruning_amount(k, nchannels)
        if k == 0:
            return default_mask
        prob = fw.rand(nchannels, device=t.device)
        threshold = fw.kthvalue(prob, k=k).values
        mask = fw.zeros_like(t)
        mask[_channel_index(t, self.dim, prob > threshold)] = 1
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        r"""Adds the forward pre-hook that prunes ``amount`` random channels of ``name``
        along ``dim``."""
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    r"""Prune entire (currently unpruned) channels in a tensor based on their L\ ``n``-norm.

    Args:
        amount (int or float): quantity of channels to prune (a fraction if float).
        n (int, float, inf, -inf, 'fro', 'nuc'): the order of norm, as in
            :func:`torch.norm`'s ``p``.
        dim (int, optional): index of the dim along which we define channels to prune.
            Default: -1.
    """

    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim=-1):
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t, default_mask):
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        nchannels = t.shape[self.dim]
        k = _compute_nparams_toprune(self.amount, nchannels)
        _validate_pruning_amount(k, nchannels)
        norm = _compute_norm(t, self.n, self.dim)
        kept = fw.topk(norm, k=nchannels - k, largest=True)
        if k == 0:
            return default_mask
        mask = fw.zeros_like(t)
        mask[_channel_index(t, self.dim, kept.indices)] = 1
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        r"""Adds the forward pre-hook that prunes the ``amount`` channels of ``name`` along
        ``dim`` with the smallest L\ ``n``-norm."""
        return super().apply(module, name, amount=amount, n=n, dim=dim,
                             importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes with a given ``mask`` (combined with any earlier pruning of the tensor)."""

    PRUNING_TYPE = "global"

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        if default_mask.shape != self.mask.shape:
            raise AssertionError(f"default_mask shape {default_mask.shape} must match "
                                 f"self.mask shape {self.mask.shape}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        r"""Adds the forward pre-hook that prunes ``name`` with ``mask``."""
        return super().apply(module, name, mask=mask)


def identity(module, name):
    r"""Apply pruning reparametrization without pruning any units; returns ``module``."""
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    r"""Prune tensor ``name`` of ``module`` by removing ``amount`` (currently unpruned)
    units selected at random; returns ``module``."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    r"""Prune tensor ``name`` of ``module`` by removing ``amount`` (currently unpruned)
    units with the lowest L1-norm; returns ``module``."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    r"""Prune tensor ``name`` of ``module`` by removing ``amount`` (currently unpruned)
    channels along ``dim`` selected at random; returns ``module``."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    r"""Prune tensor ``name`` of ``module`` by removing ``amount`` (currently unpruned)
    channels along ``dim`` with the lowest L\ ``n``-norm; returns ``module``."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    r"""Globally prunes the tensors in ``parameters`` (an iterable of ``(module, name)``)
    by applying ``pruning_method`` (an unstructured method class, built with ``kwargs``)
    to all of them at once, as one flattened vector."""
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    if importance_scores is None:
        importance_scores = {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    parameters = list(parameters)
    from .convert_parameters import parameters_to_vector
    scores = parameters_to_vector([importance_scores.get((m, n), getattr(m, n))
                                   for m, n in parameters])
    default_mask = parameters_to_vector([getattr(m, n + "_mask", fw.ones_like(getattr(m, n)))
                                         for m, n in parameters])
    # one container over the flat vector, so that earlier pruning is respected
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`.'
                        f" Found method {pruning_method} of type {method.PRUNING_TYPE}")
    container.add_pruning_method(method)
    final_mask = container.compute_mask(scores, default_mask)
    start = 0
    for m, n in parameters:
        param = getattr(m, n)
        count = param.numel()
        custom_from_mask(m, n, mask=final_mask[start:start + count].view(param.shape))
        start += count


def custom_from_mask(module, name, mask):
    r"""Prune tensor ``name`` of ``module`` by applying the pre-computed ``mask``;
    returns ``module``."""
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module, name):
    r"""Remove the pruning reparameterization from a module and the pruning method from
    the forward hook: ``name`` stays pruned, as a plain parameter; returns ``module``."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before "
                     "pruning can be removed")


def is_pruned(module):
    r"""Check if a module (or any of its submodules) is pruned, by looking for pruning
    pre-hooks."""
    for _, sub in module.named_modules():
        for hook in sub._forward_pre_hooks.values():
            if isinstance(hook, BasePruningMethod):
                return True
    return False


# ---- checks and helpers ----------------------------------------------------------------------

def _validate_pruning_amount_init(amount):
    """``amount`` must be a non-negative int or a float in [0, 1] (before seeing a tensor)."""
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if isinstance(amount, numbers.Integral):
        bad = amount < 0
    else:
        bad = float(amount) > 1.0 or float(amount) < 0.0
    if bad:
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a "
                         "non-negative integer")


def _validate_pruning_amount(amount, tensor_size):
    """An int ``amount`` must not exceed the number of units to prune."""
    if isinstance(amount, numbers.Integral) and amount > tensor_size:
        raise ValueError(f"amount={amount} should be smaller than the number of parameters "
                         f"to prune={tensor_size}")


def _validate_structured_pruning(t):
    shape = t.shape
    if len(shape) <= 1:
        raise ValueError("Structured pruning can only be applied to multidimensional tensors. "
                         f"Found tensor of shape {shape} with {len(shape)} dims")


def _validate_pruning_dim(t, dim):
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")


def _compute_nparams_toprune(amount, tensor_size):
    """The number of units to prune: ``amount`` itself if int, else rounded fraction."""
    if isinstance(amount, numbers.Integral):
        return amount
    return round(amount * tensor_size)


def _compute_norm(t, n, dim):
    """The L``n``-norm of each channel of ``t`` along ``dim`` (over all other dims)."""
    dims = list(range(t.dim()))
    dims.remove(dims[dim])
    return fw.norm(t, p=n, dim=dims)


def _channel_index(t, dim, channels):
    """An index selecting ``channels`` (bool mask or indices) along ``dim`` of ``t``."""
    dim = dim + t.dim() if dim < 0 else dim
    return tuple(channels if d == dim else slice(None) for d in range(t.dim()))
