"""Tensors, arrays and numbers to TensorBoard ``Summary`` protocol buffers (the protobufs
and the event-file format belong to the ``tensorboard`` package)."""
import io
import json
import logging

import numpy as np
from google.protobuf import struct_pb2
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.custom_scalar import layout_pb2
from tensorboard.plugins.pr_curve.plugin_data_pb2 import PrCurvePluginData
from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData

from ... import _dtype
from ..._tensor import Tensor

__all__ = ["make_np", "hparams", "scalar", "tensor_proto", "histogram_raw", "histogram",
           "make_histogram", "image", "image_boxes", "make_image", "audio", "custom_scalars",
           "text", "pr_curve_raw", "pr_curve", "compute_curve", "mesh", "convert_to_HWC",
           "make_grid", "figure_to_image", "video", "make_video"]

logger = logging.getLogger(__name__)


def make_np(x):
    """A NumPy array of a tensor (any device), a NumPy array or a number."""
    if isinstance(x, np.ndarray):
        return x
    if np.isscalar(x):
        return np.array([x])
    if isinstance(x, Tensor):
        if x.device.type == "meta":     # as torch: no data to log, a placeholder value
            return np.random.randn(1)
        x = x.detach().cpu()
        if x.dtype is _dtype.bfloat16:  # NumPy has no bfloat16; float32 holds it exactly
            x = x.float()
        return x.numpy()
    raise NotImplementedError(f"Got {type(x)}, but numpy array or torch tensor are expected.")


# ---- scalars and tensors ----------------------------------------------------------------

def scalar(name, tensor, collections=None, new_style=False, double_precision=False):
    """A ``Summary`` with one scalar value (``simple_value``, or a tensor if new_style)."""
    tensor = make_np(tensor).squeeze()
    if tensor.ndim != 0:
        raise AssertionError(f"Tensor should contain one element (0 dimensions). "
                             f"Was given size: {tensor.size} and {tensor.ndim} dimensions.")
    value = float(tensor)
    if not new_style:
        return Summary(value=[Summary.Value(tag=name, simple_value=value)])
    if double_precision:
        proto = TensorProto(double_val=[value], dtype="DT_DOUBLE")
    else:
        proto = TensorProto(float_val=[value], dtype="DT_FLOAT")
    smd = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
    return Summary(value=[Summary.Value(tag=name, tensor=proto, metadata=smd)])


def _half_bits(arr):
    return arr.astype(np.float16).view(np.uint16).reshape(-1).tolist()


def _bfloat16_bits(arr):
    # a bfloat16 is the top half of the float32 with the same value
    return (arr.astype(np.float32).view(np.uint32) >> 16).reshape(-1).tolist()


def _complex_parts(arr):
    return np.stack([arr.real, arr.imag], -1).reshape(-1).tolist()


def _flat_list(arr):
    return arr.reshape(-1).tolist()


# framework dtype name -> (TensorProto dtype, value field, array -> list of field values)
_TENSOR_TYPES = {
    "float16": ("DT_HALF", "half_val", _half_bits),
    "bfloat16": ("DT_BFLOAT16", "half_val", _bfloat16_bits),
    "float32": ("DT_FLOAT", "float_val", _flat_list),
    "float64": ("DT_DOUBLE", "double_val", _flat_list),
    "int8": ("DT_INT8", "int_val", _flat_list),
    "uint8": ("DT_UINT8", "int_val", _flat_list),
    "int16": ("DT_INT16", "int_val", _flat_list),
    "int32": ("DT_INT32", "int_val", _flat_list),
    "int64": ("DT_INT64", "int64_val", _flat_list),
    "bool": ("DT_BOOL", "bool_val", _flat_list),
    "complex64": ("DT_COMPLEX64", "scomplex_val", _complex_parts),
    "complex128": ("DT_COMPLEX128", "dcomplex_val", _complex_parts),
}


