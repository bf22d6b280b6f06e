"""PyTorch's own docstring examples, run under the framework and under PyTorch, compared.

The ``>>>`` examples in the installed PyTorch's docstrings are the first code a PyTorch user
copies. ``outcomes(path, lib)`` runs the examples of one docstring (``path`` names the object
in PyTorch, ``"torch.nn.functional.relu"``) one after another in a fresh namespace whose
``torch`` is ``lib``, and records per example what it gave: its value (an expression), what
it printed, or the type of the exception it raised.

``check(path)`` runs the examples under PyTorch twice (two seeds) and under the framework
once: where PyTorch's two runs agree the example is deterministic and the framework must give
the same values and text; where they differ (random data) it must give the same types,
shapes and dtypes. Examples from the point where PyTorch itself cannot run them here (no
CUDA, a name defined elsewhere, a file) are not compared.
"""
import contextlib
import doctest
import io
import math
import os
import re
import shutil
import signal
import tempfile

import numpy as np
import pytest

import framework

_PARSER = doctest.DocTestParser()
# PyTorch cannot run the rest of the docstring here: not a difference of the framework's
_ENV = re.compile(r"CUDA|cuda|not compiled|No such file|distributed|MPS|xla|network|"
                  r"urlopen|download|onnx|TorchScript|torch\.jit|script", re.I)
_IMPORT = re.compile(r"^(\s*(?:from|import)\s+)torch\b", re.M)


def resolve(lib, path):
    """The object named by ``path`` ("torch.a.b") with ``torch`` taken as ``lib``."""
    obj = lib
    for part in path.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def examples(path):
    """The doctest examples of PyTorch's object ``path`` (empty when it has none)."""
    torch = pytest.importorskip("torch")
    try:
        doc = resolve(torch, path).__doc__
    except AttributeError:
        return []
    if not isinstance(doc, str) or ">>>" not in doc:
        return []
    try:
        return _PARSER.get_examples(doc)
    except ValueError:   # a malformed docstring
        return []


def namespace(lib):
    """What a PyTorch docstring example may use unqualified."""
    return {"torch": lib, "nn": lib.nn, "F": lib.nn.functional, "np": np, "math": math,
            "numpy": np}


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout()


# global settings an example may change (set_default_dtype's example does): each is put
# back after the examples, so that no later test sees them
_SETTINGS = [("get_default_dtype", "set_default_dtype"), ("is_grad_enabled", "set_grad_enabled"),
             ("are_deterministic_algorithms_enabled", "use_deterministic_algorithms"),
             ("get_float32_matmul_precision", "set_float32_matmul_precision"),
             ("get_num_threads", "set_num_threads"), ("is_anomaly_enabled", "set_anomaly_enabled"),
             ("is_warn_always_enabled", "set_warn_always"),
             ("get_default_device", "set_default_device")]


def _restorer(lib):
    saved = [(getattr(lib, getter), getattr(lib, setter), getattr(lib, getter)())
             for getter, setter in _SETTINGS if hasattr(lib, getter) and hasattr(lib, setter)]

    def restore():
        # only what changed: PyTorch's set_default_device("cpu") itself installs a
        # TorchFunctionMode (which turns its fast paths off), set_default_device(None) not
        for getter, setter, value in saved:
            if getter() != value:
                setter(None if setter.__name__ == "set_default_device" and
                       str(value) == "cpu" else value)
        # settings without a getter: back to their defaults
        lib.set_printoptions(profile="default")
        lib.set_flush_denormal(False)
        if hasattr(lib.compiler, "set_default_backend"):
            lib.compiler.set_default_backend("inductor")
    return restore


