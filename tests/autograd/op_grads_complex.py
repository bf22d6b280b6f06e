"""Gradient cases of the complex ops (real inputs through complex intermediates to real
outputs, so that gradcheck's real finite differences see the whole chain)."""
R = "real"

CASES = [
    ("view_as_complex", lambda T, a: T.view_as_real(T.view_as_complex(a)).flip(-1), [(3, 2)], R),
    ("real", lambda T, a: T.view_as_complex(a).real * 2, [(3, 4, 2)], R),
    ("imag", lambda T, a: T.view_as_complex(a).imag * 3, [(3, 4, 2)], R),
]
