"""Matmul epilogue fusion: a matmul on cuda and the pointwise ops after it that read its
result become one generated Triton GEMM kernel, whose epilogue applies those ops to the
float32 accumulator before the single store.

Matmul forms (``resolve_mm``): ``F.linear`` with or without bias (and ``nn.Linear``, a leaf
of the trace, lowered to ``F.linear`` on its parameters first: ``lower_linear``), ``mm``,
``addmm`` with the default ``beta`` and ``alpha``, and ``matmul``/``@`` of a 2-D or batched
first operand, whose leading dims flatten into the rows, by a 2-D second one; float16,
bfloat16 or float32 operands of the result's dtype, on one cuda device. Under
``autocast(device_type="cuda")`` (the graph is traced, guarded and fused in one autocast
state) a matmul's float32 operands and bias are what eager autocast casts to its 16-bit
dtype: the kernel rounds each tile to it as it loads it (``_mm_loop``'s DOT_T, the same
bits as the cast), so a float32 weight costs no cast kernel.

The epilogue rounds the product (bias added in float32 to the float32 accumulator) and
each 16-bit value it computes to its dtype, as eager's kernels store them, so the ops after
it read eager's values; the group's backward recomputes its ops in the autocast state it
was traced in (trace.py), so its gradients are eager autocast's.

The epilogue (``gemm_groups``) takes, in graph order up to the next in-place op, each
fusible pointwise op (fuse.py's) of the matmul's output shape that reads a value of the
group, where every other tensor it reads (a bias, a residual) exists before the matmul;
an ``nn.Dropout`` that is the identity (``p == 0`` or in eval mode) passes its input on.
The values used outside the group are stored, in their dtypes.

The kernel's tiling, K loop and config choice are the eager GEMM's
(framework/kernels/linalg.py and fused_linear.py): ``_tile_ids`` (grouped program order),
``_tile_operands`` and ``_mm_loop`` (masked tiles, float32 accumulation, TF32 per
``framework.get_float32_matmul_precision()``), one small config under the interpreter and
the tensor-core configs autotuned with fused_linear's pruning on a GPU. No split-K.
"""
import hashlib

import triton

from .. import _matmul_precision, cuda
from .. import nn
from .._ops import alloc, autocast
from ..fx.passes.shape_prop import _extract_tensor_metadata
from ..kernels import fused_linear, linalg
from ..kernels.launcher import cdiv
from ..kernels.pointwise import _params_bits
from ..nn.modules import _hooks
from . import codegen
from .fuse import FLOATS, POINTWISE, Group, Op, _fusible, _scalar, resolve, tensor_meta

DOTS = ("float16", "bfloat16", "float32")
_linear_fn = _mm_fns = None


def _functions():
    """(F.linear, {id of a matmul function: its form})."""
    global _linear_fn, _mm_fns
    if _mm_fns is None:
        import operator

        import framework as fw
        import framework.nn.functional as F
        _linear_fn = F.linear
        _mm_fns = {id(F.linear): "linear", id(fw.mm): "mm", id(fw.addmm): "addmm",
                   id(fw.matmul): "matmul", id(operator.matmul): "matmul"}
    return _linear_fn, _mm_fns


def _plain_linear(node, root):
    """Whether ``node`` calls an ``nn.Linear`` (exactly) with no hooks, its own or global,
    to run around it (those added after compiling are not run: the graph is fixed)."""
    if node.op != "call_module":
        return False
    mod = root.get_submodule(node.target)
    return type(mod) is nn.Linear and not (
        mod._forward_hooks or mod._forward_pre_hooks or mod._backward_hooks
        or mod._backward_pre_hooks or _hooks._global_forward_hooks
        or _hooks._global_forward_pre_hooks or _hooks._global_backward_hooks
        or _hooks._global_backward_pre_hooks)


def lower_linear(gm):
    """Replaces each hook-free ``nn.Linear`` call on cuda whose result a fusible pointwise
    op (or an identity dropout) reads by ``F.linear`` on its parameters (get_attr nodes),
    so that the epilogue group has the weight and bias as inputs (their gradients flow
    through it)."""
    linear, _ = _functions()
    graph, changed = gm.graph, False
    for node in list(graph.nodes):
        device = node.meta.get("device")
        if (device is None or device.type != "cuda" or not _plain_linear(node, gm)
                or len(node.args) != 1 or node.kwargs):
            continue
        if not any(_identity(u, gm) or (op := resolve(u, gm)) is not None and _fusible(op)
                   for u in node.users):
            continue
        mod = gm.get_submodule(node.target)
        with graph.inserting_before(node):
            params = []
            for name in ("weight", "bias"):
                p = getattr(mod, name)
                if p is None:
                    params.append(None)
                    continue
                attr = graph.get_attr(f"{node.target}.{name}")
                attr.meta.update(type=type(p), device=p.device,
                                 tensor_meta=_extract_tensor_metadata(p))
                params.append(attr)
            call = graph.call_function(linear, (node.args[0], *params))
        call.meta.update(node.meta)
        node.replace_all_uses_with(call)
        graph.erase_node(node)
        changed = True
    if changed:
        gm.recompile()