def tensor_proto(tag, tensor):
    """A ``Summary`` holding the whole tensor as a ``TensorProto``."""
    if tensor.numel() * tensor.element_size() >= (1 << 31):
        raise ValueError("tensor is bigger than protocol buffer's hard limit of 2GB in size")
    name = str(tensor.dtype).rsplit(".", 1)[-1]
    if name not in _TENSOR_TYPES:
        raise ValueError(f"{tag} has unsupported tensor dtype {tensor.dtype}")
    dtype, field, to_list = _TENSOR_TYPES[name]
    proto = TensorProto(dtype=dtype,
                        tensor_shape=TensorShapeProto(
                            dim=[TensorShapeProto.Dim(size=s) for s in tensor.shape]),
                        **{field: to_list(make_np(tensor))})
    smd = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="tensor"))
    return Summary(value=[Summary.Value(tag=tag, metadata=smd, tensor=proto)])


# ---- histograms -------------------------------------------------------------------------

def histogram_raw(name, min, max, num, sum, sum_squares, bucket_limits, bucket_counts):
    """A ``Summary`` with a histogram given by its statistics and buckets."""
    hist = HistogramProto(min=min, max=max, num=num, sum=sum, sum_squares=sum_squares,
                          bucket_limit=bucket_limits, bucket=bucket_counts)
    return Summary(value=[Summary.Value(tag=name, histo=hist)])


def histogram(name, values, bins, max_bins=None):
    """A ``Summary`` with the histogram of ``values`` (any shape)."""
    values = make_np(values)
    hist = make_histogram(values.astype(float), bins, max_bins)
    return Summary(value=[Summary.Value(tag=name, histo=hist)])


def make_histogram(values, bins, max_bins=None):
    """A ``HistogramProto`` of ``values``, trimmed to the buckets that hold values."""
    if values.size == 0:
        raise ValueError("The input has no element.")
    values = values.reshape(-1)
    counts, limits = np.histogram(values, bins=bins)
    num_bins = len(counts)
    if max_bins is not None and num_bins > max_bins:
        # merge runs of `subsampling` buckets, padding the last run with empty ones
        subsampling = num_bins // max_bins
        remainder = num_bins % subsampling
        if remainder != 0:
            counts = np.pad(counts, [[0, subsampling - remainder]], mode="constant")
        counts = counts.reshape(-1, subsampling).sum(axis=-1)
        merged = np.empty((counts.size + 1,), limits.dtype)
        merged[:-1] = limits[:-1:subsampling]
        merged[-1] = limits[-1]
        limits = merged

    # the first and the last non-empty bucket
    cum_counts = np.cumsum(np.greater(counts, 0))
    start, end = np.searchsorted(cum_counts, [0, cum_counts[-1] - 1], side="right")
    start, end = int(start), int(end) + 1
    # TensorBoard keeps right limits only: one empty bucket on the left keeps the left limit
    counts = counts[start - 1:end] if start > 0 else np.concatenate([[0], counts[:end]])
    limits = limits[start:end + 1]
    if counts.size == 0 or limits.size == 0:
        raise ValueError("The histogram is empty, please file a bug report.")
    return HistogramProto(min=values.min(), max=values.max(), num=len(values),
                          sum=values.sum(), sum_squares=values.dot(values),
                          bucket_limit=limits.tolist(), bucket=counts.tolist())


# ---- images -----------------------------------------------------------------------------

def make_grid(I, ncols=8):
    """Tile N1HW or N3HW images into one 3HW image, ``ncols`` per row."""
    if not isinstance(I, np.ndarray):
        raise AssertionError("plugin error, should pass numpy array here")
    if I.shape[1] == 1:
        I = np.concatenate([I, I, I], 1)
    if I.ndim != 4 or I.shape[1] != 3:
        raise AssertionError("Input should be a 4D numpy array with 3 channels")
    n, _, h, w = I.shape
    ncols = min(n, ncols)
    nrows = (n + ncols - 1) // ncols
    canvas = np.zeros((3, h * nrows, w * ncols), dtype=I.dtype)
    for i in range(n):
        y, x = divmod(i, ncols)
        canvas[:, y * h:(y + 1) * h, x * w:(x + 1) * w] = I[i]
    return canvas


