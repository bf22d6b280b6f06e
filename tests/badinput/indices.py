"""Indices taken from tensors: gather, scatter, index_select, index_add/copy/fill/put, take,
put_, take_along_dim, searchsorted's sorter, bincount, histc, masked_*, advanced indexing.
Out of range, negative, wrong dtype, wrong shape, 0-d tensors as dims."""
from badinput import C, E, OK


def x32(m, d):
    return m.arange(6., device=d).reshape(3, 2)


def x6(m, d):
    return m.arange(6., device=d)


def ix(*v):
    return lambda m, d: m.tensor(list(v), device=d)


def idx(m, d, *v):
    return m.tensor(list(v), device=d)


R, T, I, V = "RuntimeError", "TypeError", "IndexError", "ValueError"
NI = "NotImplementedError"
OOR = "index out of range in self"

CASES = [
    # index_select
    C("index_select_oob", lambda m, d: x32(m, d).index_select(0, idx(m, d, 0, 3)), E(I, OOR)),
    C("index_select_neg", lambda m, d: x32(m, d).index_select(0, idx(m, d, -1)), E(I, OOR)),
    C("index_select_dim1_oob", lambda m, d: x32(m, d).index_select(1, idx(m, d, 2)), E(R, "INDICES element is out of DATA bounds, id=2 axis_dim=2")),
    C("index_select_dim1_neg", lambda m, d: x32(m, d).index_select(1, idx(m, d, -1)), E(R, "INDICES element is out of DATA bounds")),
    C("index_select_huge", lambda m, d: x32(m, d).index_select(0, idx(m, d, 2**40)), E(I, OOR), crash=True),
    C("index_select_float_index", lambda m, d: x32(m, d).index_select(0, idx(m, d, 0.)), E(R, "index_select(): Expected dtype int32 or int64 for index")),
    C("index_select_2d_index", lambda m, d: x32(m, d).index_select(0, m.zeros(1, 1, dtype=m.int64, device=d)), E(I, "index_select(): Index is supposed to be a vector")),
    C("index_select_dim_oob", lambda m, d: x32(m, d).index_select(2, idx(m, d, 0)), E(I, "Dimension out of range")),
    C("index_select_dim_0d_tensor_ok", lambda m, d: x32(m, d).index_select(m.tensor(1), idx(m, d, 1, 0)), OK),
    C("index_select_dim_0d_tensor_oob", lambda m, d: x32(m, d).index_select(m.tensor(2), idx(m, d, 0)), E(I, "Dimension out of range")),
    C("index_select_ok_0d_index", lambda m, d: x32(m, d).index_select(0, m.tensor(2, device=d)), OK),
    C("index_select_ok_int32", lambda m, d: x32(m, d).index_select(1, m.tensor([1, 1], dtype=m.int32, device=d)), OK),
    C("index_select_ok_empty", lambda m, d: x32(m, d).index_select(0, m.zeros(0, dtype=m.int64, device=d)), OK),
    # gather
    C("gather_oob", lambda m, d: m.gather(x32(m, d), 1, m.tensor([[0], [2], [1]], device=d)), E(R, "index 2 is out of bounds for dimension 1 with size 2")),
    C("gather_neg", lambda m, d: m.gather(x32(m, d), 0, m.tensor([[-1, 0]], device=d)), E(R, "index -1 is out of bounds for dimension 0 with size 3")),
    C("gather_huge", lambda m, d: m.gather(x32(m, d), 0, m.tensor([[2**40, 0]], device=d)), E(R, "is out of bounds for dimension 0 with size 3"), crash=True),
    C("gather_float_index", lambda m, d: m.gather(x32(m, d), 0, m.tensor([[0., 0.]], device=d)), E(R, "gather(): Expected dtype int32/int64 for index")),
    C("gather_int32_index", lambda m, d: m.gather(x32(m, d), 0, m.tensor([[0, 0]], dtype=m.int32, device=d)), OK),
    C("gather_ndim_mismatch", lambda m, d: m.gather(x32(m, d), 0, idx(m, d, 0)), E(R, "Index tensor must have the same number of dimensions as input tensor")),
    C("gather_index_too_big", lambda m, d: m.gather(x32(m, d), 0, m.zeros(1, 3, dtype=m.int64, device=d)), E(R, "Size does not match at dimension 1 expected index [1, 3] to be no larger than self [3, 2] apart from dimension 0")),
    C("gather_dim_oob", lambda m, d: m.gather(x32(m, d), 2, m.zeros(1, 1, dtype=m.int64, device=d)), E(I, "Dimension out of range")),
    C("gather_dim_0d_tensor_ok", lambda m, d: m.gather(x32(m, d), m.tensor(1), m.tensor([[1], [0], [1]], device=d)), OK),
    C("gather_ok", lambda m, d: m.gather(x32(m, d), 0, m.tensor([[2, 0]], device=d)), OK),
    # scatter family (in place: the target must be unchanged after an error)
    C("scatter_oob", lambda m, d, t: t.scatter_(0, m.tensor([[3, 0]], device=d), 1.), E(R, "index 3 is out of bounds for dimension 0 with size 3"), target=x32),
    C("scatter_neg", lambda m, d, t: t.scatter_(1, m.tensor([[0, -1]], device=d), 1.), E(R, "index -1 is out of bounds for dimension 1 with size 2"), target=x32),
    C("scatter_huge", lambda m, d, t: t.scatter_(0, m.tensor([[0, 2**40]], device=d), 1.), E(R, "is out of bounds for dimension 0 with size 3"), target=x32, crash=True),
    C("scatter_src_oob", lambda m, d, t: t.scatter_(0, m.tensor([[0, 5]], device=d), m.ones(1, 2, device=d)), E(R, "index 5 is out of bounds for dimension 0 with size 3"), target=x32),
    C("scatter_float_index", lambda m, d, t: t.scatter_(0, m.tensor([[0., 1.]], device=d), 1.), E(R, "scatter(): Expected dtype int32/int64 for index"), target=x32),
    C("scatter_src_too_small", lambda m, d, t: t.scatter_(0, m.zeros(2, 2, dtype=m.int64, device=d), m.ones(1, 2, device=d)), E(R, "Expected index [2, 2] to be no larger than self [3, 2] apart from dimension 0 and to be no larger size than src [1, 2]"), target=x32),
    C("scatter_ndim_mismatch", lambda m, d, t: t.scatter_(0, idx(m, d, 0), 1.), E(R, "Index tensor must have the same number of dimensions as self tensor"), target=x32),
    C("scatter_add_oob", lambda m, d, t: t.scatter_add_(0, m.tensor([[0, 3]], device=d), m.ones(1, 2, device=d)), E(R, "index 3 is out of bounds for dimension 0 with size 3"), target=x32),
    C("scatter_add_neg", lambda m, d, t: t.scatter_add_(0, m.tensor([[-1, 0]], device=d), m.ones(1, 2, device=d)), E(R, "index -1 is out of bounds for dimension 0 with size 3"), target=x32),
    C("scatter_reduce_bad", lambda m, d, t: t.scatter_reduce_(0, m.tensor([[0, 1]], device=d), m.ones(1, 2, device=d), "max2"), E(R, "reduce argument must be either sum, prod, mean, amax or amin, got max2"), target=x32),
    C("scatter_reduce_oob", lambda m, d, t: t.scatter_reduce_(0, m.tensor([[0, 7]], device=d), m.ones(1, 2, device=d), "amax"), E(R, "index 7 is out of bounds for dimension 0 with size 3"), target=x32),
    C("scatter_ok_0d_dim_tensor", lambda m, d, t: t.scatter_(m.tensor(1), m.tensor([[1], [0], [1]], device=d), 9.), OK, target=x32),
    C("scatter_ok", lambda m, d, t: t.scatter_(0, m.tensor([[2, 0]], device=d), m.ones(1, 2, device=d)), OK, target=x32),
    C("scatter_ok_empty_index", lambda m, d, t: t.scatter_(0, m.zeros(0, 2, dtype=m.int64, device=d), 1.), OK, target=x32),
    # index_add_ / index_copy_ / index_fill_
    C("index_add_oob", lambda m, d, t: t.index_add_(0, idx(m, d, 3), m.ones(1, 2, device=d)), E(R, "index 3 is out of bounds for dimension 0 with size 3"), target=x32),
    C("index_add_neg", lambda m, d, t: t.index_add_(0, idx(m, d, -4), m.ones(1, 2, device=d)), E(R, "index -4 is out of bounds for dimension 0 with size 3"), target=x32),
    C("index_add_huge", lambda m, d, t: t.index_add_(0, idx(m, d, 2**40), m.ones(1, 2, device=d)), E(R, "index 1099511627776 is out of bounds for dimension 0 with size 3"), target=x32, crash=True),
    C("index_add_source_mismatch", lambda m, d, t: t.index_add_(0, idx(m, d, 0), m.ones(1, 3, device=d)), E(R, "source tensor shape must match self tensor shape, excluding the"), target=x32),
    C("index_add_len_mismatch", lambda m, d, t: t.index_add_(0, idx(m, d, 0, 1), m.ones(1, 2, device=d)), E(R, "index_add_(): Number of indices (2) should be equal to"), target=x32),
    C("index_add_float_index", lambda m, d, t: t.index_add_(0, idx(m, d, 0.), m.ones(1, 2, device=d)), E(R, "index_add_(): Expected dtype int32/int64 for index"), target=x32),
    C("index_add_ok_0d_dim_tensor", lambda m, d, t: t.index_add_(m.tensor(1), idx(m, d, 1), m.ones(3, 1, device=d)), OK, target=x32),
    C("index_add_neg_one", lambda m, d, t: t.index_add_(0, idx(m, d, -1), m.ones(1, 2, device=d), alpha=2), E(I, "index out of range in self"), target=x32),
    C("index_copy_oob", lambda m, d, t: t.index_copy_(0, idx(m, d, 3), m.ones(1, 2, device=d)), E(I, "index_copy_(): index 3 is out of bounds for dimension 0 with size 3"), target=x32),
    C("index_copy_neg", lambda m, d, t: t.index_copy_(0, idx(m, d, -1), m.ones(1, 2, device=d)), E(I, "index_copy_(): index -1 is out of bounds"), target=x32),
    C("index_copy_len_mismatch", lambda m, d, t: t.index_copy_(0, idx(m, d, 0, 1), m.ones(1, 2, device=d)), E(I, "index_copy_(): Number of indices (2) should be equal to"), target=x32),
    C("index_copy_float_index", lambda m, d, t: t.index_copy_(0, idx(m, d, 0.), m.ones(1, 2, device=d)), E(R, "index_copy_(): Expected a long tensor for index, but got Float"), target=x32),
    C("index_fill_oob", lambda m, d, t: t.index_fill_(0, idx(m, d, 3), 1.), E(I, "index 3 is out of bounds for dimension 0 with size 3"), target=x32),
    C("index_fill_neg_oob", lambda m, d, t: t.index_fill_(0, idx(m, d, -4), 1.), E(I, "index -4 is out of bounds for dimension 0 with size 3"), target=x32),
    C("index_fill_huge", lambda m, d, t: t.index_fill_(0, idx(m, d, 2**40), 1.), E(I, "is out of bounds for dimension 0 with size 3"), target=x32, crash=True),
    C("index_fill_float_index", lambda m, d, t: t.index_fill_(0, idx(m, d, 0.), 1.), E(I, "index_fill_(): Expected dtype int64 for index."), target=x32),
    C("index_fill_ok_0d_dim_tensor", lambda m, d, t: t.index_fill_(m.tensor(1), idx(m, d, 1), -1.), OK, target=x32),
    C("index_fill_ok_neg", lambda m, d, t: t.index_fill_(0, idx(m, d, -1), -1.), OK, target=x32),
    C("index_fill_2d_index", lambda m, d, t: t.index_fill_(0, m.zeros(1, 1, dtype=m.int64, device=d), 1.), E(R, "Index has to be a vector/scalar"), target=x32),
    # index_put_ / advanced indexing
    C("index_put_oob", lambda m, d, t: t.index_put_((idx(m, d, 6),), m.tensor(1., device=d)), E(I, "index 6 is out of bounds for dimension 0 with size 6"), target=x6),
    C("index_put_neg_oob", lambda m, d, t: t.index_put_((idx(m, d, -7),), m.tensor(1., device=d)), E(I, "index -7 is out of bounds for dimension 0 with size 6"), target=x6),
    C("index_put_huge", lambda m, d, t: t.index_put_((idx(m, d, 2**40),), m.tensor(1., device=d)), E(I, "is out of bounds for dimension 0 with size 6"), target=x6, crash=True),
    C("index_put_accumulate_oob", lambda m, d, t: t.index_put_((idx(m, d, 0, 6),), m.tensor(1., device=d), accumulate=True), E(I, "out of bounds"), target=x6),
    C("index_put_values_mismatch", lambda m, d, t: t.index_put_((idx(m, d, 0, 1),), m.ones(3, device=d)), E(R, "shape mismatch: value tensor of shape [3] cannot be broadcast to indexing result of shape [2]"), target=x6),
    C("index_put_float_index", lambda m, d, t: t.index_put_((idx(m, d, 0.),), m.tensor(1., device=d)), E(I, "tensors used as indices must be long, int, byte or bool tensors"), target=x6),
    C("index_put_ok_neg", lambda m, d, t: t.index_put_((idx(m, d, -1, 0),), m.tensor(9., device=d)), OK, target=x6),
    C("index_put_ok_accumulate_dup", lambda m, d, t: t.index_put_((idx(m, d, 1, 1),), m.tensor(1., device=d), accumulate=True), OK, target=x6),
    C("getitem_tensor_oob", lambda m, d: x6(m, d)[idx(m, d, 0, 6)], E(I, "index 6 is out of bounds for dimension 0 with size 6")),
    C("getitem_tensor_neg_oob", lambda m, d: x6(m, d)[idx(m, d, -7)], E(I, "index -7 is out of bounds for dimension 0 with size 6")),
    C("getitem_tensor_huge", lambda m, d: x6(m, d)[idx(m, d, 2**40)], E(I, "is out of bounds for dimension 0 with size 6"), crash=True),
    C("getitem_float_tensor", lambda m, d: x6(m, d)[idx(m, d, 1.)], E(I, "tensors used as indices must be long, int, byte or bool tensors")),
    C("getitem_list_oob", lambda m, d: x6(m, d)[[0, 6]], E(I, "index 6 is out of bounds for dimension 0 with size 6")),
    C("getitem_mask_shape", lambda m, d: x6(m, d)[m.ones(3, dtype=m.bool, device=d)], E(I, "The shape of the mask [3] at index 0 does not match the shape of the indexed tensor [6] at index 0")),
    C("getitem_2d_oob_second", lambda m, d: x32(m, d)[idx(m, d, 0), idx(m, d, 2)], E(I, "index 2 is out of bounds for dimension 1 with size 2")),
    C("getitem_broadcast_mismatch", lambda m, d: x32(m, d)[idx(m, d, 0, 1), idx(m, d, 0, 1, 0)], E(I, "shape mismatch: indexing tensors could not be broadcast together with shapes [2], [3]")),
    C("getitem_ok_neg_tensor", lambda m, d: x6(m, d)[idx(m, d, -1, -6)], OK),
    C("getitem_ok_0d_tensor", lambda m, d: x6(m, d)[m.tensor(2, device=d)], OK),
    C("getitem_ok_bool_mask", lambda m, d: x32(m, d)[x32(m, d) > 2], OK),
    C("setitem_tensor_oob", lambda m, d, t: t.__setitem__(idx(m, d, 1, 6), 1.), E(I, "index 6 is out of bounds for dimension 0 with size 6"), target=x6),
    C("setitem_mask_shape", lambda m, d, t: t.__setitem__(m.ones(3, dtype=m.bool, device=d), 1.), E(I, "The shape of the mask [3] at index 0 does not match"), target=x6),
    # take / put_ / take_along_dim
    C("take_oob", lambda m, d: m.take(x32(m, d), idx(m, d, 6)), E(I, "out of range: tried to access index 6 on a tensor of 6 elements.")),
    C("take_neg_oob", lambda m, d: m.take(x32(m, d), idx(m, d, -7)), E(I, "out of range: tried to access index -7 on a tensor of 6 elements.")),
    C("take_huge", lambda m, d: m.take(x32(m, d), idx(m, d, 2**40)), E(I, "out of range: tried to access index 1099511627776 on a tensor of 6"), crash=True),
    C("take_float_index", lambda m, d: m.take(x32(m, d), idx(m, d, 1.)), E(R, "take(): Expected a long tensor for index, but got Float")),
    C("take_ok_neg", lambda m, d: m.take(x32(m, d), m.tensor([[-1, 0]], device=d)), OK),
    C("take_empty_self", lambda m, d: m.take(m.zeros(0, device=d), idx(m, d, 0)), E(I, "take(): tried to take from an empty tensor")),
    C("put_oob", lambda m, d, t: t.put_(idx(m, d, 6), m.ones(1, device=d)), E(I, "out of range: tried to access index 6 on a tensor of 6 elements."), target=x32),
    C("put_neg_oob", lambda m, d, t: t.put_(idx(m, d, -7), m.ones(1, device=d)), E(I, "out of range: tried to access index -7 on a tensor of 6 elements."), target=x32),
    C("put_huge", lambda m, d, t: t.put_(idx(m, d, 0, 2**40), m.ones(2, device=d)), E(I, "out of range: tried to access index 1099511627776 on a tensor of 6"), target=x32, crash=True),
    C("put_accumulate_oob", lambda m, d, t: t.put_(idx(m, d, 0, 9), m.ones(2, device=d), accumulate=True), E(I, "out of range: tried to access index 9 on a tensor of 6 elements."), target=x32),
    C("put_numel_mismatch", lambda m, d, t: t.put_(idx(m, d, 0, 1), m.ones(3, device=d)), E(I, "put_(): Expected source and index to have the same number of"), target=x32),
    C("put_float_index", lambda m, d, t: t.put_(idx(m, d, 0.), m.ones(1, device=d)), E(R, "put_(): Expected a long tensor for index, but got Float"), target=x32),
    C("put_ok_neg", lambda m, d, t: t.put_(idx(m, d, -1), m.ones(1, device=d) * 7), OK, target=x32),
    C("take_along_dim_wraps", lambda m, d: m.take_along_dim(x32(m, d), m.tensor([[2], [0], [1]], device=d), 1), OK),
    C("take_along_dim_wraps_neg", lambda m, d: m.take_along_dim(x32(m, d), m.tensor([[-3], [0], [1]], device=d), 1), OK),
    C("take_along_dim_ndim", lambda m, d: m.take_along_dim(x32(m, d), idx(m, d, 0), 1), E(R, "torch.take_along_dim(): input and indices should have the same number of dimensions, but got 2 dimensions for input, and 1 dimensions for indices")),
    C("take_along_dim_float", lambda m, d: m.take_along_dim(x32(m, d), m.tensor([[0.]], device=d), 1), E(R, "torch.take_along_dim(): dtype of indices should be Long but got Float")),
    C("take_along_dim_no_dim_oob", lambda m, d: m.take_along_dim(x32(m, d), idx(m, d, 6)), E(R, "index 6 is out of bounds for dimension 0 with size 6")),
    C("take_along_dim_ok_neg", lambda m, d: m.take_along_dim(x32(m, d), m.tensor([[-1], [0], [1]], device=d), 1), OK),
    # searchsorted / bucketize
    C("searchsorted_sorter_huge", lambda m, d: m.searchsorted(m.tensor([1., 2.], device=d), m.tensor([1.5, 0.5], device=d), sorter=idx(m, d, 2**40, 0)), E(R, "sorter index out of range"), crash=True),
    C("searchsorted_sorter_oob", lambda m, d: m.searchsorted(m.tensor([1., 2.], device=d), m.tensor([1.5], device=d), sorter=idx(m, d, 2, 0)), E(R, "sorter index out of range")),
    C("searchsorted_sorter_neg", lambda m, d: m.searchsorted(m.tensor([1., 2.], device=d), m.tensor([1.5], device=d), sorter=idx(m, d, -1, 0)), E(R, "sorter index out of range")),
    C("searchsorted_sorter_size", lambda m, d: m.searchsorted(m.tensor([1., 2.], device=d), m.tensor([1.5], device=d), sorter=idx(m, d, 0)), E(R, "boundary and sorter must have the same size, but got boundary tensor [2]and got sorter tensor [1]")),
    C("searchsorted_sorter_float", lambda m, d: m.searchsorted(m.tensor([1., 2.], device=d), m.tensor([1.5], device=d), sorter=idx(m, d, 0., 1.)), E(R, "torch.searchsorted(): sorter must be a tensor of long dtype but got")),
    C("searchsorted_sorter_ok", lambda m, d: m.searchsorted(m.tensor([3., 1., 2.], device=d), m.tensor([1.5, 0.5, 9.], device=d), sorter=idx(m, d, 1, 2, 0)), OK),
    C("searchsorted_dims_mismatch", lambda m, d: m.searchsorted(x32(m, d), m.ones(2, 2, device=d)), E(R, "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries tensor and input value tensor must match")),
    C("searchsorted_bad_side", lambda m, d: m.searchsorted(x6(m, d), x6(m, d), side="middle"), E(R, "torch.searchsorted(): side can only be 'left' or 'right' but got middle")),
    C("searchsorted_side_right_conflict", lambda m, d: m.searchsorted(x6(m, d), x6(m, d), side="left", right=True), E(R, "torch.searchsorted(): side and right can't be set to opposites, got side of left while right was True")),
    C("searchsorted_ok_0d_boundary", lambda m, d: m.searchsorted(x6(m, d), m.tensor(2.5, device=d)), OK),
    C("searchsorted_0d_boundaries", lambda m, d: m.searchsorted(m.tensor(1., device=d), x6(m, d)), E(R, "boundaries tensor should have positive dimension")),
    C("searchsorted_dtype_mismatch_ok", lambda m, d: m.searchsorted(x6(m, d), m.tensor([2], device=d)), OK),
    C("bucketize_2d_boundaries", lambda m, d: m.bucketize(x6(m, d), x32(m, d)), E(R, "boundaries tensor must be 1 dimension, but got dim(2)")),
    # bincount / histc
    C("bincount_neg", lambda m, d: m.bincount(idx(m, d, 0, -1)), E(R, "bincount only supports 1-d non-negative integral inputs.")),
    C("bincount_float", lambda m, d: m.bincount(idx(m, d, 0., 1.)), E(NI, "not implemented for 'Float'")),
    C("bincount_2d", lambda m, d: m.bincount(m.zeros(2, 2, dtype=m.int64, device=d)), E(R, "bincount only supports 1-d non-negative integral inputs.")),
    C("bincount_weights_mismatch", lambda m, d: m.bincount(idx(m, d, 0, 1), m.ones(3, device=d)), E(R, "weights should be 1-d and have the same length as input")),
    C("bincount_neg_minlength", lambda m, d: m.bincount(idx(m, d, 0, 1), minlength=-1), E(R, "minlength should be >= 0")),
    C("bincount_huge", lambda m, d: m.bincount(idx(m, d, 2**40)), E(R, "allocate"), crash=True),
    C("bincount_ok_empty", lambda m, d: m.bincount(m.zeros(0, dtype=m.int64, device=d), minlength=3), OK),
    C("bincount_ok_weights", lambda m, d: m.bincount(idx(m, d, 0, 2, 2), m.tensor([0.5, 1., 2.], device=d)), OK),
    C("histc_zero_bins", lambda m, d: m.histc(x6(m, d), bins=0), E(R, "torch.histogram(): bins must be > 0, but got 0 for dimension 0")),
    C("histc_neg_bins", lambda m, d: m.histc(x6(m, d), bins=-3), E(R, "bins must be > 0")),
    C("histc_min_gt_max", lambda m, d: m.histc(x6(m, d), bins=3, min=5, max=1), E(R, "torch.histc: max must be larger than min")),
    C("histc_nan_range", lambda m, d: m.histc(x6(m, d), bins=3, min=float("nan"), max=1), E(R, "range of [nan, 1] is not finite")),
    C("histc_inf_range", lambda m, d: m.histc(x6(m, d), bins=3, min=0, max=float("inf")), E(R, "range of [0, inf] is not finite")),
    C("histc_huge_bins", lambda m, d: m.histc(x6(m, d), bins=2**40), E(R, "allocate"), crash=True),
    C("histc_ok_nan_input", lambda m, d: m.histc(m.tensor([1., float("nan"), 2.], device=d), bins=2, min=0, max=3), OK),
    C("histc_float_bins", lambda m, d: m.histc(x6(m, d), bins=3.0), E(T, "histc(): argument 'bins' must be int, not float")),
    # masked_*
    C("masked_fill_uint8_mask", lambda m, d: x6(m, d).masked_fill(m.ones(6, dtype=m.uint8, device=d), 1.), E(R, "masked_fill_ only supports boolean masks, but got mask with dtype unsigned char")),
    C("masked_fill_float_mask", lambda m, d: x6(m, d).masked_fill(x6(m, d), 1.), E(R, "masked_fill_ only supports boolean masks, but got mask with dtype float")),
    C("masked_fill_value_1d", lambda m, d: x6(m, d).masked_fill(x6(m, d) > 2, m.ones(2, device=d)), E(R, "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 dimension(s).")),
    C("masked_fill_inplace_grow", lambda m, d, t: t.masked_fill_(m.ones(2, 6, dtype=m.bool, device=d), 1.), E(R, "output with shape [6] doesn't match the broadcast shape [2, 6]"), target=x6),
    C("masked_fill_ok_0d_value", lambda m, d: x6(m, d).masked_fill(x6(m, d) > 2, m.tensor(-1., device=d)), OK),
    C("masked_select_float_mask", lambda m, d: x6(m, d).masked_select(x6(m, d)), E(R, "masked_select: expected BoolTensor for mask")),
    C("masked_select_mismatch", lambda m, d: x6(m, d).masked_select(m.ones(4, dtype=m.bool, device=d)), E(R, "The size of tensor a (4) must match the size of tensor b (6) at")),
    C("masked_select_ok_broadcast", lambda m, d: x32(m, d).masked_select(m.tensor([True, False], device=d)), OK),
    C("masked_scatter_too_few", lambda m, d, t: t.masked_scatter_(t > 0, m.ones(2, device=d)), E(R, "Number of elements of source < number of ones in mask"), target=x6),
    C("masked_scatter_float_mask", lambda m, d, t: t.masked_scatter_(t, m.ones(6, device=d)), E(R, "masked_scatter_ only supports boolean masks, but got mask with dtype"), target=x6),
    C("masked_scatter_ok", lambda m, d, t: t.masked_scatter_(t > 3, m.tensor([10., 20., 30.], device=d)), OK, target=x6),
    C("nonzero_ok_0d", lambda m, d: m.tensor(3., device=d).nonzero(), OK),
    C("unique_dim_oob", lambda m, d: x32(m, d).unique(dim=2), E(I, "Dimension out of range")),
]
