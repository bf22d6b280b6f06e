"""framework: a PyTorch-compatible deep learning framework (C++ on the CPU, Triton on GPUs).

``import framework as torch`` is meant to run PyTorch research scripts unchanged.
"""
import ctypes as _ctypes
import os as _os
import sys as _sys
import types as _types

# OpenBLAS's idle threads spin ~0.1 s after each GEMM (its default THREAD_TIMEOUT), holding
# the cores our own kernels' threads need next: every op after a matmul then waited for a
# time slice (~0.4 ms). The shortest timeout (2^4 cycles) makes them sleep at once; measured
# on 2 cores, a small transformer's training step went from 67 to 22 ms. A value the user
# set wins. It is set before scipy_openblas32 is imported: the import loads the library,
# which reads the variable then.
_os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
import scipy_openblas32 as _openblas  # noqa: E402

# Load OpenBLAS before the extension that links it, wherever the wheel put it.
_ctypes.CDLL(_os.path.join(_openblas.get_lib_dir(), "lib" + _openblas.get_library() + ".so"),
             mode=_ctypes.RTLD_GLOBAL)

from . import _C  # noqa: E402
from ._dtype import (  # noqa: E402,F401
    dtype, bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, complex64,
    complex128, cfloat, cdouble, half,
    float, double, short, int, long, get_default_dtype, set_default_dtype, promote_types,
    result_type, can_cast, finfo, iinfo,
    float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz,
)
from ._device import device, get_default_device, set_default_device  # noqa: E402,F401
from ._tensor import Tensor, Size  # noqa: E402,F401
from ._scaled_mm import _scaled_mm  # noqa: E402,F401
from ._tensor_str import set_printoptions  # noqa: E402,F401
from . import _ops  # noqa: E402
from ._ops import dispatcher as _dispatcher  # noqa: E402
from ._ops.pointwise import broadcast_shapes_api as broadcast_shapes  # noqa: E402,F401
from ._ops.memory_format import (  # noqa: E402,F401
    memory_format, contiguous_format, channels_last, channels_last_3d, preserve_format,
    layout, strided)
from ._ops.views import broadcast_tensors  # noqa: E402,F401
from . import backends, cuda, linalg  # noqa: E402,F401
from .cuda import AcceleratorError, OutOfMemoryError  # noqa: E402,F401
from ._matmul_precision import (  # noqa: E402,F401
    get_float32_matmul_precision, set_float32_matmul_precision,
)
from . import random  # noqa: E402,F401
from .random import (  # noqa: E402,F401
    Generator, default_generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state,
)

# The table's nn.functional ops are bound into a plain namespace module, which
# framework.nn.functional re-exports beside its Python-level functions; nn itself is
# imported last because its modules lean on autograd.
_nn_functional_ops = _types.ModuleType("framework._nn_functional_ops")
from . import special  # noqa: E402
from . import fft, masked, signal  # noqa: E402
_dispatcher.install({"": _sys.modules[__name__], "linalg": linalg, "special": special,
                     "nn.functional": _nn_functional_ops, "masked": masked,
                     "signal.windows": signal.windows, "fft": fft})
from . import autograd  # noqa: E402
from .autograd.grad_mode import (  # noqa: E402,F401
    enable_grad, inference_mode, is_grad_enabled, is_inference, is_inference_mode_enabled,
    no_grad, set_grad_enabled,
)
from . import nn  # noqa: E402,F401
from ._compile import compile  # noqa: E402,F401
from . import library, jit, types  # noqa: E402,F401
from .library import ops, DispatchKey  # noqa: E402,F401
from .nn.modules.module import _typename as typename  # noqa: E402,F401
from .autograd.anomaly_mode import (  # noqa: E402,F401
    is_anomaly_enabled, is_anomaly_check_nan_enabled, set_anomaly_enabled)
