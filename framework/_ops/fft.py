"""torch.fft: the discrete Fourier transforms (``fft``, ``rfft``, ``hfft``, their inverses,
2-d and n-d forms) and ``fftfreq``/``rfftfreq``.

As in PyTorch, every transform is a composite of three primitives with derivatives in
ops.yaml: ``_fft_c2c`` (complex to complex), ``_fft_r2c`` (real to complex, full or
one-sided) and ``_fft_c2r`` (one-sided complex to real), each over a list of dims and with a
``normalization`` code (0: none, 1: by sqrt(n), 2: by n, n the signal size) that does not
depend on the direction. The public functions promote dtypes, zero-pad or trim the input
to ``n``/``s`` and turn ``norm`` into that code.

The primitives run NumPy's pocketfft (``np.fft``, which computes float32/complex64 natively)
on the tensor's NumPy view on the CPU. On ``cuda`` they are a host round trip for now (a
copy to the host, ``np.fft``, a copy back): a stopgap until a Triton Stockham/Bluestein
kernel exists.

No kernel knows a complex dtype: conjugation and real scale factors are complex ops
(complex_ops.py), padding and trimming of complex tensors go through their real views
(view_as_real/view_as_complex, both recorded), so gradients, double backward included,
flow through recorded ops."""
import builtins

import numpy as np

import framework as _fw
from .. import _dtype
from .._device import CPU
from ..autograd import grad_mode
from . import alloc
from . import args as _args
from .pointwise import check_out, require_tensor, type_name

# NumPy's norm string per normalization code, for a forward and for an inverse transform
_NP_NORM = {True: ("backward", "ortho", "forward"), False: ("forward", "ortho", "backward")}


# ---- the primitives ---------------------------------------------------------------------

def _prim_dims(x, dim, normalization):
    """The wrapped dims of a primitive's call (checking its normalization code)."""
    if normalization not in (0, 1, 2):
        raise RuntimeError(f"Invalid normalization mode: {normalization}")
    dims = [_wrap(x, d) for d in _args.int_list("_fft", "dim", (dim,))]
    if len(set(dims)) != len(dims):
        raise RuntimeError("FFT dims must be unique")
    for d in dims:
        if x._shape[d] == 0:
            raise RuntimeError("Invalid number of data points (0) specified")
    return dims


def _run(x, np_fn, shape, dtype, **kwargs):
    """``np_fn`` on x's host data, written into a new tensor of ``shape`` and ``dtype`` on
    x's device (on cuda: through the host, see the module docstring)."""
    res = alloc.empty(tuple(shape), dtype, CPU)
    if res.numel():
        np_fn(x._host_array(), out=res.numpy(), **kwargs)
    device = x._storage.device
    return res if device.type == "cpu" else res.to(device)


def fft_c2c(self, dim, normalization, forward):
    """The complex-to-complex transform of ``self`` over ``dim`` (forward or inverse),
    scaled by ``normalization`` (0: none, 1: 1/sqrt(n), 2: 1/n)."""
    if not self.dtype.is_complex:
        raise RuntimeError(f"Only supports complex dtypes, but found: {type_name(self.dtype)}")
    dims = _prim_dims(self, dim, normalization)
    if not dims:
        return self.clone()
    fn = np.fft.fftn if forward else np.fft.ifftn
    return _run(self, fn, self._shape, self.dtype, axes=dims,
                norm=_NP_NORM[bool(forward)][normalization])


def fft_r2c(self, dim, normalization, onesided):
    """The forward transform of real ``self`` over ``dim``: the full spectrum, or its first
    n // 2 + 1 entries along ``dim[-1]`` when ``onesided``."""
    if self.dtype.is_complex:
        raise RuntimeError(f"Only supports floating-point dtypes, but found: "
                           f"{type_name(self.dtype)}")
    _supported(self.dtype)
    dims = _prim_dims(self, dim, normalization)
    if not dims:
        return _to_complex(self)
    shape = list(self._shape)
    if onesided:
        shape[dims[-1]] = shape[dims[-1]] // 2 + 1
    return _run(self, np.fft.rfftn if onesided else np.fft.fftn, shape,
                self.dtype.to_complex(), axes=dims, norm=_NP_NORM[True][normalization])