def resolve_mm(node):
    """The ``Op`` of a matmul with a fused form (``operands``: the two matrices, then the
    bias or addmm's ``input`` if any), or None."""
    _, fns = _functions()
    if node.op == "call_function":
        form = fns.get(id(node.target))
    elif node.op == "call_method":
        form = node.target if node.target in ("mm", "matmul", "addmm") else None
    else:
        return None
    if form is None:
        return None
    args, kwargs = list(node.args), dict(node.kwargs)
    if form == "linear":
        if len(args) == 2 and "bias" in kwargs:
            args.append(kwargs.pop("bias"))
        if kwargs or len(args) not in (2, 3):
            return None
        operands = args[:2] + ([args[2]] if len(args) == 3 and args[2] is not None else [])
    elif form == "addmm":
        if any(kwargs.pop(k, 1) != 1 for k in ("beta", "alpha")) or kwargs or len(args) != 3:
            return None
        operands = [args[1], args[2], args[0]]
    else:
        if kwargs or len(args) != 2:
            return None
        operands = args
    if not all(isinstance(a, type(node)) for a in operands):
        return None
    return Op(node, form, operands)


def _autocast_dtype():
    """The dtype autocast casts cuda matmuls to now (the graph is fused in the autocast
    state it was traced in: the guard's), or None."""
    st = autocast.state
    return st.dtype["cuda"] if st.active and st.enabled["cuda"] else None


def _mm_fusible(op):
    """Whether a resolved matmul can open a GEMM group: dtypes, devices and ranks. Its
    operands are of the result's dtype, or, under autocast to that dtype, float32 (what
    autocast casts: the kernel rounds them as it loads them)."""
    meta, device = tensor_meta(op.node), op.node.meta.get("device")
    if meta is None or device is None or device.type != "cuda" or meta.dtype.name not in DOTS:
        return False
    cast = meta.dtype is _autocast_dtype() and meta.dtype.name != "float32"
    metas = [tensor_meta(a) for a in op.operands]
    if any(m is None or a.meta.get("device") != device
           or not (m.dtype == meta.dtype or cast and m.dtype.name == "float32")
           for a, m in zip(op.operands, metas)):
        return False
    a, b = metas[0].shape, metas[1].shape
    ranks = {"linear": len(a) >= 2, "mm": len(a) == 2, "addmm": len(a) == 2,
             "matmul": len(a) >= 2}[op.name]
    return ranks and len(b) == 2 and len(meta.shape) == len(a)


def _identity(node, root):
    """The ``Op`` of an ``nn.Dropout`` call that returns its input's values, or None."""
    if node.op != "call_module" or len(node.args) != 1 or node.kwargs:
        return None
    mod = root.get_submodule(node.target)
    if type(mod) is not nn.Dropout or (mod.training and mod.p != 0):
        return None
    return Op(node, "identity", [node.args[0]])


def _broadcasts(node, shape):
    m = tensor_meta(node)
    return (m is not None and len(m.shape) <= len(shape)
            and all(s in (1, t) for s, t in zip(reversed(m.shape), reversed(shape))))


class GemmGroup(Group):
    """A matmul (``ops[0]``) and its epilogue ops, all of the matmul's output shape."""
    gemm = True


def gemm_groups(gm, index, mutations):
    """The GEMM groups of ``gm``'s graph: each fusible matmul with the pointwise ops after
    it that read the group's values and otherwise only what exists before the matmul;
    matmuls with no such op are left out (the eager GEMM is already one launch)."""
    nodes = list(gm.graph.nodes)
    position = {n: k for k, n in enumerate(nodes)}
    groups = []
    for i, node in enumerate(nodes):
        mm = resolve_mm(node)
        if mm is None or not _mm_fusible(mm):
            continue
        g = GemmGroup(mm, i, mm.operands)
        shape, dtype = tuple(tensor_meta(node).shape), tensor_meta(node).dtype
        if not all(_broadcasts(a, shape) for a in mm.operands[2:]):
            continue
        last = max(map(position.get, node.users), default=i)   # the group's last reader
        for j in range(i + 1, len(nodes)):
            n = nodes[j]
            if j in mutations or j > last:
                break
            op = _identity(n, gm) or resolve(n, gm)
            if op is None or (op.name != "identity" and not _fusible(op)):
                continue
            meta = tensor_meta(n)
            ins = [a for a in op.operands if not _scalar(a)]
            if (meta is None or tuple(meta.shape) != shape or meta.dtype.name not in FLOATS
                    or n.meta.get("device") != node.meta.get("device")
                    or not any(a in g.nodes for a in ins)):
                continue
            if op.name == "identity" and meta.dtype != dtype:
                continue
            if all(a in g.nodes or (index[a] < i and _broadcasts(a, shape)) for a in ins):
                g.ops.append(op)
                g.nodes.add(n)
                last = max(last, max(map(position.get, n.users), default=j))
                g.inputs |= {a for a in ins if a not in g.nodes}
        if len(g.ops) > 1:
            groups.append(g)
    return groups


