"""``make_graphed_callables`` (PyTorch's ``torch.cuda.make_graphed_callables``): the
forward and backward passes of modules or functions captured as CUDA graphs, replayed by an
autograd Function (framework/cuda/graphs.py holds the graphs themselves)."""
from . import _runtime
from .graphs import CUDAGraph, graph, graph_pool_handle

def make_graphed_callables(callables, sample_args, num_warmup_iters=3,
                           allow_unused_input=False, pool=None):
    r"""Graphed versions of ``callables`` (a module or function, or a tuple of them): each
    one's forward pass and backward pass are captured as CUDA graphs, and the returned
    callables run them through an autograd Function, so that gradients flow into the
    inputs and module parameters as with the eager callable.

    ``sample_args`` gives each callable's sample arguments (a tuple of tensors; a tuple of
    such tuples for a tuple of callables), whose ``requires_grad`` states the real inputs
    must share. Each callable runs ``num_warmup_iters`` times on a side stream before
    capture. ``pool``: a :func:`graph_pool_handle` shared with other graphs. A graphed
    module runs its graphs only in the training state it was captured in; its parameters
    must not be replaced afterwards. As in PyTorch, callables are captured in order and
    their backward passes in reverse order, so a tuple of callables must be called in that
    order too."""
    import framework as fw
    from .. import nn
    from ..autograd import Function, once_differentiable
    from ..utils import _pytree
    from .streams import Stream, stream as use_stream

    if fw.is_autocast_enabled() and fw.is_autocast_cache_enabled():
        raise RuntimeError("make_graphed_callables does not support the autocast caching. "
                           "Please set `cache_enabled=False`.")
    just_one = not isinstance(callables, tuple)
    if just_one:
        callables, sample_args = (callables,), (sample_args,)

    flat_args = []
    for c, args in zip(callables, sample_args):
        if isinstance(c, nn.Module):
            if c._backward_hooks or c._forward_hooks or c._forward_pre_hooks:
                raise AssertionError(
                    "Modules must not have hooks registered at the time they are passed. "
                    "However, registering hooks on modules after passing them through "
                    "make_graphed_callables is allowed.")
            if any(b.requires_grad for b in c.buffers()):
                raise AssertionError(
                    "In any :class:`~torch.nn.Module` passed to :func:`~make_graphed_callables`"
                    ", only parameters may be trainable. All buffers must have "
                    "``requires_grad=False``.")
        leaves = tuple(_pytree.tree_leaves(tuple(args)))
        if not all(isinstance(a, fw.Tensor) for a in leaves):
            raise AssertionError("In the beta API, sample_args for each callable must "
                                 "contain only Tensors. Other types are not allowed.")
        flat_args.append(leaves)

    n_user = [len(a) for a in flat_args]
    params = [tuple(c.parameters()) if isinstance(c, nn.Module) else () for c in callables]
    surfaces = [flat_args[i] + params[i] for i in range(len(callables))]
    fwd_graphs = [CUDAGraph() for _ in callables]
    bwd_graphs = [CUDAGraph() for _ in callables]
    mempool = graph_pool_handle() if pool is None else pool

    def grads_of(outputs, surface):
        # zeros, not PyTorch's empty_like: the warm-up really runs, and in the simulator
        # a reduction over uninitialized memory can overflow (a RuntimeWarning, an error
        # under warnings-as-errors)
        return fw.autograd.grad(
            outputs=tuple(o for o in outputs if o.requires_grad),
            inputs=tuple(i for i in surface if i.requires_grad),
            grad_outputs=tuple(fw.zeros_like(o) for o in outputs if o.requires_grad),
            only_inputs=True, allow_unused=allow_unused_input)

    # warmup on a side stream: lazy state (autotuning, optimizer-free caches) settles
    # before capture, as PyTorch requires
    _runtime.synchronize()
    with use_stream(Stream()):
        for func, args, surface in zip(callables, sample_args, surfaces):
            for _ in range(num_warmup_iters):
                outputs = _pytree.tree_leaves(func(*args))
                if any(o.requires_grad for o in outputs):
                    grads_of(outputs, surface)
            del outputs
    _runtime.synchronize()

    static_outputs, specs = [], []
    for func, args, g in zip(callables, sample_args, fwd_graphs):
        with graph(g, pool=mempool):
            out = func(*args)
        leaves, spec = _pytree.tree_flatten(out)
        static_outputs.append(tuple(leaves))
        specs.append(spec)

    # backward graphs in reverse order: the pool's memory is then reused as a real
    # backward pass would free it
    static_grad_outputs, static_grad_inputs = [None] * len(callables), [None] * len(callables)
    for i in reversed(range(len(callables))):
        outs, surface = static_outputs[i], surfaces[i]
        gouts = tuple(fw.empty_like(o) if o.requires_grad else None for o in outs)
        ginputs = None
        if any(o.requires_grad for o in outs):
            with graph(bwd_graphs[i], pool=mempool):
                ginputs = fw.autograd.grad(
                    outputs=tuple(o for o in outs if o.requires_grad),
                    inputs=tuple(a for a in surface if a.requires_grad),
                    grad_outputs=tuple(g for g in gouts if g is not None),
                    only_inputs=True, allow_unused=allow_unused_input)
        ordered, k = [], 0
        for a in surface:
            if a.requires_grad and ginputs is not None:
                ordered.append(ginputs[k])
                k += 1
            else:
                ordered.append(None)
        static_grad_outputs[i], static_grad_inputs[i] = gouts, tuple(ordered)

    ret = []
    for i, func in enumerate(callables):
        graphed = _graphed_function(fw, Function, once_differentiable, _pytree,
                                    fwd_graphs[i], bwd_graphs[i], params[i], n_user[i],
                                    specs[i], surfaces[i], static_outputs[i],
                                    static_grad_outputs[i], static_grad_inputs[i])
        if isinstance(func, nn.Module):
            func.forward = _graphed_forward(func, func.training, graphed, func.forward)
            ret.append(func)
        else:
            ret.append(graphed)
    return ret[0] if just_one else tuple(ret)


def _graphed_function(fw, Function, once_differentiable, _pytree, fwd_graph, bwd_graph,
                      module_params, n_user, spec, surface, static_outputs,
                      static_grad_outputs, static_grad_inputs):
    """The autograd Function that replays one callable's forward and backward graphs."""

    class Graphed(Function):
        @staticmethod
        def forward(ctx, *inputs):
            # only the user arguments can be new tensors: parameters are the captured ones
            for i in range(n_user):
                if surface[i].data_ptr() != inputs[i].data_ptr():
                    surface[i].copy_(inputs[i])
            fwd_graph.replay()
            return tuple(o.detach() for o in static_outputs)

        @staticmethod
        @once_differentiable
        def backward(ctx, *grads):
            for static, g in zip(static_grad_outputs, grads):
                if static is not None and g is not None and static.data_ptr() != g.data_ptr():
                    static.copy_(g)
            bwd_graph.replay()
            return tuple(None if b is None else b.detach() for b in static_grad_inputs)

    def functionalized(*user_args):
        flat = tuple(_pytree.tree_leaves(tuple(user_args)))
        out = Graphed.apply(*(flat + module_params))
        return _pytree.tree_unflatten(list(out), spec)

    return functionalized


def _graphed_forward(module, training, graphed, orig_forward):
    def forward(*args, **kwargs):
        if module.training == training:
            return graphed(*args, **kwargs)
        return orig_forward(*args, **kwargs)
    return forward
