"""nn.Module and nn.Parameter against torch: registration, traversal order and names,
state_dict keys and load errors, device/dtype moves, hooks (forward, backward, state dict)
with their call order and gradients, printed module trees, copying and pickling."""
import copy
import pickle
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import framework as fw
import framework.nn as fnn
from tests.helpers import assert_close
from tests.nn.common import copy_state, fw_tensor, to_np

torch = pytest.importorskip("torch")
tnn = torch.nn

# Triton's interpreter computes masked-off lanes too (NumPy warns about their values)
pytestmark = pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning",
                                        "ignore:divide by zero:RuntimeWarning",
                                        "ignore:overflow encountered:RuntimeWarning")


# ---- toy models written once, built with either library ------------------------------------

def toy(nn, lib):
    """Classes of a small model tree for ``nn`` (framework.nn or torch.nn) and ``lib``
    (framework or torch): the same source builds the same tree in both."""

    class Leaf(nn.Module):
        def __init__(self, i, o, bias=True):
            super().__init__()
            self.i, self.o = i, o
            self.weight = nn.Parameter(lib.randn(o, i))
            if bias:
                self.bias = nn.Parameter(lib.zeros(o))
            else:
                self.register_parameter("bias", None)
            self.register_buffer("count", lib.zeros((), dtype=lib.int64))
            self.register_buffer("scratch", lib.zeros(o), persistent=False)

        def forward(self, x):
            y = x @ self.weight.t()
            return y if self.bias is None else y + self.bias

        def extra_repr(self):
            return f"in_features={self.i}, out_features={self.o}, bias={self.bias is not None}"

    class Act(nn.Module):
        def forward(self, x):
            return x * x

    class Multi(nn.Module):
        def extra_repr(self):
            return "first line\nsecond line"

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = Leaf(3, 4)
            self.act = Act()
            self.block = nn.Sequential(Leaf(4, 4, bias=False), Act(), Leaf(4, 2))
            self.register_buffer("stat", lib.ones(2))
            self.scale = nn.Parameter(lib.ones(1))
            self.multi = Multi()

        def forward(self, x):
            return self.block(self.act(self.enc(x))) * self.scale + self.stat

    return Leaf, Act, Net


F_Leaf, F_Act, F_Net = toy(fnn, fw)
# module-level names so that pickle finds the classes
F_Leaf.__qualname__, F_Act.__qualname__, F_Net.__qualname__ = "F_Leaf", "F_Act", "F_Net"
F_Multi = type(F_Net().multi)
F_Multi.__qualname__ = "F_Multi"
T_Leaf, T_Act, T_Net = toy(tnn, torch)


def pair(seed=0):
    """A framework Net holding the same values as a torch Net."""
    torch.manual_seed(seed)
    t, f = T_Net(), F_Net()
    copy_state(f, t)
    return f, t


def norm(text):
    """Messages and reprs name the library: compare them with that part made equal."""
    return str(text).replace("framework.", "torch.")


def raises_like(exc, f_fn, t_fn):
    """Both calls raise ``exc`` with the same message (up to the library's name)."""
    with pytest.raises(exc) as want:
        t_fn()
    with pytest.raises(exc) as got:
        f_fn()
    assert norm(got.value) == norm(want.value)
    return got.value


# ---- Parameter and Buffer --------------------------------------------------------------------

def test_parameter_shares_storage_and_is_leaf(device):
    x = fw.arange(6.0, device=device).reshape(2, 3)
    p = fnn.Parameter(x)
    assert isinstance(p, fw.Tensor) and isinstance(p, fnn.Parameter)
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    assert p.data_ptr() == x.data_ptr() and p.shape == (2, 3) and p.device == x.device
    with fw.no_grad():
        p.mul_(2)
    assert_close(x, np.arange(6.0).reshape(2, 3) * 2)
    # Parameter() is an empty float tensor; requires_grad=False is kept
    e = fnn.Parameter()
    assert e.shape == (0,) and e.dtype == fw.float32 and e.requires_grad
    q = fnn.Parameter(x, requires_grad=False)
    assert not q.requires_grad and type(q) is fnn.Parameter
    # made from a non-leaf: a leaf over the same data
    y = fw.ones(3, requires_grad=True) * 2
    r = fnn.Parameter(y)
    assert r.is_leaf and r.requires_grad and r.data_ptr() == y.data_ptr()


def test_parameter_ops_return_plain_tensors(device):
    p = fnn.Parameter(fw.ones(2, 3, device=device))
    for out in (p + 1, p * p, p.sum(), p.view(6), p[0], p.data, p.detach()):
        assert type(out) is fw.Tensor
    (p * 3).sum().backward()
    assert type(p.grad) is fw.Tensor
    assert_close(p.grad, np.full((2, 3), 3.0))


def test_parameter_repr_matches_torch():
    a = np.array([[1.5, -2.0, 3.25], [0.0, 1e-3, 7.0]], dtype=np.float32)
    assert repr(fnn.Parameter(fw.tensor(a))) == repr(tnn.Parameter(torch.tensor(a)))
    assert (repr(fnn.Parameter(fw.tensor(a), requires_grad=False))
            == repr(tnn.Parameter(torch.tensor(a), requires_grad=False)))
    assert repr(fnn.Parameter()) == repr(tnn.Parameter())
    assert repr(fnn.Parameter()).startswith("Parameter containing:\ntensor(")


