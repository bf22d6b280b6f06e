"""Gradient clipping (PyTorch's ``torch.nn.utils.clip_grad``)."""
import functools
import types
import warnings

import framework as _fw
from framework._ops.alloc import backend as _backend

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "get_total_norm",
           "clip_grads_with_norm_"]

# Devices on which torch takes its foreach (multi-tensor) path; foreach=True must refuse
# other device types as torch does. Here both backends have multi-tensor kernels for the
# 2-norm and the scaling (native/grad_norm.cpp, framework/kernels/grad_norm.py: one call,
# or three launches, for the whole model), taken unless foreach=False; the per-tensor loop
# serves the other norms and mixed lists.
_FOREACH_DEVICES = ("cpu", "cuda")


def _no_grad(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with _fw.no_grad():
            return fn(*args, **kwargs)
    return wrapper


def _as_list(tensors):
    return [tensors] if isinstance(tensors, _fw.Tensor) else list(tensors)


def _multi_tensor(tensors, foreach):
    """The backend's grad_norm launchers when they take ``tensors`` (contiguous, all float32
    or all float64, on one device, some element), else None."""
    if foreach is False:
        return None
    ref = tensors[0]
    dt, dev = ref.dtype, ref.device
    if dt not in (_fw.float32, _fw.float64) or not any(t.numel() for t in tensors):
        return None
    if not all(t.dtype is dt and t.device == dev and t.is_contiguous() for t in tensors):
        return None
    return _backend(dev).grad_norm


def _check_foreach(foreach, tensors):
    """torch's refusal of foreach=True for tensors on a device without the foreach path."""
    if not foreach:
        return
    for t in tensors:
        if t.device.type not in _FOREACH_DEVICES:
            raise RuntimeError(f"foreach=True was passed, but can't use the foreach API on "
                               f"{t.device.type} tensors")


@_no_grad
def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    r"""Compute the norm of an iterable of tensors, as if their norms were concatenated
    into a single vector. ``norm_type`` may be ``inf``. Returns a 0-dim tensor."""
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if len(tensors) == 0:
        return _fw.tensor(0.0)
    first_device = tensors[0].device
    _check_foreach(foreach, tensors)
    ops = _multi_tensor(tensors, foreach) if norm_type == 2.0 else None
    if ops is not None:
        total = ops.total_norm(tensors)
        _check_finite(total, norm_type, error_if_nonfinite)
        return total
    norms = [_fw.linalg.vector_norm(t, norm_type) for t in tensors]
    # Per-tensor norms may have different dtypes; stack promotes like torch's grouping does
    total = _fw.linalg.vector_norm(_fw.stack([n.to(first_device) for n in norms]), norm_type)
    _check_finite(total, norm_type, error_if_nonfinite)
    return total


def _check_finite(total, norm_type, error_if_nonfinite):
    if error_if_nonfinite and bool(_fw.logical_or(total.isnan(), total.isinf())):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the "
            "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`")


@_no_grad
def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    r"""Scale the gradients of ``parameters`` in place by
    ``min(max_norm / (total_norm + 1e-6), 1)``, given a precomputed ``total_norm``."""
    parameters = _as_list(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    max_norm = float(max_norm)
    if len(grads) == 0:
        return
    _check_foreach(foreach, grads)
    ops = _multi_tensor(grads, foreach)
    if (ops is not None and isinstance(total_norm, _fw.Tensor) and total_norm.numel() == 1
            and total_norm.dtype in (_fw.float32, _fw.float64)
            and total_norm.device == grads[0].device):
        ops.scale_(grads, max_norm, total_norm)
        return
    # Kept as a tensor (no host sync), as torch does, so the multiply stays on device
    coef = _fw.clamp(max_norm / (total_norm + 1e-6), max=1.0)
    for g in grads:
        g.mul_(coef.to(g.device))


@_no_grad
def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None):
    r"""Clip the gradient norm of an iterable of parameters in place.

    The norm is computed over the norms of the individual gradients, as if they were
    concatenated into one vector. Returns the total norm (a 0-dim tensor).
    """
    if isinstance(parameters, _fw.Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and len(parameters) == 0:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will "
                          "occur.", stacklevel=3)
    grads = [p.grad for p in parameters if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                   foreach=None):
    r"""Deprecated alias of :func:`clip_grad_norm_`."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@_no_grad
def clip_grad_value_(parameters, clip_value, foreach=None):
    r"""Clamp the gradients of an iterable of parameters in place to
    ``[-clip_value, clip_value]``."""
    clip_value = float(clip_value)
    for p in _as_list(parameters):
        if p.grad is not None:
            _check_foreach(foreach, (p.grad,))
            p.grad.clamp_(min=-clip_value, max=clip_value)