def fft_c2r(self, dim, normalization, last_dim_size):
    """The inverse of a one-sided spectrum ``self`` over ``dim``: a real signal of
    ``last_dim_size`` along ``dim[-1]`` (from the first last_dim_size // 2 + 1 entries)."""
    if not self.dtype.is_complex:
        raise RuntimeError(f"Only supports complex dtypes, but found: {type_name(self.dtype)}")
    dims = _prim_dims(self, dim, normalization)
    last_dim_size = _args.to_int("_fft_c2r", "last_dim_size", last_dim_size)
    if not dims:
        raise RuntimeError("_fft_c2r must transform at least one axis")
    _points(last_dim_size)
    shape = list(self._shape)
    shape[dims[-1]] = last_dim_size
    return _run(self, np.fft.irfftn, shape, self.dtype.to_real(), axes=dims,
                s=[shape[d] for d in dims], norm=_NP_NORM[False][normalization])


# ---- their derivatives (PyTorch's FunctionsManual: fft_r2c_backward, fft_c2r_backward) ----

def r2c_backward(grad, dim, normalization, onesided, input_shape):
    """Gradient of _fft_r2c: the inverse c2c transform of the (zero-completed, when
    one-sided) spectrum gradient, real part."""
    if onesided:
        d = _wrap(grad, _args.int_list("_fft_r2c", "dim", (dim,))[-1])
        grad = _resize(grad, (d,), (input_shape[d],))
    return _fw.real(_fw._fft_c2c(grad, dim, normalization, False))


def c2r_backward(grad, dim, normalization):
    """Gradient of _fft_c2r: the one-sided r2c transform of the gradient, with the entries
    whose conjugate mirror the one-sided input leaves out counted twice."""
    g = _fw._fft_r2c(grad, dim, normalization, True)
    d = _wrap(grad, _args.int_list("_fft_c2r", "dim", (dim,))[-1])
    double = grad._shape[d] - g._shape[d]
    if double > 0:
        w = np.ones(g._shape[d])
        w[1:1 + double] = 2.0
        g = _scale(g, _fw.tensor(w, dtype=grad.dtype, device=grad.device), d)
    return g


# ---- complex helpers through real views -------------------------------------------------

def _as_complex(r):
    """view_as_complex of a real (..., 2) result, copied first if its layout forbids it."""
    if r._stride[-1] != 1 or r._offset % 2 or any(s % 2 for s in r._stride[:-1]):
        r = r.clone(memory_format=_fw.contiguous_format)
    return _fw.view_as_complex(r)


def _scale(z, w, d):
    """Complex ``z`` times the real 1-d ``w`` laid along dim ``d``."""
    shape = [1] * z.dim()
    shape[d] = -1
    return z * w.reshape(shape)


def _to_complex(x):
    """Real ``x`` as a complex tensor with zero imaginary parts (gradient: the real part of
    the incoming gradient, without the warning a complex-to-real cast gives)."""
    return _fw.view_as_complex(_fw.stack([x, _fw.zeros_like(x)], -1))


def _pad(x, d, before, after):
    """``x`` zero-padded along dim ``d``; complex ``x`` through its real view."""
    r = _fw.view_as_real(x) if x.dtype.is_complex else x
    pads = [0] * (2 * (r.dim() - d))
    pads[-2:] = [before, after]
    r = _fw.nn.functional.pad(r, pads)
    return _as_complex(r) if x.dtype.is_complex else r


def _resize(x, dims, sizes):
    """``x`` with each of ``dims`` zero-padded or trimmed (keeping the start) to ``sizes``
    (PyTorch's resize_fft_input); complex ``x`` through its real view."""
    r = _fw.view_as_real(x) if x.dtype.is_complex else x
    pads, grows = [0] * (2 * r.dim()), False
    for d, n in zip(dims, sizes):
        have = r._shape[d]
        if have != n:
            pads[2 * (r.dim() - 1 - d) + 1] = n - have
            grows = grows or n > have
    if not any(pads):
        return x
    if grows:       # some dim grows: one padded copy (negative pads crop the others)
        r = _fw.nn.functional.pad(r, pads)
    else:           # only trims: a view
        for d, n in zip(dims, sizes):
            r = r.narrow(d, 0, n) if r._shape[d] != n else r
    return _as_complex(r) if x.dtype.is_complex else r


# ---- argument handling ------------------------------------------------------------------

def _wrap(x, dim):
    """``dim`` wrapped for ``x``, without PyTorch's wrap of scalars (a 0-d tensor has no
    dim to transform)."""
    dim = _args.to_int("fft", "dim", dim)
    n = x.dim()
    if n == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim % n


