"""Parametrizations of module tensors (PyTorch's ``torch.nn.utils.parametrize``).

``register_parametrization(module, "weight", P)`` moves ``weight`` to
``module.parametrizations.weight.original`` and turns ``module.weight`` into a property
(on a per-instance subclass ``Parametrized<Class>``) that returns ``P(original)``;
assigning to it runs ``P.right_inverse``.
"""
import collections.abc
import copyreg
from contextlib import contextmanager
from copy import deepcopy

import framework as _fw

from ..modules.container import ModuleDict, ModuleList
from ..parameter import Parameter

__all__ = ["cached", "ParametrizationList", "register_parametrization", "is_parametrized",
           "remove_parametrizations", "type_before_parametrizations",
           "transfer_parametrizations_and_params"]

_cache_enabled = 0
_cache = {}


@contextmanager
def cached():
    r"""Context manager in which each parametrized tensor is computed once, on first use,
    and reused until the context exits."""
    global _cache, _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache = {}


def _register_parameter_or_buffer(module, name, x):
    if isinstance(x, Parameter):
        module.register_parameter(name, x)
    else:
        module.register_buffer(name, x)


def _maybe_set(dest, src):
    # set_ keeps the Parameter object (optimizers hold it) and takes src's data
    dest.set_(src)


class ParametrizationList(ModuleList):
    r"""The parametrizations of one tensor, applied in order; holds the unparametrized
    tensor as ``original`` (or ``original0``, ``original1``, ... when ``right_inverse``
    returns several tensors)."""

    def __init__(self, modules, original, unsafe=False):
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        original_shape = original.shape
        original_dtype = original.dtype
        with _fw.no_grad():
            new = original
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, _fw.Tensor) and not isinstance(new, collections.abc.Sequence):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors "
                             f"(list, tuple...). Got {type(new).__name__}")
        self.is_tensor = isinstance(new, _fw.Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change "
                                 f"the dtype.\noriginal.dtype: {original.dtype}\n"
                                 f"right_inverse(original).dtype: {new.dtype}")
            if original.device != new.device:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change "
                                 f"the device.\noriginal.device: {original.device}\n"
                                 f"right_inverse(original).device: {new.device}")
            with _fw.no_grad():
                _maybe_set(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, orig_i in enumerate(new):
                if not isinstance(orig_i, _fw.Tensor):
                    raise ValueError("'right_inverse' must return a Tensor or a Sequence of "
                                     f"tensors (list, tuple...). Got element {i} of the "
                                     f"sequence with type {type(orig_i).__name__}.")
                if isinstance(original, Parameter):
                    orig_i = Parameter(orig_i, original.requires_grad)
                orig_i.requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", orig_i)
        if not self.unsafe:
            z = self()
            if not isinstance(z, _fw.Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got "
                                 f"{type(z).__name__}.")
            if z.dtype != original_dtype:
                raise ValueError("Registering a parametrization may not change the dtype of "
                                 "the tensor, unless `unsafe` flag is enabled.\n"
                                 f"unparametrized dtype: {original_dtype}\n"
                                 f"parametrized dtype: {z.dtype}")
            if z.shape != original_shape:
                raise ValueError("Registering a parametrization may not change the shape of "
                                 "the tensor, unless `unsafe` flag is enabled.\n"
                                 f"unparametrized shape: {original_shape}\n"
                                 f"parametrized shape: {z.shape}")

    def right_inverse(self, value):
        r"""Sets the original tensor(s) so that the parametrization evaluates to ``value``,
        running each ``right_inverse`` in reverse order."""
        with _fw.no_grad():
            for module in reversed(self):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not "
                                       "implement right_inverse.")
                value = module.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, _fw.Tensor):
                    raise ValueError("`right_inverse` should return a tensor. Got "
                                     f"{type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype "
                                     f"{value.dtype} while `original` has dtype "
                                     f"{self.original.dtype}")
                _maybe_set(self.original, value)
            else:
                if not isinstance(value, collections.abc.Sequence):
                    raise ValueError("'right_inverse' must return a sequence of tensors. Got "
                                     f"{type(value).__name__}.")
                if len(value) != self.ntensors:
                    raise ValueError("'right_inverse' must return a sequence of tensors of "
                                     f"length {self.ntensors}. Got a sequence of length "
                                     f"{len(value)}.")
                for i, tensor in enumerate(value):
                    original_i = getattr(self, f"original{i}")
                    if not isinstance(tensor, _fw.Tensor):
                        raise ValueError("'right_inverse' must return a sequence of tensors. "
                                         f"Got element {i} of type {type(tensor).__name__}.")
                    if original_i.dtype != tensor.dtype:
                        raise ValueError(f"Tensor {i} returned by `right_inverse` has dtype "
                                         f"{tensor.dtype} while `original{i}` has dtype "
                                         f"{original_i.dtype}")
                    _maybe_set(original_i, tensor)

    def forward(self):
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x