def generate(group, inputs, outputs):
    """(source, kernel name, constants, where): ``group``'s GEMM kernel; ``where`` gives
    the positions in ``inputs`` of the two matrices and the inputs the epilogue loads."""
    mm = group.ops[0]
    ia, ib = inputs.index(mm.operands[0]), inputs.index(mm.operands[1])
    loaded = sorted({inputs.index(a) for op in group.ops
                     for a in (op.operands[2:] if op is mm else op.operands)
                     if not _scalar(a) and a not in group.nodes})
    lines, value = [], {}
    for k in loaded:
        value[inputs[k]] = (f"x{k}", codegen._compute(tensor_meta(inputs[k]).dtype.name))
        load = f"tl.load(in{k} + r * rs{k} + j * ls{k}, mask=mask, other=1)"
        lines.append(f"x{k} = {load}" if tensor_meta(inputs[k]).dtype.name == "bool"
                     else f"x{k} = _up({load})")
    const, consts = codegen.constants(lines)
    dot = tensor_meta(mm.node).dtype.name   # the product's dtype (autocast's, or the operands')
    fns = set()
    for j, op in enumerate(group.ops):
        if op is mm:
            # the bias (addmm's input) and the result rounded to the product's dtype, as
            # eager's GEMM epilogue rounds them (autocast's cast of a float32 bias included)
            extra = "".join(f" + {_rounded(value[a][0], tensor_meta(a).dtype.name, dot)}"
                            for a in mm.operands[2:])
            lines.append(f"v0 = {_rounded('(acc' + extra + ')', 'float32', dot)}")
            value[op.node] = ("v0", "tl.float32")
        elif op.name == "identity":
            value[op.node] = value[op.operands[0]]
        else:
            if op.name != "cast":
                fns.add(POINTWISE[op.name][0])
            codegen.emit(op, j, value, const, lines)
            # a 16-bit value rounded as eager's kernel stores it, so that the ops after it
            # read what they read in eager code
            name = tensor_meta(op.node).dtype.name
            if op.name != "cast" and name in ("float16", "bfloat16"):
                lines.append(f"v{j} = {_rounded(f'v{j}', 'float32', name)}")
    for k, node in enumerate(outputs):
        lines.append(f"tl.store(out{k} + r * N + j, _down({value[node][0]}, "
                     f"out{k}.dtype.element_ty), mask=mask)")
    params = ([f"out{k}" for k in range(len(outputs))] + [f"in{k}" for k in range(len(inputs))]
              + ["M", "N", "K", "sam", "sak", "sbk", "sbn"]
              + [f"{s}{k}" for k in loaded for s in ("rs", "ls")]
              + [f"p{k}" for k in range(len(consts))] + ["layout"]
              + [f"{c}: tl.constexpr" for c in (
                  "MODE", "PRECISION", "ACC", "IDX64", "UPCAST", "EVEN_M", "EVEN_N", "EVEN_K",
                  "BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M")])
    head = [
        "pid_m, pid_n = _tile_ids(M, N, BLOCK_M, BLOCK_N, GROUP_M)",
        "offs_m, offs_n, mask_m, mask_n, offs_k, a_ptrs, b_ptrs, step_a, step_b = "
        f"_tile_operands(in{ia}, in{ib}, pid_m, pid_n, M, N, sam, sak, sbk, sbn, IDX64, "
        "BLOCK_M, BLOCK_N, BLOCK_K)",
        "acc, _ = _mm_loop(a_ptrs, b_ptrs, mask_m, mask_n, offs_k, K, step_a, step_b, MODE, "
        f"PRECISION, ACC, tl.{dot}, UPCAST, EVEN_M, EVEN_N, EVEN_K, BLOCK_M, BLOCK_N, "
        "BLOCK_K, False)",
        "mask = mask_m[:, None] & mask_n[None, :]",
        "r = offs_m[:, None]",
        "j = offs_n[None, :]"]
    text = ("import triton\nimport triton.language as tl\n\n"
            "from framework.kernels.linalg import _mm_loop, _tile_ids, _tile_operands\n"
            "from framework.kernels.pointwise import _down, _up, from_bits\n"
            + (f"from framework.kernels.pointwise_ops import {', '.join(sorted(fns))}\n"
               if fns else ""))
    kernel = ('@triton.jit(do_not_specialize=["layout"])\ndef gemm_kernel('
              + ", ".join(params) + "):\n    " + "\n    ".join(head + lines) + "\n")
    name = "gemm_" + hashlib.sha256((text + kernel).encode()).hexdigest()[:16]
    return (text + "\n\n" + kernel.replace("gemm_kernel", name), name, consts,
            (ia, ib, loaded, dot))