def convert_to_HWC(tensor, input_format):
    """An HWC array of an image (or a grid of images) laid out as ``input_format``."""
    if len(set(input_format)) != len(input_format):
        raise AssertionError(f"You can not use the same dimension shorthand twice. "
                             f"input_format: {input_format}")
    if len(tensor.shape) != len(input_format):
        raise AssertionError(f"size of input tensor and input format are different. "
                             f"tensor shape: {tensor.shape}, input_format: {input_format}")
    input_format = input_format.upper()
    if len(input_format) == 4:
        nchw = tensor.transpose([input_format.find(c) for c in "NCHW"])
        return make_grid(nchw).transpose(1, 2, 0)
    if len(input_format) == 3:
        hwc = tensor.transpose([input_format.find(c) for c in "HWC"])
        if hwc.shape[2] == 1:
            hwc = np.concatenate([hwc, hwc, hwc], 2)
        return hwc
    if len(input_format) == 2:
        hw = tensor.transpose([input_format.find(c) for c in "HW"])
        return np.stack([hw, hw, hw], 2)
    return tensor


def _to_uint8(array):
    # uint8 images are in [0, 255]; any other dtype is taken to be in [0, 1]
    scale = 1 if array.dtype == np.uint8 else 255
    return (array.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)


def image(tag, tensor, rescale=1, dataformats="NCHW"):
    """A ``Summary`` with one PNG image (a grid when ``dataformats`` has N)."""
    array = convert_to_HWC(make_np(tensor), dataformats)
    return Summary(value=[Summary.Value(tag=tag, image=make_image(_to_uint8(array),
                                                                  rescale=rescale))])


def image_boxes(tag, tensor_image, tensor_boxes, rescale=1, dataformats="CHW", labels=None):
    """A ``Summary`` with one PNG image and boxes (xmin, ymin, xmax, ymax) drawn on it."""
    array = convert_to_HWC(make_np(tensor_image), dataformats)
    img = make_image(_to_uint8(array), rescale=rescale, rois=make_np(tensor_boxes),
                     labels=labels)
    return Summary(value=[Summary.Value(tag=tag, image=img)])


def _draw_boxes(img, boxes, labels=None):
    from PIL import ImageDraw, ImageFont
    draw = ImageDraw.Draw(img)
    font = ImageFont.load_default()
    for i in range(boxes.shape[0]):
        left, top, right, bottom = (float(v) for v in boxes[i, :4])
        draw.line([(left, top), (left, bottom), (right, bottom), (right, top), (left, top)],
                  width=2, fill="Red")
        if labels is not None and labels[i]:
            x0, y0, x1, y1 = font.getbbox(labels[i])
            margin = np.ceil(0.05 * (y1 - y0))
            draw.rectangle([(left, bottom - (y1 - y0) - 2 * margin), (left + x1 - x0, bottom)],
                           fill="Red")
            draw.text((left + margin, bottom - (y1 - y0) - margin), labels[i], fill="black",
                      font=font)
    return img


def make_image(tensor, rescale=1, rois=None, labels=None):
    """A ``Summary.Image`` of a uint8 HWC array, PNG-encoded by PIL."""
    from PIL import Image     # a dependency of the tensorboard package
    height, width, channel = tensor.shape
    img = Image.fromarray(tensor)
    if rois is not None:
        img = _draw_boxes(img, rois, labels=labels)
    size = (int(width * rescale), int(height * rescale))
    if size != img.size:
        img = img.resize(size, Image.Resampling.LANCZOS)
    with io.BytesIO() as out:
        img.save(out, format="PNG")
        encoded = out.getvalue()
    # as torch: the recorded size is the size before rescaling
    return Summary.Image(height=height, width=width, colorspace=channel,
                         encoded_image_string=encoded)


def figure_to_image(figures, close=True):
    """Render a matplotlib figure (CHW uint8) or a list of figures (NCHW)."""
    import matplotlib.backends.backend_agg as backend_agg
    import matplotlib.pyplot as plt

    def render(figure):
        canvas = backend_agg.FigureCanvasAgg(figure)
        canvas.draw()
        w, h = figure.canvas.get_width_height()
        rgba = np.frombuffer(canvas.buffer_rgba(), dtype=np.uint8).reshape(h, w, 4)
        if close:
            plt.close(figure)
        return np.moveaxis(rgba[:, :, :3], 2, 0)

    if isinstance(figures, list):
        return np.stack([render(f) for f in figures])
    return render(figures)


