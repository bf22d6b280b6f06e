"""CPU launchers: fused_linear family (native/fused_linear.cpp: the linalg GEMM, then one
threaded pass adding the bias and applying the activation)."""
from .. import _C

# activation name -> the kernels' code (native/fused_linear.cpp, kernels/fused_linear.py)
ACTIVATIONS = {"none": 0, "relu": 1, "gelu": 2, "gelu_tanh": 3, "silu": 4}


def linear(out, pre, input, weight, bias, activation):
    """out = activation(input @ weight^T + bias) and, when ``pre`` is given, pre = input @
    weight^T + bias. input (M, K), weight (N, K) and bias (N,) (or None) with any strides;
    out and pre (or None) contiguous (M, N) of input's floating dtype."""
    m, k = input._shape
    n = weight._shape[0]
    sam, sak = input._stride
    swn, swk = weight._stride
    _C.fused_linear(out.dtype.code, out.data_ptr(), 0 if pre is None else pre.data_ptr(),
                    input.data_ptr(), sam, sak, weight.data_ptr(), swn, swk,
                    0 if bias is None else bias.data_ptr(), 0 if bias is None else bias._stride[0],
                    m, n, k, ACTIVATIONS[activation])
