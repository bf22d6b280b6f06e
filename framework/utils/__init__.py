"""framework.utils: data loading (``utils.data``), DLPack (``utils.dlpack``), safetensors
(``utils.safetensors``) and the deterministic mode's fill switch (``utils.deterministic``)."""
import importlib as _importlib

_SUBMODULES = ("data", "deterministic", "dlpack", "safetensors")


def __getattr__(name):
    # submodules load on first use: ``import framework`` stays fast
    if name in _SUBMODULES:
        return _importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
