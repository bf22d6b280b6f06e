"""``parallelize_module`` (PyTorch's ``torch.distributed.tensor.parallel.api``)."""
from fnmatch import fnmatch

from .style import ParallelStyle

__all__ = ["parallelize_module"]


def parallelize_module(module, device_mesh=None, parallelize_plan=None, *, src_data_rank=0):
    """Applies ``parallelize_plan`` (a ParallelStyle, or a dict from submodule names, which
    may hold ``*`` wildcards, to styles) to ``module`` over a 1-D ``device_mesh``."""
    if device_mesh is None:
        raise ValueError("parallelize_module: device_mesh is required")
    if parallelize_plan is None:
        return module
    if isinstance(parallelize_plan, ParallelStyle):
        parallelize_plan._apply(module, device_mesh)
        return module
    if not isinstance(parallelize_plan, dict):
        raise TypeError("Expect Union[ParallelStyle, Dict[str, ParallelStyle]] for "
                        f"parallelize_plan, {type(parallelize_plan)} found!")
    for fqn, style in parallelize_plan.items():
        if fqn == "":
            raise ValueError("Expect module path to be non-empty, but got empty string!")
        atoms = fqn.split(".")
        hits = _match(module, atoms)
        if not hits:
            raise ValueError(f"parallelize_module: no submodule matches '{fqn}'")
        for sub in hits:
            parallelize_module(sub, device_mesh, style)
    return module


def _match(module, atoms):
    head, rest = atoms[0], atoms[1:]
    out = []
    for name, child in module.named_children():
        if fnmatch(name, head):
            out.extend([child] if not rest else _match(child, rest))
    return out
