"""framework.autograd: reverse-mode automatic differentiation over the graph recorded by
the dispatcher (``backward``, ``grad``, grad modes, ``Function``, hooks, anomaly mode)."""
from .. import _tensor
from . import graph  # noqa: F401
from .anomaly_mode import detect_anomaly, is_anomaly_enabled, set_detect_anomaly  # noqa: F401
from .engine import _is_checkpoint_valid, run_backward  # noqa: F401
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled,  # noqa: F401
                        is_inference_mode_enabled, no_grad, set_grad_enabled)
from .graph import edge_of

Tensor = _tensor.Tensor


def _as_list(x):
    if x is None:
        return None
    if isinstance(x, Tensor):
        return [x]
    return list(x)


def _make_grads(outputs, grads, is_grads_batched=False):
    from .._ops import creation
    out = []
    for i, (o, g) in enumerate(zip(outputs, grads)):
        if g is None:
            if o.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not o.dtype.is_floating_point:
                raise RuntimeError(f"grad can be implicitly created only for real scalar "
                                   f"outputs but got {o.dtype}")
            g = creation.ones_like(o)
        elif not isinstance(g, Tensor):
            g = creation.full_like(o, g)
        elif g._shape != o._shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                               f"{g.shape} and output[{i}] has a shape of {o.shape}.")
        out.append(g)
    return out


def _roots(outputs):
    roots = []
    for i, o in enumerate(outputs):
        e = edge_of(o) if o._requires_grad else None
        if e is None:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not "
                               "have a grad_fn")
        roots.append(e)
    return roots


def _start(outputs, grads, mismatch):
    """The roots of a backward pass from ``outputs`` and their gradients (``grads``: one
    per output, None for implicit ones; ``mismatch(n_grads, n_outputs)``: the error when
    the counts differ)."""
    if grads is None:
        grads = [None] * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(mismatch(len(grads), len(outputs)))
    roots = _roots(outputs)
    return roots, _make_grads(outputs, grads)


def _input_edges(inputs, op):
    """The edges whose incoming gradients ``backward(inputs=)``/``grad`` collect."""
    edges = []
    for t in inputs:
        if isinstance(t, graph.GradientEdge):
            edges.append((t.node, t.output_nr))
            continue
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}(): inputs must be Tensors, got {type(t).__name__}")
        e = edge_of(t)
        if e is None:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        edges.append(e)
    return edges


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """Accumulates the gradients of ``tensors`` into the ``.grad`` of the leaves (or of
    ``inputs`` only)."""
    outputs = _as_list(tensors)
    grads = _as_list(grad_tensors if grad_tensors is not None else grad_variables)
    roots, grads = _start(outputs, grads, lambda g, o: "grad_tensors should have the same "
                          f"length as tensors: got {g} and {o}")
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is None:
        run_backward(roots, grads, retain_graph, create_graph)
        return
    inputs = _as_list(inputs)
    if not inputs:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    got = run_backward(roots, grads, retain_graph, create_graph,
                       captures=_input_edges(inputs, "backward"), accumulate=False)
    for t, g in zip(inputs, got):
        if g is None:
            continue
        if t.grad_fn is None:
            edge_of(t)[0].apply([g])
        else:
            t.grad = g if t._grad is None else t._grad + g   # no non-leaf warning


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False,
         materialize_grads=False):
    """The gradients of ``outputs`` with respect to ``inputs`` (returned, not accumulated)."""
    from .._ops import creation
    outs = _as_list(outputs)
    ins = _as_list(inputs)
    if allow_unused is None:
        allow_unused = materialize_grads
    elif materialize_grads and not allow_unused:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    if retain_graph is None:
        retain_graph = create_graph
    if is_grads_batched:
        return _batched_grad(outs, ins, _as_list(grad_outputs), retain_graph, create_graph,
                             allow_unused, materialize_grads)
    roots, gos = _start(outs, _as_list(grad_outputs), lambda g, o: "grad requires one "
                        f"grad_output per output: got {g} grad_outputs and {o} outputs")
    got = run_backward(roots, gos, retain_graph, create_graph,
                       captures=_input_edges(ins, "grad"), accumulate=False)
    result = []
    for i, (t, g) in enumerate(zip(ins, got)):
        if not isinstance(t, Tensor):       # a GradientEdge: what flowed into it
            result.append(g)
            continue
        if g is None:
            if not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have "
                                   "been used in the graph. Set allow_unused=True if this is "
                                   "the desired behavior.")
            if materialize_grads:
                g = creation.zeros_like(t)
        else:
            if g._shape != t._shape:
                g = g.sum_to_size(t._shape)
            want = t.__dict__.get("_grad_dtype") if t._grad_fn is None else None
            if want is not None and g.dtype is not want:   # a leaf's grad_dtype (set)
                g = g.to(want)
        result.append(g)
    return tuple(result)


def _batched_grad(outs, ins, gos, retain_graph, create_graph, allow_unused,
                  materialize_grads):
    """``grad`` with ``is_grads_batched=True``: dimension 0 of every grad_output is a batch
    of cotangents. The framework has no batching rules, so this runs one backward per
    batch index (keeping the graph until the last) and stacks the gradients."""
    from .. import stack
    gos = [None] * len(outs) if gos is None else gos
    if len(gos) != len(outs):
        raise RuntimeError(f"grad requires one grad_output per output: got {len(gos)} "
                           f"grad_outputs and {len(outs)} outputs")
    for i, (o, g) in enumerate(zip(outs, gos)):
        if g is None:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        if g.dim() == 0 or g._shape[1:] != o._shape or g._shape[0] != gos[0]._shape[0]:
            raise RuntimeError(
                "If `is_grads_batched=True`, we interpret the first dimension of each "
                "grad_output as the batch dimension. The sizes of the remaining dimensions are "
                "expected to match the shape of corresponding output, but a mismatch was "
                f"detected: grad_output[{i}] has a shape of {g.shape} and output[{i}] has a "
                f"shape of {o.shape}. If you only want some tensors in `grad_output` to be "
                "considered batched, consider using vmap.")
    n = gos[0]._shape[0]
    per = [grad(outs, ins, [g[b] for g in gos], retain_graph=retain_graph or b < n - 1,
                create_graph=create_graph, allow_unused=allow_unused,
                materialize_grads=materialize_grads) for b in range(n)]
    if n == 0:
        return tuple(t.new_zeros((0,) + tuple(t.shape)) for t in ins)
    return tuple(None if per[0][j] is None else stack([p[j] for p in per])
                 for j in range(len(ins)))


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """PyTorch's legacy ``Variable(tensor, requires_grad=False)``: tensors are variables,
    so it returns the tensor (with ``requires_grad`` set when asked)."""

    def __new__(cls, data, requires_grad=False, volatile=False):
        if requires_grad:
            data.requires_grad_(True)
        return data


from .function import Function, once_differentiable  # noqa: E402,F401
from . import functional  # noqa: E402,F401
from .gradcheck import gradcheck, gradgradcheck  # noqa: E402,F401
from . import profiler  # noqa: E402,F401
from . import forward_ad  # noqa: E402,F401
from .engine_flags import (  # noqa: E402,F401
    enforce_grad_layout_policy, is_multithreading_enabled, is_view_replay_enabled,
    set_multithreading_enabled)
from .graph import SavedTensor  # noqa: E402,F401


def variable(*args, **kwargs):
    """Removed: use ``tensor(...)``."""
    raise RuntimeError("torch.autograd.variable(...) is deprecated, use torch.tensor(...) "
                       "instead")
