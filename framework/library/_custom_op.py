"""``custom_op``, ``CustomOpDef`` (a function made a custom op) and the ``autograd.Function``
generated for each op."""
import contextlib
import logging
import re
import sys

from .._tensor import Tensor
from ._schema import _Schema, _convert_scalar, _detached, _iter_tensors, infer_schema
from ._registry import OPDEFS, OpOverload, OpOverloadPacket

log = logging.getLogger(__package__)     # "framework.library", as before the split


def _traced_arg(args, kwargs):
    """The first fx Proxy among the arguments (also inside lists), or None."""
    from ..fx.proxy import Proxy
    for a in (*args, *kwargs.values()):
        if isinstance(a, Proxy):
            return a
        if isinstance(a, (list, tuple)):
            for b in a:
                if isinstance(b, Proxy):
                    return b
    return None


# ----------------------------------------------------------------------------------------
# custom_op and CustomOpDef
# ----------------------------------------------------------------------------------------

def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None, tags=None):
    """Wraps a function into a custom operator named ``"namespace::name"``, as
    ``torch.library.custom_op``: the function needs type hints (the schema is inferred from
    them unless ``schema`` is given); ``mutates_args`` names the arguments it writes in place
    (or ``"unknown"``); ``device_types`` restricts the function to those device types (it
    is the kernel for every device type when None). Usable as a decorator."""

    def inner(fn):
        if schema is None:
            schema_str = infer_schema(fn, mutates_args=mutates_args)
        else:
            schema_str = schema
        namespace, opname = name.split("::")
        result = CustomOpDef(namespace, opname, schema_str, fn)
        if schema is not None:
            expected = {a.name for a in result._parsed.arguments if a.is_write}
            if expected != set(mutates_args):
                raise ValueError(
                    f"Attempted to create a custom op with `mutates_args={mutates_args}` "
                    f"and `schema={schema}. The schema suggests that the op mutates {expected}"
                    f"which is different from what was provided to us in `mutates_args`. "
                    f"Please make these consistent.")
        result.register_kernel(device_types)(fn)
        return result

    if fn is None:
        return inner
    return inner(fn)


