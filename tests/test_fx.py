"""framework.fx against torch.fx: the same model written for both libraries traces to the
same nodes (ops, targets, argument structure, names), runs to the same values, and the
graph editing, Interpreter, ShapeProp and patch bookkeeping behave as PyTorch's."""
import copy
import inspect
import math
import operator
import pickle

import numpy as np
import pytest

import framework as fw
import framework.fx as ffx
import framework.nn as fnn
import framework.nn.functional as fF
from framework.fx import _bindings
from framework.fx.passes.shape_prop import ShapeProp

torch = pytest.importorskip("torch")
import torch.fx as tfx  # noqa: E402
from torch.fx.passes.shape_prop import ShapeProp as TShapeProp  # noqa: E402


def my_scale(x, s):
    """A module-level function both tracers keep as one call (``wrap``)."""
    if s > 100:      # control flow on a plain number: fine inside a wrapped function
        s = 100
    return x * s


from framework import relu as imported_relu  # noqa: E402  (bound before any tracing)

ffx.wrap("my_scale")
tfx.wrap("my_scale")


# ---- the models, written once for either library ---------------------------------------

def make_mlp(lib):
    nn, F = lib.nn, lib.nn.functional

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 8))
            self.head = nn.Linear(8, 5)

        def forward(self, x):
            x = lib.flatten(x, 1)
            h = F.relu(self.net(x))
            return lib.relu(self.head(h)) + h.sum(-1, keepdim=True)
    return MLP(), (2, 3, 4)


