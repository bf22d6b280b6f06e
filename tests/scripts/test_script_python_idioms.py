"""Everyday research code using tensors through Python's own protocols: operators with
Python numbers, ``bool``/``float``/``int``/``format``/``len``/``in``/iteration, torch.Size,
NumPy interop, copy/pickle, printing and type queries. Each workload runs under the
framework and under PyTorch 2.13 and the results must agree value by value and type by type
(a Python float vs a 0-d tensor, a tuple vs a list, a Size vs a tuple), errors by class and
text."""
import copy
import io
import math
import operator
import pickle
import warnings

import numpy as np
import pytest

import framework

torch_ref = pytest.importorskip("torch")


# ---- a type-aware comparison ----------------------------------------------------------

def err(fn):
    """What ``fn()`` raises: ("raise", class name, first line of the message)."""
    try:
        fn()
    except Exception as e:     # noqa: BLE001 - the class itself is compared
        return ("raise", type(e).__name__, str(e).split("\n")[0])
    return ("no error",)


def _norm(s):
    # the framework names itself where PyTorch says "torch" (dtypes, Size, type strings)
    return s.replace("framework.", "torch.")


def same(got, want, lib, path="result"):
    """``got`` (framework) equals ``want`` (PyTorch), types included."""
    if isinstance(want, torch_ref.Size):
        assert isinstance(got, framework.Size), f"{path}: {type(got).__name__}, not a Size"
        assert tuple(got) == tuple(want), f"{path}: {got} vs {want}"
    elif isinstance(want, torch_ref.Tensor):
        assert isinstance(got, framework.Tensor), f"{path}: {type(got).__name__}, not a tensor"
        assert type(got).__name__ == type(want).__name__, f"{path}: {type(got).__name__}"
        assert _norm(str(got.dtype)) == str(want.dtype), f"{path}: {got.dtype} vs {want.dtype}"
        assert tuple(got.shape) == tuple(want.shape), f"{path}: {got.shape} vs {want.shape}"
        assert got.requires_grad == want.requires_grad, f"{path}: requires_grad"
        g, w = got.detach().cpu(), want.detach().resolve_conj().resolve_neg()
        if w.dtype == torch_ref.bfloat16:
            g, w = g.float(), w.float()
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6, atol=1e-7, err_msg=path)
    elif isinstance(want, torch_ref.dtype):
        assert isinstance(got, framework.dtype) and _norm(str(got)) == str(want), path
    elif isinstance(want, torch_ref.device):
        assert isinstance(got, framework.device) and str(got) == str(want), path
    elif isinstance(want, dict):
        assert type(got) is type(want) and list(got) == list(want), f"{path}: keys differ"
        for k in want:
            same(got[k], want[k], lib, f"{path}[{k!r}]")
    elif isinstance(want, (list, tuple)):
        assert type(got) is type(want), f"{path}: {type(got).__name__} vs {type(want).__name__}"
        assert len(got) == len(want), f"{path}: length {len(got)} vs {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            same(g, w, lib, f"{path}[{i}]")
    elif isinstance(want, np.ndarray):
        assert isinstance(got, np.ndarray) and got.dtype == want.dtype, f"{path}: {got!r}"
        np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=path)
    elif isinstance(want, str):
        assert isinstance(got, str) and _norm(got) == want, f"{path}: {got!r} vs {want!r}"
    else:
        assert type(got) is type(want), f"{path}: {type(got).__name__} vs {type(want).__name__}"
        if isinstance(want, float) and math.isnan(want):
            assert math.isnan(got), path
        elif isinstance(want, (float, complex)):
            assert abs(got - want) <= 1e-6 * max(1.0, abs(want)), f"{path}: {got} vs {want}"
        else:
            assert got == want, f"{path}: {got!r} vs {want!r}"


def compare(run, device="cpu"):
    """PyTorch runs ``run`` on cpu, the framework on ``device``; results must agree."""
    want = run(torch_ref, "cpu")
    got = run(framework, device)
    same(got, want, framework)
    return got


# ---- 1. operators and Python protocols ---------------------------------------------------

