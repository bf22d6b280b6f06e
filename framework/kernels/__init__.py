"""The cuda backend: Triton kernels and their launchers, one module per kernel family with
the names and arguments of the CPU backend (framework/_cpu). Ops reach them as
``backend(device).<family>.<kernel>``; families are imported on first use."""
import importlib

FAMILIES = ("copy", "pointwise", "reduction", "sort", "index", "linalg", "random", "shape",
            "softmax", "conv", "conv_gemm", "pool", "optim", "amp", "loss", "norm", "attention",
            "dropout", "embedding", "sampling", "fused_linear", "grad_norm",
            "grouped_mm")


def __getattr__(name):
    if name in FAMILIES:
        mod = importlib.import_module(f"{__name__}.{name}")
        globals()[name] = mod
        return mod
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
