"""``framework.library``: PyTorch's ``torch.library`` Python custom-op API (torch 2.13).

The way a user turns a function (typically one that launches a Triton kernel on framework
tensors) into an op::

    @framework.library.custom_op("mylib::scaled_add", mutates_args=())
    def scaled_add(x: Tensor, y: Tensor, alpha: float) -> Tensor:
        out = framework.empty_like(x)
        scaled_add_kernel[grid](x, y, out, x.numel(), alpha, BLOCK=1024)
        return out

    scaled_add.register_autograd(backward, setup_context=setup_context)
    framework.ops.mylib.scaled_add(x, y, 0.5)        # the same op

What it does, as PyTorch does:

* the schema is inferred from the type hints (``infer_schema``, PyTorch's rules and error
  texts) or given as ``schema=``; calls are checked against it (argument count, names,
  types, defaults) with PyTorch's messages;
* a call goes to the kernel registered for the device type of its tensor arguments
  (``register_kernel``), else to the default one (the decorated function); on ``meta``
  tensors to the fake impl (``register_fake``);
* arguments named in ``mutates_args`` have their version counter bumped (so a tensor saved
  for backward and then changed by the op is caught); outputs may not alias inputs;
* with grad mode on and an input that requires grad, one autograd node
  (``GeneratedBackwardFor_<ns>_<name>_defaultBackward``, an ``autograd.Function``) is
  recorded: ``setup_context(ctx, inputs, output)`` runs after the forward and
  ``backward(ctx, *grads)`` in the backward pass; without ``register_autograd`` the
  backward raises PyTorch's "no autograd formula was registered" error.

Differences from PyTorch: there is no dispatcher in C++, no torch.compile/export, so the
fake impl is used only for ``meta`` tensors, ``register_torch_dispatch`` /
``register_vmap`` raise NotImplementedError, tags are accepted and
ignored except for the schema (``Tag`` is not modelled), and ``triton_op`` is
``custom_op`` (its kernels run eagerly; ``wrap_triton(k)`` returns ``k``).
"""
# The code lives in: _schema (infer_schema, schema parsing, argument binding/conversion),
# _registry (OPDEFS, OpOverload, OpOverloadPacket, framework.ops), _custom_op (custom_op,
# CustomOpDef, the generated autograd Function), _api (register_*, get_kernel, get_ctx,
# opcheck, triton_op, wrap_triton, and the older Library / define / impl).
from ._schema import SUPPORTED_PARAM_TYPES, SUPPORTED_RETURN_TYPES, infer_schema  # noqa: F401
from ._registry import OPDEFS, OpOverload, OpOverloadPacket, ops  # noqa: F401
from ._custom_op import CustomOpDef, custom_op  # noqa: F401
from ._kernel import DispatchKey  # noqa: F401
from ._api import (  # noqa: F401
    Library, define, fallthrough_kernel, get_ctx, get_kernel, impl, impl_abstract, opcheck,
    register_autocast, register_autograd, register_fake, register_kernel,
    register_torch_dispatch, register_vmap, triton_op, wrap_triton,
)

__all__ = [
    "Library", "impl", "define", "fallthrough_kernel", "impl_abstract", "register_fake",
    "register_torch_dispatch", "register_vmap", "register_autocast", "get_ctx", "get_kernel",
    "custom_op", "triton_op",
    "wrap_triton", "infer_schema", "register_autograd", "register_kernel", "CustomOpDef",
    "opcheck",
]
