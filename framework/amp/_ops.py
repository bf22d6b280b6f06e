"""The two ops under GradScaler, with PyTorch's names, arguments and checks:
``_amp_foreach_non_finite_check_and_unscale_`` and ``_amp_update_scale_``. They call the
backend family ``amp`` (native/amp.cpp on the cpu, framework/kernels/amp.py on cuda) and
never read a value back to the host."""
from .._ops.alloc import backend
from ..autograd.grad_mode import no_grad
from .._ops.pointwise import type_name
from .._tensor import Tensor


def _check_1_element(op, t, name, dtype="float32"):
    """PyTorch's checks of a 1-element float32 (or int32) argument."""
    if not isinstance(t, Tensor):
        raise TypeError(f"{op}(): argument '{name}' must be Tensor, not {type(t).__name__}")
    if t.numel() != 1:
        raise RuntimeError(f"{name} must be a 1-element tensor.")
    if t.dtype.name != dtype:
        kind = "a float" if dtype == "float32" else "an int"
        raise RuntimeError(f"{name} must be {kind} tensor.")


def _check_device(op, t, name, device):
    if t.device != device:
        raise RuntimeError(f"{op}: expected {name} on {device} (the device of found_inf), "
                           f"but it is on {t.device}")


def _amp_foreach_non_finite_check_and_unscale_(self, found_inf, inv_scale):
    """Multiplies every tensor of ``self`` (a list of float tensors) by ``inv_scale`` in
    place and sets ``found_inf`` to 1.0 if any element was inf or NaN (else leaves it).
    ``found_inf`` and ``inv_scale`` are 1-element float32 tensors on the grads' device.
    Each dtype of the list is one multi-tensor backend call."""
    op = "_amp_foreach_non_finite_check_and_unscale_"
    _check_1_element(op, found_inf, "found_inf")
    _check_1_element(op, inv_scale, "inv_scale")
    dev = found_inf.device
    _check_device(op, inv_scale, "inv_scale", dev)
    parts = {}
    for i, g in enumerate(self):
        if not isinstance(g, Tensor):
            raise TypeError(f"{op}(): argument 'self' must be tuple of Tensors, but found "
                            f"element of type {type(g).__name__} at pos {i}")
        _check_device(op, g, f"self[{i}]", dev)
        if not g.dtype.is_floating_point:
            raise NotImplementedError(f"\"{op[:-1]}_{dev.type}\" not implemented for "
                                      f"'{type_name(g.dtype)}'")
        parts.setdefault(g.dtype, []).append(g)
    amp = backend(dev).amp
    for grads in parts.values():
        # the kernels walk contiguous memory: other views go through a dense copy
        dense = [g if g.is_contiguous() else g.contiguous() for g in grads]
        amp.non_finite_check_and_unscale(dense, found_inf, inv_scale)
        for g, d in zip(grads, dense):
            if d is not g:
                with no_grad():
                    g.copy_(d)


def _amp_update_scale_(self, growth_tracker, found_inf, scale_growth_factor,
                       scale_backoff_factor, growth_interval):
    """Updates the scale ``self`` and ``growth_tracker`` in place, as PyTorch: if
    ``found_inf`` is nonzero, self *= scale_backoff_factor and growth_tracker = 0; else
    growth_tracker += 1 and, when it reaches ``growth_interval``, self *= scale_growth_factor
    (only if the result is finite) and growth_tracker = 0. Returns ``self``."""
    op = "_amp_update_scale_"
    _check_1_element(op, growth_tracker, "growth_tracker", "int32")
    _check_1_element(op, self, "current_scale")
    _check_1_element(op, found_inf, "found_inf")
    dev = found_inf.device
    _check_device(op, self, "current_scale", dev)
    _check_device(op, growth_tracker, "growth_tracker", dev)
    backend(dev).amp.update_scale(self, growth_tracker, found_inf, scale_growth_factor,
                                  scale_backoff_factor, growth_interval)
    return self