def test_parameter_int_requires_grad_refused():
    with pytest.raises(RuntimeError, match="floating point"):
        tnn.Parameter(torch.ones(2, dtype=torch.int64))
    with pytest.raises(RuntimeError, match="floating point"):
        fnn.Parameter(fw.ones(2, dtype=fw.int64))
    p = fnn.Parameter(fw.ones(2, dtype=fw.int64), requires_grad=False)
    assert p.dtype == fw.int64 and not p.requires_grad


def test_parameter_deepcopy_and_pickle(device):
    p = fnn.Parameter(fw.tensor([1.0, 2.0, 3.0], device=device))
    p.grad = fw.ones(3, device=device)
    q = copy.deepcopy(p)
    assert type(q) is fnn.Parameter and q.requires_grad and q.device == p.device
    assert q.data_ptr() != p.data_ptr()
    assert q.grad is None     # as torch: a Parameter's deepcopy does not copy .grad
    assert_close(q, [1.0, 2.0, 3.0])
    memo = {}
    assert copy.deepcopy([p, p], memo)[0] is memo[id(p)]
    r = pickle.loads(pickle.dumps(fnn.Parameter(fw.tensor([4.0, 5.0]), requires_grad=False)))
    assert type(r) is fnn.Parameter and not r.requires_grad
    assert_close(r, [4.0, 5.0])


def test_buffer_marker():
    class M(fnn.Module):
        def __init__(self):
            super().__init__()
            self.a = fnn.Buffer(fw.ones(2))
            self.b = fnn.Buffer(fw.zeros(3), persistent=False)

    class T(tnn.Module):
        def __init__(self):
            super().__init__()
            self.a = tnn.Buffer(torch.ones(2))
            self.b = tnn.Buffer(torch.zeros(3), persistent=False)

    m, t = M(), T()
    assert [n for n, _ in m.named_buffers()] == [n for n, _ in t.named_buffers()] == ["a", "b"]
    assert list(m.state_dict()) == list(t.state_dict()) == ["a"]
    assert isinstance(fnn.Buffer(fw.ones(1)), fnn.Buffer)
    assert not isinstance(fw.ones(1), fnn.Buffer)
    # a plain tensor assigned to a buffer name stays a buffer, keeping persistence
    m.b = fw.ones(3)
    assert "b" in m._buffers and "b" in m._non_persistent_buffers_set
    with pytest.raises(TypeError, match="as buffer 'a'"):
        m.a = 3


# ---- registration and traversal ------------------------------------------------------------

def test_names_and_order_match_torch():
    f, t = pair()
    for fn in ("named_parameters", "named_buffers", "named_children", "named_modules"):
        assert [n for n, _ in getattr(f, fn)()] == [n for n, _ in getattr(t, fn)()], fn
    for kw in (dict(prefix="model"), dict(recurse=False), dict(prefix="m", recurse=False)):
        assert ([n for n, _ in f.named_parameters(**kw)]
                == [n for n, _ in t.named_parameters(**kw)])
        assert [n for n, _ in f.named_buffers(**kw)] == [n for n, _ in t.named_buffers(**kw)]
    assert [n for n, _ in f.named_modules(prefix="root")] == [
        n for n, _ in t.named_modules(prefix="root")]
    assert list(f.state_dict()) == list(t.state_dict())
    assert len(list(f.parameters())) == len(list(t.parameters())) == 6
    assert [type(m).__name__ for m in f.modules()] == [type(m).__name__ for m in t.modules()]
    assert [type(m).__name__ for m in f.children()] == [type(m).__name__ for m in t.children()]
    assert all(type(p) is fnn.Parameter for p in f.parameters())
    # the values were copied by name: the two nets compute the same function
    x = np.random.default_rng(1).standard_normal((5, 3)).astype(np.float32)
    assert_close(f(fw.tensor(x)), to_np(t(torch.tensor(x))), rtol=1e-5, atol=1e-5)


