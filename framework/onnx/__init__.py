"""``framework.onnx``: PyTorch's ONNX entry points, without an exporter.

There is no ONNX exporter here (and the ``onnx``/``onnxscript`` packages it would write
with are not required), so ``export`` raises the error PyTorch raises when they are
missing; ``is_in_onnx_export`` answers False, for model code that asks.
"""

__all__ = ["export", "is_in_onnx_export", "OnnxExporterError", "register_custom_op_symbolic",
           "unregister_custom_op_symbolic"]


class OnnxExporterError(RuntimeError):
    """Errors raised by the ONNX exporter."""


def is_in_onnx_export():
    """False: no ONNX export is ever running here."""
    return False


def export(model, args=(), f=None, *, kwargs=None, verbose=None, input_names=None,
           output_names=None, opset_version=None, dynamo=True, dynamic_axes=None,
           dynamic_shapes=None, **options):
    """Raises: ``framework`` has no ONNX exporter (PyTorch's default, dynamo-based one needs
    ``onnxscript``, its TorchScript-based one needs ``onnx``)."""
    if dynamo:
        raise ModuleNotFoundError(
            "No module named 'onnxscript': framework.onnx.export has no ONNX exporter; "
            "export with PyTorch itself, or use framework.export.export for a graph",
            name="onnxscript")
    raise OnnxExporterError("Module onnx is not installed! (framework.onnx.export has no "
                            "ONNX exporter)")


def register_custom_op_symbolic(symbolic_name, symbolic_fn, opset_version):
    """Accepted and ignored: symbolics only matter to an exporter, and there is none."""


def unregister_custom_op_symbolic(symbolic_name, opset_version):
    """Accepted and ignored (see ``register_custom_op_symbolic``)."""
