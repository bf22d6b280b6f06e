"""Pickling of tensors for multiprocessing: the storage moves to shared memory and only a
handle of it crosses the process boundary, with the tensor's shape, strides, offset,
dtype and ``requires_grad`` (PyTorch's torch/multiprocessing/reductions.py). Gradients
and hooks do not travel. ForkingPickler dispatches on the exact class: Tensor and
nn.Parameter are registered; other subclasses pickle by value (a copy)."""
from multiprocessing.reduction import ForkingPickler

from .. import _dtype, _shared_memory
from .._tensor import Tensor

_NON_LEAF = ("Cowardly refusing to serialize non-leaf tensor which requires_grad, since "
             "autograd does not support crossing process boundaries.  If you just want to "
             "transfer the data, call detach() on the tensor before serializing (e.g., "
             "putting it on the queue).")


def reduce_tensor(t):
    """ForkingPickler's reducer of a Tensor (or Parameter): a shared-memory handle."""
    if t._requires_grad and t._grad_fn is not None:
        raise RuntimeError(_NON_LEAF)
    storage = t._storage
    kind = storage.device.type
    if kind == "cuda":
        from ..cuda import _runtime
        if _runtime.mode() != "sim":
            # a real GPU would need CUDA IPC (cuIpcGetMemHandle), which is not written
            raise RuntimeError("sharing CUDA tensors between processes (CUDA IPC) is not "
                               "supported; move the tensor to the cpu first")
    elif kind != "cpu":
        raise RuntimeError(f"cannot share a tensor on device '{storage.device}' between "
                           "processes")
    handle = _shared_memory.storage_handle(storage)
    return (rebuild_tensor, (type(t), handle, t._shape, t._stride, t._offset, t.dtype.name,
                             t._requires_grad))


def rebuild_tensor(cls, handle, shape, stride, offset, dtype_name, requires_grad):
    """A tensor over the shared storage of ``handle`` (views of one storage received in
    one process share one Storage again)."""
    storage = _shared_memory.storage_from_handle(handle)
    t = Tensor._make(storage, shape, stride, offset, _dtype._by_name(dtype_name))
    if cls is not Tensor:      # nn.Parameter and its subclasses
        return cls(t, requires_grad)
    if requires_grad:
        t.requires_grad_(True)
    return t


def init_reductions():
    """Registers the reducers with multiprocessing's ForkingPickler, which every queue,
    pipe, pool and manager of every context pickles with (as torch does at import)."""
    from ..nn.parameter import Parameter
    for cls in (Tensor, Parameter):
        ForkingPickler.register(cls, reduce_tensor)
