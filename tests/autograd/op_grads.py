"""Differentiable calls for the autograd tests: (name, fn(T, *inputs), input shapes,
domain). ``T`` is ``framework`` or ``torch``: the same code runs on both."""
import math

P = "pos"      # inputs in (0.5, 2)
U = "unit"     # inputs in (-0.9, 0.9)
R = "real"     # inputs in (-2, 2), away from 0


def _svd_free(T, U, S, Vh):
    """A function of all of an SVD's outputs that is free of the singular vectors' signs
    (LAPACK builds may differ there) and of full U's / Vh's extra basis vectors."""
    k = S.shape[-1]
    Uk, Vk = U[..., :k], Vh[..., :k, :]
    w = T.arange(1, k + 1, dtype=S.dtype)
    return T.cat([((Uk * w) @ Uk.mT).flatten(-2), ((Vk.mT * w) @ Vk).flatten(-2),
                  ((Uk * S.sin().unsqueeze(-2)) @ Vk).flatten(-2), S], -1)


def _old_svd_free(T, r):
    U, S, V = r
    return _svd_free(T, U, S, V.mT)


def _proj(T, Q):
    """Q diag(1, 2, ...) Q^T: free of the signs of Q's columns."""
    return (Q * T.arange(1, Q.shape[-1] + 1, dtype=Q.dtype)) @ Q.mT


def _qr_free(T, Q, R):
    """A function of Q and R free of the signs of R's rows (and Q's columns)."""
    return T.cat([_proj(T, Q).flatten(-2), _proj(T, R.mT).flatten(-2)], -1)


def _lstsq_all(T, r):
    return T.cat([r.solution.flatten(), r.residuals.flatten()])


def pinned(T, x, values):
    """``x`` with its values replaced by ``values`` (ties, zeros) and gradient 1 to ``x``.
    Finite differences see a constant: these cases are left out of gradcheck (PINNED)."""
    return x - x.detach() + T.tensor(values, dtype=x.dtype)


def _scatter(reduce, include_self=True, a_at=None, b_at=None, inplace=False):
    """scatter_reduce along dim 1 of a (3, 4) input from a (3, 2) src, with slots that get
    two sources, one, and none (``a_at``/``b_at``: values to pin the inputs to)."""
    def fn(T, a, b):
        a = pinned(T, a, a_at) if a_at else a
        b = pinned(T, b, b_at) if b_at else b
        idx = T.tensor([[0, 0], [2, 3], [3, 3]])
        if inplace:
            return (a * 1).scatter_reduce_(1, idx, b, reduce, include_self=include_self)
        return T.scatter_reduce(a, 1, idx, b, reduce, include_self=include_self)
    return fn


# ties among the input and the sources at slots (0, 0) and (2, 3); src (1, 0) loses
_TIE_A = [[1.0, 0.5, -1.0, 2.0], [0.3, -0.7, 2.0, -1.5], [0.9, 1.3, -1.4, 3.0]]
_TIE_B = [[1.0, 1.0], [0.5, 2.0], [3.0, 3.0]]
_TIE_B_MIN = [[1.0, 1.0], [2.5, -1.5], [3.0, 3.0]]
# zeros in the input (scattered onto or not) and single zeros in slots of the sources
_ZERO_A = [[0.0, 1.5, 0.0, 2.0], [1.2, -0.7, 0.0, 1.1], [0.9, 1.3, -1.4, 0.6]]
_ZERO_B = [[1.3, -0.8], [0.0, 1.7], [0.0, 0.9]]

