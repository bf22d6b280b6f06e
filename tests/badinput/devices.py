"""Devices: a tensor on the other device (a cpu index into a cuda tensor and the reverse) for
every multi-tensor op. Torch (CPU-only here) cannot run these, so the table is the spec; they
run only where the framework has a cuda device. `o(d)` is the other device."""
from badinput import C, E, OK, OTHER, SAME_DEVICE

R = "RuntimeError"
SD = E(R, SAME_DEVICE)
DEV = E(R, "device")   # ops whose PyTorch message is worded otherwise but names the device


def o(d):
    return OTHER[d]


def x(m, d):
    return m.arange(6., device=d).reshape(3, 2)


def v(m, d, n=3):
    return m.arange(float(n), device=d)


def ix(m, d, *vals):
    return m.tensor(list(vals), device=d)


def D(id, fn, expect=SD, **kw):
    """A device case: runs only with a second device, no torch oracle."""
    return C(id, fn, expect, oracle=False, cuda_only=True, **kw)


CASES = [
    # pointwise and reductions with two tensors
    D("add", lambda m, d: v(m, d) + v(m, o(d))),
    D("mul", lambda m, d: v(m, d) * v(m, o(d))),
    D("sub_method", lambda m, d: v(m, d).sub(v(m, o(d)))),
    D("div", lambda m, d: m.div(v(m, d), v(m, o(d)))),
    D("pow", lambda m, d: m.pow(v(m, d), v(m, o(d)))),
    D("maximum", lambda m, d: m.maximum(v(m, d), v(m, o(d)))),
    D("atan2", lambda m, d: m.atan2(v(m, d), v(m, o(d)))),
    D("eq", lambda m, d: v(m, d) == v(m, o(d))),
    D("logical_and", lambda m, d: m.logical_and(v(m, d), v(m, o(d)))),
    D("copysign", lambda m, d: m.copysign(v(m, d), v(m, o(d))), DEV),
    D("where_other", lambda m, d: m.where(v(m, d) > 0, v(m, d), v(m, o(d)))),
    D("where_cond", lambda m, d: m.where(v(m, o(d)) > 0, v(m, d), v(m, d))),
    D("lerp", lambda m, d: m.lerp(v(m, d), v(m, o(d)), 0.5)),
    D("lerp_weight", lambda m, d: m.lerp(v(m, d), v(m, d), v(m, o(d)))),
    D("addcmul", lambda m, d: m.addcmul(v(m, d), v(m, d), v(m, o(d)))),
    D("addcdiv", lambda m, d: m.addcdiv(v(m, d), v(m, o(d)), v(m, d) + 1)),
    D("clamp_tensor", lambda m, d: v(m, d).clamp(min=v(m, o(d)))),
    D("add_inplace", lambda m, d, t: t.add_(v(m, o(d))), target=v),
    D("mul_inplace", lambda m, d, t: t.mul_(v(m, o(d))), target=v),
    D("add_out", lambda m, d, t: m.add(v(m, d), v(m, d), out=t), DEV, target=lambda m, d: v(m, o(d))),
    D("isclose", lambda m, d: m.isclose(v(m, d), v(m, o(d)))),
    D("equal", lambda m, d: m.equal(v(m, d), v(m, o(d))), DEV),
    D("cpu_scalar_ok", lambda m, d: v(m, d) + m.tensor(2.), OK, value=[2., 3., 4.]),
    D("cpu_scalar_mul_ok", lambda m, d: v(m, d) * m.tensor(2, device="cpu"), OK, value=[0., 2., 4.]),
    D("copy_ok", lambda m, d, t: t.copy_(v(m, o(d)) + 1), OK, target=v, value=[1., 2., 3.]),
    D("to_ok", lambda m, d: v(m, d).to(o(d)) + v(m, o(d)), OK, value=[0., 2., 4.]),
    # matrix products and joins
    D("matmul", lambda m, d: x(m, d).t() @ x(m, o(d))),
    D("mm", lambda m, d: m.mm(x(m, d).t(), x(m, o(d)))),
    D("bmm", lambda m, d: m.bmm(x(m, d)[None].transpose(1, 2), x(m, o(d))[None])),
    D("mv", lambda m, d: m.mv(x(m, d), v(m, o(d), 2))),
    D("dot", lambda m, d: m.dot(v(m, d), v(m, o(d)))),
    D("outer", lambda m, d: m.outer(v(m, d), v(m, o(d)))),
    D("addmm_bias", lambda m, d: m.addmm(m.zeros(2, 2, device=o(d)), x(m, d).t(), x(m, d))),
    D("kron", lambda m, d: m.kron(v(m, d), v(m, o(d)))),
    D("tensordot", lambda m, d: m.tensordot(x(m, d), x(m, o(d)), dims=([0], [0]))),
    D("einsum", lambda m, d: m.einsum("ij,ij->i", x(m, d), x(m, o(d)))),
    D("cat", lambda m, d: m.cat([v(m, d), v(m, o(d))])),
    D("stack", lambda m, d: m.stack([v(m, d), v(m, o(d))])),
    D("linalg_solve", lambda m, d: m.linalg.solve(m.eye(2, device=d), m.ones(2, device=o(d)))),
    # index ops: the index on the other device
    D("index_select", lambda m, d: x(m, d).index_select(0, ix(m, o(d), 0))),
    D("gather", lambda m, d: m.gather(x(m, d), 0, m.zeros(1, 2, dtype=m.int64, device=o(d)))),
    D("scatter", lambda m, d, t: t.scatter_(0, m.zeros(1, 2, dtype=m.int64, device=o(d)), 1.), target=x),
    D("scatter_src", lambda m, d, t: t.scatter_(0, m.zeros(1, 2, dtype=m.int64, device=d), m.ones(1, 2, device=o(d))), target=x),
    D("scatter_add", lambda m, d, t: t.scatter_add_(0, m.zeros(1, 2, dtype=m.int64, device=o(d)), m.ones(1, 2, device=d)), target=x),
    D("scatter_reduce", lambda m, d, t: t.scatter_reduce_(0, m.zeros(1, 2, dtype=m.int64, device=o(d)), m.ones(1, 2, device=d), "sum"), target=x),
    D("index_add", lambda m, d, t: t.index_add_(0, ix(m, o(d), 0), m.ones(1, 2, device=d)), target=x),
    D("index_add_source", lambda m, d, t: t.index_add_(0, ix(m, d, 0), m.ones(1, 2, device=o(d))), target=x),
    D("index_copy", lambda m, d, t: t.index_copy_(0, ix(m, o(d), 0), m.ones(1, 2, device=d)), target=x),
    D("index_fill", lambda m, d, t: t.index_fill_(0, ix(m, o(d), 0), 1.), target=x),
    D("take", lambda m, d: m.take(x(m, d), ix(m, o(d), 0))),
    D("put", lambda m, d, t: t.put_(ix(m, o(d), 0), m.ones(1, device=d)), target=x),
    D("put_source", lambda m, d, t: t.put_(ix(m, d, 0), m.ones(1, device=o(d))), target=x),
    D("take_along_dim", lambda m, d: m.take_along_dim(x(m, d), m.zeros(1, 2, dtype=m.int64, device=o(d)), 0)),
    D("masked_fill_mask", lambda m, d: x(m, d).masked_fill(x(m, o(d)) > 2, 1.), DEV),
    D("masked_fill_inplace", lambda m, d, t: t.masked_fill_(x(m, o(d)) > 2, 1.), DEV, target=x),
    D("masked_scatter", lambda m, d, t: t.masked_scatter_(x(m, o(d)) > 2, m.ones(6, device=d)), DEV, target=x),
    D("masked_select", lambda m, d: x(m, d).masked_select(x(m, o(d)) > 2), DEV),
    D("searchsorted", lambda m, d: m.searchsorted(v(m, d), v(m, o(d))), DEV),
    D("searchsorted_sorter", lambda m, d: m.searchsorted(v(m, d), v(m, d), sorter=ix(m, o(d), 0, 1, 2)), DEV),
    D("bucketize", lambda m, d: m.bucketize(v(m, d), v(m, o(d))), DEV),
    D("bincount_weights", lambda m, d: m.bincount(ix(m, d, 0, 1), m.ones(2, device=o(d))), DEV),
    D("index_put", lambda m, d, t: t.index_put_((ix(m, d, 0),), m.ones(1, 2, device=o(d))), DEV, target=x),
    D("index_put_accumulate", lambda m, d, t: t.index_put_((ix(m, d, 0),), m.ones(1, 2, device=o(d)), accumulate=True), DEV, target=x),
    D("setitem_tensor_value", lambda m, d, t: t.__setitem__(0, m.ones(2, device=o(d))), OK, target=x, value=[[1., 1.], [2., 3.], [4., 5.]]),
]
