"""The op test database: one module per family, each with `CASES = {op name: [Case, ...]}`.
tests/test_op_table.py requires an entry for every row of ops.yaml and runs them all."""
import dataclasses
import importlib
import pkgutil
from typing import Any, Callable


@dataclasses.dataclass
class Case:
    """One check of an op: ``fn(fw, device)`` returns (result, reference) pairs, or a
    single pair; ``reference`` is a NumPy value (float64 where it matters) or None when the
    case asserts by itself."""
    fn: Callable[[Any, str], Any]
    name: str = ""


def all_cases():
    cases = {}
    for mod in pkgutil.iter_modules(__path__):
        m = importlib.import_module(f"{__name__}.{mod.name}")
        for op, cs in m.CASES.items():
            if op in cases:
                raise ValueError(f"opdb: {op} has cases in two modules")
            cases[op] = cs
    return cases
