"""Sparse gradients (embedding / embedding_bag with sparse=True), their accumulation and
zeroing, and the optimizers that take them (SparseAdam, SGD, Adagrad) or refuse them,
against PyTorch."""
import numpy as np
import pytest

import framework as fw
import framework.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional
pytestmark = [pytest.mark.filterwarnings("ignore:Sparse invariant checks"),
              # the interpreter computes masked-off lanes too
              pytest.mark.filterwarnings("ignore:invalid value encountered in sqrt")]


def fwt(t, device="cpu"):
    """A torch tensor as a framework tensor on ``device``."""
    return fw.from_numpy(t.detach().numpy().copy()).to(device)


def npy(t):
    return t.detach().cpu().numpy()


def close(a, b, rtol=1e-12, atol=1e-12):
    np.testing.assert_allclose(npy(a), b.detach().numpy(), rtol=rtol, atol=atol)


def check_sparse_grad(g, tg, raw=True):
    """``g`` (framework) is a sparse COO gradient equal to torch's ``tg``: the same indices
    and values as they are (``raw``), and after coalescing."""
    assert g.layout is fw.sparse_coo and tg.layout is torch.sparse_coo
    assert tuple(g.shape) == tuple(tg.shape)
    if raw:
        np.testing.assert_array_equal(npy(g._indices()), tg._indices().numpy())
        close(g._values(), tg._values())
        assert g.is_coalesced() == tg.is_coalesced()
    c, tc = g.coalesce(), tg.coalesce()
    np.testing.assert_array_equal(npy(c.indices()), tc.indices().numpy())
    close(c.values(), tc.values())
    close(g.to_dense(), tg.to_dense())


def table(n=7, d=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, d, dtype=torch.float64, generator=g)


# ---- embedding / embedding_bag gradients --------------------------------------------------

@pytest.mark.parametrize("padding_idx", [None, 2])
def test_embedding_sparse_grad(device, padding_idx):
    w = table()
    idx = torch.tensor([[1, 2, 1, 6], [2, 0, 1, 5]])
    out_w = torch.randn(2, 4, 3, dtype=torch.float64)
    tw = w.clone().requires_grad_()
    (TF.embedding(idx, tw, padding_idx=padding_idx, sparse=True) * out_w).sum().backward()
    dense = w.clone().requires_grad_()
    (TF.embedding(idx, dense, padding_idx=padding_idx) * out_w).sum().backward()
    fw_w = fwt(w, device).requires_grad_()
    (F.embedding(fwt(idx, device), fw_w, padding_idx=padding_idx, sparse=True)
     * fwt(out_w, device)).sum().backward()
    check_sparse_grad(fw_w.grad, tw.grad)
    close(fw_w.grad.to_dense(), dense.grad)
    assert fw_w.grad.device == fw_w.device
    # the aten-style op and the module give the same sparse gradient
    fw_w.grad = None
    fw.embedding(fw_w, fwt(idx, device).int(), -1 if padding_idx is None else padding_idx,
                 False, True).mul(fwt(out_w, device)).sum().backward()
    check_sparse_grad(fw_w.grad, tw.grad)
    emb = fw.nn.Embedding(7, 3, padding_idx=padding_idx, sparse=True).to(device)
    with fw.no_grad():
        emb.weight.copy_(fwt(w, device).float())
    (emb(fwt(idx, device)) * fwt(out_w, device).float()).sum().backward()
    assert emb.weight.grad.layout is fw.sparse_coo
    close(emb.weight.grad.to_dense(), dense.grad.float(), rtol=1e-6, atol=1e-6)
    # sparse=False stays dense
    fw_w.grad = None
    F.embedding(fwt(idx, device), fw_w, padding_idx=padding_idx).sum().backward()
    assert fw_w.grad.layout is fw.strided


def test_embedding_sparse_grad_edge_cases(device):
    w = table()
    fw_w = fwt(w, device).requires_grad_()
    # every index is padding: an empty gradient of the weight's shape
    F.embedding(fwt(torch.tensor([3, 3]), device), fw_w, padding_idx=3,
                sparse=True).sum().backward()
    assert fw_w.grad._nnz() == 0 and tuple(fw_w.grad.shape) == (7, 3)
    close(fw_w.grad.to_dense(), torch.zeros(7, 3, dtype=torch.float64))
    fw_w.grad = None
    tw = w.clone().requires_grad_()
    TF.embedding(torch.tensor([4]), tw, sparse=True).sum().backward()
    F.embedding(fwt(torch.tensor([4]), device), fw_w, sparse=True).sum().backward()
    check_sparse_grad(fw_w.grad, tw.grad)
    fw_w.grad = None
    with pytest.raises(RuntimeError, match="embedding_backward: scale_grad_by_freq not "
                                           "supported with sparse gradients"):
        F.embedding(fwt(torch.tensor([1, 1]), device), fw_w, scale_grad_by_freq=True,
                    sparse=True).sum().backward()


