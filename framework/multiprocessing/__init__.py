"""framework.multiprocessing: Python's ``multiprocessing`` (everything it exports is
re-exported), with framework tensors crossing process boundaries through shared memory
instead of being copied (PyTorch's ``torch.multiprocessing``).

Importing it registers reducers with ``multiprocessing.reduction.ForkingPickler``, so that
the queues, pipes, pools and managers of every start method's context send a tensor as a
handle of its storage, moved to shared memory. The receiver's tensor aliases the sender's
memory: in-place changes on either side are seen by both. Parameters keep
``requires_grad``; gradients are not sent. A simulated cuda tensor (TRITON_INTERPRET=1)
is shared the same way and arrives as a cuda tensor over the same host memory; real
CUDA tensors (CUDA IPC) are not supported.

``spawn`` starts ``nprocs`` processes running ``fn(i, *args)`` and reports their errors.
"""
import multiprocessing
from multiprocessing import *  # noqa: F401,F403 - a drop-in replacement

from .. import _shared_memory
from .reductions import init_reductions
from .spawn import (ProcessContext, ProcessException, ProcessExitedException,
                    ProcessRaisedException, spawn, start_processes)

__all__ = list(multiprocessing.__all__) + [
    "spawn", "start_processes", "ProcessContext", "ProcessException",
    "ProcessRaisedException", "ProcessExitedException", "get_sharing_strategy",
    "set_sharing_strategy", "get_all_sharing_strategies"]


def set_sharing_strategy(new_strategy):
    """Sets how cpu tensors are shared from now on in this process:
    ``"file_descriptor"`` (default) or ``"file_system"``."""
    _shared_memory.set_strategy(new_strategy)


def get_sharing_strategy():
    """The current strategy for sharing cpu tensors."""
    return _shared_memory.get_strategy()


def get_all_sharing_strategies():
    """The set of sharing strategies supported on this system."""
    return set(_shared_memory.STRATEGIES)


init_reductions()