def _prepare_video(V):
    """(B, T, C, H, W) videos -> (T, H', W', C) frames: each frame a grid of the batch's
    frames, the batch padded with black videos to a power of 2."""
    b, t, c, h, w = V.shape
    if V.dtype == np.uint8:
        V = np.float32(V) / 255.0
    if b & (b - 1):
        V = np.concatenate((V, np.zeros((2 ** b.bit_length() - b, t, c, h, w))), axis=0)
    n_rows = 2 ** ((b.bit_length() - 1) // 2)
    n_cols = V.shape[0] // n_rows
    V = V.reshape(n_rows, n_cols, t, c, h, w).transpose(2, 0, 4, 1, 5, 3)
    return V.reshape(t, n_rows * h, n_cols * w, c)


def video(tag, tensor, fps=4):
    """A ``Summary`` with an animated GIF of (B, T, C, H, W) videos."""
    frames = _to_uint8(_prepare_video(make_np(tensor)))
    return Summary(value=[Summary.Value(tag=tag, image=make_video(frames, fps))])


def make_video(tensor, fps):
    """A ``Summary.Image`` holding a GIF of uint8 (T, H, W, C) frames, encoded by PIL
    (torch uses moviepy, which also writes a GIF)."""
    from PIL import Image
    _, h, w, c = tensor.shape
    frames = [Image.fromarray(f[:, :, 0] if c == 1 else f) for f in tensor]
    with io.BytesIO() as out:
        frames[0].save(out, format="GIF", save_all=True, append_images=frames[1:],
                       duration=1000.0 / fps, loop=0)
        encoded = out.getvalue()
    return Summary.Image(height=h, width=w, colorspace=c, encoded_image_string=encoded)


# ---- audio, text, layouts ---------------------------------------------------------------

def audio(tag, tensor, sample_rate=44100):
    """A ``Summary`` with a mono 16-bit WAV clip of samples in [-1, 1]."""
    import wave
    array = make_np(tensor).squeeze()
    if abs(array).max() > 1:
        print("warning: audio amplitude out of range, auto clipped.")
        array = array.clip(-1, 1)
    if array.ndim != 1:
        raise AssertionError("input tensor should be 1 dimensional.")
    array = (array * np.iinfo(np.int16).max).astype("<i2")
    with io.BytesIO() as out:
        with wave.open(out, "wb") as wav:
            wav.setnchannels(1)
            wav.setsampwidth(2)
            wav.setframerate(sample_rate)
            wav.writeframes(array.tobytes())
        encoded = out.getvalue()
    clip = Summary.Audio(sample_rate=sample_rate, num_channels=1,
                         length_frames=array.shape[-1], encoded_audio_string=encoded,
                         content_type="audio/wav")
    return Summary(value=[Summary.Value(tag=tag, audio=clip)])


def text(tag, text):
    """A ``Summary`` with a string for the text plugin (tag ``<tag>/text_summary``)."""
    smd = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
        plugin_name="text", content=TextPluginData(version=0).SerializeToString()))
    proto = TensorProto(dtype="DT_STRING", string_val=[text.encode("utf_8")],
                        tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=smd,
                                        tensor=proto)])


def custom_scalars(layout):
    """A ``Summary`` with a custom-scalars layout:
    ``{category: {title: ["Multiline" | "Margin", tags]}}``."""
    categories = []
    for category, charts_spec in layout.items():
        charts = []
        for title, (kind, tags) in charts_spec.items():
            if kind == "Margin":
                if len(tags) != 3:
                    raise AssertionError("len(tags) != 3")
                series = layout_pb2.MarginChartContent.Series(value=tags[0], lower=tags[1],
                                                              upper=tags[2])
                charts.append(layout_pb2.Chart(
                    title=title, margin=layout_pb2.MarginChartContent(series=[series])))
            else:
                charts.append(layout_pb2.Chart(
                    title=title, multiline=layout_pb2.MultilineChartContent(tag=tags)))
        categories.append(layout_pb2.Category(title=category, chart=charts))
    content = layout_pb2.Layout(category=categories).SerializeToString()
    smd = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="custom_scalars"))
    proto = TensorProto(dtype="DT_STRING", string_val=[content],
                        tensor_shape=TensorShapeProto())
    return Summary(value=[Summary.Value(tag="custom_scalars__config__", tensor=proto,
                                        metadata=smd)])


