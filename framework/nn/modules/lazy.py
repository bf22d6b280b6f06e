"""Lazy modules: layers whose input size is inferred at the first forward.

``LazyModuleMixin`` holds :class:`UninitializedParameter` s (and buffers) until the first
call: a forward pre-hook calls ``initialize_parameters(*args)``, which materializes them with
the shapes the input implies and runs the regular module's ``reset_parameters`` (the same
init distribution); the hook then removes itself and the module's class becomes the regular
one (``cls_to_become``: a ``LazyLinear`` becomes a ``Linear``). Parameters keep their
identity, so an optimizer built before the first forward holds the real ones after it.

``LazyLinear``, ``LazyConv{1,2,3}d``, ``LazyConvTranspose{1,2,3}d``,
``LazyBatchNorm{1,2,3}d`` and ``LazyInstanceNorm{1,2,3}d`` follow PyTorch.
"""
import itertools

import framework as fw

from ..parameter import UninitializedBuffer, UninitializedParameter, is_lazy
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d, _BatchNorm, _NormBase
from .conv import (Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d,
                   ConvTranspose3d)
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, _InstanceNorm
from .linear import Linear

# LazyModuleMixin stays in this module (torch.nn.modules.lazy.LazyModuleMixin), as in PyTorch
__all__ = ["LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d",
           "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d",
           "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


class LazyModuleMixin:
    r"""A mixin for modules that initialize their parameters lazily, from the shape of the
    first input. Until the first forward they hold
    :class:`~framework.nn.UninitializedParameter` s, which must not be used (only moved or
    cast: ``module.to(device, dtype)`` before the first forward applies); afterwards the
    module is the regular one. A state dict of initialized parameters loads into a lazy
    module (and initializes it); the state dict of a lazy module holds the placeholders.
    """

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters,
                                                               with_kwargs=True)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        # placeholders are saved as they are (they cannot be detached)
        for name, param in self._parameters.items():
            if param is not None:
                if not (is_lazy(param) or keep_vars):
                    param = param.detach()
                destination[prefix + name] = param
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                if not (is_lazy(buf) or keep_vars):
                    buf = buf.detach()
                destination[prefix + name] = buf

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys,
                        unexpected_keys, error_msgs):
        """Load pre-hook: materializes the placeholders whose checkpoint entry is
        initialized, with its shape, so that the regular load copies into them."""
        for name, param in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if key in state_dict and param is not None:
                input_param = state_dict[key]
                if is_lazy(param) and not is_lazy(input_param):
                    with fw.no_grad():
                        param.materialize(input_param.shape)

    def initialize_parameters(self, *args, **kwargs):
        r"""Initializes the parameters from the first input (the lazy classes define it)."""
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def has_uninitialized_params(self):
        r"""Whether the module still has uninitialized parameters or buffers."""
        for param in itertools.chain(self._parameters.values(), self._buffers.values()):
            if is_lazy(param):
                return True
        return False

    def _infer_parameters(self, module, args, kwargs=None):
        """Forward pre-hook: initializes the parameters from the input, then turns the
        module into ``cls_to_become``."""
        kwargs = kwargs if kwargs else {}
        module.initialize_parameters(*args, **kwargs)
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        delattr(module, "_initialize_hook")
        delattr(module, "_load_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with "
                           "`DataParallel`. Run a dummy forward pass to correctly initialize "
                           "the modules")


# ---- linear ---------------------------------------------------------------------------------
class LazyLinear(LazyModuleMixin, Linear):
    r"""A :class:`Linear` whose ``in_features`` is inferred from ``input.shape[-1]`` at the
    first forward, after which it becomes a :class:`Linear`.

    Args:
        out_features: size of each output sample
        bias: if ``False``, the layer has no additive bias. Default: ``True``
    """

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        # bias=False: no tensor that would be replaced at once
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            with fw.no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
        if self.in_features == 0:
            if input.shape[-1] != self.weight.shape[-1]:
                raise AssertionError(f"The in_features inferred from input: {input.shape[-1]} "
                                     f"is not equal to in_features from self.weight: "
                                     f"{self.weight.shape[-1]}")
            self.in_features = input.shape[-1]


# ---- convolutions ---------------------------------------------------------------------------
class _LazyConvXdMixin(LazyModuleMixin):
    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if not isinstance(self.weight, UninitializedParameter):
                raise AssertionError("self.weight must be an UninitializedParameter")
            with fw.no_grad():
                if self.transposed:
                    self.weight.materialize((self.in_channels, self.out_channels // self.groups,
                                             *self.kernel_size))
                else:
                    self.weight.materialize((self.out_channels, self.in_channels // self.groups,
                                             *self.kernel_size))
                if self.bias is not None:
                    if not isinstance(self.bias, UninitializedParameter):
                        raise AssertionError("self.bias must be an UninitializedParameter")
                    self.bias.materialize((self.out_channels,))
                self.reset_parameters()

    def _get_in_channels(self, input):
        num_spatial_dims = self._get_num_spatial_dims()
        num_dims_no_batch = num_spatial_dims + 1
        num_dims_batch = num_dims_no_batch + 1
        if input.dim() not in (num_dims_no_batch, num_dims_batch):
            raise RuntimeError(f"Expected {num_dims_no_batch}D (unbatched) or {num_dims_batch}D "
                               f"(batched) input to {self.__class__.__name__}, but got input of "
                               f"size: {input.shape}")
        return input.shape[1] if input.dim() == num_dims_batch else input.shape[0]

    def _get_num_spatial_dims(self):
        return self._NDIM


