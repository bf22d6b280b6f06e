"""PowerSGD gradient compression (Vogels et al., NeurIPS 2019) as DDP communication hooks.

Each gradient matrix M (n x m) is replaced by a rank-r approximation P Q^T found by one
step of power iteration: P = M Q, all-reduce P, orthogonalise it, Q = M^T P, all-reduce Q,
M ~ P Q^T / world_size. What the approximation leaves out is kept per bucket and added to
the next iteration's gradients (error feedback); Q is reused as the next starting point
(warm start). The first ``start_powerSGD_iter`` iterations use a plain all-reduce.
"""
import logging
import math
from collections import defaultdict

import numpy as np

from ... import collectives as _c
from ...process_group import _resolve
from .... import linalg as _linalg
from .... import random as _random
from ...._dtype import bfloat16, float16
from ...._ops import creation
from . import default_hooks as default

__all__ = ["PowerSGDState", "powerSGD_hook", "batched_powerSGD_hook"]

logger = logging.getLogger(__name__)


def _fw():
    import framework
    return framework


def _orthogonalize(matrices, epsilon=0):
    """Orthonormalises the columns of each matrix of the batch ``matrices`` (b x n x r,
    r <= n) in place: Gram-Schmidt for r <= 2 or 16-bit floats, else QR."""
    if not (matrices.dim() == 3 and matrices.shape[2] <= matrices.shape[1]):
        raise AssertionError(f"_orthogonalize expects a batch of n x r matrices with r <= "
                             f"n, got shape {list(matrices.shape)}")
    rank = matrices.shape[2]
    if rank <= 2 or matrices.dtype in (float16, bfloat16):
        _orthogonalize_gram_schmidt(matrices, epsilon)
    else:
        matrices.copy_(_linalg.qr(matrices).Q)


def _orthogonalize_gram_schmidt(matrices, epsilon=0):
    fw = _fw()
    num_cols = matrices.shape[2]
    for i in range(num_cols):
        col = matrices[:, :, i:i + 1]
        norm = fw.norm(col, dim=1, keepdim=True)
        # a zero column gives NaN without epsilon, as PyTorch's
        col.div_(norm + epsilon if epsilon else norm)
        if i + 1 < num_cols:
            rest = matrices[:, :, i + 1:]
            rest.sub_(fw.sum(col * rest, dim=1, keepdim=True) * col)


def _should_compress(num_rows, num_cols, matrix_approximation_rank, min_compression_rate):
    uncompressed = num_rows * num_cols
    compressed = (num_rows + num_cols) * matrix_approximation_rank
    return compressed * min_compression_rate < uncompressed, uncompressed, compressed


def _report_compression_stats(bucket, state):
    if bucket.is_last() and state.iter >= state.next_stats_report:
        rate, before, after = state.compression_stats()
        logger.info("Compression stats: iter %s, total before compression %s, total after "
                    "compression %s, rate %s", state.iter, before, after, rate)
        state.next_stats_report = state.iter + state.compression_stats_logging_frequency


def _fill_random(tensors, rng):
    """Fills ``tensors`` with normal values drawn on the cpu after seeding with a number
    from ``rng``: every rank draws the same, and the global generator is left as it was."""
    fw = _fw()
    with _random.fork_rng(devices=[]):
        fw.manual_seed(int(rng.randint(1_000_000_000)))
        for t in tensors:
            t.copy_(fw.randn(*t.shape, dtype=t.dtype, device="cpu"))


