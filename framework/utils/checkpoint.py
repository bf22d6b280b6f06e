"""Activation checkpointing (PyTorch's ``torch.utils.checkpoint``): run part of a model
without keeping its intermediate activations, and compute them again in the backward pass.

Two variants, chosen by ``use_reentrant``:

* reentrant (``use_reentrant=True``, and the default when it is not passed, with PyTorch's
  warning): an ``autograd.Function`` whose forward runs the function under ``no_grad`` and
  keeps only its inputs; its backward runs the function again with grad mode on (same RNG
  and autocast state as the forward) and backpropagates through that graph. It does not
  work with ``autograd.grad`` nor ``backward(inputs=...)`` (PyTorch's error).
* non-reentrant (``use_reentrant=False``): the function runs with grad mode on under
  ``saved_tensors_hooks`` whose pack hook keeps a small placeholder instead of each tensor
  an op saves for backward; the first unpack in a backward pass runs the function again
  (stopping as soon as every still-needed tensor was recomputed) and hands the recomputed
  tensors out, each once. It supports keyword arguments, ``autograd.grad``, inputs that
  need no gradient, nesting, and checks that the recomputation saved tensors of the same
  shapes, dtypes and devices (``determinism_check="default"``).
"""
import contextlib
import warnings
import weakref

from .._tensor import Tensor
from ..autograd import engine as _engine, grad_mode
from ..autograd.function import Function
from ..autograd.graph import SavedTensor, saved_tensors_hooks
from ._pytree import tree_map
from ._selective_checkpoint import (  # noqa: F401
    CheckpointPolicy, SelectiveCheckpointContext, create_selective_checkpoint_contexts,
)

__all__ = [
    "checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction",
    "check_backward_validity", "detach_variable", "get_device_states", "set_device_states",
    "noop_context_fn", "set_checkpoint_early_stop", "DefaultDeviceType",
    "set_checkpoint_debug_enabled", "CheckpointPolicy", "SelectiveCheckpointContext",
    "create_selective_checkpoint_contexts",
]

_DEFAULT_DETERMINISM_MODE = "default"

_checkpoint_debug_enabled = None


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled):
    """Overrides the ``debug`` argument of every checkpoint run in this context (None:
    defer to the argument)."""
    global _checkpoint_debug_enabled
    prev = _checkpoint_debug_enabled
    _checkpoint_debug_enabled = enabled
    try:
        yield
    finally:
        _checkpoint_debug_enabled = prev


def detach_variable(inputs):
    """The tensors of tuple ``inputs`` detached, each keeping its ``requires_grad``."""
    if not isinstance(inputs, tuple):
        raise RuntimeError("Only tuple of tensors is supported. Got Unsupported input type: "
                           f"{type(inputs).__name__}")
    out = []
    for inp in inputs:
        if not isinstance(inp, Tensor):
            out.append(inp)
            continue
        x = inp.detach()
        x.requires_grad = inp.requires_grad
        out.append(x)
    return tuple(out)


def check_backward_validity(inputs):
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=2)


# ---- device and autocast state -------------------------------------------------------------

def _get_device_module(device="cuda"):
    import framework
    return getattr(framework, device)


def _device_initialized(device_type):
    if device_type != "cuda":
        return False
    from .. import cuda
    return cuda.is_initialized()


class DefaultDeviceType:
    """The device type whose RNG state checkpoint saves when no argument is on a device
    other than the CPU ('cuda' when CUDA, real or simulated, is available)."""

    _default_device_type = None

    @staticmethod
    def set_device_type(device="cuda"):
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type():
        if not DefaultDeviceType._default_device_type:
            from .. import cuda
            DefaultDeviceType._default_device_type = "cuda" if cuda.is_available() else "cpu"
        return DefaultDeviceType._default_device_type


def _infer_device_type(*args):
    device_types = []

    def add(arg):
        if isinstance(arg, Tensor) and arg.device.type != "cpu":
            device_types.append(arg.device.type)
        return arg

    tree_map(add, args)
    kinds = set(device_types)
    if len(kinds) > 1:
        warnings.warn(
            "Tensor arguments, excluding CPU tensors, are detected on at least two types of "
            "devices. Device state will only be saved for devices of a single device type, and "
            "the remaining devices will be ignored. Consequently, if any checkpointed functions "
            "involve randomness, this may result in incorrect gradients. (Note that if CUDA "
            "devices are among the devices detected, it will be prioritized; otherwise, the "
            "first device encountered will be selected.)"
            f"\nDevice types: {sorted(kinds)} first device type: {device_types[0]}",
            stacklevel=2)
    if not device_types:
        return DefaultDeviceType.get_device_type()
    if "cuda" in kinds:
        return "cuda"
    return device_types[0]


