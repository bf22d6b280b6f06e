"""CPU launchers: softmax family kernels (native/softmax.cpp)."""
from .. import _C


def softmax(log, x, y, outer, n, inner):
    """y = softmax (``log``: log_softmax) of contiguous x viewed as (outer, n, inner) along
    n; x and y have the same floating dtype."""
    _C.softmax(bool(log), x.dtype.code, x.data_ptr(), y.data_ptr(), outer, n, inner)


def softmax_backward(log, g, y, gx, outer, n, inner):
    """gx = gradient of softmax (``log``: log_softmax) along n of contiguous (outer, n,
    inner) tensors, from its output y and the output's gradient g (one floating dtype)."""
    _C.softmax_backward(bool(log), y.dtype.code, g.data_ptr(), y.data_ptr(), gx.data_ptr(),
                        outer, n, inner)