CASES = [
    # pointwise, broadcasting
    ("add", lambda T, a, b: T.add(a, b, alpha=2), [(3, 4), (4,)], R),
    ("sub", lambda T, a, b: T.sub(a, b, alpha=0.5), [(3, 4), (3, 1)], R),
    ("rsub", lambda T, a: 2 - a, [(3,)], R),
    ("mul", lambda T, a, b: a * b, [(2, 3), (2, 3)], R),
    ("div", lambda T, a, b: a / b, [(2, 3), (3,)], P),
    ("rdiv", lambda T, a: 2 / a, [(4,)], P),
    ("remainder", lambda T, a, b: T.remainder(a, b), [(5,), (5,)], P),
    ("fmod", lambda T, a, b: T.fmod(a, b), [(5,), (5,)], P),
    ("pow", lambda T, a, b: T.pow(a, b), [(3,), (3,)], P),
    ("pow_scalar", lambda T, a: a ** 3, [(3,)], R),
    ("rpow", lambda T, a: 2 ** a, [(3,)], R),
    ("neg", lambda T, a: -a, [(3,)], R),
    ("square", lambda T, a: T.square(a), [(3,)], R),
    ("abs", lambda T, a: a.abs(), [(4,)], R),
    ("reciprocal", lambda T, a: a.reciprocal(), [(4,)], P),
    ("exp", lambda T, a: a.exp(), [(4,)], R),
    ("exp2", lambda T, a: a.exp2(), [(4,)], R),
    ("expm1", lambda T, a: a.expm1(), [(4,)], R),
    ("log", lambda T, a: a.log(), [(4,)], P),
    ("log2", lambda T, a: a.log2(), [(4,)], P),
    ("log10", lambda T, a: a.log10(), [(4,)], P),
    ("log1p", lambda T, a: a.log1p(), [(4,)], P),
    ("sqrt", lambda T, a: a.sqrt(), [(4,)], P),
    ("rsqrt", lambda T, a: a.rsqrt(), [(4,)], P),
    ("sin", lambda T, a: a.sin(), [(4,)], R),
    ("cos", lambda T, a: a.cos(), [(4,)], R),
    ("tan", lambda T, a: a.tan(), [(4,)], U),
    ("asin", lambda T, a: a.asin(), [(4,)], U),
    ("acos", lambda T, a: a.acos(), [(4,)], U),
    ("atan", lambda T, a: a.atan(), [(4,)], R),
    ("sinh", lambda T, a: a.sinh(), [(4,)], R),
    ("cosh", lambda T, a: a.cosh(), [(4,)], R),
    ("tanh", lambda T, a: a.tanh(), [(4,)], R),
    ("asinh", lambda T, a: a.asinh(), [(4,)], R),
    ("acosh", lambda T, a: (a + 1.5).acosh(), [(4,)], P),
    ("atanh", lambda T, a: a.atanh(), [(4,)], U),
    ("atan2", lambda T, a, b: T.atan2(a, b), [(4,), (4,)], R),
    ("sigmoid", lambda T, a: a.sigmoid(), [(4,)], R),
    ("erf", lambda T, a: a.erf(), [(4,)], R),
    ("erfc", lambda T, a: a.erfc(), [(4,)], R),
    ("erfinv", lambda T, a: a.erfinv(), [(4,)], U),
    ("sinc", lambda T, a: T.sinc(a), [(4,)], R),
    ("logit", lambda T, a: T.logit(a * 0.5 + 0.5), [(4,)], U),
    ("frac", lambda T, a: T.frac(a), [(4,)], R),
    ("clamp", lambda T, a: a.clamp(-1, 1), [(6,)], R),
    ("clamp_min", lambda T, a: a.clamp_min(0.1), [(6,)], R),
    ("maximum", lambda T, a, b: T.maximum(a, b), [(5,), (5,)], R),
    ("minimum", lambda T, a, b: T.minimum(a, b), [(5,), (5,)], R),
    ("lerp", lambda T, a, b: T.lerp(a, b, 0.3), [(4,), (4,)], R),
    ("addcmul", lambda T, a, b, c: T.addcmul(a, b, c, value=0.5), [(3,), (3,), (3,)], R),
    ("addcdiv", lambda T, a, b, c: T.addcdiv(a, b, c, value=0.5), [(3,), (3,), (3,)], P),
    ("where", lambda T, a, b: T.where(a > 0, a, b), [(5,), (5,)], R),
    ("hypot", lambda T, a, b: T.hypot(a, b), [(4,), (4,)], R),
    ("xlogy", lambda T, a, b: T.xlogy(a, b), [(4,), (4,)], P),
    ("logaddexp", lambda T, a, b: T.logaddexp(a, b), [(4,), (4,)], R),
    ("logaddexp2", lambda T, a, b: T.logaddexp2(a, b), [(4,), (4,)], R),
    ("relu", lambda T, a: a.relu(), [(6,)], R),
    ("relu6", lambda T, a: T.nn.functional.relu6(a * 4), [(6,)], R),
    ("gelu", lambda T, a: T.nn.functional.gelu(a), [(6,)], R),
    ("gelu_tanh", lambda T, a: T.nn.functional.gelu(a, approximate="tanh"), [(6,)], R),
    ("silu", lambda T, a: T.nn.functional.silu(a), [(6,)], R),
    ("mish", lambda T, a: T.nn.functional.mish(a), [(6,)], R),
    ("softplus", lambda T, a: T.nn.functional.softplus(a, beta=2.0), [(6,)], R),
    ("elu", lambda T, a: T.nn.functional.elu(a), [(6,)], R),
    ("selu", lambda T, a: T.nn.functional.selu(a), [(6,)], R),
    ("celu", lambda T, a: T.nn.functional.celu(a, alpha=0.5), [(6,)], R),
    ("leaky_relu", lambda T, a: T.nn.functional.leaky_relu(a, 0.2), [(6,)], R),
    ("hardtanh", lambda T, a: T.nn.functional.hardtanh(a), [(6,)], R),
    ("hardsigmoid", lambda T, a: T.nn.functional.hardsigmoid(a * 2), [(6,)], R),
    ("hardswish", lambda T, a: T.nn.functional.hardswish(a * 2), [(6,)], R),
    # reductions
    ("sum", lambda T, a: a.sum(), [(3, 4)], R),
    ("sum_dim", lambda T, a: a.sum(dim=(0, 2), keepdim=False), [(2, 3, 4)], R),
    ("sum_keep", lambda T, a: a.sum(dim=1, keepdim=True), [(2, 3, 4)], R),
    ("mean", lambda T, a: a.mean(dim=-1), [(3, 4)], R),
    ("nansum", lambda T, a: T.nansum(a, 0), [(3, 4)], R),
    ("prod", lambda T, a: a.prod(), [(5,)], R),
    ("prod_dim", lambda T, a: a.prod(1), [(3, 4)], R),
    ("amax", lambda T, a: a.amax(dim=1), [(3, 4)], R),
    ("amin", lambda T, a: a.amin(), [(3, 4)], R),
    ("max_dim", lambda T, a: a.max(dim=1)[0], [(3, 4)], R),
    ("min_dim_keep", lambda T, a: a.min(dim=0, keepdim=True)[0], [(3, 4)], R),
    ("max_all", lambda T, a: a.max(), [(3, 4)], R),
    ("var", lambda T, a: a.var(dim=1), [(3, 4)], R),
    ("std", lambda T, a: a.std(), [(3, 4)], R),
    ("var_corr", lambda T, a: T.var(a, dim=0, correction=0), [(3, 4)], R),
    ("norm", lambda T, a: a.norm(), [(3, 4)], R),
    ("norm_p1", lambda T, a: a.norm(p=1, dim=1), [(3, 4)], R),
    ("norm_nuc", lambda T, a: T.norm(a, p="nuc"), [(3, 4)], R),
    ("norm_nuc_dims", lambda T, a: T.norm(a, p="nuc", dim=(0, 2), keepdim=True), [(3, 2, 4)], R),
    ("norm_p3", lambda T, a: a.norm(p=3, dim=0), [(3, 4)], R),
    ("logsumexp", lambda T, a: a.logsumexp(dim=1), [(3, 4)], R),
    ("cumsum", lambda T, a: a.cumsum(1), [(3, 4)], R),
    ("cumprod", lambda T, a: a.cumprod(1), [(3, 4)], P),
    ("logcumsumexp", lambda T, a: a.logcumsumexp(0), [(3, 4)], R),
    ("cummax", lambda T, a: a.cummax(1)[0], [(3, 4)], R),
    ("sort", lambda T, a: a.sort(dim=1)[0], [(3, 4)], R),
    ("topk", lambda T, a: a.topk(2, dim=1)[0], [(3, 4)], R),
    ("kthvalue", lambda T, a: a.kthvalue(2, dim=0)[0], [(3, 4)], R),
    ("median_dim", lambda T, a: a.median(dim=1)[0], [(3, 5)], R),
    # views and shapes
    ("view", lambda T, a: a.view(4, 3), [(3, 4)], R),
    ("reshape_t", lambda T, a: a.t().reshape(-1), [(3, 4)], R),
    ("flatten", lambda T, a: a.flatten(), [(2, 3, 2)], R),
    ("squeeze", lambda T, a: a.squeeze(1), [(3, 1, 2)], R),
    ("unsqueeze", lambda T, a: a.unsqueeze(0), [(3,)], R),
    ("transpose", lambda T, a: a.transpose(0, 2), [(2, 3, 4)], R),
    ("permute", lambda T, a: a.permute(2, 0, 1), [(2, 3, 4)], R),
    ("expand", lambda T, a: a.expand(3, 4), [(1, 4)], R),
    ("narrow", lambda T, a: a.narrow(1, 1, 2), [(3, 4)], R),
    ("select", lambda T, a: a.select(0, 1), [(3, 4)], R),
    ("unbind", lambda T, a: a.unbind(1)[2], [(3, 4)], R),
    ("split", lambda T, a: a.split(2, dim=1)[1], [(3, 4)], R),
    ("chunk", lambda T, a: T.cat(a.chunk(3, 0)[::-1]), [(3, 4)], R),
    ("movedim", lambda T, a: a.movedim(0, 2), [(2, 3, 4)], R),
    ("diagonal", lambda T, a: a.diagonal(1), [(4, 4)], R),
    ("unfold", lambda T, a: a.unfold(0, 3, 2), [(7,)], R),
    ("as_strided", lambda T, a: a.as_strided((3, 3), (1, 1)), [(5,)], R),
    ("getitem_basic", lambda T, a: a[1:, ::2], [(3, 4)], R),
    ("getitem_adv", lambda T, a: a[[0, 2, 0]], [(3, 4)], R),
    ("clone", lambda T, a: a.clone(), [(3,)], R),
    ("contiguous", lambda T, a: a.t().contiguous(), [(3, 2)], R),
    ("cat", lambda T, a, b: T.cat([a, b], dim=1), [(2, 3), (2, 2)], R),
    ("stack", lambda T, a, b: T.stack([a, b], dim=1), [(2, 3), (2, 3)], R),
    ("hstack", lambda T, a, b: T.hstack([a, b]), [(2, 3), (2, 2)], R),
    ("vstack", lambda T, a, b: T.vstack([a, b]), [(3,), (3,)], R),
    ("flip", lambda T, a: a.flip(0), [(3, 4)], R),
    ("roll", lambda T, a: a.roll(1, 1), [(3, 4)], R),
    ("rot90", lambda T, a: a.rot90(1, [0, 1]), [(3, 4)], R),
    ("repeat", lambda T, a: a.repeat(2, 3), [(2, 2)], R),
    ("tile", lambda T, a: a.tile(2), [(3,)], R),
    ("repeat_interleave", lambda T, a: a.repeat_interleave(2, dim=0), [(3, 2)], R),
    ("diag", lambda T, a: T.diag(a), [(3,)], R),
    ("diag_embed", lambda T, a: T.diag_embed(a), [(2, 3)], R),
    ("tril", lambda T, a: a.tril(), [(3, 3)], R),
    ("triu", lambda T, a: a.triu(1), [(3, 3)], R),
    ("pad", lambda T, a: T.nn.functional.pad(a, (1, 2)), [(2, 3)], R),
    ("pad_reflect", lambda T, a: T.nn.functional.pad(a, (2, 1), mode="reflect"), [(2, 4)], R),
    # indexing
    ("index_select", lambda T, a: a.index_select(0, T.tensor([2, 0, 2])), [(3, 4)], R),
    ("gather", lambda T, a: a.gather(1, T.tensor([[0, 0], [1, 3], [2, 2]])), [(3, 4)], R),
    ("scatter", lambda T, a, b: a.scatter(1, T.tensor([[0, 1], [2, 3], [3, 0]]), b), [(3, 4), (3, 2)], R),
    ("scatter_add", lambda T, a, b: a.scatter_add(1, T.tensor([[0, 0], [2, 3], [3, 3]]), b), [(3, 4), (3, 2)], R),
    ("index_add", lambda T, a, b: a.index_add(0, T.tensor([0, 2, 0]), b, alpha=2), [(3, 2), (3, 2)], R),
    ("index_copy", lambda T, a, b: a.index_copy(0, T.tensor([2, 0]), b), [(3, 2), (2, 2)], R),
    ("index_fill", lambda T, a: a.index_fill(1, T.tensor([1]), 3.0), [(3, 2)], R),
    ("masked_fill", lambda T, a: a.masked_fill(a > 0, 0.5), [(3, 4)], R),
    ("masked_select", lambda T, a: a.masked_select(a > 0), [(3, 4)], R),
    ("take", lambda T, a: a.take(T.tensor([0, 5, -1, 5])), [(3, 4)], R),
    ("take_along_dim", lambda T, a: T.take_along_dim(a, T.tensor([[0], [2], [1]]), 1), [(3, 4)], R),
    ("index_put", lambda T, a, b: a.index_put((T.tensor([0, 2]),), b, accumulate=True), [(3, 2), (2, 2)], R),
    # linear algebra
    ("matmul", lambda T, a, b: a @ b, [(3, 4), (4, 2)], R),
    ("matmul_batched", lambda T, a, b: a @ b, [(2, 3, 4), (4, 2)], R),
    ("matmul_vec", lambda T, a, b: a @ b, [(4,), (2, 4, 3)], R),
    ("mm", lambda T, a, b: a.mm(b), [(3, 4), (4, 2)], R),
    ("bmm", lambda T, a, b: a.bmm(b), [(2, 3, 4), (2, 4, 2)], R),
    ("mv", lambda T, a, b: a.mv(b), [(3, 4), (4,)], R),
    ("dot", lambda T, a, b: a.dot(b), [(4,), (4,)], R),
    ("outer", lambda T, a, b: T.outer(a, b), [(3,), (4,)], R),
    ("addmm", lambda T, a, b, c: T.addmm(a, b, c, beta=0.5, alpha=2), [(3,), (2, 4), (4, 3)], R),
    ("baddbmm", lambda T, a, b, c: T.baddbmm(a, b, c, alpha=0.5), [(2, 3, 2), (2, 3, 4), (2, 4, 2)], R),
    ("addbmm", lambda T, a, b, c: T.addbmm(a, b, c), [(3, 2), (2, 3, 4), (2, 4, 2)], R),
    ("addmv", lambda T, a, b, c: T.addmv(a, b, c), [(3,), (3, 4), (4,)], R),
    # the scale factors' other branch (formulas skip the multiply by 1)
    ("addmv_scaled", lambda T, a, b, c: T.addmv(a, b, c, beta=0.5, alpha=-2),
     [(3,), (3, 4), (4,)], R),
    ("addbmm_scaled", lambda T, a, b, c: T.addbmm(a, b, c, beta=2, alpha=0.5),
     [(3, 2), (2, 3, 4), (2, 4, 2)], R),
    ("addcdiv_value1", lambda T, a, b, c: T.addcdiv(a, b, c), [(3,), (3,), (3,)], P),
    ("einsum", lambda T, a, b: T.einsum("ij,jk->ik", a, b), [(3, 4), (4, 2)], R),
    ("einsum_sum", lambda T, a, b: T.einsum("bij,bj->i", a, b), [(2, 3, 4), (2, 4)], R),
    ("trace", lambda T, a: a.trace(), [(3, 3)], R),
    ("inverse", lambda T, a: T.linalg.inv(a + 3 * T.eye(3, dtype=a.dtype)), [(3, 3)], R),
    ("det", lambda T, a: T.linalg.det(a + 3 * T.eye(3, dtype=a.dtype)), [(3, 3)], R),
    ("solve", lambda T, a, b: T.linalg.solve(a + 3 * T.eye(3, dtype=a.dtype), b), [(3, 3), (3, 2)], R),
    ("vector_norm", lambda T, a: T.linalg.vector_norm(a, 2, dim=1), [(3, 4)], R),
    ("eigh_values", lambda T, a: T.linalg.eigh(a + a.mT)[0], [(3, 3)], R),
]

