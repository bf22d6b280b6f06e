"""``nn.Module``: the base class of every layer (PyTorch's ``torch.nn.Module``).

A Module keeps its parameters, buffers and submodules in three ordered dicts
(``_parameters``, ``_buffers``, ``_modules``) filled by attribute assignment; everything
else (traversal, device/dtype moves, state dicts, hooks, printing) walks those dicts.

This file holds the core (registration, attribute protocol, traversal, modes, moves, the
call, printing); the hook machinery lives in ``_hooks.py`` and the state-dict machinery in
``_state_dict.py``, both mixed into :class:`Module` and re-exported here under their old
names (``torch.nn.modules.module.register_module_forward_hook`` etc.).
"""
import inspect
from collections import OrderedDict

from ..._tensor import Tensor
from ...autograd import grad_mode
from ..parameter import Buffer, Parameter
from . import _hooks
from ._hooks import (  # noqa: F401  (re-exported: PyTorch's names in this module)
    _HOOK_DICTS, BackwardHook, BackwardHookFunction, RemovableHandle, _add,
    _call_with_hooks, _global_backward_hooks, _global_backward_pre_hooks,
    _global_buffer_registration_hooks, _global_forward_hooks,
    _global_forward_hooks_always_called, _global_forward_hooks_with_kwargs,
    _global_forward_pre_hooks, _global_module_registration_hooks,
    _global_parameter_registration_hooks, _ModuleHooksMixin, _WrappedHook, _zeros_like_meta,
    register_module_backward_hook, register_module_buffer_registration_hook,
    register_module_forward_hook, register_module_forward_pre_hook,
    register_module_full_backward_hook, register_module_full_backward_pre_hook,
    register_module_module_registration_hook, register_module_parameter_registration_hook)
from ._state_dict import T_destination, _IncompatibleKeys, _StateDictMixin  # noqa: F401

__all__ = ["Module"]