@pytest.mark.parametrize("mode,psw,padding_idx", [("sum", False, None), ("mean", False, 1),
                                                  ("sum", True, 4)])
def test_embedding_bag_sparse_grad(device, mode, psw, padding_idx):
    w = table(seed=1)
    inp = torch.tensor([1, 4, 1, 0, 6, 4, 2, 1])
    offsets = torch.tensor([0, 3, 3, 6])
    psw_t = torch.randn(8, dtype=torch.float64) if psw else None
    out_w = torch.randn(4, 3, dtype=torch.float64)
    tw, dense = w.clone().requires_grad_(), w.clone().requires_grad_()
    for weight, sparse in ((tw, True), (dense, False)):
        (TF.embedding_bag(inp, weight, offsets, mode=mode, sparse=sparse,
                          per_sample_weights=psw_t, padding_idx=padding_idx)
         * out_w).sum().backward()
    fw_w = fwt(w, device).requires_grad_()
    (F.embedding_bag(fwt(inp, device), fw_w, fwt(offsets, device), mode=mode, sparse=True,
                     per_sample_weights=None if psw_t is None else fwt(psw_t, device),
                     padding_idx=padding_idx) * fwt(out_w, device)).sum().backward()
    check_sparse_grad(fw_w.grad, tw.grad)
    close(fw_w.grad.to_dense(), dense.grad)
    # the module, 2-D input (fixed-length bags)
    bag = fw.nn.EmbeddingBag(7, 3, mode="sum", sparse=True, _weight=fwt(w, device))
    tbag = torch.nn.EmbeddingBag(7, 3, mode="sum", sparse=True, _weight=w.clone())
    x = torch.tensor([[1, 1, 3], [5, 0, 1]])
    bag(fwt(x, device)).pow(2).sum().backward()
    tbag(x).pow(2).sum().backward()
    check_sparse_grad(bag.weight.grad, tbag.weight.grad)


def test_embedding_bag_max_sparse_errors(device):
    w = fwt(table(), device).requires_grad_()
    x = fwt(torch.tensor([[1, 2]]), device)
    with pytest.raises(ValueError, match="max mode does not support sparse weights"):
        F.embedding_bag(x, w, mode="max", sparse=True)
    with pytest.raises(ValueError, match="max mode does not support scaling the gradient"):
        F.embedding_bag(x, w, mode="max", scale_grad_by_freq=True)


def test_sparse_grads_accumulate(device):
    w = table()
    i1, i2 = torch.tensor([1, 2, 1, 5]), torch.tensor([[5, 0], [2, 2]])
    tw = w.clone().requires_grad_()
    fw_w = fwt(w, device).requires_grad_()
    for T, weight, dev in ((torch, tw, "cpu"), (fw, fw_w, device)):
        TFn = TF if T is torch else F
        conv = (lambda t: t) if T is torch else (lambda t: fwt(t, dev))
        TFn.embedding(conv(i1), weight, sparse=True).pow(2).sum().backward()
        TFn.embedding(conv(i2), weight, sparse=True).mul(3).sum().backward()
    assert fw_w.grad.layout is fw.sparse_coo and not fw_w.grad.is_coalesced()
    check_sparse_grad(fw_w.grad, tw.grad, raw=False)
    # one weight looked up twice in one graph: the engine adds the two sparse gradients
    tw.grad = fw_w.grad = None
    (TF.embedding(i1, tw, sparse=True).sum() * 2
     + TF.embedding(i2, tw, sparse=True).pow(2).sum()).backward()
    (F.embedding(fwt(i1, device), fw_w, sparse=True).sum() * 2
     + F.embedding(fwt(i2, device), fw_w, sparse=True).pow(2).sum()).backward()
    check_sparse_grad(fw_w.grad, tw.grad, raw=False)


