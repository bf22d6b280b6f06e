"""framework.save / framework.load: PyTorch's zip format both ways (torch as the oracle),
sharing of storages, modules and optimizers, map_location, mmap, the weights-only
unpickler, atomic writes and corrupt files."""
import collections
import io
import os
import pickle
import signal
import subprocess
import sys
import textwrap
import time
import zipfile

import numpy as np
import pytest

import framework as fw
from framework import serialization

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
          "float32", "float64"]


def to_np(t):
    """float64/int64/bool NumPy values of a framework or torch tensor."""
    t = t.detach().cpu()
    if "bfloat16" in str(t.dtype):
        t = t.float()
    return t.numpy()


def make(dtype, shape, device, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape) * 50
    if dtype == "bool":
        a = a > 0
    elif dtype == "uint8":
        a = np.abs(a) % 256
    t = fw.tensor(a, device=device)
    return t.to(getattr(fw, dtype))


def cases(dtype, device):
    """0-d, empty, plain, block-crossing, transposed and strided views of one dtype."""
    base = make(dtype, (6, 70), device)
    return {
        "scalar": make(dtype, (), device, 1),
        "empty": make(dtype, (0, 3), device, 2),
        "plain": make(dtype, (5,), device, 3),
        "base": base,
        "t": base.t(),
        "strided": base[1::2, 3:60:7],
        "row": base[4],
    }


# ---- both directions with torch ---------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_framework_file_loads_in_torch(tmp_path, dtype, device):
    torch = pytest.importorskip("torch")
    ts = cases(dtype, device)
    p = tmp_path / "x.pt"
    fw.save(ts, p)
    out = torch.load(p, map_location="cpu")
    assert list(out) == list(ts)
    for k, t in ts.items():
        o = out[k]
        assert str(o.dtype) == "torch." + dtype
        assert tuple(o.shape) == tuple(t.shape) and o.stride() == t.stride()
        assert o.storage_offset() == t.storage_offset()
        np.testing.assert_array_equal(to_np(o), to_np(t))
    # views of one storage still share it in torch
    ptr = out["base"].untyped_storage().data_ptr()
    assert all(out[k].untyped_storage().data_ptr() == ptr for k in ("t", "strided", "row"))


@pytest.mark.parametrize("dtype", DTYPES)
def test_torch_file_loads_here(tmp_path, dtype, device):
    torch = pytest.importorskip("torch")
    ts = {k: torch.from_numpy(np.array(to_np(v))) for k, v in
          cases("float64" if dtype == "bfloat16" else dtype, "cpu").items()}
    ts = {k: v.to(getattr(torch, dtype)) for k, v in ts.items()}
    base = ts["base"]
    ts.update(t=base.t(), strided=base[1::2, 3:60:7], row=base[4])
    p = tmp_path / "t.pt"
    torch.save(ts, p)
    out = fw.load(p, map_location=device)
    for k, t in ts.items():
        o = out[k]
        assert o.dtype is getattr(fw, dtype) and o.device.type == device
        assert tuple(o.shape) == tuple(t.shape) and o.stride() == t.stride()
        np.testing.assert_array_equal(to_np(o), to_np(t))
    st = out["base"]._storage
    assert all(out[k]._storage is st for k in ("t", "strided", "row"))


def test_layout_matches_torch(tmp_path):
    """Same records in the same order at the same offsets, and the same data.pkl bytes."""
    torch = pytest.importorskip("torch")
    x = np.arange(10, dtype=np.float32)
    fw.save({"a": fw.tensor(x), "p": fw.nn.Parameter(fw.ones(3)),
             "h": fw.zeros(2, dtype=fw.bool), "e": fw.empty(0)}, tmp_path / "a.pt")
    os.rename(tmp_path / "a.pt", tmp_path / "ours.pt")
    torch.save({"a": torch.from_numpy(x), "p": torch.nn.Parameter(torch.ones(3)),
                "h": torch.zeros(2, dtype=torch.bool), "e": torch.empty(0)}, tmp_path / "a.pt")
    zo, zt = zipfile.ZipFile(tmp_path / "ours.pt"), zipfile.ZipFile(tmp_path / "a.pt")
    lo = [(i.filename, i.header_offset, i.file_size, i.flag_bits) for i in zo.infolist()]
    lt = [(i.filename, i.header_offset, i.file_size, i.flag_bits) for i in zt.infolist()]
    assert lo == lt
    assert zo.read("a/data.pkl") == zt.read("a/data.pkl")
    assert zo.read("a/version") == b"3\n" and zo.read("a/byteorder") == b"little"
    assert zo.testzip() is None
    raw = (tmp_path / "ours.pt").read_bytes()
    for info in zo.infolist():
        if info.filename.startswith("a/data/"):
            n, e = np.frombuffer(raw[info.header_offset + 26:info.header_offset + 30], "<u2")
            assert (info.header_offset + 30 + n + e) % 64 == 0


