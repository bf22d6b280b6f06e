"""``nn.functional.grouped_mm``: one matrix product per group, for Mixture-of-Experts layers
whose experts share weight shapes but see jagged numbers of tokens (PyTorch's
``torch.nn.functional.grouped_mm`` / ``torch._grouped_mm``).

Four layouts, by the operands' dims (G groups; ``offs``: int32 ends of the groups along the
jagged dim, which is cut as ``[offs[g-1], offs[g])`` with ``offs[-1] = 0``):
- 2d x 3d: (M, K) @ (G, K, N) -> (M, N), the rows of mat_a grouped (MoE forward);
- 3d x 3d: (G, M, K) @ (G, K, N) -> (G, M, N), a batched product, no offs;
- 2d x 2d: (M, K) @ (K, N) -> (G, M, N), K grouped (MoE weight gradient);
- 3d x 2d: (G, M, K) @ (K, N) -> (M, N), the columns of mat_b and of the output grouped.
Rows (columns) of the output past ``offs[-1]`` are zero (PyTorch leaves them unwritten).

The backward of each layout is a grouped_mm of another layout (the derivative formulas in
ops.yaml call the two functions at the end), so higher-order gradients come for free.
"""
from .. import _dtype
from . import alloc
from .args import same_device
from .pointwise import cpp_type_name, require_tensor

_OP = "grouped_mm"
_FLOATS = (_dtype.float32, _dtype.bfloat16, _dtype.float16)


def _check(mat_a, mat_b, offs, bias, out_dtype):
    """PyTorch's checks, in its order; returns the output dtype."""
    require_tensor(_OP, mat_a, "mat_a", 1)
    require_tensor(_OP, mat_b, "mat_b", 2)
    for name, t in (("mat_a", mat_a), ("mat_b", mat_b)):
        if t.dtype not in _FLOATS:
            raise RuntimeError(f"Expected {name} to be Float32, BFloat16 or Float16 matrix, "
                               f"got {t.dtype.scalar_name}")
    da, db = mat_a.dim(), mat_b.dim()
    if (not (da == 2 and db == 2) and da >= 1 and db >= 2
            and mat_a.shape[-1] != mat_b.shape[-2]):
        raise RuntimeError(f"contraction dimension of mat_a and mat_b must match (grouped_mm: "
                           f"mat_a {tuple(mat_a.shape)}, mat_b {tuple(mat_b.shape)})")
    if da not in (2, 3):
        raise RuntimeError(f"mat_a has to be 2 or 3d, got {da}d")
    if db not in (2, 3):
        raise RuntimeError(f"mat_b has to be 2 or 3d, got {db}d")
    if da == 2 and db == 2 and mat_a.shape[1] != mat_b.shape[0]:
        # (PyTorch does not check this one: its groups would read past the shorter one)
        raise RuntimeError(f"contraction dimension of mat_a and mat_b must match (grouped_mm: "
                           f"mat_a {tuple(mat_a.shape)}, mat_b {tuple(mat_b.shape)})")
    if (offs is not None) != (da == 2 or db == 2):
        raise RuntimeError("Have to provide offsets if there is a 2d matrix, or no offset if "
                           "both matrices are 3d")
    if offs is not None:
        require_tensor(_OP, offs, "offs")
        if offs.dim() != 1:
            raise RuntimeError(f"offs has to be 1D, got {offs.dim()}d")
        if offs.dtype is not _dtype.int32:
            raise RuntimeError(f"Offsets have to be int32, got {offs.dtype.scalar_name}")
    if bias is not None:
        raise RuntimeError("Bias not supported yet")
    dtype = mat_a.dtype if out_dtype is None else out_dtype
    # float32 for 16-bit inputs: accumulated and returned in float32, as PyTorch's docs
    # describe (its kernels today take only mat_a's dtype)
    if dtype is not mat_a.dtype and dtype is not _dtype.float32:
        raise RuntimeError(f"Grouped gemm output dtype must match `mat_a` dtype (or be "
                           f"float32), got {dtype} for {mat_a.dtype}")
    if da == 3 and db == 3:
        if mat_a.shape[0] != mat_b.shape[0]:
            raise RuntimeError(f"batched dimension has to match (grouped_mm: mat_a "
                               f"{tuple(mat_a.shape)}, mat_b {tuple(mat_b.shape)})")
    elif da == 3 or db == 3:
        groups = (mat_a if da == 3 else mat_b).shape[0]
        if offs.shape[0] != groups:
            raise RuntimeError(f"matrix batch sizes have to match (grouped_mm: {groups} "
                               f"groups, offs of {offs.shape[0]})")
    if mat_a.dtype is not mat_b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{cpp_type_name(mat_a.dtype)} != {cpp_type_name(mat_b.dtype)}")
    return dtype


