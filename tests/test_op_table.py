"""Walks every row of ops.yaml: each op must be covered by tests/opdb, must bind the names
its variants promise, must have an implementation whose signature matches its schema, and
every case must match its reference on every device."""
import inspect

import numpy as np
import pytest

import framework as fw
from framework import kernels
from framework._ops import dispatcher
from helpers import assert_close
from opdb import all_cases

OPS = dispatcher.ops()
CASES = all_cases()


def test_every_op_has_cases():
    missing = sorted(k for k in OPS if k not in CASES)
    assert not missing, f"ops without test cases in tests/opdb: {missing}"


def test_no_cases_for_unknown_ops():
    unknown = sorted(k for k in CASES if k not in OPS)
    assert not unknown, f"tests/opdb has cases for ops not in ops.yaml: {unknown}"


@pytest.mark.parametrize("name", sorted(OPS))
def test_bindings_and_signature(name):
    op = OPS[name]
    ns = fw
    for part in op.namespace.split(".") if op.namespace else ():
        ns = getattr(ns, part)
    if "function" in op.variants:
        assert getattr(ns, op.name) is op.fn
    if "method" in op.variants:
        assert getattr(fw.Tensor, op.name) is op.method_fn
    if "inplace" in op.variants:
        assert callable(getattr(fw.Tensor, op.name + "_"))
    params = inspect.signature(op.fn).parameters
    names = [p for p in params]
    if names[-1:] == ["size_kw"] and any("..." in a[0] for a in op.args):
        # a `SymInt... size` schema also takes `size=` by keyword, as PyTorch's binding does;
        # Python cannot name the keyword after the varargs, so the impl collects it in **size_kw
        assert params["size_kw"].kind is inspect.Parameter.VAR_KEYWORD
        names = names[:-1]
    schema_names = [a[1] for a in op.args]
    assert names == schema_names, f"{name}: impl params {names} != schema {schema_names}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_op_cases(name, device):
    for case in CASES[name]:
        results = case.fn(fw, device)
        if results is None:
            continue
        if isinstance(results, tuple) and len(results) == 2 and not isinstance(results[0], tuple):
            results = [results]
        for got, ref in results:
            if ref is None:
                continue
            if isinstance(got, fw.Tensor):
                assert_close(got, ref)
            else:
                np.testing.assert_allclose(np.asarray(got, dtype=np.float64),
                                           np.asarray(ref, dtype=np.float64), rtol=1e-6)


@pytest.mark.parametrize("name", sorted(OPS))
def test_dispatch_kernels_exist(name):
    """Every backend kernel a row names must exist in the CPU backend and, under the same
    name, in the cuda backend (framework.kernels)."""
    import importlib
    for dev, path in OPS[name].dispatch.items():
        for pkg in ("framework._cpu", "framework.kernels"):
            obj = importlib.import_module(pkg)
            for part in path.split("."):
                obj = getattr(obj, part, None)
                assert obj is not None, f"{name}: {dev} kernel {path} not found in {pkg}"
            assert callable(obj)


def _launchers(mod):
    """The public functions of a family module defined in the family's own files: the
    module itself or its ``<family>_*`` siblings it imports them from (kernels/sort.py
    takes the scans from sort_scan.py), not helpers imported from elsewhere."""
    name = mod.__name__
    return {k: v for k, v in vars(mod).items()
            if not k.startswith("_") and inspect.isfunction(v)
            and (v.__module__ == name or v.__module__.startswith(name + "_"))}


@pytest.mark.parametrize("family", kernels.FAMILIES)
def test_cuda_backend_has_every_cpu_launcher(family):
    """The cuda backend mirrors the CPU backend: same launcher names and parameters."""
    import importlib
    cpu = _launchers(importlib.import_module(f"framework._cpu.{family}"))
    cuda = _launchers(importlib.import_module(f"framework.kernels.{family}"))
    missing = sorted(set(cpu) - set(cuda))
    assert not missing, f"framework.kernels.{family} lacks {missing}"
    for k, fn in cpu.items():
        assert list(inspect.signature(fn).parameters) == \
            list(inspect.signature(cuda[k]).parameters), f"{family}.{k}: parameters differ"