def python_operators(torch, device):
    x = torch.tensor([[1.5, -2.0, 3.0], [0.5, 4.0, -1.0]], device=device)
    xi = torch.tensor([3, -4, 7, 0], device=device)
    mask = x > 0
    r = {}
    r["arith"] = (1 - x, 2 ** x, x.abs() ** 0.5, x // 2, x % -3, xi % -3, 1 / x, -x, abs(x),
                  +x, -7 // torch.tensor([2, -3, 4], device=device), 7 % xi[:3],
                  xi ** 2.0, 1 / torch.tensor([2, 4], device=device))
    r["bits"] = (~mask, mask & (x < 3), mask | (x < -1), mask ^ True, True & mask,
                 xi | 1, xi << 1, 1 << torch.tensor([1, 2], device=device),
                 64 >> torch.tensor([1, 2], device=device), mask + (x > 1))
    v = torch.tensor([1.0, 2.0, 3.0], device=device)
    r["matmul"] = (v @ v, x @ v, torch.tensor([1.0, 2.0], device=device) @ x,
                   torch.ones(2, 2, 3, device=device) @ torch.ones(3, 2, device=device),
                   err(lambda: x @ x))
    y = x.clone()
    y += 1
    y *= v                                  # broadcast in place
    y /= 2
    z = xi.clone()
    r["inplace"] = (y, err(lambda: z.__itruediv__(2)), err(lambda: z.__iadd__(1.5)),
                    err(lambda: y.__imul__(torch.ones(2, 2, 3, device=device))), z)
    r["compare"] = (0 < x[0, 0] < 2, x == None, x != None, x is None,  # noqa: E711
                    xi[0] == 3, torch.tensor([1, 2]) == [1, 2], torch.tensor([1, 2]) != "a")
    r["truth"] = (bool(torch.tensor([0.0], device=device)), err(lambda: bool(x)),
                  err(lambda: bool(torch.tensor([]))), "yes" if (x > 3).any() else "no",
                  (x > -3).all(), bool((x > 3).any()),
                  torch.is_nonzero(torch.tensor([0.5])),
                  err(lambda: torch.is_nonzero(torch.tensor([0.5, 1.0]))))
    rows = [x[0], x[1], x[0] * 2]
    scalars = [torch.tensor(1.0), torch.tensor(3.0), torch.tensor(2.0)]
    r["builtins"] = (sum(rows), max(scalars), min(scalars),
                     sorted(scalars, key=lambda t: t.item()),
                     math.sqrt(torch.tensor(4.0)), float(x[0, 0]), int(torch.tensor(-2.7)),
                     err(lambda: round(torch.tensor(2.5))),
                     complex(torch.tensor(2.0)), complex(torch.tensor(1 + 2j)),
                     err(lambda: float(x)), err(lambda: divmod(xi, 3)),
                     err(lambda: divmod(7, xi[:2])))
    r["index"] = (operator.index(xi[2]), list(range(xi[0])), [10, 20, 30][torch.tensor(2)],
                  err(lambda: operator.index(torch.tensor(3.0))),
                  err(lambda: [1, 2][torch.tensor(1.0)]))
    r["format"] = (format(torch.tensor(3.14159), ".3f"), f"{torch.tensor(3):d}",
                   f"{x[0, 1].item():.2f}", f"{torch.tensor(1.5)}", f"{torch.tensor([1.0, 2.0])}",
                   err(lambda: format(x, ".3f")))
    a, b = x.clone(), x.clone()
    r["identity"] = (hash(a) == hash(a), hash(a) != hash(b), len({a: 1, b: 2}), len({a, a, b}),
                     a in [a], b in {a: 0})
    r["contains"] = (2.0 in x, 5 in x, torch.tensor([1, 2]) in torch.tensor([[1, 2], [3, 4]]),
                     torch.tensor([1, 3]) in torch.tensor([[1, 2], [3, 4]]),
                     err(lambda: "a" in x))
    h, w = torch.ones(1, 2, 4, 5).shape[-2:]
    first, second = x
    r["sequence"] = (len(x), err(lambda: len(torch.tensor(1.0))), [row for row in x], list(xi),
                     err(lambda: list(torch.tensor(1.0))), tuple(x.shape), first, second, h, w,
                     list(reversed(xi)), [(i, float(e)) for i, e in enumerate(v)])
    return r


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_python_operators_and_protocols(device):
    if device == "cuda" and not framework.cuda.is_available():
        pytest.skip("no cuda device")
    compare(python_operators, device)


def test_tensor_hash_is_identity():
    a = framework.ones(2)
    assert hash(a) == hash(a) and hash(a) != hash(a.clone())


# ---- 2. torch.Size and size arguments ----------------------------------------------------