def _out_shape(mat_a, mat_b, offs):
    a, b = tuple(mat_a.shape), tuple(mat_b.shape)
    if len(a) == 2 and len(b) == 3:
        return (a[0], b[2])
    if len(a) == 3 and len(b) == 3:
        return (a[0], a[1], b[2])
    if len(a) == 2:
        return (offs.shape[0], a[0], b[1])
    return (a[1], b[1])


def grouped_mm(mat_a, mat_b, *, offs=None, bias=None, out_dtype=None):
    """grouped_mm(mat_a, mat_b, *, offs=None, bias=None, out_dtype=None) -> Tensor

    Computes a grouped matrix multiply that shares weight shapes across experts but
    allows jagged token counts per expert (Mixture-of-Experts layers). When ``mat_a`` is
    2D its rows are sliced into groups by ``offs``; when 3D its first dim enumerates the
    groups and ``offs`` must be None. When both are 2D, the trailing dim of ``mat_a`` and
    the leading dim of ``mat_b`` are partitioned by ``offs``; when ``mat_a`` is 3D and
    ``mat_b`` 2D, the columns of ``mat_b`` are. ``offs``: 1D int32, increasing ends of the
    groups; elements past ``offs[-1]`` are ignored (their outputs are zero). ``bias``: not
    supported yet (as in PyTorch). ``out_dtype``: mat_a's dtype, or float32 for 16-bit
    inputs. Inputs are float32 (TF32 under ``set_float32_matmul_precision("high")`` on
    cuda), bfloat16 or float16, accumulated in float32."""
    dtype = _check(mat_a, mat_b, offs, bias, out_dtype)
    device = same_device(_OP, mat_a, mat_b, offs)
    if offs is not None:
        offs = offs.contiguous()
    out = alloc.empty(_out_shape(mat_a, mat_b, offs), dtype, device)
    alloc.backend(device).grouped_mm.grouped_mm(out, mat_a, mat_b, offs)
    return out


# ---- derivatives (ops.yaml): each a grouped_mm of the layout that undoes the product -------

def _fw():
    import framework
    return framework


def _grad_in(grad, like):
    """The incoming gradient as the operands' dtype (float32 under ``out_dtype=float32``)."""
    return grad if grad.dtype is like.dtype else grad.to(like.dtype)


def mat_a_grad(grad, mat_a, mat_b, offs):
    """The gradient of mat_a: grad times mat_b's transpose, grouped alike (2d x 2d's
    (G, M, N) grad comes back as 3d x 2d over K, 3d x 2d's as 2d x 2d over N)."""
    g = _grad_in(grad, mat_a)
    return _fw().nn.functional.grouped_mm(g, mat_b.transpose(-2, -1), offs=offs)


def mat_b_grad(grad, mat_a, mat_b, offs):
    """The gradient of mat_b: mat_a's transpose times grad, grouped alike (2d x 3d's comes
    back as 2d x 2d over M, 2d x 2d's as 2d x 3d over K)."""
    g = _grad_in(grad, mat_b)
    return _fw().nn.functional.grouped_mm(mat_a.transpose(-2, -1), g, offs=offs)