class CustomOpDef:
    """A function made a custom op (``custom_op`` returns it): callable, with
    ``register_kernel``, ``register_fake``, ``register_autograd`` and
    ``set_kernel_enabled``."""

    def __init__(self, namespace, name, schema, fn, tags=None):
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", name):
            bad = f"{name}{schema}"
            raise RuntimeError(f"expected eof but found 'ident' here:\n{bad}\n")
        self._namespace = namespace
        self._name = name
        self._schema = schema
        self._tags = tags
        self._init_fn = fn
        self._parsed = _Schema(f"{namespace}::{name}", schema)
        self._backend_fns = {}
        self._abstract_fn = None
        self._setup_context_fn = None
        self._backward_fn = None
        self._torch_dispatch_fns = {}
        self._disabled_kernel = set()
        self._autocast_dtypes = {}   # device type -> dtype (register_autocast)
        self._has_kwarg_only = any(a.kwarg_only for a in self._parsed.arguments)
        if any(a.kwarg_only and a.is_tensor_like for a in self._parsed.arguments):
            raise NotImplementedError(
                f"custom_op with kwarg-only Tensor args. Please make your "
                f"tensors not kwarg-only. Got: {name}{schema}")
        self._opoverload = OpOverload(self)
        self._packet = OpOverloadPacket(self)
        self._packet.default = self._opoverload
        self._autograd_fn = _make_autograd_function(self)
        if fn is not None:
            self.__name__ = getattr(fn, "__name__", name)
            self.__doc__ = getattr(fn, "__doc__", None)
            self.__module__ = getattr(fn, "__module__", __name__)
            self.__qualname__ = getattr(fn, "__qualname__", name)
        else:
            self.__name__ = name
        OPDEFS[self._qualname] = self

    @property
    def _qualname(self):
        return f"{self._namespace}::{self._name}"

    def __repr__(self):
        return f"<CustomOpDef({self._qualname})>"

    # -- registration ------------------------------------------------------------------------
    @contextlib.contextmanager
    def set_kernel_enabled(self, device_type, enabled=True):
        """Disables (or re-enables) the kernel registered for ``device_type`` within the
        block: the default kernel runs instead."""
        action = "enable" if enabled else "disable"
        originally_disabled = device_type in self._disabled_kernel
        if device_type not in self._backend_fns:
            log.warning("Attempted to %s kernel for %s but no kernel was registered for this "
                        "device type.", action, device_type)
        if not enabled:
            if originally_disabled:
                log.warning("Attempted to disable kernel for %s but it was already disabled.",
                            device_type)
            else:
                self._disabled_kernel.add(device_type)
        else:
            if not originally_disabled:
                log.warning("Attempted to enable kernel for  %s but it was already enabled.",
                            device_type)
            else:
                self._disabled_kernel.remove(device_type)
        try:
            yield
        finally:
            if originally_disabled:
                self._disabled_kernel.add(device_type)
            else:
                self._disabled_kernel.discard(device_type)

    def register_kernel(self, device_types, fn=None, /):
        """Registers ``fn`` as this op's implementation for ``device_types`` ("cpu",
        "cuda", or a sequence of them; None: every device type). Usable as a decorator."""

        def inner(fn):
            if device_types is None or isinstance(device_types, str):
                dtypes = [device_types]
            else:
                dtypes = list(device_types)
            for device_type in dtypes:
                if device_type is not None and not isinstance(device_type, str):
                    raise TypeError(f"register_kernel: device type must be a str, got "
                                    f"{type(device_type).__name__}")
                self._backend_fns[device_type] = fn
            return fn

        if device_types is not None and not any(a.is_tensor_like
                                                for a in self._parsed.arguments):
            if not any(a.base == "Device" for a in self._parsed.arguments):
                raise ValueError("Functions without tensor inputs are required to have a "
                                 "`device: torch.device` argument")
        if fn is None:
            return inner
        return inner(fn)

    def register_fake(self, fn, /):
        """Registers the fake (meta) implementation: it gives the outputs' shapes, dtypes
        and devices without computing them. Here it runs for ``meta`` tensors."""
        self._abstract_fn = fn
        return fn

    def register_torch_dispatch(self, torch_dispatch_class, fn=None, /):
        raise NotImplementedError(
            "register_torch_dispatch: framework has no __torch_dispatch__ (tensor subclasses "
            "and dispatch modes are not supported)")

    def register_vmap(self, func=None):
        raise NotImplementedError("register_vmap: framework has no vmap")

    def register_autocast(self, device_type, cast_inputs):
        """Inside an autocast region of ``device_type``, the op's floating-point tensor
        inputs on that device (not float64) are cast to ``cast_inputs`` and the op runs
        with autocast off."""
        from .._ops import autocast
        if device_type not in autocast.state.enabled:
            raise ValueError(f"Device type '{device_type}' does not support autocast.")
        self._autocast_dtypes[device_type] = cast_inputs

    def register_autograd(self, backward, /, *, setup_context=None):
        """Registers the backward formula: ``backward(ctx, *grads)`` returns one gradient
        per input (None for non-Tensor inputs), ``setup_context(ctx, inputs, output)`` (with
        keyword-only arguments: ``setup_context(ctx, inputs, keyword_only_inputs,
        output)``) saves what it needs on ``ctx`` in the forward pass."""
        s = self._parsed
        if not _is_functional(s):
            raise RuntimeError(
                f"Cannot register autograd formula for non-functional operator "
                f"{self} with schema {s}. Please create "
                f"a functional operator and register an autograd formula for that.")
        self._backward_fn = backward
        self._setup_context_fn = setup_context

    # -- calling -----------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        proxy = _traced_arg(args, kwargs)
        if proxy is not None:   # fx tracing / framework.compile: one opaque node, as torch.fx
            return proxy.tracer.create_proxy("call_function", self, args, kwargs)
        args, kwargs = self._parsed.bind(args, kwargs)
        if self._autocast_dtypes:
            from .._ops import autocast
            if autocast.state.active:
                return self._autocast_call(autocast, args, kwargs)
        return self._call_bound(args, kwargs)

    def _autocast_call(self, autocast, args, kwargs):
        """The call inside autocast (register_autocast): inputs cast, autocast off."""
        st = autocast.state
        types = [t.device.type for t in _iter_tensors(list(args) + list(kwargs.values()))]
        dev = next((d for d in types if d != "cpu"), "cpu") if types else None
        to = self._autocast_dtypes.get(dev)
        if to is None or not st.enabled[dev]:
            return self._call_bound(args, kwargs)

        def cast(v):
            if isinstance(v, (list, tuple)):
                return type(v)(cast(x) for x in v)
            return v.to(to) if autocast._eligible(v, dev) else v
        args = tuple(cast(a) for a in args)
        kwargs = {k: cast(v) for k, v in kwargs.items()}
        st.excluded += 1
        st.active = False
        try:
            return self._call_bound(args, kwargs)
        finally:
            st.excluded -= 1
            st.refresh()

    def _call_bound(self, args, kwargs):
        from ..autograd import grad_mode
        if (grad_mode._mode.enabled
                and any(t._requires_grad for t in _iter_tensors(args))):
            return self._autograd_fn.apply_op(args, kwargs)
        return self._dispatch(args, kwargs)

    def _kernel_for(self, args, kwargs):
        tensors = list(_iter_tensors(args))
        if tensors:     # a cuda tensor wins over cpu ones, as in PyTorch's dispatcher
            types = [t.device.type for t in tensors]
            device_type = next((d for d in types if d != "cpu"), "cpu")
        else:
            devs = [v for a, v in zip(self._parsed.arguments, list(args) + list(kwargs.values()))
                    if a.base == "Device" and v is not None]
            device_type = devs[0].type if devs else None
            if (device_type is not None and device_type not in self._backend_fns
                    and any(k is not None for k in self._backend_fns)):
                raise RuntimeError(f"{self._name} does not have a kernel registered for "
                                   f"{device_type}. Please use register_kernel to do so.")
        if device_type == "meta":
            if self._abstract_fn is None:
                raise RuntimeError(
                    f"There was no fake impl registered for {self}. "
                    f"This is necessary for torch.compile/export/fx tracing to work. "
                    f"Please use `{getattr(self._init_fn, '__name__', self._name)}"
                    f".register_fake` to add an fake impl.")
            return self._abstract_fn
        fn = self._backend_fns.get(device_type)
        if fn is not None:
            if device_type in self._disabled_kernel and self._init_fn is not None:
                return self._init_fn
            return fn
        fn = self._backend_fns.get(None)
        if fn is not None:
            return fn
        key = {"cpu": "CPU", "cuda": "CUDA"}.get(device_type, str(device_type))
        avail = ", ".join({"cpu": "CPU", "cuda": "CUDA"}.get(k, str(k))
                          for k in self._backend_fns)
        raise NotImplementedError(
            f"Could not run '{self._qualname}' with arguments from the '{key}' backend. This "
            f"could be because the operator doesn't exist for this backend, or was omitted "
            f"during the selective/custom build process (if using custom build). "
            f"'{self._qualname}' is only available for these backends: [{avail}].")

    def _dispatch(self, args, kwargs):
        """Runs the kernel for the arguments' device (no autograd): bumps the version
        counters of the mutated arguments and checks the outputs."""
        s = self._parsed
        for a, v in zip(s.arguments, list(args) + list(kwargs.values())):
            if a.is_write and v is not None:
                for t in _iter_tensors([v]):
                    t._storage.version += 1
        fn = self._kernel_for(args, kwargs)
        # the kernel sees the inputs detached (same memory and version counter): PyTorch
        # runs it below autograd, where e.g. x.numpy() is allowed on an input requiring grad
        result = fn(*(_detached(a) for a in args), **kwargs)
        return self._check_result(result, args, kwargs)

    def _check_result(self, result, args, kwargs):
        s = self._parsed
        rets = s.returns
        if not s.returns_tuple:
            _check_ret(rets[0], result)
            outs = list(result) if rets[0].startswith("Tensor[") else [result]
        else:
            if len(rets) == 0:
                if result is not None:
                    raise RuntimeError(f"{self._name}: expected the implementation to return "
                                       f"None (the schema returns ()), got "
                                       f"{type(result).__name__}")
                return None
            if not isinstance(result, (tuple, list)) or len(result) != len(rets):
                raise RuntimeError(
                    f"Expected the implementation of {self._qualname} to return a tuple of "
                    f"{len(rets)} values (schema {s.declaration()}), got {type(result).__name__}")
            for r, v in zip(rets, result):
                _check_ret(r, v)
            outs = []
            for r, v in zip(rets, result):
                outs.extend(v if r.startswith("Tensor[") else [v])
            result = tuple(result)
        # aliasing: no output may be an input or share its memory (PyTorch's check)
        ins = list(_iter_tensors(list(args) + list(kwargs.values())))
        out_t = [o for o in outs if isinstance(o, Tensor)]
        bad = any(o._storage is i._storage for o in out_t for i in ins)
        bad = bad or any(o._storage is p._storage for k, o in enumerate(out_t)
                         for p in out_t[k + 1:])
        if bad:
            raise RuntimeError(
                f"{self._name} (with implementation in {sys.modules[__package__]}): The "
                "output of this custom operator (1) must not also be an input to this custom "
                "operator and (2) may not alias any inputs to this custom operator or other "
                "returns. The most common way to trigger this error is if we have y = "
                "custom_op(x) and y and x are the same Tensor. Please instead return a clone "
                "of the offending output tensor(s) (e.g. return x.clone()) or refactor the "
                "custom operator to not return y.")
        return result