CASES += [
    ("scatter_reduce_sum", lambda T, a, b: a.scatter_reduce(1, T.tensor([[0, 0], [2, 3], [3, 3]]), b, "sum"), [(3, 4), (3, 2)], R),
    ("scatter_reduce_sum_noself", _scatter("sum", False), [(3, 4), (3, 2)], R),
    ("scatter_reduce_mean", _scatter("mean"), [(3, 4), (3, 2)], R),
    ("scatter_reduce_mean_noself", _scatter("mean", False), [(3, 4), (3, 2)], R),
    ("scatter_reduce_prod", _scatter("prod"), [(3, 4), (3, 2)], R),
    ("scatter_reduce_prod_noself", _scatter("prod", False), [(3, 4), (3, 2)], R),
    ("scatter_reduce_prod_zeros", _scatter("prod", True, _ZERO_A, _ZERO_B), [(3, 4), (3, 2)], R),
    ("scatter_reduce_prod_zeros_noself", _scatter("prod", False, _ZERO_A, _ZERO_B), [(3, 4), (3, 2)], R),
    ("scatter_reduce_amax", _scatter("amax"), [(3, 4), (3, 2)], R),
    ("scatter_reduce_amax_noself", _scatter("amax", False), [(3, 4), (3, 2)], R),
    ("scatter_reduce_amin", _scatter("amin"), [(3, 4), (3, 2)], R),
    ("scatter_reduce_amin_noself", _scatter("amin", False), [(3, 4), (3, 2)], R),
    ("scatter_reduce_amax_ties", _scatter("amax", True, _TIE_A, _TIE_B), [(3, 4), (3, 2)], R),
    ("scatter_reduce_amax_ties_noself", _scatter("amax", False, _TIE_A, _TIE_B), [(3, 4), (3, 2)], R),
    ("scatter_reduce_amin_ties", _scatter("amin", True, _TIE_A, _TIE_B_MIN), [(3, 4), (3, 2)], R),
    ("scatter_reduce_amin_ties_noself", _scatter("amin", False, _TIE_A, _TIE_B_MIN), [(3, 4), (3, 2)], R),
    ("scatter_reduce_", _scatter("prod", True, _ZERO_A, _ZERO_B, inplace=True), [(3, 4), (3, 2)], R),
    ("scatter_reduce_amax_", _scatter("amax", False, _TIE_A, _TIE_B, inplace=True), [(3, 4), (3, 2)], R),
    ("scatter_reduce_mean_", _scatter("mean", False, inplace=True), [(3, 4), (3, 2)], R),
    ("max_binary", lambda T, a, b: T.max(a, b), [(3, 4), (4,)], R),
    ("min_binary", lambda T, a, b: a.min(b), [(3, 4), (3, 1)], R),
    ("max_other_kw", lambda T, a, b: T.max(a, other=b), [(3, 4), (4,)], R),
    ("min_other_kw", lambda T, a, b: a.min(other=b), [(2, 3), (2, 1)], R),
    ("max_binary_ties", lambda T, a, b: T.max(pinned(T, a, [1.0, -2.0, 3.0]), pinned(T, b, [1.0, 0.5, 3.0])), [(3,), (3,)], R),
    ("min_binary_ties", lambda T, a, b: T.min(pinned(T, a, [1.0, -2.0, 3.0]), pinned(T, b, [1.0, 0.5, 3.0])), [(3,), (3,)], R),
    ("tensordot", lambda T, a, b: T.tensordot(a, b, dims=([1, 0], [0, 2])), [(3, 2, 4), (2, 5, 3)], R),
    ("tensordot_int", lambda T, a, b: T.tensordot(a, b, 1), [(3, 4), (4, 2)], R),
    ("kron", lambda T, a, b: T.kron(a, b), [(2, 3), (3, 2)], R),
    ("linalg_norm_fro", lambda T, a: T.linalg.norm(a), [(3, 4)], R),
    ("linalg_norm_vec", lambda T, a: T.linalg.norm(a, 3, dim=1), [(3, 4)], R),
    ("matrix_norm_fro", lambda T, a: T.linalg.matrix_norm(a), [(2, 3, 4)], R),
    ("cholesky", lambda T, a: T.linalg.cholesky(a @ a.mT + 3 * T.eye(3, dtype=a.dtype)), [(3, 3)], R),
    ("multi_dot", lambda T, a, b, c: T.linalg.multi_dot([a, b, c]), [(4,), (4, 3), (3,)], R),
    ("chain_matmul", lambda T, a, b, c: T.chain_matmul(a, b, c), [(2, 4), (4, 3), (3, 2)], R),
    ("matrix_power", lambda T, a: T.linalg.matrix_power(a, 3), [(3, 3)], R),
    ("matrix_power_neg", lambda T, a: T.linalg.matrix_power(a + 3 * T.eye(3, dtype=a.dtype), -2), [(3, 3)], R),
    ("eigvalsh", lambda T, a: T.linalg.eigvalsh(a + a.mT), [(3, 3)], R),
    ("svdvals", lambda T, a: T.linalg.svdvals(a), [(3, 4)], R),
    ("solve_triangular", lambda T, a, b: T.linalg.solve_triangular(a.triu() + 3 * T.eye(3, dtype=a.dtype), b, upper=True), [(3, 3), (3, 2)], R),
    ("solve_triangular_right", lambda T, a, b: T.linalg.solve_triangular(a.tril() + 3 * T.eye(3, dtype=a.dtype), b, upper=False, left=False), [(3, 3), (2, 3)], R),
]