def _norm(norm, forward):
    """The normalization code of a ``norm`` string for a forward or inverse transform."""
    if norm is None or norm == "backward":
        return 0 if forward else 2
    if norm == "forward":
        return 2 if forward else 0
    if norm == "ortho":
        return 1
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _supported(dt):
    if dt is not _dtype.float32 and dt is not _dtype.float64:
        raise RuntimeError(f"Unsupported dtype {type_name(dt)}")


def _promote(x, name, require_complex=False):
    """``x`` in a dtype the transforms take: integers and bool in the default float dtype,
    float32/float64 as they are (complex when ``require_complex``), complex unchanged."""
    require_tensor(name, x, "input", 1)
    dt = x.dtype
    if dt.is_complex:
        return x
    if not dt.is_floating_point:
        dt = _fw.get_default_dtype()
    _supported(dt)
    x = x.to(dt)
    return _to_complex(x) if require_complex else x


def _points(n):
    """``n``, a signal size, checked as PyTorch does."""
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return n


def _shape_and_dims(x, s, dim):
    """PyTorch's canonical (signal shape, dims) of an n-d transform: dims default to the
    last len(s) dims, or to all of them; -1 in ``s`` means the input's size."""
    nd = x.dim()
    if dim is not None:
        dims = [_wrap(x, d) for d in _args.int_list("fftn", "dim", (dim,))]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        s = _args.int_list("fftn", "s", (s,))
        if dim is not None and len(dims) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > nd:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has "
                               f"{nd} dimensions.")
        if dim is None:
            dims = list(range(nd - len(s), nd))
        shape = [x._shape[d] if n == -1 else n for n, d in zip(s, dims)]
    else:
        if dim is None:
            dims = list(range(nd))
        shape = [x._shape[d] for d in dims]
    for n in shape:
        _points(n)
    return shape, dims


def _c2r_shape_and_dims(name, x, s, dim):
    """(shape, dims, last_dim_size) of an n-d complex-to-real transform: the input is
    resized to last_dim_size // 2 + 1 along the last dim."""
    shape, dims = _shape_and_dims(x, s, dim)
    if not shape:
        raise RuntimeError(f"{name} must transform at least one axis")
    if s is None or _args.int_list("fftn", "s", (s,))[-1] == -1:
        last = 2 * (x._shape[dims[-1]] - 1)
    else:
        last = shape[-1]
    shape[-1] = _points(last) // 2 + 1
    return shape, dims, last


def _check_out(name, input, out, complex_out):
    """PyTorch's checks of an ``out=`` tensor: its kind of dtype, and no autograd."""
    if out is None:
        return
    require_tensor(f"fft_{name}", input, "input", 1)
    require_tensor(f"fft_{name}", out, "out")
    if complex_out and not out.dtype.is_complex:
        raise RuntimeError(f"{name} expects a complex output tensor, but got "
                           f"{type_name(out.dtype)}")
    if not complex_out and not out.dtype.is_floating_point:
        raise RuntimeError(f"{name} expects a floating point output tensor, but got "
                           f"{type_name(out.dtype)}")
    if grad_mode._mode.enabled and input._requires_grad:
        raise RuntimeError(f"fft_{name}(): functions with out=... arguments don't support "
                           f"automatic differentiation, but one of the arguments requires "
                           f"grad.")


def _finish(res, out):
    """``res``, or ``out`` holding it (resized like PyTorch's out= tensors)."""
    if out is None:
        return res
    target = check_out("fft", out, res._shape, out.dtype, False, (res,))
    alloc.backend(target._storage.device).copy.copy(target, res, res._stride)
    return target


# ---- one-dimensional transforms (PyTorch's fft_c2c, fft_r2c, fft_c2r) --------------------

def _c2c(name, x, n, dim, norm, forward):
    d = _wrap(x, dim)
    size = _points(x._shape[d] if n is None else _args.to_int(f"fft_{name}", "n", n))
    x = _resize(x, (d,), (size,))
    return _fw._fft_c2c(x, [d], _norm(norm, forward), forward)


def _r2c(name, x, n, dim, norm, forward, onesided):
    require_tensor(name, x, "input", 1)
    if x.dtype.is_complex:
        raise RuntimeError(f"{name} expects a real input tensor, but got "
                           f"{type_name(x.dtype)}")
    x = _promote(x, name)
    d = _wrap(x, dim)
    size = _points(x._shape[d] if n is None else _args.to_int(f"fft_{name}", "n", n))
    x = _resize(x, (d,), (size,))
    r = _fw._fft_r2c(x, [d], _norm(norm, forward), onesided)
    return r if forward else _fw.conj_physical(r)


