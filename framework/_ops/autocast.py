"""Autocast: PyTorch's per-op cast policy for mixed precision, applied where ops are bound.

Inside ``framework.autocast(device_type)`` the ops listed below cast their floating-point
tensor arguments on that device type before running:

- ``lower``: to the autocast dtype (float16 on cuda, bfloat16 on cpu by default): matmuls,
  convolutions, linear, attention; float32 leaf tensors that require grad (the weights) are
  cast once per autocast region and cached;
- ``fp32``: to float32 (ops whose range or accuracy needs it: exp, log, norms, losses...);
- ``fp32_dtype``: reductions with a ``dtype`` argument get ``dtype=float32`` when the user
  gave none and the input is eligible (softmax, sum, cumsum...), as PyTorch's
  ``fp32_set_opt_dtype``;
- ``promote``: to the widest floating type among the arguments (addcmul, cat, ...);
- ``banned``: raise (binary_cross_entropy on cuda is unsafe in float16).

Eligible tensors are floating point, on the device type of the region, and not float64
(float64 is never cast). Ops not listed run as they are. As in PyTorch, the ops an
autocast op calls internally run with autocast off (its key is excluded while the op
runs), and so does the backward pass (the engine turns it off). The lists follow PyTorch
2.13's ``AutocastCUDA`` and ``AutocastCPU`` kernels, by our function names; names the
framework does not have are skipped.

``install`` wraps the listed functions of ``framework``, ``framework.linalg``,
``framework.nn.functional`` and the methods of ``Tensor`` once, when the package is
imported; outside autocast a wrapped op costs one thread-local attribute test.
"""
import functools
import inspect
import threading

from .._tensor import Tensor

_LOWER, _FP32, _FP32_DTYPE, _PROMOTE, _BANNED = "lower", "fp32", "fp32_dtype", "promote", "banned"

_CUDA_POLICY = {
    _LOWER: """conv1d conv2d conv3d conv_tbc conv_transpose1d conv_transpose2d conv_transpose3d
        prelu addmm addmv addr matmul einsum mm mv linalg.vecdot linear addbmm baddbmm bmm
        chain_matmul linalg.multi_dot lstm_cell gru_cell rnn_tanh_cell rnn_relu_cell
        scaled_dot_product_attention""",
    _FP32: """acos asin cosh erfinv exp expm1 log log10 log2 log1p reciprocal rsqrt sinh tan
        pow softplus layer_norm rms_norm group_norm cosine_similarity poisson_nll_loss
        cosine_embedding_loss nll_loss hinge_embedding_loss kl_div l1_loss smooth_l1_loss
        huber_loss mse_loss margin_ranking_loss multilabel_margin_loss soft_margin_loss
        triplet_margin_loss multi_margin_loss binary_cross_entropy_with_logits dist pdist
        cdist renorm logsumexp interpolate upsample upsample_nearest upsample_bilinear""",
    _FP32_DTYPE: """prod softmax log_softmax cumprod cumsum linalg.vector_norm
        linalg.matrix_norm sum norm""",
    _PROMOTE: """addcdiv addcmul atan2 bilinear cross dot vdot grid_sample index_put
        tensordot scatter_add""",
    _BANNED: "binary_cross_entropy",
}

