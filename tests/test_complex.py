"""Complex arithmetic, reductions, matrix products, printing and gradients against
PyTorch, on cpu and cuda (complex64 and complex128; the ops run on real views, so every
case exercises the real kernels of the device)."""
import math
import warnings

import numpy as np
import pytest

import framework as fw

torch = pytest.importorskip("torch")

CDTYPES = ["complex64", "complex128"]
TOL = {"complex64": (2e-5, 2e-5), "complex128": (1e-11, 1e-11), "float32": (2e-5, 2e-5),
       "float64": (1e-11, 1e-11)}


def _values(shape, seed, low=-2.0, high=2.0):
    rng = np.random.default_rng(seed)
    return rng.uniform(low, high, shape) + 1j * rng.uniform(low, high, shape)


def pair(shape, dtype, device, seed=0, noncontig=False, low=-2.0, high=2.0):
    """The same complex values as a framework tensor (on ``device``, a strided view when
    ``noncontig``) and a torch tensor."""
    arr = _values(shape, seed, low, high).astype(dtype)
    if noncontig and shape:
        big = np.zeros(tuple(shape[:-1]) + (shape[-1] * 2,), arr.dtype)
        big[..., ::2] = arr
        t = fw.tensor(big, device=device)[..., ::2]
        assert not t.is_contiguous()
    else:
        t = fw.tensor(arr, device=device)
    return t, torch.tensor(arr)


def check(got, want, tol=None):
    """``got`` (framework) equals ``want`` (torch) in shape, dtype and values."""
    assert isinstance(got, fw.Tensor), type(got)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], \
        (got.dtype, want.dtype)
    a, b = got.detach().cpu().numpy(), want.detach().resolve_conj().resolve_neg().numpy()
    assert a.shape == b.shape, (a.shape, b.shape)
    if a.dtype.kind in "fc":
        r, t = tol or TOL[str(a.dtype)]
        np.testing.assert_allclose(a, b, rtol=r, atol=t, equal_nan=True)
    else:
        np.testing.assert_array_equal(a, b)


def same_error(fn):
    """fn(fw) raises what fn(torch) raises: the same exception type and message."""
    with pytest.raises(Exception) as theirs:
        fn(torch)
    with pytest.raises(type(theirs.value)) as ours:
        fn(fw)
    assert str(ours.value) == str(theirs.value).replace("torch.", "framework.")


# ---- pointwise -----------------------------------------------------------------------------

UNARY = ["neg", "reciprocal", "square", "exp", "exp2", "expm1", "log", "log2", "log10",
         "log1p", "sqrt", "rsqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh", "sigmoid",
         "abs", "angle", "sgn", "conj", "conj_physical", "isnan", "isinf", "isfinite",
         "isreal", "logical_not", "nan_to_num", "positive", "resolve_conj", "resolve_neg"]


@pytest.mark.parametrize("op", UNARY)
@pytest.mark.parametrize("dtype", CDTYPES)
def test_unary(op, dtype, device):
    z, t = pair((3, 5), dtype, device, noncontig=True)
    check(getattr(fw, op)(z), getattr(torch, op)(t))
    check(getattr(z, op)(), getattr(t, op)())


@pytest.mark.parametrize("op", ["exp", "tanh", "tan", "sqrt", "log", "sigmoid", "expm1",
                                "log1p"])
def test_unary_wide_range(op, device):
    """Large and tiny arguments (overflow-free formulas: Kahan's tanh, the cancellation-free
    sqrt, expm1/log1p for small z)."""
    vals = [30 + 0.5j, -30 - 1j, 1e-8 + 1e-9j, -1e-7 + 2e-8j, 0.5 + 40j, -4 - 0.01j, 0j,
            3 + 0j, -3 + 0j, 1e15 + 1e15j, -2e-3 + 1e4j]
    if op in ("exp", "tan", "sigmoid", "expm1"):
        vals = [v for v in vals if abs(v.real) < 50 and abs(v.imag) < 50]   # overflow
    arr = np.array(vals, np.complex128)
    check(getattr(fw, op)(fw.tensor(arr, device=device)), getattr(torch, op)(torch.tensor(arr)),
          (1e-9, 1e-300))


