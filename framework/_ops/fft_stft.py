"""``stft`` and ``istft``: the short-time Fourier transform and its inverse, as PyTorch's.
Frames are cut by ``unfold``, transformed by framework/_ops/fft.py's primitives and
overlap-added back by ``fold``: every step is a recorded op, so gradients flow to the
signal and to the window.

Complex signals are framed, windowed by real windows, trimmed and padded through their
real views, so no complex arithmetic is needed; only a complex window on a complex signal
(stft) or a complex window in istft uses complex ``*``, ``/`` and ``pow``."""
import warnings

import framework as _fw
from . import fft as _fft
from .pointwise import require_tensor


def _describe(t):
    return "None" if t is None else f"{t.type()}{{{list(t.shape)}}}"


def _opt(v):
    return "None" if v is None else str(int(v))


def _check_window_device(name, input, window):
    if window is not None and window.device != input.device:
        raise RuntimeError(f"{name} input and window must be on the same device but got self "
                           f"on {input.device} and window on {window.device}")


def _times_window(frames, window, complex_frames):
    """``frames`` (real; or when ``complex_frames``, the real (..., 2) view of complex
    frames) times a 1-d ``window`` (or None) along the last frame dim."""
    if window is None:
        return _fft._as_complex(frames) if complex_frames else frames
    if not window.dtype.is_complex:
        return _fft._as_complex(frames * window.unsqueeze(-1)) if complex_frames else \
            frames * window
    if not complex_frames:      # real frames, complex window: through the window's real view
        return _fft._as_complex(frames.unsqueeze(-1) * _fw.view_as_real(window))
    return _fw.view_as_complex(frames) * window


