"""``SummaryWriter``: log scalars, histograms, images, text, hyperparameters and more to
TensorBoard event files (written by the ``tensorboard`` package's ``EventFileWriter``)."""
import math
import os
import time

import numpy as np
from tensorboard.compat import tf
from tensorboard.compat.proto import event_pb2
from tensorboard.compat.proto.event_pb2 import Event, SessionLog
from tensorboard.plugins.projector.projector_config_pb2 import EmbeddingInfo, ProjectorConfig
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from .summary import (audio, custom_scalars, figure_to_image, histogram, histogram_raw,
                      hparams, image, image_boxes, make_grid, make_np, mesh, pr_curve,
                      pr_curve_raw, scalar, tensor_proto, text, video)

__all__ = ["FileWriter", "SummaryWriter"]


def _tensorflow_bins():
    # TensorFlow's default buckets: +-1e-12 * 1.1**k up to 1e20, and 0
    v, buckets = 1e-12, []
    while v < 1e20:
        buckets.append(v)
        v *= 1.1
    return [-b for b in reversed(buckets)] + [0] + buckets


_DEFAULT_BINS = _tensorflow_bins()


class FileWriter:
    """Writes protocol buffers to event files in ``log_dir``, asynchronously.

    The lower-level writer under :class:`SummaryWriter`.
    """

    def __init__(self, log_dir, max_queue=10, flush_secs=120, filename_suffix=""):
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs,
                                            filename_suffix)

    def get_logdir(self):
        """The directory where event files are written."""
        return self.event_writer.get_logdir()

    def add_event(self, event, step=None, walltime=None):
        """Add an ``Event`` protocol buffer to the event file."""
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(self, summary, global_step=None, walltime=None):
        """Add a ``Summary`` protocol buffer to the event file."""
        self.add_event(event_pb2.Event(summary=summary), global_step, walltime)

    def add_graph(self, graph_profile, walltime=None):
        """Add a ``GraphDef`` and its step stats (a pair of protocol buffers)."""
        graph, stepstats = graph_profile
        self.add_event(event_pb2.Event(graph_def=graph.SerializeToString()), None, walltime)
        trm = event_pb2.TaggedRunMetadata(tag="step1",
                                          run_metadata=stepstats.SerializeToString())
        self.add_event(event_pb2.Event(tagged_run_metadata=trm), None, walltime)

    def add_onnx_graph(self, graph, walltime=None):
        """Add a ``GraphDef`` protocol buffer."""
        self.add_event(event_pb2.Event(graph_def=graph.SerializeToString()), None, walltime)

    def flush(self):
        """Write all pending events to disk."""
        self.event_writer.flush()

    def close(self):
        """Flush and close the event file."""
        self.event_writer.close()

    def reopen(self):
        """Reopen a closed writer: events go to a new file in the same directory."""
        self.event_writer.reopen()