def test_special_values(device):
    inf, nan = math.inf, math.nan
    a = np.array([complex(inf, 1), complex(1, 2), complex(nan, 0), 1 + 1j, complex(-inf, 0)])
    b = np.array([2 + 0j, 0j, 1j, 0j, 1j])
    za, zb, ta, tb = (fw.tensor(a, device=device), fw.tensor(b, device=device),
                      torch.tensor(a), torch.tensor(b))
    check(za * zb, ta * tb)
    check(za / zb, ta / tb)
    check(za * 2, ta * 2)
    check(za / 2, ta / 2)
    check(za + 1, ta + 1)
    check(za.isnan(), ta.isnan())
    check(za.isinf(), ta.isinf())
    check(za.isfinite(), ta.isfinite())
    e = np.array([complex(800, 0), complex(-inf, 0), complex(inf, 0)])
    check(fw.tensor(e, device=device).exp(), torch.tensor(e).exp())
    check(fw.tensor([0j, 3 + 4j], device=device).sgn(), torch.tensor([0j, 3 + 4j]).sgn())


BINARY = ["add", "sub", "mul", "div", "eq", "ne", "pow", "true_divide", "multiply",
          "subtract", "logical_and", "logical_or", "logical_xor"]


@pytest.mark.parametrize("op", BINARY)
@pytest.mark.parametrize("dtype", CDTYPES)
def test_binary_broadcast(op, dtype, device):
    a, ta = pair((3, 1), dtype, device, seed=1)
    b, tb = pair((4,), dtype, device, seed=2, noncontig=True)
    check(getattr(fw, op)(a, b), getattr(torch, op)(ta, tb))
    check(getattr(fw, op)(b, a), getattr(torch, op)(tb, ta))


@pytest.mark.parametrize("other", [2, 2.5, -1.5j, 0.5 + 2j, True, "real", "int", "real0d",
                                   "c128_0d"])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "pow", "eq", "rsub"])
def test_mixed_operands(op, other, device):
    """Python numbers (real and complex), real tensors and 0-d tensors with complex64, as
    PyTorch promotes them."""
    z, t = pair((2, 3), "complex64", device, seed=3)
    if other == "real":
        o, to = fw.tensor([1.5, -2.0, 0.5], device=device), torch.tensor([1.5, -2.0, 0.5])
    elif other == "int":
        o, to = fw.tensor([1, -2, 3], device=device), torch.tensor([1, -2, 3])
    elif other == "real0d":
        o, to = fw.tensor(2.5, dtype=fw.float64), torch.tensor(2.5, dtype=torch.float64)
    elif other == "c128_0d":
        o, to = fw.tensor(1 - 1j, device=device), torch.tensor(1 - 1j)
    else:
        o, to = other, other
    if op in ("sub", "rsub") and isinstance(o, bool):
        return      # both refuse a bool operand of a subtraction
    check(getattr(fw, op)(z, o), getattr(torch, op)(t, to))
    if op in ("add", "mul", "sub", "div", "pow") and not isinstance(o, fw.Tensor):
        py = {"add": "__radd__", "mul": "__rmul__", "sub": "__rsub__", "div": "__rtruediv__",
              "pow": "__rpow__"}[op]
        check(getattr(z, py)(o), getattr(t, py)(to))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_real_tensor_with_complex_scalar(dtype, device):
    """A complex Python scalar makes a complex result of the tensor's precision."""
    arr = np.array([1, -2, 3]).astype(dtype)
    x, t = fw.tensor(arr, device=device), torch.tensor(arr)
    for s in (1j, 0.5 - 2j):
        check(x * s, t * s)
        check(x + s, t + s)
        check(s / (x + 10), s / (t + 10))
        check(x ** s, t ** s)
    assert fw.result_type(x, 1j) == getattr(fw, str(torch.result_type(t, 1j)).split(".")[1])


@pytest.mark.parametrize("alpha", [2, -0.5, 1j, 2 - 3j])
def test_alpha(alpha, device):
    a, ta = pair((4,), "complex128", device, seed=4)
    b, tb = pair((4,), "complex128", device, seed=5)
    check(fw.add(a, b, alpha=alpha), torch.add(ta, tb, alpha=alpha))
    check(fw.sub(a, b, alpha=alpha), torch.sub(ta, tb, alpha=alpha))
    check(fw.rsub(a, b, alpha=alpha), torch.rsub(ta, tb, alpha=alpha))
    if isinstance(alpha, complex):
        same_error(lambda T: T.add(T.ones(2), T.ones(2), alpha=alpha))