def test_torch_mmap_offsets_of_our_file(tmp_path, monkeypatch):
    """torch's mmap load computes storage offsets from miniz's layout; ours must match."""
    torch = pytest.importorskip("torch")
    from torch.utils.serialization import config
    monkeypatch.setenv("TORCH_SERIALIZATION_DEBUG", "1")
    ts = {f"w{i}": fw.randn(3 + 17 * i) for i in range(5)}
    ts["z"] = fw.empty(0)
    fw.save(ts, tmp_path / "m.pt")
    old = config.load.calculate_storage_offsets
    config.load.calculate_storage_offsets = True
    try:
        out = torch.load(tmp_path / "m.pt", mmap=True)
    finally:
        config.load.calculate_storage_offsets = old
    for k in ts:
        np.testing.assert_array_equal(out[k].numpy(), ts[k].numpy())


def test_requires_grad_and_parameter(tmp_path, device):
    torch = pytest.importorskip("torch")
    leaf = fw.ones(3, device=device, requires_grad=True)
    obj = {"leaf": leaf, "nonleaf": leaf * 2, "p": fw.nn.Parameter(fw.ones(2, device=device)),
           "frozen": fw.nn.Parameter(fw.zeros(2, device=device), requires_grad=False)}
    fw.save(obj, tmp_path / "g.pt")
    back = fw.load(tmp_path / "g.pt")
    assert back["leaf"].requires_grad and back["nonleaf"].requires_grad
    assert back["nonleaf"].grad_fn is None
    assert type(back["p"]) is fw.nn.Parameter and back["p"].requires_grad
    assert type(back["frozen"]) is fw.nn.Parameter and not back["frozen"].requires_grad
    assert back["p"].device.type == device
    t = torch.load(tmp_path / "g.pt", map_location="cpu")
    assert t["leaf"].requires_grad and isinstance(t["p"], torch.nn.Parameter)
    assert not t["frozen"].requires_grad
    torch.save(t, tmp_path / "t.pt")
    back = fw.load(tmp_path / "t.pt")
    assert type(back["p"]) is fw.nn.Parameter and back["p"].requires_grad
    assert back["leaf"].requires_grad and not back["frozen"].requires_grad


def test_python_objects_round_trip(tmp_path):
    torch = pytest.importorskip("torch")
    obj = collections.OrderedDict(
        a=[1, 2.5, "s", None, True, (3, 4)], b={"x": b"bytes", "y": {1, 2}, "z": bytearray(b"ab")},
        dt=fw.bfloat16, dev=fw.device("cuda", 1), cpu=fw.device("cpu"), size=fw.Size([2, 3]),
        big=2 ** 70, c=complex(1, 2))
    fw.save(obj, tmp_path / "o.pt")
    back = fw.load(tmp_path / "o.pt")
    assert back == obj and type(back) is collections.OrderedDict
    assert back["dt"] is fw.bfloat16 and back["dev"] == fw.device("cuda:1")
    assert type(back["size"]) is fw.Size
    t = torch.load(tmp_path / "o.pt")
    assert t["dt"] is torch.bfloat16 and t["dev"] == torch.device("cuda:1")
    assert t["size"] == torch.Size([2, 3]) and t["b"]["x"] == b"bytes"
    torch.save(t, tmp_path / "t.pt")
    assert fw.load(tmp_path / "t.pt") == obj


