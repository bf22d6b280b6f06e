"""Runs PyTorch's OpInfo database (``op_db``) against the framework.

For each OpInfo whose op the framework has, its sample inputs are converted to framework
tensors (on ``cpu`` and the simulated ``cuda``), the op is called, and the outputs are
compared with torch's; float64 gradients (backward on the sum of the outputs) too, where the
OpInfo supports autograd. Each sample gets a :class:`Result`.
"""
import dataclasses
import importlib.util
import cmath
import os
import sys
import types
import unittest

from .unsupported import INTERNAL, KNOWN_DISAGREEMENTS, RANDOM_OPS, UNSUPPORTED, UP_TO_PHASE

# per OpInfo: samples per dtype and device (the walk must stay cheap in CI)
MAX_SAMPLES = {"float32": 4, "float64": 2, "int64": 2, "bool": 2, "complex64": 2}
CUDA_SAMPLES = 2            # float32 samples also run on the simulated cuda device
GRAD_SAMPLES = 2
# cuda samples of ops too slow in Triton's interpreter (their own tests cover cuda)
INTERPRETER_CUDA_SAMPLES = {"nn.functional.ctc_loss": 0, "grid_sampler_3d": 0}
TOL = {"float32": (1e-4, 1e-5), "float64": (1e-6, 1e-7), "float16": (1e-2, 1e-3),
       "bfloat16": (2e-2, 1e-2), "complex64": (1e-4, 1e-5), "complex128": (1e-6, 1e-7)}
GRAD_TOL = (1e-5, 1e-6)


def load_op_db():
    """PyTorch's op_db. Its test utilities import ``expecttest`` (a dev-only dependency of
    PyTorch); a stub stands in where it is not installed."""
    if importlib.util.find_spec("expecttest") is None:
        stub = types.ModuleType("expecttest")
        stub.TestCase = unittest.TestCase
        sys.modules["expecttest"] = stub
    from torch.testing._internal.common_methods_invocations import op_db
    return op_db


def key(op):
    """``name`` or ``name.variant_test_name``: the key of the lists in unsupported.py."""
    return f"{op.name}.{op.variant_test_name}" if op.variant_test_name else op.name


@dataclasses.dataclass
class Result:
    op: str
    check: str          # "float32/cpu", "grad/float64/cpu", ...
    sample: int
    status: str         # "agree", "disagree", "skip", "no complex" (refused complex64)
    message: str = ""


# ---- finding the framework's op -----------------------------------------------------------
def _lookup(root, path):
    obj = root
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def resolve(op):
    """The framework callable for an OpInfo, or None where the framework lacks the op."""
    import torch

    import framework as fw
    name = op.name
    fn = op.op
    if "." in name:
        target = _lookup(fw, name)
    else:
        target = getattr(fw, name, None) if hasattr(torch, name) else None
        if target is None or isinstance(target, fw.dtype):     # torch.cfloat: the method
            target = getattr(fw.Tensor, name, None)
        if target is None and getattr(fn, "__name__", "") == "<lambda>":
            # OpInfos of ops that only exist in place (``cauchy``: ``Tensor.cauchy_``)
            target = getattr(fw.Tensor, name + "_", None)
    if target is None:
        return None
    code = getattr(fn, "__code__", None)
    if code is not None and getattr(fn, "__name__", "") == "<lambda>":
        # the OpInfo wraps the op in a lambda (``lambda x: x.mT``, ``torch.polygamma(n, x)``):
        # run that very lambda with ``torch`` bound to the framework
        glob = dict(fn.__globals__)
        glob["torch"] = _TorchAsFramework()
        return types.FunctionType(code, glob, fn.__name__, fn.__defaults__, fn.__closure__)
    if not callable(target):      # a property such as ``T``
        return None
    return target


class _TorchAsFramework:
    """``torch`` inside an OpInfo's lambda: ``torch.name`` is ``framework.name``, or the
    Tensor method ``name`` as a function (``torch.zero_(x)`` is ``x.zero_()``)."""

    def __getattr__(self, name):
        import framework as fw
        target = getattr(fw, name, None)
        if target is not None:
            return target
        if callable(getattr(fw.Tensor, name, None)):
            return lambda self, *args, **kwargs: getattr(self, name)(*args, **kwargs)
        raise AttributeError(f"module 'framework' has no attribute '{name}'")