@pytest.mark.parametrize("w", [0, 1, 2, 3, -2, 0.5, -0.5, -1, 2.5, -1.25, 1j, 0.5 - 0.5j])
def test_pow_scalar(w, device):
    z, t = pair((6,), "complex128", device, seed=6)
    check(z ** w, t ** w)
    check(fw.pow(z, w), torch.pow(t, w))


def test_pow_tensor_and_zero_base(device):
    z, t = pair((5,), "complex128", device, seed=7)
    w, tw = pair((5,), "complex128", device, seed=8)
    check(z ** w, t ** tw)
    zero = np.array([0j, 0j])
    e = np.array([1 + 1j, 2 + 0j])
    check(fw.tensor(zero, device=device) ** fw.tensor(e, device=device),
          torch.tensor(zero) ** torch.tensor(e))
    check(fw.tensor(zero, device=device) ** 2.5, torch.tensor(zero) ** 2.5)
    check(2 ** z, 2 ** t)


def test_inplace_and_out(device):
    z, t = pair((3, 4), "complex64", device, seed=9)
    w, tw = pair((3, 4), "complex64", device, seed=10)
    for op, args in (("mul_", (w,)), ("div_", (w,)), ("add_", (w,)), ("sub_", (1j,)),
                     ("pow_", (2,)), ("exp_", ()), ("sqrt_", ()), ("neg_", ()),
                     ("conj_physical_", ()), ("sgn_", ())):
        targs = tuple(tw if a is w else a for a in args)
        zz, tt = z.clone(), t.clone()
        r = getattr(zz, op)(*args)
        assert r is zz
        check(zz, getattr(tt, op)(*targs))
    zz, tt = z.clone(), t.clone()
    zz.mul_(zz)                     # the input aliases the output
    check(zz, tt.mul_(tt))
    zz, tt = z.clone(), t.clone()
    fw.add(zz[1:], zz[1:].conj(), out=zz[1:])       # out= is (a view of) an input
    torch.add(tt[1:], tt[1:].conj(), out=tt[1:])
    check(zz, tt)
    out = fw.empty(3, 4, dtype=fw.complex128, device=device)
    fw.div(z, w, out=out)
    check(out, torch.div(t, tw, out=torch.empty(3, 4, dtype=torch.complex128)), TOL["float32"])
    real_out = fw.empty(3, 4, device=device)
    fw.abs(z, out=real_out)
    check(real_out, torch.abs(t))
    same_error(lambda T: T.ones(2).mul_(T.tensor([1j, 2j])))
    same_error(lambda T: T.tensor([1j, 2j]).abs_())
    same_error(lambda T: T.mul(T.tensor([1j]), 2, out=T.empty(1)))


def test_zero_dim_and_empty(device):
    z, t = pair((), "complex128", device, seed=11)
    check(z * 2j, t * 2j)
    check(z.exp(), t.exp())
    check(z / z, t / t)
    e, te = fw.zeros(0, 3, dtype=fw.complex64, device=device), torch.zeros(0, 3,
                                                                              dtype=torch.complex64)
    for fn in (lambda T, x: x * x, lambda T, x: x.exp(), lambda T, x: x.abs(),
               lambda T, x: x.sum(0), lambda T, x: x.mean(1), lambda T, x: x.prod(0),
               lambda T, x: x @ x.mT):
        check(fn(fw, e), fn(torch, te))


def test_where_lerp_addcmul_addcdiv(device):
    a, ta = pair((3, 4), "complex128", device, seed=12)
    b, tb = pair((4,), "complex128", device, seed=13)
    c, tc = pair((3, 1), "complex128", device, seed=14)
    cond = a.real > 0
    check(fw.where(cond, a, b), torch.where(ta.real > 0, ta, tb))
    check(fw.where(cond, a, 0.5j), torch.where(ta.real > 0, ta, 0.5j))
    check(fw.where(cond, a, b.real), torch.where(ta.real > 0, ta, tb.real))
    check(fw.lerp(a, b.expand(3, 4), 0.3), torch.lerp(ta, tb.expand(3, 4), 0.3))
    check(fw.lerp(a, b.expand(3, 4), c.expand(3, 4)), torch.lerp(ta, tb.expand(3, 4),
                                                                  tc.expand(3, 4)))
    check(fw.lerp(a, b.expand(3, 4), 0.5 + 1j), torch.lerp(ta, tb.expand(3, 4), 0.5 + 1j))
    check(fw.addcmul(a, b, c, value=2), torch.addcmul(ta, tb, tc, value=2))
    check(fw.addcmul(a, b, c, value=1j), torch.addcmul(ta, tb, tc, value=1j))
    check(fw.addcdiv(a, b, c, value=-0.5), torch.addcdiv(ta, tb, tc, value=-0.5))


