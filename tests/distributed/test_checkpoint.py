"""framework.distributed.checkpoint (DCP): single-process round trips of a model and
optimizer state (exact), resumed training, errors, async_save, format_utils; and, under
``mpiexec`` (checkpoint_script.py), a fully_shard model + optimizer and a DTensor saved on 2
ranks and loaded into 1 process and into 4 ranks (resharding), exactly."""
import concurrent.futures
import os
import re

import numpy as np
import pytest

import framework as fw
import framework.distributed.checkpoint as dcp
import framework.nn as nn
from framework.distributed.checkpoint.format_utils import dcp_to_torch_save, torch_save_to_dcp
from framework.distributed.checkpoint.state_dict import (
    get_optimizer_state_dict, get_state_dict, set_state_dict)

# without a process group DCP saves and loads as one process, and says so (as PyTorch)
pytestmark = pytest.mark.filterwarnings("ignore:.*in a single process:UserWarning")


def _make(seed):
    fw.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, 5), nn.Tanh(), nn.Linear(5, 2))
    return model, fw.optim.AdamW(model.parameters(), lr=0.05)


def _train(model, opt, steps, seed=1):
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        x = fw.tensor(rng.standard_normal((6, 4)), dtype=fw.float32)
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()


def _same(a, b):
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, fw.Tensor):
        return a.dtype == b.dtype and fw.equal(a, b)
    return a == b


def test_round_trip_model_and_optimizer(tmp_path):
    model, opt = _make(0)
    _train(model, opt, 2)
    extra = {"epoch": 3, "name": "run", "bf": fw.arange(5).to(fw.bfloat16),
             "idx": fw.tensor([[1, 2], [3, 4]]), "lst": [fw.ones(2), 0.5]}
    saved = {"model": model.state_dict(), "optim": opt.state_dict(), **extra}
    md = dcp.save(saved, checkpoint_id=tmp_path)
    assert sorted(os.listdir(tmp_path)) == [".metadata", "__0_0.distcp"]
    assert isinstance(md.state_dict_metadata["model.0.weight"], dcp.TensorStorageMetadata)
    assert isinstance(md.state_dict_metadata["optim.param_groups.0.lr"],
                      dcp.BytesStorageMetadata)
    assert list(md.state_dict_metadata["model.0.weight"].chunks[0].sizes) == [5, 4]

    model2, opt2 = _make(5)
    _train(model2, opt2, 1, seed=9)
    sd = {"model": model2.state_dict(), "optim": opt2.state_dict(), "epoch": 0,
          "name": "", "bf": fw.zeros(5, dtype=fw.bfloat16),
          "idx": fw.zeros(2, 2, dtype=fw.int64), "lst": [fw.zeros(2), 0.0]}
    w = sd["model"]["0.weight"]
    dcp.load(sd, checkpoint_id=tmp_path)
    assert sd["model"]["0.weight"] is w          # tensors are loaded in place
    assert _same(sd, {"model": model.state_dict(), "optim": opt.state_dict(), **extra})
    model2.load_state_dict(sd["model"])
    assert all(fw.equal(a, b) for a, b in zip(model.parameters(), model2.parameters()))


def test_resume_training_matches_uninterrupted(tmp_path):
    ref, ref_opt = _make(0)
    _train(ref, ref_opt, 4)

    model, opt = _make(0)
    _train(model, opt, 2)
    msd, osd = get_state_dict(model, opt)
    dcp.save({"model": msd, "optim": osd}, checkpoint_id=tmp_path)
    model2, opt2 = _make(3)
    _train(model2, opt2, 1, seed=7)
    msd, osd = get_state_dict(model2, opt2)
    assert "0.weight" in osd["state"] and osd["param_groups"][0]["params"][0] == "0.weight"
    sd = {"model": msd, "optim": osd}
    dcp.load(sd, checkpoint_id=tmp_path)
    set_state_dict(model2, opt2, model_state_dict=sd["model"], optim_state_dict=sd["optim"])
    # the steps after the checkpoint see the same batches as the uninterrupted run
    rng = np.random.default_rng(1)
    batches = [fw.tensor(rng.standard_normal((6, 4)), dtype=fw.float32) for _ in range(4)]
    for x in batches[2:]:
        opt2.zero_grad()
        model2(x).pow(2).mean().backward()
        opt2.step()
    for a, b in zip(ref.parameters(), model2.parameters()):
        assert fw.equal(a, b)


class _AppState(dcp.Stateful):
    """The application state of PyTorch's DCP recipe: model and optimizer together."""

    def __init__(self, model, opt):
        self.model, self.opt = model, opt

    def state_dict(self):
        msd, osd = get_state_dict(self.model, self.opt)
        return {"model": msd, "optim": osd}

    def load_state_dict(self, state_dict):
        set_state_dict(self.model, self.opt, model_state_dict=state_dict["model"],
                       optim_state_dict=state_dict["optim"])


def test_stateful(tmp_path):
    model, opt = _make(0)
    _train(model, opt, 2)
    dcp.save({"app": _AppState(model, opt)}, checkpoint_id=tmp_path)
    model2, opt2 = _make(1)
    _train(model2, opt2, 1, seed=4)
    opt2.param_groups[0]["lr"] = 0.3        # restored through _AppState.load_state_dict
    dcp.load({"app": _AppState(model2, opt2)}, checkpoint_id=tmp_path)
    assert _same(model2.state_dict(), model.state_dict())
    assert _same(opt2.state_dict(), opt.state_dict())


def test_errors(tmp_path):
    with pytest.warns(UserWarning, match="assuming the intent is to save in a single process"):
        dcp.save({"w": fw.ones(3), "n": 1}, checkpoint_id=tmp_path)
    with pytest.raises(dcp.CheckpointException, match="Missing key in checkpoint state_dict: x"):
        dcp.load({"w": fw.zeros(3), "x": fw.zeros(2)}, checkpoint_id=tmp_path)
    with pytest.raises(dcp.CheckpointException, match=r"Size mismatch .* \[3\] .* \[4\] for w"):
        dcp.load({"w": fw.zeros(4)}, checkpoint_id=tmp_path)
    sd = {"w": fw.zeros(3), "x": fw.zeros(2)}
    dcp.load(sd, checkpoint_id=tmp_path, planner=dcp.DefaultLoadPlanner(allow_partial_load=True))
    assert fw.equal(sd["w"], fw.ones(3)) and fw.equal(sd["x"], fw.zeros(2))
    with pytest.raises(RuntimeError, match="checkpoint_id"):
        dcp.save({"w": fw.ones(3)})
    with pytest.raises(dcp.CheckpointException, match="no distributed checkpoint"):
        dcp.load({"w": fw.ones(3)}, checkpoint_id=tmp_path / "nowhere")


def test_async_save_and_deprecated_api(tmp_path):
    t = fw.arange(6, dtype=fw.float32)
    fut = dcp.async_save({"t": t, "k": 4}, checkpoint_id=tmp_path / "a")
    t.add_(100)                 # staged before async_save returned: not in the checkpoint
    assert isinstance(fut, concurrent.futures.Future)
    assert isinstance(fut.result(timeout=60), dcp.Metadata)
    sd = {"t": fw.zeros(6), "k": 0}
    with pytest.warns(FutureWarning):
        dcp.load_state_dict(sd, dcp.FileSystemReader(tmp_path / "a"))
    assert fw.equal(sd["t"], fw.arange(6, dtype=fw.float32)) and sd["k"] == 4
    with pytest.warns(FutureWarning):
        dcp.save_state_dict({"u": fw.ones(2)}, dcp.FileSystemWriter(tmp_path / "b"))
    sd = {"u": fw.zeros(2)}
    dcp.load(sd, storage_reader=dcp.FileSystemReader(tmp_path / "b"))
    assert fw.equal(sd["u"], fw.ones(2))


def test_format_utils(tmp_path):
    model, opt = _make(0)
    _train(model, opt, 1)
    osd = get_optimizer_state_dict(model, opt)
    dcp.save({"model": model.state_dict(), "optim": osd}, checkpoint_id=tmp_path / "dcp")
    dcp_to_torch_save(tmp_path / "dcp", tmp_path / "full.pt")
    full = fw.load(tmp_path / "full.pt", weights_only=True)
    assert _same(full, {"model": model.state_dict(), "optim": osd})
    torch_save_to_dcp(tmp_path / "full.pt", tmp_path / "dcp2")
    sd = {"model": _make(4)[0].state_dict()}
    dcp.load(sd, checkpoint_id=tmp_path / "dcp2", planner=dcp.DefaultLoadPlanner(
        allow_partial_load=True))
    assert _same(sd["model"], model.state_dict())


def test_keys_and_errors_match_torch(tmp_path):
    """The flattened keys (model + optimizer under keys), the chunks of plain tensors and
    the missing-key error are PyTorch's."""
    torch = pytest.importorskip("torch")
    tdcp = pytest.importorskip("torch.distributed.checkpoint")
    tm = torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.Tanh(), torch.nn.Linear(5, 2))
    topt = torch.optim.AdamW(tm.parameters(), lr=0.05)
    tm(torch.randn(6, 4)).pow(2).mean().backward()
    topt.step()
    tsd = {"model": tm.state_dict(), "optim": topt.state_dict(), "epoch": 1,
           "lst": [torch.ones(2), 0.5]}
    tmd = tdcp.save(tsd, checkpoint_id=str(tmp_path / "torch"))
    model, opt = _make(0)
    _train(model, opt, 1)
    md = dcp.save({"model": model.state_dict(), "optim": opt.state_dict(), "epoch": 1,
                   "lst": [fw.ones(2), 0.5]}, checkpoint_id=tmp_path / "ours")
    assert sorted(md.state_dict_metadata) == sorted(tmd.state_dict_metadata)
    for k, v in tmd.state_dict_metadata.items():
        assert type(md.state_dict_metadata[k]).__name__ == type(v).__name__, k
        if hasattr(v, "chunks"):
            ours = md.state_dict_metadata[k]
            assert list(ours.size) == list(v.size), k
            assert [(list(c.offsets), list(c.sizes)) for c in ours.chunks] == \
                [(list(c.offsets), list(c.sizes)) for c in v.chunks], k
    with pytest.raises(tdcp.CheckpointException) as te:
        tdcp.load({"x": torch.zeros(2)}, checkpoint_id=str(tmp_path / "torch"))
    with pytest.raises(dcp.CheckpointException) as e:
        dcp.load({"x": fw.zeros(2)}, checkpoint_id=tmp_path / "ours")
    last = str(te.value).strip().splitlines()[-1]
    assert last in str(e.value), (last, str(e.value))


