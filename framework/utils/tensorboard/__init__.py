"""framework.utils.tensorboard: ``SummaryWriter`` writes TensorBoard event files, with the
``tensorboard`` package (``pip install tensorboard``, or the ``tensorboard`` extra)."""
try:
    import tensorboard
    from packaging.version import Version     # a dependency of tensorboard
    _too_old = not hasattr(tensorboard, "__version__") or \
        Version(tensorboard.__version__) < Version("1.15")
except ImportError as e:
    raise ImportError("TensorBoard logging requires TensorBoard version 1.15 or above") from e
if _too_old:
    raise ImportError("TensorBoard logging requires TensorBoard version 1.15 or above")
del tensorboard, Version, _too_old

from tensorboard.summary.writer.record_writer import RecordWriter  # noqa: E402

from .writer import FileWriter, SummaryWriter  # noqa: E402

__all__ = ["FileWriter", "RecordWriter", "SummaryWriter"]
