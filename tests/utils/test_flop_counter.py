"""framework.utils.flop_counter against torch.utils.flop_counter on the same shapes."""
import pytest

import framework as fw
from framework.utils.flop_counter import FlopCounterMode, register_flop_formula

torch = pytest.importorskip("torch")
from torch.utils import flop_counter as tfc  # noqa: E402

# PyTorch's CPU build runs attention with its CPU flash kernel, which its registry has no
# formula for: give it the formulas of its own flash kernels (the ones the framework uses)
_TORCH_SDPA = {
    torch.ops.aten._scaled_dot_product_flash_attention_for_cpu:
        lambda q, k, v, *a, out_shape=None, **kw: tfc.sdpa_flop_count(q, k, v),
    torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward:
        lambda g, q, k, v, *a, out_shape=None, **kw: tfc.sdpa_backward_flop_count(g, q, k, v),
}
_RENAME = {"aten._scaled_dot_product_flash_attention_for_cpu":
           "aten._scaled_dot_product_flash_attention",
           "aten._scaled_dot_product_flash_attention_for_cpu_backward":
           "aten._scaled_dot_product_flash_attention_backward"}


def _counts(counter):
    return {mod: {_RENAME.get(str(op), str(op)): n for op, n in ops.items()}
            for mod, ops in counter.get_flop_counts().items()}


def _run_both(build, inputs, backward, device="cpu"):
    """Runs ``build(lib)(*inputs(lib))`` under each library's FlopCounterMode; returns
    (framework counts, torch counts)."""
    out = []
    for lib, mode, kw in ((fw, FlopCounterMode, {}), (torch, tfc.FlopCounterMode,
                                                      {"custom_mapping": _TORCH_SDPA})):
        lib.manual_seed(0)
        model = build(lib)
        args = inputs(lib)
        if lib is fw:
            model = model.to(device)
            args = [a.detach().to(device).requires_grad_(a.requires_grad) for a in args]
        with mode(display=False, **kw) as counter:
            y = model(*args)
            if backward:
                y.sum().backward()
        out.append(_counts(counter))
    return out


def _mlp(lib):
    nn = lib.nn

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(4, 8)
            self.inner = nn.Sequential(nn.Linear(8, 8, bias=False), nn.ReLU())
            self.fc2 = nn.Linear(8, 3)

        def forward(self, x):
            return self.fc2(self.inner(self.fc1(x)))
    return MLP()


@pytest.mark.parametrize("backward", [False, True])
def test_mlp_per_module(device, backward):
    ours, ref = _run_both(_mlp, lambda lib: [lib.randn(2, 5, 4)], backward, device)
    assert ours == ref
    assert "MLP.inner.0" in ours and ours["MLP.inner.0"] == {"aten.mm": 1280 * (1 + 2 * backward)}


def _convnet(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(),
                         nn.Conv2d(4, 2, 3, stride=2, groups=2), nn.ConvTranspose2d(2, 3, 2),
                         nn.Flatten(), nn.Linear(3 * 16, 5))


@pytest.mark.parametrize("grad_input", [False, True])
@pytest.mark.parametrize("backward", [False, True])
def test_convnet(backward, grad_input):
    ours, ref = _run_both(_convnet, lambda lib: [lib.randn(2, 3, 7, 7,
                                                           requires_grad=grad_input)],
                          backward)
    assert ours == ref
    assert ("aten.convolution_backward" in ours["Global"]) == backward


def test_conv1d_unbatched_and_conv3d():
    def build(lib):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.c1 = lib.nn.Conv1d(2, 3, 3)
                self.c3 = lib.nn.Conv3d(1, 2, 2)

            def forward(self, x, v):
                return self.c1(x).sum() + self.c3(v).sum()
        return M()
    # inputs that require grad: PyTorch's module tracker leaves a module whose inputs do
    # not on its parents stack for the rest of the backward (counting later ops to it)
    ours, ref = _run_both(build, lambda lib: [lib.randn(2, 6, requires_grad=True),
                                              lib.randn(1, 1, 3, 3, 3, requires_grad=True)],
                          True)
    assert ours == ref


