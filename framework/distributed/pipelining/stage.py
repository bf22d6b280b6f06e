"""One pipeline stage: a submodule that runs microbatches and talks to its neighbours
(PyTorch's ``torch.distributed.pipelining.PipelineStage``, manual-split form).

Stage ``i`` of ``n`` lives on group rank ``i % group_size``. Activations go forward to
stage ``i + 1``, gradients back to stage ``i - 1``, with the point-to-point ops of
``framework.distributed`` (``batch_isend_irecv``: MPI for cpu and simulated cuda, NCCL
on GPUs).

Shapes. A stage does not know the shapes of the activations it receives until its
neighbour has run. PyTorch infers them ahead with meta tensors; here the first forward
send of a stage is preceded by a small header (a fixed-size int64 tensor holding the
number of tensors and each one's dtype code and shape). The receiver reads the header
once, caches the metadata and posts receives of exactly that size for every later
microbatch and step; gradients take the shapes of the forward outputs, which both sides
know. As in PyTorch, every microbatch of every step must then keep those shapes: a stage
whose output differs raises ``PipeliningShapeError`` before sending.
"""
from ... import _dtype, _tensor, autograd, empty, int64, tensor, zeros_like
from ... import device as _device
from .. import collectives as C
from ..process_group import get_global_rank, get_rank, get_world_size

_HEADER_LEN = 64     # int64 slots: n, then (dtype code, ndim, *shape) per tensor


class PipeliningShapeError(RuntimeError):
    """Shape mismatch between configured and runtime values."""


def _as_tuple(out):
    return out if isinstance(out, tuple) else \
        tuple(out) if isinstance(out, list) else (out,)


def _meta_of(tensors):
    return [(tuple(t.shape), t.dtype) for t in tensors]


def _encode(meta):
    vals = [len(meta)]
    for shape, dtype in meta:
        vals += [_dtype.ALL.index(dtype), len(shape), *shape]
    if len(vals) > _HEADER_LEN:
        raise ValueError(f"PipelineStage: stage outputs {meta} do not fit the shape header "
                         f"of {_HEADER_LEN} int64 values")
    return vals + [0] * (_HEADER_LEN - len(vals))


def _decode(vals):
    meta, k = [], 1
    for _ in range(vals[0]):
        code, nd = vals[k], vals[k + 1]
        meta.append((tuple(vals[k + 2:k + 2 + nd]), _dtype.ALL[code]))
        k += 2 + nd
    return meta