def _centered_window(window, win, n_fft, dtype, device):
    """``window`` (ones when None) of ``win`` samples zero-padded on both sides to
    ``n_fft``; None for the rectangular window of n_fft samples."""
    if win == n_fft:
        return window
    if window is None:
        window = _fw.ones(win, dtype=dtype, device=device)
    left = (n_fft - win) // 2
    return _fft._pad(window, 0, left, n_fft - win - left)


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None,
         align_to_window=None):
    """The short-time Fourier transform of a 1-d (L) or 2-d (B, L) signal: the Fourier
    transforms of frames of ``n_fft`` samples every ``hop_length`` (default n_fft // 4),
    each multiplied by ``window`` (``win_length`` samples, zero-padded to n_fft in the
    middle; default: ones). ``center`` pads the signal by n_fft // 2 on both sides
    (``pad_mode``) so that frame t is centred at t * hop_length. Returns
    (B?, n_fft // 2 + 1 or n_fft, n_frames): complex when ``return_complex``, which a real
    signal and window must give explicitly."""
    require_tensor("stft", input, "input", 1)
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied,which "
                      "is known to cause spectral leakage. Other windows such as "
                      "torch.hann_window or torch.hamming_window are recommended to reduce "
                      "spectral leakage.To suppress this warning and use a rectangular "
                      "window, explicitly set `window=torch.ones(n_fft, device=<device>)`.",
                      UserWarning, stacklevel=2)
    _check_window_device("stft", input, window)
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    complex_fft = input.dtype.is_complex or (window is not None and window.dtype.is_complex)
    if return_complex is None and not complex_fft:
        raise RuntimeError("stft requires the return_complex parameter be given for real "
                           "inputs, and will further require that return_complex=True in a "
                           "future PyTorch release.")
    if return_complex is None:
        return_complex = True
    if not return_complex:
        warnings.warn("stft with return_complex=False is deprecated. In a future pytorch "
                      "release, stft will return complex tensors for all inputs, and "
                      "return_complex=False will raise an error.\nNote: you can still call "
                      "torch.view_as_real on the complex output to recover the old return "
                      "format.", UserWarning, stacklevel=2)

    def fail(what, x):
        raise RuntimeError(
            f"stft({x.type()}{list(x.shape)}, n_fft={n_fft}, hop_length={hop}, "
            f"win_length={win}, window={_describe(window)}, normalized={int(normalized)}, "
            f"onesided={_opt(onesided)}, return_complex={int(return_complex)}, "
            f"align_to_window={_opt(align_to_window)}) : {what}")

    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        fail("expected a tensor of floating point or complex values", input)
    if input.dim() not in (1, 2):
        fail("expected a 1D or 2D tensor", input)
    x = input.unsqueeze(0) if input.dim() == 1 else input
    if center:
        p = n_fft // 2
        if x.dtype.is_complex:      # padded as the (B, 2, L) real view
            r = _fw.nn.functional.pad(_fw.view_as_real(x).transpose(1, 2), [p, p], pad_mode)
            x = _fft._as_complex(r.transpose(1, 2))
        else:
            x = _fw.nn.functional.pad(x.unsqueeze(0), [p, p], pad_mode).squeeze(0)
    length = x.shape[1]
    if n_fft <= 0 or n_fft > length:
        fail(f"expected 0 < n_fft < {length}, but got n_fft={n_fft}", x)
    if hop <= 0:
        fail(f"expected hop_length > 0, but got hop_length={hop}", x)
    if win <= 0 or win > n_fft:
        fail(f"expected 0 < win_length <= n_fft, but got win_length={win}", x)
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        fail(f"expected a 1D window tensor of size equal to win_length={win}, but got window "
             f"with size {list(window.shape)}", x)
    onesided = not complex_fft if onesided is None else onesided
    if complex_fft and onesided:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    # align_to_window: the frames are the win_length samples under the window, which then
    # sit in the middle of n_fft; otherwise frames of n_fft samples times the centred window
    aligned = bool(align_to_window)
    size, w = (win, window) if aligned else (n_fft, _centered_window(
        window, win, n_fft, x.dtype.to_real(), x.device))
    if x.dtype.is_complex:      # (B, n_frames, size, 2)
        frames = _fw.view_as_real(x).unfold(1, size, hop).transpose(-1, -2)
    else:                       # (B, n_frames, size)
        frames = x.unfold(1, size, hop)
    frames = _times_window(frames, w, x.dtype.is_complex)
    if aligned and win < n_fft:
        left = (n_fft - win) // 2
        frames = _fft._pad(frames, 2, left, n_fft - win - left)
    code = 1 if normalized else 0       # by sqrt(n_fft), or none
    if frames.dtype.is_complex:
        out = _fw._fft_c2c(frames, [2], code, True)
    else:
        out = _fw._fft_r2c(frames, [2], code, onesided)
    out = out.transpose(1, 2)
    if input.dim() == 1:
        out = out.squeeze(0)
    return out if return_complex else _fw.view_as_real(out)