def outcomes(path, lib, seed=0, limit_s=20):
    """One record per example of ``path``: ``("value", v, printed)``, ``("ok", None,
    printed)`` or ``("raised", exception type name, message)``."""
    lib.manual_seed(seed)
    np.random.seed(seed)
    ns, out = namespace(lib), []
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(limit_s)
    cwd, restore = os.getcwd(), _restorer(lib)
    scratch = tempfile.mkdtemp(prefix="doc_examples.")
    os.chdir(scratch)   # examples save files ("tensor.pt") where they run
    try:
        for ex in examples(path):
            src = ex.source
            if lib is framework:   # `import torch.linalg as LA` must import the framework's
                src = _IMPORT.sub(r"\1framework", src)
            buf = io.StringIO()
            try:
                with contextlib.redirect_stdout(buf):
                    try:
                        code = compile(src, "<doc>", "eval")
                    except SyntaxError:
                        exec(compile(src, "<doc>", "exec"), ns)
                        rec = ("ok", None)
                    else:
                        rec = ("value", eval(code, ns))
                out.append(rec + (buf.getvalue(),))
            except _Timeout:
                out.append(("raised", "Timeout", f"over {limit_s} s"))
                break
            except Exception as e:  # noqa: BLE001 - the outcome is what is compared
                out.append(("raised", type(e).__name__, str(e)))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
        os.chdir(cwd)
        shutil.rmtree(scratch, ignore_errors=True)
        restore()
    return out


_SYMBOLIC = re.compile(r"\bj\d+\b")


def _text(s):
    """Printed text with the library's name made PyTorch's, and the numbers of symbolic
    sizes (a nested tensor's j1, counted per process by either library) left out."""
    return _SYMBOLIC.sub("j", s.replace("framework.", "torch.").replace("framework", "torch"))


def _leaf_kind(v):
    name = type(v).__name__
    if hasattr(v, "shape") and hasattr(v, "dtype") and hasattr(v, "detach"):
        return "tensor"
    if name in ("dtype", "device", "layout", "memory_format", "Size"):
        return name
    if isinstance(v, (bool, int, float, complex, str, type(None))):
        return "scalar"
    if isinstance(v, (list, tuple, dict)):
        return "container"
    return "object"


def _tensor_numpy(t):
    t = t.detach()
    if getattr(t, "is_sparse", False):
        t = t.to_dense()
    t = t.cpu()
    if str(t.dtype).endswith(("bfloat16", "float16")) or "float8" in str(t.dtype):
        t = t.float()
    if hasattr(t, "_host_array"):
        return np.array(t._host_array())
    return t.resolve_conj().resolve_neg().numpy()


def same(got, want, values, path="value"):
    """None when ``got`` (framework) matches ``want`` (PyTorch), else what differs; with
    ``values`` false only types, shapes and dtypes are compared."""
    kind = _leaf_kind(want)
    if _leaf_kind(got) != kind:
        return f"{path}: {type(got).__name__} vs {type(want).__name__}"
    if kind == "tensor":
        if tuple(got.shape) != tuple(want.shape):
            return f"{path}: shape {tuple(got.shape)} vs {tuple(want.shape)}"
        if _text(str(got.dtype)) != str(want.dtype):
            return f"{path}: dtype {got.dtype} vs {want.dtype}"
        if values:
            try:
                g, w = _tensor_numpy(got), _tensor_numpy(want)
            except Exception as e:  # noqa: BLE001
                return f"{path}: cannot read values ({type(e).__name__}: {e})"
            if not np.allclose(g, w, rtol=1e-4, atol=1e-5, equal_nan=True):
                return f"{path}: values differ\n{g}\nvs\n{w}"
        return None
    if kind in ("dtype", "device", "layout", "memory_format"):
        return None if _text(str(got)) == str(want) else f"{path}: {got} vs {want}"
    if kind == "Size":   # a symbolic size (a nested tensor's j1) equals only itself: by text
        same_text = _text(str(got)) == _text(str(want))
        return None if same_text or tuple(got) == tuple(want) else f"{path}: {got} vs {want}"
    if kind == "scalar":
        if type(got) is not type(want):
            return f"{path}: {type(got).__name__} vs {type(want).__name__}"
        if isinstance(want, str):   # a type's name says framework where PyTorch says torch
            got = _text(got)
        if not values or isinstance(want, (str, type(None))) and got == want:
            return None
        if isinstance(want, (float, complex)):
            ok = (got == want) or np.allclose(got, want, rtol=1e-4, atol=1e-5,
                                              equal_nan=True)
        else:
            ok = got == want
        return None if ok else f"{path}: {got!r} vs {want!r}"
    if kind == "container":
        if isinstance(want, dict):
            if set(got) != set(want):
                return f"{path}: keys {sorted(map(str, got))} vs {sorted(map(str, want))}"
            pairs = [(got[k], want[k], f"{path}[{k!r}]") for k in want]
        else:
            if len(got) != len(want):
                return f"{path}: {len(got)} items vs {len(want)}"
            pairs = [(g, w, f"{path}[{i}]") for i, (g, w) in enumerate(zip(got, want))]
        for g, w, p in pairs:
            d = same(g, w, values, p)
            if d:
                return d
        return None
    # any other object: the same kind of object
    return (None if type(got).__name__ == type(want).__name__
            else f"{path}: {type(got).__name__} vs {type(want).__name__}")


