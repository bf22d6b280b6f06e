"""Helpers of the derivative formulas in ops.yaml. Everything here is written with
framework ops (recorded when grad mode is on), so derivatives stay differentiable.
The indexing/scatter family's helpers are in formulas_index.py, linalg's in
formulas_linalg.py."""
import builtins as _builtins
import math

import framework  # loaded first: formulas run only after framework is imported


def _wrap(dim, ndim):
    n = max(ndim, 1)
    return dim + n if dim < 0 else dim


def reduced_dims(input, dim):
    """The sorted, non-negative dims a reduction over ``dim`` (None: all) removes."""
    nd = input.dim()
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return list(range(nd))
    if isinstance(dim, int):
        dim = [dim]
    return sorted(_wrap(d, nd) for d in dim)


def unreduce(grad, input, dim=None, keepdim=False):
    """``grad`` of a reduction over ``dim`` broadcast back to ``input``'s shape."""
    if not keepdim and input.dim() > 0:
        for d in reduced_dims(input, dim):
            grad = grad.unsqueeze(d)
    return grad.expand(input.shape)


def numel_of(input, dim=None):
    n = 1
    for d in reduced_dims(input, dim):
        n *= input.shape[d] if input.dim() else 1
    return n


def extreme_backward(grad, input, result, dim=None, keepdim=False):
    """amax/amin/max/min without indices: the gradient is shared evenly among the
    elements equal to the extreme value."""
    r = unreduce(result, input, dim, keepdim)
    mask = (input == r).to(grad.dtype)
    count = mask.sum(dim=reduced_dims(input, dim) if input.dim() else None, keepdim=True)
    return unreduce(grad, input, dim, keepdim) * mask / count


def indexed_backward(grad, input, indices, dim, keepdim):
    """max/min/sort/topk/kthvalue... along ``dim`` with indices: grad goes to the index."""
    if input.dim() == 0:
        return grad.reshape(())
    if not keepdim and grad.dim() < input.dim():
        grad = grad.unsqueeze(dim)
        indices = indices.unsqueeze(dim)
    return grad.new_zeros(input.shape).scatter_add(dim, indices, grad)


def var_backward(grad, input, dim=None, correction=1, keepdim=False):
    n = numel_of(input, dim)
    mean = input.mean(dim=reduced_dims(input, dim) if input.dim() else None, keepdim=True)
    dof = n - correction
    # no degrees of freedom: torch's var is inf/nan there and its gradient nan (inf * 0)
    return unreduce(grad, input, dim, keepdim) * (input - mean) * (
        2.0 / dof if dof > 0 else math.inf)


def std_backward(grad, input, result, dim=None, correction=1, keepdim=False):
    return var_backward(grad / (2 * result), input, dim, correction, keepdim)


def norm_backward(grad, input, result, p, dim=None, keepdim=False):
    p = 2.0 if p is None or p == "fro" else float(p)
    g = unreduce(grad, input, dim, keepdim)
    r = unreduce(result, input, dim, keepdim)
    if p == 0.0:
        return input * 0
    if p == 1.0:
        return g * input.sgn()
    if p == 2.0:
        return g * input / r.masked_fill(r == 0, 1)
    if p == float("inf") or p == float("-inf"):
        mask = (input.abs() == r).to(g.dtype)
        return g * input.sgn() * mask / mask.sum(dim=reduced_dims(input, dim), keepdim=True)
    return g * input * input.abs().pow(p - 2) / r.pow(p - 1).masked_fill(r == 0, 1)


def logsumexp_backward(grad, input, result, dim, keepdim):
    return unreduce(grad, input, dim, keepdim) * (input - unreduce(result, input, dim,
                                                                   keepdim)).exp()


