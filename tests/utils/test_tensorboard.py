"""framework.utils.tensorboard: the same calls through framework's SummaryWriter and torch's
(same inputs) give event files that tensorboard's EventAccumulator reads back the same:
scalars, histograms, images (decoded pixels), text, hparams, tensors, PR curves, audio,
meshes, custom scalars and embedding files; the default log_dir, purge_step, cpu and cuda
tensors, bfloat16, and the ImportError without tensorboard."""
import importlib
import io
import os
import re
import socket
import sys
import types

import numpy as np
import pytest

pytest.importorskip("tensorboard")
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa
from tensorboard.util import tensor_util  # noqa: E402

import framework as fw  # noqa: E402
from framework.utils.tensorboard import FileWriter, RecordWriter, SummaryWriter  # noqa: E402

ALL = {"compressedHistograms": 0, "images": 0, "audio": 0, "scalars": 0, "histograms": 0,
       "tensors": 0}


def _read(logdir):
    acc = EventAccumulator(str(logdir), size_guidance=ALL)
    acc.Reload()
    return acc


@pytest.fixture
def torch_tb():
    torch = pytest.importorskip("torch")
    tb = importlib.import_module("torch.utils.tensorboard")
    return torch, tb.SummaryWriter


def _both(tmp_path, torch_tb, device, log, **kwargs):
    """Run ``log(writer, T)`` with framework's writer (T: numpy -> framework tensor on
    ``device``) and with torch's (T: numpy -> torch tensor); the two accumulators."""
    torch, TorchWriter = torch_tb

    def fw_t(a, dtype=None):
        t = fw.tensor(a, device=device)
        return t if dtype is None else t.to(getattr(fw, dtype))

    def torch_t(a, dtype=None):
        t = torch.tensor(a)
        return t if dtype is None else t.to(getattr(torch, dtype))

    with SummaryWriter(str(tmp_path / "fw"), **kwargs) as w:
        log(w, fw_t)
    with TorchWriter(str(tmp_path / "torch"), **kwargs) as w:
        log(w, torch_t)
    return _read(tmp_path / "fw"), _read(tmp_path / "torch")


def _scalars(acc, tag):
    return [(e.step, e.value) for e in acc.Scalars(tag)]


def _hist(h):
    return (h.min, h.max, h.num, h.sum, h.sum_squares, list(h.bucket_limit), list(h.bucket))


def _pixels(encoded):
    from PIL import Image
    return np.asarray(Image.open(io.BytesIO(encoded)))


# ---- scalars ----------------------------------------------------------------------------

def test_scalars_match_torch(tmp_path, torch_tb, device):
    def log(w, T):
        w.add_scalar("loss", T(np.float32(0.75)), 0)
        w.add_scalar("loss", T(np.array([1.25], np.float32)), 1)     # one element, 1-d
        w.add_scalar("loss", 3, 2)                                   # Python int
        w.add_scalar("loss", np.float64(0.1), 3)                     # NumPy scalar
        w.add_scalar("loss", np.array([[2.5]]), 4)                   # NumPy array
        w.add_scalar("acc", T(np.array(7, np.int64)), 5)              # integer tensor
        w.add_scalar("new", T(np.float32(0.3)), 0, new_style=True)
        w.add_scalar("new64", 0.3, 0, new_style=True, double_precision=True)
        w.add_scalars("run", {"a": T(np.float32(1.0)), "b": 2.0}, 6)
    got, want = _both(tmp_path, torch_tb, device, log)
    assert got.Tags()["scalars"] == want.Tags()["scalars"] == ["loss", "acc"]
    for tag in ("loss", "acc"):
        assert _scalars(got, tag) == _scalars(want, tag)
    assert [s for s, _ in _scalars(got, "loss")] == [0, 1, 2, 3, 4]
    for tag in ("new", "new64"):
        g, t = got.Tensors(tag)[0].tensor_proto, want.Tensors(tag)[0].tensor_proto
        assert g == t
    assert tensor_util.make_ndarray(got.Tensors("new64")[0].tensor_proto) == 0.3
    # add_scalars: one sub-run per key, named as torch names it
    for key, value in (("a", 1.0), ("b", 2.0)):
        sub = _read(tmp_path / "fw" / f"run_{key}")
        assert _scalars(sub, "run") == _scalars(_read(tmp_path / "torch" / f"run_{key}"),
                                                "run") == [(6, value)]