# ---- hyperparameters --------------------------------------------------------------------

def _hparam_value(v, kind):
    return struct_pb2.Value(**{kind: v})


def hparams(hparam_dict=None, metric_dict=None, hparam_domain_discrete=None):
    """The experiment, session-start and session-end ``Summary`` protobufs of the hparams
    plugin."""
    from tensorboard.plugins.hparams.api_pb2 import (DataType, Experiment, HParamInfo,
                                                     MetricInfo, MetricName, Status)
    from tensorboard.plugins.hparams.metadata import (EXPERIMENT_TAG, PLUGIN_DATA_VERSION,
                                                      PLUGIN_NAME, SESSION_END_INFO_TAG,
                                                      SESSION_START_INFO_TAG)
    from tensorboard.plugins.hparams.plugin_data_pb2 import (HParamsPluginData,
                                                             SessionEndInfo, SessionStartInfo)

    if not isinstance(hparam_dict, dict):
        logger.warning("parameter: hparam_dict should be a dictionary, nothing logged.")
        raise TypeError("parameter: hparam_dict should be a dictionary, nothing logged.")
    if not isinstance(metric_dict, dict):
        logger.warning("parameter: metric_dict should be a dictionary, nothing logged.")
        raise TypeError("parameter: metric_dict should be a dictionary, nothing logged.")
    hparam_domain_discrete = hparam_domain_discrete or {}
    if not isinstance(hparam_domain_discrete, dict):
        raise TypeError(
            "parameter: hparam_domain_discrete should be a dictionary, nothing logged.")
    for k, v in hparam_domain_discrete.items():
        if (k not in hparam_dict or not isinstance(v, list)
                or not all(isinstance(d, type(hparam_dict[k])) for d in v)):
            raise TypeError(f"parameter: hparam_domain_discrete[{k}] should be a list of "
                            f"same type as hparam_dict[{k}].")

    hps = []
    ssi = SessionStartInfo()
    for k, v in hparam_dict.items():
        if v is None:
            continue
        # as torch: bools are ints, so they are logged as numbers
        if isinstance(v, (int, float)):
            kind, data_type = "number_value", "DATA_TYPE_FLOAT64"
        elif isinstance(v, str):
            kind, data_type = "string_value", "DATA_TYPE_STRING"
        elif isinstance(v, Tensor):
            ssi.hparams[k].number_value = float(make_np(v).reshape(-1)[0])
            hps.append(HParamInfo(name=k, type=DataType.Value("DATA_TYPE_FLOAT64")))
            continue
        else:
            raise ValueError("value should be one of int, float, str, bool, or torch.Tensor")
        setattr(ssi.hparams[k], kind, v)
        domain = None
        if k in hparam_domain_discrete:
            domain = struct_pb2.ListValue(
                values=[_hparam_value(d, kind) for d in hparam_domain_discrete[k]])
        hps.append(HParamInfo(name=k, type=DataType.Value(data_type), domain_discrete=domain))

    def plugin_summary(tag, **content):
        data = HParamsPluginData(version=PLUGIN_DATA_VERSION, **content)
        smd = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
            plugin_name=PLUGIN_NAME, content=data.SerializeToString()))
        return Summary(value=[Summary.Value(tag=tag, metadata=smd)])

    exp = Experiment(hparam_infos=hps,
                     metric_infos=[MetricInfo(name=MetricName(tag=k)) for k in metric_dict])
    sei = SessionEndInfo(status=Status.Value("STATUS_SUCCESS"))
    return (plugin_summary(EXPERIMENT_TAG, experiment=exp),
            plugin_summary(SESSION_START_INFO_TAG, session_start_info=ssi),
            plugin_summary(SESSION_END_INFO_TAG, session_end_info=sei))