def compare(path, framework_outcomes=None):
    """What differs between the framework and PyTorch on ``path``'s examples: a list of
    strings, empty when they agree."""
    torch = pytest.importorskip("torch")
    a, b = outcomes(path, torch, seed=0), outcomes(path, _Reseeded(torch), seed=0)
    mine = framework_outcomes if framework_outcomes is not None else \
        outcomes(path, framework, seed=0)
    exs, diffs, random_seen = examples(path), [], False
    for i, (ra, rb) in enumerate(zip(a, b)):
        src = exs[i].source.strip()
        if ra[0] == "raised" and (ra[1] in ("NameError", "ModuleNotFoundError", "Timeout",
                                             "ImportError", "FileNotFoundError")
                                  or _ENV.search(ra[2])):
            break    # PyTorch itself cannot go on here
        if i >= len(mine):
            diffs.append(f"[{i}] {src}: not reached")
            break
        rm = mine[i]
        if ra[0] == "raised":
            if rm[0] != "raised":
                diffs.append(f"[{i}] {src}: PyTorch raised {ra[1]} ({ra[2][:200]}), "
                             f"the framework did not")
            elif rm[1] != ra[1]:
                diffs.append(f"[{i}] {src}: raised {rm[1]} ({rm[2][:200]}) vs {ra[1]}")
            continue
        if rm[0] == "raised":
            diffs.append(f"[{i}] {src}: raised {rm[1]}: {rm[2][:300]}")
            continue
        # once an example drew random numbers, later ones may agree between PyTorch's
        # two runs by chance (an argmax, a count): only their types and shapes are compared
        random_seen = random_seen or not _deterministic(ra, rb)
        deterministic = not random_seen
        if ra[0] == "value":
            d = same(rm[1], ra[1], deterministic)
            if d:
                diffs.append(f"[{i}] {src}: {d}")
        if deterministic and ra[2] and _text(rm[2]) != _text(ra[2]):
            diffs.append(f"[{i}] {src}: printed\n{_text(rm[2])}vs\n{ra[2]}")
    return diffs


class _Reseeded:
    """PyTorch whose ``manual_seed(s)`` seeds another stream: an example that seeds PyTorch
    itself draws other numbers, so what it draws is seen to be random (the framework's
    generators do not draw PyTorch's numbers)."""

    def __init__(self, torch):
        self._torch = torch

    def manual_seed(self, seed):
        return self._torch.manual_seed(seed + 7919)

    def __getattr__(self, name):
        return getattr(self._torch, name)


def _deterministic(ra, rb):
    if ra[2] != rb[2]:
        return False
    if ra[0] == "value":
        return same(ra[1], rb[1], True) is None
    return True
