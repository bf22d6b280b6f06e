"""GradScaler: dynamic loss scaling for mixed-precision training, as PyTorch's
``torch.amp.GradScaler``.

The scale and the growth tracker live on the device as tensors and the two ops under it
(framework/amp/_ops.py) work there, so scaling, unscaling and updating never wait for the
device; only ``step`` reads back whether an inf/NaN was found, to decide whether to call
``optimizer.step()``."""
import inspect
import warnings
from collections import abc, defaultdict
from enum import Enum

import framework as fw

from ._ops import _amp_foreach_non_finite_check_and_unscale_, _amp_update_scale_

__all__ = ["OptState", "GradScaler"]


class _MultiDeviceReplicator:
    """Copies of one tensor on the devices that ask for it, each made once."""

    def __init__(self, master_tensor):
        self.master = master_tensor
        self._per_device_tensors = {}

    def get(self, device):
        t = self._per_device_tensors.get(device)
        if t is None:
            t = self.master.to(device=device, non_blocking=True, copy=True)
            self._per_device_tensors[device] = t
        return t


class OptState(Enum):
    """Where an optimizer is in the current iteration."""
    READY = 0
    UNSCALED = 1
    STEPPED = 2


# A module-level factory (not a lambda) so that a scaler's defaultdict can be pickled.
def _refresh_per_optimizer_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class GradScaler:
    """Helps perform the steps of gradient scaling.

    * ``scaler.scale(loss)`` multiplies a loss by the current scale factor;
    * ``scaler.step(optimizer)`` unscales the gradients and calls ``optimizer.step()``
      unless they hold an inf or NaN;
    * ``scaler.update()`` updates the scale factor: times ``backoff_factor`` after a skipped
      step, times ``growth_factor`` after ``growth_interval`` unskipped steps in a row.

    Args:
        device (str, default "cuda"): device type of the scaled tensors ("cuda" or "cpu").
        init_scale (float): initial scale factor.
        growth_factor (float): factor the scale grows by after ``growth_interval``
            consecutive steps without inf/NaN gradients.
        backoff_factor (float): factor the scale shrinks by after inf/NaN gradients.
        growth_interval (int): number of consecutive good steps between growths.
        enabled (bool): if False, ``step`` simply calls ``optimizer.step()`` and the other
            methods do nothing.
    """

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0,
                 backoff_factor=0.5, growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if self._device == "cuda" and enabled and not fw.cuda.is_available():
            warnings.warn("framework.cuda.amp.GradScaler is enabled, but CUDA is not "
                          "available.  Disabling.", stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None  # made on the device of the first scaled output
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None
            self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _check_scale_growth_tracker(self, funcname):
        fix = ("This may indicate your script did not use scaler.scale(loss or outputs) "
               "earlier in the iteration.")
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + fix)
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self, dev):
        if self._growth_tracker is not None:
            raise AssertionError("_growth_tracker initialized before _scale")
        self._scale = fw.full((), self._init_scale, dtype=fw.float32, device=dev)
        self._growth_tracker = fw.full((), self._init_growth_tracker, dtype=fw.int32,
                                       device=dev)

    def scale(self, outputs):
        """Multiplies ('scales') a tensor or an iterable of tensors (nested lists and tuples
        keep their types) by the scale factor. Returns them unmodified when disabled."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, fw.Tensor):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker(outputs.device)
            return outputs * self._scale.to(device=outputs.device, non_blocking=True)

        stash = []  # one replicator of the scale, made at the first tensor met

        def apply_scale(val):
            if isinstance(val, fw.Tensor):
                if not stash:
                    if self._scale is None:
                        self._lazy_init_scale_growth_tracker(val.device)
                    stash.append(_MultiDeviceReplicator(self._scale))
                return val * stash[0].get(val.device)
            if isinstance(val, abc.Iterable):
                scaled = map(apply_scale, val)
                if isinstance(val, (list, tuple)):
                    return type(val)(scaled)
                return scaled
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply_scale(outputs)

    def _unscale_grads_(self, optimizer, inv_scale, found_inf, allow_fp16):
        """Unscales the optimizer's gradients, one multi-tensor call per (device, dtype);
        returns the found_inf tensor of each device."""
        per_device_inv_scale = _MultiDeviceReplicator(inv_scale)
        per_device_found_inf = _MultiDeviceReplicator(found_inf)
        parts = defaultdict(lambda: defaultdict(list))  # device -> dtype -> grads
        with fw.no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    if not isinstance(param, fw.Tensor):
                        raise AssertionError("expected param to be framework.Tensor, got "
                                             f"{type(param).__name__}")
                    grad = param.grad
                    if grad is None:
                        continue
                    if not allow_fp16 and grad.dtype == fw.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    parts[grad.device][grad.dtype].append(grad)
            for device, per_dtype in parts.items():
                for grads in per_dtype.values():
                    _amp_foreach_non_finite_check_and_unscale_(
                        grads, per_device_found_inf.get(device),
                        per_device_inv_scale.get(device))
        return per_device_found_inf._per_device_tensors

    def unscale_(self, optimizer):
        """Divides ("unscales") the optimizer's gradients by the scale factor, in place, and
        records whether any holds an inf or NaN. Optional: ``step`` does it when it was not
        done; call it at most once per optimizer between ``update`` calls, after all
        gradients are accumulated (for clipping, for example)."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since "
                               "the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        # the reciprocal is taken in float64: a float32 division may be off by an ulp
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = fw.full((), 0.0, dtype=fw.float32, device=self._scale.device)
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, found_inf,
                                                             False)
        state["stage"] = OptState.UNSCALED

    def _maybe_opt_step(self, optimizer, optimizer_state, *args, **kwargs):
        retval = None
        if not sum(v.item() for v in optimizer_state["found_inf_per_device"].values()):
            retval = optimizer.step(*args, **kwargs)
        return retval

    def step(self, optimizer, *args, **kwargs):
        """Unscales the gradients (unless ``unscale_`` already did) and calls
        ``optimizer.step(*args, **kwargs)`` unless they hold an inf or NaN. Returns what
        ``optimizer.step`` returned, or None when the step was skipped. Closures are not
        supported."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")

        if getattr(optimizer, "_step_supports_amp_scaling", False):
            return self._fused_step(optimizer, state, args, kwargs)

        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = self._maybe_opt_step(optimizer, state, *args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def _fused_step(self, optimizer, state, args, kwargs):
        """Steps an optimizer that unscales and skips on its own (fused kernels): it gets
        the scale as ``optimizer.grad_scale`` (None when already unscaled) and the inf/NaN
        flag as ``optimizer.found_inf`` for the call. Older optimizers whose step takes a
        ``grad_scaler`` argument get the scaler itself instead."""
        if "grad_scaler" in inspect.signature(optimizer.step).parameters:
            warnings.warn("GradScaler is going to stop passing itself as a keyword argument "
                          "to the passed optimizer. In the near future GradScaler registers "
                          "`grad_scale: Tensor` and `found_inf: Tensor` to the passed "
                          "optimizer and let the optimizer use them directly.",
                          FutureWarning, stacklevel=3)
            kwargs.update({"grad_scaler": self})
            retval = optimizer.step(*args, **kwargs)
            state["stage"] = OptState.STEPPED
            return retval
        if state["stage"] is OptState.READY:
            self._check_inf_per_device(optimizer)
        scale = self._get_scale_async()
        found_inf = fw.zeros((), dtype=fw.float32, device=scale.device)
        for t in state["found_inf_per_device"].values():
            found_inf = found_inf + t.to(scale.device, non_blocking=True)
        # a grad_scale the user set multiplies the scaler's
        optimizer.grad_scale = (getattr(optimizer, "grad_scale", None)
                                if state["stage"] is OptState.UNSCALED
                                else scale * getattr(optimizer, "grad_scale", 1))
        optimizer.found_inf = found_inf
        try:
            retval = optimizer.step(*args, **kwargs)
        finally:
            del optimizer.grad_scale
            del optimizer.found_inf
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None):
        """Updates the scale factor: times ``backoff_factor`` if any optimizer step was
        skipped this iteration, times ``growth_factor`` after ``growth_interval`` unskipped
        iterations in a row. ``new_scale`` (a float or a 1-element tensor) sets it instead.
        Call it once at the end of each iteration, after every ``step``."""
        if not self._enabled:
            return
        scale, growth_tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, (float, int)) and not isinstance(new_scale, bool):
                scale.fill_(float(new_scale))
            else:
                reason = ("new_scale should be a float or a 1-element framework.cuda."
                          "FloatTensor or framework.FloatTensor with requires_grad=False.")
                if not isinstance(new_scale, fw.Tensor):
                    raise AssertionError(reason)
                if new_scale.device.type != self._device:
                    raise AssertionError(reason)
                if new_scale.numel() != 1:
                    raise AssertionError(reason)
                if new_scale.requires_grad:
                    raise AssertionError(reason)
                scale.copy_(new_scale.reshape(()))
        else:
            found_infs = [found_inf.to(device=scale.device, non_blocking=True)
                          for state in self._per_optimizer_states.values()
                          for found_inf in state["found_inf_per_device"].values()]
            if len(found_infs) == 0:
                raise AssertionError("No inf checks were recorded prior to update.")
            found_inf_combined = found_infs[0]
            for f in found_infs[1:]:
                found_inf_combined = found_inf_combined + f
            _amp_update_scale_(scale, growth_tracker, found_inf_combined,
                               self._growth_factor, self._backoff_factor,
                               self._growth_interval)
        # the next iteration starts afresh for every optimizer
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _get_scale_async(self):
        return self._scale

    def get_scale(self):
        """The current scale as a Python float (1.0 when disabled). Waits for the device."""
        if not self._enabled:
            return 1.0
        scale = self._get_scale_async()
        return self._init_scale if scale is None else scale.item()

    def get_growth_factor(self):
        """The scale growth factor (a Python float)."""
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        """Sets a new scale growth factor."""
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        """The scale backoff factor (a Python float)."""
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        """Sets a new scale backoff factor."""
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        """The growth interval (a Python int)."""
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        """Sets a new growth interval."""
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if not self._enabled:
            return 0
        if self._growth_tracker is None:
            return self._init_growth_tracker
        return self._growth_tracker.item()

    def is_enabled(self):
        """Whether this scaler is enabled."""
        return self._enabled

    def state_dict(self):
        """The scaler's state: ``scale``, ``growth_factor``, ``backoff_factor``,
        ``growth_interval`` and ``_growth_tracker`` (the count of recent consecutive
        unskipped steps), as Python numbers; an empty dict when disabled. Take it after
        ``update``."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict):
        """Loads a state from ``state_dict`` (a no-op when disabled)."""
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was "
                               "saved from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError("A GradScaler instance may only be pickled at the "
                                     "beginning of an iteration, or at the end after "
                                     "scaler.update().")
            # the tensors are not pickled: the copy remakes them lazily from these values
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)

    def _check_inf_per_device(self, optimizer):
        """Looks for infs/NaNs in the optimizer's gradients without unscaling them."""
        scale, _ = self._check_scale_growth_tracker("_check_inf_per_device")
        dummy_inv_scale = fw.full((), 1.0, dtype=fw.float32, device=scale.device)
        found_inf = fw.full((), 0.0, dtype=fw.float32, device=scale.device)
        self._per_optimizer_states[id(optimizer)]["found_inf_per_device"] = \
            self._unscale_grads_(optimizer, dummy_inv_scale, found_inf, True)
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]

    def _found_inf_per_device(self, optimizer):
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]
