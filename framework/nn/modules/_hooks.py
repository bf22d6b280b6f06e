"""Module hooks: removable handles, the global ``register_module_*`` hooks, the per-module
hook registration methods (a mixin of :class:`Module`), the hooked forward call, and the
identity autograd Function that carries full backward hooks.

Split out of ``module.py``, which re-exports every name defined here.
"""
import functools
import itertools
import warnings
import weakref
from collections import OrderedDict

from ..._tensor import Tensor
from ...autograd import grad_mode
from ...autograd.function import Function

__all__ = []


# ---- hook handles ---------------------------------------------------------------------------

class RemovableHandle:
    """Returned by ``register_*hook``; ``remove()`` unregisters the hook (also a context
    manager). ``extra_dict``: further dicts keyed by the same id (the hook's options)."""

    _next_id = itertools.count()

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = next(RemovableHandle._next_id)
        if extra_dict is None:
            extra_dict = []
        elif not isinstance(extra_dict, list):
            extra_dict = [extra_dict]
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extra_dict)

    def remove(self):
        for ref in (self.hooks_dict_ref,) + self.extra_dict_ref:
            d = ref()
            if d is not None and self.id in d:
                del d[self.id]

    # copies and pickles of a module keep their handles pointing at the copy's hook dicts
    # (deepcopy of a weakref is the same weakref: without these, removing the copy's hook
    # would remove the original's)
    def __getstate__(self):
        return (self.hooks_dict_ref(), self.id, tuple(ref() for ref in self.extra_dict_ref))

    def __setstate__(self, state):
        self.hooks_dict_ref = weakref.ref(state[0] if state[0] is not None else OrderedDict())
        self.id = state[1]
        n = next(RemovableHandle._next_id)
        RemovableHandle._next_id = itertools.count(max(n, self.id + 1))
        self.extra_dict_ref = tuple(weakref.ref(d) for d in (state[2] if len(state) > 2
                                                               else ()) if d is not None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class _WrappedHook:
    """A hook that is called with its module as first argument (held weakly)."""

    def __init__(self, hook, module=None):
        self.hook = hook
        functools.update_wrapper(self, hook)
        self.with_module = module is not None
        if self.with_module:
            self.module = weakref.ref(module)

    def __call__(self, *args, **kwargs):
        if self.with_module:
            module = self.module()
            if module is None:
                raise RuntimeError("You are trying to call the hook of a dead Module!")
            return self.hook(module, *args, **kwargs)
        return self.hook(*args, **kwargs)

    def __getstate__(self):
        state = {"hook": self.hook, "with_module": self.with_module}
        if self.with_module:
            state["module"] = self.module()
        return state

    def __setstate__(self, state):
        self.hook = state["hook"]
        self.with_module = state["with_module"]
        if self.with_module:
            if state["module"] is None:
                raise RuntimeError("You are trying to revive the hook of a dead Module!")
            self.module = weakref.ref(state["module"])


# ---- global hooks (torch.nn.modules.module.register_module_*) -------------------------------

_global_buffer_registration_hooks = OrderedDict()
_global_module_registration_hooks = OrderedDict()
_global_parameter_registration_hooks = OrderedDict()
_global_backward_pre_hooks = OrderedDict()
_global_backward_hooks = OrderedDict()
_global_is_full_backward_hook = None
_global_forward_pre_hooks = OrderedDict()
_global_forward_hooks = OrderedDict()
_global_forward_hooks_always_called = OrderedDict()
_global_forward_hooks_with_kwargs = OrderedDict()


def _add(hooks, hook, extra=None):
    handle = RemovableHandle(hooks, extra_dict=extra)
    hooks[handle.id] = hook
    return handle


def register_module_buffer_registration_hook(hook):
    """``hook(module, name, buffer)`` runs for every ``register_buffer``; it may return a
    replacement buffer."""
    return _add(_global_buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook):
    """``hook(module, name, submodule)`` runs for every submodule registration."""
    return _add(_global_module_registration_hooks, hook)


def register_module_parameter_registration_hook(hook):
    """``hook(module, name, param)`` runs for every ``register_parameter``."""
    return _add(_global_parameter_registration_hooks, hook)


def register_module_forward_pre_hook(hook):
    """A forward pre-hook common to all modules: ``hook(module, args)``."""
    return _add(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    """A forward hook common to all modules: ``hook(module, args, output)``."""
    handle = _add(_global_forward_hooks, hook,
                  [_global_forward_hooks_with_kwargs, _global_forward_hooks_always_called])
    if with_kwargs:
        _global_forward_hooks_with_kwargs[handle.id] = True
    if always_call:
        _global_forward_hooks_always_called[handle.id] = True
    return handle


def register_module_backward_hook(hook):
    """Deprecated non-full backward hook common to all modules."""
    global _global_is_full_backward_hook
    if _global_is_full_backward_hook is True:
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks as "
                           "a global Module hook. Please use only one of them.")
    _global_is_full_backward_hook = False
    return _add(_global_backward_hooks, hook)


def register_module_full_backward_pre_hook(hook):
    """A backward pre-hook common to all modules: ``hook(module, grad_output)``."""
    return _add(_global_backward_pre_hooks, hook)


def register_module_full_backward_hook(hook):
    """A backward hook common to all modules: ``hook(module, grad_input, grad_output)``."""
    global _global_is_full_backward_hook
    if _global_is_full_backward_hook is False:
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks as "
                           "a global Module hook. Please use only one of them.")
    _global_is_full_backward_hook = True
    return _add(_global_backward_hooks, hook)


