"""Linear with the bias add and an activation fused into the GEMM's epilogue: the op
``framework._fused_linear`` and ``linear_act``, the entry point the framework's own modules
use (TransformerEncoderLayer's feed-forward, MultiheadAttention's in-projection).
``nn.functional.linear`` keeps PyTorch's meaning and is not changed by any of this.

The kernels (framework/kernels/fused_linear.py, native/fused_linear.cpp) compute
``out = act(input @ weight^T + bias)`` for a 2-d input (leading dims are flattened here)
and, when asked, store the pre-activation too: the backward of gelu and silu reads it,
relu's reads the output and none's reads neither. The op returns (output, saved), saved
being exactly what the derivative reads, so a node keeps no tensor it does not need:

- ``gelu``, ``gelu_tanh``, ``silu``: the pre-activation ``input @ weight^T + bias``;
- ``relu``: the output itself (the same tensor);
- ``none``: None.

The derivatives are formulas over framework ops (so double backward works): with
``grad_pre = grad * act'(pre)``, input: ``grad_pre @ weight``, weight:
``grad_pre^T @ input``, bias: ``grad_pre`` summed over rows. grad_pre is computed once per
backward call (``_grad_pre``) although three formulas read it. When no gradient will be
taken (grad mode off, or no operand requires grad), ``linear_act`` stores no
pre-activation at all.
"""
import threading
import weakref

from .._tensor import Tensor
from . import alloc, views
from .linalg import _cpp
from .pointwise import require_tensor

ACTIVATIONS = ("none", "relu", "gelu", "gelu_tanh", "silu")
_NEEDS_PRE = ("gelu", "gelu_tanh", "silu")
_FLOATS = ("float16", "bfloat16", "float32", "float64")
_OP = "_fused_linear"


def _fw():
    import framework
    return framework


def _check(input, weight, bias, activation):
    require_tensor(_OP, input, "input", 1)
    require_tensor(_OP, weight, "weight", 2)
    if bias is not None:
        require_tensor(_OP, bias, "bias", 3)
    if activation not in ACTIVATIONS:
        raise ValueError(f"{_OP}(): activation must be one of {', '.join(ACTIVATIONS)}, "
                         f"got {activation!r}")
    if input.dim() < 1 or weight.dim() != 2:
        raise RuntimeError(f"{_OP}(): expected an input of at least 1 dimension and a 2-D "
                           f"weight, got {input.dim()}-D and {weight.dim()}-D")
    k = input._shape[-1]
    n = weight._shape[0]
    if weight._shape[1] != k:
        m = alloc.numel(input._shape[:-1])
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({m}x{k} and "
                           f"{weight._shape[1]}x{n})")
    if bias is not None and tuple(bias._shape) != (n,):
        raise RuntimeError(f"{_OP}(): expected a bias of shape [{n}], got {list(bias._shape)}")
    for t in (weight, bias):
        if t is not None and t.dtype is not input.dtype:
            raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                               f"{_cpp(input.dtype)} != {_cpp(t.dtype)}")
    if input.dtype.name not in _FLOATS:
        raise NotImplementedError(f"\"{_OP}\" not implemented for "
                                  f"'{input.dtype.scalar_name}'")
    devices = {t._storage.device for t in (input, weight, bias) if t is not None}
    if len(devices) > 1:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at "
                           f"least two devices, {', '.join(sorted(str(d) for d in devices))}!")


def fused_linear(input, weight, bias=None, activation="none"):
    """(output, saved): ``output = activation(input @ weight.T + bias)``, as
    ``activation(nn.functional.linear(input, weight, bias))``, with the bias and the
    activation applied to the GEMM's accumulator before the one rounding to the output.

    input ``(*, in_features)``, weight ``(out_features, in_features)``, bias
    ``(out_features,)`` or None, all of one floating dtype; output ``(*, out_features)``.
    ``activation``: "none", "relu", "gelu", "gelu_tanh" (gelu's tanh approximation) or
    "silu". ``saved`` is what the derivative reads (the module doc): the pre-activation for
    gelu, gelu_tanh and silu, the output itself for relu, None for none."""
    return _forward(input, weight, bias, activation, True)


def _forward(input, weight, bias, activation, save):
    """fused_linear's (output, saved); with ``save`` False (no gradient will be taken) the
    pre-activation is not stored and saved is None."""
    _check(input, weight, bias, activation)
    batch = tuple(input._shape[:-1])
    k = input._shape[-1]
    n = weight._shape[0]
    m = alloc.numel(batch)
    dtype, dev = input.dtype, input._storage.device
    x2 = input if input.dim() == 2 else views.reshape(input, m, k)
    # (M, N) buffers handed to the kernel, returned as (*, N) tensors of their own
    out2 = alloc.empty((m, n), dtype, dev)
    pre2 = alloc.empty((m, n), dtype, dev) if save and activation in _NEEDS_PRE else None
    if m and n:
        alloc.backend(dev).fused_linear.linear(out2, pre2, x2, weight, bias, activation)
    shape = batch + (n,)
    strides = alloc.contiguous_strides(shape)
    out = Tensor._make(out2._storage, shape, strides, 0, dtype)
    if not save or activation == "none":
        return out, None
    if activation == "relu":
        return out, out
    return out, Tensor._make(pre2._storage, shape, strides, 0, dtype)


