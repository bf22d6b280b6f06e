"""``framework._dynamo.config``: the knobs of PyTorch's graph capture that scripts set.

``framework.compile`` reads ``cache_size_limit`` (its graphs per compiled callable); the
other knobs are stored and read back, with PyTorch's defaults; setting or reading a name PyTorch does not
have raises its AttributeError, so a typo is not silently ignored. ``cache_size_limit`` and
``accumulated_cache_size_limit`` are PyTorch's old names of ``recompile_limit`` and
``accumulated_recompile_limit``: both spellings reach the same value.
"""
import contextlib
import sys
import types

_DEFAULTS = {
    "recompile_limit": 8,
    "accumulated_recompile_limit": 256,
    "suppress_errors": False,
    "optimize_ddp": True,
    "capture_scalar_outputs": False,
    "capture_dynamic_output_shape_ops": False,
    "verbose": False,
    "automatic_dynamic_shapes": True,
    "assume_static_by_default": True,
    "specialize_int": False,
    "specialize_float": False,
    "dynamic_shapes": True,
    "inline_inbuilt_nn_modules": True,
    "force_parameter_static_shapes": True,
    "force_nn_module_property_static_shapes": True,
    "error_on_recompile": False,
    "allow_unspec_int_on_nn_module": False,
    "skip_nnmodule_hook_guards": True,
    "guard_nn_modules": True,
    "raise_on_ctx_manager_usage": True,
    "log_compilation_metrics": True,
    "replay_record_enabled": False,
    "rewrite_assert_with_torch_assert": True,
}
_ALIASES = {"cache_size_limit": "recompile_limit",
            "accumulated_cache_size_limit": "accumulated_recompile_limit"}


class _ConfigModule(types.ModuleType):
    """The module object itself: attribute access is checked against the known knobs."""

    def __getattr__(self, name):
        values = self.__dict__["_values"]
        name = _ALIASES.get(name, name)
        if name in values:
            return values[name]
        raise AttributeError(f"{_PUBLIC}.{name} does not exist")

    def __setattr__(self, name, value):
        if name.startswith("__") or name in ("_values", "patch", "get_config_copy"):
            return super().__setattr__(name, value)
        values = self.__dict__["_values"]
        key = _ALIASES.get(name, name)
        if key not in values:
            raise AttributeError(f"{_PUBLIC}.{name} does not exist")
        values[key] = value

    def __delattr__(self, name):
        key = _ALIASES.get(name, name)
        if key not in _DEFAULTS:
            raise AttributeError(f"{_PUBLIC}.{name} does not exist")
        self.__dict__["_values"][key] = _DEFAULTS[key]   # back to the default, as PyTorch

    def __dir__(self):
        return sorted(set(_DEFAULTS) | set(_ALIASES) | set(super().__dir__()))

    def get_config_copy(self):
        """A dict of every knob and its current value."""
        return dict(self.__dict__["_values"])

    def patch(self, arg1=None, arg2=None, **changes):
        """Sets knobs for the duration of a ``with`` block or a decorated function:
        ``patch(name, value)``, ``patch({name: value})`` or ``patch(name=value)``."""
        if isinstance(arg1, str):
            changes[arg1] = arg2
        elif isinstance(arg1, dict):
            changes.update(arg1)
        elif arg1 is not None:
            raise TypeError(f"{_PUBLIC}.patch: expected a name or a dict, got {arg1!r}")
        for name in changes:
            if _ALIASES.get(name, name) not in self.__dict__["_values"]:
                raise AttributeError(f"{_PUBLIC}.{name} does not exist")
        return _Patch(self, changes)


class _Patch(contextlib.ContextDecorator):
    def __init__(self, config, changes):
        self.config, self.changes, self.prior = config, changes, []

    def __enter__(self):
        self.prior.append({n: getattr(self.config, n) for n in self.changes})
        for n, v in self.changes.items():
            setattr(self.config, n, v)

    def __exit__(self, *exc):
        for n, v in self.prior.pop().items():
            setattr(self.config, n, v)
        return False


_PUBLIC = "framework._dynamo.config"
_self = sys.modules[__name__]
_self.__dict__["_values"] = dict(_DEFAULTS)
_self.__class__ = _ConfigModule
del sys, types
