"""Hook helpers (PyTorch's ``torch.utils.hooks``): the removable handle the
``register_*hook`` methods of modules return, the wrapper behind full backward hooks of
modules, and the marks for hooks that are not saved with a tensor."""
import warnings

from ..nn.modules._hooks import BackwardHook, RemovableHandle

__all__ = ["RemovableHandle", "unserializable_hook", "warn_if_has_hooks", "BackwardHook"]


def unserializable_hook(f):
    """Marks ``f`` as a hook that is not serialized with its tensor (no warning when the
    tensor is saved)."""
    f.__torch_unserializable__ = True
    return f


def _tensor_hooks(tensor):
    """The backward hooks registered on ``tensor`` (``Tensor.register_hook``), as a dict."""
    hooks = getattr(tensor, "_backward_hooks", None)
    if hooks is not None:
        return hooks
    if tensor.grad_fn is None:
        return tensor.__dict__.get("_pre_hooks") or {}
    th = tensor.grad_fn._tensor_hooks
    return (th or {}).get(tensor._output_nr) or {}


def warn_if_has_hooks(tensor):
    """Warns for each backward hook of ``tensor`` not marked with ``unserializable_hook``
    (hooks are not saved with the tensor)."""
    hooks = _tensor_hooks(tensor)
    for k in hooks:
        hook = hooks[k]
        if not hasattr(hook, "__torch_unserializable__"):
            warnings.warn(f"backward hook {hook!r} on tensor will not be serialized.  If this "
                          "is expected, you can decorate the function with "
                          "@torch.utils.hooks.unserializable_hook to suppress this warning",
                          stacklevel=2)