def prod_backward(grad, input, result, dim=None, keepdim=False):
    g = unreduce(grad, input, dim, keepdim)
    r = unreduce(result, input, dim, keepdim)
    # where the input has no zero, d prod / d x = prod / x
    zero = input == 0
    safe = g * r / input.masked_fill(zero, 1)
    if not bool(zero.any()):
        return safe
    # elements that are zero: the product of the others
    if input.dim() == 0:
        return g
    dims = reduced_dims(input, dim)
    x = input.movedim(dims, list(range(input.dim() - len(dims), input.dim())))
    shp = x.shape
    flat = x.reshape(*shp[:x.dim() - len(dims)], -1)
    n = flat.shape[-1]
    ones = flat.new_ones(*flat.shape[:-1], 1)
    before = ones if n == 1 else framework.cat([ones, flat[..., :-1].cumprod(-1)], -1)
    after = ones if n == 1 else framework.cat([ones, flat.flip(-1)[..., :-1].cumprod(-1)],
                                              -1).flip(-1)
    others = (before * after).reshape(shp).movedim(
        list(range(input.dim() - len(dims), input.dim())), dims)
    return safe.masked_fill(zero, 0) + (g * others).masked_fill(~zero, 0)


def scaled(x, s):
    """``x * s``, without the multiply when ``s`` is 1 (addmm's and baddbmm's defaults)."""
    return x if s.__class__ in (int, float, bool) and s == 1 else x * s


def _transposed(t):
    """Whether a 2-d ``t`` is the transpose of a contiguous matrix (``weight.t()``)."""
    return t.dim() == 2 and t.shape[1] > 1 and t.stride(0) == 1 and t.stride(1) == t.shape[0]


def mm_mat1_backward(grad, mat2, mat1, alpha=1):
    """Gradient of mm/addmm for mat1 (``grad @ mat2.T``), computed in mat1's layout, so that
    the gradient of ``weight`` through ``x @ weight.t()`` comes out contiguous."""
    r = mat2.mm(grad.t()).t() if _transposed(mat1) else grad.mm(mat2.t())
    return scaled(r, alpha)


def mm_mat2_backward(grad, mat1, mat2, alpha=1):
    """Gradient of mm/addmm for mat2 (``mat1.T @ grad``), computed in mat2's layout."""
    r = grad.t().mm(mat1).t() if _transposed(mat2) else mat1.t().mm(grad)
    return scaled(r, alpha)


def matmul_backward(grad, input, other, wrt_input):
    """Gradient of matmul(input, other) for any 1-d/2-d/batched operands."""
    a, b = input, other
    a1, b1 = a.dim() == 1, b.dim() == 1
    if a1 and b1:
        return grad * (b if wrt_input else a)
    g = grad
    if a1:
        a = a.unsqueeze(0)
        g = g.unsqueeze(-2)
    if b1:
        b = b.unsqueeze(-1)
        g = g.unsqueeze(-1)
    if wrt_input:
        r = g.matmul(b.mT)
        return r.squeeze(-2) if a1 else r
    r = a.mT.matmul(g)
    return r.squeeze(-1) if b1 else r


def permute_backward(grad, dims):
    if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
        dims = dims[0]      # permute(x, [2, 0, 1]) as well as permute(x, 2, 0, 1)
    nd = len(dims)
    inv = [0] * nd
    for i, d in enumerate(dims):
        inv[_wrap(d, nd)] = i
    return grad.permute(inv)


def cat_backward(grad, tensors, dim):
    outs, start = [], 0
    nd = grad.dim()
    d = _wrap(dim, nd)
    for t in tensors:
        if t.dim() == 1 and t.shape[0] == 0 and nd != 1:
            outs.append(None)
            continue
        n = t.shape[d]
        outs.append(grad.narrow(d, start, n))
        start += n
    return outs


def stack_backward(grad, tensors, dim):
    d = _wrap(dim, grad.dim())
    return list(grad.unbind(d))


def where_backward(grad, condition, for_input):
    zero = grad.new_zeros(())
    return grad.where(condition, zero) if for_input else zero.where(condition, grad)


def clamp_backward(grad, input, min=None, max=None):
    mask = input == input
    if min is not None:
        mask = mask & (input >= min)
    if max is not None:
        mask = mask & (input <= max)
    return grad * mask.to(grad.dtype)


