"""Random number generators: ``Generator``, ``manual_seed``, ``seed``, RNG state.

Every device draws from the same counter-based generator, Philox 4x32-10: a generator is a
``(seed, offset)`` pair, and an op that needs ``n`` random counters takes
``offset .. offset + n - 1`` and advances the offset by ``n``. Results therefore depend
only on the seed and the sequence of calls, never on threads or GPU block sizes, and a CPU
tensor and a CUDA tensor drawn from equal generator states hold the same numbers (see
native/random.cpp and framework/kernels/random.py for the exact formulas).

Differences from PyTorch: the numbers differ from PyTorch's (its CPU generator is a
Mersenne Twister); a state is 16 bytes (seed and offset, as PyTorch's CUDA state) on every
device.
"""
import contextlib
import operator
import os
import struct

from ._device import CPU, canonical

__all__ = ["Generator", "manual_seed", "seed", "initial_seed", "get_rng_state",
           "set_rng_state", "fork_rng", "default_generator", "thread_safe_generator"]

_MASK = (1 << 64) - 1
DEFAULT_SEED = 67280421310721  # PyTorch's default seed


def _check_seed(value, where="manual_seed"):
    """A seed as uint64; negative seeds wrap, as in PyTorch."""
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise RuntimeError(f"{where} expected a long, but got {type(value).__name__}")
    value = operator.index(value)
    if not -(1 << 63) <= value <= _MASK:
        raise ValueError("Overflow when unpacking long long")
    return value & _MASK


def _nondeterministic_seed():
    return int.from_bytes(os.urandom(8), "little")


class Generator:
    """A Philox 4x32-10 generator for one device: a seed and a counter offset.

    ``Generator(device="cpu")``; ``manual_seed(s)`` sets the seed and restarts the counter;
    ``get_state()``/``set_state()`` save and restore both as a 16-byte uint8 tensor.
    """

    def __init__(self, device="cpu"):
        self._device = canonical(device) if device is not None else CPU
        if self._device.type not in ("cpu", "cuda"):
            raise RuntimeError(f"{self._device.type.upper()} device type not an accelerator.")
        self._seed = DEFAULT_SEED
        self._offset = 0

    @property
    def device(self):
        """The device this generator's numbers are for."""
        return self._device

    def manual_seed(self, seed):
        """Sets the seed (negative seeds wrap to uint64) and restarts the counter. Returns self."""
        self._seed = _check_seed(seed)
        self._offset = 0
        return self

    def seed(self):
        """Seeds from the operating system's entropy; returns the new seed."""
        self._seed = _nondeterministic_seed()
        self._offset = 0
        return self._seed

    def initial_seed(self):
        """The seed this generator was last seeded with."""
        return self._seed

    def get_offset(self):
        """The next unused Philox counter."""
        return self._offset

    def set_offset(self, offset):
        self._offset = int(offset) & _MASK
        return self

    def get_state(self):
        """The state as a uint8 CPU tensor of 16 bytes: seed and offset, little-endian."""
        from ._ops.creation import tensor
        from . import _dtype
        return tensor(list(struct.pack("<QQ", self._seed, self._offset)), dtype=_dtype.uint8)

    def set_state(self, new_state):
        """Restores a state returned by ``get_state()``. Returns self."""
        from ._tensor import Tensor
        from . import _dtype
        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
        if new_state.dtype is not _dtype.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        if new_state.numel() != 16:
            raise RuntimeError(f"Expected a PhiloxGeneratorState of size 16 but found the input "
                               f"RNG state size to be {new_state.numel()}")
        data = bytes(int(b) for b in new_state.reshape(-1).tolist())
        self._seed, self._offset = struct.unpack("<QQ", data)
        return self

    def clone_state(self):
        g = Generator(self._device)
        g._seed, g._offset = self._seed, self._offset
        return g

    def graphsafe_get_state(self):
        """The state as a Generator, for CUDA graph capture (cuda generators only).
        Unlike PyTorch's, it is a snapshot rather than a view of this generator's state."""
        if self._device.type != "cuda":
            raise NotImplementedError("graphsafe_get_state is not supported in this Generator")
        return self.clone_state()

    def graphsafe_set_state(self, state):
        """Sets the state from a Generator returned by ``graphsafe_get_state``."""
        if self._device.type != "cuda":
            raise NotImplementedError("graphsafe_set_state is not supported in this Generator")
        if not isinstance(state, Generator):
            raise TypeError(f"graphsafe_set_state(): argument 'state' must be Generator, not "
                            f"{type(state).__name__}")
        self._seed, self._offset = state._seed, state._offset

    def _take(self, n):
        """Reserves ``n`` counters; returns (seed, first counter)."""
        if _draw_hook is not None:      # vmap(randomness="error") refuses random ops
            _draw_hook()
        start = self._offset
        self._offset = (start + n) & _MASK
        return self._seed, start

    def __repr__(self):
        return f"<framework.Generator object (device='{self._device}')>"

    def __getstate__(self):
        return {"device": str(self._device), "seed": self._seed, "offset": self._offset}

    def __setstate__(self, state):
        self._device = canonical(state["device"])
        self._seed, self._offset = state["seed"], state["offset"]