class PowerSGDState:
    """The configuration and per-bucket memory (errors, P and Q) of the PowerSGD hooks.

    ``matrix_approximation_rank``: the rank r of the approximation. ``start_powerSGD_iter``:
    the iterations of plain all-reduce before compression starts (> 1 with error feedback or
    warm start). ``min_compression_rate``: a matrix is compressed only if that divides its
    size by more than this. ``use_error_feedback``, ``warm_start``: see the module.
    ``orthogonalization_epsilon``: added to the norms, against division by zero."""

    __slots__ = ["process_group", "matrix_approximation_rank", "start_powerSGD_iter",
                 "min_compression_rate", "orthogonalization_epsilon", "use_error_feedback",
                 "warm_start", "batch_tensors_with_same_shape", "rng", "error_dict",
                 "p_memory_dict", "q_memory_dict", "iter", "total_numel_before_compression",
                 "total_numel_after_compression", "compression_stats_logging_frequency",
                 "next_stats_report"]

    def __init__(self, process_group, matrix_approximation_rank=1,
                 start_powerSGD_iter=1_000, min_compression_rate=2, use_error_feedback=True,
                 warm_start=True, orthogonalization_epsilon=0, random_seed=0,
                 compression_stats_logging_frequency=10_000,
                 batch_tensors_with_same_shape=False):
        if (use_error_feedback or warm_start) and start_powerSGD_iter <= 1:
            raise ValueError(
                "Expect `start_powerSGD_iter` > 1 if `use_error_feedback` or `warm_start` is "
                "enabled, because PowerSGD can only be applied after the first two "
                "iterations in DDP.")
        self.process_group = process_group
        self.matrix_approximation_rank = matrix_approximation_rank
        self.start_powerSGD_iter = start_powerSGD_iter
        self.min_compression_rate = min_compression_rate
        self.use_error_feedback = use_error_feedback
        self.warm_start = warm_start
        self.orthogonalization_epsilon = orthogonalization_epsilon
        self.rng = np.random.RandomState(random_seed)
        self.error_dict = {}
        self.p_memory_dict = {}
        self.q_memory_dict = {}
        self.iter = 0
        self.total_numel_before_compression = 0
        self.total_numel_after_compression = 0
        self.compression_stats_logging_frequency = max(1, compression_stats_logging_frequency)
        self.next_stats_report = 0
        self.batch_tensors_with_same_shape = batch_tensors_with_same_shape

    def __getstate__(self):
        # a process group cannot be pickled
        return {s: getattr(self, s) for s in self.__slots__ if s != "process_group"}

    def __setstate__(self, state):
        self.process_group = None       # the default group
        for k, v in state.items():
            setattr(self, k, v)

    def maybe_increase_iter(self, bucket):
        """Counts an iteration when the last bucket is done."""
        if bucket.is_last():
            self.iter += 1
        if self.iter == self.start_powerSGD_iter:
            logger.info("Start to apply PowerSGD after %s iterations.", self.iter)

    def compression_stats(self):
        """(compression rate, numel before compression, numel after compression)."""
        before, after = self.total_numel_before_compression, \
            self.total_numel_after_compression
        return (before / after if after > 0 else 0), before, after


def _world(state):
    pg = _resolve(state.process_group)
    return 1 if pg is None else pg.size()


def _all_reduced(tensor, state):
    return _c.all_reduce(tensor, group=state.process_group, async_op=True).get_future() \
        .wait()[0]


def _add_error(state, bucket_index, input_tensor):
    """Error feedback: adds the last error; returns the corrected input's copy."""
    if bucket_index in state.error_dict:
        input_tensor.add_(state.error_dict[bucket_index])
    else:
        state.error_dict[bucket_index] = creation.zeros(
            (input_tensor.shape[0],), device=input_tensor.device, dtype=input_tensor.dtype)
    return input_tensor.detach().clone()


def powerSGD_hook(state, bucket):
    """PowerSGD on each gradient matrix of the bucket (a tensor of shape (n, ...) is seen
    as n x rest); vectors and matrices it would not compress enough are all-reduced as
    they are, in one flat tensor."""
    fw = _fw()
    world = _world(state)
    input_tensor = bucket.buffer()
    if state.iter < state.start_powerSGD_iter:
        state.maybe_increase_iter(bucket)
        return default._allreduce_fut(state.process_group, input_tensor)

    device, dtype, bucket_index = input_tensor.device, input_tensor.dtype, bucket.index()
    input_copy = _add_error(state, bucket_index, input_tensor) \
        if state.use_error_feedback else None

    to_compress, uncompressed = [], []
    total_p = total_q = 0
    for tensor in bucket.gradients():
        matrix = tensor.view(tensor.shape[0], -1)
        n, m = matrix.shape
        r = min(n, m, state.matrix_approximation_rank)
        ok, before, after = _should_compress(n, m, r, state.min_compression_rate)
        state.total_numel_before_compression += before
        if ok:
            to_compress.append(matrix)
            total_p += n * r
            total_q += m * r
            state.total_numel_after_compression += after
        else:
            uncompressed.append(tensor)
            state.total_numel_after_compression += before
    _report_compression_stats(bucket, state)

    flat_uncompressed = fw.cat([t.reshape(-1) for t in uncompressed]) if uncompressed \
        else creation.empty((0,), device=device, dtype=dtype)

    randomize = not state.warm_start or bucket_index not in state.p_memory_dict
    if randomize:
        state.p_memory_dict[bucket_index] = creation.empty((total_p,), device=device,
                                                           dtype=dtype)
        state.q_memory_dict[bucket_index] = creation.empty((total_q,), device=device,
                                                           dtype=dtype)

    by_shape = defaultdict(list)
    for t in to_compress:
        by_shape[tuple(t.shape)].append(t)
    batches = []
    for ts in by_shape.values():
        if state.batch_tensors_with_same_shape and len(ts) > 1:
            batches.append(fw.stack(ts))
        else:
            batches.extend(t.unsqueeze(0) for t in ts)

    ps, qs = [], []
    pi = qi = 0
    for t in batches:
        b, n, m = t.shape
        r = min(n, m, state.matrix_approximation_rank)
        ps.append(state.p_memory_dict[bucket_index][pi:pi + b * n * r].view(b, n, r))
        qs.append(state.q_memory_dict[bucket_index][qi:qi + b * m * r].view(b, m, r))
        pi += b * n * r
        qi += b * m * r

    if randomize:
        _fill_random(qs, state.rng)
    for q in qs:
        _orthogonalize(q, state.orthogonalization_epsilon)
    for t, q, p in zip(batches, qs, ps):
        p.copy_(fw.bmm(t, q))

    fut = _c.all_reduce(flat_uncompressed, group=state.process_group,
                        async_op=True).get_future()

    def unpack_uncompressed_and_allreduce_ps(fut):
        flat = fut.value()[0].div_(world)
        i = 0
        for t in uncompressed:
            t.copy_(flat[i:i + t.numel()].view_as(t))
            i += t.numel()
        return _all_reduced(state.p_memory_dict[bucket_index], state)

    def compute_qs(fut):
        state.p_memory_dict[bucket_index] = fut.value()
        for p in ps:
            _orthogonalize(p, state.orthogonalization_epsilon)
        for t, p, q in zip(batches, ps, qs):
            q.copy_(fw.bmm(t.transpose(1, 2), p))
        return _all_reduced(state.q_memory_dict[bucket_index], state)

    def decompress(fut):
        state.q_memory_dict[bucket_index] = fut.value().div_(world)
        for p, q, t in zip(ps, qs, batches):
            t.copy_(fw.bmm(p, q.transpose(1, 2)))
        if state.batch_tensors_with_same_shape:
            # stacked batches are copies: write them back into the gradients
            for t in batches:
                if t.shape[0] > 1:
                    for i, orig in enumerate(by_shape[tuple(t.shape[1:])]):
                        orig.copy_(t[i])
        if state.use_error_feedback:
            state.error_dict[bucket_index] = input_copy - input_tensor
        if not state.warm_start:
            state.p_memory_dict.clear()
            state.q_memory_dict.clear()
        state.maybe_increase_iter(bucket)
        return input_tensor

    return fut.then(unpack_uncompressed_and_allreduce_ps).then(compute_qs).then(decompress)


