"""framework.utils.safetensors: checked against the format spec, and against the
``safetensors`` package (files both ways, identical headers, same errors) where installed."""
import json
import struct

import numpy as np
import pytest

import framework as fw
from framework.utils import safetensors as st

DTYPES = {"bool": "BOOL", "uint8": "U8", "int8": "I8", "int16": "I16", "int32": "I32",
          "int64": "I64", "float16": "F16", "bfloat16": "BF16", "float32": "F32",
          "float64": "F64"}


def to_np(t):
    t = t.detach().cpu()
    if "bfloat16" in str(t.dtype):
        t = t.float()
    return t.numpy()


def tensors(device):
    """One tensor of every dtype, plus a 0-d, an empty and a block-crossing one."""
    rng = np.random.default_rng(0)
    out = {}
    for name in DTYPES:
        a = rng.standard_normal((3, 5)) * 40
        if name == "bool":
            a = a > 0
        elif name == "uint8":
            a = np.abs(a)
        out[f"t_{name}"] = fw.tensor(a, device=device).to(getattr(fw, name))
    out["scalar"] = fw.tensor(2.5, device=device)
    out["empty"] = fw.zeros(0, 4, device=device)
    out["big"] = fw.tensor(rng.standard_normal(1500).astype(np.float32), device=device)
    return out


def parse(data):
    (n,) = struct.unpack("<Q", data[:8])
    return n, json.loads(data[8:8 + n]), data[8 + n:]


def test_format_against_spec(device):
    ts = tensors(device)
    data = st.save(ts, metadata={"format": "pt"})
    n, header, body = parse(data)
    assert n % 8 == 0 and data[8:8 + n].decode().endswith(("}", " "))
    assert header.pop("__metadata__") == {"format": "pt"}
    assert set(header) == set(ts)
    # laid out by dtype (larger first), then name; contiguous, covering the data
    items = sorted(header.items(), key=lambda kv: kv[1]["data_offsets"])
    itemsize = {"BOOL": 1, "U8": 1, "I8": 1, "I16": 2, "F16": 2, "BF16": 2, "I32": 4,
                "F32": 4, "I64": 8, "F64": 8}
    sizes = [itemsize[v["dtype"]] for _, v in items]
    assert sizes == sorted(sizes, reverse=True)
    pos = 0
    for name, info in items:
        t = ts[name]
        assert info["dtype"] == DTYPES[str(t.dtype).split(".")[1]]
        assert info["shape"] == list(t.shape)
        b, e = info["data_offsets"]
        assert b == pos and e - b == t.numel() * t.element_size()
        raw = np.frombuffer(body[b:e], dtype=np.uint8)
        if info["dtype"] == "BF16":
            got = (raw.view("<u2").astype(np.uint32) << 16).view(np.float32)
        else:
            got = raw.view({"BOOL": np.bool_}.get(info["dtype"], t.numpy().dtype
                                                  if device == "cpu" else to_np(t).dtype))
        np.testing.assert_array_equal(got.reshape(t.shape), to_np(t))
        pos = e
    assert pos == len(body)


def test_round_trip(tmp_path, device):
    ts = tensors(device)
    st.save_file(ts, tmp_path / "a.safetensors", metadata={"k": "v"})
    out = st.load_file(tmp_path / "a.safetensors", device=device)
    assert list(out) == sorted(ts)
    for k, t in ts.items():
        assert out[k].dtype is t.dtype and out[k].device.type == device
        assert out[k].shape == t.shape
        np.testing.assert_array_equal(to_np(out[k]), to_np(t))
    back = st.load(st.save(ts))
    for k, t in ts.items():
        np.testing.assert_array_equal(to_np(back[k]), to_np(t))
    # a view that is contiguous is saved by itself
    x = fw.arange(10., device=device)
    np.testing.assert_array_equal(to_np(st.load(st.save({"v": x[3:7]}))["v"]), [3, 4, 5, 6])


def test_safe_open(tmp_path, device):
    ts = tensors("cpu")
    st.save_file(ts, tmp_path / "a.safetensors", metadata={"format": "pt"})
    with st.safe_open(tmp_path / "a.safetensors", framework="pt", device=device) as f:
        assert f.keys() == sorted(ts)
        assert f.metadata() == {"format": "pt"}
        for k in ("big", "t_bfloat16", "scalar", "empty", "t_bool"):
            t = f.get_tensor(k)
            assert t.device.type == device and t.dtype is ts[k].dtype
            np.testing.assert_array_equal(to_np(t), to_np(ts[k]))
        s = f.get_slice("t_float32")
        assert s.get_shape() == [3, 5] and s.get_dtype() == "F32"
        np.testing.assert_array_equal(to_np(s[1:, ::2]), to_np(ts["t_float32"])[1:, ::2])
        np.testing.assert_array_equal(to_np(f.get_slice("big")[10:20]),
                                      to_np(ts["big"])[10:20])
        with pytest.raises(st.SafetensorError, match="missing"):
            f.get_tensor("missing")
    with pytest.raises(st.SafetensorError, match="closed"):
        f.get_tensor("big")


