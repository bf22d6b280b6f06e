"""``autocast``: regions where ops run in mixed precision (the policy and the per-op casts
live in framework/_ops/autocast.py, where the ops are bound)."""
import functools
import warnings

import framework as fw
from framework._ops import autocast as _ac

__all__ = ["autocast", "custom_fwd", "custom_bwd", "is_autocast_available"]


def is_autocast_available(device_type):
    """Whether autocast supports ``device_type``."""
    return device_type in _ac.state.enabled


class autocast:
    """Context manager (and decorator) in whose region the ops PyTorch lists run in a
    lower precision (matmuls, convolutions, linear, attention) or in float32 (reductions,
    norms, losses, exp/log...), for tensors on ``device_type``.

    ``dtype``: the lower precision (``float16`` on cuda, ``bfloat16`` on cpu by default);
    ``enabled=False`` turns autocast off inside an enclosing region; ``cache_enabled``:
    cast each float32 weight once per outermost region and reuse the copy."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if not is_autocast_available(device_type):
            raise RuntimeError(
                f"User specified an unsupported autocast device_type '{device_type}'")
        self.device = device_type
        self.fast_dtype = _ac.get_autocast_dtype(device_type) if dtype is None else dtype
        self._enabled = bool(enabled)
        self._cache_enabled = (_ac.is_autocast_cache_enabled() if cache_enabled is None
                               else bool(cache_enabled))
        if self._enabled and self.fast_dtype not in (fw.float16, fw.bfloat16):
            kind = "CPU" if device_type == "cpu" else "CUDA"
            warnings.warn(f"In {kind} autocast, but the target dtype is not supported. "
                          f"Disabling autocast.\n{kind} Autocast only supports dtype of "
                          "framework.bfloat16, framework.float16 currently.", stacklevel=2)
            self._enabled = False

    def __enter__(self):
        st = _ac.state
        self._prev = (st.enabled[self.device], st.dtype[self.device], st.cache_enabled,
                      st.excluded)
        st.enabled[self.device] = self._enabled
        st.dtype[self.device] = self.fast_dtype
        st.cache_enabled = self._cache_enabled
        if self._enabled:
            st.excluded = 0     # an explicit region inside an autocast op or backward
        st.nesting += 1
        st.refresh()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        st = _ac.state
        st.nesting -= 1
        if st.nesting == 0:
            st.cache.clear()
        st.enabled[self.device], st.dtype[self.device], st.cache_enabled, st.excluded = \
            self._prev
        st.refresh()
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorated(*args, **kwargs):
            with autocast(self.device, self.fast_dtype, self._enabled, self._cache_enabled):
                return func(*args, **kwargs)
        return decorated


def _cast_inputs(value, dtype, device_type):
    if isinstance(value, fw.Tensor):
        ok = (value.device.type == device_type and value.is_floating_point()
              and value.dtype is not fw.float64)
        return value.to(dtype) if ok else value
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_inputs(v, dtype, device_type) for v in value)
    if isinstance(value, dict):
        return {k: _cast_inputs(v, dtype, device_type) for k, v in value.items()}
    return value


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorator for the ``forward`` of a custom ``autograd.Function``: records the autocast
    state for ``custom_bwd``; with ``cast_inputs``, inside an autocast region the floating
    tensors of the arguments are cast to it and forward runs with autocast off."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = _ac.get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = _ac.is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        autocast_context = _ac.is_autocast_enabled(device_type)
        ctx._fwd_used_autocast = False
        if autocast_context:
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast_inputs(args, cast_inputs, device_type),
                           **_cast_inputs(kwargs, cast_inputs, device_type))
        return fwd(*args, **kwargs)
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorator for the ``backward`` of a custom ``autograd.Function``: runs it with the
    autocast state its forward ran with."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast,
                      dtype=ctx._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd
