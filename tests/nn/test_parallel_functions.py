"""``nn.parallel``'s functional data parallelism (scatter, gather, replicate,
parallel_apply, data_parallel) in one process, on cpu "devices" (and the simulated cuda
one): outputs and gradients against PyTorch on the whole batch."""
from collections import namedtuple

import numpy as np
import pytest

import framework as fw
import framework.nn as nn
from framework.nn.parallel import (data_parallel, gather, parallel_apply, replicate,
                                   scatter, scatter_kwargs)

CPU2 = ["cpu", "cpu"]
Pair = namedtuple("Pair", "a b")


def test_scatter_and_gather_nested():
    x = fw.arange(15.0).reshape(5, 3)
    chunks = scatter(x, CPU2)
    assert [c.shape[0] for c in chunks] == [3, 2]      # as Tensor.chunk
    parts = scatter((x, {"k": x[:, :2]}, "tag", Pair(x, x)), CPU2)
    assert len(parts) == 2 and parts[1][2] == "tag"
    assert parts[1][1]["k"].tolist() == x[3:, :2].tolist()
    assert isinstance(parts[0][3], Pair) and parts[0][3].b.tolist() == x[:3].tolist()
    assert scatter(x, CPU2, dim=1)[0].shape == (5, 2)
    args, kwargs = scatter_kwargs((x,), {"flag": True}, CPU2)
    assert len(args) == len(kwargs) == 2 and kwargs[1] == {"flag": True}
    back = gather([(p[0], {"k": p[1]["k"]}, None) for p in parts], -1)
    assert back[0].tolist() == x.tolist() and back[1]["k"].tolist() == x[:, :2].tolist()
    assert back[2] is None
    with pytest.warns(UserWarning, match="all input tensors were scalars"):
        v = gather([fw.tensor(1.0), fw.tensor(2.0)], "cpu")
    assert v.tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match="All dicts must have the same number of keys"):
        gather([{"a": x}, {"a": x, "b": x}], "cpu")


def _net():
    fw.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))


def test_replicate_parallel_apply_gather_match_torch():
    torch = pytest.importorskip("torch")
    net = _net()
    x = fw.tensor(np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32))
    replicas = replicate(net, CPU2)
    assert len(replicas) == 2 and list(replicas[0].parameters()) == []
    assert replicas[1][2].weight.tolist() == net[2].weight.tolist()
    outs = parallel_apply(replicas, scatter(x, CPU2), devices=CPU2)
    y = gather(outs, "cpu")
    (y ** 2).sum().backward()

    ref = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    with torch.no_grad():
        for p, q in zip(ref.parameters(), net.parameters()):
            p.copy_(torch.tensor(q.detach().numpy()))
    ty = ref(torch.tensor(x.numpy()))
    (ty ** 2).sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-6,
                               atol=1e-6)
    # the replicas' backward reaches the original parameters
    for p, q in zip(ref.parameters(), net.parameters()):
        np.testing.assert_allclose(q.grad.numpy(), p.grad.numpy(), rtol=1e-5, atol=1e-6)

    det = replicate(net, ["cpu"], detach=True)[0]
    assert not det[0].weight.requires_grad


def test_parallel_apply_errors():
    def boom(x):
        raise KeyError("bad")
    mod = nn.Linear(2, 2)
    mod.forward = boom
    with pytest.raises(KeyError, match="Caught KeyError in replica 1 on device cpu"):
        parallel_apply([nn.Identity(), mod], [fw.ones(1), fw.ones(1)], devices=CPU2)
    with pytest.raises(AssertionError, match="number of modules 2 is not equal to the "
                       "number of inputs 1"):
        parallel_apply([mod, mod], [fw.ones(1)])


def test_data_parallel():
    net = _net()
    x = fw.randn(5, 3)
    want = net(x).detach().tolist()
    assert data_parallel(net, x, device_ids=CPU2).detach().tolist() == want
    assert data_parallel(net, (x,), device_ids=["cpu"]).detach().tolist() == want
    if not fw.cuda.is_available():
        assert data_parallel(net, x).detach().tolist() == want
    with pytest.raises(RuntimeError, match=r"module must have its parameters and buffers on "
                       r"device cuda:0 \(device_ids\[0\]\)"):
        data_parallel(net, x, device_ids=[0])


def test_scatter_to_cuda():
    if not fw.cuda.is_available():
        pytest.skip("no cuda device")
    x = fw.arange(6.0).reshape(3, 2)
    a, b = scatter(x, [0, "cpu"])
    assert a.device.type == "cuda" and b.device.type == "cpu"
    assert gather([a, b], -1).tolist() == x.tolist()