def test_scalar_bfloat16_and_errors(tmp_path, torch_tb, device):
    def log(w, T):
        w.add_scalar("bf16", T(np.float32(1.3), "bfloat16"), 0)
        w.add_scalar("f16", T(np.float32(-2.7), "float16"), 1)
    got, want = _both(tmp_path, torch_tb, device, log)
    for tag in ("bf16", "f16"):
        assert _scalars(got, tag) == _scalars(want, tag)
    assert _scalars(got, "bf16")[0][1] == 1.296875      # 1.3 rounded to bfloat16
    with SummaryWriter(str(tmp_path / "err")) as w:
        with pytest.raises(AssertionError, match="should contain one element"):
            w.add_scalar("x", fw.ones(2, device=device))
        with pytest.raises(NotImplementedError, match="numpy array or torch tensor"):
            w.add_scalar("x", [1.0])
        # a tensor that requires grad is logged through detach()
        w.add_scalar("g", fw.tensor(0.5, device=device, requires_grad=True) * 2, 0)
    assert _scalars(_read(tmp_path / "err"), "g") == [(0, 1.0)]


# ---- histograms -------------------------------------------------------------------------

def test_histograms_match_torch(tmp_path, torch_tb, device):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(300) * 3).astype(np.float32)
    ints = rng.integers(-5, 9, size=(7, 11))

    def log(w, T):
        w.add_histogram("tf", T(x), 0)                      # TensorFlow's default buckets
        w.add_histogram("tf", T(x * 10 + 4), 1)
        w.add_histogram("auto", T(x), 0, bins="auto")
        w.add_histogram("ten", T(x.reshape(10, 30)), 0, bins=10)
        w.add_histogram("merged", T(x), 0, bins=50, max_bins=7)
        w.add_histogram("ints", T(ints), 0, bins="fd")
        w.add_histogram("np", x[:40].astype(np.float64), 0)
        w.add_histogram("const", T(np.full(5, 2.5, np.float32)), 0)
        w.add_histogram_raw("raw", min=-1.0, max=3.0, num=6, sum=4.5, sum_squares=12.0,
                            bucket_limits=[0.0, 1.0, 3.0], bucket_counts=[1, 2, 3],
                            global_step=2)
    got, want = _both(tmp_path, torch_tb, device, log)
    tags = ["tf", "auto", "ten", "merged", "ints", "np", "const", "raw"]
    assert got.Tags()["histograms"] == want.Tags()["histograms"] == tags
    for tag in tags:
        g, t = got.Histograms(tag), want.Histograms(tag)
        assert [e.step for e in g] == [e.step for e in t]
        for ge, te in zip(g, t):
            assert _hist(ge.histogram_value) == _hist(te.histogram_value), tag
    # against NumPy directly: statistics and a bucket count that adds up
    h = got.Histograms("ten")[0].histogram_value
    x64 = x.astype(np.float64)
    assert (h.min, h.max, h.num) == (x64.min(), x64.max(), 300)
    assert h.sum == pytest.approx(x64.sum()) and h.sum_squares == pytest.approx(x64 @ x64)
    assert sum(h.bucket) == 300 and len(h.bucket) == 11
    assert list(h.bucket)[1:] == np.histogram(x64, bins=10)[0].tolist()

    with SummaryWriter(str(tmp_path / "err")) as w:
        with pytest.raises(ValueError, match="The input has no element"):
            w.add_histogram("e", fw.zeros(0, device=device))
        with pytest.raises(ValueError, match=r"len\(bucket_limits\) != len\(bucket_counts\)"):
            w.add_histogram_raw("r", 0, 1, 2, 1, 1, [0.0, 1.0], [2])


# ---- images -----------------------------------------------------------------------------

