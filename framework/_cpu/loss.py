"""CPU launchers: loss kernels (native/loss.cpp)."""
from .. import _C


def _ptr(t):
    return 0 if t is None else t.data_ptr()


def cross_entropy_forward(x, target, weight, loss, stats, wrow, rows, C, ignore_index,
                          label_smoothing):
    """Per-row cross entropy of contiguous logits x (rows, C) against int64 class indices
    ``target`` (rows,): loss and wrow (the target's weight, 0 where ignored) are (rows,),
    stats (2, rows) the row's reference point (its maximum) and log(sum exp(x - ref)),
    all of the compute dtype (float64 for float64 x, else float32). ``weight``: None or
    contiguous (C,) of x's dtype. Raises IndexError for a
    target outside [0, C) that is not ``ignore_index``."""
    _C.cross_entropy_forward(x.dtype.code, x.data_ptr(), target.data_ptr(), _ptr(weight),
                             loss.data_ptr(), stats.data_ptr(), wrow.data_ptr(), rows, C,
                             int(ignore_index), float(label_smoothing))


def cross_entropy_backward(x, target, weight, wsum, stats, grow, gx, rows, C, ignore_index,
                           label_smoothing):
    """gx (rows, C, x's dtype) = gradient of cross_entropy_forward's per-row losses, each
    scaled by grow (rows,; or 1 element, the same for every row), computed from the logits
    x and the forward's stats alone. ``wsum``: the sum of ``weight`` (a 1-element tensor of
    the compute dtype) or None without weight."""
    _C.cross_entropy_backward(x.dtype.code, x.data_ptr(), target.data_ptr(), _ptr(weight),
                              _ptr(wsum), stats.data_ptr(), grow.data_ptr(),
                              0 if grow.numel() == 1 else 1, gx.data_ptr(), rows, C,
                              int(ignore_index), float(label_smoothing))
