"""Gradient cases of the complex ops (real inputs through complex intermediates to real
outputs, so that gradcheck's real finite differences see the whole chain), and of the real
ops' formulas on complex inputs (PyTorch's conjugate Wirtinger gradients, first and second
order)."""
R = "real"
P = "pos"


def _c(T, a):
    return T.view_as_complex(a)


def _r(T, z):
    return T.view_as_real(z)


def _unary(fn):
    return lambda T, a: _r(T, fn(T, _c(T, a)))


def _binary(fn):
    return lambda T, a, b: _r(T, fn(T, _c(T, a), _c(T, b)))


CASES = [
    ("view_as_complex", lambda T, a: T.view_as_real(T.view_as_complex(a)).flip(-1), [(3, 2)], R),
    ("real", lambda T, a: T.view_as_complex(a).real * 2, [(3, 4, 2)], R),
    ("imag", lambda T, a: T.view_as_complex(a).imag * 3, [(3, 4, 2)], R),
    # the ops of the "complex" section
    ("conj_physical", _unary(lambda T, z: T.conj_physical(z) * z.exp()), [(3, 2)], R),
    ("conj", _unary(lambda T, z: z.conj() * (z + 1)), [(3, 2)], R),
    ("angle", lambda T, a: _c(T, a).angle() * a[..., 0], [(4, 2)], R),
    ("angle_real", lambda T, a: T.angle(a) + a, [(4,)], R),
    ("polar", lambda T, a, b: _r(T, T.polar(a, b)), [(3,), (3,)], P),
    ("complex", lambda T, a, b: _r(T, T.complex(a, b) ** 2), [(3,), (3,)], R),
    # the real ops' formulas on complex inputs
    ("complex_mul", _binary(lambda T, z, w: z * w), [(3, 2), (3, 2)], R),
    ("complex_div", _binary(lambda T, z, w: z / w), [(2, 2), (2, 2)], R),
    ("complex_add_sub", _binary(lambda T, z, w: T.add(z, w, alpha=2 - 1j) - T.sub(w, z, alpha=1j)),
     [(3, 2), (3, 2)], R),
    ("complex_real_mixed", lambda T, a, b: _r(T, a[..., 0] * _c(T, b) + a[..., 1]),
     [(3, 2), (3, 2)], R),
    ("complex_exp_log", _unary(lambda T, z: z.exp() + z.log() + z.log1p() + z.expm1()),
     [(3, 2)], R),
    ("complex_exp2_log2", _unary(lambda T, z: z.exp2() + z.log2() + z.log10()), [(3, 2)], R),
    ("complex_sqrt", _unary(lambda T, z: z.sqrt() + z.rsqrt() + z.reciprocal() + z.square()),
     [(2, 2)], R),
    ("complex_trig", _unary(lambda T, z: z.sin() + z.cos() + z.tan()), [(3, 2)], R),
    ("complex_hyperbolic", _unary(lambda T, z: z.sinh() + z.cosh() + z.tanh() + z.sigmoid()),
     [(3, 2)], R),
    ("complex_abs_sgn", lambda T, a: _r(T, _c(T, a).sgn()) + _c(T, a).abs().unsqueeze(-1),
     [(3, 2)], R),
    ("complex_pow", _binary(lambda T, z, w: z ** w + z ** 2.5 + z ** (0.5 - 1j) + 2 ** w),
     [(2, 2), (2, 2)], R),
    ("complex_where_lerp", _binary(lambda T, z, w: T.where(z.real > 0, z, w) + T.lerp(z, w, 0.3)),
     [(4, 2), (4, 2)], R),
    ("complex_addcmul_addcdiv", lambda T, a, b, c: _r(T, T.addcmul(_c(T, a), _c(T, b), _c(T, c),
                                                                  value=2)
                                                        + T.addcdiv(_c(T, a), _c(T, b), _c(T, c),
                                                                    value=-0.5)),
     [(2, 2), (2, 2), (2, 2)], R),
    ("complex_reductions", lambda T, a: T.cat([_r(T, _c(T, a).sum(0)).flatten(),
                                               _r(T, _c(T, a).mean(1)).flatten(),
                                               _r(T, _c(T, a).prod(1)).flatten(),
                                               _r(T, _c(T, a).logsumexp(1)).flatten(),
                                               T.linalg.vector_norm(_c(T, a), dim=1),
                                               _c(T, a).norm(3, dim=0)]),
     [(2, 2, 2)], R),
    ("complex_mm", _binary(lambda T, z, w: z @ w + T.mm(z, w)), [(2, 3, 2), (3, 2, 2)], R),
    ("complex_matmul_vec", _binary(lambda T, z, w: T.matmul(z, w) + T.mv(z, w)),
     [(2, 3, 2), (3, 2)], R),
    ("complex_bmm", _binary(lambda T, z, w: T.bmm(z, w)), [(2, 1, 2, 2), (2, 2, 2, 2)], R),
    ("complex_dot", _binary(lambda T, z, w: T.dot(z, w) + T.vdot(z, w)), [(3, 2), (3, 2)], R),
    ("complex_outer", _binary(lambda T, z, w: T.outer(z, w)), [(3, 2), (2, 2)], R),
    ("complex_addmm", lambda T, a, b, c: _r(T, T.addmm(_c(T, c), _c(T, a), _c(T, b), beta=0.5 - 1j,
                                                       alpha=1j)),
     [(2, 1, 2), (1, 2, 2), (2, 2, 2)], R),
    ("complex_addmv", lambda T, a, b, c: _r(T, T.addmv(_c(T, c), _c(T, a), _c(T, b), beta=2j,
                                                       alpha=1 - 1j)),
     [(2, 3, 2), (3, 2), (2, 2)], R),
    ("complex_baddbmm", lambda T, a, b, c: _r(T, T.baddbmm(_c(T, c), _c(T, a), _c(T, b), beta=2j,
                                                           alpha=1 - 1j)
                                                 + T.addbmm(_c(T, c)[0], _c(T, a), _c(T, b),
                                                            alpha=1j)),
     [(2, 1, 2, 2), (2, 2, 1, 2), (2, 1, 1, 2)], R),
    ("complex_einsum", _binary(lambda T, z, w: T.einsum("ij,jk->ki", z, w)
                               + T.tensordot(z, w, 1).mT),
     [(2, 3, 2), (3, 2, 2)], R),
    ("complex_kron_vecdot", lambda T, a, b: T.cat([_r(T, T.kron(_c(T, a), _c(T, b))).flatten(),
                                                   _r(T, T.linalg.vecdot(_c(T, a), _c(T, b)))
                                                   .flatten()]),
     [(1, 2, 2), (2, 2, 2)], R),
]