def clamp_min_max_backward(grad, input, min, max, wrt_min):
    """Gradient of clamp for a tensor bound (``wrt_min``: for min, else for max): the
    elements the bound was taken at; when min > max, max wins there (PyTorch's rule)."""
    zero = grad.new_zeros(())
    if wrt_min:
        taken = input < min
        if max is not None:
            taken = taken & (min < max)
    else:
        taken = input > max
        if min is not None:
            taken = taken | (max < min)
    return grad.where(taken, zero)


def logcumsumexp_backward(grad, input, result, dim):
    """Gradient of logcumsumexp in log space (PyTorch's formula): the reversed cumulative
    sums of grad * exp(input - result) split by the sign of grad, so nothing overflows."""
    if grad.dim() == 0 or grad.numel() == 0:
        return grad
    lowest = grad.new_full((), framework.finfo(grad.dtype).min)
    log_abs = grad.abs().log()

    def rev_lcse(x):
        return x.flip(dim).logcumsumexp(dim).flip(dim)
    pos = (rev_lcse(log_abs.where(grad > 0, lowest) - result) + input).exp()
    neg = (rev_lcse(log_abs.where(grad < 0, lowest) - result) + input).exp()
    return pos - neg


def group_norm_stats_backward(dx, grad_mean, grad_rstd, input, mean, rstd, N, group):
    """Adds to native_group_norm's input gradient ``dx`` the part that flows through its
    mean and rstd outputs (differentiable in PyTorch): d mean/dx = 1/M and
    d rstd/dx = -rstd^3 (x - mean) / M over each group of M elements."""
    if (grad_mean is None and grad_rstd is None) or input.numel() == 0:
        return dx
    # the engine gives zeros for statistics nobody used (F.group_norm): one small check
    # spares the full-size work
    used = framework.cat([g.reshape(-1) for g in (grad_mean, grad_rstd) if g is not None])
    if not (framework.is_grad_enabled() or bool(used.any())):
        return dx
    xg = input.reshape(N, group, -1)
    m = xg.shape[2]
    a = dx.new_zeros(()) if grad_mean is None else (grad_mean / m).reshape(N, group, 1)
    if grad_rstd is not None:
        b = (-grad_rstd * rstd.pow(3) / m).reshape(N, group, 1)
        a = a - b * mean.reshape(N, group, 1)
        return dx + (a + b * xg).reshape(input.shape)
    return dx + a.expand(xg.shape).reshape(input.shape)


def gelu_backward(grad, input, approximate="none"):
    if not (framework.is_grad_enabled() and (grad.requires_grad or input.requires_grad)):
        # no double backward to record: one fused kernel instead of a dozen ops
        from .._ops import pointwise
        kernel = "gelu_tanh_backward" if approximate == "tanh" else "gelu_backward"
        return pointwise.binary("gelu_backward", kernel, grad, input, None, "float")
    if approximate == "tanh":
        k = math.sqrt(2.0 / math.pi)
        inner = k * (input + 0.044715 * input.pow(3))
        t = inner.tanh()
        return grad * (0.5 * (1 + t) + 0.5 * input * (1 - t * t) * k *
                       (1 + 3 * 0.044715 * input * input))
    cdf = 0.5 * (1 + (input / math.sqrt(2.0)).erf())
    pdf = (-0.5 * input * input).exp() / math.sqrt(2 * math.pi)
    return grad * (cdf + input * pdf)


def cumsum_backward(grad, dim):
    return grad.flip(dim).cumsum(dim).flip(dim)


def cumprod_backward(grad, input, result, dim):
    """Gradient of cumprod that stays finite where the input has zeros: before the first
    zero of a slice it is the usual reversed cumsum of grad * result over x; at the first
    zero, that of grad times the cumprod with this zero taken as 1; after it, zero (for
    double backward, that zero times the gradient of the same cumprod, recursively)."""
    if input.dim() == 0 or input.shape[dim] <= 1:
        return grad
    x = input if input.dtype is result.dtype else input.to(result.dtype)
    zero = x == 0
    if not bool(zero.any()):
        return cumsum_backward(grad * result, dim) / x
    seen = zero.cumsum(dim)
    before, first = seen == 0, zero & (seen == 1)
    xr = x.masked_fill(first, 1)
    yr = xr.cumprod(dim)
    g = (cumsum_backward(grad * result, dim) / x.masked_fill(~before, 1)).masked_fill(~before, 0)
    g = g + cumsum_backward(grad * yr, dim).masked_fill(~first, 0)
    if framework.is_grad_enabled() and (grad.requires_grad or input.requires_grad):
        later = ~(before | first)
        xz = (x * first).sum(dim, keepdim=True)
        g = g + (xz * cumprod_backward(grad, xr, yr, dim)).masked_fill(~later, 0)
    return g


