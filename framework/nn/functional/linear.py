"""Linear maps: ``linear`` and ``bilinear`` (composites of the framework's GEMM ops)."""
import framework as fw

__all__ = ["linear", "bilinear"]


def _prod(sizes):
    n = 1
    for s in sizes:
        n *= s
    return n


def linear(input, weight, bias=None):
    r"""Applies an affine map to the last dimension of ``input``: :math:`y = xA^T + b`.

    Shapes: input ``(*, in_features)``, weight ``(out_features, in_features)`` (or
    ``(in_features,)``), bias ``(out_features,)`` or ``()``; output ``(*, out_features)``.
    """
    if input.dim() == 0 or weight.dim() == 0:
        raise RuntimeError("both arguments to linear need to be at least 1D, but they are "
                           f"{input.dim()}D and {weight.dim()}D")
    if weight.dim() != 2:
        # a 1-D weight is a dot product over the last dimension (matmul's semantics)
        out = fw.matmul(input, weight)
        return out if bias is None else out + bias
    if input.dim() == 2:    # no reshapes: the graph is PyTorch's (AddmmBackward0 / MmBackward0)
        wt = weight.t()
        return fw.mm(input, wt) if bias is None else fw.addmm(bias, input, wt)
    k = input.shape[-1]
    batch = tuple(input.shape[:-1])
    # one GEMM over the flattened batch, so that an N-d input costs a single addmm and a
    # shape mismatch is reported as PyTorch does ("8x3 and 5x2" for a (2, 4, 3) input)
    x2 = input.reshape(_prod(batch), k)
    wt = weight.t()
    out = fw.mm(x2, wt) if bias is None else fw.addmm(bias, x2, wt)
    return out.reshape(batch + (weight.shape[0],))


def bilinear(input1, input2, weight, bias=None):
    r"""Applies a bilinear map: :math:`y_o = x_1^T A_o x_2 + b_o`.

    Shapes: input1 ``(*, in1)``, input2 ``(*, in2)`` with the same leading dimensions,
    weight ``(out, in1, in2)``, bias ``(out,)``; output ``(*, out)``.
    """
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} "
                           f"and {input2.dim()}")
    for d in range(input1.dim() - 1):
        if input1.shape[d] != input2.shape[d]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {d}: "
                               f"got {input1.shape[d]} and {input2.shape[d]}")
    if weight.dim() != 3:
        raise RuntimeError(f"bilinear(): weight must be a 3-D tensor, got {weight.dim()}-D")
    out_f, in1, in2 = weight.shape
    if input1.shape[-1] != in1:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got "
                           f"{input1.shape[-1]} but expected {in1}")
    if input2.shape[-1] != in2:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got "
                           f"{input2.shape[-1]} but expected {in2}")
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != out_f):
        got = bias.shape[0] if bias.dim() else bias.numel()
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {got} "
                           f"but expected {out_f}")
    batch = tuple(input1.shape[:-1])
    n = _prod(batch)
    x1 = input1.reshape(n, in1)
    x2 = input2.reshape(n, in2)
    # (n, in1) @ (in1, out*in2): every x1^T A_o at once, then a batched dot with x2
    w = weight.permute(1, 0, 2).reshape(in1, out_f * in2)
    t = fw.mm(x1, w).reshape(n, out_f, in2)
    out = fw.bmm(t, x2.reshape(n, in2, 1)).reshape(batch + (out_f,))
    return out if bias is None else out + bias