def test_weight_tying_lists_shared_parameter_once():
    def build(nn, lib):
        class Tied(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = nn.Linear(3, 3)
                self.b = nn.Linear(3, 3)
                self.b.weight = self.a.weight
                self.c = self.a            # the same module twice

        return Tied()

    f, t = build(fnn, fw), build(tnn, torch)
    assert f.b.weight is f.a.weight
    for kw in ({}, dict(remove_duplicate=False)):
        assert ([n for n, _ in f.named_parameters(**kw)]
                == [n for n, _ in t.named_parameters(**kw)])
        assert ([n for n, _ in f.named_modules(**kw)] == [n for n, _ in t.named_modules(**kw)])
    assert list(f.state_dict()) == list(t.state_dict())
    assert len(list(f.parameters())) == 3
    assert [n for n, _ in f.named_children()] == ["a", "b"]


def test_attribute_assignment_and_deletion():
    f, t = pair()
    for m in (f, t):
        m.extra = 5                  # a plain attribute
        assert "extra" in m.__dict__
        del m.scale
        assert "scale" not in dict(m.named_parameters())
        del m.stat
        assert "stat" not in dict(m.named_buffers())
        del m.act
        assert "act" not in dict(m.named_children())
        m.enc.bias = None            # a registered parameter may become None
        assert m.enc.bias is None and "enc.bias" not in m.state_dict()
        m.block = None
        assert m.block is None and "block" in m._modules
    assert list(f.state_dict()) == list(t.state_dict())
    # a module replaces an attribute of the same name, a parameter replaces a buffer
    for m, nn, lib in ((f, fnn, fw), (t, tnn, torch)):
        m.enc.count = nn.Parameter(lib.ones(1))
        assert "count" in m.enc._parameters and "count" not in m.enc._buffers
        m.extra = nn.Identity()
        assert "extra" in m._modules and "extra" not in m.__dict__
    raises_like(AttributeError, lambda: f.missing, lambda: t.missing)
    raises_like(AttributeError, lambda: delattr(f, "missing"), lambda: delattr(t, "missing"))


def test_registration_errors_match_torch():
    f, t = pair()
    fp, tp = fnn.Parameter(fw.ones(1)), tnn.Parameter(torch.ones(1))
    raises_like(TypeError, lambda: setattr(f.enc, "weight", fw.ones(4, 3)),
                lambda: setattr(t.enc, "weight", torch.ones(4, 3)))
    raises_like(TypeError, lambda: setattr(f, "enc", 3), lambda: setattr(t, "enc", 3))
    raises_like(TypeError, lambda: setattr(f, "stat", "x"), lambda: setattr(t, "stat", "x"))
    for name, exc in ((".a", KeyError), ("", KeyError), ("enc", KeyError), (1, TypeError)):
        raises_like(exc, lambda: f.register_parameter(name, fp),
                    lambda: t.register_parameter(name, tp))
        raises_like(exc, lambda: f.register_buffer(name, fw.ones(1)),
                    lambda: t.register_buffer(name, torch.ones(1)))
    for name, exc in (("a.b", KeyError), ("", KeyError), ("scale", KeyError), (1, TypeError)):
        raises_like(exc, lambda: f.add_module(name, F_Act()), lambda: t.add_module(name, T_Act()))
    raises_like(TypeError, lambda: f.add_module("z", 3), lambda: t.add_module("z", 3))
    raises_like(TypeError, lambda: f.register_parameter("z", fw.ones(1)),
                lambda: t.register_parameter("z", torch.ones(1)))
    raises_like(TypeError, lambda: f.register_buffer("z", 3), lambda: t.register_buffer("z", 3))
    nonleaf_f = fnn.Parameter(fw.ones(2)) * 2
    nonleaf_t = tnn.Parameter(torch.ones(2)) * 2
    nonleaf_f.__class__ = fnn.Parameter
    nonleaf_t.__class__ = tnn.Parameter
    raises_like(ValueError, lambda: f.register_parameter("z", nonleaf_f),
                lambda: t.register_parameter("z", nonleaf_t))

    class Early(fnn.Module):
        def __init__(self, what):
            if what == "p":
                self.w = fnn.Parameter(fw.ones(1))
            elif what == "m":
                self.m = F_Act()
            else:
                self.register_buffer("b", fw.ones(1))

    class TEarly(tnn.Module):
        def __init__(self, what):
            if what == "p":
                self.w = tnn.Parameter(torch.ones(1))
            elif what == "m":
                self.m = T_Act()
            else:
                self.register_buffer("b", torch.ones(1))

    for what in "pmb":
        raises_like(AttributeError, lambda: Early(what), lambda: TEarly(what))
    raises_like(TypeError, lambda: fnn.Module(3), lambda: tnn.Module(3))
    raises_like(TypeError, lambda: fnn.Module(foo=3), lambda: tnn.Module(foo=3))
    raises_like(NotImplementedError, lambda: fnn.Module()(1), lambda: tnn.Module()(1))


def test_get_submodule_parameter_buffer():
    f, t = pair()
    assert f.get_submodule("") is f
    assert f.get_submodule("block.2") is f.block[2]
    assert f.get_parameter("block.2.bias") is f.block[2].bias
    assert f.get_parameter("scale") is f.scale
    assert f.get_buffer("enc.count") is f.enc.count
    assert f.get_buffer("enc.scratch") is f.enc.scratch
    for target in ("nope", "enc.nope", "enc.weight", "block.7"):
        raises_like(AttributeError, lambda: f.get_submodule(target),
                    lambda: t.get_submodule(target))
    for target in ("enc.nope", "enc.count", "x.weight", "enc"):
        raises_like(AttributeError, lambda: f.get_parameter(target),
                    lambda: t.get_parameter(target))
    for target in ("enc.nope", "enc.weight", "stat.x"):
        raises_like(AttributeError, lambda: f.get_buffer(target), lambda: t.get_buffer(target))
    new = F_Act()
    f.set_submodule("block.1", new)
    assert f.block[1] is new
    f.register_module("late", F_Act())
    assert "late" in dict(f.named_children())


def test_train_eval_requires_grad_apply_zero_grad(device):
    f, t = pair()
    assert f.training and f.eval() is f
    assert not any(m.training for m in f.modules())
    f.block.train()
    t.eval()
    t.block.train()
    assert [m.training for m in f.modules()] == [m.training for m in t.modules()]
    assert f.block[1].training and not f.enc.training
    raises_like(ValueError, lambda: f.train("yes"), lambda: t.train("yes"))
    f.train()
    assert f.requires_grad_(False) is f and not any(p.requires_grad for p in f.parameters())
    f.requires_grad_()
    visited_f, visited_t = [], []
    assert f.apply(lambda m: visited_f.append(type(m).__name__)) is f
    t.apply(lambda m: visited_t.append(type(m).__name__))
    assert visited_f == visited_t
    f.to(device)
    x = fw.ones(2, 3, device=device)
    f(x).sum().backward()
    assert all(p.grad is not None for p in f.parameters())
    f.zero_grad(set_to_none=False)
    for p in f.parameters():
        assert_close(p.grad, np.zeros(tuple(p.shape)))
        assert not p.grad.requires_grad
    f.zero_grad()
    assert all(p.grad is None for p in f.parameters())


def test_dir_lists_members():
    f, t = pair()
    d = dir(f)
    for name in ("enc", "block", "scale", "stat", "forward", "training", "state_dict"):
        assert name in d
    assert d == sorted(d) and not any(k[0].isdigit() for k in dir(f.block))
    assert "0" in f.block._modules and "0" not in dir(f.block)
    # the instance-level names are the same as torch's
    public = {n for n in dir(t) if not n.startswith("_")}
    api = {n for n in dir(tnn.Module) if not n.startswith("_")}
    assert {n for n in d if not n.startswith("_")} - api == public - api


# ---- device and dtype ------------------------------------------------------------------------

def test_to_dtype_changes_only_floats_keeps_parameter_objects(device):
    f, _ = pair()
    params = list(f.parameters())
    f(fw.ones(1, 3)).sum().backward()
    assert f.to(device, fw.float64) is f
    assert [id(p) for p in f.parameters()] == [id(p) for p in params]
    for p in f.parameters():
        assert type(p) is fnn.Parameter and p.dtype == fw.float64 and p.requires_grad
        assert p.device.type == device and p.grad.dtype == fw.float64
        assert p.grad.device.type == device and p.is_leaf
    assert f.enc.count.dtype == fw.int64 and f.enc.count.device.type == device
    assert f.enc.scratch.dtype == fw.float64 and f.stat.dtype == fw.float64
    y = f(fw.ones(2, 3, dtype=fw.float64, device=device))
    assert y.dtype == fw.float64
    for meth, dt in (("float", fw.float32), ("half", fw.float16), ("bfloat16", fw.bfloat16),
                     ("double", fw.float64)):
        assert getattr(f, meth)() is f
        assert all(p.dtype == dt for p in f.parameters()) and f.enc.count.dtype == fw.int64
    f.to(dtype=fw.float32)
    assert f.scale.dtype == fw.float32
    with pytest.raises(TypeError) as want:
        tnn.Linear(2, 2).to(torch.int32)
    with pytest.raises(TypeError) as got:
        f.to(fw.int32)
    assert norm(got.value) == norm(want.value)
    with pytest.raises(TypeError):
        f.to(fw.ones(1, dtype=fw.int64))
    # to(tensor) takes its dtype and device; type() converts every tensor
    f.to(fw.ones(1, dtype=fw.float64, device=device))
    assert f.scale.dtype == fw.float64 and f.scale.device.type == device
    f.type(fw.float32)
    assert f.enc.count.dtype == fw.float32 and f.scale.dtype == fw.float32


@pytest.mark.skipif(not fw.cuda.is_available(), reason="needs the cuda device")
def test_device_moves():
    f, t = pair()
    f(fw.ones(1, 3)).sum().backward()
    w = f.enc.weight
    assert f.cuda() is f and w.device.type == "cuda" and w.grad.device.type == "cuda"
    assert f.enc.count.device.type == "cuda" and f.enc.weight is w
    x = np.random.default_rng(2).standard_normal((4, 3)).astype(np.float32)
    assert_close(f(fw.tensor(x, device="cuda")), to_np(t(torch.tensor(x))), rtol=1e-5,
                 atol=1e-5)
    assert f.cpu() is f and w.device.type == "cpu" and w.grad.device.type == "cpu"
    f.to("cuda", non_blocking=True)
    assert w.device.type == "cuda"
    f.to_empty(device="cpu")
    assert w.device.type == "cpu" and f.enc.count.dtype == fw.int64


# ---- state dict ------------------------------------------------------------------------------

def test_state_dict_values_and_options():
    f, t = pair()
    sd = f.state_dict()
    assert isinstance(sd, OrderedDict) and list(sd) == list(t.state_dict())
    assert all(type(v) is fw.Tensor and not v.requires_grad for v in sd.values())
    assert sd["enc.weight"].data_ptr() == f.enc.weight.data_ptr()
    kv = f.state_dict(keep_vars=True)
    assert kv["enc.weight"] is f.enc.weight and kv["enc.count"] is f.enc.count
    assert list(f.state_dict(prefix="pre.")) == list(t.state_dict(prefix="pre."))
    assert sd._metadata == t.state_dict()._metadata
    dest = OrderedDict()
    assert f.state_dict(destination=dest) is dest and list(dest) == list(sd)
    with pytest.warns(FutureWarning):
        old = f.state_dict(None, "p.")
    assert list(old) == ["p." + k for k in sd]
    for k, v in t.state_dict().items():
        assert_close(sd[k], to_np(v))


def test_load_torch_state_dict_strict():
    torch.manual_seed(3)
    t = T_Net()
    f = F_Net()
    res = f.load_state_dict({k: fw.tensor(v.numpy()) for k, v in t.state_dict().items()})
    assert res == ([], []) and repr(res) == "<All keys matched successfully>"
    assert repr(res) == repr(t.load_state_dict(t.state_dict()))
    for k, v in t.state_dict().items():
        assert_close(f.state_dict()[k], v.numpy())
    assert type(f.enc.weight) is fnn.Parameter


def test_load_state_dict_errors_match_torch():
    f, t = pair()
    fsd, tsd = f.state_dict(), t.state_dict()
    for edit in ("missing", "unexpected", "both", "shape", "nonmodule_key", "not_tensor"):
        fd, td = OrderedDict(fsd), OrderedDict(tsd)
        if edit in ("missing", "both"):
            del fd["enc.bias"], td["enc.bias"]
            del fd["block.2.count"], td["block.2.count"]
        if edit in ("unexpected", "both"):
            fd["enc.extra"], td["enc.extra"] = fw.ones(1), torch.ones(1)
            fd["nope.weight"], td["nope.weight"] = fw.ones(1), torch.ones(1)
        if edit == "shape":
            fd["block.0.weight"], td["block.0.weight"] = fw.ones(3, 4), torch.ones(3, 4)
            fd["scale"], td["scale"] = fw.ones(2), torch.ones(2)
        if edit == "nonmodule_key":
            fd["scale.x"], td["scale.x"] = fw.ones(1), torch.ones(1)
        if edit == "not_tensor":
            fd["scale"], td["scale"] = [1.0], [1.0]
        e = raises_like(RuntimeError, lambda: f.load_state_dict(fd),
                        lambda: t.load_state_dict(td))
        assert str(e).startswith("Error(s) in loading state_dict for Net:\n\t")
        if edit in ("missing", "unexpected", "both", "nonmodule_key"):
            rf = f.load_state_dict(fd, strict=False)
            rt = t.load_state_dict(td, strict=False)
            assert rf.missing_keys == rt.missing_keys
            assert rf.unexpected_keys == rt.unexpected_keys
            assert repr(rf) == repr(rt)
    raises_like(TypeError, lambda: f.load_state_dict([1]), lambda: t.load_state_dict([1]))
    # a 1-element vector loads into a 0-d parameter (old checkpoints)
    m = fnn.Module()
    m.p = fnn.Parameter(fw.tensor(1.0))
    m.load_state_dict({"p": fw.tensor([5.0])})
    assert_close(m.p, np.array(5.0))


def test_load_state_dict_size_mismatch_text():
    f = fnn.Linear(3, 2)
    with pytest.raises(RuntimeError) as e:
        f.load_state_dict({"weight": fw.ones(2, 4), "bias": fw.ones(2)})
    assert str(e.value) == (
        "Error(s) in loading state_dict for Linear:\n\tsize mismatch for weight: copying a "
        "param with shape framework.Size([2, 4]) from checkpoint, the shape in current model "
        "is framework.Size([2, 3]).")


def test_load_state_dict_assign_and_copy(device):
    f = F_Net().to(device)
    w = f.enc.weight
    new = {k: v.clone() + 1 if v.dtype.is_floating_point else v.clone()
           for k, v in f.state_dict().items()}
    f.load_state_dict(new)
    assert f.enc.weight is w
    assert_close(w, to_np(new["enc.weight"]))
    f.enc.weight.requires_grad_(False)
    f.load_state_dict(new, assign=True)
    assert f.enc.weight is not w and type(f.enc.weight) is fnn.Parameter
    assert f.enc.weight.data_ptr() == new["enc.weight"].data_ptr()
    assert not f.enc.weight.requires_grad and f.scale.requires_grad
    assert f.enc.count is new["enc.count"]


def test_load_from_state_dict_override_and_hooks():
    log = {"f": [], "t": []}

    def build(nn, lib, key):
        class Versioned(nn.Module):
            _version = 2

            def __init__(self):
                super().__init__()
                self.w = nn.Parameter(lib.zeros(2))
                self.register_buffer("num_batches_tracked", lib.tensor(0))

            def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict,
                                      missing_keys, unexpected_keys, error_msgs):
                # as BatchNorm: old checkpoints lack the counter
                version = local_metadata.get("version", None)
                if (version is None or version < 2) and prefix + "num_batches_tracked" \
                        not in state_dict:
                    state_dict[prefix + "num_batches_tracked"] = lib.tensor(7)
                log[key].append(("load", prefix, version))
                super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                              missing_keys, unexpected_keys, error_msgs)

        class Outer(nn.Module):
            def __init__(self):
                super().__init__()
                self.v = Versioned()

        return Outer()

    f, t = build(fnn, fw, "f"), build(tnn, torch, "t")
    for m, k, lib in ((f, "f", fw), (t, "t", torch)):
        m.register_state_dict_pre_hook(lambda mod, prefix, kv, k=k:
                                       log[k].append(("pre", prefix, kv)))

        def post(mod, sd, prefix, meta, k=k, lib=lib):
            log[k].append(("post", prefix, list(sd)))
            sd["extra"] = lib.ones(1)
            return sd

        m._register_state_dict_hook(post)
        m.v.register_load_state_dict_pre_hook(
            lambda mod, sd, prefix, *a, k=k: log[k].append(("lpre", prefix, sorted(sd))))
        m.register_load_state_dict_post_hook(
            lambda mod, inc, k=k: log[k].append(("lpost", list(inc.missing_keys),
                                                 list(inc.unexpected_keys))))
        sd = m.state_dict()
        assert "extra" in sd
        del sd["extra"]
        m.load_state_dict({"v.w": lib.ones(2)})      # no metadata: version None
        assert int(m.v.num_batches_tracked) == 7
        sd2 = m.state_dict()
        del sd2["extra"]
        m.load_state_dict(sd2)
    assert log["f"] == log["t"]

    def bad_post(mod, sd, prefix, meta):
        return sd
    g = fnn.Linear(2, 2)
    g.register_state_dict_post_hook(bad_post)
    with pytest.raises(RuntimeError, match="state_dict post-hook must return None"):
        g.state_dict()


