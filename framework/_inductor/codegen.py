"""Code generation: one ``@triton.jit`` kernel for a fused group of pointwise ops.

The kernel takes the group's output pointers, its input pointers, ``n``, the merged shape,
the outputs' strides and each input's strides broadcast to the output shape (0 on a
broadcast dim), then the float64 bits of the scalar constants, and the eager pointwise
kernels' NDIM/CONTIG/IDX64/BLOCK. Its body loads each input once (16-bit floats widened to
float32), computes every op with the eager kernels' scalar function
(framework/kernels/pointwise_ops.py) in the compute dtype of the op's result, keeps the
intermediates in registers and stores the values used outside the group in their dtypes.
The host side reuses the eager kernels' geometry (merging dims, int64 indices where
needed), so a fused launch walks memory as an eager one.

A row group's kernel (``RowKernel``) runs one program per row of the reductions' input
shape: it loads each input's row once (``BLOCK`` lanes, the next power of two of the row
length, masked), computes the row ops as above, each reduction in the compute dtype with
the masked lanes left out, the ops on reduced values once per row, and stores the row
values at ``row * L + lane`` and the reduced ones at ``row``.

Triton reads a kernel's source from its file, so each kernel is written to a file named by
the hash of its source under ``~/.cache/framework/inductor`` (``FW_INDUCTOR_CACHE_DIR``
overrides) and imported from there.
"""
import hashlib
import importlib.util
import os
import sys

from .._ops import alloc
from ..kernels.launcher import cached, cdiv, next_pow2
from ..kernels.pointwise import BLOCK, _params_bits, geometry
from .fuse import COMPARISONS, POINTWISE, REDUCTIONS, _scalar, tensor_meta

_TL = {"float64": "tl.float64", "bool": "tl.int1"}   # the others compute in float32
_modules = {}   # source hash -> imported kernel


def _compute(dtype_name):
    return _TL.get(dtype_name, "tl.float32")