# ---- full backward hooks: an identity autograd Function around inputs and outputs ------------

class BackwardHookFunction(Function):
    """Identity whose backward node marks where a module's input/output gradients pass."""

    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[a for a in args if not a.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *grads):
        return grads


class BackwardHook:
    """Wires a module's full backward (pre-)hooks to the gradients of its tensor inputs and
    outputs: the output node's pre-hook captures grad_output, the input node's hook sees
    grad_input and calls the user hooks with both."""

    def __init__(self, module, user_hooks, user_pre_hooks):
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.module = module
        self.grad_outputs = None
        self.n_outputs = -1
        self.output_tensors_index = None
        self.n_inputs = -1
        self.input_tensors_index = None

    @staticmethod
    def _pack_with_none(indices, values, size):
        res = [None] * size
        for idx, val in zip(indices, values):
            res[idx] = val
        return tuple(res)

    @staticmethod
    def _unpack_none(indices, values):
        return tuple(values[idx] for idx in indices)

    def _apply_on_tensors(self, fn, args):
        idx = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensors = [args[i] for i in idx]
        if not (any(t.requires_grad for t in tensors) and grad_mode.is_grad_enabled()):
            return args, None
        new = BackwardHookFunction.apply(*tensors)
        node = next(t.grad_fn for t in new if t.grad_fn is not None)
        fn(node)
        out = list(args)
        for i, t in zip(idx, new):
            out[i] = t
        return (tuple(out) if type(args) is tuple else type(args)(*out)), idx

    def setup_input_hook(self, args):
        def fn(node):
            def hook(grad_input, _):
                if self.grad_outputs is None:
                    # the gradient reached the inputs without passing through the outputs
                    return None
                # as PyTorch's identity node, an input that does not require grad still
                # gets the (zero) gradient its materialized output grad passed through
                grad_input = [g if g is not None else _zeros_like_meta(meta)
                              for g, meta in zip(grad_input, self._input_meta)]
                res = self._pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
                for user_hook in self.user_hooks:
                    out = user_hook(self.module, res, self.grad_outputs)
                    if out is None:
                        continue
                    if len(out) != len(res):
                        raise RuntimeError("Backward hook returned an invalid number of "
                                           f"grad_input, got {len(out)}, but expected "
                                           f"{len(res)}")
                    res = out
                self.grad_outputs = None
                return self._unpack_none(self.input_tensors_index, res)
            node.register_hook(hook)

        self._input_meta = [(a.shape, a.dtype, a.device) for a in args
                            if isinstance(a, Tensor)]
        res, idx = self._apply_on_tensors(fn, args)
        self.n_inputs = len(args)
        self.input_tensors_index = idx
        return res

    def setup_output_hook(self, args):
        def fn(node):
            def hook(grad_output):
                self.grad_outputs = self._pack_with_none(self.output_tensors_index,
                                                         grad_output, self.n_outputs)
                for user_pre_hook in self.user_pre_hooks:
                    new = user_pre_hook(self.module, self.grad_outputs)
                    if new is None:
                        continue
                    if len(new) != len(self.grad_outputs):
                        raise RuntimeError("Backward pre hook returned an invalid number of "
                                           f"grad_output, got {len(new)}, but expected "
                                           f"{len(self.grad_outputs)}")
                    self.grad_outputs = new
                local = self.grad_outputs
                if self.input_tensors_index is None:
                    # no input requires grad: the hooks fire now, with grad_input all None
                    warnings.warn(
                        "Full backward hook is firing when gradients are computed with "
                        "respect to module outputs since no inputs require gradients. See "
                        "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                        "#torch.nn.Module.register_full_backward_hook for more details.",
                        stacklevel=5)
                    grad_inputs = (None,) * self.n_inputs
                    for user_hook in self.user_hooks:
                        r = user_hook(self.module, grad_inputs, self.grad_outputs)
                        if r is not None and not (isinstance(r, tuple)
                                                  and all(e is None for e in r)):
                            raise RuntimeError("Backward hook for Modules where no input "
                                               "requires gradient should always return None "
                                               "or None for all gradients.")
                    self.grad_outputs = None
                if local is not None:
                    return tuple(local[i] for i in self.output_tensors_index)
                return None
            node.register_prehook(hook)

        is_tuple = isinstance(args, tuple)
        if not is_tuple:
            args = (args,)
        res, idx = self._apply_on_tensors(fn, args)
        self.n_outputs = len(args)
        self.output_tensors_index = idx
        return res if is_tuple else res[0]