def _check_ret(rtype, v):
    base = rtype.split("(")[0].rstrip("[]?")
    if rtype.startswith("Tensor["):
        if not isinstance(v, (list, tuple)) or not all(isinstance(x, Tensor) for x in v):
            raise RuntimeError(f"Unable to cast {v!r} to Tensor[]")
        return
    if base == "Tensor":
        if not isinstance(v, Tensor):
            raise RuntimeError(f"Unable to cast {v!r} to Tensor")
        return
    ok, _ = _convert_scalar(base, v)
    if not ok:
        raise RuntimeError(f"Unable to cast {v!r} to {base}")


def _is_functional(s):
    if s.is_mutable:
        return False
    if len(s.returns) == 0:
        return False
    if any("(" in r for r in s.returns):     # an aliased return (a view op)
        return False
    return True


# ----------------------------------------------------------------------------------------
# autograd
# ----------------------------------------------------------------------------------------

_NOT_REGISTERED = (
    "{}: an autograd kernel was not registered to the Autograd key(s) but we are trying to "
    "backprop through it. This may lead to silently incorrect behavior. This behavior is "
    "deprecated and will be removed in a future version of PyTorch. If your operator is "
    "differentiable, please ensure you have registered an autograd kernel to the correct "
    "Autograd key (e.g. DispatchKey::Autograd, DispatchKey::CompositeImplicitAutograd). If "
    "your operator is not differentiable, or to squash this warning and use the previous "
    "behavior, please register torch::CppFunction::makeFallthrough() to "
    "DispatchKey::Autograd.")