def test_module_state_dict(tmp_path, device):
    torch = pytest.importorskip("torch")
    fw.manual_seed(0)
    m = fw.nn.Sequential(fw.nn.Linear(5, 4), fw.nn.BatchNorm1d(4), fw.nn.Linear(4, 3)).to(device)
    m(fw.randn(8, 5, device=device))                     # running stats move
    fw.save(m.state_dict(), tmp_path / "m.pt")
    sd = fw.load(tmp_path / "m.pt")
    assert list(sd) == list(m.state_dict())
    m2 = fw.nn.Sequential(fw.nn.Linear(5, 4), fw.nn.BatchNorm1d(4), fw.nn.Linear(4, 3))
    m2 = m2.to(device)
    m2.load_state_dict(sd)
    m.eval(), m2.eval()
    x = fw.randn(6, 5, device=device)
    np.testing.assert_array_equal(to_np(m(x)), to_np(m2(x)))
    # torch's module of the same shape takes the file
    tm = torch.nn.Sequential(torch.nn.Linear(5, 4), torch.nn.BatchNorm1d(4),
                             torch.nn.Linear(4, 3))
    tm.load_state_dict(torch.load(tmp_path / "m.pt", map_location="cpu"))
    tm.eval()
    np.testing.assert_allclose(tm(torch.from_numpy(to_np(x))).detach().numpy(), to_np(m(x)),
                               rtol=1e-5, atol=1e-6)
    # and ours takes torch's
    torch.save(tm.state_dict(), tmp_path / "tm.pt")
    m2.load_state_dict(fw.load(tmp_path / "tm.pt", map_location=device))
    np.testing.assert_array_equal(to_np(m(x)), to_np(m2(x)))


def test_optimizer_state_dict(tmp_path, device):
    torch = pytest.importorskip("torch")

    def model():
        fw.manual_seed(1)
        return fw.nn.Linear(4, 3).to(device)

    def step(m, opt):
        opt.zero_grad()
        (m(fw.ones(2, 4, device=device)) ** 2).sum().backward()
        opt.step()

    m = model()
    opt = fw.optim.Adam(m.parameters(), lr=0.1, amsgrad=True)
    step(m, opt), step(m, opt)
    fw.save({"model": m.state_dict(), "optim": opt.state_dict()}, tmp_path / "ck.pt")
    ck = fw.load(tmp_path / "ck.pt")
    m2 = model()
    opt2 = fw.optim.Adam(m2.parameters(), lr=0.1, amsgrad=True)
    m2.load_state_dict(ck["model"])
    opt2.load_state_dict(ck["optim"])
    step(m, opt), step(m2, opt2)
    for a, b in zip(m.parameters(), m2.parameters()):
        np.testing.assert_array_equal(to_np(a), to_np(b))
    t = torch.load(tmp_path / "ck.pt", map_location="cpu")
    sd = opt.state_dict()
    assert t["optim"]["param_groups"][0]["betas"] == (0.9, 0.999)
    for i, st in t["optim"]["state"].items():
        for k, v in st.items():
            if isinstance(v, torch.Tensor):
                np.testing.assert_array_equal(v.numpy(), to_np(ck["optim"]["state"][i][k]))
    assert sorted(t["optim"]["state"]) == sorted(sd["state"])


# ---- files and file objects ---------------------------------------------------------------

class _WriteOnly:
    """A non-seekable binary sink (a pipe, a socket)."""

    def __init__(self):
        self.buf = bytearray()

    def write(self, b):
        self.buf += b
        return len(b)

    def seekable(self):
        return False


class _ReadOnly:
    def __init__(self, data):
        self._b = io.BytesIO(data)
        self.nread = 0

    def read(self, n=-1):
        out = self._b.read(n)
        self.nread += len(out)
        return out

    def seekable(self):
        return False


def test_file_objects(tmp_path):
    torch = pytest.importorskip("torch")
    x = fw.arange(40.).view(5, 8)
    obj = {"x": x, "v": x[1:3, ::2]}
    buf = io.BytesIO()
    fw.save(obj, buf)
    sink = _WriteOnly()
    fw.save(obj, sink)
    assert bytes(sink.buf)[:64] == buf.getvalue()[:64]
    for data in (buf.getvalue(), bytes(sink.buf)):
        for src in (io.BytesIO(data), _ReadOnly(data)):
            back = fw.load(src)
            np.testing.assert_array_equal(back["v"].numpy(), x[1:3, ::2].numpy())
            assert back["v"]._storage is back["x"]._storage
        np.testing.assert_array_equal(torch.load(io.BytesIO(data))["v"].numpy(),
                                      x[1:3, ::2].numpy())
    with open(tmp_path / "f.pt", "wb") as fh:
        fw.save(obj, fh)
    with open(tmp_path / "f.pt", "rb") as fh:
        np.testing.assert_array_equal(fw.load(fh)["x"].numpy(), x.numpy())
    fw.save(obj, str(tmp_path / "s.pt"))
    assert zipfile.ZipFile(tmp_path / "s.pt").namelist()[0] == "s/data.pkl"


class _CountingReader(io.BytesIO):
    def __init__(self, data):
        super().__init__(data)
        self.nread = 0

    def read(self, n=-1):
        out = super().read(n)
        self.nread += len(out)
        return out

    def readinto(self, b):
        n = super().readinto(b)
        self.nread += n
        return n


def test_load_reads_each_record_once():
    ts = {f"w{i}": fw.randn(1000) for i in range(8)}
    buf = io.BytesIO()
    fw.save(ts, buf)
    r = _CountingReader(buf.getvalue())
    fw.load(r)
    assert r.nread < 1.2 * len(buf.getvalue())


def test_mmap(tmp_path, device):
    x = fw.arange(1000.)
    fw.save({"x": x, "v": x[10:20]}, tmp_path / "m.pt")
    back = fw.load(tmp_path / "m.pt", mmap=True, map_location=device)
    np.testing.assert_array_equal(to_np(back["v"]), np.arange(10, 20.))
    assert back["v"]._storage is back["x"]._storage
    if device == "cpu":
        owner = back["x"]._storage.buf
        while not isinstance(owner, np.memmap) and hasattr(owner, "_owner"):
            owner = owner._owner
        assert isinstance(owner, np.memmap)
        back["x"].fill_(-1.0)                      # copy-on-write: the file keeps its data
        np.testing.assert_array_equal(fw.load(tmp_path / "m.pt")["x"].numpy(), x.numpy())
    with pytest.raises(ValueError, match="mmap"):
        fw.load(io.BytesIO((tmp_path / "m.pt").read_bytes()), mmap=True)


# ---- devices and map_location ------------------------------------------------------------

def test_cuda_location(tmp_path):
    if not fw.cuda.is_available():
        pytest.skip("no cuda")
    torch = pytest.importorskip("torch")
    x = fw.arange(6., device="cuda").view(2, 3)
    fw.save({"x": x, "c": fw.ones(2)}, tmp_path / "c.pt")
    raw = zipfile.ZipFile(tmp_path / "c.pt").read("c/data.pkl")
    assert b"cuda:0" in raw
    back = fw.load(tmp_path / "c.pt")
    assert back["x"].device == fw.device("cuda:0") and back["c"].device.type == "cpu"
    np.testing.assert_array_equal(to_np(back["x"]), np.arange(6.).reshape(2, 3))
    for ml in ("cpu", fw.device("cpu"), {"cuda:0": "cpu"}, lambda s, loc: s,
               lambda s, loc: s.cpu()):
        b = fw.load(tmp_path / "c.pt", map_location=ml)
        assert b["x"].device.type == "cpu", ml
        np.testing.assert_array_equal(b["x"].numpy(), np.arange(6.).reshape(2, 3))
    b = fw.load(tmp_path / "c.pt", map_location=lambda s, loc: None)   # default placement
    assert b["x"].device.type == "cuda"
    b = fw.load(tmp_path / "c.pt", map_location="cuda")
    assert b["c"].device.type == "cuda"
    b = fw.load(tmp_path / "c.pt", map_location=lambda s, loc: s.cuda(0))
    assert b["c"].device.type == "cuda"
    t = torch.load(tmp_path / "c.pt", map_location="cpu")
    np.testing.assert_array_equal(t["x"].numpy(), np.arange(6.).reshape(2, 3))


def test_map_location_cpu_only(tmp_path):
    x = fw.ones(2)
    fw.save({"x": x}, tmp_path / "a.pt")
    seen = []
    b = fw.load(tmp_path / "a.pt", map_location=lambda s, loc: seen.append(loc) or s)
    assert seen == ["cpu"] and b["x"].device.type == "cpu"
    b = fw.load(tmp_path / "a.pt", map_location={"cuda:0": "cpu"})
    assert b["x"].device.type == "cpu"
    with pytest.raises(TypeError, match="map_location"):
        fw.load(tmp_path / "a.pt", map_location=3.5)


# ---- the weights-only unpickler -------------------------------------------------------

class _Touch:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (os.system, (f"touch {self.path}",))


class Point:
    """A user class, loadable with weights_only only once allowed."""

    def __init__(self, x, y):
        self.x, self.y = x, y

    def __eq__(self, other):
        return isinstance(other, Point) and (self.x, self.y) == (other.x, other.y)


