"""Selective activation checkpointing (PyTorch's ``create_selective_checkpoint_contexts``):
inside ``checkpoint(fn, ..., use_reentrant=False, context_fn=...)``, a policy picks the ops
whose outputs are kept from the forward pass instead of being computed again in backward.

PyTorch sees ops at its dispatcher through ``TorchDispatchMode``. Here the two contexts put
wrappers where the profiler puts its recording wrappers (framework/profiler/_record.py
``targets``/``Patches``), only while they are entered; each call of an op from user code
(not the ops it calls itself) is one ATen op, named as PyTorch's dispatcher would name it
(``matmul`` of two matrices is ``aten.mm``, ``F.linear`` with a bias ``aten.addmm``: the
translation FlopCounterMode uses).

How a saved op stays consistent with the checkpoint's saved-tensor bookkeeping: in the
forward pass a saved op runs with the checkpoint's pack hook lifted, so what its own
autograd node keeps is stored for real; in the recomputation it returns its cached output
and records nothing, so both passes pack the same tensors. Known divergence: PyTorch keeps
the op's output and recomputes the op's own saved inputs; this keeps the output and the
op's saved inputs (more memory, the same values and gradients).
"""
import enum
import functools
import types
from collections import defaultdict

from .._tensor import Tensor
from ._pytree import tree_map

__all__ = ["CheckpointPolicy", "SelectiveCheckpointContext",
           "create_selective_checkpoint_contexts"]


class CheckpointPolicy(enum.Enum):
    """What a selective checkpoint policy returns for an op.

    - ``{MUST,PREFER}_SAVE``: the op's output is saved during the forward pass and not
      recomputed during the backward pass.
    - ``{MUST,PREFER}_RECOMPUTE``: the op's output is not saved and is recomputed during
      the backward pass.
    - ``{MUST,PREFER}_CPU_OFFLOAD``: PyTorch's offload to host memory (treated as
      recompute here).

    ``MUST_*`` over ``PREFER_*`` says that other subsystems (``torch.compile``) must not
    override the choice.
    """

    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


class SelectiveCheckpointContext:
    """Context passed to the policy function during selective checkpointing.

    The policy function is only called during the forward pass; ``is_recompute`` is
    always ``False`` (deprecated). ``op_output`` is ``None`` here: the policy is asked
    before the op runs (PyTorch asks after, with the op's output)."""

    def __init__(self, *, is_recompute, op_output=None):
        self.is_recompute = is_recompute
        self.op_output = op_output


def _policy_from_bool(b):
    return CheckpointPolicy.MUST_SAVE if b else CheckpointPolicy.PREFER_RECOMPUTE


_SAVE = (CheckpointPolicy.MUST_SAVE, CheckpointPolicy.PREFER_SAVE)
# PyTorch's attention on each backend: a policy naming any of them means sdpa
_ATTENTION = frozenset(f"aten._scaled_dot_product_{k}_attention" for k in
                       ("flash", "efficient", "cudnn", "flash_attention_for_cpu"))


def _packet(op):
    """``"aten.mm"`` of ``ops.aten.mm.default`` (of any object whose str is the op)."""
    text = str(op)
    ns, _, rest = text.partition(".")
    return f"{ns}.{rest.partition('.')[0]}" if rest else text


class _Op:
    """The op a policy receives: equal to ``framework.ops.aten.<name>.<any overload>``
    (and to ``torch.ops.aten.<name>.<overload>``, by its text)."""

    __slots__ = ("packet", "overload")

    def __init__(self, packet, overload="default"):
        self.packet, self.overload = packet, overload

    def __eq__(self, other):
        if isinstance(other, _Op):
            return self.packet == other.packet
        if isinstance(other, str) or not hasattr(other, "__call__"):
            return NotImplemented
        p = _packet(other)
        return p == self.packet or (self.packet in _ATTENTION and p in _ATTENTION)

    def __hash__(self):
        return hash(self.packet)

    def __str__(self):
        return f"{self.packet}.{self.overload}"

    def __repr__(self):
        return f"<OpOverload(op='{self.packet}', overload='{self.overload}')>"


_STATIC = {"aten::mm": "aten.mm", "aten::bmm": "aten.bmm", "aten::addmm": "aten.addmm",
           "aten::addmm_": "aten.addmm", "aten::baddbmm": "aten.baddbmm",
           "aten::baddbmm_": "aten.baddbmm",
           "aten::scaled_dot_product_attention": "aten._scaled_dot_product_flash_attention"}