def get_device_states(*args):
    """The ids of the non-CPU devices of the tensors in ``args`` and their RNG states."""
    ids = []

    def add(arg):
        if isinstance(arg, Tensor) and arg.device.type not in ("cpu", "meta"):
            ids.append(arg.get_device())
        return arg

    tree_map(add, args)
    states = []
    module = _get_device_module(_infer_device_type(*args))
    for i in ids:
        with module.device(i):
            states.append(module.get_rng_state())
    return ids, states


def set_device_states(devices, states, *, device_type=None):
    """Restores the RNG states of ``devices`` (ids of ``device_type``)."""
    if device_type is None:
        device_type = DefaultDeviceType.get_device_type()
    if device_type == "meta":
        return
    module = _get_device_module(device_type)
    for d, state in zip(devices, states):
        with module.device(d):
            module.set_rng_state(state)


def _autocast_available(device_type):
    from ..amp.autocast_mode import is_autocast_available
    return is_autocast_available(device_type)


def _get_autocast_kwargs(device_type="cuda"):
    from .._ops import autocast as ac
    dev = None
    if _autocast_available(device_type):
        dev = {"enabled": ac.is_autocast_enabled(device_type),
               "dtype": ac.get_autocast_dtype(device_type),
               "cache_enabled": ac.is_autocast_cache_enabled()}
    cpu = {"enabled": ac.is_autocast_enabled("cpu"), "dtype": ac.get_autocast_dtype("cpu"),
           "cache_enabled": ac.is_autocast_cache_enabled()}
    return dev, cpu


def _autocast_contexts(device_type, device_kwargs, cpu_kwargs):
    from ..amp.autocast_mode import autocast
    dev = (autocast(device_type=device_type, **device_kwargs)
           if _autocast_available(device_type) and device_kwargs is not None
           else contextlib.nullcontext())
    return dev, autocast("cpu", **cpu_kwargs)


def _fork_rng(devices, enabled, device_type):
    from .. import random
    return random.fork_rng(devices=devices, enabled=enabled, device_type=device_type)


def _set_cpu_rng_state(state):
    from .. import random
    random.set_rng_state(state)


def _get_cpu_rng_state():
    from .. import random
    return random.get_rng_state()


# ---- reentrant checkpoint ----------------------------------------------------------------

class CheckpointFunction(Function):
    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        ctx.device_type = _infer_device_type(*args)
        ctx.device_autocast_kwargs, ctx.cpu_autocast_kwargs = _get_autocast_kwargs(
            ctx.device_type)
        if preserve_rng_state:
            ctx.fwd_cpu_state = _get_cpu_rng_state()
            # the device's state only if it is already set up (no eager initialisation)
            ctx.had_device_in_fwd = False
            if _device_initialized(ctx.device_type):
                ctx.had_device_in_fwd = True
                ctx.fwd_devices, ctx.fwd_device_states = get_device_states(*args)
        # non-tensor arguments in ctx.inputs, tensors (placeholders None there) saved
        ctx.inputs = []
        ctx.tensor_indices = []
        tensors = []
        for i, arg in enumerate(args):
            if isinstance(arg, Tensor):
                tensors.append(arg)
                ctx.tensor_indices.append(i)
                ctx.inputs.append(None)
            else:
                ctx.inputs.append(arg)
        ctx.save_for_backward(*tensors)
        with grad_mode.no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *args):
        if not _engine._is_checkpoint_valid():
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible"
                " with .grad() or passing an `inputs` parameter to .backward()."
                " To resolve this error, you can either set use_reentrant=False,"
                " or call .backward() without passing the `inputs` argument.")
        inputs = list(ctx.inputs)
        tensors = ctx.saved_tensors
        for i, idx in enumerate(ctx.tensor_indices):
            inputs[idx] = tensors[i]
        rng_devices = []
        if ctx.preserve_rng_state and ctx.had_device_in_fwd:
            rng_devices = ctx.fwd_devices
        from .. import autograd
        with _fork_rng(rng_devices, ctx.preserve_rng_state, ctx.device_type):
            if ctx.preserve_rng_state:
                _set_cpu_rng_state(ctx.fwd_cpu_state)
                if ctx.had_device_in_fwd:
                    set_device_states(ctx.fwd_devices, ctx.fwd_device_states,
                                      device_type=ctx.device_type)
            detached = detach_variable(tuple(inputs))
            dev_ac, cpu_ac = _autocast_contexts(ctx.device_type, ctx.device_autocast_kwargs,
                                                ctx.cpu_autocast_kwargs)
            with grad_mode.enable_grad(), dev_ac, cpu_ac:
                outputs = ctx.run_function(*detached)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        outs, grads = [], []
        for i in range(len(outputs)):
            if isinstance(outputs[i], Tensor) and outputs[i].requires_grad:
                outs.append(outputs[i])
                grads.append(args[i])
        if not outs:
            raise RuntimeError("none of output has requires_grad=True,"
                               " this checkpoint() is not necessary")
        autograd.backward(outs, grads)
        return (None, None) + tuple(inp.grad if isinstance(inp, Tensor) else None
                                    for inp in detached)


