"""Eager-mode post-training quantization: ``quantize_dynamic`` swaps float layers for
dynamically quantized ones; ``prepare`` attaches observers, and after calibration
``convert`` swaps observed layers (between QuantStub and DeQuantStub) for quantized ones."""
import copy

from framework import nn
from .. import qint8
from .qconfig import default_dynamic_qconfig, per_channel_dynamic_qconfig  # noqa: F401

__all__ = ["quantize_dynamic", "get_default_dynamic_quant_module_mappings", "prepare",
           "convert", "quantize", "get_default_static_quant_module_mappings"]


def get_default_dynamic_quant_module_mappings():
    """Float module class -> dynamically quantized module class."""
    from ..nn.quantized import dynamic as nnqd
    return {nn.Linear: nnqd.Linear, nn.LSTM: nnqd.LSTM}


def get_default_static_quant_module_mappings():
    """Float module class -> statically quantized module class."""
    from ..nn import quantized as nnq
    from .stubs import DeQuantStub, QuantStub
    return {QuantStub: nnq.Quantize, DeQuantStub: nnq.DeQuantize, nn.Linear: nnq.Linear,
            nn.Conv2d: nnq.Conv2d, nn.ReLU: nnq.ReLU}


def _observe_output(module, inputs, output):
    return module.activation_post_process(output)


def prepare(model, inplace=False, allow_list=None, observer_non_leaf_module_list=None,
            prepare_custom_config_dict=None):
    """Prepares a model for static quantization calibration: propagates ``qconfig`` from
    each module to its children and attaches an ``activation_post_process`` observer to
    the output of each quantizable layer (QuantStub, Linear, Conv2d) that has one. Run
    representative data through the result, then ``convert`` it."""
    from .stubs import QuantStub
    if not inplace:
        model = copy.deepcopy(model)
    _propagate_qconfig(model, {})
    observed = (QuantStub, nn.Linear, nn.Conv2d) if allow_list is None else tuple(allow_list)
    found = False
    for m in model.modules():
        if type(m) in observed and getattr(m, "qconfig", None) is not None:
            m.activation_post_process = m.qconfig.activation()
            m.register_forward_hook(_observe_output)
            found = True
    if not found:
        import warnings
        warnings.warn("None of the submodule got qconfig applied. Make sure you passed "
                      "correct configuration through `qconfig_dict` or by assigning the "
                      "`.qconfig` attribute directly on submodules", stacklevel=2)
    return model


def convert(module, mapping=None, inplace=False, remove_qconfig=True,
            is_reference=False, convert_custom_config_dict=None,
            use_precomputed_fake_quant=False):
    """Swaps each observed float layer that has a ``qconfig`` for its quantized
    counterpart (``QuantStub`` -> ``Quantize``, ``nn.Linear`` -> quantized ``Linear``,
    ...), using the parameters its observers recorded."""
    if is_reference:
        raise NotImplementedError("convert(is_reference=True) is not supported")
    if mapping is None:
        mapping = get_default_static_quant_module_mappings()
    if not inplace:
        module = copy.deepcopy(module)
    if type(module) in mapping and getattr(module, "qconfig", None) is not None:
        module = mapping[type(module)].from_float(module)
    else:
        _swap(module, mapping)
    if remove_qconfig:
        _remove_qconfig(module)
    return module


def quantize(model, run_fn, run_args, mapping=None, inplace=False):
    """Static quantization in one call: ``prepare``, ``run_fn(model, *run_args)`` to
    calibrate, then ``convert``."""
    if not inplace:
        model = copy.deepcopy(model)
    model.eval()
    prepare(model, inplace=True)
    run_fn(model, *run_args)
    return convert(model, mapping, inplace=True)


def _propagate_qconfig(module, qconfig_dict, parent_qconfig=None, prefix=""):
    """Sets ``module.qconfig`` from ``qconfig_dict`` (keys: module types or qualified
    names; a name's entry wins over its type's), inheriting the parent's."""
    qconfig = qconfig_dict.get(type(module), parent_qconfig)
    qconfig = qconfig_dict.get(prefix, qconfig)
    qconfig = getattr(module, "qconfig", qconfig)
    module.qconfig = qconfig
    for name, child in module.named_children():
        _propagate_qconfig(child, qconfig_dict, qconfig, prefix + ("." if prefix else "") + name)


def _swap(module, mapping):
    for name, child in module.named_children():
        if type(child) in mapping and getattr(child, "qconfig", None) is not None:
            setattr(module, name, mapping[type(child)].from_float(child))
        else:
            _swap(child, mapping)
    return module


def _remove_qconfig(module):
    for m in module.modules():
        if "qconfig" in m.__dict__:
            del m.__dict__["qconfig"]


def quantize_dynamic(model, qconfig_spec=None, dtype=qint8, mapping=None, inplace=False):
    """Converts a float model to a dynamically quantized one: its ``nn.Linear`` layers (or
    those ``qconfig_spec`` names: a set of types/names, or a dict to QConfigs) become
    ``framework.ao.nn.quantized.dynamic.Linear`` with qint8 weights."""
    if qconfig_spec is None:
        if dtype is not qint8:
            raise ValueError(f"Don't know how to quantize with default settings for {dtype}. "
                             "Provide full qconfig please")
        qconfig_spec = {nn.Linear: default_dynamic_qconfig}
    elif isinstance(qconfig_spec, set):
        if dtype is not qint8:
            raise RuntimeError(f"Unknown dtype specified for quantize_dynamic: {dtype}")
        qconfig_spec = dict.fromkeys(qconfig_spec, default_dynamic_qconfig)
    if mapping is None:
        mapping = get_default_dynamic_quant_module_mappings()
    if not inplace:
        model = copy.deepcopy(model)
    model.eval()
    _propagate_qconfig(model, qconfig_spec)
    if type(model) in mapping and model.qconfig is not None:
        model = mapping[type(model)].from_float(model)
    else:
        _swap(model, mapping)
    _remove_qconfig(model)
    return model
