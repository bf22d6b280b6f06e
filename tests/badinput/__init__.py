"""Bad-input cases: tables of calls with PyTorch's expected outcome, and how to run and judge them.

A case is `C(id, fn, expect, ...)`: `fn(m, dev)` makes the call with `m` the module (framework
or torch) on device `dev`; with `target=`, `target(m, dev)` builds a tensor first and the call is
`fn(m, dev, t)`, and a failed call must leave `t`'s values unchanged. `expect` is `OK` (the call
succeeds and its value matches torch's, or `value=` where given) or `E(class name, fragment)`:
PyTorch's exception class and a short piece of its message. The tables were written by running
torch once, so they are the spec where torch is not installed; where it is, the tests check the
tables still agree with it.
"""
import importlib
import math
from dataclasses import dataclass

CATEGORIES = ["views", "shapes", "dtypes", "indices", "sizes", "scalars", "devices", "inplace",
              "linalg", "random", "creation", "pointwise"]

OTHER = {"cpu": "cuda", "cuda": "cpu"}   # the other device, for device-mismatch cases
SAME_DEVICE = "Expected all tensors to be on the same device"
OVERLAP = "unsupported operation: more than one element of the written-to tensor"


class _Ok:
    def __repr__(self):
        return "OK"


OK = _Ok()


@dataclass(frozen=True)
class E:
    """An expected exception: its class name (as PyTorch raises it) and a message fragment."""
    cls: str
    frag: str


@dataclass
class Case:
    id: str
    fn: object
    expect: object
    target: object = None
    crash: bool = False      # crashed the process before: run it in a subprocess
    oracle: bool = True      # False where torch (CPU-only) cannot run the case
    cuda_only: bool = False  # device-mismatch cases need a second device
    value: object = None     # the expected value of an OK case where torch is absent
    tol: tuple = None        # (rtol, atol) overriding the dtype tolerance
    or_raise: object = None  # for OK cases: this E(...) is accepted too (overlapping writes)
    check_value: bool = True # False where torch's value is not defined (loop-order dependent)

    @property
    def category(self):
        return self.id.split(".", 1)[0]


def C(id, fn, expect, **kw):
    """One table row."""
    return Case(id, fn, expect, **kw)


def all_cases():
    """Every case of every category, ids prefixed with the category."""
    cases = []
    for cat in CATEGORIES:
        mod = importlib.import_module(f"badinput.{cat}")
        for c in mod.CASES:
            c.id = f"{cat}.{c.id}"
            cases.append(c)
    ids = [c.id for c in cases]
    dup = {i for i in ids if ids.count(i) > 1}
    assert not dup, f"duplicate case ids: {sorted(dup)}"
    return cases


_BY_ID = None


def case_by_id(case_id):
    global _BY_ID
    if _BY_ID is None:
        _BY_ID = {c.id: c for c in all_cases()}
    return _BY_ID[case_id]


def devices_for(case, cuda_available):
    """The devices a case runs on for the framework."""
    if case.cuda_only:
        return ["cpu", "cuda"] if cuda_available else []
    return ["cpu", "cuda"] if cuda_available else ["cpu"]


# ---- running one case ------------------------------------------------------------------------

def _dtype_name(dt):
    return str(dt).rsplit(".", 1)[-1]


def norm(r):
    """A JSON-able form of a result: tensors become {dtype, shape, values}."""
    if hasattr(r, "tolist") and hasattr(r, "dtype") and hasattr(r, "shape"):
        if type(r).__module__.startswith("numpy"):
            return norm(r.tolist())
        return {"dtype": _dtype_name(r.dtype), "shape": list(r.shape), "v": r.tolist()}
    if isinstance(r, (tuple, list)):
        return [norm(x) for x in r]
    if r is None or isinstance(r, (bool, int, float, str)):
        return r
    if hasattr(r, "is_floating_point") or type(r).__name__ == "dtype":
        return _dtype_name(r)
    return repr(r)


def _cls_name(e):
    return type(e).__name__.lstrip("_")   # torch.linalg.LinAlgError is named _LinAlgError


def _framework_bases(e):
    """The builtin classes an exception class defined by the framework derives from (its
    OutOfMemoryError and LinAlgError count as the RuntimeError PyTorch raises on cpu)."""
    if not type(e).__module__.startswith("framework"):
        return []
    return [c.__name__ for c in type(e).__mro__[1:] if c.__module__ == "builtins"]


def class_matches(got, cls):
    """Whether a raised outcome has the expected exception class."""
    return got["cls"] == cls or cls in got.get("bases", [])