def make_cnn(lib):
    nn, F = lib.nn, lib.nn.functional

    class Block(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(c)
            self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(c)

        def forward(self, x):
            out = F.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return F.relu(out + x)

    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Conv2d(3, 4, 3, padding=1)
            self.layer = nn.ModuleList([Block(4), Block(4)])
            self.fc = nn.Linear(4, 3)

        def forward(self, x):
            x = self.stem(x)
            for blk in self.layer:
                x = blk(x)
            x = F.adaptive_avg_pool2d(x, 1).flatten(1)
            return self.fc(x)
    return CNN(), (2, 3, 6, 6)


def make_attention(lib, sdpa=False):
    nn, F = lib.nn, lib.nn.functional
    T_MAX, C, H = 5, 8, 2

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(C)
            self.qkv = nn.Linear(C, 3 * C)
            self.proj = nn.Linear(C, C)
            self.ln2 = nn.LayerNorm(C)
            self.mlp = nn.ModuleDict({"fc": nn.Linear(C, 2 * C), "out": nn.Linear(2 * C, C)})
            self.register_buffer("mask", lib.tril(lib.ones(T_MAX, T_MAX)).view(1, 1, T_MAX,
                                                                              T_MAX))

        def forward(self, x):
            B, T, Cx = x.shape
            q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=-1)
            q = q.view(B, T, H, Cx // H).transpose(1, 2)
            k = k.view(B, T, H, Cx // H).transpose(1, 2)
            v = v.view(B, T, H, Cx // H).transpose(1, 2)
            if sdpa:
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            else:
                att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
                # the mask compares eagerly: a tensor constant of the graph, as in torch
                att = att.masked_fill(self.mask == 0, float("-inf"))
                att = F.softmax(att, dim=-1)
                y = att @ v
            y = y.transpose(1, 2).contiguous().view(B, T, Cx)
            x = x + self.proj(y)
            h = F.gelu(self.mlp["fc"](self.ln2(x)))
            return x + self.mlp["out"](h)
    return Block(), (2, T_MAX, C)


def make_shapes(lib):
    nn = lib.nn

    class Shapes(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(lib.randn(12, 3))
            self.register_buffer("scale", lib.arange(3.0))

        def forward(self, x):
            b = x.size(0)
            # a buffer (a plain tensor while tracing) times a proxy: Tensor.__mul__
            y = self.scale * (x.view(b, -1) @ self.w)
            t = getattr(y, "T")
            z = operator.add(t.sum(1), x.shape[1])
            z = z + self.w.T.sum()      # an attribute of a parameter: getattr on get_attr
            return y.reshape(b, x.size(1), -1) * 2 - 1, lib.cat([z, z]) / y.shape[0], x[:, 0, 1:]
    return Shapes(), (2, 3, 4)


def make_wrapped(lib):
    nn = lib.nn

    class Wrapped(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def forward(self, x, flag=True, bias=None):
            y = my_scale(self.lin(x), 3.0)
            if flag:
                y = y + 1
            if bias is not None:
                y = y + bias
            return y
    return Wrapped(), (3, 4)


MODELS = {"mlp": make_mlp, "cnn": make_cnn, "attention": make_attention,
          "sdpa": lambda lib: make_attention(lib, sdpa=True), "shapes": make_shapes,
          "wrapped": make_wrapped}
CONCRETE = {"wrapped": {"flag": True, "bias": None}}


def _pair(name, device="cpu"):
    """The torch model, the framework model with the same weights, and an input shape."""
    torch.manual_seed(0)
    tm, shape = MODELS[name](torch)
    fm, _ = MODELS[name](fw)
    fm.load_state_dict({k: fw.tensor(v.detach().numpy()) for k, v in
                        tm.state_dict().items()})
    tm.eval()
    fm.eval()
    return tm, fm.to(device), shape


def _np(t):
    if isinstance(t, fw.Tensor):
        return t.detach().cpu().numpy()
    return t.detach().numpy()


def _target_name(target):
    """A node's target with the library's name taken off (``nn.functional.relu``)."""
    if isinstance(target, str):
        return target
    name = f"{type(target).__module__}.{target.__name__}" if not hasattr(
        target, "__module__") else None
    try:
        from torch.fx.node import _get_qualified_name
        name = _get_qualified_name(target)
    except Exception:
        name = name or target.__name__
    if "framework" in name.split(".")[0]:
        name = ffx.node._qualified_name(target)
    if ".fx." in name:       # _assert, _assert_is_none: helpers of each library's fx
        return name.rsplit(".", 1)[1]
    if name == "torch._assert":
        return "_assert"
    for prefix in ("torch._C._nn.", "torch.", "framework.", "_operator."):
        if name.startswith(prefix):
            # torch's C-implemented nn.functional ops live in torch._C._nn
            return ("nn.functional." if prefix == "torch._C._nn." else "") + name[len(prefix):]
    return name.rsplit(".", 1)[-1] if name.startswith(("tests.", "test_fx.")) else name


def _structure(node, torch_target=None):
    """(op, target name, args) with nodes as their names; a function's arguments bound
    to torch's signature (so ``relu(x)`` and ``relu(x, inplace=False)`` agree)."""
    def leaf(a):
        if hasattr(a, "op") and hasattr(a, "users"):
            return ("%", a.name)
        if isinstance(a, (list, tuple)):
            return tuple(leaf(x) for x in a)
        if isinstance(a, dict):
            return {k: leaf(v) for k, v in a.items()}
        if isinstance(a, slice):
            return ("slice", leaf(a.start), leaf(a.stop), leaf(a.step))
        if isinstance(a, float) and math.isinf(a):
            return ("inf", a > 0)
        return a
    args, kwargs = leaf(tuple(node.args)), leaf(dict(node.kwargs))
    if node.op == "call_function" and torch_target is not None:
        try:
            sig = inspect.signature(torch_target)
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = (), dict(bound.arguments)
        except (TypeError, ValueError):
            pass
    return node.op, _target_name(node.target), args, kwargs


def _trace_both(name, device="cpu"):
    tm, fm, shape = _pair(name, device)
    concrete = CONCRETE.get(name)
    tgm = tfx.symbolic_trace(tm, concrete_args=concrete)
    fgm = ffx.symbolic_trace(fm, concrete_args=concrete)
    return tm, fm, tgm, fgm, shape


# ---- tracing equals torch.fx ----------------------------------------------------------------

@pytest.mark.parametrize("name", list(MODELS))
def test_trace_matches_torch_fx(name):
    tm, fm, tgm, fgm, shape = _trace_both(name)
    tnodes, fnodes = list(tgm.graph.nodes), list(fgm.graph.nodes)
    assert [n.name for n in fnodes] == [n.name for n in tnodes]
    for t, f in zip(tnodes, fnodes):
        tt = t.target if t.op == "call_function" else None
        assert _structure(f, tt) == _structure(t, tt), (f.format_node(), t.format_node())
    fgm.graph.lint()


@pytest.mark.parametrize("name", list(MODELS))
def test_graph_module_runs_like_the_model(name, device):
    tm, fm, tgm, fgm, shape = _trace_both(name, device)
    x = torch.randn(*shape)
    fx_ = fw.tensor(x.numpy()).to(device)
    want = tm(x)
    got = fgm(fx_)
    eager = fm(fx_)
    want = want if isinstance(want, tuple) else (want,)
    got = got if isinstance(got, tuple) else (got,)
    eager = eager if isinstance(eager, tuple) else (eager,)
    for w, g, e in zip(want, got, eager):
        np.testing.assert_allclose(_np(g), _np(e), rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(_np(g), _np(w), rtol=1e-4, atol=1e-5)


def test_code_and_str_read_like_torch():
    # modules, operators, Tensor methods and framework.cat: the text is torch's
    tm, fm, tgm, fgm, shape = _trace_both("shapes")
    assert fgm.code == tgm.code.replace("torch.", "framework.")
    assert str(fgm.graph) == str(tgm.graph).replace("torch.", "framework.")
    tm, fm, tgm, fgm, shape = _trace_both("mlp")
    assert fgm.code == tgm.code.replace("torch.", "framework.").replace(", inplace = False",
                                                                        "")
    assert "class MLP(framework.nn.Module):" in fgm.print_readable(print_output=False)
    # wrapped functions and assertions (values never used are freed at once)
    tm, fm, tgm, fgm, shape = _trace_both("wrapped")
    def ours(text):
        return text.replace("torch.fx._symbolic_trace.", "framework.fx.tracer.") \
            .replace("torch._assert", "framework.fx.tracer._assert")
    assert fgm.code == ours(tgm.code)
    assert str(fgm.graph) == ours(str(tgm.graph))     # placeholders' defaults included
    try:
        import tabulate  # noqa: F401
    except ImportError:     # optional, as in torch: both raise the same way without it
        with pytest.raises(ImportError):
            tgm.graph.print_tabular()
        with pytest.raises(ImportError):
            fgm.graph.print_tabular()


def test_concrete_args_and_wrap():
    tm, fm, tgm, fgm, shape = _trace_both("wrapped")
    ops = [(n.op, _target_name(n.target)) for n in fgm.graph.nodes]
    assert ("call_function", "my_scale") in ops
    assert ("call_function", "_assert_is_none") in ops and ("call_function", "_assert") in ops
    assert [n.name for n in fgm.graph.find_nodes(op="placeholder")] == ["x", "flag_1", "bias_1"]
    assert my_scale.__name__ == "my_scale" and globals()["my_scale"] is my_scale
    x = fw.randn(3, 4)
    np.testing.assert_allclose(_np(fgm(x, True, None)), _np(fm(x)), rtol=1e-6)
    with pytest.raises(AssertionError, match="bias has been specialized to have value None"):
        fgm(x, True, x)


def test_op_imported_by_name_and_math_autowrap():
    def f(x):
        return imported_relu(x) + math.sqrt(x.size(1))
    gm = ffx.symbolic_trace(f)
    targets = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    assert targets[0] is fw.relu and math.sqrt in targets
    # (once __torch_function__ dispatch is on, fw.relu is its wrapper of the same function)
    assert imported_relu is getattr(fw.relu, "_tf_original", fw.relu)
    x = fw.randn(2, 4)
    np.testing.assert_allclose(_np(gm(x)), np.maximum(_np(x), 0) + 2.0, rtol=1e-6)


# ---- graph surgery ---------------------------------------------------------------------------

def test_replace_relu_with_gelu_by_target_rewrite():
    tm, fm, tgm, fgm, shape = _trace_both("mlp")
    for gm, lib in ((tgm, torch), (fgm, fw)):
        for n in gm.graph.nodes:
            if n.op == "call_function" and n.target in (lib.relu, lib.nn.functional.relu):
                n.target = lib.nn.functional.gelu
                n.kwargs = {}
        gm.recompile()
    assert "gelu" in fgm.code and "relu(" not in fgm.code
    x = torch.randn(*shape)
    np.testing.assert_allclose(_np(fgm(fw.tensor(x.numpy()))), _np(tgm(x)), rtol=1e-4,
                               atol=1e-5)


def test_insert_node_and_dead_code():
    tm, fm, tgm, fgm, shape = _trace_both("mlp")
    g = fgm.graph
    head = next(n for n in g.nodes if n.op == "call_module" and n.target == "head")
    with g.inserting_after(head):
        doubled = g.call_function(fw.mul, (head, 2.0))
    head.replace_all_uses_with(doubled, delete_user_cb=lambda u: u is not doubled)
    assert doubled.args[0] is head and head.next is doubled
    assert list(doubled.users) and doubled.all_input_nodes == [head]
    with g.inserting_before(doubled):
        unused = g.call_method("exp", (head,))
    with pytest.raises(RuntimeError, match="still had 2 users"):
        g.erase_node(head)
    assert g.eliminate_dead_code()
    assert unused not in list(g.nodes) and not g.eliminate_dead_code()
    g.lint()
    fgm.recompile()
    x = fw.randn(*shape)
    h = fF.relu(fm.net(fw.flatten(x, 1)))
    want = fw.relu(fm.head(h) * 2.0) + h.sum(-1, keepdim=True)
    np.testing.assert_allclose(_np(fgm(x)), _np(want), rtol=1e-5, atol=1e-6)
    # prepend/append move nodes; update_arg edits one argument
    order = [n.name for n in g.nodes]
    exp = g.create_node("call_method", "exp", (head,))      # at the end: after output
    doubled.prepend(exp)
    assert exp.name == "exp_1"     # an erased node's name is not handed out again
    assert [n.name for n in g.nodes] == order[:order.index("mul")] + ["exp_1"] + \
        order[order.index("mul"):]
    head.append(exp)
    assert head.next is exp and exp.next is doubled and exp.prev is head
    g.erase_node(exp)
    doubled.update_arg(1, 3.0)
    assert doubled.args == (head, 3.0)
    fgm.recompile()
    want = fw.relu(fm.head(h) * 3.0) + h.sum(-1, keepdim=True)
    np.testing.assert_allclose(_np(fgm(x)), _np(want), rtol=1e-5, atol=1e-6)


def test_feature_extraction():
    tm, fm, tgm, fgm, shape = _trace_both("cnn")
    g = fgm.graph
    feat = next(n for n in g.nodes if n.name == "layer_0_bn2")
    out = next(n for n in g.nodes if n.op == "output")
    out.args = ((feat,),)
    g.eliminate_dead_code()
    fgm.recompile()
    fgm.delete_all_unused_submodules()
    names = dict(fgm.named_modules())
    assert "layer.0.bn2" in names and "fc" not in names and "layer.1" not in names
    x = fw.randn(*shape)
    blk = fm.layer[0]
    want = blk.bn2(blk.conv2(fF.relu(blk.bn1(blk.conv1(fm.stem(x))))))
    np.testing.assert_allclose(_np(fgm(x)[0]), _np(want), rtol=1e-5, atol=1e-6)
    # a new submodule, installed by qualified name and called from the graph
    assert fgm.add_submodule("extra.act", fnn.Tanh())
    out = next(n for n in fgm.graph.nodes if n.op == "output")
    with fgm.graph.inserting_before(out):
        act = fgm.graph.call_module("extra.act", (feat,))
    out.args = ((act,),)
    fgm.graph.lint()
    fgm.recompile()
    assert "extra_act = self.extra.act(layer_0_bn2)" in fgm.code
    np.testing.assert_allclose(_np(fgm(x)[0]), np.tanh(_np(want)), rtol=1e-5, atol=1e-6)


def test_node_copy_graph_copy_and_deepcopy_pickle():
    tm, fm, tgm, fgm, shape = _trace_both("attention")
    x = fw.randn(*shape)
    want = _np(fgm(x))
    g2 = ffx.Graph()
    val_map = {}
    out = g2.graph_copy(fgm.graph, val_map)
    g2.output(out)
    assert [n.name for n in g2.nodes] == [n.name for n in fgm.graph.nodes]
    np.testing.assert_allclose(_np(ffx.GraphModule(fgm, g2)(x)), want, rtol=1e-6)
    np.testing.assert_allclose(_np(copy.deepcopy(fgm)(x)), want, rtol=1e-6)
    np.testing.assert_allclose(_np(pickle.loads(pickle.dumps(fgm))(x)), want, rtol=1e-6)


def _rewrite_case(lib):
    class M(lib.nn.Module):
        def forward(self, x, w1, w2):
            m1 = lib.cat([w1, w2]).sum()
            m2 = lib.cat([w1, w2]).sum()
            return x + lib.max(m1) + lib.max(m2)

    def pattern(w1, w2):
        return lib.cat([w1, w2]).sum()

    def replacement(w1, w2):
        return lib.stack([w1, w2])
    return M(), pattern, replacement


def test_replace_pattern_matches_torch():
    results = []
    for lib, fx in ((torch, tfx), (fw, ffx)):
        m, pattern, replacement = _rewrite_case(lib)
        gm = fx.symbolic_trace(m)
        matches = fx.replace_pattern(gm, pattern, replacement)
        results.append((gm, len(matches)))
    (tgm, tn), (fgm, fn) = results
    assert fn == tn == 2
    assert [n.name for n in fgm.graph.nodes] == [n.name for n in tgm.graph.nodes]
    assert [_structure(n) for n in fgm.graph.nodes] == [_structure(n) for n in tgm.graph.nodes]
    x, w1, w2 = (np.random.rand(2, 3).astype(np.float32) for _ in range(3))
    want = tgm(*(torch.tensor(a) for a in (x, w1, w2)))
    np.testing.assert_allclose(_np(fgm(*(fw.tensor(a) for a in (x, w1, w2)))), _np(want),
                               rtol=1e-6)


# ---- Interpreter, Transformer, ShapeProp ---------------------------------------------------

@pytest.mark.parametrize("name", ["cnn", "attention", "shapes"])
def test_interpreter_and_shape_prop(name, device):
    tm, fm, tgm, fgm, shape = _trace_both(name, device)
    x = torch.randn(*shape)
    fx_ = fw.tensor(x.numpy()).to(device)
    eager = fm(fx_)
    seen = []

    class Counting(ffx.Interpreter):
        def call_function(self, target, args, kwargs):
            seen.append(target)
            return super().call_function(target, args, kwargs)
    got = Counting(fgm).run(fx_)
    for g, e in zip(got if isinstance(got, tuple) else (got,),
                    eager if isinstance(eager, tuple) else (eager,)):
        np.testing.assert_allclose(_np(g), _np(e), rtol=1e-6, atol=1e-6)
    assert len(seen) == sum(n.op == "call_function" for n in fgm.graph.nodes)
    ShapeProp(fgm).propagate(fx_)
    TShapeProp(tgm).propagate(x)
    for t, f in zip(tgm.graph.nodes, fgm.graph.nodes):
        tm_, fm_ = t.meta.get("tensor_meta"), f.meta.get("tensor_meta")
        assert (tm_ is None) == (fm_ is None), f.name
        if tm_ is None or f.op == "output":
            continue
        many = not hasattr(tm_, "shape")      # a node yielding several tensors (chunk)
        assert many == (not hasattr(fm_, "shape")), f.name
        for tmeta, fmeta in zip(tm_ if many else [tm_], fm_ if many else [fm_]):
            assert tuple(fmeta.shape) == tuple(tmeta.shape), f.name
            assert str(fmeta.dtype).split(".")[-1] == str(tmeta.dtype).split(".")[-1]
            assert fmeta.requires_grad == tmeta.requires_grad, f.name
            assert tuple(fmeta.stride) == tuple(tmeta.stride), f.name


def test_transformer_swaps_relu_for_gelu():
    tm, fm, tgm, fgm, shape = _trace_both("mlp")

    class Swap(ffx.Transformer):
        def call_function(self, target, args, kwargs):
            if target in (fw.relu, fF.relu):
                return fF.gelu(*args)
            return super().call_function(target, args, kwargs)
    new = Swap(fgm).transform()
    assert sum(n.target is fF.gelu for n in new.graph.nodes) == 2
    x = fw.randn(*shape)
    h = fF.gelu(fm.net(fw.flatten(x, 1)))
    want = fF.gelu(fm.head(h)) + h.sum(-1, keepdim=True)
    np.testing.assert_allclose(_np(new(x)), _np(want), rtol=1e-5, atol=1e-6)


# ---- errors and the patch bookkeeping ------------------------------------------------------

def _snapshot():
    return [(owner, attr, vars(owner).get(attr)) for owner, attr in _bindings.op_bindings()] + \
        [(fnn.Module, a, vars(fnn.Module)[a]) for a in ("__call__", "__getattr__")] + \
        [(None, "my_scale", globals()["my_scale"]), (None, "sqrt", math.sqrt)]


def _control_flow(lib):
    class Branchy(lib.nn.Module):
        def forward(self, x):
            if x.sum() > 0:
                return x
            return -x
    return Branchy()


def test_control_flow_raises_trace_error():
    before = _snapshot()
    with pytest.raises(tfx.proxy.TraceError) as theirs:
        tfx.symbolic_trace(_control_flow(torch))
    with pytest.raises(ffx.TraceError) as ours:
        ffx.symbolic_trace(_control_flow(fw))
    assert str(ours.value) == str(theirs.value)
    assert isinstance(ours.value, ValueError)
    assert _snapshot() == before

    def loop(x):
        for row in x:
            pass
    with pytest.raises(ffx.TraceError, match="Proxy object cannot be iterated"):
        ffx.symbolic_trace(loop)
    with pytest.raises(RuntimeError, match="'len' is not supported"):
        ffx.symbolic_trace(lambda x: len(x))


def test_patches_removed_after_tracing():
    # the binding now (__torch_function__ dispatch, turned on by a test, wraps it)
    before_flatten = fw.flatten
    before = _snapshot()
    assert all(w is not None for _, _, w in before[:50])
    patched = []

    def probe(x):
        patched.append((fw.flatten, fF.relu, fw.Tensor.view, fnn.Module.__call__))
        return fF.relu(fw.flatten(x, 1))
    ffx.symbolic_trace(probe)
    # while tracing, the bindings were the tracing wrappers
    assert patched[0][0] is not before_flatten and patched[0][1] is not fF.relu
    assert patched[0][0].__wrapped__ is before_flatten
    assert _snapshot() == before

    def boom(x):
        fF.relu(x)
        raise KeyError("inside tracing")
    with pytest.raises(KeyError):
        ffx.symbolic_trace(boom)
    assert _snapshot() == before
    assert fw.flatten is before_flatten