@pytest.mark.parametrize("target", ["os.system", "builtins.eval", "subprocess.Popen"])
def test_malicious_pickle_refused(tmp_path, target):
    marker = tmp_path / "pwned"
    if target == "os.system":
        obj = {"w": fw.ones(2), "evil": _Touch(marker)}
        name = os.system.__module__ + ".system"
    else:
        mod, fn = target.split(".")

        class Evil:
            def __reduce__(self):
                cmd = (f"open({str(marker)!r}, 'w')" if fn == "eval"
                       else ["touch", str(marker)])
                return (getattr(__import__(mod), fn), (cmd,))
        obj = {"evil": Evil()}
        name = target
    fw.save(obj, tmp_path / "evil.pt")
    with pytest.raises(pickle.UnpicklingError, match="weights_only") as e:
        fw.load(tmp_path / "evil.pt")
    assert name in str(e.value)
    with pytest.raises(pickle.UnpicklingError):
        fw.load(tmp_path / "evil.pt", weights_only=True)
    time.sleep(0.05)
    assert not marker.exists()
    if target == "os.system":   # the explicit opt-in runs full pickle
        fw.load(tmp_path / "evil.pt", weights_only=False)
        assert marker.exists()


def test_torch_written_payload_refused(tmp_path):
    torch = pytest.importorskip("torch")
    marker = tmp_path / "pwned"
    torch.save({"evil": _Touch(marker)}, tmp_path / "e.pt")
    with pytest.raises(pickle.UnpicklingError, match="weights_only"):
        fw.load(tmp_path / "e.pt")
    assert not marker.exists()


def test_build_cannot_reach_tensor_fields(tmp_path):
    """A BUILD opcode must not rewrite a tensor's storage, offset or sizes."""
    from framework import _serialization_pickle as sp
    t = fw.ones(4)

    class Forged:
        def __init__(self, state):
            self.state = state

        def __reduce__(self):
            return (sp._REBUILD_TENSOR, (sp.StorageRef(t._storage, t.dtype), 0, (4,), (1,),
                                         False, collections.OrderedDict()), self.state)
    for state in [(None, {"_offset": 10 ** 12}), {"_offset": 10 ** 12}, {"_shape": (10 ** 9,)}]:
        fw.save({"t": Forged(state)}, tmp_path / "f.pt")
        with pytest.raises(pickle.UnpicklingError, match="BUILD"):
            fw.load(tmp_path / "f.pt")


def test_out_of_bounds_view_refused(tmp_path):
    from framework import _serialization_pickle as sp
    t = fw.ones(4)

    class Forged:
        def __reduce__(self):
            return (sp._REBUILD_TENSOR, (sp.StorageRef(t._storage, t.dtype), 2, (4,), (1,),
                                         False, collections.OrderedDict()))
    fw.save({"t": Forged()}, tmp_path / "f.pt")
    with pytest.raises(RuntimeError, match="out of bounds"):
        fw.load(tmp_path / "f.pt")


def test_safe_globals(tmp_path):
    fw.save({"p": Point(1, 2), "t": fw.ones(1)}, tmp_path / "p.pt")
    qual = f"{Point.__module__}.Point"
    serialization.clear_safe_globals()
    try:
        with pytest.raises(pickle.UnpicklingError, match=qual):
            fw.load(tmp_path / "p.pt")
        with serialization.safe_globals([Point]):
            assert serialization.get_safe_globals() == [Point]
            assert fw.load(tmp_path / "p.pt")["p"] == Point(1, 2)
        assert serialization.get_safe_globals() == []
        with pytest.raises(pickle.UnpicklingError):
            fw.load(tmp_path / "p.pt")
        serialization.add_safe_globals([(Point, qual)])
        assert fw.load(tmp_path / "p.pt")["p"] == Point(1, 2)
        serialization.clear_safe_globals()
        assert serialization.get_safe_globals() == []
        assert fw.load(tmp_path / "p.pt", weights_only=False)["p"] == Point(1, 2)
    finally:
        serialization.clear_safe_globals()


# ---- atomic writes and bad files -----------------------------------------------------------

def test_save_error_leaves_previous_file(tmp_path):
    p = tmp_path / "a.pt"
    fw.save({"v": 1}, p)
    with pytest.raises(Exception):
        fw.save({"f": lambda: 0, "t": fw.ones(3)}, p)
    assert fw.load(p) == {"v": 1}
    assert os.listdir(tmp_path) == ["a.pt"]
    with pytest.raises(RuntimeError, match="Parent directory"):
        fw.save({}, tmp_path / "missing" / "x.pt")