# decompositions (distinct singular values), pseudo-inverses, least squares, matrix norms
CASES += [
    ("svd", lambda T, a: _old_svd_free(T, T.svd(a)), [(4, 3)], R),
    ("svd_full_wide", lambda T, a: _old_svd_free(T, T.svd(a, some=False)), [(3, 4)], R),
    ("svd_no_uv", lambda T, a: T.svd(a, compute_uv=False)[1], [(3, 4)], R),
    ("linalg_svd", lambda T, a: _svd_free(T, *T.linalg.svd(a, full_matrices=False)), [(3, 3)], R),
    ("linalg_svd_full_tall", lambda T, a: _svd_free(T, *T.linalg.svd(a)), [(2, 4, 3)], R),
    ("linalg_svd_full_wide", lambda T, a: _svd_free(T, *T.linalg.svd(a)), [(3, 4)], R),
    ("linalg_svd_s", lambda T, a: T.linalg.svd(a)[1], [(4, 3)], R),
    ("linalg_svd_u", lambda T, a: _proj(T, T.linalg.svd(a, full_matrices=False)[0]), [(4, 3)], R),
    ("linalg_svd_vh", lambda T, a: _proj(T, T.linalg.svd(a, full_matrices=False)[2].mT), [(3, 4)], R),
    ("linalg_qr", lambda T, a: _qr_free(T, *T.linalg.qr(a)), [(4, 3)], R),
    ("linalg_qr_wide", lambda T, a: _qr_free(T, *T.linalg.qr(a)), [(3, 4)], R),
    ("linalg_qr_complete", lambda T, a: _qr_free(T, *T.linalg.qr(a, "complete")), [(2, 3, 3)], R),
    ("qr", lambda T, a: _qr_free(T, *T.qr(a)), [(4, 3)], R),
    ("qr_complete_wide", lambda T, a: _qr_free(T, *T.qr(a, some=False)), [(3, 4)], R),
    ("lstsq", lambda T, a, b: T.linalg.lstsq(a, b, driver="gelsd").solution, [(5, 3), (5, 2)], R),
    ("lstsq_residuals", lambda T, a, b: _lstsq_all(T, T.linalg.lstsq(a, b, driver="gelsd")), [(5, 3), (5, 2)], R),
    ("lstsq_vector", lambda T, a, b: _lstsq_all(T, T.linalg.lstsq(a, b, driver="gelsd")), [(2, 5, 3), (2, 5)], R),
    ("lstsq_wide", lambda T, a, b: T.linalg.lstsq(a, b, driver="gelsd").solution, [(3, 5), (3, 2)], R),
    ("pinv", lambda T, a: T.linalg.pinv(a), [(4, 3)], R),
    ("pinv_wide", lambda T, a: T.linalg.pinv(a), [(2, 3, 5)], R),
    ("pinv_hermitian", lambda T, a: T.linalg.pinv(a + a.mT, hermitian=True), [(3, 3)], R),
    ("pinv_low_rank", lambda T, a, b: T.linalg.pinv(a @ b, atol=1e-8), [(4, 2), (2, 3)], R),
    ("pinverse", lambda T, a: T.pinverse(a), [(3, 5)], R),
    ("matrix_norm_2", lambda T, a: T.linalg.matrix_norm(a, 2), [(2, 3, 4)], R),
    ("matrix_norm_m2", lambda T, a: T.linalg.matrix_norm(a, -2), [(4, 3)], R),
    ("matrix_norm_nuc", lambda T, a: T.linalg.matrix_norm(a, "nuc", dim=(0, 2), keepdim=True), [(3, 2, 4)], R),
    ("matrix_norm_1", lambda T, a: T.linalg.matrix_norm(a, 1), [(3, 4)], R),
    ("matrix_norm_m1", lambda T, a: T.linalg.matrix_norm(a, -1, dim=(2, 0)), [(3, 2, 4)], R),
    ("matrix_norm_inf", lambda T, a: T.linalg.matrix_norm(a, math.inf, keepdim=True), [(2, 3, 4)], R),
    ("matrix_norm_minf", lambda T, a: T.linalg.matrix_norm(a, -math.inf), [(3, 4)], R),
    ("linalg_norm_2", lambda T, a: T.linalg.norm(a, 2), [(3, 4)], R),
    ("linalg_norm_nuc", lambda T, a: T.linalg.norm(a, "nuc", dim=(1, 2)), [(2, 3, 4)], R),
    ("linalg_norm_inf", lambda T, a: T.linalg.norm(a, math.inf, dim=(1, 0), keepdim=True), [(3, 4)], R),
]

