"""Reductions and matrix products of complex tensors, on their real views.

- sum and mean reduce the real view (complex_views.as_real: shape + (2,)) over the same
  dims, one launch of the device's real reduction; var/std add the variances of the two
  parts; prod multiplies halves pairwise (log2(n) complex multiplies).
- Every matrix product (linalg.py's ``_gemm``: mm, bmm, matmul, mv, dot, addmm, baddbmm,
  addbmm, einsum) is four real GEMMs of the parts, accumulated by the GEMM's own
  beta/alpha into the strided parts of the result, with no temporaries:
  re = Ar Br - Ai Bi, im = Ar Bi + Ai Br. (Gauss's three-multiplication trick would save a
  GEMM but needs three temporaries and two extra passes, and loses accuracy in im.)
"""
import builtins

from . import alloc
from . import pointwise as pw
from . import reduction
from .complex_views import as_real, part


def unsupported_reduction(kernel, dtype):
    """PyTorch's error for a reduction it does not run on complex ``dtype``."""
    if kernel in ("argmax", "argmin"):
        return RuntimeError(f"{kernel}(): does not support complex input")
    names = {"amax": "max_values_cpu", "amin": "min_values_cpu", "aminmax": "aminmax_cpu"}
    return NotImplementedError(f'"{names.get(kernel, kernel + "_cpu")}" not implemented for '
                               f"'{dtype.scalar_name}'")


REDUCTIONS = ("sum", "nansum", "mean", "prod")


def reduce(op, kernel, x, dims, keepdim, result):
    """sum/mean/prod of complex ``x`` over ``dims`` into ``result`` (complex, or real:
    then the real parts, as PyTorch's cast)."""
    if kernel == "nansum":
        raise RuntimeError(f"{op} on CPU does not support complex inputs")
    dev = x._storage.device
    res = result if result.dtype is x.dtype else alloc.empty(result._shape, x.dtype, dev)
    if kernel == "prod":
        _prod(x, dims, res)
    else:
        reduction._launch(kernel, as_real(x), dims, keepdim, as_real(res))
    if res is not result:
        alloc.backend(dev).copy.copy(result, res, res._stride)
    return result


def _prod(x, dims, res):
    """The product over ``dims``: the reduced dims moved last and flattened to n, then n
    halved by multiplying the two halves (an odd last element multiplies the first)."""
    from . import views
    nd = x.dim()
    kept = [d for d in range(nd) if d not in dims]
    n = alloc.numel(tuple(x._shape[d] for d in dims))
    if n == 0:
        alloc.backend(x._storage.device).copy.fill(res, 1.0)
        return
    y = views.reshape(views.permute(x, *(kept + list(dims))),
                      *(tuple(x._shape[d] for d in kept) + (n,)))
    while n > 1:
        h = n // 2
        prod = pw.binary("prod", "mul", views.narrow(y, -1, 0, h), views.narrow(y, -1, h, h),
                         None, "default")
        if n % 2:
            first = views.narrow(prod, -1, 0, 1)
            pw.binary("prod", "mul", first, views.narrow(y, -1, 2 * h, 1), first, "default")
        y, n = prod, h
    y = views.reshape(y, *res._shape)
    alloc.backend(x._storage.device).copy.copy(res, y, y._stride)


def var(op, x, dims, keepdim, correction, out, take_sqrt, with_mean):
    """var/std (and the mean) of complex ``x``: var(z) = var(re) + var(im), real."""
    dev, rdt = x._storage.device, x.dtype.to_real()
    shape = reduction._out_shape(x, dims, keepdim)
    v = [alloc.empty(shape, rdt, dev) for _ in range(2)]
    for k in range(2):
        reduction._launch("var", part(x, k), dims, keepdim, v[k], None, correction, 0.0)
    res = reduction._target(op, out, shape, rdt, x)
    if take_sqrt:
        pw.unary(op, "sqrt", pw.binary(op, "add", v[0], v[1], None, "default", 1.0), res,
                 "same")
    else:
        pw.binary(op, "add", v[0], v[1], res, "default", 1.0)
    if not with_mean:
        return res
    mean = alloc.empty(shape, x.dtype, dev)
    reduction._launch("mean", as_real(x), dims, keepdim, as_real(mean))
    return res, mean


def logsumexp(x, dims, keepdim, out):
    """log(sum(exp(z))) over ``dims``, with the largest real part m (0 where infinite)
    taken out first: m + log(sum(exp(z - m)))."""
    dev, rdt = x._storage.device, x.dtype.to_real()
    m = alloc.empty(reduction._out_shape(x, dims, True), rdt, dev)
    reduction._launch("amax", part(x, 0), dims, True, m)
    m = pw.ternary("logsumexp", "where", pw.unary("logsumexp", "isfinite", m, None, "bool"),
                   m, 0.0, None, (pw._bool, rdt, rdt))
    e = pw.unary("logsumexp", "exp", pw.binary("logsumexp", "sub", x, m, None, "default", 1),
                 None, "same")
    s = reduce("logsumexp", "sum", e, dims, keepdim,
               alloc.empty(reduction._out_shape(x, dims, keepdim), x.dtype, dev))
    if not keepdim:
        from . import views
        m = views.reshape(m, *s._shape)
    r = pw.binary("logsumexp", "add", pw.unary("logsumexp", "log", s, None, "same"), m, None,
                  "default", 1)
    if out is None:
        return r
    target = reduction._target("logsumexp", out, r._shape, r.dtype, x)
    alloc.backend(dev).copy.copy(target, r, r._stride)
    return target


# ---- matrix products ---------------------------------------------------------------------

def gemm(res, a, b, c=None, beta=0, alpha=1):
    """res = beta * c + alpha * a @ b for complex tensors (linalg._gemm's contract)."""
    dev = res._storage.device
    beta, alpha = builtins.complex(beta), builtins.complex(alpha)
    if beta == 0 or c is None:
        beta = 0j
    if not res.numel():
        return res
    if beta.imag or alpha.imag:
        # complex scalars: the product alone, then scaled and added with complex ops
        prod = gemm(alloc.empty(res._shape, res.dtype, dev), a, b)
        if alpha != 1:
            prod = pw.binary("matmul", "mul", prod, alpha, None, "default")
        if beta != 0:
            prod = pw.binary("matmul", "add", prod, c, None, "default", beta)
        alloc.backend(dev).copy.copy(res, prod, pw.expand_strides(prod, res._shape))
        return res
    beta, alpha = beta.real, alpha.real
    if beta != 0:
        alloc.backend(dev).copy.copy(res, c, pw.expand_strides(c, res._shape))
    (ar, ai), (br, bi) = (part(a, 0), part(a, 1)), (part(b, 0), part(b, 1))
    rr, ri = part(res, 0), part(res, 1)
    _mm(rr, ar, br, beta, alpha)
    _mm(rr, ai, bi, 1.0, -alpha)
    _mm(ri, ar, bi, beta, alpha)
    _mm(ri, ai, br, 1.0, alpha)
    return res


def _mm(out, a, b, beta, alpha):
    """out = beta * out + alpha * a @ b, real, batch dims of a and b broadcast to out's
    (beta == 0: out is not read)."""
    batch = out._shape[:-2]
    alloc.backend(out._storage.device).linalg.matmul(
        out, a, pw.expand_strides(a, batch + a._shape[-2:]),
        b, pw.expand_strides(b, batch + b._shape[-2:]), beta, alpha)
