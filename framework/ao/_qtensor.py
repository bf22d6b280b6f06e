"""Quantized tensors: ``quantize_per_tensor``, ``quantize_per_channel``, ``dequantize`` and
the ``Tensor`` methods that read a quantized tensor (``int_repr``, ``q_scale``, ...).

A quantized tensor is a ``framework.Tensor`` subclass holding an integer tensor (int8 for
``qint8``, uint8 for ``quint8``, int32 for ``qint32``) and its quantization parameters,
as ``framework.sparse`` holds its indices and values: it has no strided storage, so a dense
op given one raises PyTorch's NotImplementedError ("... from the 'QuantizedCPU' backend")
instead of reading garbage. As PyTorch's fbgemm/qnnpack backends, it lives on the CPU.

Numerics follow PyTorch's x86 build bit for bit: per tensor (8-bit), ``q = rint(fma(x,
1/scale, zero_point))`` in float32 (rint rounds half to even), clamped to the dtype's range;
per channel and for qint32, the product ``x * (1/scale)`` is rounded to float32 before the
zero point is added;
``dequantize`` is ``(q - zero_point) * scale`` rounded once to float32.
"""
from .. import _dtype, overrides as _overrides
from .._tensor import Tensor
from ..sparse.base import _add_suffixes, _guard, _NoStorage
from . import (per_channel_affine, per_tensor_affine, qint8, qint32, quint8)

_INT_OF = {qint8: _dtype.int8, quint8: _dtype.uint8, qint32: _dtype.int32}
_RANGE = {qint8: (-128, 127), quint8: (0, 255), qint32: (-2**31, 2**31 - 1)}
_ATEN = {qint8: "QInt8", quint8: "QUInt8", qint32: "QInt32"}


def _aten_name(dt):
    """PyTorch's ScalarType name of a dtype (``Float``, ``QUInt8``) for error texts."""
    if dt in _ATEN:
        return _ATEN[dt]
    return {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
            "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
            "uint8": "Byte", "bool": "Bool"}.get(getattr(dt, "name", ""), str(dt))


def _backend_error(op, t):
    backend = ("CUDA" if t.device.type == "cuda" else "CPU") if not t.is_quantized else \
        t._backend_name()
    return NotImplementedError(
        f"Could not run 'aten::{op}' with arguments from the '{backend}' backend. This could "
        "be because the operator doesn't exist for this backend.")