# ---- converting samples --------------------------------------------------------------------
class Unconvertible(Exception):
    """A sample argument with no framework counterpart (a sparse tensor, a Generator...)."""


def to_fw(x, device, grad=False, memo=None):
    import torch

    import framework as fw
    if isinstance(x, torch.Tensor):
        if x.dtype not in _dtypes() or x.layout != torch.strided:
            raise Unconvertible(f"tensor of {x.dtype}, {x.layout}")
        t = _tensor_to_fw(x.detach(), device)
        if grad and x.requires_grad and x.is_leaf:
            # torch's leaves become the framework's leaves: their gradients are compared
            t.requires_grad_(True)
            if memo is not None:
                memo.append((x, t))
        return t
    if isinstance(x, torch.dtype):
        if x not in _dtypes():
            raise Unconvertible(f"dtype {x}")
        return getattr(fw, str(x).split(".")[-1])
    if isinstance(x, torch.Size):
        return tuple(x)
    if isinstance(x, torch.device):
        return device
    if isinstance(x, torch.memory_format):
        mf = getattr(fw, str(x).split(".")[-1], None)
        if mf is None:
            raise Unconvertible(f"memory format {x}")
        return mf
    if isinstance(x, (list, tuple)):
        out = [to_fw(v, device, grad, memo) for v in x]
        return type(x)(out) if type(x) in (list, tuple) else tuple(out)
    if isinstance(x, dict):
        return {k: to_fw(v, device, grad, memo) for k, v in x.items()}
    if isinstance(x, torch.Generator):
        raise Unconvertible(type(x).__name__)
    if callable(x) and not isinstance(x, type):
        raise Unconvertible("callable argument")
    return x


def _tensor_to_fw(x, device):
    """A framework copy of a torch tensor on ``device``, with the same strides and storage
    offset inside a copy of its whole storage (as_strided samples index the storage)."""
    import framework as fw
    n = x.untyped_storage().nbytes() // x.element_size()
    if x.numel() and (x.storage_offset() or n != x.numel() or not x.is_contiguous()):
        base = fw.from_dlpack(x.as_strided((n,), (1,), 0).clone())
        if device != "cpu":
            base = base.to(device)
        return fw.as_strided(base, tuple(x.shape), x.stride(), x.storage_offset())
    t = fw.from_dlpack(x.clone())
    return t if device == "cpu" else t.to(device)


_DTYPES = set()


def _dtypes():
    if not _DTYPES:
        import torch
        _DTYPES.update({torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32,
                        torch.int64, torch.float16, torch.bfloat16, torch.float32,
                        torch.float64, torch.complex64, torch.complex128})
    return _DTYPES


def flatten(out):
    """The leaves of an op's output (tensors, numbers, bools), in order."""
    if isinstance(out, (list, tuple)):
        leaves = []
        for o in out:
            leaves.extend(flatten(o))
        return leaves
    return [out]


def _fw_to_torch(x):
    import torch

    import framework as fw
    if isinstance(x, fw.Tensor):
        t = x.detach().cpu()
        if t.layout != fw.strided:   # sparse results compare by their dense values
            t = t.to_dense()
        return torch.from_dlpack(t.contiguous() if t.numel() else t)
    return x