# ---- the entry point of the modules -----------------------------------------------------

def _composite(input, weight, bias, activation):
    F = _fw().nn.functional
    y = F.linear(input, weight, bias)
    if activation == "relu":
        return F.relu(y)
    if activation == "gelu":
        return F.gelu(y)
    if activation == "gelu_tanh":
        return F.gelu(y, approximate="tanh")
    if activation == "silu":
        return F.silu(y)
    return y


def _fusable(input, weight, bias):
    """Whether the fused op computes what the composite would: tensors of one floating
    dtype and device with the shapes linear expects, and no autocast region (whose cast
    policy applies to nn.functional.linear, not to this op)."""
    from . import autocast
    if autocast.state.active:
        return False
    if not isinstance(input, Tensor) or not isinstance(weight, Tensor):
        return False
    if input.dim() < 1 or weight.dim() != 2 or input._shape[-1] != weight._shape[1]:
        return False
    dtype, dev = input.dtype, input._storage.device
    if dtype.name not in _FLOATS or weight.dtype is not dtype or weight._storage.device is not dev:
        return False
    if bias is None:
        return True
    return (isinstance(bias, Tensor) and bias.dtype is dtype and bias._storage.device is dev
            and tuple(bias._shape) == (weight._shape[0],))


def linear_act(input, weight, bias=None, activation="none"):
    """``activation(nn.functional.linear(input, weight, bias))`` (activation as in
    ``framework._fused_linear``) through the fused op where that gives the same result,
    otherwise through nn.functional (whose checks and errors then apply)."""
    if not _fusable(input, weight, bias):
        return _composite(input, weight, bias, activation)
    from ..autograd import grad_mode
    if grad_mode._mode.enabled and (input._requires_grad or weight._requires_grad or (
            bias is not None and bias._requires_grad)):
        return _fw()._fused_linear(input, weight, bias, activation)[0]
    return _forward(input, weight, bias, activation, False)[0]


# ---- derivatives (the formulas of the _fused_linear row) ---------------------------------

def activation_grad(grad, pre, activation):
    """``grad * act'(pre)`` over framework ops (for relu, ``pre`` may be the output)."""
    if activation == "none":
        return grad
    if activation == "relu":
        return grad * (pre > 0)
    from ..autograd import formulas
    if activation == "silu":
        return formulas.silu_backward(grad, pre)
    return formulas.gelu_backward(grad, pre, "tanh" if activation == "gelu_tanh" else "none")


_local = threading.local()


def _grad_pre(grad, input, weight, bias, saved, activation):
    """``grad * act'(pre)``, computed once per backward call of a node although its three
    formulas read it: they get the same ``grad`` and ``saved`` objects (saved is unpacked
    afresh for each call), so the value is kept while that ``saved`` lives.

    Under create_graph the pre-activation of gelu and silu is recomputed from the inputs
    with recorded ops (one GEMM): ``saved`` is an output without a derivative, so a second
    derivative taken through it would miss the path back to the inputs."""
    if activation == "none":
        return grad
    slot = getattr(_local, "slot", None)
    if slot is None:
        slot = _local.slot = [None]
    hit = slot[0]
    if hit is not None and hit[0]() is saved and hit[1]() is grad and hit[2] == activation:
        return hit[3]
    pre = saved
    if activation != "relu" and _fw().is_grad_enabled():
        pre = _fw().nn.functional.linear(input, weight, bias)
    g = activation_grad(grad, pre, activation)

    def drop(ref):
        # saved is gone (its backward call has returned): the value goes with it
        if slot[0] is not None and slot[0][0] is ref:
            slot[0] = None
    slot[0] = (weakref.ref(saved, drop), weakref.ref(grad), activation, g)
    return g


def _rows(t):
    return t if t.dim() == 2 else t.reshape(-1, t.shape[-1])


def input_grad(grad, input, weight, bias, saved, activation):
    """The gradient of input: ``grad_pre @ weight``, in input's shape."""
    g = _grad_pre(grad, input, weight, bias, saved, activation)
    return g.matmul(weight).reshape(input.shape)


def weight_grad(grad, input, weight, bias, saved, activation):
    """The gradient of weight: ``grad_pre^T @ input`` over the flattened rows."""
    g = _grad_pre(grad, input, weight, bias, saved, activation)
    return _rows(g).t().mm(_rows(input))


def bias_grad(grad, input, weight, bias, saved, activation):
    """The gradient of bias: ``grad_pre`` summed over the rows."""
    return _rows(_grad_pre(grad, input, weight, bias, saved, activation)).sum(0)
