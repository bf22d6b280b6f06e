"""NCCL's single-process collectives over one tensor per GPU (PyTorch's
``torch.cuda.nccl``): ``inputs[i]`` lives on GPU ``i`` and the result is what NCCL's
collective over those GPUs gives.

The framework binds NCCL for ``framework.distributed`` (one process per GPU,
framework/distributed/nccl_backend.py), not NCCL's single-process communicators: here the
collectives are device-to-device copies and sums on the framework's streams, which give
NCCL's values on any number of GPUs (and on the simulated device). ``streams`` and
``comms`` are accepted and not used; ``unique_id`` and ``init_rank`` raise."""
import collections.abc
import warnings

from .._tensor import Tensor

__all__ = ["all_reduce", "reduce", "broadcast", "all_gather", "reduce_scatter"]

SUM = 0  # ncclRedOp_t
_OPS = {0: "sum", 1: "prod", 2: "max", 3: "min", 4: "avg"}


def is_available(tensors):
    """Whether NCCL can run a collective over ``tensors``: dense contiguous cuda tensors on
    distinct devices, a GPU (not simulated) and the NCCL library."""
    from ..distributed import nccl_backend
    if not nccl_backend.is_available():
        return False
    devices = set()
    for t in tensors:
        if t.is_sparse or not t.is_contiguous() or not t.is_cuda:
            return False
        d = t.get_device()
        if d in devices:
            return False
        devices.add(d)
    return True


def version():
    """NCCL's version as a tuple (major, minor, patch); raises RuntimeError saying why
    when the library cannot be loaded."""
    from ..distributed import nccl_backend
    return tuple(nccl_backend.library().version)


def unique_id():
    raise RuntimeError("framework.cuda.nccl.unique_id: NCCL's single-process communicators "
                       "are not bound; use framework.distributed with backend='nccl'")


def init_rank(num_ranks, uid, rank):
    raise RuntimeError("framework.cuda.nccl.init_rank: NCCL's single-process communicators "
                       "are not bound; use framework.distributed with backend='nccl'")


def _check_sequence_type(inputs):
    if not isinstance(inputs, collections.abc.Container) or isinstance(inputs, Tensor):
        raise TypeError("Inputs should be a collection of tensors")


def _check(what, tensors, name="inputs"):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError(f"{what}: expected at least one tensor in {name}")
    devices = set()
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor) or not t.is_cuda:
            raise TypeError(f"{what}: {name}[{i}] must be a CUDA tensor, got "
                            f"{getattr(t, 'device', type(t).__name__)}")
        if not t.is_contiguous():
            raise RuntimeError(f"{what}: {name}[{i}] must be contiguous")
        if t.get_device() in devices:
            raise RuntimeError(f"{what}: {name} must be on distinct devices, device "
                               f"{t.get_device()} appears twice")
        devices.add(t.get_device())
        if t.dtype is not tensors[0].dtype:
            raise TypeError(f"{what}: all tensors must have the same dtype, got "
                            f"{tensors[0].dtype} and {t.dtype}")
    return tensors


def _combine(what, tensors, op, device):
    """The elementwise ``op`` over ``tensors``, on ``device``."""
    if op not in _OPS:
        raise ValueError(f"{what}: unknown reduction op {op} (ncclRedOp_t: 0 sum, 1 prod, "
                         "2 max, 3 min, 4 avg)")
    out = tensors[0].to(device, copy=True)
    for t in tensors[1:]:
        t = t.to(device)
        if op in (SUM, 4):
            out.add_(t)
        elif op == 1:
            out.mul_(t)
        elif op == 2:
            out.copy_(out.maximum(t))
        else:
            out.copy_(out.minimum(t))
    if op == 4:
        out.div_(len(tensors))
    return out


def _same_numel(what, tensors, n, name):
    for i, t in enumerate(tensors):
        if t.numel() != n:
            raise RuntimeError(f"{what}: {name}[{i}] has {t.numel()} elements, expected {n}")


