"""The functions torch keeps in ``torch.functional`` (all also at the top level)."""
import framework as _fw

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes", "broadcast_tensors",
           "cartesian_prod", "block_diag", "cdist", "chain_matmul", "einsum", "istft", "lu",
           "norm", "meshgrid", "pca_lowrank", "split", "stft", "svd_lowrank", "tensordot",
           "unique", "unique_consecutive", "unravel_index"]


def __getattr__(name):
    # looked up on use: the top-level names are set up after this module can be imported
    if name in __all__:
        return getattr(_fw, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