def test_zero_grad_sparse(device):
    emb = fw.nn.Embedding(6, 2, sparse=True).to(device)
    opt = fw.optim.SparseAdam(emb.parameters())
    idx = fwt(torch.tensor([1, 3, 1]), device)
    emb(idx).sum().backward()
    opt.zero_grad()
    assert emb.weight.grad is None
    emb(idx).sum().backward()
    opt.zero_grad(set_to_none=False)
    g = emb.weight.grad
    assert g.layout is fw.sparse_coo and g._nnz() == 0 and tuple(g.shape) == (6, 2)
    assert tuple(g._indices().shape) == (1, 0) and tuple(g._values().shape) == (0, 2)
    # accumulation goes on from the emptied gradient
    emb(idx).sum().backward()
    expect = np.zeros((6, 2))
    expect[1], expect[3] = 2, 1
    np.testing.assert_allclose(npy(emb.weight.grad.to_dense()), expect)
    emb.zero_grad(set_to_none=False)
    assert emb.weight.grad._nnz() == 0


# ---- optimizers --------------------------------------------------------------------------

STEPS = [torch.tensor([[1, 2, 1], [5, 1, 1]]), torch.tensor([[2, 2, 4]]),
         torch.tensor([[5, 1], [1, 0]]), torch.tensor([[3, 3, 3, 1]])]


def run_sparse(T, make_opt, w, device, steps=STEPS, seed=3):
    """Steps of an optimizer on an embedding table with sparse gradients; returns the
    table after each step and the optimizer."""
    g = torch.Generator().manual_seed(seed)
    outs = [torch.randn(*s.shape, w.shape[1], dtype=torch.float64, generator=g) for s in steps]
    conv = (lambda t: t.clone()) if T is torch else (lambda t: fwt(t, device))
    weight = T.nn.Parameter(conv(w))
    opt = make_opt([weight])
    Fn = TF if T is torch else F
    traj = []
    for idx, ow in zip(steps, outs):
        opt.zero_grad()
        (Fn.embedding(conv(idx), weight, sparse=True) * conv(ow)).sum().backward()
        opt.step()
        traj.append(npy(weight).copy() if T is fw else weight.detach().numpy().copy())
    return traj, opt, weight


@pytest.mark.parametrize("kw", [{}, {"maximize": True, "betas": (0.8, 0.99), "lr": 0.05}])
def test_sparse_adam_matches_torch(device, kw):
    w = table(8)
    t_traj, t_opt, tw = run_sparse(torch, lambda p: torch.optim.SparseAdam(p, **kw), w, device)
    f_traj, f_opt, fw_w = run_sparse(fw, lambda p: fw.optim.SparseAdam(p, **kw), w, device)
    for a, b in zip(f_traj, t_traj):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    fs, ts = f_opt.state[fw_w], t_opt.state[tw]
    assert fs["step"] == ts["step"] == 4
    close(fs["exp_avg"], ts["exp_avg"])
    close(fs["exp_avg_sq"], ts["exp_avg_sq"])
    # rows 6 and 7 were never looked up: unchanged, with zero moments
    np.testing.assert_array_equal(f_traj[-1][6:], w[6:].numpy())
    assert not npy(fs["exp_avg"])[6:].any() and not npy(fs["exp_avg_sq"])[6:].any()
    sd = f_opt.state_dict()
    assert sd["param_groups"][0]["betas"] == kw.get("betas", (0.9, 0.999))
    assert set(sd["state"][0]) == {"step", "exp_avg", "exp_avg_sq"}


def test_sparse_adam_empty_gradient_skips_update(device):
    w = fwt(table(), device).requires_grad_()
    opt = fw.optim.SparseAdam([w], lr=0.1)
    F.embedding(fwt(torch.tensor([2, 2]), device), w, padding_idx=2, sparse=True).sum().backward()
    before = npy(w).copy()
    opt.step()
    np.testing.assert_array_equal(npy(w), before)
    assert opt.state[w]["step"] == 1      # as PyTorch: the step counts


def test_sparse_adam_errors(device):
    w = fwt(table(), device).requires_grad_()
    for kw, msg in (({"lr": 0.0}, "Invalid learning rate: 0.0"),
                    ({"eps": 0.0}, "Invalid epsilon value: 0.0"),
                    ({"betas": (1.0, 0.9)}, "Invalid beta parameter at index 0: 1.0"),
                    ({"betas": (0.9, -1.0)}, "Invalid beta parameter at index 1: -1.0")):
        with pytest.raises(ValueError, match=msg.replace(".", r"\.")):
            fw.optim.SparseAdam([w], **kw)
    with pytest.raises(ValueError, match=r"Sparse params at indices \[\[0, 1\]\]: SparseAdam "
                                         "requires dense parameter tensors"):
        fw.optim.SparseAdam([w, w.detach().to_sparse()])
    (w * 2).sum().backward()
    with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients, "
                                           "please consider Adam instead"):
        fw.optim.SparseAdam([w]).step()