def test_isclose_equal(device):
    z, t = pair((8,), "complex128", device, seed=15)
    w, tw = z + 1e-7j, t + 1e-7j
    w[2] = math.nan
    tw[2] = math.nan
    check(fw.isclose(z, w), torch.isclose(t, tw))
    check(fw.isclose(w, w, equal_nan=True), torch.isclose(tw, tw, equal_nan=True))
    assert fw.allclose(z, z + 1e-9) and not fw.allclose(z, w)
    assert fw.equal(z, z.clone()) and not fw.equal(z, z.conj())


def test_complex_section_ops(device):
    r, tr = fw.tensor([1.0, 2.5, 0.0], device=device), torch.tensor([1.0, 2.5, 0.0])
    a, ta = fw.tensor([0.5, -2.0, 1.0], device=device), torch.tensor([0.5, -2.0, 1.0])
    check(fw.polar(r, a), torch.polar(tr, ta))
    check(fw.complex(r, a), torch.complex(tr, ta))
    check(fw.complex(r.double(), a.double().unsqueeze(1)),
          torch.complex(tr.double(), ta.double().unsqueeze(1)))
    x = np.array([-1.0, 0.0, -0.0, 2.0, math.nan, -math.inf])
    check(fw.angle(fw.tensor(x, device=device)), torch.angle(torch.tensor(x)))
    check(fw.angle(fw.tensor([-3, 0, 2], device=device)), torch.angle(torch.tensor([-3, 0, 2])))
    z = fw.tensor([1 + 0j, 2j, complex(math.nan, 0)], device=device)
    check(fw.isreal(z), torch.isreal(torch.tensor([1 + 0j, 2j, complex(math.nan, 0)])))
    check(fw.isreal(r), torch.isreal(tr))
    assert fw.conj(r) is r and r.conj() is r and r.resolve_conj() is r
    assert not z.is_conj() and not fw.is_neg(z) and fw.resolve_neg(z) is z
    same_error(lambda T: T.polar(T.ones(1), T.ones(1, dtype=T.float64)))
    same_error(lambda T: T.complex(T.ones(1, dtype=T.int64), T.ones(1, dtype=T.int64)))


UNSUPPORTED = {
    "lt": lambda T, z: z < z, "gt": lambda T, z: T.gt(z, 1),
    "maximum": lambda T, z: T.maximum(z, z),
    "minimum": lambda T, z: T.minimum(z, z), "clamp": lambda T, z: z.clamp(0, 1),
    "floor": lambda T, z: z.floor(), "ceil": lambda T, z: z.ceil(), "trunc": lambda T, z: z.trunc(),
    "round": lambda T, z: z.round(), "relu": lambda T, z: T.relu(z), "sign": lambda T, z: z.sign(),
    "div_trunc": lambda T, z: T.div(z, z, rounding_mode="trunc"),
    "div_floor": lambda T, z: T.div(z, z, rounding_mode="floor"),
    "floor_divide": lambda T, z: z // z, "remainder": lambda T, z: z % z,
    "fmod": lambda T, z: T.fmod(z, z), "atan2": lambda T, z: T.atan2(z, z),
    "erf": lambda T, z: T.erf(z), "signbit": lambda T, z: z.signbit(),
    "isposinf": lambda T, z: z.isposinf(), "hypot": lambda T, z: T.hypot(z, z),
    "deg2rad": lambda T, z: z.deg2rad(), "heaviside": lambda T, z: T.heaviside(z, z),
    "bitwise_and": lambda T, z: z & z, "invert": lambda T, z: ~z, "logit": lambda T, z: z.logit(),
    "amax": lambda T, z: z.amax(), "max": lambda T, z: z.max(), "max_dim": lambda T, z: z.max(0),
    "argmax": lambda T, z: z.argmax(), "nansum": lambda T, z: z.nansum(),
    "frac": lambda T, z: z.frac(), "fmax": lambda T, z: T.fmax(z, z),
}


