"""``gradcheck`` / ``gradgradcheck``: compare analytical gradients with central finite
differences (in float64).

Complex tensors are checked through their real views (view_as_real), as PyTorch's
gradcheck checks them: a complex input's real and imaginary parts are perturbed apart, a
complex output counts as its two real parts, so the check covers the conjugate Wirtinger
gradients of the complex ops."""
from .._tensor import Tensor


def _inputs(inputs):
    return (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)


def _flat_outputs(out):
    from .._ops.dispatcher import function
    return [function("view_as_real")(o) if o.dtype.is_complex else o
            for o in ((out,) if isinstance(out, Tensor) else out)
            if isinstance(o, Tensor) and o.dtype.category >= 2]


def _real_inputs(func, inputs):
    """(func, inputs) with each complex input replaced by a real leaf holding its real
    view, which ``func`` sees again as complex (view_as_complex)."""
    cx = [isinstance(x, Tensor) and x.dtype.is_complex for x in inputs]
    if not any(cx):
        return func, inputs
    from .._ops.dispatcher import function
    from .grad_mode import no_grad
    with no_grad():
        ins = tuple(function("view_as_real")(x.detach()).clone().requires_grad_(
            x._requires_grad) if c else x for x, c in zip(inputs, cx))

    def real_func(*args):
        return func(*(function("view_as_complex")(a) if c else a for a, c in zip(args, cx)))
    return real_func, ins


def _numerical(fn, inputs, i, eps):
    """d outputs / d inputs[i] as a (numel(in), total numel(out)) float64 array."""
    import numpy as np
    from .grad_mode import no_grad
    x = inputs[i]
    n = x.numel()
    cols = []
    with no_grad():
        flat = x.detach().reshape(-1)
        base = flat.clone()

    def at(j, v):
        with no_grad():     # the function itself runs with grad mode as the caller's
            flat[j] = v
        return [o.detach().double().reshape(-1).numpy(force=True).copy()
                for o in _flat_outputs(fn(*inputs))]

    for j in range(n):
        orig = float(base[j])
        plus = at(j, orig + eps)
        minus = at(j, orig - eps)
        with no_grad():
            flat[j] = orig
        cols.append(np.concatenate([(p - m) / (2 * eps) for p, m in zip(plus, minus)])
                    if plus else np.zeros(0))
    return np.array(cols).reshape(n, -1)


def _analytical(fn, inputs, i, outputs):
    import numpy as np
    from . import grad as _grad
    from .._ops import creation
    from .._ops.memory_format import contiguous_format
    x = inputs[i]
    rows = []
    total = sum(o.numel() for o in outputs)
    for k in range(total):
        gos, off = [], 0
        for o in outputs:
            g = creation.zeros_like(o, memory_format=contiguous_format)
            if off <= k < off + o.numel():
                g.reshape(-1)[k - off] = 1.0
            off += o.numel()
            gos.append(g)
        diff = [(o, g) for o, g in zip(outputs, gos) if o._requires_grad]
        if not diff:
            rows.append(np.zeros(x.numel()))
            continue
        (gx,) = _grad([o for o, _ in diff], [x], [g for _, g in diff], retain_graph=True,
                      allow_unused=True, materialize_grads=True)
        rows.append(gx.detach().double().reshape(-1).numpy(force=True).copy())
    return np.array(rows).T.reshape(x.numel(), total)


def _forward_analytical(fn, inputs, i, outputs):
    """d outputs / d inputs[i] by forward-mode AD (one dual per input element), laid out as
    ``_analytical``'s."""
    import numpy as np
    from . import forward_ad
    from .._ops import creation
    from .._ops.memory_format import contiguous_format
    x = inputs[i]
    total = sum(o.numel() for o in outputs)
    rows = []
    for j in range(x.numel()):
        t = creation.zeros_like(x, memory_format=contiguous_format)
        t.reshape(-1)[j] = 1.0
        with forward_ad.dual_level():
            args = list(inputs)
            args[i] = forward_ad.make_dual(x.detach(), t)
            outs = _flat_outputs(fn(*args))
            tangents = [forward_ad.unpack_dual(o).tangent for o in outs]
        rows.append(np.concatenate([
            np.zeros(o.numel()) if tg is None else
            tg.detach().double().reshape(-1).numpy(force=True).copy()
            for o, tg in zip(outs, tangents)]) if outs else np.zeros(0))
    return np.array(rows).reshape(x.numel(), total)


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False,
              check_forward_ad=False, check_backward_ad=True, fast_mode=False, masked=None):
    """Checks the gradients of ``func`` at ``inputs`` against finite differences; returns
    True, or raises (``GradcheckError``) naming the input and the largest mismatch.
    ``check_backward_ad``/``check_forward_ad``: which analytical Jacobians are checked
    (reverse mode, forward mode through ``autograd.forward_ad``)."""
    import numpy as np
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad "
                             "to be True")
    func, inputs = _real_inputs(func, _inputs(inputs))
    outputs = _flat_outputs(func(*inputs))
    diff = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x._requires_grad]
    # every analytical Jacobian first: the finite differences modify the inputs in place
    analytical = {i: _analytical(func, inputs, i, outputs)
                  for i in (diff if check_backward_ad else ())}
    forward = {i: _forward_analytical(func, inputs, i, outputs)
               for i in (diff if check_forward_ad else ())}
    for i in diff:
        x = inputs[i]
        if x.dtype.name != "float64":
            import warnings
            warnings.warn(f"Input #{i} requires gradient and is not a double precision "
                          "floating point. This check will likely fail if all the inputs are "
                          "not of double precision floating point.", stacklevel=2)
        num = _numerical(func, inputs, i, eps)
        for mode, ana in (("", analytical.get(i)), (" computed with forward mode",
                                                     forward.get(i))):
            if ana is None or np.allclose(ana, num, rtol=rtol, atol=atol):
                continue
            if not raise_exception:
                return False
            k = np.unravel_index(np.argmax(np.abs(ana - num)), ana.shape)
            raise GradcheckError(f"Jacobian{mode} mismatch for output 0 with respect to input "
                                 f"{i},\nnumerical:{num}\nanalytical:{ana}\n(largest difference "
                                 f"at {tuple(int(v) for v in k)}: {num[k]} vs {ana[k]})")
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False,
                  check_batched_grad=False, check_fwd_over_rev=False, check_rev_over_rev=True,
                  fast_mode=False, masked=False):
    """Checks second derivatives: gradcheck of the function that maps (inputs,
    grad_outputs) to the gradients of ``func``."""
    from . import grad as _grad
    from .. import _ops
    inputs = _inputs(inputs)
    outputs = _flat_outputs(func(*inputs))
    if grad_outputs is None:
        from ..random import manual_seed  # noqa: F401 (deterministic enough: fixed values)
        grad_outputs = tuple(
            (_ops.creation.arange(o.numel(), dtype=o.dtype, device=o.device).reshape(o.shape)
             * 0.37 + 0.5).sin().requires_grad_() for o in outputs)
    n_in = len(inputs)
    diff_idx = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x._requires_grad]

    def new_func(*args):
        ins, gos = args[:n_in], args[n_in:]
        outs = [o for o in _flat_outputs(func(*ins)) if o._requires_grad]
        gs = _grad(outs, [ins[i] for i in diff_idx], list(gos)[:len(outs)], create_graph=True,
                   allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(new_func, tuple(inputs) + tuple(grad_outputs), eps=eps, atol=atol,
                     rtol=rtol, raise_exception=raise_exception)


class GradcheckError(RuntimeError):
    """Raised by gradcheck when the gradients do not match."""
