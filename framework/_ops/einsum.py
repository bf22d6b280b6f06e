"""einsum: Einstein summation over subscripted operands.

The equation is parsed (with ``...`` for broadcast dims and an implicit output of the
subscripts that appear once, sorted), repeated subscripts within an operand become a
diagonal view, subscripts used by one operand only and absent from the output are summed
right away, and the operands are then contracted left to right, each pair as one batched
GEMM (shared kept subscripts are the batch, shared dropped ones the K dim).
"""
import operator
import string

from .. import _dtype
from .._dtype import promote_types
from .._tensor import Tensor
from . import alloc, args, views
from .linalg import _gemm, _no_bool
from .linalg_compose import sum_last
from .pointwise import convert, type_name

_LETTERS = set(string.ascii_letters)
_ELL = "."   # stands for one broadcast dim of the ellipsis, named (".", i)


def _parse(equation, operands):
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) > len(operands):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the "
                           "equation")
    if len(terms) < len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the "
                           "equation")
    pos = 0
    labels = []      # per operand: list of labels, ellipsis dims as (".", i) from the right
    ell_dims = 0
    for i, (term, x) in enumerate(zip(terms, operands)):
        subs = _subscripts(term, pos, i)
        pos += len(term) + 1
        n_ell = x.dim() - (len(subs) - 1) if "..." in subs else 0
        if "..." not in subs and len(subs) != x.dim():
            raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                               f"({len(subs)}) does not match the number of dimensions "
                               f"({x.dim()}) for operand {i} and no ellipsis was given")
        if n_ell < 0:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                               f"({len(subs) - 1}) is more than the number of dimensions "
                               f"({x.dim()}) for operand {i}")
        ell_dims = max(ell_dims, n_ell)
        out = []
        for s in subs:
            out.extend([(_ELL, n_ell - j) for j in range(n_ell)] if s == "..." else [s])
        labels.append(out)
    ell = [(_ELL, j) for j in range(ell_dims, 0, -1)]
    if arrow:
        subs = _subscripts(rhs, len(lhs) + 2, None)
        seen = set()
        for s in subs:
            if s == "...":
                continue
            if s in seen:
                raise RuntimeError(f"einsum(): output subscript {s} appears more than once in "
                                   f"the output")
            seen.add(s)
            if not any(s in lab for lab in labels):
                raise RuntimeError(f"einsum(): output subscript {s} does not appear in the "
                                   f"equation for any input operand")
        output = []
        for s in subs:
            output.extend(ell if s == "..." else [s])
    else:
        counts = {}
        for lab in labels:
            for s in lab:
                if s[0] != _ELL:
                    counts[s] = counts.get(s, 0) + 1
        output = ell + sorted((s for s, c in counts.items() if c == 1),
                              key=lambda c: (c.islower(), c))
    return labels, output


def explicit_equation(equation, operands):
    """``equation`` with its ellipsis dims as letters and its output written out
    ("...ij,...jk" -> "aij,ajk->aik"): the form einsum's backward formula takes."""
    labels, output = _parse(equation, operands)
    used = {s for lab in labels for s in lab if not isinstance(s, tuple)}
    free = (c for c in string.ascii_letters if c not in used)
    names = {}
    for s in [s for lab in labels for s in lab] + list(output):
        if isinstance(s, tuple) and s not in names:
            names[s] = next(free)
    name = names.get
    return (",".join("".join(name(s, s) for s in lab) for lab in labels) + "->"
            + "".join(name(s, s) for s in output))


def _subscripts(term, start, operand):
    """The subscripts of one term, with "..." as one item."""
    subs, i = [], 0
    while i < len(term):
        c = term[i]
        if c == ".":
            if term[i:i + 3] != "..." or "..." in subs:
                if operand is None:
                    raise RuntimeError("einsum(): found '.' for output but it is not part of "
                                       "any ellipsis")
                raise RuntimeError(f"einsum(): found '.' for operand {operand} that is not "
                                   f"part of any ellipsis")
            subs.append("...")
            i += 3
            continue
        if c not in _LETTERS:
            raise RuntimeError(f"einsum(): invalid subscript given at index {start + i} in the "
                               f"equation string, subscripts must be in [a-zA-Z]")
        subs.append(c)
        i += 1
    return subs


