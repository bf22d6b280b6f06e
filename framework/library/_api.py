"""The module-level API of ``framework.library``: ``register_*``, ``get_kernel``, ``get_ctx``,
``opcheck``, ``triton_op`` / ``wrap_triton``, and the older ``Library`` / ``define`` / ``impl``."""
import re

from .._tensor import Tensor
from ._schema import _iter_tensors, infer_schema
from ._kernel import _BACKEND_DEVICE, SafeKernelFunction, key_name
from ._registry import OPDEFS, OpOverload, OpOverloadPacket, _AtenOp, ops
from ._custom_op import CustomOpDef, custom_op

# ----------------------------------------------------------------------------------------
# module-level registration functions
# ----------------------------------------------------------------------------------------

def _opdef(op, what):
    if isinstance(op, CustomOpDef):
        return op
    if isinstance(op, (OpOverload, OpOverloadPacket)):
        return op._opdef
    if isinstance(op, str):
        d = OPDEFS.get(op)
        if d is not None:
            return d
        raise RuntimeError(f"{what}: no custom op named '{op}' was defined "
                           "(define it with framework.library.custom_op or Library.define)")
    raise ValueError(f"{what}(op): got unexpected type for op: {type(op)}")


def register_kernel(op, device_types, func=None, /, *, lib=None):
    """``torch.library.register_kernel``: ``op`` is a custom op or its name."""
    return _opdef(op, "register_kernel").register_kernel(device_types, func)


def register_fake(op, func=None, /, *, lib=None, _stacklevel=1, allow_override=True):
    """``torch.library.register_fake``: registers the op's fake (meta) implementation."""
    d = _opdef(op, "register_fake")
    if func is None:
        return d.register_fake
    return d.register_fake(func)


impl_abstract = register_fake


def register_autograd(op, backward, /, *, setup_context=None, lib=None):
    """``torch.library.register_autograd``."""
    return _opdef(op, "register_autograd").register_autograd(backward,
                                                              setup_context=setup_context)


def register_torch_dispatch(op, torch_dispatch_class, func=None, /, *, lib=None):
    raise NotImplementedError(
        "register_torch_dispatch: framework has no __torch_dispatch__ (tensor subclasses "
        "and dispatch modes are not supported)")


def register_vmap(op, func=None, /, *, lib=None):
    raise NotImplementedError("register_vmap: framework has no vmap")


def register_autocast(op, device_type, cast_inputs, /, *, lib=None):
    """``torch.library.register_autocast``: inside an autocast region of ``device_type`` the
    custom op's floating-point inputs are cast to ``cast_inputs`` and it runs with autocast
    off."""
    from .._ops import autocast
    if device_type not in autocast.state.enabled:
        raise ValueError(f"Device type '{device_type}' does not support autocast.")
    if isinstance(op, str) and op not in OPDEFS:    # PyTorch's AttributeError for a bad name
        ns, _, name = op.partition("::")
        getattr(getattr(ops, ns), name.partition(".")[0])
    return _opdef(op, "register_autocast").register_autocast(device_type, cast_inputs)


def get_kernel(op, dispatch_key, /):
    """The kernel of ``op`` (a name with its overload such as "aten::add.Tensor", an
    OpOverload or a custom op) for ``dispatch_key`` ("CPU", "CUDA",
    ``DispatchKey.CPU``, ...), as a ``SafeKernelFunction`` to ``call_boxed``."""
    key = key_name(dispatch_key)
    below_autograd = key in _BACKEND_DEVICE
    aten = _aten_op(op)
    if aten is not None:
        qualname, fn = aten
        return SafeKernelFunction(qualname, key, fn, below_autograd)
    d = _opdef(op, "get_kernel")
    dev = _DEVICE_OF_KEY.get(key, key)
    fn = d._backend_fns.get(dev) or d._backend_fns.get(None)
    if fn is None:
        raise RuntimeError(f"no kernel registered for {d._qualname} and dispatch key "
                           f"{dispatch_key}")
    return SafeKernelFunction(d._qualname, key, fn, below_autograd)