def _zeros_like_meta(meta):
    from ..._ops import creation
    shape, dtype, device = meta
    return creation.zeros(shape, dtype=dtype, device=device)


_HOOK_DICTS = ("_backward_pre_hooks", "_backward_hooks", "_forward_hooks",
               "_forward_hooks_with_kwargs", "_forward_hooks_always_called",
               "_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_state_dict_hooks",
               "_state_dict_pre_hooks", "_load_state_dict_pre_hooks",
               "_load_state_dict_post_hooks")


class _ModuleHooksMixin:
    """The per-module forward/backward hook registration methods of :class:`Module`."""

    # ---- forward and its hooks ---------------------------------------------------------
    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        r"""``hook(module, args)`` (or ``hook(module, args, kwargs)`` with ``with_kwargs``)
        runs before ``forward``; it may return new args (or ``(args, kwargs)``)."""
        handle = _add(self._forward_pre_hooks, hook, self._forward_pre_hooks_with_kwargs)
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False,
                              always_call=False):
        r"""``hook(module, args, output)`` (or ``hook(module, args, kwargs, output)``) runs
        after ``forward``; it may return a new output. ``always_call``: run it even when
        forward raised."""
        handle = _add(self._forward_hooks, hook,
                      [self._forward_hooks_with_kwargs, self._forward_hooks_always_called])
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_pre_hook(self, hook, prepend=False):
        r"""``hook(module, grad_output)`` runs when the gradients of the outputs are known;
        it may return a new grad_output."""
        handle = _add(self._backward_pre_hooks, hook)
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_hook(self, hook, prepend=False):
        r"""``hook(module, grad_input, grad_output)`` runs when the gradients of the module's
        tensor inputs are computed; it may return a new grad_input."""
        if self._is_full_backward_hook is False:
            raise RuntimeError("Cannot use both regular backward hooks and full backward "
                               "hooks on a single Module. Please use only one of them.")
        self._is_full_backward_hook = True
        handle = _add(self._backward_hooks, hook)
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_backward_hook(self, hook):
        r"""Deprecated: ``hook(module, grad_input, grad_output)`` on the last autograd node
        of the output; use :meth:`register_full_backward_hook`."""
        if self._is_full_backward_hook is True:
            raise RuntimeError("Cannot use both regular backward hooks and full backward "
                               "hooks on a single Module. Please use only one of them.")
        self._is_full_backward_hook = False
        return _add(self._backward_hooks, hook)

    def _get_backward_hooks(self):
        full, non_full = [], []
        if _global_is_full_backward_hook is True:
            full += _global_backward_hooks.values()
        if self._is_full_backward_hook is True:
            full += self._backward_hooks.values()
        if _global_is_full_backward_hook is False:
            non_full += _global_backward_hooks.values()
        if self._is_full_backward_hook is False:
            non_full += self._backward_hooks.values()
        return full, non_full

    def _get_backward_pre_hooks(self):
        return list(_global_backward_pre_hooks.values()) + list(
            self._backward_pre_hooks.values())


