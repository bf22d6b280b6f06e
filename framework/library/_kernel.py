"""``get_kernel``'s pieces: ``DispatchKey`` (PyTorch's names and numbers for the keys a
Python user names) and the kernel object it returns."""
import enum

from .._tensor import Tensor
from ._schema import _iter_tensors


class DispatchKey(enum.Enum):
    """PyTorch's dispatch keys (the subset framework's ops can be asked about)."""
    Undefined = 0
    Dense = 1
    Quantized = 5
    Sparse = 8
    SparseCsr = 9
    NestedTensor = 10
    BackendSelect = 11
    Python = 13
    Functionalize = 15
    Conjugate = 16
    Negative = 17
    ZeroTensor = 18
    ADInplaceOrView = 19
    AutogradOther = 20
    AutogradFunctionality = 21
    AutogradNestedTensor = 22
    AutocastCPU = 24
    AutocastCUDA = 32
    CPU = 49
    CUDA = 50
    PrivateUse1 = 61
    Meta = 64
    QuantizedCPU = 66
    QuantizedCUDA = 67
    SparseCPU = 83
    SparseCUDA = 84
    SparseMeta = 98
    SparseCsrCPU = 100
    SparseCsrCUDA = 101
    NestedTensorCPU = 117
    NestedTensorCUDA = 118
    AutogradCPU = 134
    AutogradCUDA = 135
    AutogradMeta = 149
    Autograd = 150
    CompositeImplicitAutograd = 151
    CompositeExplicitAutograd = 154
    CompositeExplicitAutogradNonFunctional = 155


# the device type whose tensors a backend key's kernel takes (None: any device)
_BACKEND_DEVICE = {"CPU": "cpu", "CUDA": "cuda", "Meta": "meta", "SparseCPU": "cpu",
                   "SparseCUDA": "cuda", "QuantizedCPU": "cpu", "QuantizedCUDA": "cuda"}


def key_name(dispatch_key):
    """The name of a dispatch key given as a string or a ``DispatchKey``."""
    if isinstance(dispatch_key, DispatchKey):
        return dispatch_key.name
    if not isinstance(dispatch_key, str) or dispatch_key not in DispatchKey.__members__:
        raise ValueError(f"Invalid dispatch key: {dispatch_key}")
    return dispatch_key


class SafeKernelFunction:
    """The kernel of an op for one dispatch key (``torch._C._SafeKernelFunction``):
    ``call_boxed(keyset, *args, **kwargs)`` runs it. Kernels of backend keys run below
    autograd, as in PyTorch: their results have no history."""

    def __init__(self, qualname, key, fn, below_autograd):
        self._qualname, self._key, self._fn = qualname, key, fn
        self._below_autograd = below_autograd
        self.op_handle = qualname

    def call_boxed(self, keyset, *args, **kwargs):
        dev = _BACKEND_DEVICE.get(self._key)
        if dev is not None:
            for t in _iter_tensors(list(args) + list(kwargs.values())):
                if isinstance(t, Tensor) and t.device.type != dev:
                    raise RuntimeError(
                        f"{self._qualname}: the {self._key} kernel got a tensor on "
                        f"{t.device}")
        if not self._below_autograd:
            return self._fn(*args, **kwargs)
        from ..autograd.grad_mode import no_grad
        with no_grad():
            return self._fn(*args, **kwargs)

    def __repr__(self):
        return f"SafeKernelFunction(debug='{self._qualname} kernel for {self._key}')"