def all_reduce(inputs, outputs=None, op=SUM, streams=None, comms=None):
    """Reduces ``inputs`` elementwise; every ``outputs[i]`` (default: ``inputs``) gets the
    result."""
    _check_sequence_type(inputs)
    if outputs is None:
        outputs = inputs
    _check_sequence_type(outputs)
    inputs = _check("all_reduce", inputs)
    outputs = _check("all_reduce", outputs, "outputs")
    _same_numel("all_reduce", inputs + outputs, inputs[0].numel(), "tensors")
    total = _combine("all_reduce", inputs, op, inputs[0].device)
    for o in outputs:
        o.copy_(total.view(o.shape).to(o.device))


def reduce(inputs, output=None, root=0, op=SUM, streams=None, comms=None, *, outputs=None):
    """Reduces ``inputs`` elementwise into ``output`` (default: ``inputs[root]``)."""
    _check_sequence_type(inputs)
    if outputs is not None:
        if output is not None:
            raise ValueError(
                "'output' and 'outputs' can not be both specified. 'outputs' is deprecated in "
                "favor of 'output', taking in a single output tensor. The signature of reduce "
                "is: reduce(inputs, output=None, root=0, op=SUM, streams=None, comms=None).")
        warnings.warn("`nccl.reduce` with an output tensor list is deprecated. Please "
                      "specify a single output tensor with argument 'output' instead.",
                      FutureWarning, stacklevel=2)
        output = outputs[root]
    elif not isinstance(output, Tensor) and isinstance(output, collections.abc.Sequence):
        warnings.warn("nccl.reduce with an output tensor list is deprecated. Please specify "
                      "a single output tensor.", FutureWarning, stacklevel=2)
        output = output[root]
    inputs = _check("reduce", inputs)
    if output is None:
        output = inputs[root]
    _same_numel("reduce", [output], inputs[0].numel(), "output")
    output.copy_(_combine("reduce", inputs, op, output.device).view(output.shape))


def broadcast(inputs, root=0, streams=None, comms=None):
    """Copies ``inputs[root]`` into every other tensor of ``inputs``."""
    _check_sequence_type(inputs)
    inputs = _check("broadcast", inputs)
    _same_numel("broadcast", inputs, inputs[root].numel(), "inputs")
    src = inputs[root]
    for i, t in enumerate(inputs):
        if i != root:
            t.copy_(src.view(t.shape).to(t.device))


def all_gather(inputs, outputs, streams=None, comms=None):
    """Every ``outputs[i]`` gets the concatenation of all ``inputs`` (flattened)."""
    from .._ops import shape as _shape
    _check_sequence_type(inputs)
    _check_sequence_type(outputs)
    inputs = _check("all_gather", inputs)
    outputs = _check("all_gather", outputs, "outputs")
    n = inputs[0].numel()
    _same_numel("all_gather", inputs, n, "inputs")
    _same_numel("all_gather", outputs, n * len(inputs), "outputs")
    for o in outputs:
        o.copy_(_shape.cat([t.reshape(-1).to(o.device) for t in inputs]).view(o.shape))


def reduce_scatter(inputs, outputs, op=SUM, streams=None, comms=None):
    """``outputs[i]`` gets part ``i`` of the elementwise reduction of ``inputs``."""
    _check_sequence_type(inputs)
    _check_sequence_type(outputs)
    inputs = _check("reduce_scatter", inputs)
    outputs = _check("reduce_scatter", outputs, "outputs")
    n = outputs[0].numel()
    _same_numel("reduce_scatter", outputs, n, "outputs")
    _same_numel("reduce_scatter", inputs, n * len(outputs), "inputs")
    total = _combine("reduce_scatter", inputs, op, inputs[0].device).reshape(-1)
    for i, o in enumerate(outputs):
        o.copy_(total[i * n:(i + 1) * n].view(o.shape).to(o.device))