# aliases and the rest of the table
CASES += [
    ("absolute", lambda T, a: T.absolute(a), [(4,)], R),
    ("adjoint", lambda T, a: a.adjoint(), [(2, 3)], R),
    ("aminmax", lambda T, a: sum(T.aminmax(a, dim=1)), [(3, 4)], R),
    ("arccos", lambda T, a: T.arccos(a), [(4,)], U),
    ("arccosh", lambda T, a: T.arccosh(a + 1.5), [(4,)], P),
    ("arcsin", lambda T, a: T.arcsin(a), [(4,)], U),
    ("arcsinh", lambda T, a: T.arcsinh(a), [(4,)], R),
    ("arctan", lambda T, a: T.arctan(a), [(4,)], R),
    ("arctan2", lambda T, a, b: T.arctan2(a, b), [(4,), (4,)], R),
    ("arctanh", lambda T, a: T.arctanh(a), [(4,)], U),
    ("atleast_2d", lambda T, a: T.atleast_2d(a), [(3,)], R),
    ("atleast_3d", lambda T, a, b: T.atleast_3d(a, b)[1] * T.atleast_3d(a, b)[0].sum(), [(3,), (2, 2)], R),
    ("atleast_1d", lambda T, a: T.atleast_1d(a), [()], R),
    ("block_diag", lambda T, a, b: T.block_diag(a, b), [(2, 2), (1, 3)], R),
    ("broadcast_tensors", lambda T, a, b: T.broadcast_tensors(a, b)[0] * T.broadcast_tensors(a, b)[1], [(3, 1), (4,)], R),
    ("broadcast_to", lambda T, a: T.broadcast_to(a, (2, 3)), [(3,)], R),
    ("cartesian_prod", lambda T, a, b: T.cartesian_prod(a, b), [(2,), (3,)], R),
    ("ceil", lambda T, a: a.ceil() * a, [(4,)], R),
    ("clamp_max", lambda T, a: a.clamp_max(0.5), [(6,)], R),
    ("clip", lambda T, a: T.clip(a, -0.5, 1.0), [(6,)], R),
    ("column_stack", lambda T, a, b: T.column_stack([a, b]), [(3,), (3, 2)], R),
    ("concat", lambda T, a, b: T.concat([a, b]), [(2,), (3,)], R),
    ("concatenate", lambda T, a, b: T.concatenate([a, b], axis=1), [(2, 1), (2, 3)], R),
    ("copy_", lambda T, a, b: (a * 1).copy_(b), [(3,), (3,)], R),
    ("copysign", lambda T, a, b: T.copysign(a, b), [(4,), (4,)], R),
    ("cummin", lambda T, a: a.cummin(0)[0], [(3, 4)], R),
    ("deg2rad", lambda T, a: T.deg2rad(a), [(3,)], R),
    ("diagflat", lambda T, a: T.diagflat(a, 1), [(2, 2)], R),
    ("divide", lambda T, a, b: T.divide(a, b), [(3,), (3,)], P),
    ("dstack", lambda T, a, b: T.dstack([a, b]), [(2, 3), (2, 3)], R),
    ("expand_as", lambda T, a, b: a.expand_as(b) * b, [(1, 3), (2, 3)], R),
    ("fill_", lambda T, a: (a * 1).fill_(2.0) + a, [(3,)], R),
    ("zero_", lambda T, a: (a * 1).zero_() + a, [(3,)], R),
    ("fix", lambda T, a: T.fix(a) + a, [(3,)], R),
    ("floor", lambda T, a: a.floor() * a, [(3,)], R),
    ("trunc", lambda T, a: a.trunc() + a, [(3,)], R),
    ("round", lambda T, a: a.round() + a, [(3,)], R),
    ("sign", lambda T, a: a.sign() * a, [(3,)], R),
    ("sgn", lambda T, a: a.sgn() * a, [(3,)], R),
    ("fliplr", lambda T, a: T.fliplr(a), [(2, 3)], R),
    ("flipud", lambda T, a: T.flipud(a), [(2, 3)], R),
    ("float_power", lambda T, a, b: T.float_power(a, b), [(3,), (3,)], P),
    ("fmax", lambda T, a, b: T.fmax(a, b), [(4,), (4,)], R),
    ("fmin", lambda T, a, b: T.fmin(a, b), [(4,), (4,)], R),
    ("inverse", lambda T, a: T.inverse(a + 3 * T.eye(3, dtype=a.dtype)), [(3, 3)], R),
    ("ldexp", lambda T, a: T.ldexp(a, T.tensor([1, 2, 3])), [(3,)], R),
    ("logdet", lambda T, a: T.logdet(a @ a.mT + T.eye(3, dtype=a.dtype)), [(3, 3)], R),
    ("slogdet", lambda T, a: T.slogdet(a + 3 * T.eye(3, dtype=a.dtype))[1], [(3, 3)], R),
    ("linalg_slogdet", lambda T, a: T.linalg.slogdet(a + 3 * T.eye(3, dtype=a.dtype))[1], [(3, 3)], R),
    ("masked_scatter", lambda T, a, b: a.masked_scatter(a > 0, b), [(3, 4), (12,)], R),
    ("meshgrid", lambda T, a, b: T.meshgrid(a, b, indexing="ij")[1] * T.meshgrid(a, b, indexing="ij")[0], [(2,), (3,)], R),
    ("mode", lambda T, a: a.mode(1)[0], [(3, 4)], R),
    ("moveaxis", lambda T, a: T.moveaxis(a, 0, 1), [(2, 3)], R),
    ("msort", lambda T, a: T.msort(a), [(3, 2)], R),
    ("multiply", lambda T, a, b: T.multiply(a, b), [(3,), (3,)], R),
    ("nan_to_num", lambda T, a: T.nan_to_num(a), [(3,)], R),
    ("nanmean", lambda T, a: T.nanmean(a, 1), [(3, 4)], R),
    ("nanmedian", lambda T, a: T.nanmedian(a, 1)[0], [(3, 5)], R),
    ("median_all", lambda T, a: a.median(), [(3, 5)], R),
    ("negative", lambda T, a: T.negative(a), [(3,)], R),
    ("positive", lambda T, a: T.positive(a) * a, [(3,)], R),
    ("softmax", lambda T, a: T.softmax(a, 1), [(3, 4)], R),
    ("log_softmax", lambda T, a: T.log_softmax(a, 0), [(3, 4)], R),
    ("conv2d", lambda T, a, w: T.nn.functional.conv2d(a, w, padding=1, stride=2),
     [(1, 2, 5, 4), (3, 2, 3, 2)], R),
    ("conv_transpose2d", lambda T, a, w: T.nn.functional.conv_transpose2d(a, w, stride=2),
     [(1, 2, 3, 2), (2, 3, 2, 2)], R),
    ("fold", lambda T, a: T.nn.functional.fold(a, (3, 4), 2), [(1, 8, 6)], R),
    ("unfold_nn", lambda T, a: T.nn.functional.unfold(a, 2, padding=1), [(1, 2, 3, 3)], R),
    ("max_pool1d", lambda T, a: T.nn.functional.max_pool1d(a, 2, return_indices=True)[0],
     [(1, 2, 5)], R),
    ("max_pool2d", lambda T, a: T.nn.functional.max_pool2d(a, 2, 1, return_indices=True)[0],
     [(1, 3, 4)], R),
    ("max_pool3d", lambda T, a: T.nn.functional.max_pool3d(a, 2, return_indices=True)[0],
     [(1, 1, 2, 3, 4)], R),
    ("adaptive_max_pool1d", lambda T, a: T.nn.functional.adaptive_max_pool1d(a, 3),
     [(1, 2, 5)], R),
    ("adaptive_max_pool2d", lambda T, a: T.nn.functional.adaptive_max_pool2d(a, (2, 3)),
     [(1, 4, 5)], R),
    ("adaptive_max_pool3d", lambda T, a: T.nn.functional.adaptive_max_pool3d(a, 2),
     [(1, 1, 3, 3, 4)], R),
    ("put", lambda T, a, b: a.put(T.tensor([1, 5]), b), [(2, 3), (2,)], R),
    ("rad2deg", lambda T, a: T.rad2deg(a), [(3,)], R),
    ("relu_", lambda T, a: T.relu_(a * 1), [(6,)], R),
    ("reshape_as", lambda T, a, b: a.reshape_as(b) * b, [(6,), (2, 3)], R),
    ("row_stack", lambda T, a, b: T.row_stack([a, b]), [(3,), (3,)], R),
    ("std_mean", lambda T, a: sum(T.std_mean(a, 1)), [(3, 4)], R),
    ("var_mean", lambda T, a: sum(T.var_mean(a, 0)), [(3, 4)], R),
    ("subtract", lambda T, a, b: T.subtract(a, b), [(3,), (3,)], R),
    ("swapaxes", lambda T, a: T.swapaxes(a, 0, 1), [(2, 3)], R),
    ("swapdims", lambda T, a: T.swapdims(a, 0, 1), [(2, 3)], R),
    ("threshold", lambda T, a: T.nn.functional.threshold(a, 0.1, 20.0), [(6,)], R),
    ("true_divide", lambda T, a, b: T.true_divide(a, b), [(3,), (3,)], P),
    ("unflatten", lambda T, a: a.unflatten(0, (2, 3)), [(6,)], R),
    ("view_as", lambda T, a, b: a.view_as(b) * b, [(6,), (2, 3)], R),
    ("vdot", lambda T, a, b: T.vdot(a, b), [(3,), (3,)], R),
    ("vecdot", lambda T, a, b: T.linalg.vecdot(a, b), [(2, 3), (2, 3)], R),
]
CASES += [
    ("native_layer_norm", lambda T, a, w, b: T.nn.functional.layer_norm(a, (4,), w, b),
     [(3, 4), (4,), (4,)], R),
    ("_fused_rms_norm", lambda T, a, w: T.nn.functional.rms_norm(a, (4,), w), [(3, 4), (4,)], R),
    ("native_group_norm", lambda T, a, w, b: T.nn.functional.group_norm(a, 2, w, b),
     [(2, 4, 3), (4,), (4,)], R),
    ("batch_norm_elemt", lambda T, a, w, b: T.nn.functional.batch_norm(a, None, None, w, b, True),
     [(3, 4, 2), (4,), (4,)], R),
]