def test_images_match_torch(tmp_path, torch_tb, device):
    rng = np.random.default_rng(1)
    chw = rng.uniform(-0.2, 1.2, (3, 5, 7)).astype(np.float32)     # clipped to [0, 1]
    hwc_u8 = rng.integers(0, 256, (6, 4, 3)).astype(np.uint8)
    hw = rng.random((5, 6)).astype(np.float64)
    gray = rng.random((1, 4, 3)).astype(np.float32)
    rgba = rng.random((4, 3, 5)).astype(np.float32)
    batch = rng.random((10, 3, 4, 5)).astype(np.float32)          # a 2-row grid
    nhwc_u8 = rng.integers(0, 256, (3, 4, 2, 1)).astype(np.uint8)

    def log(w, T):
        w.add_image("chw", T(chw), 0)
        w.add_image("hwc_u8", T(hwc_u8), 1, dataformats="HWC")
        w.add_image("hw", T(hw), 0, dataformats="HW")
        w.add_image("gray", T(gray), 0)
        w.add_image("rgba", T(rgba), 0, dataformats="CHW")
        w.add_image("np", chw, 0)
        w.add_images("batch", T(batch), 0)
        w.add_images("nhwc_u8", T(nhwc_u8), 0, dataformats="NHWC")
        w.add_image("bf16", T(chw, "bfloat16"), 0)
        w.add_image_with_boxes("boxes", T(chw), T(np.array([[1.0, 1.0, 5.0, 4.0]])), 0)
    got, want = _both(tmp_path, torch_tb, device, log)
    tags = ["chw", "hwc_u8", "hw", "gray", "rgba", "np", "batch", "nhwc_u8", "bf16", "boxes"]
    assert got.Tags()["images"] == want.Tags()["images"] == tags
    for tag in tags:
        (g,), (t,) = got.Images(tag), want.Images(tag)
        assert (g.step, g.width, g.height) == (t.step, t.width, t.height), tag
        np.testing.assert_array_equal(_pixels(g.encoded_image_string),
                                      _pixels(t.encoded_image_string), err_msg=tag)
    # against NumPy: float in [0, 1] -> uint8 by 255 and clipping; uint8 as given
    want_chw = (chw.transpose(1, 2, 0) * 255).clip(0, 255).astype(np.uint8)
    np.testing.assert_array_equal(_pixels(got.Images("chw")[0].encoded_image_string), want_chw)
    np.testing.assert_array_equal(_pixels(got.Images("hwc_u8")[0].encoded_image_string),
                                  hwc_u8)
    assert _pixels(got.Images("rgba")[0].encoded_image_string).shape == (3, 5, 4)
    grid = _pixels(got.Images("batch")[0].encoded_image_string)
    assert grid.shape == (8, 40, 3)                      # 8 per row, 2 rows, zero-padded
    np.testing.assert_array_equal(grid[4:, 5:10], (batch[9].transpose(1, 2, 0) * 255)
                                  .astype(np.uint8))
    assert not grid[4:, 10:].any()

    with SummaryWriter(str(tmp_path / "err")) as w:
        with pytest.raises(AssertionError, match="size of input tensor and input format"):
            w.add_image("bad", fw.zeros(3, 4, device=device))


def test_video(tmp_path, device):
    from PIL import Image, ImageSequence
    # 5 videos (padded to 8: a 2x4 grid), 2 frames, few colours so that the GIF is exact
    v = np.zeros((5, 2, 3, 2, 3), np.uint8)
    v[0, 0, 0] = 255
    v[1, 1, 1:] = 255
    v[2, :, 2] = 255
    v[4, 1, :, 1] = 255
    with SummaryWriter(str(tmp_path)) as w:
        w.add_video("v", fw.tensor(v, device=device), 0, fps=5)
    (e,) = _read(tmp_path).Images("v")
    assert (e.width, e.height) == (12, 4)
    frames = [np.asarray(f.convert("RGB"))
              for f in ImageSequence.Iterator(Image.open(io.BytesIO(e.encoded_image_string)))]
    assert len(frames) == 2
    want = np.zeros((2, 4, 12, 3), np.uint8)
    for b in range(5):
        r, c = divmod(b, 4)
        want[:, r * 2:(r + 1) * 2, c * 3:(c + 1) * 3] = v[b].transpose(0, 2, 3, 1)
    np.testing.assert_array_equal(np.stack(frames), want)


# ---- text, hparams, tensors, curves, audio, meshes, layouts ------------------------------

def test_text_match_torch(tmp_path, torch_tb, device):
    def log(w, T):
        w.add_text("notes", "# lr 3e-4\n*ünïcode*", 0)
        w.add_text("notes", "second", 5)
    got, want = _both(tmp_path, torch_tb, device, log)
    assert got.Tags()["tensors"] == want.Tags()["tensors"] == ["notes/text_summary"]
    g, t = got.Tensors("notes/text_summary"), want.Tensors("notes/text_summary")
    assert [(e.step, e.tensor_proto) for e in g] == [(e.step, e.tensor_proto) for e in t]
    assert list(g[0].tensor_proto.string_val) == ["# lr 3e-4\n*ünïcode*".encode()]
    assert got.SummaryMetadata("notes/text_summary") == want.SummaryMetadata(
        "notes/text_summary")