def _aten_op(op):
    """(qualified name, framework function) of a built-in op named "aten::name[.overload]"
    or given as ``framework.ops.aten.name[.overload]``; None for other ops."""
    if isinstance(op, _AtenOp):
        return "aten::" + str(op)[len("aten."):], op._fn
    if not (isinstance(op, str) and op.startswith("aten::")):
        return None
    name = op[len("aten::"):].partition(".")[0]
    try:
        fn = getattr(ops.aten, name)._fn
    except AttributeError:
        raise RuntimeError(f"operator {op} does not exist") from None
    return op, fn


def get_ctx():
    raise RuntimeError("get_ctx() called outside of a fake (meta) implementation: "
                       "framework has no fake tensors or data-dependent output shapes")


def opcheck(op, args, kwargs=None, *, test_utils=None, raise_exception=True, atol=None,
            rtol=None):
    """A small ``torch.library.opcheck``: calls the op and checks that its outputs are
    fresh tensors and (with ``register_autograd``) that a backward runs. Returns a dict of
    test name -> "SUCCESS" (PyTorch's format)."""
    kwargs = kwargs or {}
    d = _opdef(op, "opcheck")
    results = {}
    try:
        out = d(*args, **kwargs)
        results["test_schema"] = "SUCCESS"
        from .. import autograd
        outs = [o for o in (out if isinstance(out, (tuple, list)) else (out,))
                if isinstance(o, Tensor) and o.requires_grad]
        ins = [t for t in _iter_tensors(list(args) + list(kwargs.values())) if t.requires_grad]
        if outs and ins:
            autograd.grad([o.sum() for o in outs], ins, allow_unused=True)
        results["test_autograd_registration"] = "SUCCESS"
    except Exception as e:
        if raise_exception:
            raise
        results.setdefault("test_schema", e)
        results["test_autograd_registration"] = e
    return results


# ----------------------------------------------------------------------------------------
# triton_op / wrap_triton
# ----------------------------------------------------------------------------------------

def triton_op(name, fn=None, /, *, mutates_args, schema=None):
    """``torch.library.triton_op``: a custom op whose implementation launches Triton
    kernels (through ``wrap_triton``). Here it is ``custom_op``: the kernels run eagerly."""

    def dec(fn):
        def backend_fn(*args, **kwargs):
            return fn(*args, **kwargs)
        backend_fn.__name__ = getattr(fn, "__name__", "backend_fn")
        backend_fn.__qualname__ = getattr(fn, "__qualname__", "backend_fn")
        backend_fn.__module__ = getattr(fn, "__module__", __name__)
        result = custom_op(name, backend_fn, mutates_args=mutates_args,
                           schema=schema if schema is not None
                           else infer_schema(fn, mutates_args=mutates_args))
        result._init_fn = fn
        result.register_fake(fn)
        return result

    if fn is None:
        return dec
    return dec(fn)


def wrap_triton(triton_kernel, /):
    """``torch.library.wrap_triton``: makes a Triton kernel callable from a ``triton_op``
    so ``torch.compile`` can trace it. Here there is no tracing: ``wrap_triton(k)[grid](...)``
    launches ``k``, so the kernel itself is returned."""
    try:
        from triton.runtime.autotuner import Autotuner
        from triton.runtime.jit import JITFunction
        kinds = (JITFunction, Autotuner)
    except ImportError:          # pragma: no cover
        kinds = ()
    try:
        from triton.runtime.interpreter import InterpretedFunction
        kinds = kinds + (InterpretedFunction,)
    except ImportError:          # pragma: no cover
        pass
    if kinds and isinstance(triton_kernel, kinds):
        return triton_kernel
    raise RuntimeError("wrap_triton only works on functions annotated with triton.jit or "
                       "triton.autotune")