# the fused cross-entropy, attention and softmax-backward rows (double backward through
# autograd.grad with create_graph for the backward ops)
CASES += [
    ("_cross_entropy_loss",
     lambda T, a: T.nn.functional.cross_entropy(
         a, T.tensor([0, 3, 1]), weight=T.tensor([0.5, 1.5, 1.0, 2.0]).to(a.dtype),
         label_smoothing=0.1), [(3, 4)], R),
    ("_cross_entropy_loss_backward",
     lambda T, a: T.autograd.grad(T.nn.functional.cross_entropy(a, T.tensor([2, 0, 1])) * 3, a,
                                  create_graph=True)[0] * T.arange(12.).reshape(3, 4).to(a.dtype),
     [(3, 4)], R),
    # the elementwise losses (framework/_ops/loss_elementwise.py), target gradients included
    ("_mse_loss", lambda T, a, b: T.nn.functional.mse_loss(a, b, reduction="sum"),
     [(2, 3), (2, 3)], R),
    ("_smooth_l1_loss", lambda T, a, b: T.nn.functional.smooth_l1_loss(
        a, b, reduction="none", beta=0.7), [(2, 3), (2, 3)], R),
    ("_huber_loss", lambda T, a, b: T.nn.functional.huber_loss(a, b, delta=0.8),
     [(2, 3), (2, 3)], R),
    ("_binary_cross_entropy", lambda T, a, b: T.nn.functional.binary_cross_entropy(
        a.sigmoid(), b.sigmoid(), weight=T.tensor([0.5, 1.5, 2.0]).to(a.dtype),
        reduction="none"), [(2, 3), (2, 3)], R),
    ("_binary_cross_entropy_with_logits",
     lambda T, a, b: T.nn.functional.binary_cross_entropy_with_logits(
         a, b.sigmoid(), pos_weight=T.tensor([0.5, 1.5, 2.0]).to(a.dtype),
         reduction="sum"), [(2, 3), (2, 3)], R),
    ("_soft_margin_loss", lambda T, a: T.nn.functional.soft_margin_loss(
        a, T.tensor([1.0, -1.0, -1.0]).to(a.dtype).expand(2, 3), reduction="none"),
     [(2, 3)], R),
    ("_nll_loss", lambda T, a: T.nn.functional.nll_loss(
        a, T.tensor([2, -100]), weight=T.tensor([0.5, 1.5, 2.0]).to(a.dtype)),
     [(2, 3)], R),
    ("_nll_loss2d", lambda T, a: T.nn.functional.nll_loss(
        a, T.tensor([[[0], [2]]]), reduction="none"),
     [(1, 3, 2, 1)], R),
    ("_fused_sdpa", lambda T, q, k, v: T.nn.functional.scaled_dot_product_attention(q, k, v),
     [(1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 4)], R),
    # (in float64 the product is taken in float64: the formulas' path, without rounding)
    ("_autocast_linear", lambda T, x, w, b: T._autocast_linear(x, w, b, x.dtype)
     if hasattr(T, "_autocast_linear") else T.nn.functional.linear(x, w, b),
     [(2, 3, 5), (4, 5), (4,)], R),
    ("_softmax_backward_data",
     lambda T, a: T.autograd.grad((T.softmax(a, 1) * T.arange(4.).to(a.dtype)).sum(), a,
                                  create_graph=True)[0]
     + T.autograd.grad((T.log_softmax(a, 0) * T.arange(4.).to(a.dtype)).sum(), a,
                       create_graph=True)[0], [(3, 4)], R),
]