def _block(lib):
    nn, F = lib.nn, lib.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(8, 24)
            self.proj = nn.Linear(8, 8)
            self.mlp = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 8))

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.qkv(x).split(C, dim=2)
            q, k, v = (t.view(B, T, 2, 4).transpose(1, 2) for t in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(y.transpose(1, 2).reshape(B, T, C))
            return x + self.mlp(x)
    return Block()


@pytest.mark.parametrize("backward", [False, True])
def test_gpt_block(device, backward):
    ours, ref = _run_both(_block, lambda lib: [lib.randn(2, 5, 8)], backward, device)
    assert ours == ref
    sdpa = ours["Block"]["aten._scaled_dot_product_flash_attention"]
    assert sdpa == tfc.sdpa_flop_count((2, 2, 5, 4), (2, 2, 5, 4), (2, 2, 5, 4)) == 1600


@pytest.mark.parametrize("shapes,rg", [
    (((3, 4), (4, 5)), (True, True)),
    (((3, 4), (4, 5)), (False, True)),
    (((4,), (4, 5)), (True, False)),
    (((2, 3, 4), (4, 5)), (False, True)),
    (((2, 3, 4), (4, 5)), (True, True)),
    (((2, 3, 4), (2, 4, 5)), (True, True)),
    (((3, 1, 3, 4), (2, 4, 5)), (False, True)),
    (((3, 4), (2, 4, 5)), (False, True)),
    (((3, 4), (2, 4, 5)), (False, False)),
    (((3, 4), (2, 4, 5)), (True, False)),
    (((4,), (2, 4, 5)), (False, True)),
    (((4,), (2, 4, 5)), (True, True)),
    (((2, 3, 4), (4,)), (True, False)),
    (((3, 4), (4,)), (True, True)),
    (((3, 2, 4), (4, 5)), (True, False)),
    (((2, 3, 4, 5), (5, 2)), (False, False)),
])
def test_matmul(shapes, rg):
    results = []
    for lib, mode in ((fw, FlopCounterMode), (torch, tfc.FlopCounterMode)):
        a, b = (lib.randn(*s, requires_grad=r) for s, r in zip(shapes, rg))
        with mode(display=False) as counter:
            y = a @ b
            if any(rg):
                y.sum().backward()
        results.append(_counts(counter))
    assert results[0] == results[1]


@pytest.mark.parametrize("shape,permute", [((2, 3, 4), None), ((3, 2, 4), (1, 0, 2)),
                                           ((2, 2, 3, 4), None), ((4,), None),
                                           ((2, 3, 2, 4), (0, 2, 1, 3)), ((4, 3), (1, 0))])
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("rg,w_rg", [(False, True), (True, True), (True, False)])
def test_linear_decomposition(shape, permute, bias, rg, w_rg):
    results = []
    for lib, mode in ((fw, FlopCounterMode), (torch, tfc.FlopCounterMode)):
        x = lib.randn(*shape)
        x = (x.permute(*permute) if permute else x).requires_grad_(rg)
        w = lib.randn(5, 4, requires_grad=w_rg)
        b = lib.randn(5) if bias else None
        with mode(display=False) as counter:
            lib.nn.functional.linear(x, w, b).sum().backward()
        results.append(_counts(counter))
    assert results[0] == results[1]


@pytest.mark.parametrize("rg", [(True, False), (False, True)])
def test_matmul_non_contiguous_batch(rg):
    # folded into one mm only when the 2-d operand requires grad (PyTorch's should_fold)
    results = []
    for lib, mode in ((fw, FlopCounterMode), (torch, tfc.FlopCounterMode)):
        a = lib.randn(3, 2, 4).transpose(0, 1).requires_grad_(rg[0])
        b = lib.randn(4, 5, requires_grad=rg[1])
        with mode(display=False) as counter:
            (a @ b).sum().backward()
        results.append(_counts(counter))
    assert results[0] == results[1]
    assert ("aten.mm" in results[0]["Global"]) == rg[1]


def test_mm_family():
    results = []
    for lib, mode in ((fw, FlopCounterMode), (torch, tfc.FlopCounterMode)):
        lib.manual_seed(0)
        a = lib.randn(3, 4, requires_grad=True)
        b = lib.randn(4, 5)
        c = lib.randn(2, 3, 4)
        d = lib.randn(2, 4, 5, requires_grad=True)
        with mode(display=False) as counter:
            s = (lib.mm(a, b).sum() + a.mm(b).sum() + lib.addmm(lib.zeros(5), a, b).sum()
                 + lib.bmm(c, d).sum() + lib.baddbmm(lib.zeros(3, 5), c, d).sum()
                 + lib.addmm(lib.zeros(5), a, mat2=b, beta=0.5).sum()
                 + lib.baddbmm(lib.zeros(3, 5), batch1=c, batch2=d).sum()
                 + lib.nn.functional.linear(a, b.t()).sum())
            s.backward()
        results.append(_counts(counter))
    assert results[0] == results[1]
    assert results[0]["Global"]["aten.mm"] == 8 * 2 * 3 * 4 * 5   # 3 forward, 5 for grad a


def test_sdpa_backward_formula():
    q = fw.randn(1, 2, 3, 4, requires_grad=True)
    k = fw.randn(1, 2, 6, 4, requires_grad=True)
    v = fw.randn(1, 2, 6, 4)
    with FlopCounterMode(display=False) as counter:
        fw.nn.functional.scaled_dot_product_attention(q, k, v).sum().backward()
    counts = counter.get_flop_counts()["Global"]
    assert counts["aten._scaled_dot_product_flash_attention"] == tfc.sdpa_flop_count(
        (1, 2, 3, 4), (1, 2, 6, 4), (1, 2, 6, 4))
    assert counts["aten._scaled_dot_product_flash_attention_backward"] == \
        tfc.sdpa_backward_flop_count((1, 2, 3, 4), (1, 2, 3, 4), (1, 2, 6, 4), (1, 2, 6, 4))


def test_no_cost_when_inactive():
    import framework.nn.functional as F
    from framework.autograd import engine
    from framework.nn.modules import _hooks
    places = [(fw, "mm"), (fw, "matmul"), (fw, "addmm"), (fw, "bmm"), (fw, "conv2d"),
              (fw.Tensor, "mm"), (fw.Tensor, "matmul"), (fw.Tensor, "addmm_"), (F, "linear"),
              (F, "conv2d"), (F, "scaled_dot_product_attention")]
    before = [vars(o)[a] for o, a in places]
    fn_before = vars(fw.nn.Conv2d)["_FN"].__func__
    hooks = (len(_hooks._global_forward_pre_hooks), len(_hooks._global_forward_hooks))
    with FlopCounterMode(display=False):
        assert fw.mm is not before[0] and vars(fw.nn.Conv2d)["_FN"].__func__ is not fn_before
        assert engine.profile_hook is not None
    assert [vars(o)[a] for o, a in places] == before
    assert vars(fw.nn.Conv2d)["_FN"].__func__ is fn_before
    assert engine.profile_hook is None
    assert (len(_hooks._global_forward_pre_hooks), len(_hooks._global_forward_hooks)) == hooks
    # a graph recorded inside and run outside counts nothing more
    a = fw.randn(2, 3, requires_grad=True)
    with FlopCounterMode(display=False) as counter:
        y = a.mm(fw.randn(3, 4))
    y.sum().backward()
    assert counter.get_total_flops() == 2 * 2 * 3 * 4


def test_custom_mapping_and_register():
    a, b = fw.randn(3, 4), fw.randn(4, 5)
    with FlopCounterMode(display=False, custom_mapping={"aten.mm": lambda x, y, **kw: 7}) as c:
        fw.mm(a, b)
    assert c.get_flop_counts() == {"Global": {"aten.mm": 7}}
    with pytest.raises(RuntimeError, match="duplicate registrations for aten.mm"):
        register_flop_formula("aten.mm")(lambda *a, **k: 0)
    with pytest.raises(ValueError, match="op name"):
        register_flop_formula([fw.mm])(lambda *a, **k: 0)


def test_nested_modes_and_table(capsys):
    m = _mlp(fw)
    x = fw.randn(2, 4)
    with FlopCounterMode(display=False) as outer:
        with FlopCounterMode(depth=1) as inner:
            m(x)
        fw.mm(x, fw.randn(4, 2))
    assert inner.get_total_flops() == 2 * 2 * (4 * 8 + 8 * 8 + 8 * 3)
    assert outer.get_total_flops() == inner.get_total_flops() + 2 * 2 * 4 * 2
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == ["Module", "FLOP", "%", "Total"]
    assert table[2].split() == ["MLP", "480", "100.00%"]
    assert table[3].split() == ["-", "aten.addmm", "224", "46.67%"]
    # Global is shown when flops ran outside every module
    rows = outer.get_table(1).splitlines()
    assert rows[2].split() == ["Global", "512", "100.00%"]
    assert rows[5].split() == ["MLP", "480", "93.75%"]
    # the layout of tabulate's "simple" table: a suffix once the total passes 9999
    with FlopCounterMode(display=False) as big:
        fw.mm(fw.randn(20, 30), fw.randn(30, 40))
    assert big.get_table().splitlines() == [
        "Module         FLOP    % Total",
        "----------  -------  ---------",
        "Global      48.000K    100.00%",
        " - aten.mm  48.000K    100.00%"]
    assert FlopCounterMode(display=False).get_table().splitlines()[2].split() == [
        "Global", "0", "0%"]


def test_with_profiler_and_custom_function():
    class Square(fw.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            return x.mm(w)

        @staticmethod
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            return g.mm(w.t()), x.t().mm(g)   # counted op by op, as PyTorch does

    lin = fw.nn.Linear(4, 3)
    x = fw.randn(2, 4, requires_grad=True)
    w = fw.randn(3, 5, requires_grad=True)
    with FlopCounterMode(display=False) as counter:
        with fw.profiler.profile():
            y = Square.apply(lin(x), w)
            y.sum().backward()
    counts = counter.get_flop_counts()
    assert counts["Linear"] == {"aten.addmm": 48, "aten.mm": 96}
    assert counts["Global"] == {"aten.addmm": 48, "aten.mm": 96 + 3 * 60}