def test_killed_save_leaves_previous_file(tmp_path):
    p = tmp_path / "ck.pt"
    fw.save({"v": 1}, p)
    script = textwrap.dedent(f"""
        import sys, numpy as np, framework as fw
        big = fw.from_numpy(np.ones(96 * 2 ** 20, np.float32))   # 384 MiB
        print("ready", flush=True)
        fw.save({{"big": big}}, {str(p)!r})
        print("done", flush=True)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                            cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    try:
        assert proc.stdout.readline().strip() == b"ready"
        deadline = time.time() + 60
        while time.time() < deadline:
            tmps = [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]
            if tmps and os.path.getsize(tmp_path / tmps[0]) > 2 ** 20:
                break
            time.sleep(0.001)
        else:
            pytest.fail("the save never started writing")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    out = fw.load(p)
    if [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]:
        assert out == {"v": 1}      # killed mid-write: the previous file is intact
    else:                           # (the save won the race and renamed a complete file)
        assert out["big"].shape == (96 * 2 ** 20,)


def test_corrupt_files(tmp_path):
    good = tmp_path / "good.pt"
    fw.save({"x": fw.randn(1000)}, good)
    data = good.read_bytes()
    rng = np.random.default_rng(0)
    bad = {"random.pt": rng.bytes(5000), "half.pt": data[:len(data) // 2], "empty.pt": b"",
           "tail.pt": data[:-10]}
    for name, b in bad.items():
        (tmp_path / name).write_bytes(b)
        with pytest.raises(RuntimeError, match="not a valid checkpoint") as e:
            fw.load(tmp_path / name)
        assert name in str(e.value)
    # the central directory intact but the data cut out of the middle
    z = zipfile.ZipFile(good)
    info = z.getinfo("good/data/0")
    cut = data[:info.header_offset + 100] + data[-(len(data) - info.header_offset - 4000):]
    (tmp_path / "cut.pt").write_bytes(cut)
    with pytest.raises(RuntimeError, match="cut.pt"):
        fw.load(tmp_path / "cut.pt")


def test_legacy_format_error(tmp_path):
    torch = pytest.importorskip("torch")
    torch.save({"x": torch.ones(2)}, tmp_path / "old.pt", _use_new_zipfile_serialization=False)
    with pytest.raises(RuntimeError, match="legacy"):
        fw.load(tmp_path / "old.pt")


def test_mixed_dtype_views_refused():
    x = fw.ones(4)
    y = fw.Tensor._make(x._storage, (4,), (1,), 0, fw.int32)
    with pytest.raises(RuntimeError, match="different types"):
        fw.save({"x": x, "y": y}, io.BytesIO())


def test_unsafe_globals_in_checkpoint(tmp_path):
    torch = pytest.importorskip("torch")
    obj = {"t": torch.ones(2), "p": torch.nn.Parameter(torch.ones(1)), "s": {1},
           "b": b"x", "evil": _Touch(tmp_path / "pwned")}
    for proto in (2, 4):
        torch.save(obj, tmp_path / "e.pt", pickle_protocol=proto)
        assert serialization.get_unsafe_globals_in_checkpoint(tmp_path / "e.pt") == \
            [os.system.__module__ + ".system"]
    del obj["evil"]
    torch.save(obj, tmp_path / "ok.pt", pickle_protocol=4)     # protocol 4 loads too
    back = fw.load(tmp_path / "ok.pt")
    assert back["s"] == {1} and back["b"] == b"x" and type(back["p"]) is fw.nn.Parameter
    assert serialization.get_unsafe_globals_in_checkpoint(tmp_path / "ok.pt") == []
    assert not (tmp_path / "pwned").exists()


def test_large_records_crc():
    """Records over 1 MiB take the path that computes CRC-32 beside the write."""
    torch = pytest.importorskip("torch")
    ts = {"big": fw.randn(300_000), "small": fw.ones(3), "big2": fw.arange(400_000)}
    buf = io.BytesIO()
    fw.save(ts, buf)
    assert zipfile.ZipFile(io.BytesIO(buf.getvalue())).testzip() is None
    out = torch.load(io.BytesIO(buf.getvalue()))
    for k in ts:
        np.testing.assert_array_equal(out[k].numpy(), ts[k].numpy())
