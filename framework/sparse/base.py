"""What the sparse layouts share: the layout objects, the guard that keeps dense ops off a
sparse tensor, and the parts of ``repr``.

A sparse tensor is a ``framework.Tensor`` subclass whose data lives in ordinary dense
tensors (indices and values). It has no strided storage: its ``_storage`` is a stand-in
that knows only the device, and ``_stride``/``_offset`` are properties that raise. Every
dense op reads those before touching memory, so a dense op given a sparse tensor raises
PyTorch's NotImplementedError instead of reading garbage; dense tensors never see these
properties (they live on the subclass), so they cost dense ops nothing.
"""
import os
import sys

from .._ops.memory_format import layout
from .. import overrides as _overrides
from .._tensor import Tensor

sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")
sparse_csc = layout("sparse_csc")
sparse_bsr = layout("sparse_bsr")
sparse_bsc = layout("sparse_bsc")

_FRAMEWORK_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_SPARSE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _calling_op():
    """The name of the framework function the user called (the outermost framework frame
    on the stack), for the error message; only the error path walks the stack."""
    names = []
    f = sys._getframe(2)
    while f is not None:
        fn = f.f_code.co_filename
        if fn.startswith(_FRAMEWORK_DIR) or fn.startswith("<"):
            if not fn.startswith(_SPARSE_DIR) and not f.f_code.co_name.startswith("<"):
                names.append(f.f_code.co_name)
        elif names:
            break
        f = f.f_back
    for name in reversed(names):    # the outermost that is an op's own name
        name = name.strip("_")
        if name not in _WRAPPERS:
            return f"'aten::{name}'"
    return "this operator"


# the framework's generic wrapper functions (autocast, in-place, operators): not op names
_WRAPPERS = {"autocast_op", "safe", "method", "operator", "fn", "wrapper", "unary", "binary",
             "dispatch", "torch_function"}


def _not_implemented(t):
    return NotImplementedError(
        f"Could not run {_calling_op()} with arguments from the '{t._backend_name()}' "
        "backend. This could be because the operator doesn't exist for this backend.")


class _NoStorage:
    """A sparse tensor's ``_storage``: its device, and an error for anything else."""

    __slots__ = ("device", "version")

    def __init__(self, device):
        self.device = device
        self.version = 0

    def __getattr__(self, name):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")


def _guard(self):
    raise _not_implemented(self)


class SparseTensor(Tensor):
    """Base of the sparse layouts (not created directly)."""

    __slots__ = ()
    _layout = None
    _backend = "Sparse"

    def __new__(cls, *args, **kwargs):
        raise TypeError(f"{cls.__name__} is made by framework.sparse_coo_tensor / "
                        "sparse_csr_tensor or Tensor.to_sparse")

    def _init(self, shape, dtype, device, requires_grad=False):
        if not _overrides._active:
            from .dispatch import enable_protocol
            enable_protocol()
        self._storage = _NoStorage(device)
        self._shape = tuple(shape)
        self.dtype = dtype
        self._requires_grad = False
        self._grad = None
        self._grad_fn = None
        self._output_nr = 0
        self._base = None
        if requires_grad:
            self.requires_grad_(True)

    # the guard: dense kernels and views read these first
    _stride = property(_guard)
    _offset = property(_guard)

    def _backend_name(self):
        return self._backend + ("CUDA" if self._storage.device.type == "cuda" else "CPU")

    @property
    def layout(self):
        return self._layout

    @property
    def is_sparse(self):
        return self._layout is sparse_coo

    @property
    def is_sparse_csr(self):
        return self._layout is sparse_csr

    def requires_grad_(self, requires_grad=True):
        if requires_grad and self.dtype.category < 2:
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        return Tensor.requires_grad_(self, requires_grad)

    def stride(self, dim=None):
        # PyTorch reports zeros for a sparse tensor
        return (0,) * len(self._shape) if dim is None else 0

    def is_contiguous(self, memory_format=None):
        return False

    def storage_offset(self):
        raise RuntimeError("Cannot access storage of SparseTensorImpl")

    def data_ptr(self):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def untyped_storage(self):
        raise NotImplementedError("Cannot access storage of SparseTensorImpl")

    def numpy(self, *, force=False):
        raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() "
                        "first.")

    def _host_array(self):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def tolist(self):
        return self._host_array()

    def item(self):
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to "
                               "Scalar")
        return self.to_dense().item()

    def contiguous(self, memory_format=None):
        raise RuntimeError("unsupported memory format option Contiguous")

    def cpu(self, memory_format=None):
        return self if self._storage.device.type == "cpu" else self.to("cpu")

    def cuda(self, device=None, non_blocking=False, memory_format=None):
        return self.to("cuda" if device is None else device)

    def __deepcopy__(self, memo):
        out = self.clone()
        out._requires_grad = self._requires_grad
        memo[id(self)] = out
        return out


def shape_of(size, what):
    """``size`` (a Size, tuple, list or ints) as a tuple of ints."""
    try:
        return tuple(int(s) for s in size)
    except TypeError:
        raise TypeError(f"{what}(): argument 'size' must be tuple of ints, but found element "
                        f"of type {type(size).__name__}") from None


def _add_suffixes(text, suffixes, indent, force_newline):
    """PyTorch's suffix layout: a sparse COO print starts the suffixes on a new line."""
    from .._tensor_str import PRINT_OPTS, _torch_len
    parts = [text]
    last = len(text) - text.rfind("\n") + 1
    for s in suffixes:
        n = _torch_len(s)
        if force_newline or last + n + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + s)
            last = indent + n
            force_newline = False
        else:
            parts.append(", " + s)
            last += n + 2
    parts.append(")")
    return "".join(parts)


def _body(t, indent):
    """The bracketed values of a dense component tensor, with its size when empty."""
    from .._tensor_str import tensor_str
    arr = t.detach().cpu()._host_array()
    text = tensor_str(arr, t.dtype.is_floating_point or t.dtype.is_complex, indent)
    if t.numel() == 0:
        text += ", size=" + str(tuple(t.shape))
    return text


def sparse_repr(t, parts):
    """``repr`` of a sparse tensor; ``parts``: (name, dense tensor) pairs printed first."""
    from .. import _dtype
    from .._tensor_str import _grad_fn_name
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    if t.device.type != "cpu":
        suffixes.append("device='" + str(t.device) + "'")
    suffixes.append("size=" + str(tuple(t.shape)))
    suffixes.append("nnz=" + str(t._nnz()))
    default = _dtype.get_default_dtype()
    if t.dtype not in (default, default.to_complex(), _dtype.int64, _dtype.bool):
        suffixes.append("dtype=" + str(t.dtype))
    body = (",\n" + " " * indent).join(
        f"{name}=tensor(" + _body(p, indent + len(name) + 8) + ")" for name, p in parts)
    suffixes.append("layout=" + repr(t.layout))
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{_grad_fn_name(t.grad_fn)}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent, t.layout is sparse_coo)


__all__ = ["SparseTensor", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr",
           "sparse_bsc"]
