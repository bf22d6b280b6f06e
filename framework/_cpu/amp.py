"""CPU launchers: GradScaler's kernels (native/amp.cpp).

``non_finite_check_and_unscale`` walks every tensor of its list in one threaded native
call; the tensors are contiguous, on the cpu, and share one float dtype. ``found_inf``,
``inv_scale`` and ``scale`` are 1-element float32 tensors, ``growth_tracker`` int32."""
from .. import _C


def non_finite_check_and_unscale(grads, found_inf, inv_scale):
    """Multiplies every element of ``grads`` by ``inv_scale`` in place and sets ``found_inf``
    to 1.0 if any element is inf or NaN (it is left as it is otherwise)."""
    if not grads:
        return
    _C.amp_unscale(grads[0].dtype.code, [g.data_ptr() for g in grads],
                   [g.numel() for g in grads], found_inf.data_ptr(), inv_scale.data_ptr())


def update_scale(scale, growth_tracker, found_inf, growth_factor, backoff_factor,
                 growth_interval):
    """PyTorch's scale update in place: after an inf/NaN, scale *= backoff_factor and the
    tracker restarts at 0; otherwise the tracker counts one more good step and, on reaching
    ``growth_interval``, restarts while scale *= growth_factor (kept only if finite)."""
    _C.amp_update_scale(scale.data_ptr(), growth_tracker.data_ptr(), found_inf.data_ptr(),
                        float(growth_factor), float(backoff_factor), int(growth_interval))