class QTensor(Tensor):
    """A quantized tensor (made by ``framework.quantize_per_tensor`` and friends)."""

    __slots__ = ()
    _backend = "Quantized"
    is_quantized = True

    def __new__(cls, *args, **kwargs):
        raise TypeError("quantized tensors are made by framework.quantize_per_tensor or "
                        "framework.quantize_per_channel")

    @classmethod
    def _wrap(cls, qint, dtype, scheme, scale, zero_point, axis=None):
        """A quantized tensor over the integer tensor ``qint`` as it is (no checks).
        ``scale``/``zero_point``: a float and an int per tensor; float64 and int64 tensors
        per channel."""
        if not _overrides._active:
            _overrides._subclass_defined(QTensor)   # free functions reach QTensor from now
        t = object.__new__(cls)
        t._storage = _NoStorage(qint.device)
        t._shape = tuple(qint.shape)
        t.dtype = dtype
        t._requires_grad = False
        t._grad = None
        t._grad_fn = None
        t._output_nr = 0
        t._base = None
        t._qint, t._qscheme, t._scale, t._zp, t._axis = qint, scheme, scale, zero_point, axis
        return t

    def _like(self, qint, axis=None):
        return QTensor._wrap(qint, self.dtype, self._qscheme, self._scale, self._zp,
                             self._axis if axis is None else axis)

    # dense kernels and views read these first: a quantized tensor has neither
    _stride = property(_guard)
    _offset = property(_guard)

    def _backend_name(self):
        return self._backend + ("CUDA" if self._storage.device.type == "cuda" else "CPU")

    # ---- quantization parameters ---------------------------------------------------------
    def qscheme(self):
        """The quantization scheme (``framework.per_tensor_affine``, ...)."""
        return self._qscheme

    def _expect(self, scheme, what):
        if self._qscheme is not scheme:
            raise RuntimeError(f"Expected quantizer->qscheme() == {what} to be true, but got "
                               "false.")

    def q_scale(self):
        self._expect(per_tensor_affine, "kPerTensorAffine")
        return self._scale

    def q_zero_point(self):
        self._expect(per_tensor_affine, "kPerTensorAffine")
        return self._zp

    def q_per_channel_scales(self):
        self._expect(per_channel_affine, "kPerChannelAffine")
        return self._scale.clone()

    def q_per_channel_zero_points(self):
        self._expect(per_channel_affine, "kPerChannelAffine")
        return self._zp.clone()

    def q_per_channel_axis(self):
        self._expect(per_channel_affine, "kPerChannelAffine")
        return self._axis

    def int_repr(self):
        """The stored integers as a uint8/int8/int32 tensor (a copy)."""
        return self._qint.clone()

    def dequantize(self):
        """The float32 tensor this one stands for: ``(q - zero_point) * scale``."""
        q = self._qint.to(_dtype.float64)
        if self._qscheme is per_tensor_affine:
            # PyTorch's kernel: float32(q - zero_point) times the float32 scale, in float32
            return (q - self._zp).to(_dtype.float32) * _f32(self._scale)
        shape = [1] * q.dim()
        shape[self._axis] = -1
        zp = self._zp.to(_dtype.float64).reshape(shape)
        return ((q - zp) * self._scale.reshape(shape)).to(_dtype.float32)

    # ---- the few ops PyTorch runs on quantized tensors -------------------------------------
    def clone(self, *, memory_format=None):
        return self._like(self._qint.clone(), self._axis)

    def detach(self):
        return self

    def contiguous(self, memory_format=None):
        return self._like(self._qint.contiguous())

    def _per_tensor_view(self, op, fn):
        if self._qscheme is not per_tensor_affine:
            raise _backend_error(op, self)
        return self._like(fn(self._qint))

    def view(self, *shape):
        return self._per_tensor_view("view", lambda q: q.view(*shape))

    def reshape(self, *shape):
        return self._per_tensor_view("reshape", lambda q: q.reshape(*shape))

    def flatten(self, start_dim=0, end_dim=-1):
        return self._per_tensor_view("flatten", lambda q: q.flatten(start_dim, end_dim))

    def transpose(self, dim0, dim1):
        return self._per_tensor_view("transpose", lambda q: q.transpose(dim0, dim1))

    def permute(self, *dims):
        return self._per_tensor_view("permute", lambda q: q.permute(*dims))

    def t(self):
        return self._per_tensor_view("t", lambda q: q.t())

    def squeeze(self, *dim):
        return self._per_tensor_view("squeeze", lambda q: q.squeeze(*dim))

    def unsqueeze(self, dim):
        return self._per_tensor_view("unsqueeze", lambda q: q.unsqueeze(dim))

    def __getitem__(self, index):
        return self._per_tensor_view("index", lambda q: q[index])

    def stride(self, dim=None):
        return self._qint.stride(dim)

    def is_contiguous(self, memory_format=None):
        return self._qint.is_contiguous(memory_format)

    def equal(self, other):
        return (isinstance(other, QTensor) and self.dtype is other.dtype
                and self._qscheme is other._qscheme and self._qint.equal(other._qint)
                and _params_equal(self, other))

    def is_floating_point(self):
        return False

    def requires_grad_(self, requires_grad=True):
        if requires_grad:
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        return self

    def cpu(self, memory_format=None):
        return self

    def to(self, *args, **kwargs):
        raise RuntimeError("Creation of quantized tensor requires quantized dtype like "
                           "framework.quint8")

    float = to

    def numpy(self, *, force=False):
        raise TypeError(f"Got unsupported ScalarType {_aten_name(self.dtype)}")

    def tolist(self):
        raise RuntimeError("load_scalar: invalid type")

    def item(self):
        return self.dequantize().item()

    def __deepcopy__(self, memo):
        out = self.clone()
        memo[id(self)] = out
        return out

    def __reduce_ex__(self, protocol):
        return (_rebuild, (self._qint, self.dtype, self._qscheme, self._scale, self._zp,
                           self._axis))

    def __repr__(self):
        suffixes = ["size=" + str(tuple(self._shape)), "dtype=" + repr(self.dtype),
                    "quantization_scheme=" + repr(self._qscheme)]
        if self._qscheme is per_tensor_affine:
            suffixes += ["scale=" + repr(self._scale), "zero_point=" + repr(self._zp)]
        else:
            suffixes += ["scale=" + repr(self._scale), "zero_point=" + repr(self._zp),
                         "axis=" + str(self._axis)]
        from .._tensor_str import tensor_str
        body = "[]" if self.numel() == 0 else \
            tensor_str(self.dequantize()._host_array(), True, 7)
        return _add_suffixes("tensor(" + body, suffixes, 7, force_newline=False)

    __str__ = __repr__


