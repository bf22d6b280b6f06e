"""In-place writes and overlap: in-place ops and out= on tensors whose elements share memory
(expanded or overlapping strided views), partial overlap between input and output, out=
aliasing an input. The target is the base tensor; it must be unchanged after an error.
Where torch writes through an overlapping view without complaint, raising PyTorch's overlap
error is accepted too; where the written values depend on the loop order, they are not
compared (check_value=False)."""
from badinput import C, E, OK, OVERLAP

R, T, I, V = "RuntimeError", "TypeError", "IndexError", "ValueError"
PARTIAL = "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location"


def row(m, d):
    return m.arange(4., device=d).reshape(1, 4)


def a6(m, d):
    return m.arange(6., device=d)


def sq(m, d):
    return m.arange(9., device=d).reshape(3, 3)


def m44(m, d):
    return m.arange(16., device=d).reshape(4, 4)


def ex(t):
    """An expanded view: 3 rows sharing one row of memory."""
    return t.expand(3, 4)


def ov(t):
    """An overlapping strided view of a 1-d tensor: [[t0, t1], [t1, t2]]."""
    return t.as_strided((2, 2), (1, 1))


CASES = [
    # in-place ops on an expanded view
    C("expand_add", lambda m, d, t: ex(t).add_(1), E(R, OVERLAP), target=row),
    C("expand_mul_tensor", lambda m, d, t: ex(t).mul_(m.ones(3, 4, device=d)), E(R, OVERLAP), target=row),
    C("expand_sub", lambda m, d, t: ex(t).sub_(1), E(R, OVERLAP), target=row),
    C("expand_div", lambda m, d, t: ex(t).div_(2), E(R, OVERLAP), target=row),
    C("expand_neg", lambda m, d, t: ex(t).neg_(), E(R, OVERLAP), target=row),
    C("expand_exp", lambda m, d, t: ex(t).exp_(), E(R, OVERLAP), target=row),
    C("expand_sqrt", lambda m, d, t: ex(t).sqrt_(), E(R, OVERLAP), target=row),
    C("expand_sigmoid", lambda m, d, t: ex(t).sigmoid_(), E(R, OVERLAP), target=row),
    C("expand_clamp", lambda m, d, t: ex(t).clamp_(0, 1), E(R, OVERLAP), target=row),
    C("expand_pow", lambda m, d, t: ex(t).pow_(2), E(R, OVERLAP), target=row),
    C("expand_copy", lambda m, d, t: ex(t).copy_(m.ones(3, 4, device=d)), E(R, OVERLAP), target=row),
    C("expand_fill", lambda m, d, t: ex(t).fill_(1.), OK, target=row, or_raise=E(R, OVERLAP)),
    C("expand_zero", lambda m, d, t: ex(t).zero_(), OK, target=row, or_raise=E(R, OVERLAP)),
    C("expand_scatter", lambda m, d, t: ex(t).scatter_(0, m.zeros(1, 4, dtype=m.int64, device=d), 5.), E(R, OVERLAP), target=row),
    C("expand_scatter_add", lambda m, d, t: ex(t).scatter_add_(0, m.zeros(1, 4, dtype=m.int64, device=d), m.ones(1, 4, device=d)), E(R, OVERLAP), target=row),
    C("expand_index_fill", lambda m, d, t: ex(t).index_fill_(1, m.tensor([0], device=d), 5.), OK, target=row, or_raise=E(R, OVERLAP)),
    C("expand_index_add", lambda m, d, t: ex(t).index_add_(1, m.tensor([0], device=d), m.ones(3, 1, device=d)), E(R, OVERLAP), target=row),
    C("expand_index_copy", lambda m, d, t: ex(t).index_copy_(1, m.tensor([0], device=d), m.ones(3, 1, device=d)), E(R, OVERLAP), target=row),
    C("expand_index_put", lambda m, d, t: ex(t).index_put_((m.tensor([0], device=d),), m.tensor(5., device=d)), OK, target=row, or_raise=E(R, OVERLAP)),
    C("expand_masked_fill", lambda m, d, t: ex(t).masked_fill_(m.ones(3, 4, dtype=m.bool, device=d), 5.), OK, target=row, or_raise=E(R, OVERLAP)),
    C("expand_masked_scatter", lambda m, d, t: ex(t).masked_scatter_(m.ones(3, 4, dtype=m.bool, device=d), m.ones(12, device=d)), E(R, OVERLAP), target=row),
    C("expand_put", lambda m, d, t: ex(t).put_(m.tensor([0], device=d), m.ones(1, device=d)), E(R, OVERLAP), target=row),
    C("expand_setitem", lambda m, d, t: ex(t).__setitem__(0, 5.), OK, target=row, or_raise=E(R, OVERLAP)),
    C("expand_cumsum", lambda m, d, t: ex(t).cumsum_(0), E(R, OVERLAP), target=row),
    C("expand_addcmul", lambda m, d, t: ex(t).addcmul_(ex(t), ex(t)), E(R, OVERLAP), target=row),
    C("expand_lerp", lambda m, d, t: ex(t).lerp_(m.ones(3, 4, device=d), 0.5), E(R, OVERLAP), target=row),
    C("expand_uniform", lambda m, d, t: ex(t).uniform_(), E(R, "unsupported operation: more than one element of the written-to tensor"), target=lambda m, d: m.zeros(1, 4, device=d).mul(0)),
    C("expand_tril", lambda m, d, t: t.expand(4, 4).tril_(), OK, target=row, or_raise=E(R, OVERLAP), check_value=False),
    C("expand_add_out", lambda m, d, t: m.add(m.ones(3, 4, device=d), 1, out=ex(t)), E(R, OVERLAP), target=row),
    C("expand_mm_out", lambda m, d, t: m.mm(m.ones(3, 2, device=d), m.ones(2, 4, device=d), out=ex(t)), E(R, OVERLAP), target=row),
    C("expand_ok_read", lambda m, d, t: ex(t) + 1, OK, target=row),
    C("expand_ok_contiguous_write", lambda m, d, t: ex(t).contiguous().add_(1), OK, target=row),
    # in-place ops on an overlapping as_strided view
    C("overlap_add", lambda m, d, t: ov(t).add_(1), OK, target=a6, or_raise=E(R, OVERLAP), check_value=False),
    C("overlap_mul", lambda m, d, t: ov(t).mul_(2), OK, target=a6, or_raise=E(R, OVERLAP), check_value=False),
    C("overlap_copy", lambda m, d, t: ov(t).copy_(m.ones(2, 2, device=d)), OK, target=a6, or_raise=E(R, OVERLAP)),
    C("overlap_exp", lambda m, d, t: ov(t).exp_(), OK, target=a6, or_raise=E(R, OVERLAP), check_value=False),
    C("overlap_clamp", lambda m, d, t: ov(t).clamp_(max=1), OK, target=a6, or_raise=E(R, OVERLAP)),
    C("overlap_scatter", lambda m, d, t: ov(t).scatter_(1, m.tensor([[0], [1]], device=d), 9.), OK, target=a6, or_raise=E(R, OVERLAP)),
    C("overlap_masked_fill", lambda m, d, t: ov(t).masked_fill_(m.ones(2, 2, dtype=m.bool, device=d), 9.), OK, target=a6, or_raise=E(R, OVERLAP)),
    C("overlap_index_fill", lambda m, d, t: ov(t).index_fill_(0, m.tensor([1], device=d), 9.), OK, target=a6, or_raise=E(R, OVERLAP)),
    C("overlap_out", lambda m, d, t: m.mul(m.ones(2, 2, device=d), 3, out=ov(t)), OK, target=a6, or_raise=E(R, OVERLAP)),
    C("overlap_zero_stride_row", lambda m, d, t: t.as_strided((2, 3), (0, 1)).add_(1), E(R, OVERLAP), target=a6),
    C("overlap_ok_disjoint_strided", lambda m, d, t: t.as_strided((2, 2), (3, 1)).add_(1), OK, target=a6),
    # partial overlap between the input and the written-to tensor
    C("partial_add_transpose", lambda m, d, t: t.add_(t.t()), E(R, "unsupported operation: some elements of the input tensor and the"), target=sq),
    C("partial_copy_transpose", lambda m, d, t: t.copy_(t.t()), E(R, "unsupported operation: some elements of the input tensor and the"), target=sq),
    # torch's own values for these three depend on its loop order; the spec is reading the input first
    C("partial_add_transpose_strided_view", lambda m, d, t: t[::2, ::2].add_(t[::2, ::2].t()), OK, target=m44, oracle=False,
      value=[[0., 1., 10., 3.], [4., 5., 6., 7.], [10., 9., 20., 11.], [12., 13., 14., 15.]]),
    C("partial_add_transpose_corner_view", lambda m, d, t: t[:3, :3].add_(t[:3, :3].t()), OK, target=m44, oracle=False,
      value=[[0., 5., 10., 3.], [5., 10., 15., 7.], [10., 15., 20., 11.], [12., 13., 14., 15.]]),
    C("partial_copy_transpose_corner_view", lambda m, d, t: t[:3, :3].copy_(t[:3, :3].t()), OK, target=m44, oracle=False,
      value=[[0., 4., 8., 3.], [1., 5., 9., 7.], [2., 6., 10., 11.], [12., 13., 14., 15.]]),
    C("partial_shifted_add", lambda m, d, t: t[1:].add_(t[:-1]), E(R, PARTIAL), target=a6),
    C("partial_shifted_copy", lambda m, d, t: t[1:].copy_(t[:-1]), E(R, "unsupported operation: some elements of the input tensor and the"), target=a6),
    C("partial_shifted_mul_out", lambda m, d, t: m.mul(t[:-1], 2, out=t[1:]), E(R, PARTIAL), target=a6),
    C("partial_flip_copy", lambda m, d, t: t.copy_(t.flip(0)), OK, target=a6),
    C("partial_row_col", lambda m, d, t: t[0].add_(t[:, 0]), OK, target=sq),
    C("partial_addcmul", lambda m, d, t: t[1:].addcmul_(t[:-1], t[:-1]), E(R, PARTIAL), target=a6),
    C("partial_where_out", lambda m, d, t: m.where(t[:-1] > 2, t[:-1], m.zeros(5, device=d), out=t[1:]), E(R, PARTIAL), target=a6),
    C("partial_clamp_tensor", lambda m, d, t: t[1:].clamp_(min=t[:-1]), E(R, PARTIAL), target=a6),
    C("partial_index_select_out", lambda m, d, t: m.index_select(t[:-1], 0, m.tensor([0, 1, 2, 3, 4], device=d), out=t[1:]), E(R, PARTIAL), target=a6),
    C("partial_gather_out", lambda m, d, t: m.gather(t[:-1], 0, m.tensor([0, 1, 2, 3, 4], device=d), out=t[1:]), E(R, PARTIAL), target=a6),
    C("partial_mm_out", lambda m, d, t: m.mm(t, t, out=t), OK, target=sq),
    C("partial_matmul_out_alias", lambda m, d, t: m.matmul(t, m.eye(3, device=d), out=t), OK, target=sq),
    C("partial_cumsum_out_alias", lambda m, d, t: m.cumsum(t, 0, out=t), OK, target=a6),
    C("partial_sort_out_alias", lambda m, d, t: m.sort(t.flip(0), out=(t, m.empty(6, dtype=m.int64, device=d))), OK, target=a6),
    # full overlap is fine
    C("full_add_self", lambda m, d, t: t.add_(t), OK, target=a6),
    C("full_mul_out_self", lambda m, d, t: m.mul(t, t, out=t), OK, target=a6),
    C("full_addcmul_self", lambda m, d, t: t.addcmul_(t, t), OK, target=a6),
    C("full_copy_self", lambda m, d, t: t.copy_(t), OK, target=a6),
    C("full_view_add", lambda m, d, t: t.view(2, 3).add_(t.view(2, 3)), OK, target=a6),
    # out= of the wrong kind
    C("out_wrong_dtype_int", lambda m, d, t: m.add(a6(m, d), 1, out=t), E(R, "result type Float can't be cast to the desired output type Long"), target=lambda m, d: m.zeros(6, dtype=m.int64, device=d)),
    C("out_resize_ok", lambda m, d, t: m.add(a6(m, d), 1, out=t), OK, target=lambda m, d: m.zeros(2, device=d)),
    C("out_noncontig_ok", lambda m, d, t: m.add(m.ones(3, device=d), 1, out=t[::2]), OK, target=a6),
    C("out_not_tensor", lambda m, d: m.add(a6(m, d), 1, out=[1]), E(T, "add(): argument 'out' must be Tensor, not list")),
    C("out_matmul_wrong_dtype", lambda m, d, t: m.matmul(m.ones(2, 2, device=d), m.ones(2, 2, device=d), out=t), E(R, "Expected out tensor to have dtype float, but got long int instead"), target=lambda m, d: m.zeros(2, 2, dtype=m.int64, device=d)),
    C("out_sum_wrong_dtype", lambda m, d, t: m.sum(a6(m, d), 0, out=t), OK, target=lambda m, d: m.zeros((), dtype=m.int64, device=d)),
]