def test_refuses_shared_and_non_contiguous():
    x = fw.ones(4)
    for d in ({"a": x, "b": x}, {"a": x, "b": x[1:]}, {"a": x[:3], "b": x[2:]}):
        with pytest.raises(RuntimeError, match="share memory"):
            st.save(d)
    # disjoint parts of one storage are saved, as by the package
    out = st.load(st.save({"a": x[:2], "b": x[2:], "c": fw.ones(2)}))
    assert sorted(out) == ["a", "b", "c"]
    with pytest.raises(ValueError, match="non contiguous"):
        st.save({"a": fw.ones(3, 4).t()})
    # empty tensors share nothing
    e = fw.empty(0)
    assert set(st.load(st.save({"a": e, "b": e}))) == {"a", "b"}


def _file(header, data=b""):
    hb = json.dumps(header, separators=(",", ":")).encode()
    return struct.pack("<Q", len(hb)) + hb + data


BAD = {
    "short": (b"abc", "header too small"),
    "huge": (struct.pack("<Q", 10 ** 9) + b"x", "header too large"),
    "length": (struct.pack("<Q", 100) + b"{}", "invalid header length"),
    "json": (struct.pack("<Q", 3) + b"{x}", "invalid JSON"),
    "list": (_file([1]), "invalid JSON"),
    "size": (_file({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}}, b"\0" * 4),
             "invalid shape, data type, or offset"),
    "hole": (_file({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, b"\0" * 8),
             "invalid offset"),
    "short data": (_file({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}},
                         b"\0" * 4), "not fully covered"),
    "extra data": (_file({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}},
                         b"\0" * 8), "not fully covered"),
    "dtype": (_file({"a": {"dtype": "Q32", "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 4),
              "invalid JSON"),
    "metadata": (_file({"__metadata__": {"a": 1}}), "invalid JSON"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_malformed(tmp_path, case):
    data, msg = BAD[case]
    with pytest.raises(st.SafetensorError, match=msg):
        st.load(data)
    (tmp_path / "x.st").write_bytes(data)
    with pytest.raises(st.SafetensorError, match=msg):
        st.load_file(tmp_path / "x.st")


def test_empty_file_dict():
    assert st.load(_file({})) == {}


# ---- the safetensors package as the oracle -------------------------------------------------

def _torch_dicts(device):
    torch = pytest.importorskip("torch")
    ts = tensors(device)
    tt = {}
    for k, t in ts.items():
        a = to_np(t)
        tt[k] = torch.from_numpy(np.array(a)).to(
            getattr(torch, str(t.dtype).split(".")[1]))
    return ts, tt


@pytest.mark.parametrize("metadata", [None, {"format": "pt"}])
def test_header_identical_to_package(metadata, device):
    storch = pytest.importorskip("safetensors.torch")
    ts, tt = _torch_dicts(device)
    assert st.save(ts, metadata=metadata) == storch.save(tt, metadata=metadata)


def test_files_both_ways(tmp_path, device):
    storch = pytest.importorskip("safetensors.torch")
    safetensors = pytest.importorskip("safetensors")
    ts, tt = _torch_dicts(device)
    storch.save_file(tt, tmp_path / "pkg.safetensors", metadata={"a": "b"})
    ours = st.load_file(tmp_path / "pkg.safetensors", device=device)
    for k in tt:
        np.testing.assert_array_equal(to_np(ours[k]), to_np(tt[k]))
    st.save_file(ts, tmp_path / "ours.safetensors", metadata={"a": "b"})
    theirs = storch.load_file(tmp_path / "ours.safetensors")
    for k in ts:
        assert str(theirs[k].dtype).split(".")[1] == str(ts[k].dtype).split(".")[1]
        np.testing.assert_array_equal(to_np(theirs[k]), to_np(ts[k]))
    with safetensors.safe_open(tmp_path / "ours.safetensors", framework="pt") as f:
        assert f.metadata() == {"a": "b"}
        assert sorted(f.keys()) == sorted(ts)


def test_errors_match_package():
    storch = pytest.importorskip("safetensors.torch")
    import safetensors
    torch = pytest.importorskip("torch")
    x = torch.ones(4)
    with pytest.raises(RuntimeError, match="share memory"):
        storch.save({"a": x[:3], "b": x[2:]})
    assert sorted(storch.load(storch.save({"a": x[:2], "b": x[2:]}))) == ["a", "b"]
    with pytest.raises(ValueError, match="non contiguous"):
        storch.save({"a": torch.ones(3, 4).t()})
    for data, msg in BAD.values():
        with pytest.raises(safetensors.SafetensorError, match=msg):
            storch.load(data)