def test_extra_state_round_trip():
    class E(fnn.Module):
        def __init__(self):
            super().__init__()
            self.note = "a"

        def get_extra_state(self):
            return {"note": self.note}

        def set_extra_state(self, state):
            self.note = state["note"]

    m = E()
    sd = m.state_dict()
    assert list(sd) == ["_extra_state"]
    m.note = "b"
    m.load_state_dict(sd)
    assert m.note == "a"
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "_extra_state"'):
        m.load_state_dict({})


# ---- forward hooks ---------------------------------------------------------------------------

def _hook_run(nn, lib, log):
    """Registers a set of forward (pre-)hooks on a toy module, runs it, removes some, runs
    again; ``log`` records every call with what the hook saw."""

    class Add(nn.Module):
        def forward(self, x, y=0, *, scale=1):
            return (x + y) * scale

    m = Add()

    def val(v):
        return float(v.sum()) if hasattr(v, "sum") else v

    def pre_a(mod, args):
        log.append(("pre_a", [val(a) for a in args]))
        return (args[0] + 1,) + args[1:]

    def pre_kw(mod, args, kwargs):
        log.append(("pre_kw", [val(a) for a in args],
                    sorted((k, val(v)) for k, v in kwargs.items())))
        return args, dict(kwargs, scale=2)

    def pre_single(mod, args):
        log.append(("pre_single", len(args)))
        return args[0]                  # a non-tuple result becomes the only argument

    def fwd_a(mod, args, out):
        log.append(("fwd_a", [val(a) for a in args], val(out)))
        return out * 10

    def fwd_kw(mod, args, kwargs, out):
        log.append(("fwd_kw", sorted((k, val(v)) for k, v in kwargs.items()), val(out)))

    def fwd_first(mod, args, out):
        log.append(("fwd_first", val(out)))

    h1 = m.register_forward_pre_hook(pre_a)
    m.register_forward_pre_hook(pre_kw, with_kwargs=True)
    m.register_forward_hook(fwd_a)
    h4 = m.register_forward_hook(fwd_kw, with_kwargs=True)
    m.register_forward_hook(fwd_first, prepend=True)
    x = lib.ones(3)
    log.append(("out", val(m(x, y=lib.ones(3), scale=3))))
    h1.remove()
    h4.remove()
    log.append(("out", val(m(x))))
    with m.register_forward_pre_hook(pre_single, prepend=True):
        log.append(("out", val(m(x, lib.ones(3)))))
    log.append(("out", val(m(x))))


