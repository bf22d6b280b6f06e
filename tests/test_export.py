"""framework.export against torch.export: graph signatures, placeholder names, the
unlifted module's results, guards, errors and save/load."""
import io
import re

import numpy as np
import pytest

import framework as fw
import framework.nn as nn
from framework.export import Dim, export

torch = pytest.importorskip("torch")


def _pair(make):
    """The same model built in framework and in torch, with the same weights."""
    ours, ref = make(fw), make(torch)
    ref.load_state_dict({k: torch.from_numpy(v.detach().cpu().numpy().copy())
                         for k, v in ours.state_dict().items()})
    return ours, ref


def _mlp(lib):
    class MLP(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = lib.nn.Linear(4, 8)
            self.fc2 = lib.nn.Linear(8, 3)

        def forward(self, x):
            return self.fc2(lib.relu(self.fc1(x)))
    lib.manual_seed(0)
    return MLP()


def _cnn(lib):
    class CNN(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = lib.nn.Conv2d(2, 4, 3, padding=1)
            self.bn = lib.nn.BatchNorm2d(4)

        def forward(self, x):
            return lib.flatten(self.bn(self.conv(x)).relu(), 1)
    return CNN()


def _block(lib):
    class Block(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = lib.nn.LayerNorm(8)
            self.attn = lib.nn.MultiheadAttention(8, 2, batch_first=True)
            self.ln2 = lib.nn.LayerNorm(8)
            self.mlp = lib.nn.Sequential(lib.nn.Linear(8, 16), lib.nn.GELU(),
                                         lib.nn.Linear(16, 8))

        def forward(self, x):
            h = self.ln1(x)
            x = x + self.attn(h, h, h, need_weights=False)[0]
            return x + self.mlp(self.ln2(x))
    return Block()


def _specs(sig):
    ins = [(s.kind.name, s.arg.name, s.target, s.persistent) for s in sig.input_specs]
    outs = [(s.kind.name, s.target) for s in sig.output_specs]
    return ins, outs


CASES = {"mlp": (_mlp, (2, 4), True), "cnn": (_cnn, (2, 2, 5, 5), False),
         "block": (_block, (2, 3, 8), True)}


@pytest.mark.parametrize("case", list(CASES))
def test_signature_matches_torch(case, device):
    make, shape, train = CASES[case]
    ours, ref = _pair(make)
    ours.train(train)
    ref.train(train)
    ours = ours.to(device)
    x = np.random.randn(*shape).astype(np.float32)
    ep = export(ours, (fw.tensor(x, device=device),))
    ep_ref = torch.export.export(ref, (torch.from_numpy(x),))
    assert _specs(ep.graph_signature) == _specs(ep_ref.graph_signature)
    sig, sig_ref = ep.graph_signature, ep_ref.graph_signature
    assert sig.parameters == sig_ref.parameters
    assert sig.buffers == sig_ref.buffers
    assert sig.user_inputs == sig_ref.user_inputs == ("x",)
    assert len(sig.user_outputs) == len(sig_ref.user_outputs) == 1
    names = [n.name for n in ep.graph.nodes if n.op == "placeholder"]
    assert names == [n.name for n in ep_ref.graph.nodes if n.op == "placeholder"]
    assert all(n.op != "call_module" and n.op != "get_attr" for n in ep.graph.nodes)
    # node names follow the op names, as torch's ATen-level ones do; torch's attention is
    # decomposed into many ops where the framework records one multi_head_attention_forward
    ops = [(n.op, n.name) for n in ep.graph.nodes]
    ops_ref = [(n.op, n.name) for n in ep_ref.graph.nodes]
    if case == "block":
        cut = ops.index(("call_function", "multi_head_attention_forward"))
        assert ops[:cut] == ops_ref[:cut]
        # after attention: add, layer_norm_1, linear, gelu, linear, add_1, output (torch
        # numbers its linears on from the attention's)
        base = [(op, re.sub(r"_\d+$", "", name)) for op, name in ops[cut + 3:]]
        base_ref = [(op, re.sub(r"_\d+$", "", name)) for op, name in ops_ref[-len(base):]]
        assert base == base_ref
        assert base[0] == ("call_function", "add") and len(base) == 7
    else:
        assert ops == ops_ref
    assert sorted(ep.state_dict) == sorted(ep_ref.state_dict)
    assert ep.range_constraints == {}
    # the unlifted module runs like the eager model (train-mode BN uses batch statistics)
    m = ep.module()
    got = m(fw.tensor(x, device=device)).detach().cpu().numpy()
    want = ref(torch.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    assert sorted(k for k, _ in m.named_parameters()) == sorted(sig.parameters)


def test_mlp_graph_ops_and_str():
    ours, ref = _pair(_mlp)
    x = np.random.randn(2, 4).astype(np.float32)
    ep = export(ours, (fw.tensor(x),))
    ep_ref = torch.export.export(ref, (torch.from_numpy(x),))

    def ops(g):
        return [(n.op, n.name) for n in g.nodes]
    assert ops(ep.graph) == ops(ep_ref.graph)
    s = str(ep)
    assert s.startswith("ExportedProgram:")
    assert 'p_fc1_weight: "f32[8, 4]"' in s and 'x: "f32[2, 4]"' in s
    assert "p_fc1_weight: PARAMETER target='fc1.weight'" in s
    assert "linear_1: USER_OUTPUT" in s and "Range constraints: {}" in s
    assert ep.example_inputs[0][0] is not None
    assert ep.run_decompositions().graph_signature == ep.graph_signature


def test_train_bn_leaves_module_unchanged():
    ours, _ = _pair(_cnn)
    export(ours, (fw.randn(2, 2, 5, 5),))
    assert int(ours.bn.num_batches_tracked) == 0
    np.testing.assert_array_equal(ours.bn.running_mean.numpy(), np.zeros(4, np.float32))


def test_static_guard_and_call_error():
    ours, ref = _pair(_mlp)
    ep = export(ours, (fw.randn(2, 4),))
    ep_ref = torch.export.export(ref, (torch.randn(2, 4),))
    for shape in [(3, 4), (2, 5)]:
        with pytest.raises(AssertionError) as e_ref:
            ep_ref.module()(torch.randn(*shape))
        with pytest.raises(AssertionError) as e:
            ep.module()(fw.randn(*shape))
        assert str(e.value) == str(e_ref.value)
    with pytest.raises(RuntimeError) as e_ref:
        ep_ref(torch.randn(2, 4))
    with pytest.raises(RuntimeError) as e:
        ep(fw.randn(2, 4))
    assert str(e.value) == str(e_ref.value)


def test_dynamic_dim():
    ours, ref = _pair(_mlp)
    b = Dim("batch", min=2, max=16)
    ep = export(ours, (fw.randn(3, 4),), dynamic_shapes={"x": {0: b}})
    ep_ref = torch.export.export(ref, (torch.randn(3, 4),),
                                 dynamic_shapes={"x": {0: torch.export.Dim("batch", min=2,
                                                                           max=16)}})
    assert [str(v) for v in ep.range_constraints.values()] == \
        [str(v) for v in ep_ref.range_constraints.values()] == ["VR[2, 16]"]
    x = np.random.randn(7, 4).astype(np.float32)
    np.testing.assert_allclose(ep.module()(fw.tensor(x)).detach().numpy(),
                               ref(torch.from_numpy(x)).detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    with pytest.raises(AssertionError) as e_ref:
        ep_ref.module()(torch.randn(20, 4))
    with pytest.raises(AssertionError) as e:
        ep.module()(fw.randn(20, 4))
    assert str(e.value) == str(e_ref.value)
    ep = export(ours, (fw.randn(3, 4),), dynamic_shapes=({0: Dim.AUTO},))
    assert [str(v) for v in ep.range_constraints.values()] == ["VR[2, int_oo]"]
    assert repr(b) == repr(torch.export.Dim("batch", min=2, max=16))
    with pytest.raises(fw.export.UserError, match="top-level keys must be the arg names"):
        export(ours, (fw.randn(3, 4),), dynamic_shapes={"y": {0: b}})


def test_dynamic_dim_on_specialized_graph_raises():
    class View(nn.Module):
        def forward(self, x):
            return x.view(x.shape[0] * 2, -1)
    ep = export(View(), (fw.randn(4, 6),), dynamic_shapes={"x": {0: Dim.DYNAMIC}})
    assert ep.module()(fw.randn(4, 6)).shape == (8, 3)
    with pytest.raises(NotImplementedError, match="holds them as constants"):
        ep.module()(fw.randn(5, 6))


@pytest.mark.parametrize("via_item", [False, True])
def test_data_dependent_control_flow_raises(via_item):
    class DD(nn.Module):
        def forward(self, x):
            s = x.sum().item() if via_item else x.sum()
            if s > 0:
                return x + 1
            return x - 1
    with pytest.raises(fw.export.GuardOnDataDependentSymNode,
                       match="Could not guard on data-dependent expression"):
        export(DD(), (fw.randn(3),))
    # torch raises the same class name (a RuntimeError) for the same program
    assert issubclass(fw.export.GuardOnDataDependentSymNode, RuntimeError)


def test_shared_dim_guard():
    class Add(nn.Module):
        def forward(self, x, y):
            return x + y

    class AddRef(torch.nn.Module):
        forward = Add.forward
    b = Dim("b")
    ep = export(Add(), (fw.randn(3, 2), fw.randn(3, 2)), dynamic_shapes=({0: b}, {0: b}))
    ep_ref = torch.export.export(AddRef(), (torch.randn(3, 2), torch.randn(3, 2)),
                                 dynamic_shapes=({0: torch.export.Dim("b")},) * 2)
    assert [str(v) for v in ep.range_constraints.values()] == \
        [str(v) for v in ep_ref.range_constraints.values()] == ["VR[0, int_oo]"]
    out = ep.module()(fw.ones(5, 2), fw.ones(5, 2))
    np.testing.assert_array_equal(out.numpy(), np.full((5, 2), 2, np.float32))
    with pytest.raises(AssertionError, match=r"Guard failed: y.size\(\)\[0\] == "
                                             r"x.size\(\)\[0\]"):
        ep.module()(fw.ones(5, 2), fw.ones(4, 2))


def test_save_load_roundtrip(device):
    ours, _ = _pair(_cnn)
    ours = ours.eval().to(device)
    x = fw.randn(1, 2, 5, 5, device=device)
    ep = export(ours, (x,))
    buf = io.BytesIO()
    fw.export.save(ep, buf)
    buf.seek(0)
    ep2 = fw.export.load(buf)
    assert ep2.graph_signature == ep.graph_signature
    assert [n.name for n in ep2.graph.nodes] == [n.name for n in ep.graph.nodes]
    np.testing.assert_allclose(ep2.module()(x).cpu().detach().numpy(),
                               ours(x).cpu().detach().numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(TypeError, match="ExportedProgram"):
        fw.export.save(ours, io.BytesIO())


def test_constant_input_and_output():
    class M(nn.Module):
        def forward(self, x, n: int, scale=2.0):
            return x * n * scale, n

    class R(torch.nn.Module):
        forward = M.forward
    x = np.random.randn(2).astype(np.float32)
    ep = export(M(), (fw.tensor(x), 3))
    ep_ref = torch.export.export(R(), (torch.from_numpy(x), 3))
    assert ep.graph_signature.user_inputs == ep_ref.graph_signature.user_inputs == ("x", 3)
    assert ep.graph_signature.user_outputs == ep_ref.graph_signature.user_outputs
    assert [n.name for n in ep.graph.nodes if n.op == "placeholder"] == ["x", "n"]
    got, n = ep.module()(fw.tensor(x), 3)
    np.testing.assert_allclose(got.numpy(), x * 6, rtol=1e-6)
    assert n == 3
    with pytest.raises(AssertionError) as e_ref:
        ep_ref.module()(torch.from_numpy(x), 4)
    with pytest.raises(AssertionError) as e:
        ep.module()(fw.tensor(x), 4)
    assert str(e.value) == str(e_ref.value)


def test_inplace_on_input_leaves_example_unchanged():
    class M(nn.Module):
        def forward(self, x):
            x.add_(1)
            return x * 2
    x = fw.zeros(3)
    ep = export(M(), (x,))
    np.testing.assert_array_equal(x.numpy(), np.zeros(3, np.float32))
    y = fw.zeros(3)
    np.testing.assert_array_equal(ep.module()(y).numpy(), np.full(3, 2, np.float32))