_OVERLOADS = {"aten.add": "Tensor", "aten.sub": "Tensor", "aten.mul": "Tensor",
              "aten.div": "Tensor"}


def _aten_op(event, args, kwargs):
    """The ATen op PyTorch's dispatcher would see for this call of the binding ``event``."""
    from ._flop_ops import TRANSLATORS
    name = _STATIC.get(event)
    if name is None and event in TRANSLATORS:
        if "conv" in event:
            name = "aten.convolution"
        else:
            fwd, _ = TRANSLATORS[event](None, *args, **kwargs)
            name = fwd[0][0] if fwd else None
    if name is None:
        name = event.replace("::", ".", 1)
    return _Op(name, _OVERLOADS.get(name, "default"))


class _Version:
    """A cached value and the version it had (mutating it is an error by default)."""

    __slots__ = ("val", "version", "requires_grad")

    def __init__(self, val):
        is_tensor = isinstance(val, Tensor)
        self.requires_grad = is_tensor and val.requires_grad
        self.val = val.detach() if is_tensor else val
        self.version = self.val._version if is_tensor else None

    def get_val(self, allow_cache_entry_mutation):
        if self.version is not None and not allow_cache_entry_mutation:
            if self.val._version != self.version:
                raise RuntimeError(
                    "Tensor cached during selective activation checkpoint has been mutated")
        if self.requires_grad:
            # the recomputation's ops after this one must record (and pack) as in forward;
            # its graph is thrown away, so a fresh leaf stands for the op's node
            return self.val.detach().requires_grad_(True)
        return self.val


_RECOMPUTE = object()
_CONSUMED = object()
_MISMATCH = ("This can happen if the operations in the checkpointed region are "
             "nondeterministic or depend on global state that changed between forward and "
             "backward.")


class _OpMode:
    """Wraps the op bindings while entered; ``handle(event, fn, args, kwargs)`` runs each
    outermost call."""

    def __init__(self, events):
        self.events = events            # None: every binding
        self.patches = None
        self.depth = 0

    def handle(self, event, fn, args, kwargs):
        raise NotImplementedError

    def _wrap(self, fn, event):
        mode = self

        def wrapped(*args, **kwargs):
            if mode.depth or mode.patches is None or event == "aten::detach":
                return fn(*args, **kwargs)
            mode.depth += 1
            try:
                return mode.handle(event, fn, args, kwargs)
            finally:
                mode.depth -= 1
        functools.update_wrapper(wrapped, fn)
        return wrapped

    def __enter__(self):
        import framework.nn.functional as F
        from ..profiler._record import Patches, module_functions, targets
        patches, wrapped = Patches(), {}
        try:
            for owner, attr, event in targets():
                if self.events is not None and event not in self.events:
                    continue
                fn = vars(owner).get(attr)
                if not isinstance(fn, types.FunctionType):
                    continue
                w = wrapped.get(fn)
                if w is None:
                    w = wrapped[fn] = self._wrap(fn, event)
                patches.set(owner, attr, w)
            for attr, fn in list(vars(F).items()):
                if isinstance(fn, types.FunctionType) and fn in wrapped:
                    patches.set(F, attr, wrapped[fn])
            for cls, attr, fn in module_functions():
                if fn in wrapped:
                    patches.set(cls, attr, staticmethod(wrapped[fn]))
        except BaseException:
            patches.restore()
            raise
        self.patches = patches
        return self

    def __exit__(self, *exc):
        patches, self.patches = self.patches, None
        if patches is not None:
            patches.restore()


class _CachingMode(_OpMode):
    """The forward pass: runs each op, asks the policy, caches the outputs to save."""

    def __init__(self, policy_fn, storage, events):
        super().__init__(events)
        self.policy_fn, self.storage = policy_fn, storage
        self.counter = defaultdict(int)

    def __enter__(self):
        from ..autograd.graph import _hooks
        self.hook_stack = _hooks.stack      # the checkpoint's pack hook on top
        return super().__enter__()

    def handle(self, event, fn, args, kwargs):
        from ..autograd.graph import _hooks
        op = _aten_op(event, args, kwargs)
        key = (event, op.packet)
        idx = self.counter[key]
        self.counter[key] += 1
        # asked before the op runs (op_output is None): a saved op must run with the
        # checkpoint's pack hook lifted, so that what its node keeps does not wait for a
        # recomputation that will not run it
        policy = self.policy_fn(SelectiveCheckpointContext(is_recompute=False), op,
                                *args, **kwargs)
        if isinstance(policy, bool):
            policy = _policy_from_bool(policy)
        if policy not in _SAVE:
            self.storage[key][idx] = _RECOMPUTE
            return fn(*args, **kwargs)
        stack, top = _hooks.stack, self.hook_stack
        lift = bool(top) and stack[:len(top)] == top
        if lift:
            _hooks.stack = top[:-1]
        try:
            out = fn(*args, **kwargs)
        finally:
            if lift:
                _hooks.stack = stack
        self.storage[key][idx] = tree_map(_Version, out)
        return out