def _params_equal(a, b):
    if a._qscheme is per_tensor_affine:
        return a._scale == b._scale and a._zp == b._zp
    return a._axis == b._axis and a._scale.equal(b._scale) and a._zp.equal(b._zp)


def _rebuild(qint, dtype, scheme, scale, zero_point, axis):
    """Unpickles a quantized tensor."""
    return QTensor._wrap(qint, dtype, scheme, scale, zero_point, axis)


def _f32(x):
    """A Python float rounded to float32 (as PyTorch's kernels read a double scale)."""
    import struct
    return struct.unpack("f", struct.pack("f", x))[0]


# ---- quantize ------------------------------------------------------------------------------

def _check_input(op, input, dtype):
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(input).__name__}")
    if input.device.type != "cpu":
        raise _backend_error(op, input)
    if input.dtype is not _dtype.float32:
        raise RuntimeError(f"Quantize only works on Float Tensor, got {_aten_name(input.dtype)}")
    if dtype not in _INT_OF:
        raise RuntimeError(f"ScalarType {_aten_name(dtype)} is not supported in new_qtensor.")


def _check_zero_point(op, zp, dtype):
    lo, hi = _RANGE[dtype]
    if zp < lo:
        raise RuntimeError(f"{op} zero_point {zp} is below lower bound.")
    if zp > hi:
        raise RuntimeError(f"{op} zero_point {zp} is above upper bound.")


def _quantize_tensor(input, scale, zero_point, dtype):
    from ..autograd.grad_mode import no_grad
    _check_input("quantize_per_tensor", input, dtype)
    scale = float(scale)
    zero_point = int(zero_point)
    _check_zero_point("quantize_tensor_per_tensor_affine", zero_point, dtype)
    lo, hi = _RANGE[dtype]
    inv = _f32(1.0 / _f32(scale)) if _f32(scale) != 0 else float("inf")
    with no_grad():
        x = input.detach()
        if dtype is qint32:
            # PyTorch's scalar loop: float32 product, then float32 sum with the zero point
            v = x * _f32(inv) + float(zero_point)
        else:
            # its vector loop: x * inv is exact in float64 and the zero point small, so
            # one rounding to float32 is its fused multiply-add
            v = (x.to(_dtype.float64) * inv + zero_point).to(_dtype.float32)
        q = v.round().double().clamp(lo, hi).nan_to_num(0.0).to(_INT_OF[dtype])
    return QTensor._wrap(q, dtype, per_tensor_affine, scale, zero_point)


def quantize_per_tensor(input, scale, zero_point, dtype):
    """Converts a float tensor to a quantized tensor with the given scale and zero point;
    ``input`` may be a list of tensors (then ``scale``/``zero_point`` are tensors of one
    value per tensor, and a list is returned)."""
    if isinstance(input, (list, tuple)):
        scales = scale.tolist() if isinstance(scale, Tensor) else list(scale)
        zps = zero_point.tolist() if isinstance(zero_point, Tensor) else list(zero_point)
        if len(scales) != len(input) or len(zps) != len(input):
            raise RuntimeError("quantize_per_tensor(): expected one scale and zero_point per "
                               f"tensor, got {len(input)} tensors, {len(scales)} scales and "
                               f"{len(zps)} zero_points")
        return [_quantize_tensor(x, s, z, dtype) for x, s, z in zip(input, scales, zps)]
    if isinstance(scale, Tensor):
        scale = _f32(scale.item())     # PyTorch reads a scale tensor as float32
    if isinstance(zero_point, Tensor):
        zero_point = int(zero_point.item())
    return _quantize_tensor(input, scale, zero_point, dtype)