def size_idioms(torch, device):
    x = torch.arange(12.0).reshape(3, 4)
    s = x.shape
    r = {}
    r["eq"] = (s == (3, 4), s == torch.Size([3, 4]), s == [3, 4], x.size(-1), x.size()[1:],
               x.size()[0], s[::-1], s.count(3), s.index(4), hash(s) == hash((3, 4)),
               err(lambda: x.size(2)))
    r["arith"] = (s + (5,), (5,) + s, s * 2, 2 * s, s.numel(), torch.Size([]).numel(),
                  torch.Size([torch.tensor(2), 3]))
    r["str"] = (f"{s}", repr(s), str(torch.Size([])), repr(torch.Size([2])))
    r["types"] = (type(s[0]).__name__, type(s[1:]).__name__, type(x.size()).__name__)
    r["args"] = (x.view(*s[:-1], -1, 2), x.new_zeros(s), torch.zeros(s[0], 3), torch.zeros(s),
                 torch.zeros([2, 3]), torch.zeros(torch.tensor(2), 3), x.view(torch.tensor(4), 3),
                 x.reshape([2, -1]), x.reshape(torch.Size([4, 3])),
                 torch.ones(1, 4).expand(s), torch.ones(1, 4).expand([3, -1]),
                 torch.ones(1, 2).repeat(torch.Size([2, 2])), torch.ones(2).repeat(torch.tensor(2)),
                 x.new_ones((2, 2)), x.new_full((2,), 3), x.new_tensor([1, 2]),
                 torch.full(s[1:], 2.0), torch.randn(s).shape, x.permute((1, 0)).shape,
                 x.sum(dim=(0, 1)), x.unflatten(1, (2, 2)).shape,
                 (lambda b, c: b * c)(*s))
    r["errors"] = (err(lambda: torch.zeros(-1, 2)), err(lambda: x.view(5, -1)),
                   err(lambda: x.reshape(-1, -1)))
    r["counts"] = (x.dim(), x.ndim, x.numel(), x.nelement(), x.element_size(),
                   torch.ones(2, dtype=torch.float16).element_size(), x.itemsize, x.nbytes)
    c = torch.tensor([[1 + 2j, 3j]])
    b3 = torch.ones(2, 3, 4)
    r["transposes"] = (x.T, b3.mT.shape, b3.mH.shape, c.H, c.mH, x.mT,
                       err(lambda: torch.ones(3).mT), err(lambda: b3.H),
                       err(lambda: torch.ones(3).H))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # PyTorch warns once per process (checked below)
        r["T_not_2d"] = (torch.ones(3).T, b3.T, torch.tensor(2.0).T, torch.tensor(1j).H)
    return r


def test_size_idioms():
    compare(size_idioms)


def test_T_of_non_matrix_warns():
    with pytest.warns(UserWarning, match=r"The use of `x.T` on tensors of dimension other "):
        assert framework.ones(2, 3, 4).T.shape == (4, 3, 2)
    with pytest.warns(UserWarning, match="Tensor.T is deprecated on 0-D tensors"):
        assert framework.tensor(2.0).T.item() == 2.0


# ---- 3. NumPy interop ---------------------------------------------------------------------

def numpy_interop(torch, device):
    x = torch.tensor([[1.5, -2.0, 3.0], [0.5, 4.0, -1.0]])
    r = {}
    shared = x.clone()
    np.asarray(shared)[0, 0] = 9.0          # np.asarray of a cpu tensor shares its memory
    arr = np.zeros(2, dtype=np.float32)
    torch.as_tensor(arr).add_(1)            # shares
    copied = np.zeros(2, dtype=np.float32)
    torch.tensor(copied).add_(1)            # copies
    r["memory"] = (np.array(x), np.asarray(x), shared, arr, copied,
                   np.array(x, dtype=np.float64), np.stack([x, x]))
    g = torch.ones(2, requires_grad=True)
    r["numpy"] = (err(lambda: g.numpy()), g.numpy(force=True), x.numpy())
    ro = np.arange(3, dtype=np.float32)
    ro.flags.writeable = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # the not-writable warning (checked below)
        from_ro = torch.from_numpy(ro)
    r["from_numpy"] = (
        from_ro, torch.from_numpy(np.arange(12.0).reshape(3, 4)[:, ::2]),
        torch.from_numpy(np.arange(3, dtype=np.int16)),
        torch.from_numpy(np.array([True, False])),
        torch.from_numpy(np.array([1.5], dtype=np.float16)),
        err(lambda: torch.from_numpy(np.arange(4.0)[::-1])),
        err(lambda: torch.from_numpy(np.arange(3, dtype=">f4"))),
        err(lambda: torch.tensor(np.arange(3, dtype=">f4"))),
        err(lambda: torch.from_numpy(np.float32(1.0))),
        err(lambda: torch.from_numpy([1.0])))
    r["scalars"] = (torch.tensor(np.float32(1.5)), torch.tensor(np.float64(1.5)),
                    torch.tensor([np.int32(1), np.int32(2)]),
                    err(lambda: np.ones(3, dtype=np.float32) + x), x + np.ones(3),
                    np.float64(2.0) * x, x * np.float64(2.0),
                    np.int64(2) + torch.tensor([1, 2], dtype=torch.int32),
                    np.float32(torch.tensor(2.5)), np.exp(x))
    r["indexing"] = (x[np.int64(1)], x[:, np.array([0, 2])], x[np.array([True, False])],
                     x[np.arange(2), np.array([2, 0])])
    r["tolist"] = (x.tolist(), torch.tensor([1, 2]).tolist(), torch.tensor(2).tolist(),
                   torch.tensor([True]).tolist(), torch.tensor(2).item(),
                   torch.tensor(2.0).item(), torch.tensor(True).item(), torch.tensor(1j).item())
    np.testing.assert_allclose(x, np.array(x.tolist()))
    return r