# torch's constants and its top-level forms of these nn.functional ops (same signatures)
import math as _math  # noqa: E402
pi, e, inf, nan, newaxis = _math.pi, _math.e, _math.inf, _math.nan, None
from .nn.functional import (  # noqa: E402,F401
    celu, channel_shuffle, cosine_similarity, hardshrink, pairwise_distance, pdist,
    pixel_shuffle, pixel_unshuffle, prelu, selu)


def is_tensor(obj):
    """Whether ``obj`` is a framework Tensor."""
    return isinstance(obj, Tensor)


def is_floating_point(input):
    """Whether the tensor's dtype is a floating dtype (float16, bfloat16, float32, float64)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"is_floating_point(): argument 'input' (position 1) must be Tensor, "
                        f"not {type(input).__name__}")
    return input.dtype.is_floating_point


def is_complex(input):
    """Whether the tensor's dtype is a complex dtype (complex64, complex128)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"is_complex(): argument 'input' (position 1) must be Tensor, "
                        f"not {type(input).__name__}")
    return input.dtype.is_complex


def numel(input):
    return input.numel()


def get_num_threads():
    """Threads used by the CPU kernels."""
    return _C.num_threads()


def set_num_threads(n):
    """Sets the number of threads used by the CPU kernels (ours and OpenBLAS's)."""
    _C.set_num_threads(n)
    _C.blas_set_num_threads(n)
from . import func  # noqa: E402,F401
from .func import vmap  # noqa: E402,F401
from . import optim  # noqa: E402,F401
from . import amp, distributed, utils  # noqa: E402,F401
from . import profiler, testing  # noqa: E402,F401
from .amp import autocast  # noqa: E402,F401
from .amp._ops import _amp_foreach_non_finite_check_and_unscale_, _amp_update_scale_  # noqa: E402,F401,E501
from ._foreach import *  # noqa: E402,F401,F403 (torch._foreach_add_, ...)
from ._ops.autocast import (  # noqa: E402,F401
    autocast_decrement_nesting, autocast_increment_nesting, clear_autocast_cache,
    get_autocast_dtype, is_autocast_cache_enabled, is_autocast_enabled,
    set_autocast_cache_enabled, set_autocast_dtype, set_autocast_enabled,
)
_ops.autocast.install([("", _sys.modules[__name__]), ("", Tensor), ("linalg.", linalg),
                       ("nn.functional.", nn.functional)])
_dispatcher.install_operators()
_ops.einsum.install_sublists()   # torch.einsum(a, [0, 1], b, [1, 2])
from .serialization import save, load  # noqa: E402,F401
from ._determinism import (  # noqa: E402,F401
    are_deterministic_algorithms_enabled, get_deterministic_debug_mode,
    is_deterministic_algorithms_warn_only_enabled, set_deterministic_debug_mode,
    use_deterministic_algorithms,
)
# PyTorch's function forms of three in-place Tensor methods (torch.fill_(t, v), ...)
fill_, zero_, resize_as_ = Tensor.fill_, Tensor.zero_, Tensor.resize_as_
# and of the in-place pointwise methods PyTorch also exposes as functions (torch.exp_(t))
for _name in ("abs_", "acos_", "acosh_", "arccos_", "arccosh_", "arcsin_", "arcsinh_",
              "arctan_", "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_",
              "clamp_max_", "clamp_min_", "clip_", "cos_", "cosh_", "deg2rad_", "erf_",
              "erfc_", "exp2_", "exp_", "expm1_", "fix_", "floor_", "frac_", "gcd_", "i0_",
              "lcm_", "ldexp_", "log10_", "log1p_", "log2_", "log_", "logit_", "nan_to_num_",
              "neg_", "negative_", "rad2deg_", "reciprocal_", "round_", "rsqrt_", "sigmoid_",
              "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_", "tanh_", "trunc_",
              "xlogy_", "detach_", "index_put_", "as_strided_"):
    globals()[_name] = getattr(Tensor, _name)