def compare(got, want, tol=None, shape_only=False):
    """None when ``got`` (framework) agrees with ``want`` (torch), else why not. ``tol``:
    (rtol, atol), by default that of each output's dtype (exact for integers and bools)."""
    import torch
    g, w = flatten(got), flatten(want)
    if len(g) != len(w):
        return f"{len(g)} outputs, expected {len(w)}"
    for i, (a, b) in enumerate(zip(g, w)):
        a = _fw_to_torch(a)
        where = f"output {i}: " if len(g) > 1 else ""
        if isinstance(b, torch.Tensor):
            if b.layout != torch.strided:
                b = b.to_dense()
            if not isinstance(a, torch.Tensor):
                return f"{where}got {type(a).__name__}, expected a tensor"
            if a.dtype != b.dtype:
                return f"{where}dtype {a.dtype}, expected {b.dtype}"
            if a.shape != b.shape:
                return f"{where}shape {tuple(a.shape)}, expected {tuple(b.shape)}"
            if shape_only:
                continue
            rtol, atol = tol or TOL.get(str(b.dtype).split(".")[-1], (0, 0))
            try:
                torch.testing.assert_close(a, b, rtol=rtol, atol=atol, equal_nan=True,
                                           check_dtype=False)
            except AssertionError as e:
                lines = [s for s in str(e).splitlines() if s.strip()]
                return f"{where}values differ: " + "; ".join(lines[1:4])
        elif isinstance(b, (bool, int, float, complex)) and not isinstance(b, type):
            if isinstance(a, torch.Tensor) and a.numel() == 1:
                a = a.item()
            if not isinstance(a, (bool, int, float, complex)):
                return f"{where}got {type(a).__name__}, expected {type(b).__name__}"
            if shape_only:
                continue
            rtol, atol = tol or TOL["float64"]
            if not (a == b or (cmath.isnan(b) and cmath.isnan(a))
                    or cmath.isclose(a, b, rel_tol=rtol, abs_tol=atol)):
                return f"{where}{a!r}, expected {b!r}"
        elif b is None:
            if a is not None:
                return f"{where}got {type(a).__name__}, expected None"
    return None


def _short(e):
    msg = str(e).strip().splitlines()
    return f"{type(e).__name__}: {msg[0][:160] if msg else ''}"


# ---- the walk -------------------------------------------------------------------------------
def _samples(op, dtype, requires_grad, limit):
    out = []
    try:
        it = op.sample_inputs("cpu", dtype, requires_grad=requires_grad)
        for s in it:
            out.append(s)
            if len(out) >= limit:
                break
    except Exception as e:   # torch's own sample generator failing: nothing to compare
        return out, _short(e)
    return out, None


def _convert(s, device, grad=False, memo=None):
    # before torch runs the op: an in-place op must not have changed the sample yet
    return (to_fw(s.input, device, grad, memo), to_fw(list(s.args), device, grad, memo),
            to_fw(dict(s.kwargs), device, grad, memo))


def is_random(op):
    """Random or uninitialised outputs: compared by dtype and shape only."""
    return op.name in RANDOM_OPS or key(op) in RANDOM_OPS or "empty" in op.name


def walk_op(op, fn=None, devices=("cpu", "cuda")):
    """Every check of one OpInfo, as a list of Results (empty when the op is absent)."""
    import torch
    fn = fn or resolve(op)
    name = key(op)
    if fn is None:
        return []
    results = []
    shape_only = is_random(op)
    supported = op.supported_dtypes("cpu")
    for dname in ("float32", "float64", "int64", "bool", "complex64"):
        dtype = getattr(torch, dname)
        if dtype not in supported:
            continue
        samples, err = _samples(op, dtype, False, MAX_SAMPLES[dname])
        if err:
            results.append(Result(name, f"{dname}/samples", -1, "skip", err))
        for dev in devices:
            if dev == "cuda" and dname != "float32":
                continue
            cap = len(samples)
            if dev == "cuda":
                cap = CUDA_SAMPLES
                if os.environ.get("TRITON_INTERPRET") == "1":
                    cap = INTERPRETER_CUDA_SAMPLES.get(name, cap)
            for i, s in enumerate(samples[:cap]):
                check = f"{dname}/{dev}"
                try:
                    inp, args, kwargs = _convert(s, dev)
                except Unconvertible as e:
                    results.append(Result(name, check, i, "skip", f"unconvertible: {e}"))
                    continue
                try:
                    want = op(s.input, *s.args, **s.kwargs)
                except Exception as e:
                    results.append(Result(name, check, i, "skip", "torch: " + _short(e)))
                    continue
                try:
                    got = fn(inp, *args, **kwargs)
                except Exception as e:
                    # an op without complex support refuses with NotImplementedError
                    # ("... not implemented for 'ComplexFloat'"): a gap, counted apart
                    gap = dname == "complex64" and isinstance(e, NotImplementedError)
                    results.append(Result(name, check, i, "no complex" if gap else "disagree",
                                          _short(e)))
                    continue
                if name in UP_TO_PHASE:     # eigenvectors: compared through abs()
                    got = s.output_process_fn_grad(tuple(_fw_to_torch(o) for o in got))
                    want = s.output_process_fn_grad(want)
                try:
                    why = compare(got, want, None, shape_only)
                except Exception as e:
                    why = "compare: " + _short(e)
                results.append(Result(name, check, i, "disagree" if why else "agree",
                                      why or ""))
    if (op.supports_autograd and torch.float64 in op.supported_backward_dtypes("cpu")
            and not shape_only):
        results.extend(_grad_checks(op, fn, name))
    return results