class _Metadata:
    __slots__ = ("keyword_only_args", "spec", "list_out", "args")

    def __init__(self, kwargs, spec, args):
        self.keyword_only_args = kwargs
        self.spec = spec               # per positional argument: None or a list's length
        self.list_out = None           # per output: None or a Tensor list's length
        self.args = args


def _make_autograd_function(opdef):
    from ..autograd.function import Function

    name = f"GeneratedBackwardFor_{opdef._namespace}_{opdef._name}_default"
    has_list = any(a.is_tensor_like and a.is_list for a in opdef._parsed.arguments)

    def forward(ctx, *flat):
        meta = flat[-1]
        ctx._op_meta = meta
        args, kwargs = meta.args, meta.keyword_only_args
        meta.args = None            # the node keeps no reference to the inputs
        result = opdef._dispatch(args, kwargs)
        if opdef._setup_context_fn:
            if opdef._has_kwarg_only:
                opdef._setup_context_fn(ctx=ctx, inputs=args, keyword_only_inputs=kwargs,
                                        output=result)
            else:
                opdef._setup_context_fn(ctx=ctx, inputs=args, output=result)
        # flatten Tensor-list outputs into the node's outputs
        rets = opdef._parsed.returns
        if opdef._parsed.returns_tuple:
            parts = list(result) if result is not None else []
        else:
            parts = [result]
        if any(r.startswith("Tensor[") for r in rets):
            meta.list_out = [len(p) if r.startswith("Tensor[") else None
                             for r, p in zip(rets, parts)]
            flat_out = []
            for r, p in zip(rets, parts):
                flat_out.extend(p if r.startswith("Tensor[") else [p])
            return tuple(flat_out)
        return result

    def backward(ctx, *grads):
        meta = ctx._op_meta
        if opdef._backward_fn is None and getattr(opdef, "_library_op", False):
            import warnings
            warnings.warn(_NOT_REGISTERED.format(opdef._qualname), UserWarning)
            return (None,) * len(ctx.needs_input_grad)
        if opdef._backward_fn is None:
            raise RuntimeError(
                f"Trying to backward through {opdef._opoverload} but no autograd "
                f"formula was registered. "
                f"Please use register_autograd to add one.")
        if meta.list_out is not None:     # regroup the flat output grads per output
            it = iter(grads)
            grads = tuple([next(it) for _ in range(n)] if n is not None else next(it)
                          for n in meta.list_out)
        prev = ctx.needs_input_grad
        flat_nig = prev[:-1]
        it = iter(flat_nig)
        nig = tuple([next(it) for _ in range(n)] if n is not None else next(it)
                    for n in meta.spec)
        try:
            ctx.needs_input_grad = nig
            result = opdef._backward_fn(ctx, *grads)
        finally:
            ctx.needs_input_grad = prev
        if has_list:
            res = result if isinstance(result, tuple) else (result,)
            ok = len(res) == len(meta.spec)
            flat = []
            if ok:
                for r, n in zip(res, meta.spec):
                    if n is None:
                        if isinstance(r, list):
                            ok = False
                            break
                        flat.append(r)
                    elif r is None:
                        flat.extend([None] * n)
                    elif isinstance(r, (list, tuple)) and len(r) == n:
                        flat.extend(r)
                    else:
                        ok = False
                        break
            if not ok:
                raise RuntimeError(
                    f"Expected the return from backward to be of the same structure "
                    f"as the inputs. Got: {_struct(res)} (return from backward), "
                    f"{_struct_spec(meta.spec)} (inputs)")
            return (*flat, None)
        out = (*result, None) if isinstance(result, tuple) else (result, None)
        n_in = len(flat_nig) + 1
        if len(out) > n_in and all(g is None for g in out[n_in:]):
            out = out[:n_in]
        if len(out) != n_in:
            raise RuntimeError(f"function {name}Backward returned an incorrect number of "
                               f"gradients (expected {n_in}, got {len(out)})")
        for i, (g, is_t) in enumerate(zip(out, ctx._arg_is_tensor)):
            if g is not None and not is_t:
                raise RuntimeError(
                    f"function {name}Backward returned a gradient different than None at "
                    f"position {i + 1}, but the corresponding forward input was not a "
                    f"Variable")
        return out

    cls = type(name, (Function,), {"forward": staticmethod(forward),
                                   "backward": staticmethod(backward)})

    def apply_op(args, kwargs):
        spec, flat = [], []
        for a, v in zip([x for x in opdef._parsed.arguments if not x.kwarg_only], args):
            if a.is_tensor_like and a.is_list and isinstance(v, (list, tuple)):
                spec.append(len(v))
                flat.extend(v)
            else:
                spec.append(None)
                flat.append(v)
        meta = _Metadata(kwargs, spec, args)
        out = cls.apply(*flat, meta)
        if meta.list_out is not None:
            it = iter(out if isinstance(out, tuple) else (out,))
            parts = [[next(it) for _ in range(n)] if n is not None else next(it)
                     for n in meta.list_out]
            return tuple(parts) if opdef._parsed.returns_tuple else parts[0]
        return out

    cls.apply_op = staticmethod(apply_op)
    return cls


def _struct_spec(spec):
    return "(" + ", ".join("*" if n is None else "[" + ", ".join("*" * n) + "]"
                           for n in spec) + ")"


def _struct(x):
    if isinstance(x, (list, tuple)):
        inner = ", ".join(_struct(v) for v in x)
        return f"[{inner}]" if isinstance(x, list) else f"({inner})"
    return "*"