def test_numpy_interop():
    with warnings.catch_warnings():
        # PyTorch 2.13's __array__/__array_wrap__ trip NumPy 2 deprecation warnings
        warnings.simplefilter("ignore", DeprecationWarning)
        compare(numpy_interop)


def test_from_numpy_of_a_read_only_array_warns():
    ro = np.arange(3, dtype=np.float32)
    ro.flags.writeable = False
    with pytest.warns(UserWarning, match="The given NumPy array is not writable"):
        t = framework.from_numpy(ro)
    assert t.tolist() == [0.0, 1.0, 2.0]


# ---- 4. copying and pickling ---------------------------------------------------------------

def copy_and_pickle(torch, device):
    nn = torch.nn
    r = {}
    x = torch.tensor([[1.5, -2.0], [0.5, 4.0]])
    c = copy.copy(x)
    c.add_(1)                               # a shallow copy shares the data
    leaf = torch.ones(2, requires_grad=True)
    (leaf * 2).sum().backward()
    sc, dc = copy.copy(leaf), copy.deepcopy(leaf)
    nonleaf_copy = copy.copy(leaf * 2)
    r["tensor"] = (x, c is x, sc.requires_grad, sc.grad, sc.is_leaf,
                   sc.data_ptr() == leaf.data_ptr(), dc.grad, dc.requires_grad,
                   dc.data_ptr() == leaf.data_ptr(), nonleaf_copy.requires_grad,
                   nonleaf_copy.is_leaf, err(lambda: copy.deepcopy(leaf * 2)),
                   copy.deepcopy(x * 2))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(2, 2)
            self.b = nn.Linear(2, 2)
            self.b.weight = self.a.weight   # tied
            self.register_buffer("rm", torch.zeros(2))

    m = Net()
    m2 = copy.deepcopy(m)
    p = nn.Parameter(torch.ones(2))
    pc = copy.copy(p)
    r["module"] = (type(m2.a.weight).__name__, m2.a.weight is m2.b.weight,
                   m2.a.weight is m.a.weight, m2.a.weight.requires_grad, type(m2.rm).__name__,
                   len(list(m2.parameters())), type(pc).__name__,
                   pc.data_ptr() == p.data_ptr())
    lin = nn.Linear(2, 1)
    with torch.no_grad():
        lin.weight.copy_(torch.tensor([[0.5, -0.25]]))
        lin.bias.fill_(0.1)
    opt = torch.optim.Adam(lin.parameters(), lr=0.1)
    lin(torch.ones(1, 2)).sum().backward()
    opt.step()
    sd = copy.deepcopy(opt.state_dict())
    opt.step()                              # the copy does not move with the optimizer
    r["optim"] = (sd["state"][0]["exp_avg"], sd["state"][0]["step"],
                  sd["param_groups"][0]["lr"], sd["param_groups"][0]["params"],
                  opt.state_dict()["state"][0]["step"])
    pm = pickle.loads(pickle.dumps(nn.Sequential(nn.Linear(2, 2))))
    rg = pickle.loads(pickle.dumps(torch.ones(2, requires_grad=True)))
    r["pickle"] = (pickle.loads(pickle.dumps(x)), rg, rg.is_leaf,
                   pickle.loads(pickle.dumps(torch.Size([2, 3]))),
                   pickle.loads(pickle.dumps(torch.float16)) is torch.float16,
                   pickle.loads(pickle.dumps(torch.device("cpu"))),
                   type(pm[0].weight).__name__, type(pm).__name__)
    buf = io.BytesIO()
    torch.save({"a": 1, "b": [1.5, "s", None], "c": x, "d": (torch.Size([2]), torch.float64),
                "e": {"nested": torch.arange(3)}}, buf)
    buf.seek(0)
    r["save"] = torch.load(buf)
    w = torch.ones(2, requires_grad=True)
    d = w.data
    d.mul_(3)                               # writes through to w, without a graph
    r["data"] = (w.clone().detach().requires_grad, w.detach().clone().requires_grad,
                 w.clone().detach().is_leaf, w.detach(), d.requires_grad, d.is_leaf,
                 d.grad_fn is None, w.requires_grad)
    return r