def _overlap_add(frames, length, hop):
    """Sum of the (C, n_frames, n_fft) ``frames`` placed every ``hop`` samples: (C, length),
    or for frames given as a real (C, n_frames, n_fft, 2) view, (C, length, 2)."""
    pairs = frames.dim() == 4
    c, f, n = frames.shape[:3]
    cols = frames.permute(0, 3, 2, 1).reshape(c, 2 * n, f) if pairs else frames.transpose(1, 2)
    y = _fw.nn.functional.fold(cols, (1, length), (1, n), stride=(1, hop))
    return y.reshape(c, 2, length).transpose(1, 2) if pairs else y.reshape(c, length)


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False):
    """The inverse short-time Fourier transform: the least-squares signal whose
    :func:`stft` (with the same arguments) is ``input``, (B?, n_fft // 2 + 1 or n_fft,
    n_frames) complex. Frames are inverse-transformed, windowed, overlap-added and divided
    by the overlap-added squared window (which must not vanish: the NOLA condition)."""
    require_tensor("istft", input, "input", 1)
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied.Please "
                      "provide the same window used by stft to make the inversion lossless.To "
                      "suppress this warning and use a rectangular window, explicitly set "
                      "`window=torch.ones(n_fft, device=<device>)`.", UserWarning, stacklevel=2)
    _check_window_device("istft", input, window)
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if not input.dtype.is_complex:
        raise RuntimeError("istft requires a complex-valued input tensor matching the output "
                           "from stft with return_complex=True.")
    nd = input.dim() + 1        # of the real view, as PyTorch counts
    if nd < 3:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, "
                         f"{nd - 1}], but got -3)")
    fft_size, n_frames = input.shape[-2], input.shape[-1]
    expected = n_fft + hop * (n_frames - 1)

    def fail(what):
        raise RuntimeError(
            f"istft({input.type()}{list(input.shape)}, n_fft={n_fft}, hop_length={hop}, "
            f"win_length={win}, window={_describe(window)}, center={int(center)}, "
            f"normalized={int(normalized)}, onesided={_opt(onesided)}, "
            f"length={'None' if length is None else length}, "
            f"return_complex={int(return_complex)}) {what}")

    if input.numel() == 0:
        fail(": input tensor cannot be empty.")
    if nd not in (3, 4):
        fail(f": expected a tensor with 3 or 4 dimensions, but got {nd}")
    onesided = fft_size != n_fft if onesided is None else onesided
    if onesided and n_fft // 2 + 1 != fft_size:
        fail(f": expected the frequency dimension (3rd to the last) of the input tensor to "
             f"match n_fft / 2 + 1 when onesided=True, but got {fft_size}")
    if not onesided and n_fft != fft_size:
        fail(f": expected the frequency dimension (3rd to the last) of the input tensor to "
             f"match n_fft when onesided=False, but got {fft_size}")
    if not 0 < hop <= win:
        fail(": expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        fail(": expected 0 < win_length <= n_fft")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        fail(": Invalid window shape. window has to be 1D and length of `win_length`")
    real = input.dtype.to_real()
    w = _centered_window(window, win, n_fft, real, input.device)
    if w is None:
        w = _fw.ones(n_fft, dtype=real, device=input.device)
    z = (input.unsqueeze(0) if nd == 3 else input).transpose(1, 2)  # (C, n_frames, fft_size)
    code = 1 if normalized else 2       # by sqrt(n_fft), or by n_fft
    if return_complex:
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        y = _fw._fft_c2c(z, [2], code, False)
    else:
        if w.dtype.is_complex:
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not onesided:
            z = _fft._resize(z, (2,), (n_fft // 2 + 1,))
        y = _fw._fft_c2r(z, [2], code, n_fft)
    # windowed frames and squared window, complex ones as their (..., 2) real views
    pairs = y.dtype.is_complex
    if w.dtype.is_complex:
        y, ww = _fw.view_as_real(y * w), _fw.view_as_real(w * w).expand(1, n_frames, n_fft, 2)
    else:
        y = _fw.view_as_real(y) * w.unsqueeze(-1) if pairs else y * w
        ww = (w * w).expand(1, n_frames, n_fft)
    y, envelope = _overlap_add(y, expected, hop), _overlap_add(ww, expected, hop)
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    else:
        end = expected - n_fft // 2 if center else expected
    keep = max(min(end, expected) - start, 0)
    y, envelope = y.narrow(1, start, keep), envelope.narrow(1, start, keep)
    if w.dtype.is_complex:
        envelope = _fft._as_complex(envelope)
    if keep and bool((envelope.abs().min() < 1e-11).item()):
        fail("window overlap add min: 1")
    if w.dtype.is_complex:
        y, pairs = _fft._as_complex(y) / envelope, False
    else:
        y = y / (envelope.unsqueeze(-1) if pairs else envelope)
    if end > expected:
        warnings.warn("The length of signal is shorter than the length parameter. Result is "
                      "being padded with zeros in the tail. Please check your center and "
                      "hop_length settings.", UserWarning, stacklevel=2)
        y = _fft._pad(y, 1, 0, end - expected)
    if nd == 3:
        y = y.squeeze(0)
    return _fft._as_complex(y) if pairs else y