def _hparams_content(acc):
    from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData
    out = {}
    for tag, content in acc.PluginTagToContent("hparams").items():
        out[tag] = HParamsPluginData.FromString(content)
    return out


def test_hparams_match_torch(tmp_path, torch_tb, device):
    def log(w, T):
        w.add_hparams({"lr": 0.01, "layers": 3, "opt": "adam", "amp": True, "skip": None,
                       "wd": T(np.array([0.5], np.float32))},   # torch: not 0-d
                      {"hparam/acc": 0.9, "hparam/loss": T(np.float32(0.25))},
                      hparam_domain_discrete={"opt": ["adam", "sgd"], "layers": [2, 3]},
                      run_name="trial", global_step=4)
    got, want = _both(tmp_path, torch_tb, device, log)
    g, t = _read(tmp_path / "fw" / "trial"), _read(tmp_path / "torch" / "trial")
    gc, tc = _hparams_content(g), _hparams_content(t)
    assert sorted(gc) == sorted(tc) == ["_hparams_/experiment", "_hparams_/session_end_info",
                                        "_hparams_/session_start_info"]
    for tag in gc:
        assert gc[tag] == tc[tag], tag
    ssi = gc["_hparams_/session_start_info"].session_start_info
    assert ssi.hparams["opt"].string_value == "adam" and ssi.hparams["lr"].number_value == 0.01
    assert "skip" not in ssi.hparams
    for tag in ("hparam/acc", "hparam/loss"):
        assert _scalars(g, tag) == _scalars(t, tag)
    assert _scalars(g, "hparam/loss") == [(4, 0.25)]
    with SummaryWriter(str(tmp_path / "zero_d")) as w:           # torch fails on 0-d
        w.add_hparams({"wd": fw.tensor(0.5, device=device)}, {}, run_name="r")
    ssi = _hparams_content(_read(tmp_path / "zero_d" / "r"))["_hparams_/session_start_info"]
    assert ssi.session_start_info.hparams["wd"].number_value == 0.5

    with SummaryWriter(str(tmp_path / "err")) as w:
        with pytest.raises(TypeError, match="should be dictionary"):
            w.add_hparams([("lr", 1)], {})
        with pytest.raises(TypeError, match=r"hparam_domain_discrete\[lr\] should be a list"):
            w.add_hparams({"lr": 0.1}, {}, hparam_domain_discrete={"lr": ["a"]})
        with pytest.raises(ValueError, match="value should be one of int, float, str"):
            w.add_hparams({"lr": [0.1]}, {})


def test_tensor_round_trip(tmp_path, torch_tb, device):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((2, 3)).astype(np.float32)

    def log(w, T):
        w.add_tensor("f32", T(a), 0)
        w.add_tensor("f64", T(a.astype(np.float64)), 0)
        w.add_tensor("i64", T((a * 10).astype(np.int64)), 0)
        w.add_tensor("i32", T((a * 10).astype(np.int32)), 0)
        w.add_tensor("bool", T(a > 0), 0)
    got, want = _both(tmp_path, torch_tb, device, log)
    for tag in ("f32", "f64", "i64", "i32", "bool"):
        g, t = got.Tensors(tag)[0].tensor_proto, want.Tensors(tag)[0].tensor_proto
        assert g == t, tag
    # the encodings TensorBoard decodes (torch writes float32 bits into half_val and
    # uint8 into uint32_val, which tensorboard does not read back)
    with SummaryWriter(str(tmp_path / "more")) as w:
        for name in ("float16", "bfloat16", "uint8", "int8", "int16", "float32"):
            w.add_tensor(name, fw.tensor(np.abs(a) * 9, device=device).to(getattr(fw, name)))
    acc = _read(tmp_path / "more")
    for name in ("float16", "uint8", "int8", "int16", "float32"):
        arr = tensor_util.make_ndarray(acc.Tensors(name)[0].tensor_proto)
        np.testing.assert_array_equal(arr, (np.abs(a) * 9).astype(name), err_msg=name)
    bits = np.array(acc.Tensors("bfloat16")[0].tensor_proto.half_val, np.uint32) << 16
    bf = fw.tensor(np.abs(a) * 9).to(fw.bfloat16).float().numpy()
    np.testing.assert_array_equal(bits.view(np.float32).reshape(2, 3), bf)