def test_copy_and_pickle():
    compare(copy_and_pickle)


def data_write_after_save(torch, device):
    a = torch.ones(2, requires_grad=True)
    y = a * a                               # saves a for backward
    a.data.add_(1)                          # .data has its own version counter in PyTorch
    y.sum().backward()
    return a.grad, a._version


def test_data_write_after_save_for_backward():
    compare(data_write_after_save)


# ---- 5. printing ------------------------------------------------------------------------------

def printing(torch, device):
    nn = torch.nn
    r = {}
    r["basic"] = (repr(torch.tensor([[1.5, -2.0], [0.5, 4.0]])), str(torch.tensor([1, 2])),
                  repr(torch.tensor([True, False])), repr(torch.tensor(3.5)),
                  repr(torch.tensor([])), repr(torch.zeros(0, 3)),
                  repr(torch.tensor([1, 2], dtype=torch.int32)),
                  repr(torch.tensor([1.0], dtype=torch.float64)),
                  repr(torch.tensor([2], dtype=torch.uint8)),
                  repr(torch.tensor([1.5, 2.25], dtype=torch.float16)),
                  repr(torch.tensor([1.5], dtype=torch.bfloat16)),
                  repr(torch.tensor([1 + 2j, -0.5j])), repr(torch.tensor([1.0, 2.0, 3.0])))
    r["large"] = (repr(torch.arange(2000)), repr(torch.arange(2000.0).reshape(40, 50)))
    g = torch.ones(2, requires_grad=True)
    r["grad"] = (repr(g), repr(g * 2), repr(g.sum()), repr(nn.Parameter(torch.tensor([1.0, 2.0]))))
    r["special"] = (repr(torch.tensor([1e-8, 1e8])), repr(torch.tensor([1e10, 1.0])),
                    repr(torch.tensor([float("nan"), float("inf"), -float("inf"), 1.0])),
                    repr(torch.tensor([0.1, 1000.5])), repr(torch.tensor([-0.0, 1e-5, 123456.0])))
    try:
        torch.set_printoptions(precision=2, sci_mode=False, threshold=5, edgeitems=2,
                               linewidth=40)
        r["options"] = (repr(torch.arange(10.0) / 3), repr(torch.tensor([1e-8, 1e8])),
                        repr(torch.arange(24.0).reshape(4, 6) / 7))
        torch.set_printoptions(profile="short")
        short = repr(torch.tensor([1.123456789]))
        torch.set_printoptions(profile="full")
        full = repr(torch.arange(1100))
    finally:
        torch.set_printoptions(profile="default")
        torch.set_printoptions(sci_mode=None)
    r["profiles"] = (short, full[-40:], full.count("..."), repr(torch.arange(10.0) / 3),
                     repr(torch.arange(2000))[:30])

    class Block(nn.Module):
        def __init__(self, k):
            super().__init__()
            self.k = k
            self.inner = nn.Sequential(nn.Conv2d(1, 2, 3, padding=1), nn.ReLU(),
                                       nn.ModuleList([nn.Dropout(0.1), nn.LayerNorm(4)]))

        def extra_repr(self):
            return f"k={self.k}"

    lin = nn.Linear(2, 1)
    r["objects"] = (repr(torch.float32), str(torch.device("cpu")), repr(torch.device("cpu")),
                    str(torch.ones(1).device), repr(torch.Size([2, 3])), repr(Block(3)),
                    repr(torch.optim.Adam(lin.parameters(), lr=0.1)),
                    repr(torch.optim.SGD(lin.parameters(), lr=0.1, momentum=0.9)))
    return r


def test_printing():
    compare(printing)