class SummaryWriter:
    """Writes entries to event files in ``log_dir`` for TensorBoard to read.

    Args:
        log_dir (str): where to save; default ``runs/CURRENT_DATETIME_HOSTNAME``.
        comment (str): suffix of the default ``log_dir`` (ignored when ``log_dir`` is given).
        purge_step (int): TensorBoard discards the events at this step and later that an
            earlier run (say, one that crashed) wrote to ``log_dir``.
        max_queue (int): pending events and summaries before they are written to disk.
        flush_secs (int): how often, in seconds, pending events are written to disk.
        filename_suffix (str): suffix of the event file names in ``log_dir``.
    """

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10,
                 flush_secs=120, filename_suffix=""):
        if not log_dir:
            import socket
            from datetime import datetime
            now = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", now + "_" + socket.gethostname() + comment)
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer = self.all_writers = None
        self._get_file_writer()
        self.default_bins = _DEFAULT_BINS

    def _get_file_writer(self):
        """The main file writer; after ``close`` a new one (and a new event file)."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs,
                                          self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                # a session restart at purge_step: TensorBoard drops older events from it on
                step = self.purge_step
                self.file_writer.add_event(Event(step=step, file_version="brain.Event:2"))
                self.file_writer.add_event(
                    Event(step=step, session_log=SessionLog(status=SessionLog.START)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self):
        """The directory where event files are written."""
        return self.log_dir

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None,
                    run_name=None, global_step=None):
        """Add hyperparameters and their metrics, for comparison in TensorBoard's HPARAMS
        tab; they go to a sub-run ``run_name`` (default: the current time)."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        exp, ssi, sei = hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        if not run_name:
            run_name = str(time.time())
        logdir = os.path.join(self._get_file_writer().get_logdir(), run_name)
        with SummaryWriter(log_dir=logdir) as w_hp:
            for summary in (exp, ssi, sei):
                w_hp.file_writer.add_summary(summary, global_step)
            for k, v in metric_dict.items():
                w_hp.add_scalar(k, v, global_step)

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        """Add scalar data: a number, or a one-element tensor or array."""
        summary = scalar(tag, scalar_value, new_style=new_style,
                         double_precision=double_precision)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Add many scalars under one main tag; each key goes to its own sub-run
        ``<log_dir>/<main_tag>_<key>``."""
        walltime = time.time() if walltime is None else walltime
        fw_logdir = self._get_file_writer().get_logdir()
        for tag, scalar_value in tag_scalar_dict.items():
            fw_tag = fw_logdir + "/" + main_tag.replace("/", "_") + "_" + tag
            fw = self.all_writers.get(fw_tag)
            if fw is None:
                fw = FileWriter(fw_tag, self.max_queue, self.flush_secs, self.filename_suffix)
                self.all_writers[fw_tag] = fw
            fw.add_summary(scalar(main_tag, scalar_value), global_step, walltime)

    def add_tensor(self, tag, tensor, global_step=None, walltime=None):
        """Add a whole tensor as a ``TensorProto``."""
        self._get_file_writer().add_summary(tensor_proto(tag, tensor), global_step, walltime)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None,
                      max_bins=None):
        """Add a histogram of ``values``; ``bins`` as ``numpy.histogram``'s, or
        ``"tensorflow"`` for TensorFlow's default buckets."""
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        self._get_file_writer().add_summary(histogram(tag, values, bins, max_bins=max_bins),
                                            global_step, walltime)

    def add_histogram_raw(self, tag, min, max, num, sum, sum_squares, bucket_limits,
                          bucket_counts, global_step=None, walltime=None):
        """Add a histogram given by its statistics and buckets (right limits)."""
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError("len(bucket_limits) != len(bucket_counts), see the document.")
        summary = histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits,
                                bucket_counts)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        """Add an image: float values in [0, 1] or uint8 values in [0, 255], laid out as
        ``dataformats`` (CHW, HWC, HW, ...)."""
        self._get_file_writer().add_summary(image(tag, img_tensor, dataformats=dataformats),
                                            global_step, walltime)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None,
                   dataformats="NCHW"):
        """Add a batch of images, tiled into one grid image."""
        self._get_file_writer().add_summary(image(tag, img_tensor, dataformats=dataformats),
                                            global_step, walltime)

    def add_image_with_boxes(self, tag, img_tensor, box_tensor, global_step=None,
                             walltime=None, rescale=1, dataformats="CHW", labels=None):
        """Add an image with boxes ``(xmin, ymin, xmax, ymax)`` in pixels drawn on it."""
        if labels is not None:
            if isinstance(labels, str):
                labels = [labels]
            if len(labels) != box_tensor.shape[0]:
                labels = None
        summary = image_boxes(tag, img_tensor, box_tensor, rescale=rescale,
                              dataformats=dataformats, labels=labels)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_figure(self, tag, figure, global_step=None, close=True, walltime=None):
        """Render a matplotlib figure (or a list of them) into an image and add it."""
        fmt = "NCHW" if isinstance(figure, list) else "CHW"
        self.add_image(tag, figure_to_image(figure, close), global_step, walltime,
                       dataformats=fmt)

    def add_video(self, tag, vid_tensor, global_step=None, fps=4, walltime=None):
        """Add videos (B, T, C, H, W) as one animated GIF: float values in [0, 1] or uint8
        values in [0, 255]."""
        self._get_file_writer().add_summary(video(tag, vid_tensor, fps), global_step,
                                            walltime)

    def add_audio(self, tag, snd_tensor, global_step=None, sample_rate=44100, walltime=None):
        """Add a mono audio clip: samples in [-1, 1], shape (1, L)."""
        self._get_file_writer().add_summary(audio(tag, snd_tensor, sample_rate=sample_rate),
                                            global_step, walltime)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        """Add text (Markdown) data."""
        self._get_file_writer().add_summary(text(tag, text_string), global_step, walltime)

    def add_onnx_graph(self, prototxt):
        raise NotImplementedError("SummaryWriter.add_onnx_graph is not supported by this "
                                  "framework.")

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        """Not supported: torch traces the model with its JIT tracer, which this framework
        does not have."""
        raise NotImplementedError("SummaryWriter.add_graph is not supported: it needs "
                                  "torch.jit.trace to record the model's graph, and this "
                                  "framework has no JIT tracer.")

    @staticmethod
    def _encode(rawstr):
        # a tag becomes one directory name: escape '%', '/' and '\'
        return rawstr.replace("%", "%25").replace("/", "%2f").replace("\\", "%5c")

    def add_embedding(self, mat, metadata=None, label_img=None, global_step=None,
                      tag="default", metadata_header=None):
        """Add embedding projector data: ``mat`` (N, D), optional labels ``metadata`` (N)
        and thumbnails ``label_img`` (N, C, H, W)."""
        mat = make_np(mat)
        if global_step is None:
            global_step = 0
        subdir = f"{str(global_step).zfill(5)}/{self._encode(tag)}"
        logdir = self._get_file_writer().get_logdir()
        save_path = os.path.join(logdir, subdir)
        fs = tf.io.gfile
        if fs.exists(save_path):
            if not fs.isdir(save_path):
                raise NotADirectoryError(
                    f"Path: `{save_path}` exists, but is a file. Cannot proceed.")
            print("warning: Embedding dir exists, did you set global_step for "
                  "add_embedding()?")
        else:
            fs.makedirs(save_path)

        if metadata is not None:
            if mat.shape[0] != len(metadata):
                raise AssertionError("#labels should equal with #data points")
            _write_tsv(metadata, save_path, metadata_header)
        if label_img is not None:
            if mat.shape[0] != label_img.shape[0]:
                raise AssertionError("#images should equal with #data points")
            _write_sprite(label_img, save_path)
        if mat.ndim != 2:
            raise AssertionError(
                "mat should be 2D, where mat.size(0) is the number of data points")
        lines = ["\t".join(str(v.item()) for v in row) for row in mat]
        _write_file(save_path, "tensors.tsv", "".join(line + "\n" for line in lines))

        if not hasattr(self, "_projector_config"):
            self._projector_config = ProjectorConfig()
        info = EmbeddingInfo(tensor_name=f"{tag}:{str(global_step).zfill(5)}",
                             tensor_path=subdir + "/tensors.tsv")
        if metadata is not None:
            info.metadata_path = subdir + "/metadata.tsv"
        if label_img is not None:
            info.sprite.image_path = subdir + "/sprite.png"
            info.sprite.single_image_dim.extend([label_img.shape[3], label_img.shape[2]])
        self._projector_config.embeddings.extend([info])

        from google.protobuf import text_format
        _write_file(logdir, "projector_config.pbtxt",
                    text_format.MessageToString(self._projector_config))

    def add_pr_curve(self, tag, labels, predictions, global_step=None, num_thresholds=127,
                     weights=None, walltime=None):
        """Add a precision-recall curve of ``predictions`` in [0, 1] against 0/1
        ``labels``."""
        labels, predictions = make_np(labels), make_np(predictions)
        summary = pr_curve(tag, labels, predictions, num_thresholds, weights)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_pr_curve_raw(self, tag, true_positive_counts, false_positive_counts,
                         true_negative_counts, false_negative_counts, precision, recall,
                         global_step=None, num_thresholds=127, weights=None, walltime=None):
        """Add a precision-recall curve given by its counts, precision and recall."""
        summary = pr_curve_raw(tag, true_positive_counts, false_positive_counts,
                               true_negative_counts, false_negative_counts, precision,
                               recall, num_thresholds, weights)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_custom_scalars_multilinechart(self, tags, category="default", title="untitled"):
        """Add a custom-scalars chart of the scalars ``tags`` on one plot."""
        layout = {category: {title: ["Multiline", tags]}}
        self._get_file_writer().add_summary(custom_scalars(layout))

    def add_custom_scalars_marginchart(self, tags, category="default", title="untitled"):
        """Add a custom-scalars chart of a value and its lower and upper bounds (3 tags)."""
        if len(tags) != 3:
            raise AssertionError(f"Expected 3 tags, got {len(tags)}.")
        layout = {category: {title: ["Margin", tags]}}
        self._get_file_writer().add_summary(custom_scalars(layout))

    def add_custom_scalars(self, layout):
        """Add a custom-scalars layout: ``{category: {title: [kind, tags]}}``, kind being
        ``"Multiline"`` or ``"Margin"``."""
        self._get_file_writer().add_summary(custom_scalars(layout))

    def add_mesh(self, tag, vertices, colors=None, faces=None, config_dict=None,
                 global_step=None, walltime=None):
        """Add a mesh or point cloud: (B, N, 3) vertices, colors (uint8) and faces."""
        self._get_file_writer().add_summary(mesh(tag, vertices, colors, faces, config_dict),
                                            global_step, walltime)

    def flush(self):
        """Write all pending events of every writer to disk."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()

    def close(self):
        """Flush and close every event file; closing twice is a no-op."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.close()