def _diagonal(x, lab, i):
    """Merges repeated labels of one operand into one dim (a diagonal view)."""
    while True:
        dup = next((s for s in lab if lab.count(s) > 1), None)
        if dup is None:
            return x, lab
        d0 = lab.index(dup)
        d1 = lab.index(dup, d0 + 1)
        if x._shape[d0] != x._shape[d1]:
            raise RuntimeError(f"einsum(): subscript {dup} is repeated for operand {i} but the "
                               f"sizes don't match, {x._shape[d1]} != {x._shape[d0]}")
        x = views.movedim(views.diagonal(x, 0, d0, d1), -1, d0)
        lab = lab[:d1] + lab[d1 + 1:]


def install_sublists():
    """Makes ``framework.einsum`` (and its op-table entry) also take the sublist form,
    ``einsum(op1, sublist1, op2, sublist2, ..., [sublist_out])``: converted to an equation
    before the op records autograd, which then sees the operands as the tensors they are."""
    import framework
    from .dispatcher import ops
    op = ops()["einsum"]
    einsum_op = op.fn

    def einsum(*args):
        if args and isinstance(args[0], Tensor):
            equation, operands = _from_sublists(args)
            return einsum_op(equation, *operands)
        return einsum_op(*args)
    einsum.__doc__ = einsum_op.__doc__
    einsum.__wrapped__ = einsum_op
    einsum.__module__, einsum.__qualname__ = "framework", "einsum"   # pickle finds it
    op.fn = framework.einsum = einsum


def _sublist(sub):
    """One sublist as equation text: 0-25 are A-Z, 26-51 a-z, Ellipsis is "..."."""
    out = []
    for n in sub:
        if n is Ellipsis:
            out.append("...")
            continue
        n = operator.index(n)
        if not 0 <= n < 52:
            raise ValueError("einsum(): subscript in subscript list is not within the valid "
                             "range [0, 52)")
        out.append(chr(ord("A") + n) if n < 26 else chr(ord("a") + n - 26))
    return "".join(out)


def _from_sublists(args):
    """The equation and operands of ``einsum``'s sublist form."""
    n = len(args) // 2 * 2      # an odd count ends with the output sublist
    equation = ",".join(_sublist(sub) for sub in args[1:n:2])
    operands = args[0:n:2]
    if len(args) > n:
        equation += "->" + _sublist(args[-1])
    return equation, operands


def _sum_out(x, lab, drop, dtype=None):
    """Sums the dims of ``x`` whose labels are in ``drop``."""
    dims = [d for d, s in enumerate(lab) if s in drop]
    if not dims:
        return x, lab
    keep = [d for d in range(len(lab)) if d not in dims]
    x = sum_last(views.permute(x, *(keep + dims)), len(dims), dtype)
    return x, [lab[d] for d in keep]