@pytest.mark.parametrize("name", sorted(UNSUPPORTED))
def test_unsupported_raise_as_torch(name):
    z = np.array([1 + 2j, 3 - 1j], np.complex64)
    fn = UNSUPPORTED[name]
    with pytest.raises(Exception) as theirs:
        fn(torch, torch.tensor(z))
    with pytest.raises(type(theirs.value)) as ours:
        fn(fw, fw.tensor(z))
    assert str(ours.value) == str(theirs.value)


def test_conversions():
    assert float(fw.tensor(1.5 + 0j)) == 1.5 and int(fw.tensor(2 + 0j)) == 2
    assert complex(fw.tensor(1 - 2j)) == 1 - 2j and fw.tensor(1 - 2j).item() == 1 - 2j
    same_error(lambda T: float(T.tensor(1 + 1j)))
    same_error(lambda T: int(T.tensor(1 + 1j)))


# ---- reductions ----------------------------------------------------------------------------

REDUCTIONS = [
    lambda T, z: z.sum(), lambda T, z: z.sum(1), lambda T, z: z.sum((0, 2), keepdim=True),
    lambda T, z: z.sum(-1, dtype=T.complex128), lambda T, z: z.mean(), lambda T, z: z.mean(0),
    lambda T, z: z.mean((1, 2), keepdim=True), lambda T, z: z.prod(), lambda T, z: z.prod(1),
    lambda T, z: z.prod(2, keepdim=True), lambda T, z: z.var(1), lambda T, z: z.std(),
    lambda T, z: T.var_mean(z, 2, keepdim=True)[1], lambda T, z: T.std_mean(z, 0)[0],
    lambda T, z: z.norm(), lambda T, z: z.norm(1, dim=1), lambda T, z: z.norm(3, dim=(0, 2)),
    lambda T, z: T.linalg.vector_norm(z, math.inf, 2), lambda T, z: T.linalg.vector_norm(z, 0),
    lambda T, z: T.linalg.vector_norm(z, dtype=T.complex128), lambda T, z: T.linalg.norm(z),
    lambda T, z: T.linalg.matrix_norm(z), lambda T, z: T.linalg.matrix_norm(z, 1),
    lambda T, z: z.logsumexp(1), lambda T, z: z.any(1), lambda T, z: z.all(),
    lambda T, z: z.count_nonzero(0), lambda T, z: z.sum_to_size(1, 4, 1),
]


@pytest.mark.parametrize("k", range(len(REDUCTIONS)))
@pytest.mark.parametrize("dtype", CDTYPES)
def test_reductions(k, dtype, device):
    z, t = pair((3, 4, 5), dtype, device, seed=16, noncontig=True, low=-1, high=1)
    z[0, 1, 2] = 0
    t[0, 1, 2] = 0
    tol = (1e-4, 1e-5) if dtype == "complex64" else None
    check(REDUCTIONS[k](fw, z), REDUCTIONS[k](torch, t), tol)


def test_reductions_dtype_and_errors(device):
    z, t = pair((2, 3), "complex64", device, seed=17)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(z.sum(dtype=fw.float32), t.sum(dtype=torch.float32))
        check(z.mean(dtype=fw.float32), t.mean(dtype=torch.float32))
    check(fw.tensor([1, 2], device=device).mean(dtype=fw.complex64),
          torch.tensor([1, 2]).mean(dtype=torch.complex64))
    out = fw.empty(3, dtype=fw.complex64, device=device)
    fw.sum(z, 0, out=out)
    check(out, t.sum(0))
    same_error(lambda T: T.linalg.vector_norm(T.ones(2, dtype=T.complex64), dtype=T.float64))


# ---- matrix products -----------------------------------------------------------------------

