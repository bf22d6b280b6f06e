"""``framework.cuda``'s random-number state: the default generator of each cuda device
(framework.random's Philox generators), seeded, saved and restored as PyTorch's
``torch.cuda.random`` does."""
from .. import random as _random
from .._device import canonical, device as _device


def _dev(device="cuda"):
    """A cuda device from an index, a string or a device ('cuda': the current one)."""
    if isinstance(device, int):
        return _device("cuda", device)
    return canonical(device)


def _all():
    from . import device_count
    return [_random.get_generator(_device("cuda", i)) for i in range(device_count())]


def get_rng_state(device="cuda"):
    """The random number generator state of a cuda device, as a uint8 CPU tensor."""
    return _random.get_generator(_dev(device)).get_state()


def get_rng_state_all():
    """The states of every cuda device's generator."""
    return [g.get_state() for g in _all()]


def set_rng_state(new_state, device="cuda"):
    """Restores the generator state of a cuda device."""
    _random.get_generator(_dev(device)).set_state(new_state)


def set_rng_state_all(new_states):
    """Restores every cuda device's generator state, in device order."""
    for g, state in zip(_all(), new_states):
        g.set_state(state)


def manual_seed(seed):
    """Seeds the generator of the current cuda device."""
    _random.get_generator(_dev()).manual_seed(seed)


def manual_seed_all(seed):
    """Seeds the generators of every cuda device."""
    for g in _all():
        g.manual_seed(seed)


def seed():
    """Seeds the current cuda device's generator from the operating system's entropy."""
    _random.get_generator(_dev()).seed()


def seed_all():
    """Seeds every cuda device's generator with one new random seed."""
    value = _random.get_generator(_dev()).seed()
    manual_seed_all(value)


def initial_seed():
    """The seed of the current cuda device's generator."""
    return _random.get_generator(_dev()).initial_seed()