def __getattr__(name):
    # _global_is_full_backward_hook is rebound by the register_module_*backward_hook
    # functions, so a copy imported here would go stale: read it live from _hooks
    if name == "_global_is_full_backward_hook":
        return _hooks._global_is_full_backward_hook
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _typename(obj):
    """The type of ``obj`` as PyTorch's ``torch.typename`` writes it."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", None)
    prefix = module + "." if module not in (None, "builtins", "__builtin__") else ""
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if name is None:
        name = type(obj).__name__
    return prefix + name


def _addindent(s_, num_spaces):
    lines = s_.split("\n")
    if len(lines) == 1:
        return s_
    first = lines.pop(0)
    return first + "\n" + "\n".join(num_spaces * " " + line for line in lines)


def _forward_unimplemented(self, *input):
    raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                              '"forward" function')


class Module(_StateDictMixin, _ModuleHooksMixin):
    r"""Base class for all neural network modules.

    Subclasses call ``super().__init__()`` first, then assign parameters, buffers and
    submodules as attributes, and define ``forward``; calling the module runs ``forward``
    with its hooks.
    """

    dump_patches = False
    T_destination = T_destination
    _version = 1
    training: bool
    call_super_init = False

    def __init__(self, *args, **kwargs):
        if self.call_super_init is False and kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword "
                            f"argument '{next(iter(kwargs))}'")
        if self.call_super_init is False and args:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument "
                            f"but {len(args) + 1} were given")
        # object.__setattr__: our __setattr__ reads these dicts
        setattr_ = super().__setattr__
        setattr_("training", True)
        setattr_("_parameters", {})
        setattr_("_buffers", {})
        setattr_("_non_persistent_buffers_set", set())
        setattr_("_is_full_backward_hook", None)
        for name in _HOOK_DICTS:
            setattr_(name, OrderedDict())
        setattr_("_modules", {})
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    forward = _forward_unimplemented

    # ---- registration ----------------------------------------------------------------------
    def register_buffer(self, name, tensor, persistent=True):
        r"""Adds a buffer (a tensor that is state but not a parameter, e.g. running_mean).
        ``persistent=False`` leaves it out of ``state_dict``."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        for hook in _global_buffer_registration_hooks.values():
            out = hook(self, name, tensor)
            if out is not None:
                tensor = out
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        r"""Adds a parameter (a :class:`Parameter` or None) under ``name``."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        if param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                             "parameters must be created explicitly. To express "
                             f"'{name}' as a function of another Tensor, compute the value in "
                             "the forward() method.")
        for hook in _global_parameter_registration_hooks.values():
            out = hook(self, name, param)
            if out is not None:
                param = out
        self._parameters[name] = param

    def add_module(self, name, module):
        r"""Adds a child module, reachable as the attribute ``name``."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        for hook in _global_module_registration_hooks.values():
            out = hook(self, name, module)
            if out is not None:
                module = out
        self._modules[name] = module

    def register_module(self, name, module):
        r"""Alias for :meth:`add_module`."""
        self.add_module(name, module)

    def get_submodule(self, target):
        r"""The submodule at the dotted path ``target`` ("" is self)."""
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target, module, strict=False):
        r"""Sets the submodule at the dotted path ``target``."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        atoms = target.split(".")
        if not isinstance(module, Module):
            raise ValueError("`module` is not an nn.Module, found " + str(type(module)))
        if len(atoms) == 1:
            parent = self
        else:
            parent = self.get_submodule(".".join(atoms[:-1]))
        if strict and not hasattr(parent, atoms[-1]):
            raise AttributeError(parent._get_name() + " has no attribute `" + atoms[-1] + "`")
        if hasattr(parent, atoms[-1]):
            mod = getattr(parent, atoms[-1])
            if not isinstance(mod, Module):
                raise AttributeError("`" + atoms[-1] + "` is not an nn.Module")
        setattr(parent, atoms[-1], module)

    def get_parameter(self, target):
        r"""The parameter at the dotted path ``target``."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target):
        r"""The buffer at the dotted path ``target``."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        buf = getattr(mod, name)
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return buf

    # ---- attribute protocol ----------------------------------------------------------------
    def __getattr__(self, name):
        # only called when normal lookup fails: parameters, buffers and submodules live in
        # their dicts, not in __dict__
        d = self.__dict__
        if "_parameters" in d and name in d["_parameters"]:
            return d["_parameters"][name]
        if "_buffers" in d and name in d["_buffers"]:
            return d["_buffers"][name]
        if "_modules" in d and name in d["_modules"]:
            return d["_modules"][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        def remove_from(*dicts_or_sets):
            for d in dicts_or_sets:
                if name in d:
                    if isinstance(d, dict):
                        del d[name]
                    else:
                        d.discard(name)

        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(self.__dict__, self._buffers, self._modules,
                        self._non_persistent_buffers_set)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
            return
        modules = self.__dict__.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            remove_from(self.__dict__, self._parameters, self._buffers,
                        self._non_persistent_buffers_set)
            for hook in _global_module_registration_hooks.values():
                out = hook(self, name, value)
                if out is not None:
                    value = out
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            for hook in _global_module_registration_hooks.values():
                out = hook(self, name, value)
                if out is not None:
                    value = out
            modules[name] = value
            return
        buffers = self.__dict__.get("_buffers")
        if isinstance(value, Buffer) or (buffers is not None and name in buffers):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                "(torch.nn.Buffer, torch.Tensor or None expected)")
            if isinstance(value, Buffer):
                persistent = value.__dict__["persistent"]
            else:
                persistent = name not in self._non_persistent_buffers_set
            register = self.register_buffer
            if getattr(register, "__func__", None) is Module.register_buffer or \
                    "persistent" in inspect.signature(register).parameters:
                register(name, value, persistent)
            else:
                # a subclass's own register_buffer(name, tensor) without ``persistent``
                register(name, value)
            return
        super().__setattr__(name, value)

    def __delattr__(self, name):
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            super().__delattr__(name)

    def __dir__(self):
        keys = (dir(self.__class__) + list(self.__dict__) + list(self._parameters)
                + list(self._modules) + list(self._buffers))
        # numbered children (Sequential's "0", "1") are not attribute names
        return sorted(k for k in keys if not k[0].isdigit())

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in _HOOK_DICTS:
            if name not in self.__dict__:
                self.__dict__[name] = OrderedDict()
        self.__dict__.setdefault("_non_persistent_buffers_set", set())
        self.__dict__.setdefault("_is_full_backward_hook", None)

    # ---- traversal ---------------------------------------------------------------------
    def _named_members(self, get_members_fn, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                   if recurse else [(prefix, self)])
        for module_prefix, module in modules:
            for k, v in get_members_fn(module):
                # tensors hash by identity, so the memo lists each shared tensor once
                if v is None or v in memo:
                    continue
                if remove_duplicate:
                    memo.add(v)
                yield module_prefix + ("." if module_prefix else "") + k, v

    def parameters(self, recurse=True):
        r"""Iterator over module parameters (each shared parameter once)."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        r"""Iterator over ``(name, parameter)``, names dotted from this module."""
        return self._named_members(lambda m: m._parameters.items(), prefix=prefix,
                                   recurse=recurse, remove_duplicate=remove_duplicate)

    def buffers(self, recurse=True):
        r"""Iterator over module buffers."""
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        r"""Iterator over ``(name, buffer)``."""
        return self._named_members(lambda m: m._buffers.items(), prefix=prefix,
                                   recurse=recurse, remove_duplicate=remove_duplicate)

    def children(self):
        r"""Iterator over immediate children modules."""
        for _, module in self.named_children():
            yield module

    def named_children(self):
        r"""Iterator over ``(name, module)`` of immediate children (each module once)."""
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def modules(self):
        r"""Iterator over all modules in the tree, self first (each module once)."""
        for _, module in self.named_modules():
            yield module

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        r"""Iterator over ``(name, module)`` of all modules in the tree, self first."""
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    # ---- modes -------------------------------------------------------------------------
    def train(self, mode=True):
        r"""Sets training mode on this module and its descendants; returns self."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        r"""Sets evaluation mode (``train(False)``); returns self."""
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        r"""Sets ``requires_grad`` of every parameter; returns self."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        r"""Resets the gradients of all parameters (to None by default)."""
        for p in self.parameters():
            g = p._grad
            if g is None:
                continue
            if set_to_none:
                p._grad = None
            else:
                if g.grad_fn is not None:
                    g.detach_()
                else:
                    g.requires_grad_(False)
                g.zero_()

    def apply(self, fn):
        r"""Calls ``fn`` on every submodule (children first) and on self; returns self."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # ---- device and dtype ----------------------------------------------------------------
    def _apply(self, fn, recurse=True):
        if recurse:
            for module in self.children():
                module._apply(fn)
        for param in self._parameters.values():
            if param is None:
                continue
            # the Parameter object stays (optimizers hold it); its data is swapped
            with grad_mode.no_grad():
                applied = fn(param)
            grad = param._grad
            param.data = applied
            if grad is not None:
                with grad_mode.no_grad():
                    grad_applied = fn(grad)
                grad.data = grad_applied
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def to(self, *args, **kwargs):
        r"""Moves and/or casts parameters and buffers: ``to(device)``, ``to(dtype)``,
        ``to(device, dtype)``, ``to(tensor)``, ``non_blocking=``. Only floating point
        tensors change dtype; ``memory_format=`` applies to 4-d and 5-d ones. Returns self."""
        from ..._ops.creation import _parse_to
        from ..._ops import alloc
        device, dtype, non_blocking, _, fmt = _parse_to(args, dict(kwargs))
        if dtype is not None:
            dtype = alloc.resolve_dtype(dtype)
            if not (dtype.is_floating_point or getattr(dtype, "is_complex", False)):
                raise TypeError("nn.Module.to only accepts floating point or complex dtypes, "
                                f"but got desired dtype={dtype}")
        if device is not None:
            device = alloc.resolve_device(device)

        def convert(t):
            dt = dtype if t.is_floating_point() else None
            if fmt is not None and t.dim() in (4, 5):
                return t.to(device=device, dtype=dt, non_blocking=non_blocking,
                            memory_format=fmt)
            return t.to(device=device, dtype=dt, non_blocking=non_blocking)

        return self._apply(convert)

    def cuda(self, device=None):
        r"""Moves all parameters and buffers to the GPU; returns self."""
        return self._apply(lambda t: t.cuda(device))

    def cpu(self):
        r"""Moves all parameters and buffers to the CPU; returns self."""
        return self._apply(lambda t: t.cpu())

    def type(self, dst_type):
        r"""Casts all parameters and buffers to ``dst_type``; returns self."""
        return self._apply(lambda t: t.type(dst_type))

    def float(self):
        r"""Casts floating point parameters and buffers to float32; returns self."""
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self):
        r"""Casts floating point parameters and buffers to float64; returns self."""
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self):
        r"""Casts floating point parameters and buffers to float16; returns self."""
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self):
        r"""Casts floating point parameters and buffers to bfloat16; returns self."""
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def to_empty(self, *, device, recurse=True):
        r"""Replaces parameters and buffers by uninitialised tensors on ``device``."""
        from ..._ops import creation
        return self._apply(lambda t: creation.empty(t.shape, dtype=t.dtype, device=device),
                           recurse=recurse)

    def share_memory(self):
        r"""Moves the storage of parameters and buffers to shared memory; returns self."""
        return self._apply(lambda t: t.share_memory_())

    # ---- the call (hooks: _hooks.py; state dicts: _state_dict.py) -----------------------
    def _call_impl(self, *args, **kwargs):
        forward_call = self.forward
        # the common case (no hook anywhere) goes straight to forward
        if not (self._backward_hooks or self._backward_pre_hooks or self._forward_hooks
                or self._forward_pre_hooks or _global_backward_pre_hooks
                or _global_backward_hooks or _global_forward_hooks
                or _global_forward_pre_hooks):
            return forward_call(*args, **kwargs)
        return _call_with_hooks(self, forward_call, args, kwargs)

    __call__ = _call_impl
    _wrapped_call_impl = _call_impl

    # ---- printing --------------------------------------------------------------------------
    def extra_repr(self):
        r"""The module's own options for its printed form (override in layers)."""
        return ""

    def _get_name(self):
        return self.__class__.__name__

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = ["(" + key + "): " + _addindent(repr(module), 2)
                       for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"