def test_pr_curve_match_torch(tmp_path, torch_tb, device):
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 2, 64)
    preds = rng.random(64).astype(np.float32)

    def log(w, T):
        w.add_pr_curve("pr", T(labels), T(preds), 0)
        w.add_pr_curve("pr10", T(labels), T(preds), 1, num_thresholds=10)
        w.add_pr_curve_raw("raw", [5, 3], [2, 1], [0, 1], [0, 2], [0.7, 0.75], [1.0, 0.6],
                           2, num_thresholds=2)
    got, want = _both(tmp_path, torch_tb, device, log)
    for tag in ("pr", "pr10", "raw"):
        assert got.Tensors(tag)[0].tensor_proto == want.Tensors(tag)[0].tensor_proto, tag
        assert got.SummaryMetadata(tag) == want.SummaryMetadata(tag)
    data = tensor_util.make_ndarray(got.Tensors("pr10")[0].tensor_proto)
    assert data.shape == (6, 10)
    # at threshold 0 every example is predicted positive
    assert (data[0, 0], data[1, 0]) == (labels.sum(), 64 - labels.sum())


def test_audio_mesh_custom_scalars_match_torch(tmp_path, torch_tb, device):
    rng = np.random.default_rng(4)
    snd = rng.uniform(-1, 1, (1, 200)).astype(np.float32)
    verts = rng.random((1, 4, 3)).astype(np.float32)
    colors = rng.integers(0, 256, (1, 4, 3)).astype(np.uint8)
    faces = np.array([[[0, 1, 2], [1, 2, 3]]], np.int32)
    layout = {"Losses": {"both": ["Multiline", ["loss/train", "loss/val"]],
                         "band": ["Margin", ["m", "lo", "hi"]]}}

    def log(w, T):
        w.add_audio("snd", T(snd), 0, sample_rate=8000)
        w.add_mesh("m", T(verts), colors=T(colors), faces=T(faces), global_step=0,
                   config_dict={"camera": {"fov": 60}})
        w.add_custom_scalars(layout)
        w.add_custom_scalars_multilinechart(["a", "b"], category="c", title="t")
        w.add_custom_scalars_marginchart(["a", "b", "c"])
    got, want = _both(tmp_path, torch_tb, device, log)
    (g,), (t,) = got.Audio("snd"), want.Audio("snd")
    assert (g.encoded_audio_string, g.sample_rate, g.length_frames) == \
        (t.encoded_audio_string, t.sample_rate, t.length_frames)
    assert got.Tags()["tensors"] == want.Tags()["tensors"]
    for tag in got.Tags()["tensors"]:
        ge, te = got.Tensors(tag), want.Tensors(tag)
        assert [e.tensor_proto for e in ge] == [e.tensor_proto for e in te], tag
        assert got.SummaryMetadata(tag) == want.SummaryMetadata(tag), tag
    with SummaryWriter(str(tmp_path / "err")) as w:
        with pytest.raises(AssertionError, match="Expected 3 tags, got 2"):
            w.add_custom_scalars_marginchart(["a", "b"])


def test_embedding_files_match_torch(tmp_path, torch_tb, device):
    rng = np.random.default_rng(5)
    mat = rng.standard_normal((5, 3)).astype(np.float32)
    imgs = rng.random((5, 3, 4, 6)).astype(np.float32)      # thumbnails 6 wide, 4 high

    def log(w, T):
        w.add_embedding(T(mat), metadata=list("abcde"), label_img=T(imgs), global_step=3,
                        tag="emb/1")
        w.add_embedding(T(mat[:2]), metadata=[["x", 1], ["y", 2]], metadata_header=["n", "v"])
    _both(tmp_path, torch_tb, device, log)
    files = ["projector_config.pbtxt", "00003/emb%2f1/tensors.tsv",
             "00003/emb%2f1/metadata.tsv", "00000/default/tensors.tsv",
             "00000/default/metadata.tsv"]
    for name in files:
        with open(tmp_path / "fw" / name, "rb") as f, open(tmp_path / "torch" / name, "rb") as t:
            assert f.read() == t.read(), name
    with open(tmp_path / "fw" / "00003/emb%2f1/sprite.png", "rb") as f, \
            open(tmp_path / "torch" / "00003/emb%2f1/sprite.png", "rb") as t:
        np.testing.assert_array_equal(_pixels(f.read()), _pixels(t.read()))


