"""CPU launchers: fused multi-tensor optimizer steps (native/optim.cpp).

Each launcher updates every tensor of its lists in place in one native call. The tensors
are contiguous, on one device, and share the params' float dtype (state included).

``grad_scale`` and ``found_inf`` (GradScaler, PyTorch's fused contract) are None or
1-element float32 cpu tensors: each gradient is divided by ``grad_scale`` and written back
unscaled; when ``found_inf`` is 1 nothing is touched."""
from .. import _C


def _ptrs(ts):
    return [t.data_ptr() for t in ts]


def _addr(t):
    """A float32 scalar tensor's address, 0 for None."""
    if t is None:
        return 0
    if t.numel() != 1 or t.dtype.name != "float32" or t.device.type != "cpu":
        raise RuntimeError("fused optimizer step: grad_scale and found_inf must be 1-element "
                           f"float32 cpu tensors, got {t.dtype} of shape {tuple(t.shape)} on "
                           f"{t.device}")
    return t.data_ptr()


def fused_adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, step_sizes, bc2_sqrts,
               lr, beta1, beta2, eps, weight_decay, decoupled, amsgrad, maximize,
               grad_scale=None, found_inf=None, steps=None):
    """Adam/AdamW over the lists; ``step_sizes`` (lr / (1 - beta1^t)) and ``bc2_sqrts``
    (sqrt(1 - beta2^t)) are Python floats, one per tensor, or come from ``steps`` (the step
    counters, already advanced, as the cuda launcher takes them). ``max_exp_avg_sqs`` is
    only read with amsgrad."""
    if not params:
        return
    if steps is not None:
        counts = [s.item() for s in steps]
        step_sizes = [lr / (1 - beta1 ** t) for t in counts]
        bc2_sqrts = [(1 - beta2 ** t) ** 0.5 for t in counts]
    _C.fused_adam(params[0].dtype.code, _ptrs(params), _ptrs(grads), _ptrs(exp_avgs),
                  _ptrs(exp_avg_sqs), _ptrs(max_exp_avg_sqs) if amsgrad else [],
                  [p.numel() for p in params], list(step_sizes), list(bc2_sqrts), lr, beta1,
                  beta2, eps, weight_decay, decoupled, amsgrad, maximize, _addr(grad_scale),
                  _addr(found_inf))


def fused_sgd(params, grads, bufs, lr, momentum, dampening, weight_decay, nesterov, maximize,
              first, grad_scale=None, found_inf=None):
    """SGD over the lists; with momentum, ``bufs`` are the momentum buffers (set to the
    gradient when ``first``)."""
    if not params:
        return
    _C.fused_sgd(params[0].dtype.code, _ptrs(params), _ptrs(grads),
                 _ptrs(bufs) if momentum != 0 else [], [p.numel() for p in params], lr,
                 momentum, dampening, weight_decay, nesterov, maximize, first,
                 _addr(grad_scale), _addr(found_inf))


def fused_rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffers, lr, alpha, eps,
                  weight_decay, momentum, centered, maximize, grad_scale=None,
                  found_inf=None):
    """RMSprop over the lists; ``grad_avgs`` are only read when centered,
    ``momentum_buffers`` when momentum > 0."""
    if not params:
        return
    _C.fused_rmsprop(params[0].dtype.code, _ptrs(params), _ptrs(grads), _ptrs(square_avgs),
                     _ptrs(grad_avgs) if centered else [],
                     _ptrs(momentum_buffers) if momentum > 0 else [],
                     [p.numel() for p in params], lr, alpha, eps, weight_decay, momentum,
                     centered, maximize, _addr(grad_scale), _addr(found_inf))


def fused_adagrad(params, grads, state_sums, clrs, eps, weight_decay, maximize,
                  grad_scale=None, found_inf=None, steps=None, lr=None, lr_decay=None):
    """Adagrad over the lists; ``clrs`` (lr / (1 + (step - 1) * lr_decay)) are Python
    floats, one per tensor, or come from ``steps`` (the step counters, already advanced),
    ``lr`` and ``lr_decay``, as the cuda launcher takes them."""
    if not params:
        return
    if steps is not None:
        clrs = [lr / (1 + (s.item() - 1) * lr_decay) for s in steps]
    _C.fused_adagrad(params[0].dtype.code, _ptrs(params), _ptrs(grads), _ptrs(state_sums),
                     [p.numel() for p in params], list(clrs), eps, weight_decay, maximize,
                     _addr(grad_scale), _addr(found_inf))


def advance_steps(steps, found_inf=None):
    """step += 1 for each scalar counter of ``steps`` (+= 1 - found_inf with ``found_inf``,
    so a step skipped for inf/NaN gradients does not count)."""
    for s in steps:
        s += 1
    if found_inf is not None:
        inf = found_inf.reshape(())
        for s in steps:
            s.sub_(inf.to(device=s.device, dtype=s.dtype))