# the fused embedding rows: the lookup (padding_idx set but not looked up: the padding row's
# gradient is zero on purpose, which finite differences would not see) and its backward
# reached with create_graph. scale_grad_by_freq is left out: torch's double backward
# ignores it; tests/nn/test_embedding_fused.py checks it by finite differences.
CASES += [
    ("embedding", lambda T, w: T.nn.functional.embedding(T.tensor([[1, 3, 3], [0, 3, 1]]), w,
                                                         padding_idx=2), [(4, 3)], R),
    ("embedding_dense_backward",
     lambda T, w: T.autograd.grad((T.nn.functional.embedding(T.tensor([2, 0, 2, 1]), w,
                                                             padding_idx=1) ** 2).sum(),
                                  w, create_graph=True)[0], [(3, 2)], R),
]


def _linear_gelu(T, x, w, b):
    """gelu(linear(x, w, b)): the fused op where T has it (framework), the composite (torch)."""
    if hasattr(T, "_fused_linear"):
        return T._fused_linear(x, w, b, "gelu")[0]
    return T.nn.functional.gelu(T.nn.functional.linear(x, w, b))


# the fused linear + bias + activation row
CASES += [
    ("_fused_linear", _linear_gelu, [(2, 3, 4), (5, 4), (5,)], R),
]


def _dropout(T, a, b=None):
    """(b +) dropout(a) at p = 0.5 with a fixed (seed, offset): the fused ops (framework);
    torch multiplies by the same mask (keep * 2, exact), read back from the framework op."""
    if T.__name__ == "framework":
        if b is None:
            return T._fused_dropout(a, 0.5, 7, 3)
        return T._fused_dropout_add(a, b, 0.5, 7, 3)
    import framework
    mask = framework._fused_dropout(framework.ones(tuple(a.shape), dtype=framework.float64),
                                    0.5, 7, 3)
    out = a * T.tensor(mask.numpy())
    return out if b is None else out + b


# the fused dropout rows (the mask regenerated from (seed, offset) in backward)
CASES += [
    ("_fused_dropout", lambda T, a: _dropout(T, a), [(3, 5)], R),
    ("_fused_dropout_add", _dropout, [(3, 5), (3, 5)], R),
]


