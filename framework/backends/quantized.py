"""framework.backends.quantized (PyTorch's ``torch.backends.quantized``): ``engine``, the
quantized engine that quantized modules and qconfigs default to, and
``supported_engines``. The framework's quantized ops are its own reference kernels under
every engine name; the engine is kept for the scripts and qconfigs that read it."""
import sys
import types

__all__ = ["engine", "supported_engines"]

_ENGINES = {"none": 0, "fbgemm": 1, "qnnpack": 2, "onednn": 3, "x86": 4}
# PyTorch's x86 builds list these (in this order) and default to x86
_SUPPORTED = ["qnnpack", "onednn", "x86", "fbgemm"]
_state = {"engine": "x86"}


def _get_qengine_id(qengine):
    if qengine in ("none", "") or qengine is None:
        return 0
    if qengine not in _ENGINES:
        raise RuntimeError(f"{qengine} is not a valid value for quantized engine")
    return _ENGINES[qengine]


def _get_qengine_str(qengine):
    return {v: k for k, v in _ENGINES.items()}.get(qengine, "*undefined")


class _Module(types.ModuleType):
    @property
    def engine(self):
        return _state["engine"]

    @engine.setter
    def engine(self, val):
        qid = _get_qengine_id(val)
        name = _get_qengine_str(qid)
        if name not in _SUPPORTED:     # "none": PyTorch's text names it NoQEngine
            raise RuntimeError("quantized engine NoQEngine is not supported")
        _state["engine"] = name

    @property
    def supported_engines(self):
        return list(_SUPPORTED)

    @supported_engines.setter
    def supported_engines(self, val):
        raise RuntimeError("Assignment not supported")


sys.modules[__name__].__class__ = _Module