def _grad_checks(op, fn, name):
    import torch

    import framework as fw
    results = []
    samples, _ = _samples(op, torch.float64, True, GRAD_SAMPLES)
    for i, s in enumerate(samples):
        check = "grad/float64/cpu"
        leaves = [t for t in _tensors((s.input, s.args, s.kwargs))
                  if t.requires_grad and t.is_leaf]
        if not leaves:
            continue
        memo = []
        try:
            inp, args, kwargs = _convert(s, "cpu", True, memo)
        except Unconvertible as e:
            results.append(Result(name, check, i, "skip", f"unconvertible: {e}"))
            continue
        try:
            want_out = op(s.input, *s.args, **s.kwargs)
            if name in UP_TO_PHASE:
                want_out = s.output_process_fn_grad(want_out)
            out = [o for o in flatten(want_out)
                   if isinstance(o, torch.Tensor) and (o.dtype.is_floating_point
                                                       or o.is_complex()) and o.requires_grad]
            if not out:
                continue
            want = torch.autograd.grad(sum(_loss(torch, o) for o in out), leaves,
                                       allow_unused=True)
        except Exception as e:
            results.append(Result(name, check, i, "skip", "torch: " + _short(e)))
            continue
        try:
            got_out = fn(inp, *args, **kwargs)
            if name in UP_TO_PHASE:
                got_out = s.output_process_fn_grad(tuple(got_out))
            outs = [o for o in flatten(got_out) if isinstance(o, fw.Tensor)
                    and o.dtype.category >= 2 and o.requires_grad]
            if not outs:
                results.append(Result(name, check, i, "disagree", "output does not require grad"))
                continue
            total = _loss(fw, outs[0])
            for o in outs[1:]:
                total = total + _loss(fw, o)
            total.backward()
        except Exception as e:
            results.append(Result(name, check, i, "disagree", "backward: " + _short(e)))
            continue
        by_id = {id(t): f for t, f in memo}
        why = None
        for j, (leaf, g) in enumerate(zip(leaves, want)):
            f = by_id.get(id(leaf))
            if f is None:
                continue
            fg = f.grad
            if g is None:
                g = torch.zeros_like(leaf)
            if fg is None:
                fg = fw.zeros(tuple(leaf.shape), dtype=fw.float64)
            w = compare(fg, g, GRAD_TOL)
            if w:
                why = f"grad of input {j}: {w}"
                break
        results.append(Result(name, check, i, "disagree" if why else "agree", why or ""))
    return results


def _loss(T, o):
    """The real loss whose gradient is compared: the sum of the output's elements, of its
    real and imaginary parts for a complex output."""
    return T.view_as_real(o).sum() if o.is_complex() else o.sum()


def _tensors(x):
    import torch
    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for v in x for t in _tensors(v)]
    if isinstance(x, dict):
        return [t for v in x.values() for t in _tensors(v)]
    return []


def status_of(op):
    """"internal", "unsupported", "absent" or "present"."""
    if key(op) in INTERNAL or op.name in INTERNAL:
        return "internal"
    if key(op) in UNSUPPORTED or op.name in UNSUPPORTED:
        return "unsupported"
    return "absent" if resolve(op) is None else "present"


def reason_unsupported(op):
    """Why an "internal" or "unsupported" OpInfo is left out (unsupported.py)."""
    for table in (INTERNAL, UNSUPPORTED):
        for k in (key(op), op.name):
            if k in table:
                return table[k]
    return ""


def known_disagreement(op):
    return KNOWN_DISAGREEMENTS.get(key(op)) or KNOWN_DISAGREEMENTS.get(op.name)