PRODUCTS = [
    ("mm", lambda T, a, b: T.mm(a, b)),
    ("mm_t", lambda T, a, b: T.mm(b.mT, a.mT)),
    ("matmul", lambda T, a, b: a @ b),
    ("matmul_batched", lambda T, a, b: T.matmul(a.expand(2, 3, 4), b)),
    ("matmul_1d", lambda T, a, b: T.matmul(a[0], b)),
    ("matmul_2d_1d", lambda T, a, b: T.matmul(a, b[:, 1])),
    ("bmm", lambda T, a, b: T.bmm(a.expand(2, 3, 4), b.expand(2, 4, 5))),
    ("mv", lambda T, a, b: T.mv(a, b[:, 0])),
    ("dot", lambda T, a, b: T.dot(a[1], b[:, 2])),
    ("vdot", lambda T, a, b: T.vdot(a[1], b[:, 2])),
    ("outer", lambda T, a, b: T.outer(a[0], b[1])),
    ("addmm", lambda T, a, b: T.addmm((a @ b)[0], a, b, beta=0.5, alpha=2)),
    ("addmm_complex_scalars", lambda T, a, b: T.addmm(a @ b, a, b, beta=1j, alpha=2 - 1j)),
    ("addmv", lambda T, a, b: T.addmv(a[:, 0], a, b[:, 0], beta=-1, alpha=0.5j)),
    ("baddbmm", lambda T, a, b: T.baddbmm((a @ b).expand(2, 3, 5), a.expand(2, 3, 4),
                                          b.expand(2, 4, 5), beta=2, alpha=1j)),
    ("addbmm", lambda T, a, b: T.addbmm(a @ b, a.expand(2, 3, 4), b.expand(2, 4, 5))),
    ("einsum", lambda T, a, b: T.einsum("ij,jk->ki", a, b)),
    ("tensordot", lambda T, a, b: T.tensordot(a, b, 1)),
    ("kron", lambda T, a, b: T.kron(a[:2, :2], b[:2, :2])),
    ("vecdot", lambda T, a, b: T.linalg.vecdot(a, b.mT[:3])),
    ("mH", lambda T, a, b: a.mH @ a),
    ("H", lambda T, a, b: a.H),
    ("adjoint", lambda T, a, b: T.adjoint(b)),
    ("trace", lambda T, a, b: T.trace(a)),
]


@pytest.mark.parametrize("name,fn", PRODUCTS, ids=[p[0] for p in PRODUCTS])
@pytest.mark.parametrize("dtype", CDTYPES)
def test_products(name, fn, dtype, device):
    a, ta = pair((3, 4), dtype, device, seed=18, noncontig=True)
    b, tb = pair((4, 5), dtype, device, seed=19)
    tol = (1e-4, 1e-4) if dtype == "complex64" else None
    check(fn(fw, a, b), fn(torch, ta, tb), tol)


def test_product_out_and_errors(device):
    a, ta = pair((3, 4), "complex64", device, seed=20)
    b, tb = pair((4, 2), "complex64", device, seed=21)
    out = fw.empty(3, 2, dtype=fw.complex64, device=device)
    fw.mm(a, b, out=out)
    check(out, ta @ tb, (1e-4, 1e-4))
    same_error(lambda T: T.mm(T.ones(2, 2, dtype=T.complex64), T.ones(2, 2)))
    same_error(lambda T: T.dot(T.ones(2, dtype=T.complex64), T.ones(2)))
    same_error(lambda T: T.addmm(T.ones(2, 2), T.ones(2, 2, dtype=T.complex64),
                                 T.ones(2, 2, dtype=T.complex64)))


# ---- printing ------------------------------------------------------------------------------

REPRS = [
    lambda T: T.tensor([1 + 2j, 3 + 0j]),
    lambda T: T.tensor([1.5 + 1j, -2.25 - 3j], dtype=T.complex128),
    lambda T: T.tensor(1 + 2j), lambda T: T.tensor(-0.5 - 0.25j, dtype=T.complex128),
    lambda T: T.tensor([[1 + 1j, 2], [3, 4j]]),
    lambda T: T.tensor([complex(math.nan, math.inf), complex(-0.0, -0.0), 1e-6 + 1e6j]),
    lambda T: T.zeros(0, 3, dtype=T.complex64), lambda T: T.zeros(0, dtype=T.complex128),
    lambda T: T.tensor(_values((40, 40), 1).astype(np.complex64)),
    lambda T: T.tensor(_values((2000,), 2) * 1e5),
    lambda T: T.tensor(_values((3, 4, 5), 3)),
]


@pytest.mark.parametrize("k", range(len(REPRS)))
def test_repr_matches_torch(k):
    assert repr(REPRS[k](fw)) == repr(REPRS[k](torch)).replace("torch.", "framework.")