# ---- generic: ops that only move elements ----------------------------------------------

def moved(grad, input, fn):
    """Gradient of an op that only moves, repeats or drops ``input``'s elements (views,
    flips, pads, gathers...): ``fn`` applied to element numbers 1..n tells which input
    element each output element came from (0 for none), and grad is summed back there."""
    n = input.numel()
    pos = fn(framework.arange(1, n + 1, device=input.device).reshape(input.shape))
    return _scatter_back(grad, pos, n).reshape(input.shape)


def as_strided_backward(grad, input, size, stride, storage_offset):
    """Gradient of as_strided in the geometry of ``input``'s storage (PyTorch's rule): the
    output's elements are located in that storage, and those that fall on an element of
    ``input`` (which may be a partial, offset or strided view of it) send their gradient
    there; the rest has no input element to go to."""
    n = input.numel()
    off_in = input.storage_offset()
    off = off_in if storage_offset is None else storage_offset
    end = off_in + sum((s - 1) * st for s, st in zip(input.shape, input.stride()) if s > 0)
    if all(s > 0 for s in size):
        end = _builtins.max(end, off + sum((s - 1) * st for s, st in zip(size, stride)))
    store = framework.zeros(_builtins.max(end, off_in, off) + 1, dtype=framework.int64,
                            device=input.device)
    if n:
        store.as_strided(input.shape, input.stride(), off_in).copy_(
            framework.arange(1, n + 1, device=input.device).reshape(input.shape))
    pos = store.as_strided(size, stride, off)
    return _scatter_back(grad, pos, n).reshape(input.shape)


def _scatter_back(grad, pos, n):
    pos = pos.reshape(-1)
    g = grad.reshape(-1)
    flat = g.new_zeros(n + 1)     # slot 0 collects what came from no input element
    return flat.index_add(0, pos, g)[1:]


def pieces_backward(grads, results, dim, stacked=False):
    """Gradient of split, chunk (``cat`` of the pieces' gradients) and unbind (``stack``):
    the pieces tile the input along ``dim``; a piece without a gradient gives zeros."""
    gs = [g if g is not None else r.new_zeros(r.shape) for g, r in zip(grads, results)]
    if stacked:
        return framework.stack(gs, dim)
    joined = _joined(gs, dim)
    return framework.cat(gs, dim) if joined is None else joined


def _joined(gs, dim):
    """``cat(gs, dim)`` as a view, with no copy, where the gradients already lie side by
    side along ``dim`` in one buffer with one layout, as attention's backward writes q, k
    and v's (memory_format.empty_like_pieces); else None. Not while the backward records
    (create_graph): the view would be off the graph."""
    g0 = gs[0]
    if len(gs) < 2 or (framework.is_grad_enabled() and any(g.requires_grad for g in gs)):
        return None
    shape, stride, storage = g0._shape, g0._stride, g0._storage
    d = _wrap(dim, len(shape))   # split checked dim in the forward
    offset, total = g0._offset, 0
    for g in gs:
        if (g._storage is not storage or g._stride != stride or g._offset != offset
                or g.dtype is not g0.dtype or len(g._shape) != len(shape)
                or g._shape[:d] != shape[:d] or g._shape[d + 1:] != shape[d + 1:]):
            return None
        offset += g._shape[d] * stride[d]
        total += g._shape[d]
    shape = shape[:d] + (total,) + shape[d + 1:]
    # no two elements of the view may share memory (it may become a leaf's .grad)
    end = 1
    for s, size in sorted((s, size) for size, s in zip(shape, stride) if size != 1):
        if s < end:
            return None
        end = s * size
    return framework.Tensor._make(storage, shape, stride, g0._offset, g0.dtype)