def quantize_per_channel(input, scales, zero_points, axis, dtype):
    """Converts a float tensor to a per-channel quantized tensor: channel ``c`` along
    ``axis`` uses ``scales[c]`` and ``zero_points[c]``."""
    from ..autograd.grad_mode import no_grad
    _check_input("quantize_per_channel", input, dtype)
    if not (isinstance(scales, Tensor) and isinstance(zero_points, Tensor)):
        raise TypeError("quantize_per_channel(): scales and zero_points must be tensors")
    n = input.dim()
    if not 0 <= axis < n:
        raise RuntimeError("Channel axis out of range in per channel affine quantization. "
                           f"Got: {axis}Expected: [0, {n})")
    if scales.numel() != zero_points.numel():
        raise RuntimeError("number of elements in scales and zero_points must match")
    if scales.numel() != input.shape[axis]:
        raise RuntimeError("length of scales must equal to channel, expected "
                           f"{input.shape[axis]} got, {scales.numel()}")
    lo, hi = _RANGE[dtype]
    scales = scales.detach().to(_dtype.float64).reshape(-1).clone()
    zero_points = zero_points.detach().to(_dtype.int64).reshape(-1).clone()
    for z in zero_points.tolist():
        _check_zero_point("quantize_tensor_per_channel_affine", z, dtype)
    shape = [1] * n
    shape[axis] = -1
    with no_grad():
        inv = (1.0 / scales.to(_dtype.float32)).reshape(shape)
        # float32 product, then float32 sum with the zero point: PyTorch's scalar loop
        v = input.detach() * inv + zero_points.to(_dtype.float32).reshape(shape)
        q = v.round().double().clamp(lo, hi).nan_to_num(0.0).to(_INT_OF[dtype])
    return QTensor._wrap(q, dtype, per_channel_affine, scales, zero_points, axis)


def choose_qparams(min_val, max_val, qmin, qmax, reduce_range=False):
    """fbgemm's ``ChooseQuantizationParams``: (scale, zero_point) mapping the range
    [min(min_val, 0), max(max_val, 0)] onto [qmin, qmax] (halved if ``reduce_range``);
    the scale is a double rounded to float32."""
    min_val = _f32(min(float(min_val), 0.0))
    max_val = _f32(max(float(max_val), 0.0))
    if reduce_range:
        qmin, qmax = qmin // 2, qmax // 2
    scale = (max_val - min_val) / (qmax - qmin)
    if _f32(scale) == 0.0 or _f32(scale) > 3.4028234663852886e38 or \
            1.0 / _f32(scale) > 3.4028234663852886e38:
        scale = 0.1
    small = _f32(6.1e-5)
    if scale < small:
        org = scale
        scale = small
        if min_val == 0.0:
            max_val = small * (qmax - qmin)
        elif max_val == 0.0:
            min_val = -small * (qmax - qmin)
        else:
            min_val *= small / org
            max_val *= small / org
    zp_min = qmin - min_val / scale
    zp_max = qmax - max_val / scale
    err_min = abs(qmin) - abs(min_val / scale)
    err_max = abs(qmax) - abs(max_val / scale)
    zp = zp_min if err_min < err_max else zp_max
    if zp < qmin:
        nudged = qmin
    elif zp > qmax:
        nudged = qmax
    else:
        nudged = int(round(zp))       # Python rounds half to even, as nearbyint
    return scale, nudged


def quantize_per_tensor_dynamic(input, dtype, reduce_range):
    """Quantizes ``input`` per tensor with a scale and zero point chosen from its min and
    max (``quint8`` or ``qint8``)."""
    _check_input("quantize_per_tensor_dynamic", input, dtype)
    if dtype not in (qint8, quint8):
        raise RuntimeError(f"dtype {_aten_name(dtype)}not supported")
    lo, hi = _RANGE[dtype]
    if input.numel():
        mn, mx = input.min().item(), input.max().item()
    else:
        mn = mx = 0.0
    scale, zp = choose_qparams(mn, mx, lo, hi, reduce_range)
    return _quantize_tensor(input, scale, zp, dtype)


