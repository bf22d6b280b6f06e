"""``fuse_modules``: fold eval-mode BatchNorm into the layer before it and pair a layer
with the ReLU after it, before post-training quantization (PyTorch's eager-mode fuser)."""
import copy

from ... import nn
from ...nn.utils.fusion import fuse_conv_bn_eval, fuse_linear_bn_eval
from ..nn import intrinsic as nni

__all__ = ["fuse_modules", "fuse_known_modules", "get_fuser_method"]

_CONV_RELU = {nn.Conv1d: nni.ConvReLU1d, nn.Conv2d: nni.ConvReLU2d, nn.Conv3d: nni.ConvReLU3d}
_BN_RELU = {nn.BatchNorm2d: nni.BNReLU2d, nn.BatchNorm3d: nni.BNReLU3d}


def _fuse_eval(*mods):
    first = mods[0]
    if any(m.training for m in mods):
        # training-mode fusion builds QAT modules (ConvBn2d, ...), which are not here
        raise NotImplementedError(
            "framework.ao.quantization.fuse_modules: fusing modules in training mode "
            "(for quantization-aware training) is not supported; call .eval() first")
    types = tuple(type(m) for m in mods)
    if len(mods) >= 2 and isinstance(mods[1], nn.modules.batchnorm._BatchNorm):
        if type(first) in _CONV_RELU:
            first = fuse_conv_bn_eval(first, mods[1])
        elif type(first) is nn.Linear:
            first = fuse_linear_bn_eval(first, mods[1])
        else:
            first = None
        mods = (first,) + mods[2:]
    if first is not None and len(mods) == 1:
        return first
    if first is not None and len(mods) == 2 and type(mods[1]) is nn.ReLU:
        wrap = (_CONV_RELU.get(type(first)) or _BN_RELU.get(type(first))
                or (nni.LinearReLU if type(first) is nn.Linear else None))
        if wrap is not None:
            return wrap(first, mods[1])
    raise NotImplementedError(f"Cannot fuse modules: {types}")


def get_fuser_method(op_list, additional_fuser_method_mapping=None):
    """The function that fuses modules of the types in ``op_list``."""
    return _fuse_eval


def fuse_known_modules(mod_list, is_qat=False, additional_fuser_method_mapping=None):
    """The fused module in place of the first of ``mod_list`` and ``nn.Identity`` for the
    rest."""
    return [_fuse_eval(*mod_list)] + [nn.Identity() for _ in mod_list[1:]]


def _get(model, name):
    for part in name.split("."):
        model = getattr(model, part)
    return model


def _set(model, name, mod):
    *parents, last = name.split(".")
    for part in parents:
        model = getattr(model, part)
    setattr(model, last, mod)


def fuse_modules(model, modules_to_fuse, inplace=False, fuser_func=fuse_known_modules,
                 fuse_custom_config_dict=None):
    """Fuses each list of submodule names in ``modules_to_fuse`` (conv/linear + bn, + relu,
    bn + relu), which must be in eval mode; returns the model (a copy unless ``inplace``).
    """
    if not inplace:
        model = copy.deepcopy(model)
    groups = modules_to_fuse
    if all(isinstance(n, str) for n in groups):
        groups = [groups]
    for names in groups:
        fused = fuser_func([_get(model, n) for n in names])
        for name, mod in zip(names, fused):
            _set(model, name, mod)
    return model
