"""framework.cuda: devices, memory and streams of the GPU backend (the GPU issue fills this
in). Without a GPU, ``is_available()`` is False and moving a tensor to cuda raises."""


def is_available():
    """Whether a CUDA device (or the simulator) can be used."""
    return False


def device_count():
    return 0


def current_device():
    _lazy_init()
    return 0


def _lazy_init():
    raise RuntimeError("Found no NVIDIA driver on your system. Please check that you have an "
                       "NVIDIA GPU and installed a driver")


def alloc_storage(nbytes, device):
    _lazy_init()


def transfer(x, device, non_blocking=False):
    """Copies a tensor between the host and a GPU."""
    if device.type == "cuda":
        _lazy_init()
    raise RuntimeError(f"cannot move a tensor from {x.device} to {device}")


def synchronize(device=None):
    pass