def cache_dir():
    return os.environ.get("FW_INDUCTOR_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "framework", "inductor")


def generate(group, inputs, outputs):
    """(source, kernel name, constants) of ``group``'s kernel; ``inputs`` and ``outputs``
    are nodes in the kernel's argument order."""
    row = getattr(group, "row", False)
    lines, value = [], {}
    for k, node in enumerate(inputs):
        value[node] = (f"x{k}", _compute(tensor_meta(node).dtype.name))
        at = f"r * rs{k} + j * ls{k}" if row else f"_offset(i, shape, s{k}, NDIM, CONTIG)"
        load = f"tl.load(in{k} + {at}, mask=mask, other=1)"
        lines.append(f"x{k} = {load}" if tensor_meta(node).dtype.name == "bool"
                     else f"x{k} = _up({load})")

    const, consts = constants(lines)
    for j, op in enumerate(group.ops):
        emit(op, j, value, const, lines)
    for k, node in enumerate(outputs):
        scalar = row and group.kinds[node] == "scalar"
        at, mask = ("r", "") if scalar else ("r * L + j" if row else "o", ", mask=mask")
        lines.append(f"tl.store(out{k} + {at}, _down({value[node][0]}, "
                     f"out{k}.dtype.element_ty){mask})")
    ins = [f"in{k}" for k in range(len(inputs))]
    params = [f"out{k}" for k in range(len(outputs))] + ins
    if row:
        params += ["L"] + [f"{a}{k}" for k in range(len(inputs)) for a in ("rs", "ls")]
        head = ["r = tl.program_id(0).to(tl.int64)", "j = tl.arange(0, BLOCK)",
                "mask = j < L"]
    else:
        params += ["n", "shape", "so"] + [f"s{k}" for k in range(len(inputs))]
        head = ["i, mask = _index(n, BLOCK, IDX64)", "o = _offset(i, shape, so, NDIM, CONTIG)"]
    params += [f"p{k}" for k in range(len(consts))]
    params += (["BLOCK: tl.constexpr"] if row else
               ["NDIM: tl.constexpr", "CONTIG: tl.constexpr", "IDX64: tl.constexpr",
                "BLOCK: tl.constexpr"])
    body = "\n    ".join(head + lines)
    fns = sorted({POINTWISE[op.name][0] for op in group.ops
                  if op.name != "cast" and op.name not in REDUCTIONS})
    head = ("import triton\nimport triton.language as tl\n\n"
            "from framework.kernels.pointwise import _down, _index, _offset, _up, from_bits\n"
            + (f"from framework.kernels.pointwise_ops import {', '.join(fns)}\n" if fns else ""))
    kernel = "@triton.jit\ndef fused_kernel(" + ", ".join(params) + "):\n    " + body + "\n"
    digest = hashlib.sha256((head + kernel).encode()).hexdigest()[:16]
    name = f"fused_{digest}"
    return head + "\n\n" + kernel.replace("fused_kernel", name), name, consts


def constants(lines):
    """(const, consts): ``const(v)`` names the kernel parameter holding the float ``v``
    (one line appended to ``lines`` per new value), ``consts`` lists the values in order."""
    consts, names = [], {}

    def const(v):
        v = float(v)
        key = v.hex()   # 0.0 and -0.0 apart; NaN equal to itself
        if key not in names:
            names[key] = f"c{len(consts)}"
            consts.append(v)
            lines.append(f"{names[key]} = from_bits(p{len(consts) - 1})")
        return names[key]
    return const, consts


def emit(op, j, value, const, lines):
    """Appends the line computing ``op`` as ``v{j}`` to ``lines``; ``value`` maps each node
    already computed to its (variable, compute type) and gets ``op``'s."""
    out_ty = _compute(tensor_meta(op.node).dtype.name)
    tensors = [value[a] for a in op.operands if not _scalar(a)]
    if op.name in COMPARISONS or op.name == "where":
        kinds = [t for _, t in tensors[1 if op.name == "where" else 0:]]
        ty = ("tl.float64" if "tl.float64" in kinds else
              "tl.float32" if "tl.float32" in kinds else "tl.int1")
        if ty == "tl.int1" and any(type(a) is float for a in op.operands):
            ty = "tl.float32"
        if op.name == "where":
            ty = out_ty
    elif op.name == "cast" or op.name in REDUCTIONS:
        ty = tensors[0][1]   # the cast itself converts; a reduction keeps its dtype
    else:
        ty = out_ty
    ref = tensors[0][0]
    args = []
    for a in op.operands:
        if _scalar(a):
            args.append(f"(tl.zeros_like({ref}).to(tl.float64) + {const(a)}).to({ty})")
        else:
            name, t = value[a]
            keep = op.name == "where" and a is op.operands[0]
            args.append(name if t == ty or keep else f"{name}.to({ty})")
    if op.name in REDUCTIONS:
        expr = _reduce(op.name, args[0], ty, const(op.param), f"d{j}", lines)
    elif op.name == "cast":
        expr = _cast(args[0], tensors[0][1], op.dtype)
    else:
        fn = POINTWISE[op.name][0]
        expr = f"{fn}({', '.join(args)}, {const(op.param)}, {const(0.0)}, {const(0.0)})"
    lines.append(f"v{j} = {expr}")
    value[op.node] = (f"v{j}", out_ty)

def _reduce(name, arg, ty, correction, tmp, lines):
    """A reduction of the row ``arg`` (lanes past the row's end masked out) in ``ty``;
    var/std first append the line of the centred row ``tmp`` to ``lines``."""
    total = f"tl.sum(tl.where(mask, {arg}, 0).to({ty}), axis=0)"
    if name == "sum":
        return total
    if name == "mean":
        return f"({total} / L)"
    if name in ("amax", "amin"):
        # NaN wins, as eager's max/min
        best = (f"tl.{name[1:]}(tl.where(mask, {arg}, float('{'-' if name == 'amax' else ''}"
                f"inf')).to({ty}), axis=0)")
        nan = f"tl.max(tl.where(mask & ({arg} != {arg}), 1, 0), axis=0) > 0"
        return f"tl.where({nan}, float('nan'), {best}).to({ty})"
    lines.append(f"{tmp} = tl.where(mask, {arg} - {total} / L, 0).to({ty})")
    var = (f"(tl.sum({tmp} * {tmp}, axis=0) / "
           f"tl.maximum(L - {correction}, 0.0).to({ty}))")
    return var if name == "var" else f"tl.sqrt({var})"


def _cast(arg, from_ty, to_name):
    """A cast's value in its compute dtype, rounded through the target type as eager's
    ``to`` rounds."""
    if to_name == "bool":
        return f"({arg} != 0)"
    if to_name in ("float16", "bfloat16"):
        return f"_up(_down({arg}, tl.{to_name}))"
    target = _compute(to_name)
    return arg if target == from_ty else f"{arg}.to({target})"


def load(source, name):
    """The ``@triton.jit`` function ``name`` of ``source``, written to the cache directory
    and imported (once per process for a given source)."""
    key = hashlib.sha256(source.encode()).hexdigest()[:16]
    fn = _modules.get(key)
    if fn is not None:
        return fn
    directory = cache_dir()
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"{name}.py")
    if not os.path.exists(path) or _read(path) != source:
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            f.write(source)
        os.replace(tmp, path)   # another process may import it meanwhile: never half-written
    spec = importlib.util.spec_from_file_location(f"framework_inductor_{name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    fn = _modules[key] = cached(getattr(module, name))
    return fn


def _read(path):
    with open(path) as f:
        return f.read()


def broadcast_strides(t, shape):
    """``t``'s strides for reading it at ``shape`` (0 on the dims it is broadcast along)."""
    pad = len(shape) - t.dim()
    st = t.stride()
    return tuple(0 if d < pad or t.shape[d - pad] == 1 and shape[d] != 1 else st[d - pad]
                 for d in range(len(shape)))


def row_strides(t, shape):
    """(row stride, lane stride) that read ``t`` broadcast to ``shape`` as rows of its
    last dim, or None when its leading dims are not one row-major run."""
    st = broadcast_strides(t, shape)
    step, size = None, 1
    for d in range(len(shape) - 2, -1, -1):
        if shape[d] == 1:
            continue
        if step is None:
            step = st[d]
        elif st[d] != step * size:
            return None
        size *= shape[d]
    return (step or 0), st[-1]


class RowKernel:
    """A generated row kernel: ``run(*inputs)`` returns the outputs (new contiguous
    tensors of ``shapes``), or ``eager(*inputs)``'s when an input's rows are not evenly
    spaced (set by the caller)."""

    def __init__(self, source, name, consts, shape, out_dtypes, out_shapes):
        self.source, self.name = source, name
        self.fn = load(source, name)
        self.bits = _params_bits(*consts) if consts else ()
        self.shape, self.out_dtypes, self.out_shapes = tuple(shape), out_dtypes, out_shapes
        self.block = next_pow2(self.shape[-1])
        self.eager = None

    def run(self, *inputs):
        strides = [row_strides(t, self.shape) for t in inputs]
        if any(s is None for s in strides):
            return self.eager(*inputs)
        device = inputs[0]._storage.device
        outs = [alloc.empty(s, dt, device) for s, dt in zip(self.out_shapes, self.out_dtypes)]
        rows = 1
        for d in self.shape[:-1]:
            rows *= d
        if rows == 0:
            return tuple(outs)
        warps = 4 if self.block <= 2048 else 8 if self.block <= 8192 else 16
        self.fn[(rows,)](*outs, *inputs, self.shape[-1], *[v for s in strides for v in s],
                         *self.bits, BLOCK=self.block, num_warps=warps)
        return tuple(outs)


class Kernel:
    """A generated kernel and how to launch it: ``run(*inputs)`` returns the outputs (new
    contiguous tensors of the group's shape)."""

    def __init__(self, source, name, consts, shape, out_dtypes):
        self.source, self.name = source, name
        self.fn = load(source, name)
        self.bits = _params_bits(*consts) if consts else ()
        self.shape, self.out_dtypes = tuple(shape), out_dtypes

    def run(self, *inputs):
        device = inputs[0]._storage.device
        outs = [alloc.empty(self.shape, dt, device) for dt in self.out_dtypes]
        g = geometry(outs[0], [broadcast_strides(t, self.shape) for t in inputs])
        if g is None:
            return tuple(outs)
        n, shape, strides, contig, idx64 = g
        self.fn[(cdiv(n, BLOCK),)](*outs, *inputs, n, shape, *strides, *self.bits,
                                   NDIM=len(shape), CONTIG=contig, IDX64=idx64, BLOCK=BLOCK)
        return tuple(outs)