class PipelineStage:
    """A pipeline stage built from ``submodule``, the part of the model that stage
    ``stage_index`` of ``num_stages`` runs on ``device``. ``input_args`` and
    ``output_args``, when given, are example inputs and outputs that the runtime shapes
    are checked against. ``dw_builder`` (split weight-gradient computation) is not
    supported."""

    def __init__(self, submodule, stage_index, num_stages, device, input_args=None,
                 output_args=None, group=None, dw_builder=None):
        if stage_index >= num_stages:
            raise ValueError(f"Stage index {stage_index} is out of range of {num_stages}")
        if dw_builder is not None:
            raise NotImplementedError("PipelineStage: dw_builder is not supported")
        self.submod = submodule
        self.stage_index = stage_index
        self.num_stages = num_stages
        self.device = _device(device)
        self.group = group
        self.group_rank = get_rank(group)
        self.group_size = get_world_size(group)
        if num_stages % self.group_size:
            raise ValueError(f"PipelineStage: {num_stages} stages cannot be spread evenly "
                             f"over a group of {self.group_size} ranks")
        self.has_backward = True
        self._in_meta = None if input_args is None else _meta_of(_as_tuple(input_args))
        self._out_meta_given = None if output_args is None else \
            _meta_of(_as_tuple(output_args))
        self._out_meta = None       # what was announced to the next stage
        self._recv_meta = None      # what the previous stage announced
        self.clear_runtime_states()

    @property
    def is_first(self):
        return self.stage_index == 0

    @property
    def is_last(self):
        return self.stage_index == self.num_stages - 1

    def _peer(self, stage):
        r = stage % self.group_size
        return r if self.group is None else get_global_rank(self.group, r)

    def clear_runtime_states(self):
        """Forgets the microbatches of the previous step."""
        self.output_chunks = []
        self._fwd_cache = {}         # mb -> (outputs, inputs that take a gradient)
        self._recv_bufs = {}         # mb -> received activations
        self._grad_bufs = {}         # mb -> received output gradients
        self._grads_to_send = {}     # mb -> gradients of the received activations

    # ---- forward ----

    def get_fwd_recv_ops(self, fwd_chunk_id):
        """The receives of microbatch ``fwd_chunk_id``'s activations (none on the first
        stage); the first call waits for the previous stage's shape header."""
        if self.is_first:
            return []
        prev = self._peer(self.stage_index - 1)
        if self._recv_meta is None:
            header = empty(_HEADER_LEN, dtype=int64, device=self.device)
            C.recv(header, prev, self.group, self.stage_index)
            meta = _decode([int(v) for v in header.cpu().tolist()])
            if self._in_meta is not None and meta != self._in_meta:
                raise PipeliningShapeError(
                    f"Stage {self.stage_index}: received inputs {meta} (shape, dtype) do not "
                    f"match input_args {self._in_meta}")
            self._recv_meta = meta
        bufs = tuple(empty(s, dtype=d, device=self.device) for s, d in self._recv_meta)
        self._recv_bufs[fwd_chunk_id] = bufs
        return [C.P2POp(C.irecv, b, prev, self.group, self.stage_index) for b in bufs]

    def forward_one_chunk(self, fwd_chunk_id, args, kwargs=None, save_forward_output=True):
        """Runs the submodule on microbatch ``fwd_chunk_id`` (``args`` on the first stage,
        the received activations elsewhere); returns its output."""
        if self.is_first:
            inputs = _as_tuple(args)
        else:
            inputs = self._recv_bufs.pop(fwd_chunk_id)
            if self.has_backward:
                for t in inputs:
                    if t.is_floating_point():
                        t.requires_grad_(True)
        if self.is_first and self._in_meta is not None and _meta_of(inputs) != self._in_meta:
            raise PipeliningShapeError(
                f"Stage {self.stage_index}: inputs {_meta_of(inputs)} (shape, dtype) do not "
                f"match input_args {self._in_meta}")
        out = self.submod(*inputs, **(kwargs or {}))
        outs = _as_tuple(out)
        meta = _meta_of(outs)
        expected = self._out_meta or self._out_meta_given
        if expected is not None and meta != expected:
            raise PipeliningShapeError(
                f"Stage {self.stage_index}: outputs {meta} (shape, dtype) of microbatch "
                f"{fwd_chunk_id} do not match the expected {expected}; every microbatch must "
                "keep the shapes of the first one")
        self._fwd_cache[fwd_chunk_id] = (
            outs, [t for t in inputs if isinstance(t, _tensor.Tensor) and t.requires_grad])
        if self.is_last and save_forward_output:
            # kept without their graph, which backward frees
            self.output_chunks.append(tuple(o.detach() for o in outs) if isinstance(
                out, (tuple, list)) else out.detach())
        return out

    def get_fwd_send_ops(self, fwd_chunk_id):
        """The sends of microbatch ``fwd_chunk_id``'s outputs (none on the last stage)."""
        if self.is_last:
            return []
        outs = self._fwd_cache[fwd_chunk_id][0] if self.has_backward else \
            self._fwd_cache.pop(fwd_chunk_id)[0]
        return self._send_outputs(outs)

    def _send_outputs(self, outs):
        nxt = self._peer(self.stage_index + 1)
        if self._out_meta is None:
            # alone and blocking, as the receiver reads it alone before posting its receives
            self._out_meta = _meta_of(outs)
            header = tensor(_encode(self._out_meta), dtype=int64, device=self.device)
            C.send(header, nxt, self.group, self.stage_index + 1)
        return [C.P2POp(C.isend, o.detach().contiguous(), nxt, self.group,
                        self.stage_index + 1) for o in outs]

    # ---- backward ----

    def _grad_outputs(self, outs):
        return [o for o in outs if o.is_floating_point()]

    def get_bwd_recv_ops(self, bwd_chunk_id):
        """The receives of the gradients of microbatch ``bwd_chunk_id``'s outputs (none on
        the last stage)."""
        if self.is_last or not self.has_backward:
            return []
        outs = self._grad_outputs(self._fwd_cache[bwd_chunk_id][0])
        bufs = [empty(tuple(o.shape), dtype=o.dtype, device=self.device) for o in outs]
        self._grad_bufs[bwd_chunk_id] = bufs
        nxt = self._peer(self.stage_index + 1)
        return [C.P2POp(C.irecv, b, nxt, self.group, 1000 + self.stage_index) for b in bufs]

    def backward_one_chunk(self, bwd_chunk_id, loss=None, full_backward=True,
                           last_backward=False):
        """Back-propagates microbatch ``bwd_chunk_id``: from ``loss`` on the last stage, from
        the received output gradients elsewhere; parameter gradients accumulate."""
        outs, inputs = self._fwd_cache.pop(bwd_chunk_id)
        if self.is_last:
            if loss is None:
                raise RuntimeError(f"Stage {self.stage_index}: the last stage needs a loss to "
                                   "run backward (give the schedule a loss_fn)")
            autograd.backward(loss)
        else:
            pairs = [(o, g) for o, g in zip(self._grad_outputs(outs),
                                            self._grad_bufs.pop(bwd_chunk_id))
                     if o.requires_grad]
            if pairs:
                autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
        if not self.is_first:
            self._grads_to_send[bwd_chunk_id] = [
                t.grad if t.grad is not None else zeros_like(t) for t in inputs]

    def get_bwd_send_ops(self, bwd_chunk_id):
        """The sends of the gradients of microbatch ``bwd_chunk_id``'s received activations
        (none on the first stage)."""
        if self.is_first or not self.has_backward:
            return []
        prev = self._peer(self.stage_index - 1)
        return [C.P2POp(C.isend, g.contiguous(), prev, self.group, 1000 + self.stage_index - 1)
                for g in self._grads_to_send.pop(bwd_chunk_id)]

    def scale_grads(self, grad_scale_factor):
        """Divides the submodule's gradients by ``grad_scale_factor``."""
        if grad_scale_factor != 1:
            for p in self.submod.parameters():
                if p.grad is not None:
                    p.grad.div_(grad_scale_factor)

    def perform_reduce_grad(self, grad_scale_factor):
        """Scales the accumulated gradients at the end of a step."""
        self.scale_grads(grad_scale_factor)