def test_repr_cuda_and_grad(device):
    z = fw.tensor([1 + 2j, -3.5 + 0.25j], device=device, requires_grad=True)
    want = "tensor([ 1.0000+2.0000j, -3.5000+0.2500j]"
    if device != "cpu":
        want += ", device='cuda:0'"
    assert repr(z) == want + ", requires_grad=True)"
    assert repr(z * 2).endswith("grad_fn=<MulBackward0>)")


# ---- gradients -----------------------------------------------------------------------------

GRADS = [
    ("mul", lambda T, a, b: a * b), ("div", lambda T, a, b: a / b),
    ("add_alpha", lambda T, a, b: T.add(a, b, alpha=2 - 1j)),
    ("exp_log", lambda T, a, b: a.exp() + b.log()),
    ("sqrt_rsqrt", lambda T, a, b: a.sqrt() * b.rsqrt()),
    ("trig", lambda T, a, b: a.sin() + a.cos() * b.tan()),
    ("hyp", lambda T, a, b: a.sinh() - a.cosh() * b.tanh()),
    ("sigmoid_recip", lambda T, a, b: a.sigmoid() * b.reciprocal()),
    ("abs_angle_sgn", lambda T, a, b: a.abs() * b.angle() + a.sgn()),
    ("pow", lambda T, a, b: a ** b + a ** 2.5 + 2 ** b + a ** (0.5 - 1j)),
    ("conj", lambda T, a, b: a.conj() * b + T.conj_physical(b)),
    ("polar_complex", lambda T, a, b: T.polar(a.abs(), b.real) + T.complex(a.real, b.imag)),
    ("mm", lambda T, a, b: a.reshape(2, 2) @ b.reshape(2, 2)),
    ("vdot_dot", lambda T, a, b: T.vdot(a, b) + T.dot(a, b)),
    ("sum_mean_prod", lambda T, a, b: a.sum() + b.mean() * a.prod()),
    ("norm", lambda T, a, b: T.linalg.vector_norm(a) * b),
    ("real_times_complex", lambda T, a, b: a.real * b + a.imag),
]


@pytest.mark.parametrize("name,fn", GRADS, ids=[g[0] for g in GRADS])
def test_gradients_match_torch(name, fn, device):
    """grad of a real loss through complex ops, for complex and real leaves (PyTorch's
    conjugate Wirtinger convention)."""
    va, vb = _values((4,), 30, 0.3, 1.5), _values((4,), 31, 0.3, 1.5)
    a = fw.tensor(va, device=device, requires_grad=True)
    b = fw.tensor(vb, device=device, requires_grad=True)
    ta, tb = torch.tensor(va, requires_grad=True), torch.tensor(vb, requires_grad=True)
    w = _values(tuple(fn(torch, ta, tb).shape), 32)
    out, tout = fn(fw, a, b), fn(torch, ta, tb)
    check(out, tout)
    loss = (fw.view_as_real(out * fw.tensor(w, device=device))).sum()
    tloss = (torch.view_as_real(tout * torch.tensor(w))).sum()
    loss.backward()
    tloss.backward()
    check(a.grad, ta.grad)
    check(b.grad, tb.grad)


def test_real_leaf_gets_real_gradient(device):
    x = fw.tensor([0.5, -1.5], dtype=fw.float64, device=device, requires_grad=True)
    tx = torch.tensor([0.5, -1.5], dtype=torch.float64, requires_grad=True)
    (x * (2 - 1j)).exp().abs().sum().backward()
    (tx * (2 - 1j)).exp().abs().sum().backward()
    check(x.grad, tx.grad)
    same_error(lambda T: (T.ones(2, dtype=T.complex64, requires_grad=True) * 2).sum().backward())


def test_gradcheck_complex_inputs():
    z = fw.tensor([1 + 2j, 0.5 - 1j], dtype=fw.complex128, requires_grad=True)
    w = fw.tensor([0.3 + 0.2j, -1.5 + 1j], dtype=fw.complex128, requires_grad=True)
    assert fw.autograd.gradcheck(lambda a, b: a * b / (a + 3) + (a @ b).exp(), (z, w))
    assert fw.autograd.gradgradcheck(lambda a, b: (a * b.conj()).sin(), (z, w))

    class WrongMul(fw.autograd.Function):      # grad * other instead of grad * conj(other)
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return g * b, g * a

    assert not fw.autograd.gradcheck(WrongMul.apply, (z, w), raise_exception=False)
