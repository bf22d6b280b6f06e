"""The pytree functions the transforms use: framework.utils._pytree's (PyTorch's
torch.utils._pytree), so that error messages print its TreeSpecs."""
from ..utils._pytree import (  # noqa: F401
    _broadcast_to_and_flatten as broadcast_to_and_flatten, tree_flatten, tree_leaves,
    tree_map, tree_unflatten,
)
