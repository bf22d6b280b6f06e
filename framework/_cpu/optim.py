"""CPU launchers: fused multi-tensor optimizer steps (native/optim.cpp).

Each launcher updates every tensor of its lists in place in one native call. The tensors
are contiguous, on one device, and share the params' float dtype (state included)."""
from .. import _C


def _ptrs(ts):
    return [t.data_ptr() for t in ts]


def fused_adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, step_sizes, bc2_sqrts,
               lr, beta1, beta2, eps, weight_decay, decoupled, amsgrad, maximize):
    """Adam/AdamW over the lists; ``step_sizes`` (lr / (1 - beta1^t)) and ``bc2_sqrts``
    (sqrt(1 - beta2^t)) are Python floats, one per tensor. ``max_exp_avg_sqs`` is only read
    with amsgrad."""
    if not params:
        return
    _C.fused_adam(params[0].dtype.code, _ptrs(params), _ptrs(grads), _ptrs(exp_avgs),
                  _ptrs(exp_avg_sqs), _ptrs(max_exp_avg_sqs) if amsgrad else [],
                  [p.numel() for p in params], list(step_sizes), list(bc2_sqrts), lr, beta1,
                  beta2, eps, weight_decay, decoupled, amsgrad, maximize)


def fused_sgd(params, grads, bufs, lr, momentum, dampening, weight_decay, nesterov, maximize,
              first):
    """SGD over the lists; with momentum, ``bufs`` are the momentum buffers (set to the
    gradient when ``first``)."""
    if not params:
        return
    _C.fused_sgd(params[0].dtype.code, _ptrs(params), _ptrs(grads),
                 _ptrs(bufs) if momentum != 0 else [], [p.numel() for p in params], lr,
                 momentum, dampening, weight_decay, nesterov, maximize, first)
