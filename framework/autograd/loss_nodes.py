"""PyTorch's autograd nodes of the class-index losses, over the framework's fused kernels.

``F.cross_entropy`` runs one fused op (``_cross_entropy_loss``: log-softmax and the pick of
each target in one pass, never storing the log-probabilities). PyTorch's graph of the same
call is ``NllLossBackward0`` (``NllLoss2DBackward0`` for inputs with spatial dims, behind a
``ViewBackward0`` when it reshapes them) over ``LogSoftmaxBackward0``, and with label
smoothing the nodes of the smoothing term besides; scripts that walk
``grad_fn.next_functions`` see those names. ``present_cross_entropy`` shows that graph: the
fused op's node, named ``LogSoftmaxBackward0``, still computes the whole gradient, and the
nodes above it only pass the loss's gradient down (so a hook on them sees the gradient of
the loss, not of the log-probabilities).

``attach_nll_double_backward`` gives nll_loss's gradient the graph PyTorch's
``NllLossBackwardBackward0`` gives it: linear in the incoming gradient, constant in the input
(whose second derivative is zeros, but exists).
"""
from .graph import Node, edge_of, _seq
from .grad_mode import no_grad


class _PassThrough(Node):
    """A node of PyTorch's graph whose work the node below it does: it hands the gradient
    it gets to its edge."""

    def apply(self, grads):
        return grads


class _PassThrough2(Node):
    """As _PassThrough, with a second edge, which gets None."""

    def apply(self, grads):
        return [grads[0], None]


_NAMED = {}
_ONE = object()     # _node's default: a node with one edge
_new = object.__new__


def _node(name, first, second=_ONE):
    """A pass-through node named ``name`` (PyTorch's class name) over the edges to
    ``first`` and ``second`` (None: an input without gradient), output 0 of each."""
    one = second is _ONE
    cls = _NAMED.get((name, one))
    if cls is None:
        cls = _NAMED[name, one] = type(name, (_PassThrough if one else _PassThrough2,),
                                       {"__module__": __name__})
    node = _new(cls)    # (a forward-pass cost: Node.__init__'s generality is not needed)
    node._next = (first, 0) if one else (first, 0, second, 0)
    node._seq = next(_seq)
    return node


_AS_LOG_SOFTMAX = {}


def _as_log_softmax(fused):
    """The fused op's node, shown as PyTorch's ``LogSoftmaxBackward0``: it still computes
    the whole gradient of the loss with respect to the logits, in one kernel."""
    base = type(fused)
    cls = _AS_LOG_SOFTMAX.get(base)
    if cls is None:
        cls = _AS_LOG_SOFTMAX[base] = type("LogSoftmaxBackward0", (base,), {
            "__module__": __name__, "name": lambda self: "LogSoftmaxBackward0"})
    fused.__class__ = cls
    return fused


def present_cross_entropy(loss, dim, dtype, reduction, label_smoothing, weighted):
    """``loss`` (the fused op's output, whose grad_fn is its node) as a fresh tensor of
    ``dtype`` whose grad_fn graph has PyTorch's nodes for an input of ``dim`` dims: nll_loss
    over log_softmax, plus, with label smoothing, the smoothing term's nodes (which pass no
    gradient: the fused node computes the whole of it)."""
    fused = loss._grad_fn
    if loss.dtype is not dtype:
        with no_grad():
            out = loss.to(dtype)
    elif loss._base is not None:   # 'none': a view of the kernel's buffer; PyTorch's is not
        out = loss.detach()
    else:
        out = loss
    log_softmax = _as_log_softmax(fused)
    viewed = dim > 2 and dim != 4   # PyTorch views other spatial inputs as (N, C, 1, -1)
    node = _node("ViewBackward0", log_softmax) if viewed else log_softmax
    node = _node("NllLoss2DBackward0" if dim > 2 else "NllLossBackward0", node)
    if viewed and reduction == "none":   # and views the losses back to the target's shape
        node = _node("ViewBackward0", node)
    if label_smoothing > 0:
        # (1 - eps) * nll + eps / C * (the masked sum of -log_softmax over the classes)
        smooth = _node("MulBackward0", log_softmax, None) if weighted else log_softmax
        smooth = _node("MaskedFillBackward0",
                       _node("NegBackward0", _node("SumBackward1", smooth)))
        if reduction == "mean":
            smooth = _node("DivBackward0", _node("SumBackward0", smooth), None)
        elif reduction == "sum":
            smooth = _node("SumBackward0", smooth)
        node = _node("AddBackward0", _node("MulBackward1", node),
                     _node("MulBackward1", smooth))
    out._grad_fn = node
    out._requires_grad = True
    out._output_nr = 0
    return out


class NllLossBackwardBackward0(Node):
    """The node of nll_loss's gradient (made with create_graph): its derivative is
    nll_loss of the incoming gradient for grad_output, and zeros for the input."""

    def __init__(self, edges, input, target, weight, reduction, ignore_index):
        super().__init__(edges)
        self._args = (input._shape, input.dtype, input.device, target, weight, reduction,
                      ignore_index)

    def apply(self, grads):
        from .. import _ops
        import framework
        if self._args is None:
            from .graph import _FREED
            raise RuntimeError(_FREED)
        shape, dtype, device, target, weight, reduction, ignore_index = self._args
        gg = grads[0]
        out = [None, None]
        if self._next[0] is not None:
            out[0] = _ops.loss_elementwise.nll_loss(gg, target, weight, reduction,
                                                    ignore_index)
        if self._next[2] is not None:
            out[1] = framework.zeros(shape, dtype=dtype, device=device)
        return out

    def release(self):
        self._released = True
        self._args = None


class NllLoss2DBackwardBackward0(NllLossBackwardBackward0):
    pass


def attach_nll_double_backward(result, grad, input, target, weight, reduction,
                               ignore_index):
    """Gives ``result`` (nll_loss's gradient, computed with grad mode off) PyTorch's node
    when grad mode is on and ``grad`` or ``input`` requires grad."""
    eg, ei = edge_of(grad), edge_of(input)
    if eg is None and ei is None:
        return result
    cls = NllLoss2DBackwardBackward0 if input.dim() == 4 else NllLossBackwardBackward0
    result._grad_fn = cls((eg, ei), input, target, weight, reduction, ignore_index)
    result._requires_grad = True
    result._output_nr = 0
    return result