# ---- 6. type queries and conversions -----------------------------------------------------

def type_queries(torch, device):
    x = torch.tensor([[1.5, -2.0, 3.0], [0.5, 4.0, -1.0]])
    bn = torch.nn.BatchNorm1d(2)
    p = torch.nn.Parameter(x.clone())
    r = {}
    r["is"] = (torch.is_tensor(x), torch.is_tensor(1.0), torch.is_tensor(p),
               torch.is_tensor(np.ones(1)), torch.is_floating_point(x),
               torch.is_floating_point(torch.tensor([1])), torch.is_complex(torch.tensor([1j])),
               torch.is_complex(x), err(lambda: torch.is_floating_point(1.0)),
               err(lambda: torch.is_complex(1.0)), isinstance(bn.weight, torch.Tensor),
               isinstance(bn.running_mean, torch.Tensor), isinstance(bn.weight, torch.nn.Parameter),
               isinstance(bn.running_mean, torch.nn.Parameter), type(x).__name__,
               type(p).__name__, type(bn.running_mean).__name__, isinstance(torch.tensor(1), int))
    r["type"] = (x.type(), torch.tensor([1]).type(), torch.tensor([True]).type(),
                 x.half().type(), x.double().type(), torch.tensor([1], dtype=torch.int8).type(),
                 x.bfloat16().type(), torch.tensor([1j]).type(), x.type(torch.DoubleTensor),
                 x.type(torch.float16), x.type(torch.__name__ + ".IntTensor"))
    r["to"] = (x.to(torch.tensor([1])), x.to("cpu", torch.float16), x.to(dtype=torch.int32),
               x.to(device=None, dtype=None) is x, x.to(torch.float32) is x, x.to("cpu") is x,
               x.to(torch.float32, copy=True) is x)
    r["casts"] = (x.double(), x.half(), x.long(), x.int(), x.bool(), x.abs().byte(), x.char(),
                  x.short(), x.float().bfloat16())
    g = torch.ones(2, requires_grad=True)
    r["cast_grad"] = (g.double().requires_grad, g.double().is_leaf, g.float() is g)
    torch.set_default_dtype(torch.float64)
    try:
        r["default"] = (torch.get_default_dtype(), torch.tensor([1.0]), torch.arange(3.0),
                        torch.zeros(2).dtype, torch.tensor([1]).dtype, torch.tensor(1j).dtype,
                        x.dtype, torch.ones(2).sum().item())
    finally:
        torch.set_default_dtype(torch.float32)
    r["after"] = (torch.get_default_dtype(), torch.tensor([1.0]).dtype)
    r["promotion"] = (torch.promote_types(torch.int32, torch.float16),
                      torch.promote_types(torch.uint8, torch.int8),
                      torch.promote_types(torch.bool, torch.int64),
                      torch.promote_types(torch.bfloat16, torch.float16),
                      torch.result_type(torch.tensor([1]), 1.0),
                      torch.result_type(torch.tensor([1], dtype=torch.int8), 1000),
                      torch.result_type(x, torch.tensor(1.0, dtype=torch.float64)),
                      torch.result_type(2, 3.0), torch.result_type(torch.tensor([True]), 2),
                      torch.can_cast(torch.float32, torch.int32),
                      torch.can_cast(torch.int32, torch.float32),
                      torch.can_cast(torch.complex64, torch.float64))
    f16 = torch.finfo(torch.float16)
    r["info"] = (f16.eps, f16.tiny, f16.max, f16.smallest_normal, torch.finfo(torch.float32).min,
                 torch.finfo(torch.bfloat16).eps, torch.finfo().eps,
                 torch.finfo(torch.float32).bits,
                 torch.finfo(torch.float64).resolution, torch.iinfo(torch.int8).min,
                 torch.iinfo(torch.int8).max, torch.iinfo(torch.uint8).max,
                 torch.iinfo(torch.int64).max, torch.iinfo(torch.int32).bits)
    r["dtypes"] = (torch.float == torch.float32, torch.double is torch.float64,
                   torch.long is torch.int64, torch.half is torch.float16,
                   torch.cfloat is torch.complex64, torch.float16.is_floating_point,
                   torch.int8.is_signed, torch.uint8.is_signed, torch.complex64.is_complex,
                   torch.float32.itemsize, torch.ones(1).device.type, torch.ones(1).device.index,
                   torch.device("cuda:1").index, str(torch.device("cuda", 0)),
                   torch.ones(1).is_cuda)
    return r


def test_type_queries():
    compare(type_queries)