def moved_list(grad, tensors, fn):
    """``moved`` for ops over a list of tensors (hstack, block_diag, meshgrid...): element
    numbers run on across the inputs."""
    pos_in, start = [], 1
    for t in tensors:
        n = t.numel()
        pos_in.append(framework.arange(start, start + n, device=t.device).reshape(t.shape))
        start += n
    pos = fn(pos_in)
    if isinstance(pos, (list, tuple)):
        total = None
        for g, p in zip(grad if isinstance(grad, (list, tuple)) else [grad], pos):
            if g is None:
                continue
            s = _scatter_back(g, p, start - 1)
            total = s if total is None else total + s
    else:
        total = _scatter_back(grad, pos, start - 1)
    out, off = [], 0
    for t in tensors:
        n = t.numel()
        out.append(total[off:off + n].reshape(t.shape))
        off += n
    return out


# ---- pointwise helpers -------------------------------------------------------------------

def pow_backward_input(grad, input, exponent):
    if isinstance(exponent, (int, float)):
        if exponent == 0:
            return grad * 0
        return grad * exponent * input.pow(exponent - 1)
    return (grad * exponent * input.pow(exponent - 1)).masked_fill(exponent == 0, 0)


def pow_backward_exponent(grad, input, result):
    if not hasattr(input, "dim"):
        return grad * result * (math.log(input) if input > 0 else float("nan")) \
            if input != 0 else grad * 0
    cond = (input == 0)
    return (grad * result * input.masked_fill(cond, 1).log()).masked_fill(cond, 0)


def maximum_backward(grad, input, other, for_input):
    a, b = (input, other) if for_input else (other, input)
    return (grad * (a > b)) + (grad * (a == b)) * 0.5


def sinc_backward(grad, input):
    x = input.masked_fill(input == 0, 1)
    px = x * math.pi
    d = (px.cos() * px - px.sin()) / (px * x)
    return grad * d.masked_fill(input == 0, 0)


def logit_backward(grad, input, eps=None):
    d = grad / (input * (1 - input))
    if eps is None:
        return d
    return d.masked_fill((input < eps) | (input > 1 - eps), 0)


def silu_backward(grad, input):
    s = input.sigmoid()
    return grad * (s * (1 + input * (1 - s)))


def mish_backward(grad, input):
    sp = input.exp().log1p()
    t = sp.tanh()
    return grad * (t + input * (1 - t * t) * input.sigmoid())


def softplus_backward(grad, input, beta, threshold):
    z = (input * beta).sigmoid()
    return grad * z.masked_fill(input * beta > threshold, 1)


def elu_backward(grad, input, alpha=1.0, scale=1.0, input_scale=1.0):
    neg = input <= 0
    d = (input * input_scale).exp() * (alpha * scale * input_scale)
    return grad * d.masked_fill(~neg, scale)


def hardswish_backward(grad, input):
    mid = (input > -3) & (input < 3)
    d = ((2 * input + 3) / 6).masked_fill(~mid, 0) + (input >= 3)
    return grad * d


def correction_of(unbiased, correction, dim=None):
    if correction is not None:
        return correction
    if isinstance(dim, bool):       # var(x, False): the unbiased overload
        unbiased = dim
    return 0 if unbiased is False else 1


def var_dim(dim):
    """The dims of a var/std call: none (all) for the unbiased overload var(x, True)."""
    return None if isinstance(dim, bool) else dim


def nanmean_backward(grad, input, dim, keepdim):
    keep = ~input.isnan()
    cnt = keep.sum(dim=reduced_dims(input, dim) if input.dim() else None, keepdim=True)
    return unreduce(grad, input, dim, keepdim) * keep / cnt


def max_backward(grads, results, input, dim, keepdim, largest=True):
    """max/min/median/nanmedian/mode: all-reduce form (dim None), with indices, or (max
    and min with a tensor as ``dim``) elementwise against that tensor."""
    if isinstance(dim, framework.Tensor):
        if largest:
            return maximum_backward(grads[0], input, dim, True)
        return maximum_backward(grads[0], -input, -dim, True)
    if dim is None:
        return extreme_backward(grads[0], input, results[0], None, False)
    return indexed_backward(grads[0], input, results[1], dim, keepdim)


