"""How ``FlopCounterMode`` sees ops: the counting wrappers, installed with the profiler's
patching (framework/profiler/_record.py ``targets``/``Patches``), and the translation of
each counted call into the ATen ops PyTorch's dispatcher would have run, forward and
backward (framework/utils/flop_counter.py holds the formulas and the mode)."""
import functools
import types
import weakref
from math import prod

from .._tensor import Tensor


def _rg(t):
    return isinstance(t, Tensor) and t.requires_grad


def _grad_on():
    from ..autograd import grad_mode
    return grad_mode.is_grad_enabled()


def _shape(t):
    return tuple(t.shape)


# Each translator takes the op's arguments and its result and returns (forward, backward):
# lists of (ATen op name, formula arguments, out_shape). Backward entries are counted when
# the op's autograd node runs, only for the inputs that required grad at the call.

def _mm_pair(op, a, b, out, rg_a, rg_b):
    fwd = [(op, (a, b), out)]
    bwd = []
    if rg_a:   # grad_a = grad @ b^T
        bwd.append((op, (out, b[:-2] + (b[-1], b[-2])), a))
    if rg_b:   # grad_b = a^T @ grad
        bwd.append((op, (a[:-2] + (a[-1], a[-2]), out), b))
    return fwd, bwd


def _mm(out, input, mat2, *args, **kwargs):
    return _mm_pair("aten.mm", _shape(input), _shape(mat2), _shape(out), _rg(input),
                    _rg(mat2))


def _bmm(out, input, mat2, *args, **kwargs):
    return _mm_pair("aten.bmm", _shape(input), _shape(mat2), _shape(out), _rg(input),
                    _rg(mat2))


def _add_product(op, product, names):
    def translate(out, input, *args, **kwargs):
        m1, m2 = (args + tuple(kwargs[n] for n in names[len(args):]))[:2]
        fwd, bwd = product(out, m1, m2)
        _, (a, b), out_shape = fwd[0]
        return [(op, (_shape(input), a, b), out_shape)], bwd
    return translate


def _contiguous_batch(t):
    shape, stride = t.shape, t.stride()
    return t.numel() == 0 or all(stride[i] == stride[i + 1] * shape[i + 1]
                                 for i in range(t.dim() - 2))


def _matmul_shapes(a, b, rg_a, rg_b, fold_a, fold_b):
    """PyTorch's ``matmul`` of shapes ``a`` @ ``b``: an mm over the folded batch of the
    N-d operand when ``fold_a``/``fold_b`` (its ``should_fold``), else one bmm over the
    broadcast batch; dot and mv products have no formula."""
    d1, d2 = len(a), len(b)
    if d2 == 1 and d1 <= 2 or d1 == 1 and d2 == 1:
        return [], []
    if d1 <= 2 and d2 == 2:
        a2 = (1,) + a if d1 == 1 else a
        return _mm_pair("aten.mm", a2, b, (a2[0], b[1]), rg_a, rg_b)
    if d1 >= 3 and d2 <= 2 and fold_a:
        if d2 == 1:
            return [], []
        rows = prod(a[:-1])
        return _mm_pair("aten.mm", (rows, a[-1]), b, (rows, b[1]), rg_a, rg_b)
    if d2 >= 3 and d1 <= 2 and fold_b:
        if d1 == 1:
            return [], []
        # other^T @ input^T, with other^T's batch folded
        rows = prod(b[:-2]) * b[-1]
        return _mm_pair("aten.mm", (rows, b[-2]), (a[1], a[0]), (rows, a[0]), rg_b, rg_a)
    n = a[-2] if d1 > 1 else 1
    m = b[-1] if d2 > 1 else 1
    k = a[-1]
    batch = prod(_broadcast(a[:-2] if d1 > 1 else (), b[:-2] if d2 > 1 else ()))
    return _mm_pair("aten.bmm", (batch, n, k), (batch, k, m), (batch, n, m), rg_a, rg_b)


def _matmul(out, input, other, *args, **kwargs):
    d1, d2 = input.dim(), other.dim()
    rg_a, rg_b = _rg(input), _rg(other)
    # PyTorch's should_fold: always when the smaller operand requires grad (its gradient
    # is then one mm), else when the larger one's batch folds without a copy
    fold_a = d1 >= 3 and (rg_b or _contiguous_batch(input))
    fold_b = d2 >= 3 and (rg_a or d1 == 1 and _contiguous_batch(other.mT))
    return _matmul_shapes(_shape(input), _shape(other), rg_a, rg_b, fold_a, fold_b)


