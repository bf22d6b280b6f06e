"""``Optimizer``: the base class of every optimizer (PyTorch's ``torch.optim.Optimizer``).

It owns the parameter groups (``param_groups``, editable in place), the per-parameter
``state`` (a defaultdict keyed by parameter), ``state_dict``/``load_state_dict`` in
PyTorch's layout, ``zero_grad`` and the step / state-dict hooks. Subclasses define
``step`` (wrapped here so that step hooks run around it)."""
import functools
import sys
import warnings
from collections import OrderedDict, defaultdict
from copy import deepcopy
from itertools import chain

import framework as _fw
from framework._tensor import Tensor
from framework.nn.modules._hooks import RemovableHandle

__all__ = ["Optimizer", "required", "register_optimizer_step_pre_hook",
           "register_optimizer_step_post_hook"]


class _RequiredParameter:
    """Singleton marking a hyper-parameter a param group must give."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()

_global_optimizer_pre_hooks = OrderedDict()
_global_optimizer_post_hooks = OrderedDict()


def register_optimizer_step_pre_hook(hook):
    """Register a pre-step hook for all optimizers: hook(optimizer, args, kwargs)."""
    handle = RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook):
    """Register a post-step hook for all optimizers: hook(optimizer, args, kwargs)."""
    handle = RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


def _typename(obj):
    """The name PyTorch's ``typename`` gives ``obj`` in error messages."""
    if isinstance(obj, Tensor) and hasattr(obj, "type"):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        name = obj.__qualname__
    elif hasattr(obj, "__name__"):
        name = obj.__name__
    else:
        module = obj.__class__.__module__ or ""
        name = obj.__class__.__qualname__
    if module in ("", "builtins"):
        return name
    return f"{module}.{name}"


def _to_scalar(x):
    """A 0-d / 1-element tensor as a Python number; other values unchanged."""
    if isinstance(x, Tensor):
        return x.item()
    return x


def _scalar_dtype():
    """dtype of per-parameter scalar state (``step``), as torch's ``_get_scalar_dtype``."""
    return _fw.float64 if _fw.get_default_dtype() == _fw.float64 else _fw.float32


def _check_lr(lr):
    """PyTorch's checks of a learning rate (a float or a 1-element tensor)."""
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def _check_nonneg(**values):
    """PyTorch's "Invalid <name> value: <v>" ValueError for the first negative one, in
    order (keyword names are the words of the message: ``epsilon=eps``)."""
    for name, v in values.items():
        if not 0.0 <= v:
            raise ValueError(f"Invalid {name} value: {v}")


def _check_betas(betas):
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")


