"""framework.func's transforms (grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian,
vmap, stack_module_state) against torch.func as the oracle: values, output structures,
nesting, randomness modes and error messages."""
import numpy as np
import pytest

import framework as fw
import framework.nn as fnn
from framework import func as ff

torch = pytest.importorskip("torch")
tf = torch.func


# ----------------------------------------------------------------------------- helpers

def _conv(tree, lib, device="cpu"):
    """numpy arrays (in a pytree) -> tensors of ``lib`` (framework or torch)."""
    if isinstance(tree, np.ndarray):
        return fw.tensor(tree, device=device) if lib is fw else torch.tensor(tree)
    if isinstance(tree, tuple):
        return tuple(_conv(t, lib, device) for t in tree)
    if isinstance(tree, list):
        return [_conv(t, lib, device) for t in tree]
    if isinstance(tree, dict):
        return {k: _conv(v, lib, device) for k, v in tree.items()}
    return tree


def assert_same(ours, theirs, path="out"):
    """Equal pytree structure (types, lengths, keys) and values (shape, dtype, close)."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, fw.Tensor), f"{path}: {type(ours)} is not a Tensor"
        assert tuple(ours.shape) == tuple(theirs.shape), f"{path}: {ours.shape} {theirs.shape}"
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1], path
        assert not ours.requires_grad or theirs.requires_grad, f"{path} requires grad"
        a = ours.detach().cpu().numpy()
        b = theirs.detach().numpy()
        rtol = 1e-10 if b.dtype == np.float64 else 1e-5
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol, err_msg=path)
    elif isinstance(theirs, (tuple, list)):
        assert type(ours) is type(theirs), f"{path}: {type(ours)} vs {type(theirs)}"
        assert len(ours) == len(theirs), path
        for i, (a, b) in enumerate(zip(ours, theirs)):
            assert_same(a, b, f"{path}[{i}]")
    elif isinstance(theirs, dict):
        assert isinstance(ours, dict) and list(ours) == list(theirs), path
        for k in theirs:
            assert_same(ours[k], theirs[k], f"{path}[{k!r}]")
    else:
        assert ours == theirs, f"{path}: {ours!r} vs {theirs!r}"


def both(transform, fn_builder, args, device="cpu", **kw):
    """Runs transform(fn)(*args) in the framework and in torch; compares."""
    ours = getattr(ff, transform)(fn_builder(fw), **kw)(*_conv(args, fw, device))
    theirs = getattr(tf, transform)(fn_builder(torch), **kw)(*_conv(args, torch))
    assert_same(ours, theirs)
    return ours


def rnd(*shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed + len(shape)).standard_normal(shape).astype(dtype)


def raises_same(ours_call, theirs_call):
    with pytest.raises(Exception) as t:
        theirs_call()
    with pytest.raises(type(t.value)) as o:
        ours_call()
    # dtypes print as framework.<name> here
    assert str(o.value) == str(t.value).replace("torch.", "framework.")


# ----------------------------------------------------------------------------- functions

def f_elem(lib):
    return lambda x: (x.sin() * x.exp()).sum()


def f_matmul(lib):
    return lambda x, w: (x @ w).tanh().sum()


def f_reduce(lib):
    return lambda x: (x ** 2).mean() + x.amax() * x.sum(0).prod()


def f_dict(lib):
    return lambda d, c: (d["a"] * d["b"]).sum() + (d["a"] ** 3).sum() * c


def f_vec(lib):
    return lambda x, y: (x * y.sum(), (x ** 2).cumsum(0))


# ----------------------------------------------------------------------------- grad

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fn,args", [
    (f_elem, lambda d: (rnd(4, dtype=d),)),
    (f_reduce, lambda d: (rnd(3, 2, dtype=d),)),
    (f_matmul, lambda d: (rnd(2, 3, dtype=d), rnd(3, 2, dtype=d))),
])
def test_grad_and_value_match_torch(fn, args, dtype):
    a = args(dtype)
    both("grad", fn, a)
    both("grad_and_value", fn, a)
    if len(a) == 2:
        both("grad", fn, a, argnums=1)
        both("grad", fn, a, argnums=(0, 1))
        both("grad_and_value", fn, a, argnums=(1, -2))


def test_grad_device(device):
    both("grad", f_matmul, (rnd(2, 3), rnd(3, 2)), device=device, argnums=(0, 1))
    both("jacrev", f_vec, (rnd(2), rnd(3)), device=device, argnums=(0, 1))


def test_grad_dict_input_and_aux():
    d = {"a": rnd(3), "b": rnd(3, seed=1)}
    both("grad", f_dict, (d, 2.0))
    both("grad", lambda lib: (lambda d, c: ((d["a"] * c).sum(), {"aux": d["b"] * 2})),
         (d, 2.0), has_aux=True)
    raises_same(lambda: ff.grad(lambda x: (x.sum(), 3), has_aux=True)(fw.tensor(rnd(2))),
                lambda: tf.grad(lambda x: (x.sum(), 3), has_aux=True)(torch.tensor(rnd(2))))
    both("grad_and_value", lambda lib: (lambda x: ((x ** 2).sum(), [x.sum(), x.mean()])),
         (rnd(4),), has_aux=True)
    both("grad", lambda lib: (lambda xs: (xs[0] * xs[1]).sum()), ([rnd(2), rnd(2, seed=3)],))


def test_grad_results_are_detached_and_keep_input_graph():
    g = ff.grad(f_elem(fw))(fw.tensor(rnd(3)))
    assert not g.requires_grad
    x = fw.tensor(rnd(3), requires_grad=True)
    g = ff.grad(lambda x: (x ** 3).sum())(x)
    assert g.requires_grad  # as torch: ordinary autograd sees through grad
    g.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 6 * x.detach().numpy(), rtol=1e-6)


def test_grad_nested():
    x = rnd(3)

    def inner(lib, g):
        return g(lambda x: g(lambda y: (y.sin() * y).sum())(x).sum())

    ours = inner(fw, ff.grad)(fw.tensor(x))
    theirs = inner(torch, tf.grad)(torch.tensor(x))
    assert_same(ours, theirs)
    # closing over the outer variable (perturbation through a closure)
    def outer(lib, g, y0):
        return g(lambda x: g(lambda y: (x * y ** 2).sum())(y0).sum())
    c = rnd(3, seed=4)   # the inner input is a constant: only the closure links to x
    assert_same(outer(fw, ff.grad, fw.tensor(c))(fw.tensor(x)),
                outer(torch, tf.grad, torch.tensor(c))(torch.tensor(x)))


def test_grad_under_no_grad():
    x = rnd(3)
    with fw.no_grad():
        g = ff.grad(f_elem(fw))(fw.tensor(x))
    assert_same(g, tf.grad(f_elem(torch))(torch.tensor(x)))


def test_grad_errors():
    x = rnd(2)
    raises_same(lambda: ff.grad(lambda x: x * 2)(fw.tensor(x)),
                lambda: tf.grad(lambda x: x * 2)(torch.tensor(x)))
    raises_same(lambda: ff.grad(lambda x: 3.0)(fw.tensor(x)),
                lambda: tf.grad(lambda x: 3.0)(torch.tensor(x)))
    raises_same(lambda: ff.grad(lambda x: x.sum(), has_aux=True)(fw.tensor(x)),
                lambda: tf.grad(lambda x: x.sum(), has_aux=True)(torch.tensor(x)))
    raises_same(lambda: ff.grad(lambda x: x.sum(), argnums=3)(fw.tensor(x)),
                lambda: tf.grad(lambda x: x.sum(), argnums=3)(torch.tensor(x)))
    raises_same(lambda: ff.grad(lambda x, y: x.sum(), argnums=(0, 0))(fw.tensor(x), 1),
                lambda: tf.grad(lambda x, y: x.sum(), argnums=(0, 0))(torch.tensor(x), 1))
    raises_same(lambda: ff.grad(lambda x, y: x.sum(), argnums=1)(fw.tensor(x), 1.0),
                lambda: tf.grad(lambda x, y: x.sum(), argnums=1)(torch.tensor(x), 1.0))
    raises_same(lambda: ff.grad(lambda x: x.sum(), argnums=1.0)(fw.tensor(x)),
                lambda: tf.grad(lambda x: x.sum(), argnums=1.0)(torch.tensor(x)))


# ----------------------------------------------------------------------------- vjp / jvp

def test_vjp_matches_torch():
    x, y = rnd(3), rnd(2, seed=5)
    fn = lambda x, y: (x * y.sum(), {"s": (x ** 2).sum() * y})  # noqa: E731
    out, vf = ff.vjp(fn, fw.tensor(x), fw.tensor(y))
    tout, tvf = tf.vjp(fn, torch.tensor(x), torch.tensor(y))
    assert_same(out, tout)
    ct = (rnd(3, seed=7), {"s": rnd(2, seed=8)})
    assert_same(vf(_conv(ct, fw)), tvf(_conv(ct, torch)))
    assert_same(vf(_conv(ct, fw)), tvf(_conv(ct, torch)))   # callable twice
    # has_aux
    out, vf, aux = ff.vjp(lambda x: (x.exp(), x.sum()), fw.tensor(x), has_aux=True)
    tout, tvf, taux = tf.vjp(lambda x: (x.exp(), x.sum()), torch.tensor(x), has_aux=True)
    assert_same((out, aux), (tout, taux))
    assert_same(vf(fw.ones(3)), tvf(torch.ones(3)))
    # structure mismatch and integer outputs
    with pytest.raises(RuntimeError, match="Expected pytree structure of cotangents"):
        ff.vjp(fn, fw.tensor(x), fw.tensor(y))[1](fw.ones(3))
    raises_same(lambda: ff.vjp(lambda x: (x > 0).long(), fw.tensor(x)),
                lambda: tf.vjp(lambda x: (x > 0).long(), torch.tensor(x)))
    raises_same(lambda: ff.vjp(lambda x: (x, 1), fw.tensor(x)),
                lambda: tf.vjp(lambda x: (x, 1), torch.tensor(x)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_jvp_matches_torch(dtype):
    x, y = rnd(3, dtype=dtype), rnd(3, dtype=dtype, seed=4)
    tx, ty = rnd(3, dtype=dtype, seed=9), rnd(3, dtype=dtype, seed=10)
    fn = lambda x, y: {"p": x * y.sin(), "q": (x @ y).exp()}  # noqa: E731
    ours = ff.jvp(fn, _conv((x, y), fw), _conv((tx, ty), fw))
    theirs = tf.jvp(fn, _conv((x, y), torch), _conv((tx, ty), torch))
    assert_same(ours, theirs)
    # has_aux and an output independent of the inputs
    g = lambda x: ((x ** 2, x.new_ones(2)), x.sum())  # noqa: E731
    assert_same(ff.jvp(g, (fw.tensor(x),), (fw.tensor(tx),), has_aux=True),
                tf.jvp(g, (torch.tensor(x),), (torch.tensor(tx),), has_aux=True))
    raises_same(lambda: ff.jvp(lambda x: x.new_ones(2), (fw.tensor(x),), (fw.tensor(tx),),
                               strict=True),
                lambda: tf.jvp(lambda x: x.new_ones(2), (torch.tensor(x),),
                               (torch.tensor(tx),), strict=True))
    raises_same(lambda: ff.jvp(fn, fw.tensor(x), (fw.tensor(tx),)),
                lambda: tf.jvp(fn, torch.tensor(x), (torch.tensor(tx),)))
    raises_same(lambda: ff.jvp(fn, (fw.tensor(x), 1.0), (fw.tensor(tx), 1.0)),
                lambda: tf.jvp(fn, (torch.tensor(x), 1.0), (torch.tensor(tx), 1.0)))
    with pytest.raises(RuntimeError, match="Expected primals and tangents to have the same"):
        ff.jvp(fn, (fw.tensor(x), fw.tensor(y)), (fw.tensor(tx),))


# ----------------------------------------------------------------------------- jacobians

@pytest.mark.parametrize("transform", ["jacrev", "jacfwd"])
def test_jacobians_match_torch(transform):
    both(transform, lambda lib: (lambda x: x.sin() * x.sum()), (rnd(3),))
    both(transform, lambda lib: (lambda x: x @ x.T), (rnd(2, 3),))
    both(transform, f_vec, (rnd(2), rnd(3)))
    both(transform, f_vec, (rnd(2), rnd(3)), argnums=1)
    both(transform, f_vec, (rnd(2), rnd(3)), argnums=(0, 1))
    both(transform, lambda lib: (lambda d: {"o": d["a"] * d["b"].sum()}),
         ({"a": rnd(2), "b": rnd(3, 1)},))
    both(transform, lambda lib: (lambda x: (x.exp(), {"aux": x.sum()})), (rnd(3),),
         has_aux=True)
    both(transform, lambda lib: (lambda x: x.sum()), (rnd(3, dtype=np.float64),))
    if transform == "jacrev":
        both(transform, lambda lib: (lambda x: x.cos()), (rnd(4),), chunk_size=2)


def test_jacobian_nesting_and_hessian():
    both("hessian", f_elem, (rnd(3),))
    both("hessian", f_matmul, (rnd(2, 2), rnd(2, 2)), argnums=(0, 1))
    both("hessian", lambda lib: (lambda x: (x ** 3).prod()), (rnd(2, 2, dtype=np.float64),))
    x = rnd(3)
    fn = lambda x: (x.sin() * x.sum()).sum()  # noqa: E731
    assert_same(ff.jacrev(ff.jacrev(fn))(fw.tensor(x)), tf.jacrev(tf.jacrev(fn))(torch.tensor(x)))
    assert_same(ff.jacfwd(ff.jacrev(fn))(fw.tensor(x)),
                tf.jacfwd(tf.jacrev(fn))(torch.tensor(x)))
    assert_same(ff.jacrev(ff.grad(fn))(fw.tensor(x)), tf.jacrev(tf.grad(fn))(torch.tensor(x)))


def test_forward_and_reverse_compose():
    x, v = rnd(3), rnd(3, seed=3)

    def build(lib, m):
        def f(x):
            return x.sin() * x.sum()

        def jv(x):
            return m.jvp(f, (x,), (lib.tensor(v) if lib is fw else torch.tensor(v),))[1].sum()
        return jv

    assert_same(ff.grad(build(fw, ff))(fw.tensor(x)), tf.grad(build(torch, tf))(torch.tensor(x)))
    assert_same(ff.vmap(build(fw, ff))(fw.tensor(np.stack([x, v]))),
                tf.vmap(build(torch, tf))(torch.tensor(np.stack([x, v]))))
    # vjp of a gradient (Hessian-vector product) and jvp of a gradient
    g, tg = ff.grad(f_elem(fw)), tf.grad(f_elem(torch))
    assert_same(ff.vjp(g, fw.tensor(x))[1](fw.tensor(v)),
                tf.vjp(tg, torch.tensor(x))[1](torch.tensor(v)))
    assert_same(ff.jvp(g, (fw.tensor(x),), (fw.tensor(v),)),
                tf.jvp(tg, (torch.tensor(x),), (torch.tensor(v),)))


def test_jacobian_errors():
    x = rnd(2)
    raises_same(lambda: ff.jacrev(lambda x: x, chunk_size=0),
                lambda: tf.jacrev(lambda x: x, chunk_size=0))
    raises_same(lambda: ff.jacrev(lambda x: 1.0)(fw.tensor(x)),
                lambda: tf.jacrev(lambda x: 1.0)(torch.tensor(x)))
    raises_same(lambda: ff.jacrev(lambda x: x, argnums=2)(fw.tensor(x)),
                lambda: tf.jacrev(lambda x: x, argnums=2)(torch.tensor(x)))
    raises_same(lambda: ff.jacfwd(lambda x: x, has_aux=True)(fw.tensor(x)),
                lambda: tf.jacfwd(lambda x: x, has_aux=True)(torch.tensor(x)))
    raises_same(lambda: ff.jacrev(lambda x: (x > 0).long())(fw.tensor(x)),
                lambda: tf.jacrev(lambda x: (x > 0).long())(torch.tensor(x)))
    raises_same(lambda: ff.jvp(lambda x: x, (fw.tensor(x),), (fw.tensor(x[:1]),)),
                lambda: tf.jvp(lambda x: x, (torch.tensor(x),), (torch.tensor(x[:1]),)))
    both("jacfwd", lambda lib: (lambda x: (x > 0).long()), (x,))


# ----------------------------------------------------------------------------- vmap

def _vm(fn_builder, args, device="cpu", **kw):
    ours = ff.vmap(fn_builder(fw), **kw)(*_conv(args, fw, device))
    theirs = tf.vmap(fn_builder(torch), **kw)(*_conv(args, torch))
    assert_same(ours, theirs)
    return ours


def test_vmap_in_dims_out_dims(device):
    x, y = rnd(3, 2), rnd(2, 3, seed=2)
    _vm(lambda lib: (lambda a, b: a * b), (x, y), device, in_dims=(0, 1))
    _vm(lambda lib: (lambda a, b: a @ b), (x, y), device, in_dims=(0, None))
    _vm(lambda lib: (lambda a: a.sum()), (x,), device)                # scalar -> 1-D
    _vm(lambda lib: (lambda a: a * 2), (x,), device, in_dims=-1, out_dims=1)


def test_vmap_structures():
    x, y = rnd(3, 2), rnd(2, 3, seed=2)
    _vm(lambda lib: (lambda a: (a, a.sum(), [a * 2])), (x,), out_dims=(1, 0, [-1]))
    _vm(lambda lib: (lambda d, c: {"s": d["a"] + d["b"], "c": d["a"].sum() * c}),
        ({"a": x, "b": y}, 2.0), in_dims=({"a": 0, "b": 1}, None))
    _vm(lambda lib: (lambda p: p[0] + p[1]), ((x, x * 2),), in_dims=((0, 0),))
    _vm(lambda lib: (lambda a: (a.sum(), 3)), (x,), out_dims=(0, None))
    _vm(lambda lib: (lambda a, s: a * s), (x, 3.0), in_dims=(0, None))
    _vm(lambda lib: (lambda a: a.permute(1, 0)), (rnd(3, 2, 4),), in_dims=1, out_dims=2)
    # kwargs are not mapped
    assert_same(ff.vmap(lambda a, *, s: a * s)(fw.tensor(x), s=fw.tensor(rnd(2))),
                tf.vmap(lambda a, *, s: a * s)(torch.tensor(x), s=torch.tensor(rnd(2))))
    # nested vmap and an empty mapped dim
    _vm(lambda lib: tf.vmap(lambda a: a.sum()) if lib is torch else ff.vmap(lambda a: a.sum()),
        (rnd(2, 3, 2),))
    _vm(lambda lib: (lambda a: a * 2), (np.zeros((0, 3), np.float32),))
    ours = ff.vmap(ff.vmap(lambda a, b: a * b, in_dims=(None, 0)), in_dims=(0, None))(
        fw.tensor(rnd(2)), fw.tensor(rnd(3, seed=1)))
    theirs = tf.vmap(tf.vmap(lambda a, b: a * b, in_dims=(None, 0)), in_dims=(0, None))(
        torch.tensor(rnd(2)), torch.tensor(rnd(3, seed=1)))
    assert_same(ours, theirs)


def test_vmap_errors():
    x, y = rnd(3, 2), rnd(4, 2)

    def check(call):
        raises_same(lambda: call(ff.vmap, fw), lambda: call(tf.vmap, torch))

    def T(lib, a):
        return fw.tensor(a) if lib is fw else torch.tensor(a)

    def add(a, b):
        return a + b

    check(lambda vm, lib: vm(add)(T(lib, x), T(lib, y)))
    check(lambda vm, lib: vm(add, in_dims=(0, 2))(T(lib, x), T(lib, x)))
    check(lambda vm, lib: vm(add, in_dims=(0,))(T(lib, x), T(lib, x)))
    check(lambda vm, lib: vm(add, in_dims=[0, 0])(T(lib, x), T(lib, x)))
    check(lambda vm, lib: vm(add, in_dims=(0, 0))(T(lib, x), 1.0))
    check(lambda vm, lib: vm(add, in_dims=(0, "a"))(T(lib, x), T(lib, x)))
    check(lambda vm, lib: vm(add, in_dims=None)(T(lib, x), T(lib, x)))
    check(lambda vm, lib: vm(add, in_dims=(None, None))(T(lib, x), T(lib, x)))
    check(lambda vm, lib: vm(add)())
    check(lambda vm, lib: vm(add, chunk_size=0))
    check(lambda vm, lib: vm(add, randomness="sometimes"))
    check(lambda vm, lib: vm(lambda a: (a, 3))(T(lib, x)))
    check(lambda vm, lib: vm(lambda a: a, out_dims=None)(T(lib, x)))
    check(lambda vm, lib: vm(lambda a: a, out_dims=3)(T(lib, x)))
    check(lambda vm, lib: vm(lambda a: a, out_dims="x")(T(lib, x)))
    check(lambda vm, lib: vm(lambda a: (a, a), out_dims=(0, 0, 0))(T(lib, x)))


def test_vmap_randomness_same_and_different():
    x = fw.zeros(4, 3)
    fw.manual_seed(0)
    same = ff.vmap(lambda a: a + fw.rand(3), randomness="same")(x)
    assert all(fw.equal(same[0], same[i]) for i in range(4))
    # the generator advances once, as for one call
    fw.manual_seed(0)
    one = fw.rand(3)
    np.testing.assert_array_equal(same[0].numpy(), one.numpy())
    after = fw.rand(3)
    fw.manual_seed(0)
    ff.vmap(lambda a: a + fw.rand(3), randomness="same")(x)
    np.testing.assert_array_equal(fw.rand(3).numpy(), after.numpy())
    diff = ff.vmap(lambda a: a + fw.rand(3), randomness="different")(x)
    assert not fw.equal(diff[0], diff[1])
    # "same" outside, "different" inside
    nested = ff.vmap(ff.vmap(lambda a: a + fw.rand(()), randomness="different"),
                     randomness="same")(fw.zeros(2, 3))
    assert fw.equal(nested[0], nested[1]) and not fw.equal(nested[0, 0], nested[0, 1])


def test_vmap_randomness_error(monkeypatch):
    import framework.random as r
    if not hasattr(r, "_draw_hook"):
        # framework.random without the draw hook: install the proposed two-line hook here
        monkeypatch.setattr(r, "_draw_hook", None, raising=False)
        take = r.Generator._take

        def hooked(self, n):
            if r._draw_hook is not None:
                r._draw_hook()
            return take(self, n)
        monkeypatch.setattr(r.Generator, "_take", hooked)
    x = fw.zeros(4, 3)
    raises_same(lambda: ff.vmap(lambda a: a + fw.rand(3))(x),
                lambda: tf.vmap(lambda a: a + torch.rand(3))(torch.zeros(4, 3)))
    raises_same(lambda: ff.vmap(lambda a: fw.nn.functional.dropout(a, 0.5))(x),
                lambda: tf.vmap(lambda a: torch.nn.functional.dropout(a, 0.5))(
                    torch.zeros(4, 3)))
    raises_same(lambda: ff.vmap(ff.vmap(lambda a: a + fw.rand(()), randomness="same"))(x),
                lambda: tf.vmap(tf.vmap(lambda a: a + torch.rand(()), randomness="same"))(
                    torch.zeros(4, 3)))
    raises_same(lambda: ff.jacfwd(lambda a: a * fw.rand(3))(fw.ones(3)),
                lambda: tf.jacfwd(lambda a: a * torch.rand(3))(torch.ones(3)))
    assert ff.jacfwd(lambda a: a * fw.rand(3), randomness="same")(fw.ones(3)).shape == (3, 3)
    assert ff.jacrev(lambda a: a * fw.rand(3))(fw.ones(3)).shape == (3, 3)
    assert ff.vmap(lambda a: a * 2)(x).shape == (4, 3)   # no random op: fine
    fw.rand(2)  # usable again after the error


# ----------------------------------------------------------------------------- composition

def _models(lib, n=3, seed=0):
    lib.manual_seed(seed)
    ms = []
    for i in range(n):
        m = (fnn if lib is fw else torch.nn).Linear(3, 2)
        with (fw if lib is fw else torch).no_grad():
            m.weight.copy_(_conv(rnd(2, 3, seed=10 + i), lib))
            m.bias.copy_(_conv(rnd(2, seed=20 + i), lib))
        ms.append(m)
    return ms


def test_per_sample_grads_vmap_grad_functional_call(device):
    lib_f = {fw: (ff, fnn.functional), torch: (tf, torch.nn.functional)}
    xs, ys = rnd(4, 3), np.array([0, 1, 1, 0])
    results = {}
    for lib in (fw, torch):
        fn, F = lib_f[lib]
        model = _models(lib, 1)[0]
        if lib is fw:
            model = model.to(device)
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(p, x, y):
            out = fn.functional_call(model, p, (x.unsqueeze(0),))
            return F.cross_entropy(out, y.unsqueeze(0))

        x = _conv(xs, lib, device)
        y = fw.tensor(ys, device=device) if lib is fw else torch.tensor(ys)
        results[lib] = fn.vmap(fn.grad(loss), in_dims=(None, 0, 0))(params, x, y)
    assert_same(results[fw], results[torch])
    assert set(results[fw]) == {"weight", "bias"}
    assert tuple(results[fw]["weight"].shape) == (4, 2, 3)


def test_stack_module_state_ensemble():
    ours_p, ours_b = ff.stack_module_state(_models(fw))
    theirs_p, theirs_b = tf.stack_module_state(_models(torch))
    assert_same({k: v.detach() for k, v in ours_p.items()},
                {k: v.detach() for k, v in theirs_p.items()})
    assert ours_b == theirs_b == {}
    assert all(v.requires_grad and v.is_leaf for v in ours_p.values())
    x = rnd(5, 3)
    base = _models(fw, 1)[0]
    out = ff.vmap(lambda p, x: ff.functional_call(base, p, (x,)), in_dims=(0, None))(
        ours_p, fw.tensor(x))
    tbase = _models(torch, 1)[0]
    tout = tf.vmap(lambda p, x: tf.functional_call(tbase, p, (x,)), in_dims=(0, None))(
        theirs_p, torch.tensor(x))
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-5)
    raises_same(lambda: ff.stack_module_state([]), lambda: tf.stack_module_state([]))
    m = _models(fw, 2)
    m[1].eval()
    tm = _models(torch, 2)
    tm[1].eval()
    raises_same(lambda: ff.stack_module_state(m), lambda: tf.stack_module_state(tm))
    m = _models(fw, 2)
    m[1].bias.requires_grad_(False)
    tm = _models(torch, 2)
    tm[1].bias.requires_grad_(False)
    raises_same(lambda: ff.stack_module_state(m), lambda: tf.stack_module_state(tm))


def test_closed_over_tensors_keep_graph_like_torch():
    """grad of a function closing over a weight that requires grad: the result requires
    grad (as torch's) and ordinary autograd reaches the weight (a gradient penalty)."""
    x, w0 = rnd(3), rnd(3, seed=6)
    res = {}
    for lib, fn in ((fw, ff), (torch, tf)):
        w = (fw.tensor(w0) if lib is fw else torch.tensor(w0)).requires_grad_()
        xx = fw.tensor(x) if lib is fw else torch.tensor(x)
        g = fn.grad(lambda x: (w * x.sin()).sum())(xx)
        unrelated = fn.grad(lambda x: (x ** 2).sum())(xx)
        out, vjp_fn = fn.vjp(lambda x: w * x.exp(), xx)
        v = vjp_fn(xx)[0]
        j = fn.jacrev(lambda x: w * x ** 2)(xx)
        jv = fn.jvp(lambda x: w * x, (xx,), (xx,))[1]
        flags = [t.requires_grad for t in (g, unrelated, out, v, j, jv)]
        ((g ** 2).sum() + v.sum() + j.sum() + jv.sum()).backward()
        res[lib] = (flags, w.grad)
    assert res[fw][0] == res[torch][0]
    assert_same(res[fw][1], res[torch][1])
