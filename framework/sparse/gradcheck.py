"""``sparse.as_sparse_gradcheck``: gradcheck for functions of sparse tensors.

``gradcheck`` perturbs strided tensors only, so each sparse input that requires grad is
passed to it as its values (a strided tensor) and rebuilt around them, with its indices,
before ``func`` runs; sparse outputs are made dense. Unless ``masked=True`` the unstored
elements of a sparse input are stored as zeros first, so that they are checked too."""
from . import compressed as C
from .base import SparseTensor, sparse_coo


class _Sparse:
    """A sparse input's indices and shape; its values travel as a separate argument."""

    def __init__(self, t):
        self.layout, self.shape = t.layout, tuple(t.shape)
        if t.layout is sparse_coo:
            self.indices, self.coalesced = t._indices(), t.is_coalesced()
            self.values = t._values()
        else:
            self.ci, self.pi, v = C.parts(t)
            self.values = v.detach()

    def rebuild(self, values):
        import framework
        if self.layout is sparse_coo:
            return framework.sparse_coo_tensor(self.indices, values, self.shape,
                                               is_coalesced=self.coalesced)
        return framework.sparse_compressed_tensor(self.ci, self.pi, values, self.shape,
                                                  layout=self.layout)


def _full(t):
    """``t`` with every element stored (the unstored ones as zeros)."""
    import framework
    block = C._geometry(t)[2] if t.layout in C.BLOCK else None
    mask = framework.ones(tuple(t.shape), dtype=framework.bool, device=t.device).to_sparse(
        layout=t.layout, blocksize=block, dense_dim=t.dense_dim())
    return t.detach().to_dense().sparse_mask(mask)


def as_sparse_gradcheck(gradcheck):
    """Decorate function, to extend gradcheck for sparse tensors.

    Wraps ``torch.autograd.gradcheck`` (or a ``functools.partial`` of it) so that ``func``
    may take and return sparse tensors; ``gradcheck`` itself sees strided tensors only."""

    def gradcheck_with_sparse_support(func, inputs, **kwargs):
        masked = kwargs.pop("masked", False)
        args = inputs if isinstance(inputs, (list, tuple)) else (inputs,)
        flat, metas = [], []
        for a in args:
            if isinstance(a, SparseTensor) and a.requires_grad:
                meta = _Sparse(a if masked else _full(a))
                metas.append(meta)
                flat.append(meta.values.detach().requires_grad_(True))
            else:
                metas.append(None)
                flat.append(a)

        def func_wrapper(*values):
            restored = [a if m is None else m.rebuild(a) for a, m in zip(values, metas)]
            out = func(*restored)
            outs = tuple(out) if isinstance(out, (list, tuple)) else (out,)
            outs = tuple(o.to_dense(masked_grad=masked)
                         if isinstance(o, SparseTensor) and o.requires_grad else o
                         for o in outs)
            return outs if isinstance(out, (list, tuple)) else outs[0]

        return gradcheck(func_wrapper, tuple(flat), **kwargs)

    return gradcheck_with_sparse_support
