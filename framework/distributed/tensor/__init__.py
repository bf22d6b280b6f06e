"""Distributed tensors (PyTorch's ``torch.distributed.tensor``): a ``DTensor`` is laid out
over a ``DeviceMesh`` by one placement per mesh dimension, ``Shard(dim)``, ``Replicate()``
or ``Partial(reduce_op)``; ``redistribute`` moves it between placements with collectives
(all-gather, reduce-scatter, all-reduce, local chunking), differentiably.

Differences from PyTorch:

- A DTensor is a ``framework.Tensor`` whose storage fields are its local shard, with the
  global shape in its spec (``shape``, ``size()``, ``dim()``, ``len()`` are global;
  ``numel()`` is the local count, which the native launchers, fused optimizer steps
  included, size their loops with; use ``dt.shape.numel()`` for the global one). There
  is no ``__torch_dispatch__``: DTensor methods and operators (``a + b``, ``a @ b``,
  ``a.sum()``) run as DTensor ops, and free functions (``framework.add(a, b)``,
  ``F.gelu(a)``, ``F.linear``) reach them through ``DTensor.__torch_function__``, turned
  on when the first DTensor is made (``_dispatch``). Free functions that are in-place,
  private (``framework._foreach_*``) or given ``out=`` run on the local shard, as do Tensor
  methods called unbound (``Tensor.add_(dt, g)``).
- In-place methods (``add_``, ``mul_``, ``copy_``, ``zero_``, ...) update the local shard
  as it is (what an optimizer step on same-placement parameters and gradients needs); they
  do not redistribute. Optimizer states are plain local tensors.
- Sharding rules exist for elementwise ops, pointwise activations, matmul/mm/linear,
  transpose/t, sum/mean, ``*_like``; every other Tensor method and free function gathers
  its DTensor inputs (Replicate) and runs on the full tensors, with a one-time warning per
  op (PyTorch raises for ops without a rule).
- ``nn.utils.clip_grad_norm_`` over DTensor gradients takes the global norm where it runs
  per tensor (its norms gather, with a warning); its native multi-tensor kernels, where
  taken, read the local shards.
  ``__setitem__`` refuses (it would index the local shard with global indices).
- Triton's interpreter (simulated cuda) is shown the local ``size()``/``stride()`` of a
  DTensor passed straight to a kernel (an optimizer step does), since its storage holds
  only the local shard.
- ``SequenceParallel`` takes the sequence shards to be even; the gradient of a
  Shard(seq) -> Replicate gather is all-reduced then chunked (PyTorch: reduce-scatter).
- ``distribute_tensor`` does not broadcast from ``src_data_rank``: every rank must pass the
  same full tensor. ``from_local`` without ``shape`` assumes even shards, as PyTorch.
- Shard -> Shard(other dim) goes through Replicate (all-gather, then chunk) instead of an
  all-to-all; ``async_op``, ``forward_dtype``/``backward_dtype`` and ``grad_placements``
  are accepted and ignored; the DeviceMesh must stay the same in ``redistribute``.
"""
from .placement_types import Partial, Placement, Replicate, Shard  # noqa: F401
from ._api import DTensor, distribute_module, distribute_tensor  # noqa: F401
from . import _ops  # noqa: F401  (installs the DTensor methods)
from . import _dispatch  # noqa: F401  (and its __torch_function__)
from ._factory import empty, full, ones, zeros  # noqa: F401
from ..device_mesh import DeviceMesh, init_device_mesh  # noqa: F401

__all__ = ["DTensor", "DeviceMesh", "distribute_tensor", "distribute_module",
           "init_device_mesh", "Shard", "Replicate", "Partial", "Placement", "zeros", "ones",
           "empty", "full"]
