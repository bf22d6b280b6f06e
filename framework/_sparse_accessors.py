"""The sparse accessors (``indices``, ``crow_indices``, ``coalesce``, ``_nnz``, ...) of a
tensor whose layout has none of them: torch's errors. The sparse layouts
(framework/sparse) define their own, which override these."""

_LAYOUT_NAMES = {"strided": "Strided", "sparse_coo": "Sparse", "sparse_csr": "SparseCsr"}


def _layout_name(t):
    return _LAYOUT_NAMES.get(str(t.layout).rsplit(".", 1)[-1], str(t.layout))


def _expects(op, what):
    def accessor(self):
        raise RuntimeError(f"{op} expected {what} tensor layout but got {_layout_name(self)}")
    accessor.__name__ = op
    accessor.__doc__ = f"Sparse accessor ``{op}``: raises for a tensor without {what} layout."
    return accessor


def _no_kernel(op):
    def accessor(self):
        backend = "CUDA" if self.device.type == "cuda" else "CPU"
        raise NotImplementedError(f"Could not run 'aten::{op}' with arguments from the "
                                  f"'{backend}' backend.")
    accessor.__name__ = op
    return accessor


def _sparse_dim(self):
    """Number of sparse dimensions: 0 for a strided tensor."""
    return 0


def _dense_dim(self):
    """Number of dense dimensions: all of a strided tensor's."""
    return self.dim()


_COO = "sparse coordinate"
_CSR = "sparse row compressed"
_CSC = "sparse column compressed"
ACCESSORS = {
    "indices": _expects("indices", _COO), "coalesce": _expects("coalesce", _COO),
    "is_coalesced": _expects("is_coalesced", _COO), "values": _expects("values", "sparse"),
    "crow_indices": _expects("crow_indices", _CSR), "col_indices": _expects("col_indices", _CSR),
    "ccol_indices": _expects("ccol_indices", _CSC), "row_indices": _expects("row_indices", _CSC),
    "_indices": _no_kernel("_indices"), "_values": _no_kernel("_values"),
    "_nnz": _no_kernel("_nnz"), "sparse_dim": _sparse_dim, "dense_dim": _dense_dim,
}


def install(tensor_cls):
    """Sets the accessors the class does not define already."""
    for name, fn in ACCESSORS.items():
        if not hasattr(tensor_cls, name):
            setattr(tensor_cls, name, fn)
