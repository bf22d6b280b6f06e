"""``torch._scaled_mm``: the float8 matrix product of float8 training (torchao).

out = (mat1 @ mat2) * scale_a * scale_b (+ bias) in ``out_dtype`` (mat1's dtype by
default), accumulated in float32. Scales are tensor-wise (one float element each) or
row-wise (float32 scale_a (M, 1) and scale_b (1, N), contiguous). On the cpu the operands
are widened to float32 and multiplied (as PyTorch's CPU kernel, which computes
(mat1 @ mat2) * (scale_a * scale_b)); on cuda one Triton kernel does it
(framework/kernels/scaled_mm.py), with PyTorch's cuBLASLt layout rules: mat1 row-major,
mat2 column-major, K and N multiples of 16."""
from . import _dtype
from ._tensor import Tensor

_FP8 = (_dtype.float8_e4m3fn, _dtype.float8_e5m2)
_OUT = (_dtype.float32, _dtype.bfloat16, _dtype.float16) + _FP8


def _shape(t):
    return "x".join(str(s) for s in t.shape)


def _check(mat1, mat2, scale_a, scale_b, bias, out_dtype):
    """PyTorch's checks; returns (out dtype, rowwise)."""
    for name, t in (("mat1", mat1), ("mat2", mat2)):
        if not isinstance(t, Tensor):
            raise TypeError(f"_scaled_mm(): argument '{'self' if name == 'mat1' else name}' "
                            f"must be Tensor, not {type(t).__name__}")
        if t.dim() != 2:
            raise RuntimeError(f"{name} must be a matrix")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_shape(mat1)} and "
                           f"{_shape(mat2)})")
    for name, t in (("mat1", mat1), ("mat2", mat2)):
        if not t.dtype.is_float8:
            raise RuntimeError(f"Expected {name} to be Float8 matrix got {t.dtype.scalar_name}")
        if t.dtype not in _FP8:
            raise RuntimeError(f"_scaled_mm: {t.dtype.scalar_name} is not supported (only "
                               "Float8_e4m3fn and Float8_e5m2)")
    out_dtype = mat1.dtype if out_dtype is None else out_dtype
    if out_dtype not in _OUT:
        raise RuntimeError(f"_scaled_mm: out_dtype {out_dtype} is not supported (float32, "
                           "bfloat16, float16, float8_e4m3fn or float8_e5m2)")
    m, n = mat1.shape[0], mat2.shape[1]
    sa_float = scale_a.dtype.is_floating_point and not scale_a.dtype.is_float8
    sb_float = scale_b.dtype.is_floating_point and not scale_b.dtype.is_float8
    rowwise = False
    if not (scale_a.numel() == 1 and scale_b.numel() == 1 and sa_float and sb_float):
        rowwise = (scale_a.dtype is _dtype.float32 and scale_b.dtype is _dtype.float32
                   and tuple(scale_a.shape) == (m, 1) and tuple(scale_b.shape) == (1, n))
        if not rowwise:
            raise ValueError(
                "Invalid scaling configuration.\n- For TensorWise scaling, a and b should be "
                "float8, scales should be float and singletons.\n- For RowWise scaling, a and b "
                "should be float8, scales should be float, scale_a should be "
                f"({m}, 1) and scale_b should be (1, {n}), and both should be contiguous.\n"
                f"Got mat_a.dtype()={mat1.dtype.scalar_name}, scale_a.dtype()="
                f"{scale_a.dtype.scalar_name}, scale_a.size()={list(scale_a.shape)}, "
                f"scale_a.stride()={list(scale_a.stride())}, mat_b.dtype()="
                f"{mat2.dtype.scalar_name}, scale_b.dtype()={scale_b.dtype.scalar_name}, "
                f"scale_b.size()={list(scale_b.shape)} and scale_b.stride()="
                f"{list(scale_b.stride())}")
        for name, t, dim in (("scale_a", scale_a, 1), ("scale_b", scale_b, 1)):
            if t.stride(dim) != 1 and t.shape[dim] != 1:
                raise ValueError(f"expected {name}.stride({dim}) to be 1, but got "
                                 f"{t.stride(dim)}")
        if scale_a.stride(0) != 1 and m > 1 and not scale_a.is_contiguous():
            raise ValueError(f"expected scale_a.stride(0) to be 1, but got {scale_a.stride(0)}")
    if bias is not None and bias.numel() != n:
        raise RuntimeError(f"Bias must be size {n} but got {bias.numel()}")
    return out_dtype, rowwise


def _check_cuda_layout(mat1, mat2):
    """cuBLASLt's float8 layouts (PyTorch's messages)."""
    s1, s2 = mat1.stride(), mat2.stride()
    if not (s1[0] > s1[1] and s1[1] == 1) and 0 not in mat1.shape:
        raise RuntimeError(f"self must be row_major, got stride {tuple(s1)}")
    if not (s2[0] == 1 and s2[1] > 1) and 0 not in mat2.shape:
        raise RuntimeError(f"mat2 must be col_major, got stride {tuple(s2)}")
    if mat1.shape[1] % 16:
        raise RuntimeError("Expected self.size(1) to be divisible by 16, but got "
                           f"self.size(1)={mat1.shape[1]}")
    if mat2.shape[0] % 16 or mat2.shape[1] % 16:
        raise RuntimeError("Expected both dimensions of mat2 to be divisible by 16 but got "
                           f"torch.Size({list(mat2.shape)})")


def _scaled_mm(mat1, mat2, scale_a, scale_b, bias=None, scale_result=None, out_dtype=None,
               use_fast_accum=False):
    """(mat1 @ mat2) * scale_a * scale_b (+ bias) for float8 mat1 and mat2, in ``out_dtype``
    (mat1's dtype if None). ``use_fast_accum`` is accepted; accumulation is always float32."""
    import framework as fw
    out_dtype, rowwise = _check(mat1, mat2, scale_a, scale_b, bias, out_dtype)
    if scale_result is not None:
        raise NotImplementedError("_scaled_mm: scale_result is not supported")
    device = mat1.device
    f32 = _dtype.float32
    if device.type == "cuda":
        _check_cuda_layout(mat1, mat2)
        from .kernels.scaled_mm import scaled_mm
        m, n = mat1.shape[0], mat2.shape[1]
        out = fw.empty((m, n), dtype=f32, device=device)
        sa = scale_a.to(f32).reshape(-1)
        sb = scale_b.to(f32).reshape(-1)
        b32 = None if bias is None else bias.to(f32).reshape(-1).contiguous()
        scaled_mm(out, mat1, mat2, sa.contiguous(), sb.contiguous(), b32, rowwise)
    else:
        out = fw.mm(mat1.to(f32), mat2.to(f32))
        if rowwise:
            out = out * scale_a * scale_b
        else:
            out = out * (scale_a.to(f32) * scale_b.to(f32)).reshape(())
        if bias is not None:
            out = out + bias.to(f32)
    return out.to(out_dtype)