def _broadcast(a, b):
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    return tuple(max(x, y) for x, y in zip(a, b))


def _linear(out, input, weight, bias=None):
    """PyTorch's ``linear``: one addmm over the flattened batch for a 2-d or contiguous
    input with a bias, else ``matmul(input, weight.t())`` and the bias added."""
    x, w = _shape(input), _shape(weight)
    rg_x, rg_w = _rg(input), _rg(weight)
    if len(w) != 2 or len(x) == 0:
        return _matmul_shapes(x, w, rg_x, rg_w, False, False)
    wt = (w[1], w[0])
    if bias is not None and (len(x) == 2 or input.is_contiguous()):
        rows = prod(x[:-1])
        fwd, bwd = _mm_pair("aten.mm", (rows, x[-1]), wt, (rows, wt[1]), rg_x, rg_w)
        _, (a, b), out_shape = fwd[0]
        return [("aten.addmm", (_shape(bias), a, b), out_shape)], bwd
    fold = len(x) >= 3 and (rg_w or _contiguous_batch(input))
    return _matmul_shapes(x, wt, rg_x, rg_w, fold, False)


def _conv(transposed):
    def translate(out, input, weight, bias=None, *args, **kwargs):
        x, o, w = _shape(input), _shape(out), _shape(weight)
        if len(x) == len(w) - 1:            # unbatched: a batch of one
            x, o = (1,) + x, (1,) + o
        b = _shape(bias) if isinstance(bias, Tensor) else None
        fwd = [("aten.convolution", (x, w, b, None, None, None, transposed), o)]
        mask = [_rg(input), _rg(weight), _rg(bias)]
        bwd = []
        if mask[0] or mask[1]:
            bwd.append(("aten.convolution_backward",
                        (o, x, w, b, None, None, None, transposed, None, None, mask),
                        (x, w, b)))
        return fwd, bwd
    return translate


def _heads(shape):
    """(batch, heads, L, E) of an attention operand of any rank >= 2."""
    lead = shape[:-2]
    return (prod(lead[:-1]), lead[-1] if lead else 1) + tuple(shape[-2:])


def _sdpa(out, query, key, value, *args, **kwargs):
    q, k, v = _heads(_shape(query)), _heads(_shape(key)), _heads(_shape(value))
    out = q[:3] + (v[3],)
    fwd = [("aten._scaled_dot_product_flash_attention", (q, k, v), out)]
    bwd = []
    if _rg(query) or _rg(key) or _rg(value):
        bwd.append(("aten._scaled_dot_product_flash_attention_backward", (out, q, k, v),
                    (q, k, v)))
    return fwd, bwd


# the profiler's event name of each counted binding -> its translator
TRANSLATORS = {
    "aten::mm": _mm, "aten::bmm": _bmm, "aten::matmul": _matmul,
    "aten::linalg_matmul": _matmul,
    "aten::addmm": _add_product("aten.addmm", _mm, ("mat1", "mat2")),
    "aten::addmm_": _add_product("aten.addmm", _mm, ("mat1", "mat2")),
    "aten::baddbmm": _add_product("aten.baddbmm", _bmm, ("batch1", "batch2")),
    "aten::baddbmm_": _add_product("aten.baddbmm", _bmm, ("batch1", "batch2")),
    "aten::linear": _linear,
    "aten::scaled_dot_product_attention": _sdpa,
}
for _n in (1, 2, 3):
    TRANSLATORS[f"aten::conv{_n}d"] = _conv(False)
    TRANSLATORS[f"aten::conv_transpose{_n}d"] = _conv(True)


def translate(event_name, args, kwargs, out):
    """(forward, backward) ATen-level entries of one call of the binding ``event_name``."""
    return TRANSLATORS[event_name](out, *args, **kwargs)