# ---- log_dir, purge_step, writer lifecycle ----------------------------------------------

def test_default_log_dir(tmp_path, torch_tb, monkeypatch):
    monkeypatch.chdir(tmp_path)
    pattern = r"runs/[A-Z][a-z]{2}\d{2}_\d{2}-\d{2}-\d{2}_" + re.escape(socket.gethostname())
    with SummaryWriter(comment="_lr0.1") as w, torch_tb[1](comment="_torch") as t:
        assert re.match(pattern + "_lr0.1$", w.get_logdir()), w.get_logdir()
        assert re.match(pattern + "_torch$", t.get_logdir())
        # comment is ignored when log_dir is given
        with SummaryWriter("given", comment="x") as g:
            assert g.get_logdir() == "given"
        w.add_scalar("s", 1.0, 0)
    files = os.listdir(w.get_logdir())
    assert len(files) == 1 and files[0].startswith("events.out.tfevents.")
    assert _scalars(_read(w.get_logdir()), "s") == [(0, 1.0)]
    with SummaryWriter("suffixed", filename_suffix=".v2") as w:
        pass
    assert os.listdir("suffixed")[0].endswith(".v2")


def test_purge_step(tmp_path, torch_tb, device):
    torch, TorchWriter = torch_tb
    for Writer, T, name in ((SummaryWriter, lambda v: fw.tensor(v, device=device), "fw"),
                            (TorchWriter, torch.tensor, "torch")):
        logdir = str(tmp_path / name)
        with Writer(logdir) as w:           # a run that "crashed" after step 4
            for step in range(5):
                w.add_scalar("loss", T(float(step)), step)
        with Writer(logdir, purge_step=2) as w:      # resumed from step 2's checkpoint
            for step in (2, 3):
                w.add_scalar("loss", T(10.0 + step), step)
    got, want = _read(tmp_path / "fw"), _read(tmp_path / "torch")
    assert _scalars(got, "loss") == _scalars(want, "loss") == \
        [(0, 0.0), (1, 1.0), (2, 12.0), (3, 13.0)]


def test_writer_lifecycle(tmp_path):
    w = SummaryWriter(str(tmp_path), max_queue=1000, flush_secs=1000)
    assert isinstance(w.file_writer, FileWriter) and RecordWriter is not None
    assert w.file_writer.get_logdir() == str(tmp_path)
    w.add_scalar("s", 1.0, 0)
    w.flush()                                            # on disk before flush_secs
    assert _scalars(_read(tmp_path), "s") == [(0, 1.0)]
    w.close()
    w.close()                                            # a second close is a no-op
    w.flush()
    w.add_scalar("s", 2.0, 1)                            # reopens: a new event file
    w.close()
    assert len(os.listdir(tmp_path)) == 2
    assert _scalars(_read(tmp_path), "s") == [(0, 1.0), (1, 2.0)]
    with pytest.raises(NotImplementedError, match="no JIT tracer"):
        SummaryWriter(str(tmp_path / "g")).add_graph(fw.nn.Linear(2, 2), fw.zeros(1, 2))


def test_add_figure(tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig = plt.figure(figsize=(2, 1), dpi=10)
    with SummaryWriter(str(tmp_path)) as w:
        w.add_figure("fig", fig, 0)
        w.add_figure("figs", [plt.figure(figsize=(2, 1), dpi=10) for _ in range(2)], 0)
    acc = _read(tmp_path)
    assert (acc.Images("fig")[0].width, acc.Images("fig")[0].height) == (20, 10)
    assert (acc.Images("figs")[0].width, acc.Images("figs")[0].height) == (40, 10)
    assert not plt.get_fignums()                         # close=True closed them


# ---- without tensorboard ----------------------------------------------------------------

@pytest.mark.parametrize("fake", [None, types.SimpleNamespace(__version__="1.14.0")])
def test_missing_or_old_tensorboard(monkeypatch, fake):
    for name in [m for m in sys.modules if m.startswith("framework.utils.tensorboard")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "tensorboard", fake)
    with pytest.raises(ImportError, match="requires TensorBoard version 1.15 or above"):
        importlib.import_module("framework.utils.tensorboard")