_draw_hook = None   # set by framework.func.vmap: called before every draw

default_generator = Generator(CPU)
_defaults = {CPU: default_generator}
_pending_seed = [None]  # a manual_seed for generators of devices not yet used


def get_generator(device):
    """The default generator of a device (created on first use)."""
    g = _defaults.get(device)
    if g is None:
        g = Generator(device)
        if _pending_seed[0] is not None:
            g._seed = _pending_seed[0]
        _defaults[device] = g
    return g


def resolve(generator, device):
    """The generator an op on ``device`` draws from: ``generator`` (checked) or the default."""
    if generator is None:
        return get_generator(device)
    if not isinstance(generator, Generator):
        raise TypeError(f"expected a framework.Generator, but got {type(generator).__name__}")
    if generator._device.type != device.type:
        raise RuntimeError(f"Expected a '{device.type}' device type for generator but found "
                           f"'{generator._device.type}'")
    return generator


def manual_seed(seed):
    """Sets the seed of the default generator of every device. Returns the CPU generator."""
    # torch.manual_seed converts with int() first: manual_seed('a') is int()'s ValueError
    value = _check_seed(seed if hasattr(seed, "__index__") else int(seed))
    _pending_seed[0] = value
    for g in _defaults.values():
        g._seed, g._offset = value, 0
    return default_generator


def seed():
    """Seeds every default generator from the operating system's entropy; returns the seed."""
    value = _nondeterministic_seed()
    manual_seed(value)
    return value


def initial_seed():
    """The initial seed of the default CPU generator."""
    return default_generator.initial_seed()


def get_rng_state():
    """The state of the default CPU generator (a uint8 tensor)."""
    return default_generator.get_state()


def set_rng_state(new_state):
    """Restores the state of the default CPU generator."""
    default_generator.set_state(new_state)


def thread_safe_generator():
    """The worker's thread-local Generator inside a DataLoader thread worker; None
    elsewhere (the default generator is then used)."""
    from .utils.data import get_worker_info
    info = get_worker_info()
    if info is not None and getattr(info, "worker_method", None) == "thread" \
            and getattr(info, "rng", None) is not None:
        return info.rng.torch_generator
    return None


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices",
             device_type="cuda"):  # noqa: ARG001 (PyTorch's signature)
    """Saves the default generators' states and restores them on exit."""
    if not enabled:
        yield
        return
    saved = {d: (g._seed, g._offset) for d, g in _defaults.items()}
    try:
        yield
    finally:
        for d, (s, o) in saved.items():
            _defaults[d]._seed, _defaults[d]._offset = s, o
