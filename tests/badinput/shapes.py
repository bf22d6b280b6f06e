"""Shapes and broadcasting: mismatched operands, matrix shapes, cat/stack, reductions over
bad dims or empty inputs, repeat/tile."""
from badinput import C, E, OK


def z(*shape):
    return lambda m, d: m.zeros(*shape, device=d)


def a23(m, d):
    return m.arange(6., device=d).reshape(2, 3)


def a32(m, d):
    return m.arange(6., device=d).reshape(3, 2)


def e0(m, d):
    return m.zeros(0, device=d)


R, T, I, V = "RuntimeError", "TypeError", "IndexError", "ValueError"
NI = "NotImplementedError"
BCAST = "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 1"

CASES = [
    # broadcasting in pointwise ops
    C("add_mismatch", lambda m, d: a23(m, d) + a32(m, d), E(R, BCAST)),
    C("mul_mismatch", lambda m, d: a23(m, d) * a32(m, d), E(R, BCAST)),
    C("sub_mismatch", lambda m, d: a23(m, d) - a32(m, d), E(R, BCAST)),
    C("div_mismatch", lambda m, d: a23(m, d) / a32(m, d), E(R, BCAST)),
    C("pow_mismatch", lambda m, d: a23(m, d) ** a32(m, d), E(R, BCAST)),
    C("maximum_mismatch", lambda m, d: m.maximum(a23(m, d), a32(m, d)), E(R, BCAST)),
    C("atan2_mismatch", lambda m, d: m.atan2(a23(m, d), a32(m, d)), E(R, BCAST)),
    C("eq_mismatch", lambda m, d: a23(m, d) == a32(m, d), E(R, BCAST)),
    C("lt_mismatch", lambda m, d: a23(m, d) < a32(m, d), E(R, BCAST)),
    C("logical_and_mismatch", lambda m, d: m.logical_and(a23(m, d), a32(m, d)), E(R, BCAST)),
    C("where_mismatch", lambda m, d: m.where(a23(m, d) > 1, a23(m, d), a32(m, d)), E(R, BCAST)),
    C("lerp_mismatch", lambda m, d: m.lerp(a23(m, d), a32(m, d), 0.5), E(R, BCAST)),
    C("addcmul_mismatch", lambda m, d: m.addcmul(a23(m, d), a23(m, d), a32(m, d)), E(R, BCAST)),
    C("clamp_tensor_mismatch", lambda m, d: a23(m, d).clamp(min=a32(m, d)), E(R, BCAST)),
    C("add_inplace_broadcast_grow", lambda m, d, t: t.add_(m.zeros(2, 3, device=d)), E(R, "output with shape [3] doesn't match the broadcast shape [2, 3]"), target=lambda m, d: m.arange(3., device=d)),
    C("add_3d_mismatch", lambda m, d: m.zeros(2, 1, 3, device=d) + m.zeros(4, 2, device=d), E(R, "The size of tensor a (3) must match the size of tensor b (2)")),
    C("add_ok_broadcast", lambda m, d: m.zeros(2, 1, 3, device=d) + m.ones(4, 1, device=d), OK),
    C("add_ok_empty_broadcast", lambda m, d: m.zeros(0, 3, device=d) + m.ones(1, 3, device=d), OK),
    C("broadcast_tensors_mismatch", lambda m, d: m.broadcast_tensors(a23(m, d), a32(m, d)), E(R, BCAST)),
    C("broadcast_shapes_mismatch", lambda m, d: m.broadcast_shapes((2, 3), (3, 2)), E(R, "Attempting to broadcast a dimension of length 2 at -1! Mismatching")),
    C("broadcast_shapes_neg", lambda m, d: m.broadcast_shapes((2, -1), (2, 3)), E(V, "Attempting to broadcast a dimension with negative length!")),
    C("broadcast_shapes_ok", lambda m, d: m.broadcast_shapes((2, 1), (3,)), OK),
    C("masked_fill_mask_mismatch", lambda m, d: a23(m, d).masked_fill(m.zeros(3, 2, dtype=m.bool, device=d), 1.), E(R, "The size of tensor a (2) must match the size of tensor b (3) at")),
    # matrix products
    C("matmul_mismatch", lambda m, d: a23(m, d) @ a23(m, d), E(R, "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)")),
    C("matmul_0d", lambda m, d: m.tensor(1., device=d) @ m.tensor(2., device=d), E(R, "both arguments to matmul need to be at least 1D")),
    C("matmul_1d_mismatch", lambda m, d: m.ones(3, device=d) @ m.ones(4, device=d), E(R, "inconsistent tensor size")),
    C("matmul_batch_mismatch", lambda m, d: m.ones(2, 2, 3, device=d) @ m.ones(3, 3, 2, device=d), E(R, "The size of tensor a (2) must match the size of tensor b (3)")),
    C("matmul_ok_batched_broadcast", lambda m, d: m.ones(2, 1, 2, 3, device=d) @ m.ones(3, 3, 2, device=d), OK),
    C("matmul_ok_empty", lambda m, d: m.ones(2, 0, device=d) @ m.ones(0, 3, device=d), OK),
    C("mm_1d", lambda m, d: m.mm(m.ones(3, device=d), m.ones(3, 3, device=d)), E(R, "self must be a matrix")),
    C("mm_mismatch", lambda m, d: m.mm(a23(m, d), a23(m, d)), E(R, "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)")),
    C("bmm_2d", lambda m, d: m.bmm(a23(m, d), a32(m, d)), E(R, "batch1 must be a 3D tensor")),
    C("bmm_batch_mismatch", lambda m, d: m.bmm(m.ones(2, 2, 3, device=d), m.ones(3, 3, 2, device=d)), E(R, "Expected size for first two dimensions of batch2 tensor to be: [2, 3]")),
    C("bmm_inner_mismatch", lambda m, d: m.bmm(m.ones(2, 2, 3, device=d), m.ones(2, 2, 2, device=d)), E(R, "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [2, 2].")),
    C("mv_mismatch", lambda m, d: m.mv(a23(m, d), m.ones(2, device=d)), E(R, "size mismatch")),
    C("mv_2d_vec", lambda m, d: m.mv(a23(m, d), a32(m, d)), E(R, "vector + matrix @ vector expected")),
    C("dot_2d", lambda m, d: m.dot(a23(m, d), a23(m, d)), E(R, "1D tensors expected, but got 2D and 2D tensors")),
    C("dot_mismatch", lambda m, d: m.dot(m.ones(3, device=d), m.ones(4, device=d)), E(R, "inconsistent tensor size, expected tensor [3] and src [4] to have the same number of elements")),
    C("outer_2d", lambda m, d: m.outer(a23(m, d), m.ones(2, device=d)), E(R, "outer: Expected 1-D argument self, but got 2-D")),
    C("addmm_mismatch", lambda m, d: m.addmm(m.zeros(2, 2, device=d), a23(m, d), a23(m, d)), E(R, "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)")),
    C("addmm_bias_mismatch", lambda m, d: m.addmm(m.zeros(3, 3, device=d), a23(m, d), a32(m, d)), E(R, "The expanded size of the tensor (2) must match the existing size (3)")),
    C("baddbmm_mismatch", lambda m, d: m.baddbmm(m.zeros(2, 2, 2, device=d), m.ones(2, 2, 3, device=d), m.ones(2, 2, 2, device=d)), E(R, "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [2, 2].")),
    C("tensordot_mismatch", lambda m, d: m.tensordot(a23(m, d), a23(m, d), dims=([1], [1])), OK),
    C("tensordot_bad_dims", lambda m, d: m.tensordot(a23(m, d), a23(m, d), dims=([1], [0])), E(R, "contracted dimensions need to match, but first has size 3 in dim 1 and second has size 2 in dim 0")),
    C("tensordot_neg_dims", lambda m, d: m.tensordot(a23(m, d), a23(m, d), dims=-1), E(R, "tensordot expects dims >= 0, but got dims=-1")),
    C("einsum_bad_operands", lambda m, d: m.einsum("ij,jk->ik", a23(m, d)), E(R, "einsum(): fewer operands were provided than specified in the equation")),
    C("einsum_mismatch", lambda m, d: m.einsum("ij,jk->ik", a23(m, d), a23(m, d)), E(R, "einsum(): subscript j has size 2 for operand 1 which does not")),
    C("einsum_bad_subscript", lambda m, d: m.einsum("i1->i", a23(m, d)), E(R, "einsum(): invalid subscript given at index 1 in the equation string, subscripts must be in [a-zA-Z]")),
    C("einsum_too_many_dims", lambda m, d: m.einsum("ijk->i", a23(m, d)), E(R, "einsum(): the number of subscripts in the equation (3) does not match the number of dimensions (2) for operand 0 and no ellipsis was given")),
    C("kron_ok", lambda m, d: m.kron(a23(m, d), m.ones(2, device=d)), OK),
    C("trace_1d", lambda m, d: m.trace(m.ones(3, device=d)), E(R, "trace: expected a matrix, but got tensor with dim 1")),
    # cat / stack
    C("cat_mismatch", lambda m, d: m.cat([a23(m, d), a32(m, d)]), E(R, "Sizes of tensors must match except in dimension 0. Expected size 3 but got size 2 for tensor number 1 in the list.")),
    C("cat_empty_list", lambda m, d: m.cat([]), E(V, "torch.cat(): expected a non-empty list of Tensors")),
    C("cat_dim_oob", lambda m, d: m.cat([a23(m, d), a23(m, d)], 2), E(I, "Dimension out of range")),
    C("cat_0d", lambda m, d: m.cat([m.tensor(1., device=d), m.tensor(2., device=d)]), E(R, "zero-dimensional tensor (at position 0) cannot be concatenated")),
    C("cat_ndim_mismatch", lambda m, d: m.cat([a23(m, d), m.ones(3, device=d)]), E(R, "Tensors must have same number of dimensions: got 2 and 1")),
    C("cat_not_tensor", lambda m, d: m.cat([a23(m, d), 1]), E(T, "expected Tensor as element 1 in argument 0, but got int")),
    C("cat_ok_legacy_empty", lambda m, d: m.cat([a23(m, d), m.zeros(0, device=d)]), OK),
    C("cat_ok_promote", lambda m, d: m.cat([m.ones(2, dtype=m.bool, device=d), m.ones(2, device=d)]), OK),
    C("stack_mismatch", lambda m, d: m.stack([m.ones(2, device=d), m.ones(3, device=d)]), E(R, "stack expects each tensor to be equal size, but got [2] at entry 0 and [3] at entry 1")),
    C("stack_empty", lambda m, d: m.stack([]), E(R, "stack expects a non-empty TensorList")),
    C("stack_dim_oob", lambda m, d: m.stack([m.ones(2, device=d)], 3), E(I, "Dimension out of range")),
    C("stack_ok_neg_dim", lambda m, d: m.stack([m.ones(2, device=d), m.zeros(2, device=d)], -1), OK),
    C("hstack_empty", lambda m, d: m.hstack([]), E(R, "hstack expects a non-empty TensorList")),
    C("vstack_mismatch", lambda m, d: m.vstack([m.ones(2, device=d), m.ones(3, device=d)]), E(R, "Sizes of tensors must match except in dimension 0")),
    C("meshgrid_2d", lambda m, d: m.meshgrid(a23(m, d), indexing="ij"), E(R, "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got")),
    C("meshgrid_bad_indexing", lambda m, d: m.meshgrid(m.ones(2, device=d), indexing="kk"), E(R, "torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: kk")),
    # reductions over bad dims or empty inputs
    C("sum_dim_oob", lambda m, d: a23(m, d).sum(2), E(I, "Dimension out of range")),
    C("sum_dim_dup", lambda m, d: a23(m, d).sum((0, 0)), E(R, "dim 0 appears multiple times in the list of dims")),
    C("sum_dim_float", lambda m, d: a23(m, d).sum(0.5), E(T, "sum() received an invalid combination of arguments")),
    C("mean_dim_oob", lambda m, d: a23(m, d).mean(-3), E(I, "Dimension out of range")),
    C("prod_dim_oob", lambda m, d: a23(m, d).prod(5), E(I, "Dimension out of range")),
    C("max_empty", lambda m, d: e0(m, d).max(), E(R, "max(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the 'dim' argument.")),
    C("min_empty", lambda m, d: e0(m, d).min(), E(R, "min(): Expected reduction dim to be specified for input.numel() == 0.")),
    C("max_empty_dim", lambda m, d: m.zeros(0, 3, device=d).max(0), E(I, "max(): Expected reduction dim 0 to have non-zero size.")),
    C("argmax_empty", lambda m, d: e0(m, d).argmax(), E(I, "argmax(): Expected reduction dim to be specified for input.numel() ==")),
    C("amax_empty", lambda m, d: e0(m, d).amax(), E(R, "amax(): Expected reduction dim to be specified for input.numel() ==")),
    C("aminmax_empty", lambda m, d: m.aminmax(e0(m, d)), E(R, "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity.")),
    C("max_dim_oob", lambda m, d: a23(m, d).max(2), E(I, "Dimension out of range")),
    C("argmax_dim_oob", lambda m, d: a23(m, d).argmax(2), E(I, "Dimension out of range")),
    C("cumsum_dim_oob", lambda m, d: a23(m, d).cumsum(2), E(I, "Dimension out of range")),
    C("cumprod_no_dim", lambda m, d: a23(m, d).cumprod(), E(T, "cumprod() missing 1 required positional arguments: \"dim\"")),
    C("logsumexp_dim_oob", lambda m, d: a23(m, d).logsumexp(2), E(I, "Dimension out of range")),
    C("std_dim_oob", lambda m, d: a23(m, d).std(2), E(I, "Dimension out of range")),
    C("var_bad_correction", lambda m, d: a23(m, d).var(correction=1.5), OK),
    C("median_empty", lambda m, d: e0(m, d).median(), OK),
    C("median_empty_dim", lambda m, d: m.zeros(0, 3, device=d).median(0), E(I, "median(): Expected reduction dim 0 to have non-zero size.")),
    C("mode_empty_dim", lambda m, d: m.zeros(0, 3, device=d).mode(0), E(I, "mode(): Expected reduction dim 0 to have non-zero size.")),
    C("kthvalue_oob", lambda m, d: m.ones(3, device=d).kthvalue(4), E(R, "kthvalue(): selected number k out of range for dimension 0")),
    C("kthvalue_zero", lambda m, d: m.ones(3, device=d).kthvalue(0), E(R, "kthvalue(): selected number k out of range for dimension 0")),
    C("topk_too_big", lambda m, d: m.ones(3, device=d).topk(4), E(R, "selected index k out of range")),
    C("topk_neg", lambda m, d: m.ones(3, device=d).topk(-1), E(R, "selected index k out of range")),
    C("topk_dim_oob", lambda m, d: m.ones(3, device=d).topk(1, dim=1), E(I, "Dimension out of range")),
    C("sort_dim_oob", lambda m, d: m.ones(3, device=d).sort(1), E(I, "Dimension out of range")),
    C("argsort_dim_oob", lambda m, d: m.ones(3, device=d).argsort(-2), E(I, "Dimension out of range")),
    C("sum_ok_empty", lambda m, d: m.zeros(0, 3, device=d).sum(0), OK),
    C("prod_ok_empty", lambda m, d: e0(m, d).prod(), OK),
    C("mean_ok_empty", lambda m, d: e0(m, d).mean(), OK),
    C("max_ok_0d_dim", lambda m, d: m.tensor(1., device=d).max(0), OK),
    C("sum_ok_0d_dim_neg", lambda m, d: m.tensor(1., device=d).sum(-1), OK),
    C("sum_0d_dim_oob", lambda m, d: m.tensor(1., device=d).sum(1), E(I, "Dimension out of range (expected to be in range of [-1, 0], but got 1)")),
    C("topk_ok_zero", lambda m, d: m.ones(3, device=d).topk(0), OK),
    C("norm_bad_p", lambda m, d: a23(m, d).norm(p="fro", dim=(0, 0)), E(R, "dim 0 appears multiple times in the list of dims")),
    # repeat / tile / repeat_interleave / triangular
    C("repeat_fewer_dims", lambda m, d: a23(m, d).repeat(2), E(R, "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")),
    C("repeat_neg", lambda m, d: a23(m, d).repeat(2, -1), E(R, "Trying to create tensor with negative dimension -3: [4, -3]")),
    C("repeat_float", lambda m, d: a23(m, d).repeat(2, 1.5), E(T, "repeat(): argument 'repeats'")),
    C("repeat_ok_zero", lambda m, d: a23(m, d).repeat(0, 2), OK),
    C("tile_neg", lambda m, d: a23(m, d).tile((-1,)), E(R, "Trying to create tensor with negative dimension -3: [2, -3]")),
    C("repeat_interleave_neg", lambda m, d: m.ones(3, device=d).repeat_interleave(-1), E(R, "Repeats must be non-negative")),
    C("repeat_interleave_tensor_neg", lambda m, d: m.ones(3, device=d).repeat_interleave(m.tensor([1, -1, 1], device=d)), E(R, "repeats can not be negative")),
    C("repeat_interleave_len_mismatch", lambda m, d: m.ones(3, device=d).repeat_interleave(m.tensor([1, 2], device=d)), E(R, "repeats must have the same size as input along dim, but got repeats.size(0) = 2 and input.size(0) = 3")),
    C("repeat_interleave_float", lambda m, d: m.ones(3, device=d).repeat_interleave(m.tensor([1., 2., 1.], device=d)), E(NI, "not implemented for 'Float'")),
    C("triu_1d", lambda m, d: m.ones(3, device=d).triu(), E(R, "triu: input tensor must have at least 2 dimensions")),
    C("tril_1d", lambda m, d: m.ones(3, device=d).tril(), E(R, "tril: input tensor must have at least 2 dimensions")),
    C("diag_3d", lambda m, d: m.ones(2, 2, 2, device=d).diag(), E(R, "diag(): Supports 1D or 2D tensors. Got 3D")),
    C("diag_embed_dims", lambda m, d: m.ones(3, device=d).diag_embed(0, 0, 0), E(R, "diagonal dimensions cannot be identical 0, 0")),
    C("sum_to_size_bad", lambda m, d: a23(m, d).sum_to_size(3), OK),
    C("tril_indices_neg", lambda m, d: m.tril_indices(-1, 3, device=d), E(R, "row must be non-negative, got-1")),
    C("triu_indices_neg_col", lambda m, d: m.triu_indices(3, -1, device=d), E(R, "col must be non-negative, got-1")),
    C("block_diag_3d", lambda m, d: m.block_diag(m.ones(2, 2, 2, device=d)), E(R, "torch.block_diag: Input tensors must have 2 or fewer dimensions. Input 0 has 3 dimensions")),
    C("cartesian_prod_2d", lambda m, d: m.cartesian_prod(a23(m, d)), E(R, "Expect a 1D vector, but got shape [2, 3]")),
]