def _inject_new_class(module):
    """Gives ``module`` its own subclass, so properties can be added per instance."""
    cls = module.__class__

    def default_deepcopy(self, memo):
        obj = memo.get(id(self), None)
        if obj is not None:
            return obj
        replica = self.__new__(self.__class__)
        memo[id(self)] = replica
        replica.__dict__ = deepcopy(self.__dict__, memo)
        for slot in copyreg._slotnames(self.__class__):
            if hasattr(self, slot):
                setattr(replica, slot, deepcopy(getattr(self, slot), memo))
        return replica

    def getstate(self):
        raise RuntimeError(
            "Serialization of parametrized modules is only supported through state_dict(). "
            "See:\nhttps://pytorch.org/tutorials/beginner/saving_loading_models.html"
            "#saving-loading-a-general-checkpoint-for-inference-and-or-resuming-training")

    dct = {"__getstate__": getstate}
    if not hasattr(cls, "__deepcopy__"):
        dct["__deepcopy__"] = default_deepcopy
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), dct)


def _inject_property(module, tensor_name):
    if hasattr(module, tensor_name):
        raise AssertionError(f"Module already has an attribute named '{tensor_name}'")

    def get_cached(parametrization):
        key = (id(module), tensor_name)
        tensor = _cache.get(key)
        if tensor is None:
            tensor = parametrization()
            _cache[key] = tensor
        return tensor

    def get_parametrized(self):
        parametrization = self.parametrizations[tensor_name]
        if _cache_enabled:
            return get_cached(parametrization)
        return parametrization()

    def set_original(self, value):
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    r"""Register a parametrization to a tensor (parameter or buffer) of a module.

    Afterwards ``module.<tensor_name>`` returns ``parametrization(original)``; the original
    lives in ``module.parametrizations[tensor_name].original``. Registering on an already
    parametrized tensor chains the new parametrization after the existing ones. ``unsafe``
    skips the dtype/shape consistency checks.
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            y = getattr(module, tensor_name)
            x = parametrization(y)
            if not isinstance(x, _fw.Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got "
                                 f"{type(x).__name__}.")
            if x.dtype != y.dtype:
                raise ValueError(
                    "Registering a parametrization may not change the dtype of the tensor, "
                    "unless the `unsafe` flag is enabled.\n"
                    f"module.{tensor_name}.dtype: {y.dtype}\n"
                    f"parametrization(module.{tensor_name}).dtype: {x.dtype}")
            if x.shape != y.shape:
                raise ValueError(
                    "Registering a parametrization may not change the shape of the tensor, "
                    "unless the `unsafe` flag is enabled.\n"
                    f"module.{tensor_name}.shape: {y.shape}\n"
                    f"parametrization(module.{tensor_name}).shape: {x.shape}")
            if hasattr(parametrization, "right_inverse"):
                try:
                    z = parametrization.right_inverse(x)
                except NotImplementedError:
                    pass
                else:
                    if not isinstance(z, _fw.Tensor):
                        raise ValueError("parametrization.right_inverse must return a tensor. "
                                         f"Got: {type(z).__name__}")
                    if z.dtype != y.dtype:
                        raise ValueError(
                            "The tensor returned by parametrization.right_inverse must have "
                            f"the same dtype as module.{tensor_name}, unless the `unsafe` "
                            f"flag is enabled.\nmodule.{tensor_name}.dtype: {y.dtype}\n"
                            f"returned dtype: {z.dtype}")
                    if z.shape != y.shape:
                        raise ValueError(
                            "The tensor returned by parametrization.right_inverse must have "
                            f"the same shape as module.{tensor_name}, unless the `unsafe` "
                            f"flag is enabled.\nmodule.{tensor_name}.shape: {y.shape}\n"
                            f"returned shape: {z.shape}")
        module.parametrizations[tensor_name].append(parametrization)
        module.parametrizations[tensor_name].unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        plist = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = plist
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                         f"parametrized element with name '{tensor_name}'")
    return module


def is_parametrized(module, tensor_name=None):
    r"""Whether ``module`` has a parametrization (on ``tensor_name``, if given)."""
    parametrizations = getattr(module, "parametrizations", None)
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    r"""Remove the parametrizations on ``tensor_name``; with ``leave_parametrized`` the
    tensor keeps its current parametrized value, otherwise it goes back to the original."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with _fw.no_grad():
                t = getattr(module, tensor_name)
                _maybe_set(original, t)
    elif leave_parametrized:
        t = getattr(module, tensor_name)
        original = Parameter(t) if t.requires_grad else t
    else:
        raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor "
                         "that is parametrized in terms of a sequence of tensors.")
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module):
    r"""The module's class before parametrizations were registered on it."""
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)


def transfer_parametrizations_and_params(from_module, to_module, tensor_name=None):
    r"""Copy the parametrizations (and their originals) of ``from_module`` onto
    ``to_module``, for all parametrized tensors or just ``tensor_name``."""
    if is_parametrized(from_module):
        names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
        for name in names:
            if not hasattr(to_module, name):
                setattr(to_module, name, Parameter(getattr(from_module, name)))
            for fn in from_module.parametrizations[name]:
                register_parametrization(to_module, name, fn)
            src = from_module.parametrizations[name]
            dst = to_module.parametrizations[name]
            if hasattr(src, "original"):
                dst.original = src.original
            else:
                i = 0
                while hasattr(src, f"original{i}"):
                    setattr(dst, f"original{i}", getattr(src, f"original{i}"))
                    i += 1
    return to_module
