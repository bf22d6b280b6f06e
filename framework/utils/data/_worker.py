"""What runs inside a DataLoader worker process: seeding, the fetch loop, worker info, and the
wrapper that carries a worker's exception to the main process."""
import multiprocessing.queues
import os
import pickle
import queue
import random
import sys
import traceback

from ... import _fd_channel

__all__ = ["WorkerInfo", "get_worker_info"]

# how often a waiting worker checks that its parent is still alive (seconds)
POLL_INTERVAL = 0.5


class WorkerInfo:
    """What a worker process knows about itself: ``id`` (0 .. num_workers - 1),
    ``num_workers``, ``seed`` (``base_seed + id``) and its copy of ``dataset``.
    Read-only."""

    __initialized = False

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs)
        self.__initialized = True

    def __setattr__(self, key, val):
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        return super().__setattr__(key, val)

    def __repr__(self):
        items = ", ".join(f"{k}={getattr(self, k)}" for k in self.__keys)
        return f"{self.__class__.__name__}({items})"


_worker_info = None


def get_worker_info():
    """In a DataLoader worker process, its ``WorkerInfo``; ``None`` in the main process.
    An ``IterableDataset`` uses it in ``__iter__`` to load only its worker's shard."""
    return _worker_info


class ExceptionWrapper:
    """An exception caught in a worker, with its formatted traceback, to be re-raised in the
    main process as the same type (PyTorch's ExceptionWrapper)."""

    def __init__(self, exc_info=None, where="in background"):
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_name = self.exc_type.__name__
        try:
            pickle.dumps(self.exc_type)
        except Exception:
            # a class that cannot reach the main process (defined in a function, ...)
            self.exc_type = RuntimeError
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_name} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            # KeyError quotes its message with repr(): keep the newlines readable
            msg = KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            # the type cannot be built from one message string
            raise RuntimeError(msg) from None
        try:
            raise exception
        finally:
            # no frame -> exception -> traceback -> frame cycle: the iterator that raised is
            # freed (and its workers stopped) as soon as the caller drops it
            del exception


class KeyErrorMessage(str):
    def __repr__(self):
        return self


class _IterableDatasetStopIteration:
    """Sent by a worker whose IterableDataset iterator is exhausted."""

    def __init__(self, worker_id):
        self.worker_id = worker_id


class _ResumeIteration:
    """Sent to persistent workers at the start of a new epoch; echoed back as acknowledgement."""


class _ResultQueue(multiprocessing.queues.Queue):
    """The workers' result queue. A result that cannot be pickled (in the worker's feeder
    thread) is replaced by the error, re-raised in the main process, instead of being
    dropped, which would leave the main process waiting for it forever."""

    def _on_queue_feeder_error(self, e, obj):
        info = get_worker_info()
        if info is None or not isinstance(obj, tuple) or len(obj) != 2:
            return super()._on_queue_feeder_error(e, obj)
        where = f"in DataLoader worker process {info.id}"
        self.put((obj[0], ExceptionWrapper((type(e), e, e.__traceback__), where=where)))


def _generate_state(base_seed, worker_id):
    """A NumPy seed (four uint32 words) for a worker: ``numpy.random.SeedSequence``'s hash
    of ``[worker_id, base_seed low, base_seed high, 0]``, exactly as PyTorch computes it, so
    NumPy streams in workers differ from the ``random`` and framework streams."""
    mask32 = 0xFFFFFFFF
    mult_a, mult_b = 0x931E8875, 0x58F38DED
    mix_l, mix_r = 0xCA01F9DD, 0x4973F715
    xshift = 16
    entropy = [worker_id, base_seed & mask32, base_seed >> 32, 0]
    hash_a = [0x43B0D7E5]

    def hashmix(value):
        value = (value ^ hash_a[0]) & mask32
        hash_a[0] = (hash_a[0] * mult_a) & mask32
        value = (value * hash_a[0]) & mask32
        return (value ^ (value >> xshift)) & mask32

    def mix(x, y):
        r = ((mix_l * x) - (mix_r * y)) & mask32
        return (r ^ (r >> xshift)) & mask32

    pool = [hashmix(e) for e in entropy]
    for src in range(4):
        for dst in range(4):
            if src != dst:
                pool[dst] = mix(pool[dst], hashmix(pool[src]))
    hash_b = 0x8B51F9DD
    state = []
    for value in pool:
        value = (value ^ hash_b) & mask32
        hash_b = (hash_b * mult_b) & mask32
        value = (value * hash_b) & mask32
        state.append((value ^ (value >> xshift)) & mask32)
    return state