def _c2r(name, x, n, dim, norm, forward):
    x = _promote(x, name, require_complex=True)
    d = _wrap(x, dim)
    size = 2 * (x._shape[d] - 1) if n is None else _args.to_int(f"fft_{name}", "n", n)
    _points(size)
    x = _resize(x, (d,), (size // 2 + 1,))
    code = _norm(norm, forward)
    if forward:
        x = _fw.conj_physical(x)
    return _fw._fft_c2r(x, [d], code, size)


def fft(input, n=None, dim=-1, norm=None, *, out=None):
    """The one-dimensional discrete Fourier transform of ``input`` along ``dim``, zero-padded
    or trimmed to ``n`` points; ``norm``: "backward" (default, no scaling), "ortho"
    (1/sqrt(n)) or "forward" (1/n)."""
    require_tensor("fft_fft", input, "input", 1)
    _check_out("fft", input, out, True)
    if input.dtype.is_complex:
        return _finish(_c2c("fft", input, n, dim, norm, True), out)
    return _finish(_r2c("fft", input, n, dim, norm, True, False), out)


def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    """The one-dimensional inverse discrete Fourier transform of ``input`` ("backward"
    normalization scales by 1/n)."""
    require_tensor("fft_ifft", input, "input", 1)
    _check_out("ifft", input, out, True)
    if input.dtype.is_complex:
        return _finish(_c2c("ifft", input, n, dim, norm, False), out)
    return _finish(_r2c("ifft", input, n, dim, norm, False, False), out)


def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The Fourier transform of real ``input``: the n // 2 + 1 non-negative frequencies."""
    _check_out("rfft", input, out, True)
    return _finish(_r2c("rfft", input, n, dim, norm, True, True), out)


def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of :func:`rfft`: a real signal of ``n`` points (default
    2 * (input.size(dim) - 1)) from its one-sided spectrum."""
    _check_out("irfft", input, out, False)
    return _finish(_c2r("irfft", input, n, dim, norm, False), out)


def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The Fourier transform of a Hermitian-symmetric signal given by its first half: a real
    spectrum of ``n`` points (default 2 * (input.size(dim) - 1))."""
    _check_out("hfft", input, out, False)
    return _finish(_c2r("hfft", input, n, dim, norm, True), out)


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of :func:`hfft`: the first n // 2 + 1 entries of the inverse transform of
    real ``input``."""
    _check_out("ihfft", input, out, True)
    return _finish(_r2c("ihfft", input, n, dim, norm, False, True), out)


# ---- n-dimensional transforms -----------------------------------------------------------

def _fftn(name, input, s, dim, norm, forward, out):
    require_tensor(f"fft_{name}", input, "input", 1)
    _check_out(name, input, out, True)
    shape, dims = _shape_and_dims(input, s, dim)
    x = _resize(_promote(input, name), dims, shape)
    if not dims:
        return _finish(x.clone() if x.dtype.is_complex else _to_complex(x), out)
    code = _norm(norm, forward)
    if x.dtype.is_complex:
        return _finish(_fw._fft_c2c(x, dims, code, forward), out)
    r = _fw._fft_r2c(x, dims, code, False)      # a real input's full spectrum
    return _finish(r if forward else _fw.conj_physical(r), out)


def fftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-dimensional discrete Fourier transform of ``input`` over ``dim`` (default: the
    last len(s) dims, or all), each zero-padded or trimmed to ``s``."""
    return _fftn("fftn", input, s, dim, norm, True, out)


def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-dimensional inverse discrete Fourier transform of ``input``."""
    return _fftn("ifftn", input, s, dim, norm, False, out)


def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-dimensional Fourier transform of real ``input``, one-sided along the last of
    ``dim``."""
    require_tensor("fft_rfftn", input, "input", 1)
    if input.dtype.is_complex:
        raise RuntimeError(f"rfftn expects a real-valued input tensor, but got "
                           f"{type_name(input.dtype)}")
    _check_out("rfftn", input, out, True)
    shape, dims = _shape_and_dims(input, s, dim)
    if not shape:
        raise RuntimeError("rfftn must transform at least one axis")
    x = _resize(_promote(input, "rfftn"), dims, shape)
    return _finish(_fw._fft_r2c(x, dims, _norm(norm, True), True), out)


def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The inverse of :func:`rfftn`: a real signal whose size along the last of ``dim`` is
    s[-1] (default 2 * (input.size(dim[-1]) - 1))."""
    require_tensor("fft_irfftn", input, "input", 1)
    _check_out("irfftn", input, out, False)
    shape, dims, last = _c2r_shape_and_dims("irfftn", input, s, dim)
    x = _resize(_promote(input, "irfftn", True), dims, shape)
    return _finish(_fw._fft_c2r(x, dims, _norm(norm, False), last), out)


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-dimensional transform of a Hermitian-symmetric signal given by its first half
    along the last of ``dim``: a real result."""
    require_tensor("fft_hfftn", input, "input", 1)
    _check_out("hfftn", input, out, False)
    shape, dims, last = _c2r_shape_and_dims("hfftn", input, s, dim)
    x = _resize(_promote(input, "hfftn", True), dims, shape)
    code = _norm(norm, True)
    if len(dims) > 1:
        x = _fw._fft_c2c(x, dims[:-1], code, True)
    return _finish(_fw._fft_c2r(_fw.conj_physical(x), dims[-1:], code, last), out)


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The inverse of :func:`hfftn` for real ``input``: one-sided along the last of
    ``dim``."""
    require_tensor("fft_ihfftn", input, "input", 1)
    if input.dtype.is_complex:
        raise RuntimeError(f"Only supports floating-point dtypes, but found: "
                           f"{type_name(input.dtype)}")
    _check_out("ihfftn", input, out, True)
    shape, dims = _shape_and_dims(input, s, dim)
    if not shape:
        raise RuntimeError("ihfftn must transform at least one axis")
    x = _resize(_promote(input, "ihfftn"), dims, shape)
    code = _norm(norm, False)
    r = _fw.conj_physical(_fw._fft_r2c(x, dims[-1:], code, True))
    if len(dims) > 1:
        r = _fw._fft_c2c(r, dims[:-1], code, False)
    return _finish(r, out)


def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The two-dimensional discrete Fourier transform (:func:`fftn` over ``dim``)."""
    return fftn(input, s, dim, norm, out=out)


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The two-dimensional inverse discrete Fourier transform."""
    return ifftn(input, s, dim, norm, out=out)


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The two-dimensional Fourier transform of real ``input`` (:func:`rfftn`)."""
    return rfftn(input, s, dim, norm, out=out)


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The inverse of :func:`rfft2`."""
    return irfftn(input, s, dim, norm, out=out)


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The two-dimensional :func:`hfftn`."""
    return hfftn(input, s, dim, norm, out=out)


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The two-dimensional :func:`ihfftn`."""
    return ihfftn(input, s, dim, norm, out=out)


# ---- sample frequencies -----------------------------------------------------------------

def _freqs(name, k, n, d, dtype, layout, device, requires_grad, out):
    """k / (n * d) in ``dtype`` (default: out's, else the default float dtype), computed as
    PyTorch does: k in the dtype times the scale rounded to it."""
    if layout is not None and layout != _fw.strided:
        raise RuntimeError(f"{name}: only strided tensors are supported, got {layout}")
    dt = alloc.resolve_dtype(dtype if dtype is not None or out is None else out.dtype)
    if dt.is_complex:
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{type_name(dt)}'")
    if not dt.is_floating_point:
        raise RuntimeError(f"{name} requires a floating point or complex dtype")
    work = np.float64 if dt is _dtype.float64 else np.float32
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.float64(1.0) / np.float64(n * builtins.float(d))
        arr = k.astype(work) * work(scale)
    from .creation import _finish as finish, _from_array
    return finish(_from_array(arr, dt, alloc.resolve_device(device)), requires_grad, out)


def fftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False,
            out=None):
    """The sample frequencies of a signal of ``n`` points with spacing ``d``:
    [0, 1, ..., ceil(n/2) - 1, -floor(n/2), ..., -1] / (d * n)."""
    n = _args.to_int("fft_fftfreq", "n", n)
    _args.sizes("fftfreq", (n,))
    k = np.arange(n, dtype=np.int64)
    k[(n + 1) // 2:] -= n
    return _freqs("fftfreq", k, n, d, dtype, layout, device, requires_grad, out)


def rfftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False,
             out=None):
    """The sample frequencies of :func:`rfft` of ``n`` points with spacing ``d``:
    [0, 1, ..., floor(n/2)] / (d * n)."""
    n = _args.to_int("fft_rfftfreq", "n", n)
    size = int(n / 2) + 1 if abs(n) < 2 ** 52 else n // 2 + 1   # C++'s n / 2 + 1
    _args.sizes("rfftfreq", (size,))
    return _freqs("rfftfreq", np.arange(size, dtype=np.int64), n, d, dtype, layout, device,
                  requires_grad, out)
