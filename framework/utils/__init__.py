"""framework.utils: data loading (``utils.data``), DLPack (``utils.dlpack``), safetensors
(``utils.safetensors``), the deterministic mode's fill switch (``utils.deterministic``),
activation checkpointing (``utils.checkpoint``), pytrees (``utils._pytree``) and hook
helpers (``utils.hooks``) and TensorBoard logging (``utils.tensorboard``)."""
import importlib as _importlib

_SUBMODULES = ("_pytree", "checkpoint", "data", "deterministic", "dlpack", "hooks",
               "safetensors", "tensorboard", "module_tracker", "weak", "collect_env",
               "throughput_benchmark")


def __getattr__(name):
    # submodules load on first use: ``import framework`` stays fast
    if name in _SUBMODULES:
        return _importlib.import_module(f"{__name__}.{name}")
    if name == "ThroughputBenchmark":
        return _importlib.import_module(f"{__name__}.throughput_benchmark").ThroughputBenchmark
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