def test_forward_hooks_order_args_and_removal():
    lf, lt = [], []
    _hook_run(fnn, fw, lf)
    _hook_run(tnn, torch, lt)
    assert lf == lt and len(lf) > 10


def test_forward_hook_always_call_and_errors():
    for nn, lib, log in ((fnn, fw, []), (tnn, torch, [])):
        class Boom(nn.Module):
            def forward(self, x):
                raise ValueError("boom")

        m = Boom()
        m.register_forward_hook(lambda mod, a, o: log.append(("plain", o)))
        m.register_forward_hook(lambda mod, a, o: log.append(("always", o)), always_call=True)
        with pytest.raises(ValueError, match="boom"):
            m(lib.ones(1))
        assert log == [("always", None)]
        m2 = nn.Identity()
        m2.register_forward_pre_hook(lambda mod, a, k: 5, with_kwargs=True)
        with pytest.raises(RuntimeError, match="forward pre-hook must return None or a tuple"):
            m2(lib.ones(1))


def test_global_forward_hooks():
    from framework.nn.modules import module as fmod
    from torch.nn.modules import module as tmod
    logs = []
    for mod, nn, lib in ((fmod, fnn, fw), (tmod, tnn, torch)):
        log = []
        net = nn.Sequential(nn.Identity(), nn.Identity())
        h1 = mod.register_module_forward_pre_hook(
            lambda m, a: log.append(("pre", type(m).__name__)))
        h2 = mod.register_module_forward_hook(
            lambda m, a, o: log.append(("fwd", type(m).__name__)))
        net[0].register_forward_hook(lambda m, a, o: log.append(("local", type(m).__name__)))
        try:
            net(lib.ones(1))
        finally:
            h1.remove()
            h2.remove()
        net(lib.ones(1))
        logs.append(log)
    assert logs[0] == logs[1] and len(logs[0]) == 8