def _rounded(expr, have, dot):
    """``expr`` (of dtype ``have``, computed in float32) rounded to the 16-bit ``dot``."""
    if dot not in ("float16", "bfloat16") or have == dot:
        return expr
    return f"_up(_down({expr}, tl.{dot}))"


class GemmKernel:
    """A generated GEMM kernel and its launch: ``run(*inputs)`` returns the outputs (new
    contiguous tensors of the group's shape), or ``eager(*inputs)``'s (set by the caller)
    when an operand's leading dims do not flatten into evenly spaced rows."""

    def __init__(self, source, name, consts, where, form, shape, out_dtypes):
        self.source, self.name = source, name
        self.ia, self.ib, self.loaded, self.dot = where
        self.transposed = form == "linear"   # the weight (N, K) is read as b^T
        self.bits = _params_bits(*consts) if consts else ()
        self.shape, self.out_dtypes = tuple(shape), out_dtypes
        fn = triton.heuristics({
            "EVEN_M": lambda args: args["M"] % args["BLOCK_M"] == 0,
            "EVEN_N": lambda args: args["N"] % args["BLOCK_N"] == 0,
            "EVEN_K": lambda args: args["K"] % args["BLOCK_K"] == 0,
        })(codegen.load(source, name))
        self.fn = fn
        self.tuned = None   # the autotuner over the eager GEMM's configs, on a GPU
        self.eager = None

    def _prune(self, configs, named_args, **kwargs):
        """fused_linear's pruning of the eager GEMM's configs, for the matrix ``a``."""
        return fused_linear._prune(configs, dict(named_args, a=named_args[f"in{self.ia}"]),
                                   **kwargs)

    def run(self, *inputs):
        a, b = inputs[self.ia], inputs[self.ib]
        shape = self.shape
        n, k = shape[-1], a.shape[-1]
        m = 1
        for d in shape[:-1]:
            m *= d
        rows = codegen.row_strides(a, tuple(a.shape))
        sbk, sbn = b.stride()[::-1] if self.transposed else b.stride()
        loads = [codegen.row_strides(inputs[i], shape) for i in self.loaded]
        if (rows is None or any(s is None for s in loads)
                or max(m, n, k) > linalg._INT32_MAX or min(rows + (sbk, sbn)) < 0):
            return self.eager(*inputs)
        device = a._storage.device
        outs = [alloc.empty(shape, dt, device) for dt in self.out_dtypes]
        if m == 0 or n == 0:
            return tuple(outs)
        sam, sak = rows
        idx64 = max([linalg._extent(m, n, n, 1), linalg._extent(m, k, sam, sak),
                     linalg._extent(k, n, sbk, sbn)]
                    + [linalg._extent(m, n, rs, ls) for rs, ls in loads]) > linalg._INT32_MAX
        name = self.dot
        precision = None
        if name == "float32":
            precision = "tf32" if _matmul_precision.allow_tf32() else "ieee"
        layout = int(sak == 1) | int(sam == 1) << 1 | int(sbn == 1) << 2 | int(sbk == 1) << 3
        simulated = cuda.is_simulated()
        if simulated:
            cfg = linalg._SIM_DOT_CONFIG
            fn, meta = self.fn, dict(cfg.kwargs, num_warps=cfg.num_warps,
                                     num_stages=cfg.num_stages)
        else:
            if self.tuned is None:
                self.tuned = triton.autotune(
                    linalg._DOT_CONFIGS, key=["M", "N", "K", "layout", "PRECISION"],
                    prune_configs_by={"early_config_prune": self._prune},
                    do_bench=linalg._do_bench, cache_results=True)(self.fn)
            fn, meta = self.tuned, {}

        def grid(meta):
            return (cdiv(m, meta["BLOCK_M"]) * cdiv(n, meta["BLOCK_N"]),)
        fn[grid](*outs, *inputs, m, n, k, sam, sak, sbk, sbn,
                 *[v for s in loads for v in s], *self.bits, layout,
                 MODE=linalg.MODE_DOT, PRECISION=precision, ACC=linalg._ACC_DTYPE["float32"],
                 IDX64=idx64, UPCAST=simulated and name == "bfloat16", **meta)
        return tuple(outs)
