"""Distances and similarities: ``cosine_similarity``, ``pairwise_distance``, ``pdist``."""
import framework as fw

__all__ = ["cosine_similarity", "pairwise_distance", "pdist"]


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    r"""Cosine similarity of ``x1`` and ``x2`` (broadcast together) along ``dim``:
    ``sum(x1 / max(||x1||, eps) * x2 / max(||x2||, eps))``."""
    dtype = fw.result_type(x1, x2)
    if not dtype.is_floating_point:
        dtype = fw.get_default_dtype()
    x1, x2 = fw.broadcast_tensors(x1.to(dtype), x2.to(dtype))
    # each input divided by its own norm first, which keeps the result within [-1, 1]; the
    # clamp acts on the values only (as PyTorch's), so the gradient is the unclamped norm's
    n1 = fw.linalg.vector_norm(x1, 2, dim, keepdim=True).clone()
    n2 = fw.linalg.vector_norm(x2, 2, dim, keepdim=True).clone()
    with fw.no_grad():
        n1.clamp_min_(eps)
        n2.clamp_min_(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    r"""The ``p``-norm of ``x1 - x2 + eps`` over the last dimension (inputs broadcast)."""
    last = max(x1.dim(), x2.dim()) - 1
    return fw.linalg.vector_norm(x1 - x2 + eps, p, last, keepdim=keepdim)


def pdist(input, p=2):
    r"""The ``p``-norm distance between every pair of rows of an ``(N, M)`` input: the
    upper triangle (``i < j``) of the distance matrix, row by row, shape ``(N*(N-1)/2,)``."""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if not input.dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    ij = fw.triu_indices(n, n, 1, device=input.device)
    diff = input.index_select(0, ij[0]) - input.index_select(0, ij[1])
    return fw.linalg.vector_norm(diff, p, 1)