def seed_worker(base_seed, worker_id):
    """Seeds ``random``, the framework's default generators and NumPy's global generator of
    worker ``worker_id`` as PyTorch does. Returns the worker's seed."""
    from ... import random as _random
    seed = base_seed + worker_id
    random.seed(seed)
    _random.manual_seed(seed)
    try:
        import numpy as np
    except ImportError:
        return seed
    np.random.seed(_generate_state(base_seed, worker_id))
    return seed


class _MapFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn

    def fetch(self, index):
        if self.auto_collation:
            if callable(getattr(self.dataset, "__getitems__", None)):
                data = self.dataset.__getitems__(index)
            else:
                data = [self.dataset[i] for i in index]
        else:
            data = self.dataset[index]
        return self.collate_fn(data)


class _IterableFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.dataset_iter = iter(dataset)
        self.ended = False

    def fetch(self, index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if len(data) == 0 or (self.drop_last and len(data) < len(index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


def create_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last):
    cls = _IterableFetcher if iterable else _MapFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)


def _worker_loop(iterable, dataset, index_queue, data_queue, done_event, auto_collation,
                 collate_fn, drop_last, base_seed, init_fn, worker_id, num_workers,
                 fd_sender=None):
    """A worker's life: seed, run ``init_fn``, then fetch ``(task, index)`` items from
    ``index_queue`` and put ``(task, data)`` on ``data_queue`` until it gets ``None``, the
    done event is set, or the parent process is gone. With ``fd_sender`` the data goes
    pickled here, its shared memory's fds on that channel (framework/_fd_channel.py)."""
    global _worker_info
    # the process that started this one (the main process, or forkserver's server, which
    # exits with it): if it goes, this worker is reparented and stops
    parent_pid = os.getppid()
    try:
        try:
            from ... import set_num_threads
            set_num_threads(1)  # workers run side by side: one thread each
        except ImportError:
            pass
        seed = seed_worker(base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                  dataset=dataset)
        init_exception = None
        fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = create_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
        # an exhausted IterableDataset worker idles until it gets None
        iteration_end = False
        while os.getppid() == parent_pid:
            try:
                r = index_queue.get(timeout=POLL_INTERVAL)
            except queue.Empty:
                if done_event.is_set():
                    # shutting down, but the None was lost: the main process's index queue
                    # may have been finalized first when garbage collection freed the iterator
                    break
                continue
            if isinstance(r, _ResumeIteration):
                data_queue.put((r, None))
                iteration_end = False
                if init_exception is None:
                    fetcher = create_fetcher(iterable, dataset, auto_collation, collate_fn,
                                             drop_last)
                continue
            if r is None:
                break
            if done_event.is_set() or iteration_end:
                continue
            idx, index = r
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = fetcher.fetch(index)
                except Exception as e:
                    if isinstance(e, StopIteration) and iterable:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(
                            where=f"in DataLoader worker process {worker_id}")
            if fd_sender is not None:
                try:
                    data = _fd_channel.Pickled(_fd_channel.dumps(data, fd_sender))
                except Exception:
                    data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
            data_queue.put((idx, data))
            del data, idx, index, r  # frees the batch before waiting again
    except KeyboardInterrupt:
        # the main process raises it
        pass