# ---- backward hooks --------------------------------------------------------------------------

def _bw_model(nn, lib):
    class Two(nn.Module):
        """Two tensor inputs and a non-tensor one; a tuple of two outputs."""

        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(lib.linspace(-1.0, 2.0, 12).reshape(3, 4))

        def forward(self, a, b, k):
            h = a @ self.w
            return h * b * k, (h.sum(1) ** 2)

    return Two()


def _grads(g):
    return [None if x is None else to_np(x) for x in g]


def _bw_run(nn, lib, device, b_requires_grad, log, edit=False):
    m = _bw_model(nn, lib)
    if lib is fw:
        m.to(device)
    rng = np.random.default_rng(5)
    a_np = rng.standard_normal((2, 3)).astype(np.float32)
    b_np = rng.standard_normal((2, 4)).astype(np.float32)
    if lib is fw:
        a = fw_tensor(a_np, device, requires_grad=True)
        b = fw_tensor(b_np, device, requires_grad=b_requires_grad)
    else:
        a = torch.tensor(a_np, requires_grad=True)
        b = torch.tensor(b_np, requires_grad=b_requires_grad)

    def pre(mod, grad_output):
        log.append(("pre", _grads(grad_output)))
        if edit:
            return (grad_output[0] * 2, grad_output[1])

    def hook(mod, grad_input, grad_output):
        log.append(("hook", _grads(grad_input), _grads(grad_output)))
        if edit:
            return (grad_input[0] * 3,) + tuple(grad_input[1:])

    m.register_full_backward_pre_hook(pre)
    m.register_full_backward_hook(hook)
    y1, y2 = m(a, b, 2.0)
    (y1.sum() + (y2 * y2).sum()).backward()
    log.append(("a.grad", to_np(a.grad)))
    log.append(("b.grad", None if b.grad is None else to_np(b.grad)))
    log.append(("w.grad", to_np(m.w.grad)))


