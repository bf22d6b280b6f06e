"""CPU launchers: index family (advanced indexing, gather/scatter, nonzero, masked_fill,
tril/triu). Shapes and strides are in elements; see native/index.cpp."""
from .. import _C

# op names in out-of-bounds messages (native/index.cpp, enum Style)
STYLE_DIM, STYLE_SELF, STYLE_TAKE, STYLE_PREFIX, STYLE_RUNTIME, STYLE_DATA = range(6)
GATHER, PUT, ACCUMULATE = range(3)
REDUCE = {None: 0, "add": 1, "sum": 1, "multiply": 2, "prod": 2, "amax": 3, "amin": 4}


def index_offsets(out, shape, indices, sizes, src_strides, dims, allow_negative=True,
                  style=STYLE_DIM, prefix=""):
    """out[p] = sum_k wrap(indices[k][p]) * src_strides[k] (int64 indices broadcast to
    ``shape``); raises IndexError for an index out of [-size, size)."""
    _C.index_offsets(out.data_ptr(), shape, [t.data_ptr() for t, _ in indices],
                     [st for _, st in indices], sizes, src_strides, dims, allow_negative,
                     style, prefix)


def linear_offsets(out, shape, strides):
    _C.linear_offsets(out.data_ptr(), shape, strides)


def index_loop(mode, x, x_strides, x_off, y, y_strides, y_off, outer, alpha=1):
    """Moves elements between x (indexed through x_off) and y (at y_off: an int64 tensor of
    offsets, or an int stride between index positions) over ``outer`` dims:
    GATHER y = x, PUT x = y, ACCUMULATE x += alpha * y."""
    is_float = isinstance(alpha, float)
    if isinstance(y_off, int):
        y_ptr, y_step = 0, y_off
    else:
        y_ptr, y_step = y_off.data_ptr(), 0
    # float8 elements are moved as bytes; accumulating into them raises (as PyTorch)
    code = 1 if x.dtype.is_float8 and mode != ACCUMULATE else x.dtype.code
    _C.index_loop(mode, code, x.data_ptr(), x_strides, x_off.data_ptr(), y.data_ptr(),
                  y_strides, y_ptr, y_step, x_off.numel(), outer,
                  float(alpha) if is_float else 0.0, 0 if is_float else int(alpha), is_float)


def gather(out, out_strides, src, src_strides, index, index_strides, shape, dim, dim_stride,
           dim_size):
    _C.gather(src.dtype.code, index.dtype.code, out.data_ptr(), out_strides, src.data_ptr(),
              src_strides, index.data_ptr(), index_strides, shape, dim, dim_stride, dim_size)


def scatter(reduce, self, self_strides, index, index_strides, src, src_strides, shape, dim,
            dim_stride, dim_size):
    _C.scatter(REDUCE[reduce], self.dtype.code, index.dtype.code, self.data_ptr(), self_strides,
               index.data_ptr(), index_strides, src.data_ptr(), src_strides, shape, dim,
               dim_stride, dim_size)


def divide_count(x, count, count_strides):
    _C.divide_count(x.dtype.code, x.data_ptr(), x._stride, count.data_ptr(), count_strides,
                    x._shape)


def nonzero_count(x):
    return _C.nonzero(x.dtype.code, x.data_ptr(), x._shape, x._stride, 0, False)


def nonzero(x, out):
    return _C.nonzero(x.dtype.code, x.data_ptr(), x._shape, x._stride, out.data_ptr(), True)


def masked_fill(x, mask, mask_strides, value):
    if isinstance(value, float):
        _C.masked_fill(x.dtype.code, x.data_ptr(), x._stride, mask.data_ptr(), mask_strides,
                       x._shape, value, 0, True)
    else:
        _C.masked_fill(x.dtype.code, x.data_ptr(), x._stride, mask.data_ptr(), mask_strides,
                       x._shape, 0.0, int(value), False)


def tri(out, src, diagonal, upper):
    _C.tri(out.dtype.code, out.data_ptr(), out._stride, src.data_ptr(), src._stride,
           out._shape, diagonal, upper)


def tri_indices_count(row, col, offset, upper):
    return _C.tri_indices(row, col, offset, upper, 0)


def tri_indices(out, row, col, offset, upper):
    _C.tri_indices(row, col, offset, upper, out.data_ptr())


def mask_count(mask, mask_strides, shape):
    return _C.mask_count(mask.data_ptr(), shape, mask_strides)


def masked_select(out, x, x_strides, mask, mask_strides, shape):
    """out (1-d, contiguous, mask_count elements) = x where mask, row-major over shape."""
    code = 1 if x.dtype.is_float8 else x.dtype.code     # float8 elements move as bytes
    _C.masked_select(code, x.data_ptr(), x_strides, mask.data_ptr(), mask_strides,
                     shape, out.data_ptr())


def take_offsets(out, index, x):
    """out[p] = offset in x of its row-major element number index[p] (IndexError if out of
    range)."""
    _C.take_offsets(out.data_ptr(), index.data_ptr(), index._shape, index._stride, x._shape,
                    x._stride)