def batched_powerSGD_hook(state, bucket):
    """PowerSGD on the whole bucket at once, seen as one square matrix (zero-padded):
    more compression than ``powerSGD_hook``, usually less accuracy."""
    fw = _fw()
    world = _world(state)
    input_tensor = bucket.buffer()
    if state.iter < state.start_powerSGD_iter:
        state.maybe_increase_iter(bucket)
        return default._allreduce_fut(state.process_group, input_tensor)

    device, dtype, bucket_index = input_tensor.device, input_tensor.dtype, bucket.index()
    total = input_tensor.shape[0]
    side = math.ceil(math.sqrt(total))
    r = state.matrix_approximation_rank
    state.total_numel_before_compression += total
    state.total_numel_after_compression += side * r * 2
    _report_compression_stats(bucket, state)

    # the padded square copy (PyTorch resizes the bucket in place)
    padded = creation.zeros((side * side,), device=device, dtype=dtype)
    padded[:total].copy_(input_tensor)
    input_copy = _add_error(state, bucket_index, padded) if state.use_error_feedback \
        else None
    matrix = padded.view(side, side)

    if not state.warm_start or bucket_index not in state.p_memory_dict:
        state.p_memory_dict[bucket_index] = creation.empty((side, r), device=device,
                                                           dtype=dtype)
        state.q_memory_dict[bucket_index] = creation.empty((side, r), device=device,
                                                           dtype=dtype)
        _fill_random([state.q_memory_dict[bucket_index]], state.rng)
    q = state.q_memory_dict[bucket_index]
    _orthogonalize(q.unsqueeze(0))
    state.p_memory_dict[bucket_index].copy_(fw.matmul(matrix, q))
    fut = _c.all_reduce(state.p_memory_dict[bucket_index], group=state.process_group,
                        async_op=True).get_future()

    def compute_q(fut):
        p = state.p_memory_dict[bucket_index] = fut.value()[0]
        _orthogonalize(p.unsqueeze(0))
        state.q_memory_dict[bucket_index].copy_(fw.matmul(matrix.t(), p))
        return _all_reduced(state.q_memory_dict[bucket_index], state)

    def decompress(fut):
        q = state.q_memory_dict[bucket_index] = fut.value().div_(world)
        matrix.copy_(fw.matmul(state.p_memory_dict[bucket_index], q.t()))
        if state.use_error_feedback:
            state.error_dict[bucket_index] = input_copy - padded
        if not state.warm_start:
            state.p_memory_dict.clear()
            state.q_memory_dict.clear()
        input_tensor.copy_(padded[:total])
        state.maybe_increase_iter(bucket)
        return input_tensor

    return fut.then(compute_q).then(decompress)