detach, get_device, is_signed = Tensor.detach, Tensor.get_device, Tensor.is_signed
from ._dlpack import from_dlpack  # noqa: E402,F401
from ._event import Event  # noqa: E402,F401
from . import accelerator, cpu, quasirandom  # noqa: E402,F401
from ._frombuffer import frombuffer, from_file  # noqa: E402,F401
from ._tensor_extras import install as _install_tensor_extras, nonzero_static  # noqa: E402,F401
_install_tensor_extras(Tensor)
from . import sparse  # noqa: E402
sparse.install(_sys.modules[__name__])   # sparse_coo_tensor, layouts, sparse mm/matmul/addmm
from . import _aten_aliases  # noqa: E402
# torch's top-level ATen spellings; a name the op table (or anything above) defines wins
globals().update({_n: getattr(_aten_aliases, _n) for _n in _aten_aliases.__all__
                  if _n not in globals()})
from ._legacy_types import set_default_tensor_type  # noqa: E402,F401
from ._legacy_types import CPU_TYPES as _legacy  # noqa: E402
globals().update(_legacy)   # FloatTensor, LongTensor, ...
from ._aten_rnn import (  # noqa: E402,F401
    gru, gru_cell, lstm, lstm_cell, rnn_relu, rnn_relu_cell, rnn_tanh, rnn_tanh_cell)
from ._control_flow import cond, while_loop  # noqa: E402,F401
from . import overrides  # noqa: E402,F401
from .overrides import DisableTorchFunction, DisableTorchFunctionSubclass  # noqa: E402,F401
_C._disabled_torch_function_impl = overrides._disabled_torch_function_impl
_C.DisableTorchFunction = DisableTorchFunction
_C.DisableTorchFunctionSubclass = DisableTorchFunctionSubclass
_C._is_torch_function_enabled = overrides._is_torch_function_enabled
_C._is_torch_function_mode_enabled = overrides._is_torch_function_mode_enabled
from .ao._fake_quant_ops import (  # noqa: E402,F401
    _fake_quantize_learnable_per_tensor_affine, fake_quantize_per_channel_affine,
    fake_quantize_per_tensor_affine)
from . import ao as _ao  # noqa: E402
globals().update({_n: getattr(_ao, _n) for _n in _ao.SENTINELS})   # quint8, per_tensor_affine
from .ao import _qtensor  # noqa: E402
_qtensor.install(_sys.modules[__name__])   # quantize_per_tensor, dequantize, Tensor.int_repr
from ._typed_storage import TypedStorage, UntypedStorage, is_storage  # noqa: E402,F401
from ._typed_storage import install as _install_storage, LEGACY as _legacy_storages  # noqa: E402,E501
_install_storage(Tensor)   # Tensor.storage(), Tensor.untyped_storage() -> UntypedStorage
globals().update(_legacy_storages)   # FloatStorage, LongStorage, ...
from . import _sym, _aten_extras, _build_info, _batch_norm_sync  # noqa: E402
for _m in (_sym, _aten_extras, _build_info, _batch_norm_sync):   # a name defined above wins
    globals().update({_n: getattr(_m, _n) for _n in _m.__all__ if _n not in globals()})
_aten_extras.install(Tensor)   # Tensor.ger, hash_tensor, storage_type, module_load, ...
from .jit import fork, wait  # noqa: E402,F401
from ._dlpack import to_dlpack  # noqa: E402,F401
from . import functional, storage, torch_version, version  # noqa: E402,F401
from .torch_version import __version__  # noqa: E402,F401
from . import nested  # noqa: E402,F401  (after nn: its table names F's functions)
from .nested import jagged  # noqa: E402,F401


def __getattr__(name):
    # framework.multiprocessing is imported on first use (it registers pickle reducers);
    # framework.distributions, compiler, _dynamo and hub too, to keep `import framework` light
    if name in ("multiprocessing", "distributions", "compiler", "_dynamo", "hub", "fx",
                "futures", "export", "quantization", "onnx", "__config__"):
        import importlib
        return importlib.import_module(__name__ + "." + name)
    if name == "_assert":   # torch._assert (torchvision's ViT checks its input size with it)
        from .fx.tracer import _assert
        globals()["_assert"] = _assert
        return _assert
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