# ---- embedding projector files ----------------------------------------------------------

def _write_file(directory, name, contents):
    path = directory.rstrip("/") + "/" + name
    with tf.io.gfile.GFile(path, "wb") as f:
        f.write(contents.encode("utf-8") if isinstance(contents, str) else contents)


def _write_tsv(metadata, save_path, metadata_header=None):
    if not metadata_header:
        rows = [str(x) for x in metadata]
    else:
        if len(metadata_header) != len(metadata[0]):
            raise AssertionError(
                "len of header must be equal to the number of columns in metadata")
        rows = ["\t".join(str(e) for e in row) for row in [metadata_header] + list(metadata)]
    _write_file(save_path, "metadata.tsv", "\n".join(rows) + "\n")


def _write_sprite(label_img, save_path):
    import io

    from PIL import Image
    # a square grid of thumbnails, as the projector expects
    nrow = math.ceil(label_img.shape[0] ** 0.5)
    grid = make_grid(make_np(label_img), ncols=nrow)
    square = np.zeros((grid.shape[2], grid.shape[2], 3))
    square[:grid.shape[1]] = grid.transpose(1, 2, 0)
    img = Image.fromarray(np.uint8((square * 255).clip(0, 255)))
    with io.BytesIO() as buf:
        img.save(buf, format="PNG")
        _write_file(save_path, "sprite.png", buf.getvalue())