class _LazyConv(_LazyConvXdMixin):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                         padding_mode, device=device, dtype=dtype)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)


class _LazyConvTranspose(_LazyConvXdMixin):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                 groups=1, bias=True, dilation=1, padding_mode="zeros", device=None,
                 dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False,
                         dilation, padding_mode, device=device, dtype=dtype)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)


class LazyConv1d(_LazyConv, Conv1d):
    r"""A :class:`Conv1d` whose ``in_channels`` is inferred from ``input.size(1)`` (or
    ``size(0)`` unbatched) at the first forward, after which it becomes a :class:`Conv1d`.
    Arguments as :class:`Conv1d`, without ``in_channels``."""

    cls_to_become = Conv1d


class LazyConv2d(_LazyConv, Conv2d):
    r"""A :class:`Conv2d` whose ``in_channels`` is inferred at the first forward (see
    :class:`LazyConv1d`)."""

    cls_to_become = Conv2d


class LazyConv3d(_LazyConv, Conv3d):
    r"""A :class:`Conv3d` whose ``in_channels`` is inferred at the first forward (see
    :class:`LazyConv1d`)."""

    cls_to_become = Conv3d


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    r"""A :class:`ConvTranspose1d` whose ``in_channels`` is inferred from ``input.size(1)``
    at the first forward, after which it becomes a :class:`ConvTranspose1d`. Arguments as
    :class:`ConvTranspose1d`, without ``in_channels``."""

    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    r"""A :class:`ConvTranspose2d` whose ``in_channels`` is inferred at the first forward
    (see :class:`LazyConvTranspose1d`)."""

    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    r"""A :class:`ConvTranspose3d` whose ``in_channels`` is inferred at the first forward
    (see :class:`LazyConvTranspose1d`)."""

    cls_to_become = ConvTranspose3d


# ---- normalization --------------------------------------------------------------------------
class _LazyNormBase(LazyModuleMixin, _NormBase):
    # PyTorch's defaults, the instance norms included: affine and tracked running stats
    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None, *, bias=True):
        super().__init__(0, eps, momentum, False, False, device=device, dtype=dtype,
                         bias=False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if self.affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if self.track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = fw.tensor(0, dtype=fw.int64, device=device)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            with fw.no_grad():
                if self.affine:
                    if not isinstance(self.weight, UninitializedParameter):
                        raise AssertionError("self.weight must be an UninitializedParameter")
                    self.weight.materialize((self.num_features,))
                    if self.bias is not None:
                        if not isinstance(self.bias, UninitializedParameter):
                            raise AssertionError("self.bias must be an UninitializedParameter")
                        self.bias.materialize((self.num_features,))
                if self.track_running_stats:
                    self.running_mean.materialize((self.num_features,))
                    self.running_var.materialize((self.num_features,))
                self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, _BatchNorm):
    r"""A :class:`BatchNorm1d` whose ``num_features`` is inferred from ``input.size(1)`` at
    the first forward, after which it becomes a :class:`BatchNorm1d`. Arguments as
    :class:`BatchNorm1d`, without ``num_features``."""

    cls_to_become = BatchNorm1d
    _check_input_dim = BatchNorm1d._check_input_dim


class LazyBatchNorm2d(_LazyNormBase, _BatchNorm):
    r"""A :class:`BatchNorm2d` whose ``num_features`` is inferred at the first forward (see
    :class:`LazyBatchNorm1d`)."""

    cls_to_become = BatchNorm2d
    _check_input_dim = BatchNorm2d._check_input_dim


class LazyBatchNorm3d(_LazyNormBase, _BatchNorm):
    r"""A :class:`BatchNorm3d` whose ``num_features`` is inferred at the first forward (see
    :class:`LazyBatchNorm1d`)."""

    cls_to_become = BatchNorm3d
    _check_input_dim = BatchNorm3d._check_input_dim


class LazyInstanceNorm1d(_LazyNormBase, _InstanceNorm):
    r"""An :class:`InstanceNorm1d` whose ``num_features`` is inferred from ``input.size(1)``
    at the first forward, after which it becomes an :class:`InstanceNorm1d`. As in PyTorch,
    ``affine`` and ``track_running_stats`` default to ``True`` here."""

    cls_to_become = InstanceNorm1d
    _no_batch_dim = 2


class LazyInstanceNorm2d(_LazyNormBase, _InstanceNorm):
    r"""An :class:`InstanceNorm2d` whose ``num_features`` is inferred at the first forward
    (see :class:`LazyInstanceNorm1d`)."""

    cls_to_become = InstanceNorm2d
    _no_batch_dim = 3


class LazyInstanceNorm3d(_LazyNormBase, _InstanceNorm):
    r"""An :class:`InstanceNorm3d` whose ``num_features`` is inferred at the first forward
    (see :class:`LazyInstanceNorm1d`)."""

    cls_to_become = InstanceNorm3d
    _no_batch_dim = 4
