"""CPU launchers: sort, selection, scans and counting kernels (native/sort.cpp).

Row kernels take, per operand, a layout ``(outer strides, row stride)``: the strides of
the dims other than the op's dim and the stride along it, in elements."""
from .. import _C

SCAN_KINDS = {"cumsum": 0, "cumprod": 1, "logcumsumexp": 2}


def sort_rows(outer, n, descending, x, xl, values, vl, indices, il):
    _C.sort_rows(x.dtype.code, outer, n, descending, x.data_ptr(), xl[0], xl[1],
                 values.data_ptr(), vl[0], vl[1], indices.data_ptr(), il[0], il[1])


def topk_rows(outer, n, k, largest, is_sorted, x, xl, values, vl, indices, il):
    _C.topk_rows(x.dtype.code, outer, n, k, largest, is_sorted, x.data_ptr(), xl[0], xl[1],
                 values.data_ptr(), vl[0], vl[1], indices.data_ptr(), il[0], il[1])


def kth_rows(outer, n, k, mode, x, xl, values, vl, indices, il):
    """mode 0: k-th smallest (0-based); 1: median; 2: nanmedian."""
    _C.kth_rows(x.dtype.code, outer, n, k, mode, x.data_ptr(), xl[0], xl[1],
                values.data_ptr(), vl[0], vl[1], indices.data_ptr(), il[0], il[1])


def mode_rows(outer, n, x, xl, values, vl, indices, il):
    _C.mode_rows(x.dtype.code, outer, n, x.data_ptr(), xl[0], xl[1], values.data_ptr(), vl[0],
                 vl[1], indices.data_ptr(), il[0], il[1])


def scan(kind, x, y, outer, n, inner):
    """y = scan of contiguous x viewed as (outer, n, inner) along n; same dtype."""
    _C.scan(SCAN_KINDS[kind], x.dtype.code, x.data_ptr(), y.data_ptr(), outer, n, inner)


def cum_ext(is_max, x, values, indices, outer, n, inner):
    _C.cum_ext(is_max, x.dtype.code, x.data_ptr(), values.data_ptr(), indices.data_ptr(), outer,
               n, inner)


def unique_rows(x, n, m, do_sort, perm, inverse, counts, first):
    """Groups equal rows of contiguous x viewed as (n, m); returns the number of groups.
    ``inverse`` may be None when it is not wanted."""
    return _C.unique_rows(x.dtype.code, x.data_ptr(), n, m, do_sort, perm.data_ptr(),
                          inverse.data_ptr() if inverse is not None else 0, counts.data_ptr(),
                          first.data_ptr())


def unique_flat(x, n, values, inverse, counts):
    """Sorted unique values of contiguous x (n elements) into values; returns how many.
    ``inverse`` may be None when it is not wanted."""
    return _C.unique_flat(x.dtype.code, x.data_ptr(), n, values.data_ptr(),
                          inverse.data_ptr() if inverse is not None else 0, counts.data_ptr())


def gather_rows(dst, src, rows, count, row_bytes):
    _C.gather_rows(dst.data_ptr(), src.data_ptr(), rows.data_ptr(), count, row_bytes)


def int_range(x):
    """(min, max) of a 1-d integer tensor ((0, 0) when empty)."""
    return _C.int_range(x.dtype.code, x.data_ptr(), x._shape[0], x._stride[0])


def bincount(x, weights, out):
    w = weights if weights is not None else x
    _C.bincount(x.dtype.code, x.data_ptr(), x._shape[0], x._stride[0], w.dtype.code,
                w.data_ptr(), w._stride[0], out.data_ptr(), out.dtype.code)


def float_range(x):
    return _C.float_range(x.dtype.code, x.data_ptr(), x._shape, x._stride)


def histc(x, out, bins, lo, hi):
    _C.histc(x.dtype.code, x.data_ptr(), x._shape, x._stride, out.data_ptr(), bins, lo, hi)


def searchsorted(outer, nb, nv, right, b, bl, sorter, sl, v, vl, out, ol):
    _C.searchsorted(b.dtype.code, outer, nb, nv, right, out.dtype.code == 4, b.data_ptr(), bl[0],
                    bl[1], sorter.data_ptr() if sorter is not None else 0, sl[0], sl[1],
                    v.data_ptr(), vl[0], vl[1], out.data_ptr(), ol[0], ol[1])