_CPU_POLICY = {
    # (PyTorch's CPU list has no einsum or tensordot: they reach its mm/bmm inside, so
    # tensordot, and einsum where it contracts (_einsum_contracts), end in bfloat16)
    _LOWER: """conv1d conv2d conv3d bmm mm linalg.vecdot baddbmm addmm addbmm linear matmul
        conv_tbc conv_transpose1d conv_transpose2d conv_transpose3d prelu
        scaled_dot_product_attention einsum tensordot""",
    _FP32: """avg_pool3d binary_cross_entropy grid_sample polar prod quantile nanquantile stft
        cdist trace view_as_complex cholesky cholesky_inverse cholesky_solve inverse lu_solve
        orgqr ormqr pinverse max_pool3d max_unpool2d max_unpool3d adaptive_avg_pool3d
        mse_loss cosine_embedding_loss nll_loss hinge_embedding_loss poisson_nll_loss
        smooth_l1_loss cross_entropy l1_loss huber_loss margin_ranking_loss soft_margin_loss
        triplet_margin_loss multi_margin_loss ctc_loss kl_div multilabel_margin_loss
        binary_cross_entropy_with_logits geqrf qr svd triangular_solve fractional_max_pool2d
        fractional_max_pool3d adaptive_max_pool3d linalg.cond linalg.matrix_rank linalg.solve
        linalg.cholesky linalg.svdvals linalg.eigvals linalg.eigvalsh linalg.inv
        linalg.householder_product linalg.tensorinv linalg.tensorsolve linalg.qr
        linalg.cholesky_ex linalg.svd linalg.eig linalg.eigh linalg.lstsq linalg.inv_ex""",
    _PROMOTE: "stack cat index_copy",
}


def _table(policy):
    return {name: cat for cat, names in policy.items() for name in names.split()}


POLICY = {"cuda": _table(_CUDA_POLICY), "cpu": _table(_CPU_POLICY)}

DEFAULT_DTYPE = {"cuda": "float16", "cpu": "bfloat16"}


class _State(threading.local):
    """The autocast state of this thread. ``active``: some device type is enabled and no
    autocast op is running (the one test a wrapped op makes)."""

    def __init__(self):
        import framework as fw
        self.enabled = {"cpu": False, "cuda": False}
        self.dtype = {d: getattr(fw, n) for d, n in DEFAULT_DTYPE.items()}
        self.cache_enabled = True
        self.nesting = 0
        self.cache = {}
        self.excluded = 0       # > 0 inside an autocast op and in backward passes
        self.active = False

    def refresh(self):
        self.active = not self.excluded and any(self.enabled.values())


state = _State()


def _eligible(t, dev):
    return (isinstance(t, Tensor) and t._storage.device.type == dev
            and t.dtype.is_floating_point and t.dtype.name != "float64")


def _cast(t, to, dev):
    """``t`` as ``to`` if it is an eligible tensor (lists and tuples element-wise)."""
    if isinstance(t, (list, tuple)):
        return type(t)(_cast(x, to, dev) for x in t)
    if not _eligible(t, dev) or t.dtype is to:
        return t
    # the weights: cast once per autocast region (PyTorch's cache of lower-precision casts)
    if (state.cache_enabled and to is state.dtype[dev] and t.dtype.name == "float32"
            and t._requires_grad and t.is_leaf and not t._is_view()):
        hit = state.cache.get(id(t))
        if hit is not None and hit[0] is t:
            return hit[1]
        out = t.to(to)
        state.cache[id(t)] = (t, out)
        return out
    return t.to(to)


def _tensors(args, kwargs):
    for a in args:
        if isinstance(a, Tensor):
            yield a
        elif isinstance(a, (list, tuple)):
            yield from (x for x in a if isinstance(x, Tensor))
    for a in kwargs.values():
        if isinstance(a, Tensor):
            yield a


def _widest(args, kwargs, dev):
    """PyTorch's ``promote``: float32 if any eligible argument is float32, else the
    lower-precision type (float16 with bfloat16 gives float32)."""
    kinds = {t.dtype for t in _tensors(args, kwargs) if _eligible(t, dev)}
    if not kinds:
        return None
    return kinds.pop() if len(kinds) == 1 else (_fw or _modules()).float32


_BANNED_MSG = (
    "{name}: framework.nn.functional.binary_cross_entropy and framework.nn.BCELoss are "
    "unsafe to autocast.\nMany models use a sigmoid layer right before the binary cross "
    "entropy layer.\nIn this case, combine the two layers using "
    "framework.nn.functional.binary_cross_entropy_with_logits\nor framework.nn.BCEWithLogitsLoss."
    "  binary_cross_entropy_with_logits and BCEWithLogits are\nsafe to autocast.")


_fw = _al = None   # framework and autocast_linear: imported on first use (an import cycle)