def test_round_trip_on_device(tmp_path, device):
    t = fw.randn(3, 5).to(device)
    dcp.save({"t": t, "h": t.half()}, checkpoint_id=tmp_path)
    sd = {"t": fw.zeros(3, 5, device=device), "h": fw.zeros(3, 5, device=device).half()}
    dcp.load(sd, checkpoint_id=tmp_path)
    assert sd["t"].device.type == device and fw.equal(sd["t"], t)
    assert fw.equal(sd["h"], t.half())


def test_checkpoint_files_load_safely(tmp_path):
    """The metadata is JSON and values load with weights_only: no pickle runs code."""
    dcp.save({"w": fw.ones(2), "n": {"a": 1}}, checkpoint_id=tmp_path)
    text = (tmp_path / ".metadata").read_text()
    assert text.startswith("{") and '"w"' in text


# ---- several ranks under mpiexec --------------------------------------------------------

def _mpi():
    pytest.importorskip("mpi4py")
    from tests.distributed import test_ddp
    if test_ddp.MPIEXEC is None:
        pytest.skip("no mpiexec (pip install mpich)")
    return test_ddp


def _run(n, *args):
    test_ddp = _mpi()
    r = test_ddp.mpirun(n, os.path.join(test_ddp.HERE, "checkpoint_script.py"), *args)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-5000:]
    assert "FAIL" not in r.stdout, out[-5000:]
    done = re.findall(r"rank (\d+) DONE failures=0", r.stdout)
    assert sorted(int(d) for d in done) == list(range(n)), out[-5000:]
    return r.stdout


def test_fsdp_and_dtensor_reshard(tmp_path):
    out = _run(2, "save", str(tmp_path))
    assert out.count("PASS saved") == 2 and out.count("PASS async_save") == 2
    names = sorted(os.listdir(tmp_path / "fsdp"))
    assert names == [".metadata", "__0_0.distcp", "__1_0.distcp"]
    md = dcp.FileSystemReader(tmp_path / "fsdp").read_metadata()
    chunks = md.state_dict_metadata["model.blocks.0.weight"].chunks
    assert sorted((tuple(c.offsets), tuple(c.sizes)) for c in chunks) == \
        [((0, 0), (3, 4)), ((3, 0), (2, 4))]
    # a replicated value (Adam's step) is written once
    assert len(md.state_dict_metadata["optim.state.head.weight.step"].chunks) == 1

    # into one process, without a process group: plain model and optimizer
    ref = fw.load(tmp_path / "full.pt")
    fw.manual_seed(3)
    model = nn.Module()
    model.blocks = nn.ModuleList([nn.Linear(4, 5), nn.Linear(5, 3)])
    model.head = nn.Linear(3, 2, bias=False)
    opt = fw.optim.Adam(model.parameters(), lr=0.05)
    for p in model.parameters():
        p.grad = fw.ones_like(p)
    opt.step()                  # the optimizer state to load into
    msd, osd = get_state_dict(model, opt)
    sd = {"model": msd, "optim": osd, "step": 0}
    dcp.load(sd, checkpoint_id=tmp_path / "fsdp")
    assert sd["step"] == 2
    assert _same(sd["model"], ref["model"])
    assert _same(sd["optim"]["state"], ref["optim"]["state"])
    sd = model.state_dict()
    dcp.load(sd, checkpoint_id=tmp_path / "plain")
    assert _same(sd, ref["model"])

    # into 4 ranks (other chunk boundaries, an empty shard), the DTensor Shard(0) as
    # Replicate and as Shard(1)
    out = _run(4, "load", str(tmp_path))
    for check in ("model reshards exactly", "optimizer state reshards exactly",
                  "non-tensor values", "async_save checkpoint loads", "training resumes",
                  "set_state_dict of full state dicts",
                  "Shard(0) saved, Replicate loaded", "Shard(0) saved, Shard(1) loaded"):
        assert out.count(f"PASS {check}") == 4, out