class Counting:
    """The wrappers, engine hook and module hooks of one active ``FlopCounterMode``."""

    def __init__(self, mode):
        self.mode = mode
        self.depth = 0                       # > 0 inside a counted op: inner ops not counted
        self.parents = ["Global"]            # names of the modules running now
        self.names = weakref.WeakKeyDictionary()      # module -> name
        self.seen = weakref.WeakSet()
        self.pending = weakref.WeakKeyDictionary()    # node -> [(parents, entries)]
        self.covered = weakref.WeakSet()     # nodes recorded by counted ops
        self.patches = None
        self.handles = []

    # ---- counting ----------------------------------------------------------------------------
    def count(self, entries, parents):
        registry = self.mode.flop_registry
        for op, args, out_shape in entries:
            formula = registry.get(op)
            if formula is not None:
                self.mode._count(op, formula(*args, out_val=out_shape), parents)

    def wrap(self, fn, event_name):
        counting = self

        def counted(*args, **kwargs):
            if counting.depth or counting.patches is None:
                return fn(*args, **kwargs)
            from ..autograd import graph
            first = next(graph._seq)
            counting.depth += 1
            try:
                out = fn(*args, **kwargs)
            finally:
                counting.depth -= 1
            fwd, bwd = translate(event_name, args, kwargs, out)
            parents = set(counting.parents)
            counting.count(fwd, parents)
            node = getattr(out, "grad_fn", None)
            if node is not None and _grad_on():
                if bwd:
                    counting.pending.setdefault(node, []).append((parents, bwd))
                counting.cover(node, first)
            return out
        functools.update_wrapper(counted, fn)
        return counted

    def cover(self, node, first):
        """Marks the nodes the counted op recorded (those numbered after ``first``): their
        formulas' own products are not counted again."""
        todo = [node]
        while todo:
            n = todo.pop()
            if n is None or n in self.covered or getattr(n, "_seq", -1) <= first:
                continue
            self.covered.add(n)
            it = iter(n._next)
            todo.extend(c for c, _ in zip(it, it))

    def backward_hook(self, prev):
        counting = self

        def hook(node, grads, apply):
            for parents, entries in counting.pending.get(node, ()):
                counting.count(entries, parents)
            covered = node in counting.covered
            counting.depth += covered
            try:
                return prev(node, grads, apply) if prev is not None else apply(node, grads)
            finally:
                counting.depth -= covered
        return hook

    # ---- modules -----------------------------------------------------------------------------
    def name(self, mod):
        # a module is named by its class, its children by their attribute path from it
        name = self.names.get(mod)
        if name is None:
            name = self.names[mod] = type(mod).__name__
        if mod not in self.seen:
            for child_name, child in mod.named_children():
                self.names[child] = f"{name}.{child_name}"
                self.name(child)
            self.seen.add(mod)
        return name

    def pre_forward(self, mod, args):
        self.parents.append(self.name(mod))

    def post_forward(self, mod, args, output):
        name = self.name(mod)
        if name in self.parents:
            del self.parents[len(self.parents) - 1 - self.parents[::-1].index(name)]

    # ---- install / uninstall -----------------------------------------------------------------
    def start(self):
        from ..autograd import engine
        from ..nn.modules._hooks import (register_module_forward_hook,
                                         register_module_forward_pre_hook)
        from ..profiler._record import Patches, module_functions, targets
        patches = Patches()
        try:
            wrapped = {}
            for owner, attr, event_name in targets():
                fn = vars(owner).get(attr)
                if event_name not in TRANSLATORS or not isinstance(fn, types.FunctionType):
                    continue
                w = wrapped.get((fn, event_name))
                if w is None:
                    w = wrapped[(fn, event_name)] = self.wrap(fn, event_name)
                patches.set(owner, attr, w)
            by_fn = {fn: w for (fn, _), w in wrapped.items()}
            # the functions these wrap (autocast's wrappers), which classes may hold
            inner = {}
            for fn, event_name in wrapped:
                while fn is not None and fn not in inner:
                    inner[fn] = event_name
                    fn = getattr(fn, "__wrapped__", None)
            # re-exports and class attributes bound to the same functions
            import framework.nn.functional as F
            for attr, fn in list(vars(F).items()):
                if isinstance(fn, types.FunctionType) and fn in by_fn:
                    patches.set(F, attr, by_fn[fn])
            for cls, attr, fn in module_functions():
                if fn in inner:
                    w = by_fn.get(fn) or self.wrap(fn, inner[fn])
                    patches.set(cls, attr, staticmethod(w))
            patches.set(engine, "profile_hook", self.backward_hook(engine.profile_hook))
            self.handles = [register_module_forward_pre_hook(self.pre_forward),
                            register_module_forward_hook(self.post_forward, always_call=True)]
        except BaseException:
            patches.restore()
            raise
        self.patches = patches

    def stop(self):
        for h in self.handles:
            h.remove()
        self.handles = []
        patches, self.patches = self.patches, None
        if patches is not None:
            patches.restore()