@pytest.mark.parametrize("kw", [{"lr": 0.1}, {"lr": 0.1, "momentum": 0.9},
                                {"lr": 0.05, "momentum": 0.8, "nesterov": True,
                                 "maximize": True},
                                {"lr": 0.1, "momentum": 0.5, "dampening": 0.3,
                                 "foreach": True}])
def test_sgd_sparse_matches_torch(device, kw):
    w = table(8)
    t_traj, t_opt, tw = run_sparse(torch, lambda p: torch.optim.SGD(p, **kw), w, device)
    f_traj, f_opt, fw_w = run_sparse(fw, lambda p: fw.optim.SGD(p, **kw), w, device)
    for a, b in zip(f_traj, t_traj):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    if kw.get("momentum"):
        buf = f_opt.state[fw_w]["momentum_buffer"]
        # kept coalesced, so it holds each row once however many steps it has seen
        assert buf.layout is fw.sparse_coo and buf.is_coalesced() and buf._nnz() <= 8
        close(buf.to_dense(), t_opt.state[tw]["momentum_buffer"].to_dense())


@pytest.mark.parametrize("kw", [{"lr": 0.1}, {"lr": 0.2, "lr_decay": 0.1, "eps": 1e-6,
                                              "initial_accumulator_value": 0.5,
                                              "maximize": True}])
def test_adagrad_sparse_matches_torch(device, kw):
    w = table(8)
    t_traj, t_opt, tw = run_sparse(torch, lambda p: torch.optim.Adagrad(p, **kw), w, device)
    f_traj, f_opt, fw_w = run_sparse(fw, lambda p: fw.optim.Adagrad(p, **kw), w, device)
    for a, b in zip(f_traj, t_traj):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    close(f_opt.state[fw_w]["sum"], t_opt.state[tw]["sum"])


def sparse_grad_param(T, device="cpu"):
    w = T.nn.Parameter(T.ones(5, 3, dtype=T.float64, device=device))
    idx = T.tensor([1, 2, 1], device=device)
    (TF if T is torch else F).embedding(idx, w, sparse=True).sum().backward()
    return w


@pytest.mark.parametrize("make", [
    lambda o, p: o.SGD(p, lr=0.1, weight_decay=0.1),
    lambda o, p: o.SGD(p, lr=0.1, fused=True),
    lambda o, p: o.Adagrad(p, lr=0.1, weight_decay=0.1),
    lambda o, p: o.Adagrad(p, lr=0.1, fused=True),
    lambda o, p: o.Adam(p, lr=0.1), lambda o, p: o.AdamW(p, lr=0.1),
    lambda o, p: o.Adam(p, lr=0.1, foreach=False), lambda o, p: o.Adamax(p, lr=0.1),
    lambda o, p: o.NAdam(p, lr=0.1), lambda o, p: o.RAdam(p, lr=0.1),
    lambda o, p: o.RMSprop(p, lr=0.1), lambda o, p: o.Adadelta(p, lr=0.1),
    lambda o, p: o.ASGD(p, lr=0.1), lambda o, p: o.Rprop(p, lr=0.1),
    lambda o, p: o.Adafactor(p, lr=0.1), lambda o, p: o.Muon(p, lr=0.1)])
def test_optimizers_refuse_sparse_grads_as_torch(device, make):
    with pytest.raises(RuntimeError) as expected:
        make(torch.optim, [sparse_grad_param(torch)]).step()
    w = sparse_grad_param(fw, device)
    before = npy(w).copy()
    with pytest.raises(RuntimeError) as got:
        make(fw.optim, [w]).step()
    assert str(got.value) == str(expected.value)
    np.testing.assert_array_equal(npy(w), before)


def test_clip_grad_norm_sparse_raises_as_torch(device):
    with pytest.raises(NotImplementedError):
        torch.nn.utils.clip_grad_norm_([sparse_grad_param(torch)], 1.0)
    with pytest.raises(NotImplementedError, match="SparseC"):
        fw.nn.utils.clip_grad_norm_([sparse_grad_param(fw, device)], 1.0)
