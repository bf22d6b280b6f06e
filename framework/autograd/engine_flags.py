"""Per-thread engine switches torch exposes: multithreaded backward, view replay and the
gradient layout policy. The engine runs backward on the calling thread and accumulates
gradients in the parameter's layout, so these are recorded and reported, and change
nothing it does."""
import threading

from .grad_mode import _DecoratorContextManager

__all__ = ["is_multithreading_enabled", "set_multithreading_enabled",
           "is_view_replay_enabled", "enforce_grad_layout_policy",
           "is_grad_layout_policy_enforced"]


class _Flags(threading.local):
    multithreading = True
    view_replay = False
    grad_layout = True


_flags = _Flags()


def is_multithreading_enabled():
    """Whether multithreaded backward is enabled (the default)."""
    return _flags.multithreading


def is_view_replay_enabled():
    """Whether views are replayed (rather than as_strided) in autograd: always False."""
    return _flags.view_replay


def is_grad_layout_policy_enforced():
    """Whether the gradient layout contract is enforced (the default)."""
    return _flags.grad_layout


class _SetFlag(_DecoratorContextManager):
    _name = None

    def __init__(self, mode):
        self.prev = getattr(_flags, self._name)
        self.mode = bool(mode)
        setattr(_flags, self._name, self.mode)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        setattr(_flags, self._name, self.prev)
        return False

    def clone(self):
        return type(self)(self.mode)


class set_multithreading_enabled(_SetFlag):
    """Context-manager (or function) that enables or disables multithreaded backward."""
    _name = "multithreading"


class enforce_grad_layout_policy(_SetFlag):
    """Context-manager (or function) that controls the gradient layout policy
    enforcement."""
    _name = "grad_layout"