def einsum(equation, *operands):
    """Sums the product of the elements of ``operands`` along the dims given by the
    subscripts of ``equation`` (PyTorch's torch.einsum, with ``...`` and implicit output)."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        # through the public op, whose autograd wrapper sees tensors, not one list
        import framework
        return framework.einsum(equation, *operands[0])
    for i, x in enumerate(operands):
        if not isinstance(x, Tensor):
            raise TypeError(f"einsum(): argument 'tensors' must be tuple of Tensors, not "
                            f"{type(x).__name__}")
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    args.same_device("einsum", *operands)
    labels, output = _parse(equation, operands)
    dtype = operands[0].dtype
    sizes = {}
    xs = []
    for i, (x, lab) in enumerate(zip(operands, labels)):
        x, lab = _diagonal(x, lab, i)
        for d, s in enumerate(lab):
            n = x._shape[d]
            prev = sizes.get(s, 1)
            if n != 1 and prev != 1 and n != prev:
                name = "..." if s[0] == _ELL else s
                raise RuntimeError(f"einsum(): subscript {name} has size {n} for operand {i} "
                                   f"which does not broadcast with previously seen size {prev}")
            sizes[s] = max(n, prev) if prev != 1 else n
        xs.append((x, lab))
    if len(xs) == 1:
        x, lab = xs[0]
        drop = [s for s in lab if s not in output]
        # a plain sum promotes integers to int64, as PyTorch's sum does
        sdt = _dtype.int64 if dtype.category < 2 and drop else None
        if drop and dtype.category == 0:
            _no_bool("sum", dtype)
        x, lab = _sum_out(x, lab, drop, sdt)
        return views.permute(x, *[lab.index(s) for s in output])
    x, lab = xs[0]
    for j in range(1, len(xs)):
        y, ly = xs[j]
        later = set(output)
        for _, lz in xs[j + 1:]:
            later.update(lz)
        x, lab = _contract(x, lab, y, ly, later)
    x, lab = _sum_out(x, lab, [s for s in lab if s not in output])
    res = views.permute(x, *[lab.index(s) for s in output])
    shape = tuple(sizes[s] if s in sizes else 1 for s in output)
    return res if res._shape == shape else views.expand(res, *shape)


def _contract(x, lx, y, ly, later):
    """x (labels lx) times y (labels ly), summing the shared labels that are not in
    ``later``; returns the product and its labels (batch, x-only, y-only)."""
    # labels only one side has and nobody needs later are summed now
    x, lx = _sum_out(x, lx, [s for s in lx if s not in ly and s not in later])
    y, ly = _sum_out(y, ly, [s for s in ly if s not in lx and s not in later])
    shared = [s for s in lx if s in ly]
    contracted = [s for s in shared if s not in later]
    batch = [s for s in shared if s in later]
    # a contracted dim of size 1 on one side only broadcasts: sum the other side over it
    for s in list(contracted):
        nx, ny = x._shape[lx.index(s)], y._shape[ly.index(s)]
        if nx != ny:
            if nx == 1:
                y, ly = _sum_out(y, ly, [s])
                x, lx = views.squeeze(x, lx.index(s)), [t for t in lx if t != s]
            else:
                x, lx = _sum_out(x, lx, [s])
                y, ly = views.squeeze(y, ly.index(s)), [t for t in ly if t != s]
            contracted.remove(s)
    if x.dtype is not y.dtype:
        # as PyTorch: a pair with a real contraction is one bmm, which needs one dtype;
        # without one it is a broadcast multiply, which promotes
        if any(x._shape[lx.index(s)] != 1 for s in contracted):
            raise RuntimeError(f"expected scalar type {type_name(x.dtype)} but found "
                               f"{type_name(y.dtype)}")
        dt = promote_types(x.dtype, y.dtype)
        x = x if x.dtype is dt else convert(x, dt, x._storage.device)
        y = y if y.dtype is dt else convert(y, dt, y._storage.device)
    _no_bool("bmm", x.dtype)
    xo = [s for s in lx if s not in ly]
    yo = [s for s in ly if s not in lx]
    xp = views.permute(x, *[lx.index(s) for s in batch + xo + contracted])
    yp = views.permute(y, *[ly.index(s) for s in batch + contracted + yo])
    nb = len(batch)
    m = alloc.numel(xp._shape[nb:nb + len(xo)])
    k = alloc.numel(xp._shape[nb + len(xo):])
    n = alloc.numel(yp._shape[nb + len(contracted):])
    a = views.reshape(xp, xp._shape[:nb] + (m, k))
    b = views.reshape(yp, yp._shape[:nb] + (k, n))
    bshape = tuple(max(p, q) for p, q in zip(a._shape[:nb], b._shape[:nb]))
    res = _gemm(alloc.empty(bshape + (m, n), x.dtype, x._storage.device), a, b)
    shape = bshape + xp._shape[nb:nb + len(xo)] + yp._shape[nb + len(contracted):]
    return views.reshape(res, shape), batch + xo + yo