def _conv_gemm(T, x, w, b=None):
    """conv2d(x, w, b, stride 2, padding 1) through the implicit-GEMM row (framework; on
    the CPU its launchers write the columns and call one GEMM), torch's conv2d."""
    if T.__name__ == "framework":
        grid = tuple((s + 2 - 3) // 2 + 1 for s in x.shape[2:])
        return T._conv_gemm(x, w, b, (2, 2), (1, 1), (1, 1), 1, grid)
    return T.nn.functional.conv2d(x, w, b, stride=2, padding=1)


def _conv_gemm_grad(T, x, w, which):
    """One gradient of the implicit-GEMM convolution, taken with create_graph: its graph
    holds a _conv_gemm_input (which=0) or _conv_gemm_weight (which=1) node."""
    y = _conv_gemm(T, x, w)
    return T.autograd.grad((y * y).sum(), (x, w), create_graph=True)[which]


# the implicit-GEMM convolution rows (cuda's conv1d/conv2d path)
CASES += [
    ("_conv_gemm", _conv_gemm, [(2, 2, 5, 4), (3, 2, 3, 3), (3,)], R),
    ("_conv_gemm_input", lambda T, x, w: _conv_gemm_grad(T, x, w, 0),
     [(1, 2, 5, 4), (2, 2, 3, 3)], R),
    ("_conv_gemm_weight", lambda T, x, w: _conv_gemm_grad(T, x, w, 1),
     [(1, 2, 5, 4), (2, 2, 3, 3)], R),
]

# the LU family, the _ex variants, matrix_exp and the Cholesky solves
from op_grads_linalg_extra import CASES as _LINALG_EXTRA  # noqa: E402
CASES += _LINALG_EXTRA

# the complex ops
from op_grads_complex import CASES as _COMPLEX  # noqa: E402
CASES += _COMPLEX
from op_grads_linalg_eig import CASES as _LINALG_EIG  # noqa: E402
CASES += _LINALG_EIG

# torch.fft and stft/istft
from op_grads_fft import CASES as _FFT  # noqa: E402
CASES += _FFT

# the view scatters, fill and lu_unpack
from op_grads_composites import CASES as _COMPOSITES  # noqa: E402
CASES += _COMPOSITES

# the special functions (tests/test_special.py covers more ranges); igamma, igammac and
# zeta have no derivative for their first argument, as in torch
CASES += [
    ("lgamma", lambda T, a: T.lgamma(a), [(4,)], P),
    ("digamma", lambda T, a: T.digamma(a), [(4,)], P),
    ("polygamma", lambda T, a: T.polygamma(2, a), [(4,)], P),
    ("igamma", lambda T, a: T.igamma(T.ones_like(a) * 1.5, a), [(4,)], P),
    ("igammac", lambda T, a: T.igammac(T.ones_like(a) * 1.5, a), [(4,)], P),
    ("i0", lambda T, a: T.i0(a), [(4,)], R),
    ("i0e", lambda T, a: T.special.i0e(a), [(4,)], R),
    ("i1", lambda T, a: T.special.i1(a), [(4,)], R),
    ("i1e", lambda T, a: T.special.i1e(a), [(4,)], R),
    ("ndtr", lambda T, a: T.special.ndtr(a), [(4,)], R),
    ("ndtri", lambda T, a: T.special.ndtri(a * 0.4), [(4,)], P),
    ("log_ndtr", lambda T, a: T.special.log_ndtr(a * 2), [(4,)], R),
    ("erfcx", lambda T, a: T.special.erfcx(a), [(4,)], R),
    ("entr", lambda T, a: T.special.entr(a), [(4,)], P),
    ("xlog1py", lambda T, a, b: T.special.xlog1py(a, b.abs()), [(4,), (4,)], R),
    ("zeta", lambda T, a: T.special.zeta(T.ones_like(a) * 2.5, a), [(4,)], P),
]

# second tensor arguments and PyTorch's corner cases (issue 15): tensor bounds of clamp, the
# exponent of ldexp, 0-d tensor fill values, operands passed as one list, a vector
# right-hand side, large logcumsumexp inputs, native_group_norm's statistics, as_strided
# of an offset view, positional `unbiased`, zeros in prod/cumprod, broadcast contractions
_MASK = [[True, False, False, True], [False, True, False, False], [True, True, False, True]]
_ZERO_ROWS = [[1.5, 0.0, -0.8, 1.2], [0.0, 1.1, 0.0, 0.7], [0.9, -1.3, 1.4, 0.6]]
CASES += [
    ("clamp_tensor", lambda T, a, lo, hi: a.clamp(lo, hi), [(3, 4), (4,), (3, 1)], R),
    ("clamp_min_tensor", lambda T, a, lo: T.clamp_min(a, lo), [(3, 4), (3, 4)], R),
    ("clamp_max_tensor", lambda T, a, hi: a.clamp(max=hi), [(3, 4), (1, 4)], R),
    ("ldexp_other", lambda T, a, b: T.ldexp(a, b), [(3, 4), (4,)], R),
    ("masked_fill_tensor_value", lambda T, a, v: a.masked_fill(T.tensor(_MASK), v),
     [(3, 4), ()], R),
    ("index_fill_tensor_value", lambda T, a, v: a.index_fill(1, T.tensor([0, 3, 0]), v),
     [(3, 4), ()], R),
    ("nextafter", lambda T, a, b: T.nextafter(a, b) * b, [(5,), (5,)], R),
    ("einsum_list", lambda T, a, b: T.einsum("ij,jk->ik", [a, b]), [(3, 4), (4, 2)], R),
    ("meshgrid_list", lambda T, a, b: T.stack(T.meshgrid([a, b], indexing="xy")) * 2,
     [(2,), (3,)], R),
    ("solve_vector", lambda T, a, b: T.linalg.solve(a + 3 * T.eye(3, dtype=a.dtype), b),
     [(2, 3, 3), (3,)], R),
    ("logcumsumexp_large", lambda T, a: (a + 800).logcumsumexp(1), [(3, 4)], R),
    ("native_group_norm_stats",
     lambda T, a, w, b: T.cat([t.flatten() for t in T.native_group_norm(a, w, b, 2, 4, 3, 2, 0.5)]),
     [(2, 4, 3), (4,), (4,)], R),
    ("as_strided_offset_view", lambda T, a: a[2:8].as_strided((2, 2), (1, 2), 3), [(10,)], R),
    ("var_unbiased_positional", lambda T, a: a.var(False) + T.var(a, True), [(3, 4)], R),
    ("std_unbiased_positional", lambda T, a: a.std(True), [(3, 4)], R),
    ("var_mean_unbiased_positional", lambda T, a: T.stack(T.var_mean(a, False)), [(3, 4)], R),
    ("std_mean_unbiased_positional", lambda T, a: T.stack(T.std_mean(a, True)), [(3, 4)], R),
    ("prod_zeros", lambda T, a: pinned(T, a, _ZERO_ROWS).prod(), [(3, 4)], R),
    ("prod_dim_zeros", lambda T, a: pinned(T, a, _ZERO_ROWS).prod(1), [(3, 4)], R),
    ("cumprod_zeros", lambda T, a: pinned(T, a, _ZERO_ROWS).cumprod(1), [(3, 4)], R),
    ("cumprod_dim0_zeros", lambda T, a: pinned(T, a, _ZERO_ROWS).cumprod(0), [(3, 4)], R),
    ("tensordot_broadcast", lambda T, a, b: T.tensordot(a, b, dims=([0, 1], [2, 0])),
     [(1, 3, 2), (3, 2, 1)], R),
]