# ----------------------------------------------------------------------------------------
# the older API: Library, define, impl
# ----------------------------------------------------------------------------------------

_DEVICE_OF_KEY = {"CPU": "cpu", "CUDA": "cuda", "Meta": "meta",
                  "CompositeExplicitAutograd": None, "CompositeImplicitAutograd": None,
                  "Autograd": None, "AutogradCPU": "cpu", "AutogradCUDA": "cuda",
                  "": None, "Default": None}


def fallthrough_kernel():
    """A dummy kernel marking a dispatch key to fall through (accepted and ignored)."""
    raise NotImplementedError("fallthrough_kernel() should never be called.")


class Library:
    """``torch.library.Library(ns, kind)``: ``kind`` is "DEF" (a new namespace), "FRAGMENT"
    (more ops in one) or "IMPL" (kernels for existing ops). ``define(schema)`` declares an
    op (``"foo(Tensor x) -> Tensor"``), ``impl(name, fn, dispatch_key)`` registers a kernel
    ("CPU", "CUDA", "Meta", "CompositeExplicitAutograd"; "CompositeImplicitAutograd" and
    "Autograd" kernels are differentiable through the framework ops they call)."""

    def __init__(self, ns, kind, dispatch_key=""):
        if kind not in ("IMPL", "DEF", "FRAGMENT"):
            raise ValueError("Unsupported kind: ", kind)
        if ns in ("aten",) and kind == "DEF":
            raise ValueError(f"Creating library with kind {kind} for namespace {ns} is not "
                             "allowed")
        self.ns = ns
        self.kind = kind
        self.dispatch_key = dispatch_key
        self._op_defs = set()

    def __repr__(self):
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})>"

    def define(self, schema, alias_analysis="", *, tags=()):
        """Defines a new op from a schema string; returns its name."""
        m = re.match(r"^\s*([A-Za-z_][A-Za-z0-9_]*)(\.[A-Za-z0-9_]+)?\s*(\(.*)$", schema, re.S)
        if not m:
            raise RuntimeError(f"expected ident but found '(' here:\n{schema}\n")
        name = m.group(1)
        qual = f"{self.ns}::{name}"
        d = CustomOpDef(self.ns, name, m.group(3), None)
        d._library_op = True
        d._autograd_keys = set()
        self._op_defs.add(qual)
        return name

    def _register_fake(self, op_name, fn, _stacklevel=1, *, allow_override=False):
        _opdef(self._qual(op_name), "register_fake").register_fake(fn)

    def _qual(self, op_name):
        if isinstance(op_name, (OpOverload, OpOverloadPacket)):
            return op_name._opdef._qualname
        if callable(op_name) and not isinstance(op_name, str):
            return _opdef(op_name, "impl")._qualname
        name = op_name.split(".")[0]
        return name if "::" in name else f"{self.ns}::{name}"

    def impl(self, op_name, fn, dispatch_key="", *, with_keyset=False, allow_override=False):
        """Registers ``fn`` as the kernel of ``op_name`` for ``dispatch_key``."""
        if not callable(fn):
            raise TypeError(f"Input function is required to be a callable but found type "
                            f"{type(fn)}")
        if dispatch_key == "":
            dispatch_key = self.dispatch_key or "CompositeImplicitAutograd"
        qual = self._qual(op_name)
        d = OPDEFS.get(qual)
        if d is None:
            if self.ns == "aten" or qual.startswith("aten::"):
                raise NotImplementedError(
                    "Library.impl: overriding framework's built-in (aten) ops is not "
                    "supported")
            raise RuntimeError(f"operator {qual} does not exist; define it first with "
                               f"Library.define")
        if with_keyset:
            inner = fn

            def fn(*args, **kwargs):      # noqa: F811  (no dispatch key sets here)
                return inner(None, *args, **kwargs)
        if fn is fallthrough_kernel:
            return
        if dispatch_key not in _DEVICE_OF_KEY:
            raise ValueError(f"Library.impl: dispatch key {dispatch_key!r} is not supported "
                             f"here (use one of {', '.join(k for k in _DEVICE_OF_KEY if k)})")
        dev = _DEVICE_OF_KEY[dispatch_key]
        if dispatch_key == "Meta":
            d.register_fake(fn)
        elif dispatch_key in ("CompositeImplicitAutograd", "Autograd", "AutogradCPU",
                              "AutogradCUDA"):
            # differentiable through the framework ops fn calls: no generated node
            d._implicit = getattr(d, "_implicit", {})
            d._implicit[dev] = fn
        else:
            d._backend_fns[dev] = fn
        d._patch_library_call()

    def fallback(self, fn, dispatch_key="", *, with_keyset=False):
        raise NotImplementedError("Library.fallback is not supported")

    def _destroy(self):
        for q in self._op_defs:
            OPDEFS.pop(q, None)
        self._op_defs = set()