def _modules():
    global _fw, _al
    import framework
    from . import autocast_linear
    _fw, _al = framework, autocast_linear
    return framework


def _needs_cast(args, kwargs, to, dev):
    """Whether some eligible tensor argument is not already ``to``."""
    for t in _tensors(args, kwargs):
        if t.dtype is not to and _eligible(t, dev):
            return True
    return False


def _run(fn, name, policies, dtype_pos, args, kwargs):
    fw = _fw or _modules()
    if kwargs and kwargs.get("out") is not None:   # out= variants are not autocast (PyTorch's)
        return fn(*args, **kwargs)
    a0 = args[0] if args else None
    if isinstance(a0, Tensor):   # the usual call: the device of the first argument
        dev = a0._storage.device.type
    else:
        dev = next((t._storage.device.type for t in _tensors(args, kwargs)), None)
    cat = policies.get(dev)
    st = state
    if cat is None or not st.enabled[dev]:
        return fn(*args, **kwargs)
    if cat == _BANNED:
        raise RuntimeError(_BANNED_MSG.format(name=name))
    if name == "einsum" and dev == "cpu" and not _einsum_contracts(args, kwargs):
        cat = _PROMOTE   # PyTorch multiplies there, in the widest type of the operands
    st.excluded += 1
    st.active = False
    try:
        if cat == _FP32_DTYPE:
            given = kwargs.get("dtype") is not None or (
                dtype_pos is not None and len(args) > dtype_pos and args[dtype_pos] is not None)
            if not given and args and _eligible(args[0], dev):
                kwargs = dict(kwargs, dtype=fw.float32)
            return fn(*args, **kwargs)
        to = (st.dtype[dev] if cat == _LOWER else fw.float32 if cat == _FP32
              else _widest(args, kwargs, dev))
        if name == "linear" and cat == _LOWER:
            fused = _fused_linear(args, kwargs, to)
            if fused is not None:
                return fused
        if to is not None and _needs_cast(args, kwargs, to, dev):
            args = tuple(_cast(a, to, dev) for a in args)
            kwargs = {k: _cast(v, to, dev) for k, v in kwargs.items()}
        return fn(*args, **kwargs)
    finally:
        st.excluded -= 1
        st.refresh()


def _einsum_contracts(args, kwargs):
    """Whether an einsum sums a label that two operands share: PyTorch's CPU einsum then
    calls bmm (autocast to the lower precision); else it multiplies, promoting types."""
    eq = args[0] if args else kwargs.get("equation")
    if not isinstance(eq, str):
        return True
    lhs, arrow, rhs = eq.replace(" ", "").partition("->")
    terms = [set(c for c in t if c.isalpha()) for t in lhs.split(",")]
    if arrow:
        out = set(c for c in rhs if c.isalpha())
    else:   # implicit output: the labels that appear once
        letters = [c for c in lhs if c.isalpha()]
        out = {c for c in letters if letters.count(c) == 1}
    return any(c not in out and sum(c in t for t in terms) >= 2 for c in set().union(*terms))


def _fused_linear(args, kwargs, to):
    """linear's casts done by its GEMM (framework._autocast_linear: the same bits, no cast
    kernels), where its arguments allow; else None."""
    if not kwargs and 2 <= len(args) <= 3:     # the usual call: linear(x, w[, b])
        x, w, b = args[0], args[1], args[2] if len(args) == 3 else None
    else:
        if len(args) + len(kwargs) > 3:
            return None
        names = ("input", "weight", "bias")
        vals = dict(zip(names, args), **kwargs)
        if set(vals) - set(names) or "input" not in vals or "weight" not in vals:
            return None
        x, w, b = vals["input"], vals["weight"], vals.get("bias")
    if not _al.applies(x, w, b, to):
        return None
    return _fw._autocast_linear(x, w, b, to)


def wrap(fn, name, policies):
    """``fn`` under the autocast policies {device type: category} of op ``name``."""
    try:
        params = list(inspect.signature(fn).parameters)
        dtype_pos = params.index("dtype") if "dtype" in params else None
    except (TypeError, ValueError):
        dtype_pos = None
    st = state

    @functools.wraps(fn)
    def autocast_op(*args, **kwargs):
        if not st.active:
            return fn(*args, **kwargs)
        return _run(fn, name, policies, dtype_pos, args, kwargs)
    autocast_op._autocast_wrapped = fn
    return autocast_op