def _hooked_step(func):
    """Wrap a subclass's ``step`` so that the step pre/post hooks run around it."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        self = args[0]
        trace = sys.modules.get("framework._inductor.trace")
        if trace is not None and trace.compiling:
            # a compiled graph would bake the step's Python numbers (lr, bias corrections)
            # in and keep traced values in self.state: the compiled caller runs eagerly
            from framework.fx.proxy import TraceError
            raise TraceError(f"{type(self).__name__}.step() runs eagerly under "
                             "framework.compile")
        for pre_hook in chain(_global_optimizer_pre_hooks.values(),
                              self._optimizer_step_pre_hooks.values()):
            result = pre_hook(self, args, kwargs)
            if result is not None:
                if isinstance(result, tuple) and len(result) == 2:
                    args, kwargs = result
                else:
                    raise RuntimeError(f"{func} must return None or a tuple of "
                                       f"(new_args, new_kwargs), but got {result}.")
        out = func(*args, **kwargs)
        for post_hook in chain(self._optimizer_step_post_hooks.values(),
                               _global_optimizer_post_hooks.values()):
            post_hook(self, args, kwargs)
        return out

    wrapper._hooked = True
    return wrapper


class Optimizer:
    """Base class for optimizers.

    params: an iterable of tensors, of (name, tensor) pairs, or of dicts (param groups).
    defaults: the default hyper-parameters of a param group."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_hooked", False):
            cls.step = _hooked_step(step)

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        self._optimizer_state_dict_pre_hooks = OrderedDict()
        self._optimizer_state_dict_post_hooks = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks = OrderedDict()
        self._optimizer_load_state_dict_post_hooks = OrderedDict()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable "
                            "of Tensors or dicts, but got " + _typename(params))
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    # ------------------------------------------------------------------ pickling, repr
    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
                     "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                     "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            if name not in self.__dict__:
                setattr(self, name, OrderedDict())

    def __repr__(self):
        text = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += "\n" + f"Parameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"

    # ------------------------------------------------------------------ param groups
    def add_param_group(self, param_group):
        """Add a param group (a dict with ``params`` and optional per-group options)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            param_group["params"] = list(params)

        tensors, names = [], []
        for p in param_group["params"]:
            if isinstance(p, tuple):
                names.append(p[0])
                tensors.append(p[1])
            else:
                tensors.append(p)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError("all optimizer params should be with/without names. "
                                 "Some param names are missing")
            param_group["param_names"] = names

        for p in tensors:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params "
                                "is " + _typename(p))
            if not self.defaults.get("differentiable", None) and not (
                    p.is_leaf or getattr(p, "retains_grad", False)):
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)

        if len(tensors) != len(set(tensors)):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; "
                          "in future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        seen = set()
        for group in self.param_groups:
            seen.update(group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {which} to the optimizer")
        if not seen.isdisjoint(tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # ------------------------------------------------------------------ gradients, step
    def zero_grad(self, set_to_none=True):
        """Reset the gradients of all parameters (to None by default)."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if p.grad.grad_fn is not None:
                        p.grad.detach_()
                    else:
                        p.grad.requires_grad_(False)
                    p.grad.zero_()

    def step(self, closure=None):
        """Perform one optimization step; ``closure`` re-evaluates the loss and returns it."""
        raise NotImplementedError

    def _eval_closure(self, closure):
        """Call ``closure`` with grad mode enabled; None when no closure is given."""
        if closure is None:
            return None
        with _fw.enable_grad():
            return closure()

    # ------------------------------------------------------------------ hooks
    @staticmethod
    def _add_hook(hooks, hook, prepend=False):
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def register_step_pre_hook(self, hook):
        """hook(optimizer, args, kwargs) -> None or (new_args, new_kwargs), before step."""
        return self._add_hook(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook):
        """hook(optimizer, args, kwargs) -> None, after step."""
        return self._add_hook(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook, prepend=False):
        """hook(optimizer) -> None, before ``state_dict``."""
        return self._add_hook(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        """hook(optimizer, state_dict) -> state_dict or None, after ``state_dict``."""
        return self._add_hook(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        """hook(optimizer, state_dict) -> state_dict or None, before ``load_state_dict``."""
        return self._add_hook(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        """hook(optimizer) -> None, after ``load_state_dict``."""
        return self._add_hook(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # ------------------------------------------------------------------ state dict
    def state_dict(self):
        """{"state": {index: {...}}, "param_groups": [{..., "params": [indices]}]}.

        Parameters are numbered in the order of the groups; state tensors are references
        (not copies), as in PyTorch."""
        for hook in self._optimizer_state_dict_pre_hooks.values():
            hook(self)
        mapping = {}
        start = 0

        def pack(group):
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                if id(p) not in mapping:
                    mapping[id(p)] = i
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        groups = [pack(g) for g in self.param_groups]
        state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v
                 for k, v in self.state.items()}
        sd = {"state": state, "param_groups": groups}
        for hook in self._optimizer_state_dict_post_hooks.values():
            result = hook(self, sd)
            if result is not None:
                sd = result
        return sd

    @staticmethod
    def _cast_state_value(param, value, group, key=None):
        """A copy of ``value`` with floating tensors cast to the param's dtype and device
        (``step`` keeps its dtype unless the group is fused or capturable)."""
        if isinstance(value, Tensor):
            if key == "step":
                if group.get("fused") or group.get("capturable"):
                    return value.to(dtype=_fw.float32, device=param.device).clone()
                return value.clone()
            if param.is_floating_point():
                return value.to(dtype=param.dtype, device=param.device).clone()
            return value.to(device=param.device).clone()
        if isinstance(value, dict):
            return {k: Optimizer._cast_state_value(param, v, group, key=k)
                    for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(Optimizer._cast_state_value(param, v, group) for v in value)
        return value

    def load_state_dict(self, state_dict):
        """Load a state dict from ``state_dict()`` (this framework's or PyTorch's, with
        tensors converted): checks the group sizes, casts state to the parameters."""
        state_dict = state_dict.copy()
        for hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't "
                             "match the size of optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))
        group_of = {}
        for s in saved_groups:
            for i in s["params"]:
                group_of[i] = s
        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = self._cast_state_value(param, v, group_of[k])
            else:
                state[k] = v

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, s) for g, s in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})
        for hook in self._optimizer_load_state_dict_post_hooks.values():
            hook(self)

    # ------------------------------------------------------------------ helpers for subclasses
    def _params_with_grad(self, group, real_only=None):
        """The parameters of ``group`` whose ``grad`` is not None; with ``real_only`` (the
        optimizer's name), a complex parameter raises PyTorch's error."""
        params = [p for p in group["params"] if p.grad is not None]
        if real_only is not None and any(p.is_complex() for p in params):
            raise RuntimeError(f"{real_only} does not support complex parameters")
        return params

    @staticmethod
    def _new_step(param, group):
        """A fresh ``step`` state: a float32 0-d tensor (on the param's device when fused
        or capturable, on the cpu otherwise, as PyTorch)."""
        if group.get("fused") or group.get("capturable"):
            return _fw.zeros((), dtype=_fw.float32, device=param.device)
        return _fw.zeros((), dtype=_scalar_dtype(), device="cpu")

    @staticmethod
    def _check_fused_foreach(defaults):
        """PyTorch's checks of the ``fused`` option."""
        if defaults.get("fused"):
            if defaults.get("differentiable"):
                raise RuntimeError("`fused` does not support `differentiable`")
            if defaults.get("foreach"):
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def _multi_tensor(group):
    """Whether a step over ``group`` takes the multi-tensor kernel (one call per device and
    dtype) rather than a loop of per-parameter ops: when ``fused`` or ``foreach`` asks for
    it, and by default (both None), as PyTorch defaults to foreach on CUDA. Here the default
    holds on the CPU too, where the loop costs about ten dispatched ops per parameter; the
    update is the same arithmetic. Not for ``differentiable`` steps, a Tensor ``lr``, or
    parameters the kernel does not take."""
    if group["differentiable"]:
        return False
    if group.get("fused") or group.get("foreach"):
        return True
    if group.get("fused") is False or group.get("foreach") is False:
        return False
    if isinstance(group["lr"], Tensor):
        return False
    # the parameters _check_fused_param accepts; complex ones go as their real views
    return all((p.is_floating_point() or p.is_complex()) and p.device.type in ("cpu", "cuda")
               for p in group["params"] if p.grad is not None)


def _has_sparse_grad(group):
    """Whether a parameter of ``group`` has a sparse COO gradient."""
    return any(p.grad is not None and p.grad.is_sparse for p in group["params"])


def _real_views(*tensors):
    """Each complex tensor as its real view (``view_as_real``), others (and None) as they
    are: PyTorch updates a complex param as two real ones, each part with its own state."""
    return tuple(_fw.view_as_real(t) if t is not None and t.is_complex() else t
                 for t in tensors)


def _refuse_sparse_grads(group, message):
    """PyTorch's RuntimeError (``message``) for an optimizer without a sparse update."""
    if _has_sparse_grad(group):
        raise RuntimeError(message)


def _add_sparse_(dense, grad, alpha=1):
    """``dense += alpha * grad`` for a sparse COO ``grad`` (repeated indices add up), as
    PyTorch's ``dense.add_(sparse, alpha=alpha)``."""
    indices, values = grad._indices(), grad._values()
    if indices.shape[1]:
        dense.index_put_(tuple(indices.unbind(0)), values if alpha == 1 else values * alpha,
                         accumulate=True)
    return dense


def _check_fused_param(p):
    """PyTorch's check that a fused optimizer's parameter is a float tensor on a
    supported device."""
    devices = ["cpu", "cuda"]
    if not (p.device.type in devices and p.is_floating_point()):
        raise RuntimeError("`fused=True` requires all the params to be floating point "
                           f"Tensors of supported devices: {devices} but {p.dtype} and "
                           f"{p.device.type}")