def run(case, m, dev):
    """Runs a case in this process; returns its outcome as a dict (kind: ok or raise)."""
    t = case.target(m, dev) if case.target is not None else None
    before = norm(t) if t is not None else None
    try:
        r = case.fn(m, dev, t) if case.target is not None else case.fn(m, dev)
        value = norm(r)
    except Exception as e:  # noqa: BLE001 - every exception is an outcome
        out = {"kind": "raise", "cls": _cls_name(e), "msg": str(e)[:1500],
               "bases": _framework_bases(e)}
        if t is not None:
            try:
                out["unchanged"] = same(norm(t), before, (0.0, 0.0))
            except Exception as e2:  # noqa: BLE001
                out["unchanged"] = False
                out["msg"] += f" [target unreadable: {type(e2).__name__}: {e2}]"
        return out
    return {"kind": "ok", "value": [value, norm(t) if t is not None else None]}


# ---- comparing values ------------------------------------------------------------------------

TOL = {"float16": (1e-3, 1e-3), "bfloat16": (1.6e-2, 1e-2), "float32": (1.3e-6, 1e-5),
       "float64": (1e-12, 1e-12)}


def _flat(v):
    if isinstance(v, list):
        for x in v:
            yield from _flat(x)
    else:
        yield v


def _close(a, b, tol):
    if isinstance(a, bool) or isinstance(b, bool) or not isinstance(a, float) and not isinstance(b, float):
        return a == b
    a, b = float(a), float(b)
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= tol[1] + tol[0] * abs(b)


def same(a, b, tol=None):
    """Whether two normalized values agree (dtype, shape, values within tolerance)."""
    if isinstance(a, dict) and isinstance(b, dict):
        if a["dtype"] != b["dtype"] or a["shape"] != b["shape"]:
            return False
        t = tol or TOL.get(a["dtype"], (0.0, 0.0))
        fa, fb = list(_flat(a["v"])), list(_flat(b["v"]))
        return len(fa) == len(fb) and all(_close(x, y, t) for x, y in zip(fa, fb))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y, tol) for x, y in zip(a, b))
    if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        return False
    return _close(a, b, tol or (1e-6, 1e-9))


def _short(v, n=300):
    s = repr(v)
    return s if len(s) <= n else s[:n] + "..."


# ---- judging ---------------------------------------------------------------------------------

# "argtext": a TypeError of the right class whose text is not the one PyTorch's generated
# argument parser prints ("received an invalid combination of arguments", "(position 1)
# must be tuple of ints"); we do not reproduce that parser's wording, so the test accepts it
# and the report counts it apart from real message mismatches.
STATUSES = ["pass", "crash", "hang", "silent", "class", "message", "argtext", "wrote", "raised",
            "wrong"]


def judge(case, got, ref=None):
    """(status, detail) of the framework's outcome `got` against the table and torch's
    outcome `ref` (None where torch is absent). Status is one of STATUSES."""
    kind = got["kind"]
    if kind in ("crash", "hang"):
        return kind, got.get("msg", "")
    if case.expect is OK:
        alt = case.or_raise
        if kind == "raise" and alt is not None and class_matches(got, alt.cls) and alt.frag in got["msg"]:
            return ("wrote", "raised as allowed, but the target's values changed") \
                if got.get("unchanged") is False else ("pass", "")
        if kind == "raise":
            return "raised", f"expected success, got {got['cls']}: {got['msg'][:300]}"
        if not case.check_value:
            return "pass", ""
        if ref is not None and ref["kind"] == "ok":
            if not same(got["value"], ref["value"], case.tol):
                return "wrong", f"got {_short(got['value'])}, torch gives {_short(ref['value'])}"
        elif case.value is not None:   # the result's values, or the target's where one is given
            have = got["value"][1 if case.target is not None else 0]
            if isinstance(have, dict):
                have = have["v"]
            if not same(have, norm(case.value), case.tol):
                return "wrong", f"got {_short(have)}, expected {_short(case.value)}"
        return "pass", ""
    exp = case.expect
    if kind == "ok":
        return "silent", f"expected {exp.cls} ({exp.frag!r}), got a value {_short(got['value'])}"
    if not class_matches(got, exp.cls):
        return "class", f"expected {exp.cls} ({exp.frag!r}), got {got['cls']}: {got['msg'][:300]}"
    if got.get("unchanged") is False:
        return "wrote", "raised as expected, but the target's values changed"
    if exp.frag not in got["msg"]:
        status = "argtext" if exp.cls == "TypeError" else "message"
        return status, f"expected {exp.cls} with {exp.frag!r}, got: {got['msg'][:300]}"
    return "pass", ""


def table_disagreement(case, ref):
    """None where the table agrees with torch's outcome `ref`, else why not."""
    if case.expect is OK:
        if ref["kind"] != "ok":
            return f"table says OK, torch raises {ref['cls']}: {ref['msg'][:300]}"
        return None
    if ref["kind"] == "ok":
        return f"table says {case.expect}, torch succeeds"
    if not class_matches(ref, case.expect.cls) or case.expect.frag not in ref["msg"]:
        return f"table says {case.expect}, torch raises {ref['cls']}: {ref['msg'][:300]}"
    return None