def noop_context_fn():
    """The default ``context_fn``: no context around the forward nor the recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn,
               determinism_check=_DEFAULT_DETERMINISM_MODE, debug=False, early_stop=True,
               **kwargs):
    """Runs ``function(*args, **kwargs)`` without keeping its intermediate activations;
    they are computed again in the backward pass (trading compute for memory).

    ``use_reentrant``: which variant (see the module's documentation); pass it explicitly
    (``False`` is recommended). ``preserve_rng_state`` (keyword, default True): run the
    recomputation with the forward's RNG state, so dropout drops the same elements.
    ``context_fn``, ``determinism_check``, ``debug``, ``early_stop``: non-reentrant only.
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be "
            "passed explicitly. Starting in PyTorch 2.9, calling checkpoint "
            "without use_reentrant will raise an exception. use_reentrant=False is "
            "recommended, but if you need to preserve the current default "
            "behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.",
            stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve, *args)
    gen = _checkpoint_without_reentrant_generator(
        function, preserve, context_fn, determinism_check, debug, early_stop, *args, **kwargs)
    next(gen)       # before the forward
    try:
        ret = function(*args, **kwargs)
    except BaseException as e:
        try:
            gen.throw(e)
        except StopIteration as stop:
            raise RuntimeError(
                "torch.utils.checkpoint: the forward context provided by "
                "context_fn suppressed an exception raised during the "
                "checkpointed forward. This is not supported because "
                "checkpoint cannot return a value for a failed forward.") from stop
        raise
    try:            # after the forward
        next(gen)
    except StopIteration:
        return ret
    raise AssertionError("torch.utils.checkpoint: expected context_fn generator to yield "
                         "exactly twice, but it yielded more than twice.")


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):  # noqa: A002
    """Runs the modules or functions of ``functions`` (a list or an ``nn.Sequential``) in
    order on ``input``, in ``segments`` chunks of which all but the last are checkpointed.
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant "
            "parameter should be passed explicitly. "
            "In version 2.9 we will raise an exception if use_reentrant "
            "is not passed. use_reentrant=False is "
            "recommended, but if you need to preserve the current default "
            "behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_function(start, end, functions):
        def forward(input):  # noqa: A002
            for j in range(start, end + 1):
                input = functions[j](input)
            return input
        return forward

    from ..nn import Sequential
    if isinstance(functions, Sequential):
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, functions), input,
                           use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1, functions)(input)


# ---- non-reentrant checkpoint ------------------------------------------------------------

_enable_checkpoint_early_stop = None


@contextlib.contextmanager
def set_checkpoint_early_stop(enable):
    """Whether non-reentrant checkpoints run in this context (their forward) stop the
    recomputation as soon as it produced every tensor backward needs (default: they do)."""
    global _enable_checkpoint_early_stop
    prev = _enable_checkpoint_early_stop
    _enable_checkpoint_early_stop = enable
    try:
        yield
    finally:
        _enable_checkpoint_early_stop = prev


class CheckpointError(RuntimeError):
    pass


_debug_tip_msg = """
Tip: To see a more detailed error message, either pass `debug=True` to
`torch.utils.checkpoint.checkpoint(...)` or wrap the code block
with `with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to
enable checkpoint‑debug mode globally.

If this error occurs under torch.compile with automatic_dynamic_shapes enabled,
it may be because the recomputation selected a different compiled graph than the
forward pass (e.g., a dynamic graph instead of the original static graph).
To fix this, either:
  - Use torch._dynamo.mark_dynamic() to explicitly mark varying dimensions as
    dynamic upfront, avoiding the static-to-dynamic transition.
  - Call torch._C._dynamo.eval_frame._set_lru_cache(False) to disable LRU cache
    reordering, which can change which graph is checked first between forward
    and recompute.
See https://github.com/pytorch/pytorch/issues/166926 for more details and
workaround examples.
"""


def _default_meta_extractor(x):
    return {"shape": x.shape, "dtype": x.dtype, "device": x.device}


_allowed_determinism_checks_to_fns = {
    _DEFAULT_DETERMINISM_MODE: _default_meta_extractor,
    "none": lambda _: None,
}


class _StopRecomputationError(Exception):
    pass


_EMPTY = object()


class _Holder:
    """What the graph keeps for a tensor saved inside a checkpoint: the recomputed tensor
    and the backward (graph task) whose recomputation made it, nothing before."""

    __slots__ = ("value", "task", "__weakref__")

    def __init__(self):
        self.value = _EMPTY
        self.task = None


class _CheckpointFrame:
    def __init__(self, recompute_fn, early_stop, metadata_fn):
        self.recompute_fn = recompute_fn
        self.saved_args = []
        self.weak_holders = []
        self.x_metadatas = []
        self.early_stop = early_stop
        self.metadata_fn = metadata_fn
        self.forward_completed = False
        self.ignore_saved_mismatch = False
        self.recomp_counter = 0
        self.recomputed = {}        # holder index -> recomputed metadata, for the check

    def save_inputs(self, *args):
        self.saved_args = [SavedTensor(a) if isinstance(a, Tensor) else a for a in args]

    def get_inputs(self):
        return [a.unpack(None) if isinstance(a, SavedTensor) else a for a in self.saved_args]

    def recompute(self):
        """Runs the function again, filling every live holder with its recomputed tensor."""
        args = self.get_inputs()
        self.recomp_counter = 0
        self.recomputed = {}
        try:
            with _recomputation_hook(weakref.ref(self)), grad_mode.enable_grad():
                self.recompute_fn(*args)
        except _StopRecomputationError:
            pass
        self.check_recomputed_tensors_match()

    def check_recomputed_tensors_match(self):
        if self.ignore_saved_mismatch:
            return
        if len(self.weak_holders) != self.recomp_counter:
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved "
                "during the original forward and recomputation.\n"
                f"Number of tensors saved during forward: {len(self.weak_holders)}\n"
                f"Number of tensors saved during recomputation: {self.recomp_counter}.\n"
                f"{_debug_tip_msg}")
        different = []
        for idx, ref in enumerate(self.weak_holders):
            if ref() is None or idx not in self.recomputed:
                continue
            x_meta, meta = self.x_metadatas[idx], self.recomputed[idx]
            if x_meta != meta:
                different.append((idx, x_meta, meta))
        if different:
            text = "".join(f"tensor at position {idx}:\nsaved metadata: {a}\n"
                           f"recomputed metadata: {b}\n" for idx, a, b in different)
            raise CheckpointError(
                "torch.utils.checkpoint: Recomputed values for the following tensors "
                f"have different metadata than during the forward pass.\n{text}.\n"
                f"{_debug_tip_msg}")


class _recomputation_hook(saved_tensors_hooks):
    def __init__(self, frame_ref):
        def pack_hook(x):
            x = x.detach() if x.requires_grad else x
            frame = frame_ref()
            idx = frame.recomp_counter
            frame.recomp_counter += 1
            if idx >= len(frame.weak_holders):
                if not frame.forward_completed:
                    # a backward inside the checkpointed forward (early stop off)
                    frame.ignore_saved_mismatch = True
                    return x
                raise CheckpointError(
                    "torch.utils.checkpoint: trying to save more tensors during "
                    f"recomputation than during the original forward pass.\n{_debug_tip_msg}")
            holder = frame.weak_holders[idx]()
            if holder is not None:      # None: freed by an earlier backward
                holder.value = x
                holder.task = _engine.current_graph_task()
                frame.recomputed[idx] = frame.metadata_fn(x)
            if frame.early_stop and frame.recomp_counter == len(frame.weak_holders):
                raise _StopRecomputationError
            return x

        def unpack_hook(x):
            return x

        super().__init__(pack_hook, unpack_hook)


class _checkpoint_hook(saved_tensors_hooks):
    def __init__(self, frame):
        def pack_hook(x):
            holder = _Holder()
            frame.weak_holders.append(weakref.ref(holder))
            frame.x_metadatas.append(frame.metadata_fn(x))
            return holder

        def unpack_hook(holder):
            if holder.value is _EMPTY or holder.task is not _engine.current_graph_task():
                # first unpack of this backward: recompute all at once. The value stays
                # for the rest of this backward, since a node may unpack a saved tensor
                # once per formula that reads it; the graph frees it with the node (with
                # retain_graph=True, a later backward recomputes over it)
                frame.recompute()
                if holder.value is _EMPTY:
                    raise AssertionError(
                        "Something went unexpectedly wrong in activation checkpoint. "
                        "Please report this bug by filing an issue to PyTorch.")
            return holder.value

        super().__init__(pack_hook, unpack_hook)


def _checkpoint_without_reentrant_generator(fn, preserve_rng_state=True,
                                            context_fn=noop_context_fn,
                                            determinism_check=_DEFAULT_DETERMINISM_MODE,
                                            debug=False, early_stop=True, *args, **kwargs):
    if _checkpoint_debug_enabled if _checkpoint_debug_enabled is not None else debug:
        if context_fn is not noop_context_fn:
            raise ValueError("debug=True is incompatible with non-default context_fn")
        # no operator logs to add here: the errors are raised without them
    if determinism_check in _allowed_determinism_checks_to_fns:
        metadata_fn = _allowed_determinism_checks_to_fns[determinism_check]
    else:
        raise ValueError(
            "determinism_check should be one of "
            f"{list(_allowed_determinism_checks_to_fns.keys())}, but got {determinism_check}")
    device_type = _infer_device_type(*args)
    forward_context, recompute_context = context_fn()
    device_kwargs, cpu_kwargs = _get_autocast_kwargs(device_type)
    had_device_in_fwd = False
    if preserve_rng_state:
        fwd_cpu_state = _get_cpu_rng_state()
        if _device_initialized(device_type):
            had_device_in_fwd = True
            fwd_devices, fwd_device_states = get_device_states(*args)

    def recompute_fn(*inputs):
        rng_devices = fwd_devices if preserve_rng_state and had_device_in_fwd else []
        with _fork_rng(rng_devices, preserve_rng_state, device_type):
            if preserve_rng_state:
                _set_cpu_rng_state(fwd_cpu_state)
                if had_device_in_fwd:
                    set_device_states(fwd_devices, fwd_device_states, device_type=device_type)
            dev_ac, cpu_ac = _autocast_contexts(device_type, device_kwargs, cpu_kwargs)
            with dev_ac, cpu_ac, recompute_context:
                fn(*inputs, **kwargs)

    early = (_enable_checkpoint_early_stop if _enable_checkpoint_early_stop is not None
             else early_stop)
    frame = _CheckpointFrame(recompute_fn, early, metadata_fn)
    if not grad_mode.is_grad_enabled():
        yield
        return
    frame.save_inputs(*args)
    suppressed = False
    with _checkpoint_hook(frame), forward_context:
        try:
            yield
        except BaseException:
            suppressed = True
            raise
    if suppressed:
        raise RuntimeError(
            "torch.utils.checkpoint: the forward context provided by "
            "context_fn suppressed an exception raised during the "
            "checkpointed forward. This is not supported because checkpoint "
            "cannot return a value for a failed forward.")
    frame.forward_completed = True
    if _device_initialized(device_type) and preserve_rng_state and not had_device_in_fwd:
        raise RuntimeError(
            "PyTorch's device state was initialized in the forward pass "
            "of a Checkpoint, which is not allowed. Please open an issue "
            "if you need this feature.")