def _library_call(self, *args, **kwargs):
    """Call of an op defined with ``Library.define``: an implicit-autograd kernel runs with
    autograd (framework records what it calls); a backend kernel runs as a custom op's."""
    args, kwargs = self._parsed.bind(args, kwargs)
    implicit = getattr(self, "_implicit", {})
    if implicit:
        tensors = list(_iter_tensors(args))
        dev = tensors[0].device.type if tensors else None
        fn = implicit.get(dev) or implicit.get(None)
        if fn is not None and not (dev in self._backend_fns):
            return fn(*args, **kwargs)
    from ..autograd import grad_mode
    if grad_mode._mode.enabled and any(t._requires_grad for t in _iter_tensors(args)):
        return self._autograd_fn.apply_op(args, kwargs)
    return self._dispatch(args, kwargs)


def _patch_library_call(self):
    if getattr(self, "_library_op", False):
        self.__class__ = _LibraryOpDef


CustomOpDef._patch_library_call = _patch_library_call


class _LibraryOpDef(CustomOpDef):
    __call__ = _library_call


_defs = set()
_keep_alive = []


def define(qualname, schema, *, lib=None, tags=()):
    """``torch.library.define("mylib::foo", "(Tensor x) -> Tensor")``: defines an op."""
    if not isinstance(qualname, str):
        raise ValueError(f"define(qualname, schema): expected qualname to be instance of "
                         f"str, got {type(qualname)}")
    namespace, name = qualname.split("::")
    if lib is None:
        lib = Library(namespace, "FRAGMENT")
        _keep_alive.append(lib)
    if not schema.lstrip().startswith("("):
        raise ValueError(f"define(qualname, schema, ...): expected schema to look like e.g. "
                         f"\"(Tensor x) -> Tensor\" but got \"{schema}\"")
    lib.define(name + schema, tags=tags)
    _defs.add(qualname)


def impl(qualname, types, func=None, *, lib=None):
    """``torch.library.impl("mylib::foo", "cpu")``: registers a kernel for device types
    ("cpu", "cuda", or "default" for every device). Usable as a decorator."""
    if isinstance(types, str):
        types = (types,)
    keys = set()
    for typ in types:
        if typ in ("default", "CompositeImplicitAutograd"):
            keys.add("CompositeImplicitAutograd")
        elif typ in _DEVICE_OF_KEY:
            keys.add(typ)
        else:
            keys.add({"cpu": "CPU", "cuda": "CUDA", "meta": "Meta"}.get(typ, typ))

    def register(func):
        namespace, _ = _opdef(qualname, "impl")._qualname.split("::")
        use = lib
        if use is None:
            use = Library(namespace, "FRAGMENT")
            _keep_alive.append(use)
        for key in keys:
            use.impl(qualname, func, key)
        return func

    if func is None:
        return register
    return register(func)