def trace_backward(grad, input):
    return grad * framework.eye(input.shape[0], input.shape[1], dtype=grad.dtype,
                                device=grad.device)


def roll_backward(grad, shifts, dims):
    if isinstance(shifts, int):
        shifts = [shifts]
    return grad.roll([-s for s in shifts], dims)


def einsum_backward(grad, equation, operands):
    """Gradients of einsum for equations without repeated letters inside one operand."""
    from .._ops.einsum import explicit_equation   # "...ij,...jk" -> "aij,ajk->aik"
    eq = explicit_equation(equation, operands)
    lhs, _, rhs = eq.partition("->")
    ins = lhs.split(",")
    if not _ or "." in eq:
        raise NotImplementedError("einsum backward needs an explicit '->' and no ellipsis")
    outs = []
    for i, (spec, op) in enumerate(zip(ins, operands)):
        if len(set(spec)) != len(spec):
            raise NotImplementedError("einsum backward with a repeated index in one operand")
        others = [(s, o) for j, (s, o) in enumerate(zip(ins, operands)) if j != i]
        avail = set(rhs) | set("".join(s for s, _ in others))
        keep = "".join(c for c in spec if c in avail)
        sub = ",".join([rhs] + [s for s, _ in others]) + "->" + keep
        # operands of other dtypes meet the grad in its dtype (a contraction needs one)
        g = framework.einsum(sub, grad, *[o.to(grad.dtype) for _, o in others])
        for k, c in enumerate(spec):
            if c not in avail:
                g = g.unsqueeze(k)
        # a size-1 dim of this operand that broadcast against another's: summed back
        wide = [k for k, n in enumerate(op.shape) if n == 1 and g.shape[k] != 1]
        if wide:
            g = g.sum(wide, keepdim=True)
        g = g.expand(op.shape)
        if g.dtype is not op.dtype:
            # each operand gets its gradient in its own dtype (real part for a real one)
            g = (g.real if g.is_complex() and not op.is_complex() else g).to(op.dtype)
        outs.append(g)
    return outs


def not_implemented(op, input):
    raise RuntimeError(f"the derivative for '{op}' is not implemented (input '{input}').")


# ---- linear algebra ------------------------------------------------------------------------

def _tensordot_equation(a_dim, b_dim, dims):
    letters = "abcdefghijklmnopqrstuvwxyz"
    if isinstance(dims, int):
        da, db = list(range(a_dim - dims, a_dim)), list(range(dims))
    else:
        da, db = [list(d) if isinstance(d, (list, tuple)) else [d] for d in dims]
    da = [d % a_dim for d in da]
    db = [d % b_dim for d in db]
    a = list(letters[:a_dim])
    b = list(letters[a_dim:a_dim + b_dim])
    for i, j in zip(da, db):
        b[j] = a[i]
    out = [c for k, c in enumerate(a) if k not in da] + [c for k, c in enumerate(b)
                                                         if k not in db]
    return f"{''.join(a)},{''.join(b)}->{''.join(out)}"


def tensordot_backward(grad, a, b, dims, wrt_a):
    eq = _tensordot_equation(a.dim(), b.dim(), dims)
    return einsum_backward(grad, eq, [a, b])[0 if wrt_a else 1]


def kron_backward(grad, a, b, wrt_a):
    nd = max(a.dim(), b.dim())
    sa = (1,) * (nd - a.dim()) + tuple(a.shape)
    sb = (1,) * (nd - b.dim()) + tuple(b.shape)
    inter = []
    for x, y in zip(sa, sb):
        inter += [x, y]
    g = grad.reshape(inter)
    if wrt_a:
        bb = b.reshape(sb)
        for i in range(nd):
            bb = bb.unsqueeze(2 * i)
        r = (g * bb).sum([2 * i + 1 for i in range(nd)])
        return r.reshape(a.shape)
    aa = a.reshape(sa)
    for i in range(nd):
        aa = aa.unsqueeze(2 * i + 1)
    r = (g * aa).sum([2 * i for i in range(nd)])
    return r.reshape(b.shape)