# ---- precision-recall curves ------------------------------------------------------------

def _pr_summary(tag, data, num_thresholds):
    content = PrCurvePluginData(version=0, num_thresholds=num_thresholds).SerializeToString()
    smd = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="pr_curves",
                                                                 content=content))
    proto = TensorProto(dtype="DT_FLOAT", float_val=data.reshape(-1).tolist(),
                        tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=s)
                                                           for s in data.shape[:2]]))
    return Summary(value=[Summary.Value(tag=tag, metadata=smd, tensor=proto)])


def pr_curve_raw(tag, tp, fp, tn, fn, precision, recall, num_thresholds=127, weights=None):
    """A ``Summary`` with a precision-recall curve given by its counts."""
    num_thresholds = min(num_thresholds, 127)   # as torch: more does not fit its protobuf
    data = np.stack([make_np(a) if isinstance(a, Tensor) else np.asarray(a)
                     for a in (tp, fp, tn, fn, precision, recall)])
    return _pr_summary(tag, data, num_thresholds)


def pr_curve(tag, labels, predictions, num_thresholds=127, weights=None):
    """A ``Summary`` with the precision-recall curve of ``predictions`` in [0, 1]."""
    num_thresholds = min(num_thresholds, 127)
    data = compute_curve(labels, predictions, num_thresholds=num_thresholds, weights=weights)
    return _pr_summary(tag, data, num_thresholds)


def compute_curve(labels, predictions, num_thresholds=None, weights=None):
    """TP, FP, TN, FN, precision and recall at ``num_thresholds`` thresholds (6 x n)."""
    min_count = 1e-7
    if weights is None:
        weights = 1.0
    bucket = np.int32(np.floor(predictions * (num_thresholds - 1)))
    float_labels = labels.astype(np.float64)
    hist_range = (0, num_thresholds - 1)
    tp_buckets, _ = np.histogram(bucket, bins=num_thresholds, range=hist_range,
                                 weights=float_labels * weights)
    fp_buckets, _ = np.histogram(bucket, bins=num_thresholds, range=hist_range,
                                 weights=(1.0 - float_labels) * weights)
    # counts at or above each threshold: reverse cumulative sums
    tp = np.cumsum(tp_buckets[::-1])[::-1]
    fp = np.cumsum(fp_buckets[::-1])[::-1]
    tn = fp[0] - fp
    fn = tp[0] - tp
    precision = tp / np.maximum(min_count, tp + fp)
    recall = tp / np.maximum(min_count, tp + fn)
    return np.stack((tp, fp, tn, fn, precision, recall))


# ---- meshes -----------------------------------------------------------------------------

def mesh(tag, vertices, colors, faces, config_dict, display_name=None, description=None):
    """A ``Summary`` with a mesh or point cloud: [B, N, 3] vertices, colors and faces."""
    from tensorboard.plugins.mesh import metadata
    from tensorboard.plugins.mesh.plugin_data_pb2 import MeshPluginData

    json_config = json.dumps(config_dict, sort_keys=True) if config_dict is not None else "{}"
    parts = [(t, kind) for t, kind in ((vertices, MeshPluginData.VERTEX),
                                       (faces, MeshPluginData.FACE),
                                       (colors, MeshPluginData.COLOR)) if t is not None]
    components = metadata.get_components_bitmask([kind for _, kind in parts])
    values = []
    for t, kind in parts:
        array = np.asarray(make_np(t), dtype=np.float32)
        if array.ndim != 3:
            raise ValueError(f"add_mesh: expected a 3-D [B, N, 3] tensor, got shape "
                             f"{tuple(array.shape)}")
        smd = metadata.create_summary_metadata(tag, display_name, kind, components,
                                               array.shape, description,
                                               json_config=json_config)
        proto = TensorProto(dtype="DT_FLOAT", float_val=array.reshape(-1).tolist(),
                            tensor_shape=TensorShapeProto(
                                dim=[TensorShapeProto.Dim(size=s) for s in array.shape]))
        values.append(Summary.Value(tag=metadata.get_instance_name(tag, kind), tensor=proto,
                                    metadata=smd))
    return Summary(value=values)