def _same_log(lf, lt):
    assert len(lf) == len(lt)
    for ef, et in zip(lf, lt):
        assert type(ef) is type(et) and ef[0] == et[0]
        flat_f = [x for part in ef[1:] for x in (part if isinstance(part, list) else [part])]
        flat_t = [x for part in et[1:] for x in (part if isinstance(part, list) else [part])]
        assert len(flat_f) == len(flat_t), ef[0]
        for xf, xt in zip(flat_f, flat_t):
            assert (xf is None) == (xt is None), ef[0]
            if xf is not None:
                np.testing.assert_allclose(xf, xt, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("b_requires_grad", [True, False])
@pytest.mark.parametrize("edit", [False, True])
def test_full_backward_hooks_match_torch(device, b_requires_grad, edit):
    lf, lt = [], []
    _bw_run(fnn, fw, device, b_requires_grad, lf, edit)
    _bw_run(tnn, torch, device, b_requires_grad, lt, edit)
    assert [e[0] for e in lf] == ["pre", "hook", "a.grad", "b.grad", "w.grad"]
    _same_log(lf, lt)


def test_full_backward_hook_no_input_requires_grad(device):
    logs = []
    for nn, lib in ((fnn, fw), (tnn, torch)):
        log = []
        m = nn.Linear(3, 2)
        with lib.no_grad():
            m.weight.copy_(lib.ones(2, 3))
        if lib is fw:
            m.to(device)
        m.register_full_backward_hook(lambda mod, gi, go: log.append((_grads(gi), _grads(go))))
        x = lib.ones(4, 3) if lib is torch else fw.ones(4, 3, device=device)
        with pytest.warns(UserWarning, match="no inputs require gradients"):
            m(x).sum().backward()
        logs.append(log)
    _same_log([("h",) + e for e in logs[0]], [("h",) + e for e in logs[1]])
    assert logs[0][0][0] == [None]


def test_backward_hook_errors():
    m = fnn.Linear(2, 2)
    m.register_full_backward_hook(lambda *a: None)
    with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full"):
        m.register_backward_hook(lambda *a: None)
    m = fnn.Linear(2, 2)
    m.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
    with pytest.raises(RuntimeError, match="Backward hook returned an invalid number of "
                                           "grad_input, got 2, but expected 1"):
        m(fw.ones(1, 2, requires_grad=True)).sum().backward()


def test_backward_hooks_through_sequential(device):
    """Hooks on nested modules fire innermost-last in backward, as torch's."""
    logs = []
    for nn, lib in ((fnn, fw), (tnn, torch)):
        log = []
        torch.manual_seed(0)
        t = tnn.Sequential(tnn.Linear(3, 4), tnn.Tanh() if hasattr(fnn, "Tanh") else
                           tnn.Identity(), tnn.Linear(4, 2))
        m = t if lib is torch else fnn.Sequential(
            fnn.Linear(3, 4), fnn.Tanh() if hasattr(fnn, "Tanh") else fnn.Identity(),
            fnn.Linear(4, 2))
        if lib is fw:
            copy_state(m, t)
            m.to(device)
        for name, sub in m.named_modules():
            sub.register_full_backward_hook(
                lambda mod, gi, go, name=name: log.append((name, _grads(gi), _grads(go))))
            sub.register_full_backward_pre_hook(
                lambda mod, go, name=name: log.append(("pre" + name, _grads(go))))
        x_np = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
        x = torch.tensor(x_np, requires_grad=True) if lib is torch else fw_tensor(
            x_np, device, requires_grad=True)
        m(x).sum().backward()
        logs.append(log)
    assert [e[0] for e in logs[0]] == [e[0] for e in logs[1]]
    _same_log(logs[0], logs[1])


# ---- printing --------------------------------------------------------------------------------

def test_repr_matches_torch():
    f, t = pair()
    assert repr(f) == repr(t)
    assert str(f) == str(t)
    assert repr(f).startswith("Net(\n  (enc): Leaf(in_features=3, out_features=4, bias=True)\n")
    assert "  (multi): Multi(\n    first line\n    second line\n  )\n" in repr(f)
    assert repr(fnn.Module()) == repr(tnn.Module()) == "Module()"
    for m, mt in ((f.block, t.block), (f.act, t.act), (f.multi, t.multi)):
        assert repr(m) == repr(mt)


def test_repr_of_nested_containers_matches_torch():
    def build(nn, lib):
        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(4, 4)
                self.inner = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])

        class Top(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = nn.ModuleList([Block() for _ in range(3)] + [nn.Linear(4, 2)])
                self.heads = nn.ModuleDict({"a": nn.Linear(2, 1, bias=False),
                                            "b": nn.Identity()})
                self.seq = nn.Sequential(OrderedDict(first=nn.Linear(2, 3), last=nn.Identity()))
                self.params = nn.ParameterList([nn.Parameter(lib.ones(2, 3)), lib.zeros(4)])
                self.pdict = nn.ParameterDict({"x": nn.Parameter(lib.ones(5))})
                self.none = None
                self.register_module("empty", nn.Sequential())

        return Top()

    f, t = build(fnn, fw), build(tnn, torch)
    assert norm(repr(f)) == repr(t)
    assert "(0-2): 3 x Block(" in repr(f)


# ---- copying and pickling ------------------------------------------------------------------

def _same_values(a, b):
    sa, sb = a.state_dict(), b.state_dict()
    assert list(sa) == list(sb)
    for k in sa:
        assert_close(sb[k], to_np(sa[k]))


def test_deepcopy_module_keeps_structure_and_tying(device):
    f, _ = pair()
    f.tied = F_Leaf(3, 4)
    f.tied.weight = f.enc.weight
    f.to(device)
    f.register_forward_hook(_count_hook)
    g = copy.deepcopy(f)
    assert type(g) is F_Net and g is not f
    _same_values(f, g)
    assert g.enc.weight is not f.enc.weight and type(g.enc.weight) is fnn.Parameter
    assert g.enc.weight.data_ptr() != f.enc.weight.data_ptr()
    assert g.tied.weight is g.enc.weight        # tying survives the copy
    assert g.enc.weight.device.type == device
    assert len(g._forward_hooks) == 1
    with fw.no_grad():
        g.enc.weight.add_(1)
    assert not np.allclose(to_np(g.enc.weight), to_np(f.enc.weight))
    assert [n for n, _ in g.named_parameters()] == [n for n, _ in f.named_parameters()]


def _count_hook(mod, args, out):
    return None


def _pre_hook(mod, args):
    return None


def test_pickle_module_round_trip(device):
    f, t = pair()
    f.tied = F_Leaf(3, 4)
    f.tied.weight = f.enc.weight
    f.to(device).eval()
    f.register_forward_pre_hook(_pre_hook)
    g = pickle.loads(pickle.dumps(f))
    _same_values(f, g)
    assert g.tied.weight is g.enc.weight and not g.training
    assert type(g.block) is fnn.Sequential and len(g._forward_pre_hooks) == 1
    x = np.random.default_rng(4).standard_normal((2, 3)).astype(np.float32)
    assert_close(g(fw_tensor(x, device)), to_np(f(fw_tensor(x, device))))


def test_setstate_fills_missing_hook_dicts():
    m = fnn.Linear(2, 2)
    state = dict(m.__dict__)
    del state["_forward_pre_hooks_with_kwargs"], state["_state_dict_pre_hooks"]
    n = fnn.Linear.__new__(fnn.Linear)
    n.__setstate__(state)
    assert n._forward_pre_hooks_with_kwargs == {} and n._state_dict_pre_hooks == {}
    n(fw.ones(1, 2))


def test_registration_hooks_and_deprecated_backward_hook():
    from framework.nn.modules import module as fmod
    from torch.nn.modules import module as tmod
    logs = []
    for mod, nn, lib in ((fmod, fnn, fw), (tmod, tnn, torch)):
        log = []
        hs = [mod.register_module_parameter_registration_hook(
                  lambda m, n, p: log.append(("param", n))),
              mod.register_module_buffer_registration_hook(
                  lambda m, n, b: log.append(("buffer", n))),
              mod.register_module_module_registration_hook(
                  lambda m, n, s: log.append(("module", n)))]
        try:
            nn.Sequential(nn.Linear(2, 2), nn.Identity())
            m = nn.Module()
            m.register_buffer("b", lib.ones(1))
        finally:
            for h in hs:
                h.remove()
        nn.Linear(2, 2)             # removed: no more calls

        class Mul(nn.Module):
            def forward(self, x, y):
                return x * y

        m = Mul()
        m.register_backward_hook(lambda mod, gi, go: log.append(
            ("bw", [None if g is None else g.tolist() for g in gi], [g.tolist() for g in go])))
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = lib.tensor([3.0, 4.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m(x, y).sum().backward()
        logs.append(log)
    assert logs[0] == logs[1]
    assert ("bw", [[3.0, 4.0], [1.0, 2.0]], [[1.0, 1.0]]) in logs[0]