def dequantize(tensor):
    """Returns the float32 tensor a quantized tensor stands for (a float tensor is
    returned as it is); a list gives a list."""
    if isinstance(tensor, (list, tuple)):
        return [dequantize(t) for t in tensor]
    return tensor.dequantize()


# ---- methods of dense tensors ----------------------------------------------------------------

def _dense_dequantize(self):
    return self


def _dense_only(op):
    def method(self, *args, **kwargs):
        raise _backend_error(op, self)
    method.__name__ = op
    return method


def _join(name, tensors, dim):
    """``cat``/``stack`` of quantized tensors: the result has the first tensor's parameters
    (the others are requantized to them when theirs differ), as in PyTorch."""
    first = tensors[0]
    if first._qscheme is not per_tensor_affine:
        raise _backend_error(name, first)
    ints = []
    for t in tensors:
        if not isinstance(t, QTensor) or t.dtype is not first.dtype or \
                t._qscheme is not per_tensor_affine:
            raise RuntimeError(f"{name}(): expected per-tensor quantized tensors of "
                               f"{first.dtype}, got {t.dtype}")
        if not _params_equal(t, first):
            t = _quantize_tensor(t.dequantize(), first._scale, first._zp, first.dtype)
        ints.append(t._qint)
    import framework
    return first._like(getattr(framework, name)(ints, dim))


def _torch_function(cls, func, types, args=(), kwargs=None):
    """``QTensor.__torch_function__``: ``framework.cat``/``stack`` of quantized tensors
    (``_join``); every other function runs as for a dense tensor, where the quantized
    tensor's guard raises PyTorch's NotImplementedError."""
    kwargs = kwargs or {}
    if func.__name__ in ("cat", "stack") and not getattr(func, "_tf_tensor_method", True):
        tensors = args[0] if args else kwargs.get("tensors")
        if isinstance(tensors, (list, tuple)) and tensors and \
                tensors[0].__class__ is QTensor and kwargs.get("out") is None:
            return _join(func.__name__, tensors, args[1] if len(args) > 1 else
                         kwargs.get("dim", 0))
    with _overrides.DisableTorchFunctionSubclass():
        return func(*args, **kwargs)


# set after the class exists: defined in its body, it would turn dispatch on at import
# (the first quantized tensor made does, in ``QTensor._wrap``)
QTensor.__torch_function__ = classmethod(_torch_function)
_overrides._overrides.clear()


def install(module):
    """Adds the quantize functions to ``framework`` (``framework.cat``/``stack`` take
    quantized tensors through ``QTensor.__torch_function__``) and the quantized-tensor
    methods to ``Tensor`` (on a dense tensor they raise PyTorch's errors)."""
    for name in ("quantize_per_tensor", "quantize_per_channel", "quantize_per_tensor_dynamic",
                 "dequantize"):
        setattr(module, name, globals()[name])
    Tensor.dequantize = _dense_dequantize
    for op in ("int_repr", "q_scale", "q_zero_point", "q_per_channel_scales",
               "q_per_channel_zero_points", "q_per_channel_axis", "qscheme"):
        setattr(Tensor, op, _dense_only(op))


def from_saved(qint, params):
    """A quantized tensor from its loaded integers and PyTorch's saved quantizer
    parameters ``(qscheme, scale, zero_point[, axis])``."""
    dtype = {_dtype.int8: qint8, _dtype.uint8: quint8, _dtype.int32: qint32}.get(qint.dtype)
    if dtype is None or not isinstance(params, tuple) or not params:
        raise RuntimeError(f"_rebuild_qtensor: unsupported quantizer parameters {params!r:.100}")
    if params[0] is per_tensor_affine and len(params) == 3:
        return QTensor._wrap(qint, dtype, per_tensor_affine, float(params[1]), int(params[2]))
    if params[0] is per_channel_affine and len(params) == 4 and isinstance(params[1], Tensor) \
            and isinstance(params[2], Tensor) and params[1].numel() == qint.shape[params[3]]:
        return QTensor._wrap(qint, dtype, per_channel_affine, params[1].to(_dtype.float64),
                             params[2].to(_dtype.int64), int(params[3]))
    raise RuntimeError(f"_rebuild_qtensor: unsupported quantizer parameters {params!r:.100}")
