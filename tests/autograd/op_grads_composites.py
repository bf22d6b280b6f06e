"""Differentiable calls of the composite ops (the view scatters, fill) and lu_unpack for the
autograd tests (op_grads.CASES takes them in): (name, fn(T, *inputs), input shapes,
domain)."""
R = "real"

CASES = [
    ("diagonal_scatter", lambda T, a, b: T.diagonal_scatter(a, b, 1), [(3, 4), (3,)], R),
    ("select_scatter", lambda T, a, b: T.select_scatter(a, b, 1, -1), [(3, 4), (3,)], R),
    ("slice_scatter", lambda T, a, b: T.slice_scatter(a, b, 1, 0, 4, 2), [(3, 4), (3, 2)], R),
    ("as_strided_scatter", lambda T, a, b: T.as_strided_scatter(a, b, (2, 2), (3, 1)),
     [(3, 3), (2, 2)], R),
    ("fill", lambda T, a, v: T.fill(a, v), [(2, 3), ()], R),
    ("lu_unpack", lambda T, a: T.lu_unpack(*T.linalg.lu_factor(a))[1], [(3, 3)], R),
]