class _CachedMode(_OpMode):
    """The recomputation: returns the cached outputs instead of running those ops."""

    def __init__(self, storage, allow_cache_entry_mutation, events):
        super().__init__(events)
        self.storage = storage
        self.allow_cache_entry_mutation = allow_cache_entry_mutation
        self.counter = defaultdict(int)

    def __enter__(self):
        self.counter.clear()
        return super().__enter__()

    def handle(self, event, fn, args, kwargs):
        op = _aten_op(event, args, kwargs)
        key = (event, op.packet)
        idx = self.counter[key]
        self.counter[key] += 1
        entries = self.storage.get(key)
        if entries is None:
            raise RuntimeError(f"{op} encountered during backward but not found in "
                               f"storage. {_MISMATCH}")
        entry = entries.get(idx)
        if entry is None:
            raise RuntimeError(f"{op} invocation index {idx} encountered during backward "
                               f"but not found in storage. {_MISMATCH}")
        if entry is _CONSUMED:
            raise RuntimeError(
                "Trying to backward an extra time. You are only allowed to backward once "
                "on any region computed under selective activation checkpoint.")
        if entry is _RECOMPUTE:
            return fn(*args, **kwargs)
        entries[idx] = _CONSUMED
        return tree_map(lambda v: v.get_val(self.allow_cache_entry_mutation), entry)


def _is_op_overload(op):
    from ..library._registry import OpOverload, _AtenOp
    return isinstance(op, OpOverload) or (isinstance(op, _AtenOp) and op._overload is not None)


def _is_packet(op):
    from ..library._registry import OpOverloadPacket, _AtenOp
    return isinstance(op, OpOverloadPacket) or (isinstance(op, _AtenOp) and op._overload is None)


def _events_for(packets):
    """The bindings whose calls can be one of the ATen ops ``packets``: their own names,
    and the products that translate to another ATen op (matmul, linear, conv...)."""
    from ._flop_ops import TRANSLATORS
    events = set(TRANSLATORS) | set(_STATIC)
    events.update("aten::" + p.partition(".")[2] for p in packets)
    return frozenset(events)


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    """Helper to avoid recomputing certain ops during activation checkpointing; use it
    with ``framework.utils.checkpoint.checkpoint(..., use_reentrant=False,
    context_fn=functools.partial(create_selective_checkpoint_contexts, policy))``.

    Args:
        policy_fn_or_list (Callable or List): a function
            ``policy_fn(ctx, op, *args, **kwargs)`` returning a :class:`CheckpointPolicy`
            for each op (``ctx`` a :class:`SelectiveCheckpointContext`, ``op`` the
            ``OpOverload``); or a list of ops, which means ``MUST_SAVE`` for them and
            ``PREFER_RECOMPUTE`` for every other op.
        allow_cache_entry_mutation (bool, optional): by default, an error is raised if
            any tensor cached by selective activation checkpoint is mutated; ``True``
            disables the check.

    Returns:
        A tuple of two context managers (the forward's and the recomputation's).
    """
    events = None
    if isinstance(policy_fn_or_list, list):
        for op in policy_fn_or_list:
            if not _is_op_overload(op):
                extra = ("Please update the OpOverloadPacket to a specific OpOverload."
                         "For example, if you have `torch.ops.aten.mm`, change it to "
                         "`torch.ops.aten.mm.default`.") if _is_packet(op) else ""
                raise ValueError(f"Expected op in `op_list` to be an OpOverload but got: "
                                 f"{op} of type {type(op)}. {extra}")
        saved = [_Op(_packet(op)) for op in policy_fn_or_list]
        events = _events_for(op.packet for op in saved)

        def policy_fn(ctx, op, *args, **kwargs):
            if op in saved:
                return CheckpointPolicy.MUST_SAVE
            return CheckpointPolicy.PREFER_RECOMPUTE
    elif callable(policy_fn_or_list):
        policy_fn = policy_fn_or_list
    else:
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    storage = defaultdict(dict)
    return (_CachingMode(policy_fn, storage, events),
            _CachedMode(storage, allow_cache_entry_mutation, events))