# nn.functional's softmax and log_softmax only resolve an implicit dim and call the table's
# op, which carries the policy; a wrapper around them would also put a frame between their
# deprecation warning and the caller it points at
_CALLS_WRAPPED = {"softmax", "log_softmax"}


def install(namespaces):
    """Wraps every listed op found in ``namespaces``, pairs (prefix, module or class):
    ``("", framework)``, ``("", Tensor)``, ``("nn.functional.", ...)`` take the plain names,
    ``("linalg.", framework.linalg)`` the ``linalg.`` ones. A function bound in several
    places (``framework.exp`` and ``Tensor.exp``) gets one wrapper, which the op table's
    row then holds too. Returns the names wrapped."""
    from .dispatcher import _name_for_pickle, ops
    made = {}       # id(original) -> wrapper
    for prefix, where in namespaces:
        for name in sorted(set(POLICY["cuda"]) | set(POLICY["cpu"])):
            if ("." in name) != (prefix == "linalg.") or not name.startswith(
                    prefix if prefix == "linalg." else ""):
                continue
            short = name.rpartition(".")[2]
            if prefix == "nn.functional." and short in _CALLS_WRAPPED:
                continue
            fn = vars(where).get(short) if isinstance(where, type) else getattr(where, short, None)
            # (nn.functional.norm is a submodule, not an op)
            if not callable(fn) or isinstance(fn, type) or hasattr(fn, "_autocast_wrapped"):
                continue
            if id(fn) not in made:
                made[id(fn)] = wrap(fn, name, {d: POLICY[d][name] for d in POLICY
                                               if name in POLICY[d]})
            setattr(where, short, made[id(fn)])
            if not isinstance(where, type):
                _name_for_pickle(made[id(fn)], where.__name__.partition(".")[2], short)
    for op in ops().values():
        op.fn = made.get(id(op.fn), op.fn)
        op.method_fn = made.get(id(op.method_fn), op.method_fn)
    # module classes that captured an op when defined (Conv2d._FN = staticmethod(F.conv2d))
    from ..profiler._record import module_functions
    for cls, attr, fn in list(module_functions()):
        if id(fn) in made:
            setattr(cls, attr, staticmethod(made[id(fn)]))
    return sorted({w.__name__ for w in made.values()})


# ---- the state, as PyTorch's torch.* functions -------------------------------------------

def _device_type(device_type):
    if device_type not in state.enabled:
        raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
    return device_type


def is_autocast_enabled(device_type=None):
    """Whether autocast is enabled for ``device_type`` (cuda when not given)."""
    return state.enabled[_device_type(device_type or "cuda")]


def set_autocast_enabled(device_type, enabled=None):
    if enabled is None:      # the old one-argument form: set_autocast_enabled(enabled), cuda
        device_type, enabled = "cuda", device_type
    state.enabled[_device_type(device_type)] = bool(enabled)
    state.refresh()


def get_autocast_dtype(device_type):
    return state.dtype[_device_type(device_type)]


def set_autocast_dtype(device_type, dtype):
    state.dtype[_device_type(device_type)] = dtype


def is_autocast_cache_enabled():
    return state.cache_enabled


def set_autocast_cache_enabled(enabled):
    state.cache_enabled = bool(enabled)


def clear_autocast_cache():
    """Drops the cached lower-precision copies of the weights."""
    state.cache.clear()


def autocast_increment_nesting():
    state.nesting += 1
    return state.nesting


def autocast_decrement_nesting():
    state.nesting -= 1
    return state.nesting


class disabled:
    """Turns autocast off for a block (the engine runs backward passes under it)."""

    __slots__ = ()

    def __enter__(self):
        state.excluded += 1
        state.active = False

    def __exit__(self, *exc):
        state.excluded -= 1
        state.refresh()