def _call_with_hooks(module, forward_call, args, kwargs):
    """Runs ``forward_call`` with the forward hooks of ``module`` and the global ones,
    and wires its backward hooks to the inputs and outputs."""
    result = None
    called_always = set()
    try:
        full_hooks, non_full_hooks, pre_hooks = [], [], []
        if module._backward_pre_hooks or _global_backward_pre_hooks:
            pre_hooks = module._get_backward_pre_hooks()
        if module._backward_hooks or _global_backward_hooks:
            full_hooks, non_full_hooks = module._get_backward_hooks()
        for hook_id, hook in itertools.chain(_global_forward_pre_hooks.items(),
                                             module._forward_pre_hooks.items()):
            if hook_id in module._forward_pre_hooks_with_kwargs:
                out = hook(module, args, kwargs)
                if out is not None:
                    if isinstance(out, tuple) and len(out) == 2:
                        args, kwargs = out
                    else:
                        raise RuntimeError("forward pre-hook must return None or a tuple "
                                           f"of (new_args, new_kwargs), but got {out}.")
            else:
                out = hook(module, args)
                if out is not None:
                    args = out if isinstance(out, tuple) else (out,)
        bw_hook = None
        if full_hooks or pre_hooks:
            bw_hook = BackwardHook(module, full_hooks, pre_hooks)
            args = bw_hook.setup_input_hook(args)
        result = forward_call(*args, **kwargs)
        for hook_id, hook in itertools.chain(_global_forward_hooks.items(),
                                             module._forward_hooks.items()):
            if (hook_id in module._forward_hooks_always_called
                    or hook_id in _global_forward_hooks_always_called):
                called_always.add(hook_id)
            if (hook_id in module._forward_hooks_with_kwargs
                    or hook_id in _global_forward_hooks_with_kwargs):
                out = hook(module, args, kwargs, result)
            else:
                out = hook(module, args, result)
            if out is not None:
                result = out
        if bw_hook is not None:
            if not isinstance(result, (Tensor, tuple)):
                warnings.warn("For backward hooks to be called, module output should be a "
                              f"Tensor or a tuple of Tensors but received {type(result)}")
            result = bw_hook.setup_output_hook(result)
        if non_full_hooks:
            var = result
            while not isinstance(var, Tensor):
                if isinstance(var, dict):
                    var = next(v for v in var.values() if isinstance(v, Tensor))
                else:
                    var = var[0]
            grad_fn = var.grad_fn
            if grad_fn is not None:
                for hook in non_full_hooks:
                    grad_fn.register_hook(_WrappedHook(hook, module))
        return result
    except Exception:
        # forward hooks registered with always_call run even when forward raised
        for hook_id, hook in _global_forward_hooks.items():
            if (hook_id in _global_forward_hooks_always_called
                    and hook_id not in called_always):
                try:
                    out = hook(module, args, result)
                    if out is not None:
                        result = out
                except Exception as e:
                    warnings.warn("global module forward hook with ``always_call=True`` "
                                  "raised an exception that was silenced as another "
                                  f"error was raised in forward: {e}")
        for hook_id, hook in module._forward_hooks.items():
            if (hook_id in module._forward_hooks_always_called
                    and hook_id not in called_always):
                try:
                    if hook_id in module._forward_hooks_with_kwargs:
                        out = hook(module, args, kwargs, result)
                    else:
                        out = hook(module, args, result)
                    if out is not None:
                        result = out
                except Exception as e:
                    warnings.warn("module forward hook with ``always_call=True`` raised an "
                                  "exception that was silenced as another error was "
                                  f"raised in forward: {e}")
        raise
