"""The basic DDP communication hooks: all-reduce, and all-reduce in 16-bit floats."""
from ... import collectives as _c
from ...process_group import _resolve
from ...._dtype import bfloat16, float16

__all__ = ["allreduce_hook", "fp16_compress_hook", "bf16_compress_hook",
           "fp16_compress_wrapper", "bf16_compress_wrapper"]


def _group_size(process_group):
    pg = _resolve(process_group)
    return 1 if pg is None else pg.size()


def _allreduce_fut(process_group, tensor):
    """Averages ``tensor`` (in place) over the group; a future of the result."""
    tensor.div_(_group_size(process_group))
    return _c.all_reduce(tensor, group=process_group, async_op=True).get_future() \
        .then(lambda fut: fut.value()[0])


def allreduce_hook(process_group, bucket):
    """All-reduces the bucket's gradients and averages them: the same result as DDP
    without a hook."""
    return _allreduce_fut(process_group, bucket.buffer())


def _compress_hook(dtype, process_group, bucket):
    buffer = bucket.buffer()
    compressed = buffer.to(dtype).div_(_group_size(process_group))

    def decompress(fut):
        buffer.copy_(fut.value()[0])
        return buffer
    return _c.all_reduce(compressed, group=process_group, async_op=True).get_future() \
        .then(decompress)


def fp16_compress_hook(process_group, bucket):
    """Casts the bucket to ``float16``, divides it by the group size, all-reduces it and
    casts the result back to the bucket's dtype."""
    return _compress_hook(float16, process_group, bucket)


def bf16_compress_hook(process_group, bucket):
    """Casts the bucket to ``bfloat16``, divides it by the group size, all-reduces it and
    casts the result back to the bucket's dtype."""
    return _compress_hook(bfloat16, process_group, bucket)


def _compress_wrapper(dtype, hook, name):
    def wrapper_hook(hook_state, bucket):
        original = bucket.buffer()
        bucket.set_buffer(original.to(dtype))
        fut = hook(hook_state, bucket)

        def decompress(fut):
            original.copy_(fut.value())
            bucket.set_buffer(original)
            return original
        return fut.then(decompress)
    wrapper_hook.__name__ = wrapper_hook.__qualname__ = name
    return wrapper_hook


def fp16_compress_wrapper(hook):
    """Runs ``hook`` on the bucket cast to ``float16`` and casts its result back to the
    bucket's dtype (``fp16_compress_wrapper(allreduce_hook)`` is ``fp16_compress_hook``)."""
    return _compress_wrapper(float16, hook, "fp16_compress_wrapper_hook")


def bf16_compress_wrapper(hook):
    """Runs ``hook`` on the bucket cast to ``bfloat16`` and casts its result back to the
    bucket's dtype."""
    return _compress_wrapper(bfloat16, hook, "bf16_compress_wrapper_hook")
