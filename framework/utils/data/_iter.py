"""DataLoader iterators: one loading in the main process, one driving worker processes."""
import atexit
import collections.abc
import itertools
import multiprocessing as _mp
import os
import queue
import signal
import time
import warnings
import weakref

from ... import _fd_channel
from . import _worker

# how often the main process, waiting for a batch, checks that its workers are alive (s)
STATUS_CHECK_INTERVAL = 0.2
# how long shutting down waits for a worker to exit before terminating it (s)
JOIN_TIMEOUT = 5.0

_live_iterators = weakref.WeakSet()
_exiting = [False]


@atexit.register
def _shutdown_all():
    # at interpreter exit: stop every worker before multiprocessing's own exit handler
    _exiting[0] = True
    for it in list(_live_iterators):
        it._shutdown_workers()


def _draw_base_seed(generator):
    from ..._ops.creation import empty
    from ... import _dtype
    return int(empty((), dtype=_dtype.int64).random_(generator=generator).item())


def _pin(data):
    """``data`` with every tensor copied to pinned memory (containers rebuilt as PyTorch's
    pin_memory does: tuples become lists)."""
    from ..._tensor import Tensor
    if isinstance(data, Tensor):
        return data.pin_memory()
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        try:
            return type(data)({k: _pin(v) for k, v in data.items()})
        except TypeError:
            return {k: _pin(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(_pin(s) for s in data))
    if isinstance(data, tuple):
        return [_pin(s) for s in data]
    if isinstance(data, collections.abc.Sequence):
        try:
            return type(data)([_pin(s) for s in data])
        except TypeError:
            return [_pin(s) for s in data]
    if hasattr(data, "pin_memory"):
        return data.pin_memory()
    return data


class _BaseDataLoaderIter:
    def __init__(self, loader):
        from ... import cuda
        self._dataset = loader.dataset
        self._iterable = loader._dataset_kind_iterable
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        if loader.pin_memory and loader.pin_memory_device:
            warnings.warn("pin_memory_device is deprecated, the current accelerator will be used "
                          f"as the device,ignore pin_memory_device='{loader.pin_memory_device}'.",
                          stacklevel=5)
        available = cuda.is_available()
        if loader.pin_memory and not available:
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.", stacklevel=5)
        self._pin_memory = bool(loader.pin_memory) and available
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        # drawn every epoch (every new iterator), as PyTorch does, even without workers
        self._base_seed = _draw_base_seed(loader.generator)
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self):
        return next(self._sampler_iter)

    def _next_data(self):
        raise NotImplementedError

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        if (self._iterable and self._IterableDataset_len_called is not None
                and self._num_yielded > self._IterableDataset_len_called):
            msg = (f"Length of IterableDataset {self._dataset} was reported to be "
                   f"{self._IterableDataset_len_called}(when accessing len(dataloader)), but "
                   f"{self._num_yielded} samples have been fetched. ")
            if self._num_workers > 0:
                msg += ("For multiprocessing data-loading, this could be caused by not properly "
                        "configuring the IterableDataset replica at each worker. Please see "
                        "https://pytorch.org/docs/stable/data.html#torch.utils.data."
                        "IterableDataset for examples.")
            warnings.warn(msg, stacklevel=2)
        return data

    def __len__(self):
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError(f"{self.__class__.__name__} cannot be pickled")


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        if self._timeout != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0")
        if self._num_workers != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires num_workers == 0")
        self._fetcher = _worker.create_fetcher(self._iterable, self._dataset,
                                               self._auto_collation, self._collate_fn,
                                               self._drop_last)

    def _next_data(self):
        index = self._next_index()
        data = self._fetcher.fetch(index)
        if self._pin_memory:
            data = _pin(data)
        return data


def _death_error(workers):
    """PyTorch's errors for workers that died: the cause names the signal or exit code."""
    causes = []
    for w in workers:
        code = w.exitcode
        if code is not None and code < 0:
            try:
                name = signal.strsignal(-code) or f"signal {-code}"
            except ValueError:
                name = f"signal {-code}"
            causes.append(f"DataLoader worker (pid {w.pid}) is killed by signal: {name}.")
        else:
            causes.append(f"DataLoader worker (pid {w.pid}) exited unexpectedly with exit code "
                          f"{code}. Details are lost due to multiprocessing. Rerunning with "
                          "num_workers=0 may give better error trace.")
    cause = RuntimeError(" ".join(causes))
    pids = ", ".join(str(w.pid) for w in workers)
    err = RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly")
    err.__cause__ = cause
    return err


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """Sends ``(task, indices)`` round-robin to per-worker index queues, keeping at most
    ``prefetch_factor * num_workers`` tasks outstanding, and reads ``(task, batch)`` from one
    shared result queue, reordering through a buffer unless ``in_order=False``."""

    def __init__(self, loader):
        self._shutdown = True  # until the workers exist
        self._owner_pid = os.getpid()
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        if self._num_workers <= 0:
            raise AssertionError("num_workers must be greater than 0 for "
                                 "MultiProcessingDataLoaderIter")
        if self._prefetch_factor <= 0:
            raise AssertionError("prefetch_factor must be greater than 0 for "
                                 "MultiProcessingDataLoaderIter")
        try:
            # registers the reducers that send tensors through shared memory
            from ... import multiprocessing as _fwmp  # noqa: F401
        except ImportError:
            pass
        ctx = loader.multiprocessing_context or _mp.get_context()
        self._worker_init_fn = loader.worker_init_fn
        self._worker_result_queue = _worker._ResultQueue(ctx=ctx)
        self._workers_done_event = ctx.Event()
        self._index_queues = []
        self._workers = []
        self._fd_receivers = []
        self._shutdown = False
        _live_iterators.add(self)
        for i in range(self._num_workers):
            index_queue = ctx.Queue()
            # the main process never waits for its index items to be flushed at exit
            index_queue.cancel_join_thread()
            # the batches' shared-memory fds come on their own socket (_fd_channel)
            receiver, sender = _fd_channel.channel()
            self._fd_receivers.append(receiver)
            w = ctx.Process(target=_worker._worker_loop,
                            args=(self._iterable, self._dataset, index_queue,
                                  self._worker_result_queue, self._workers_done_event,
                                  self._auto_collation, self._collate_fn, self._drop_last,
                                  self._base_seed, self._worker_init_fn, i, self._num_workers,
                                  sender))
            w.daemon = True
            try:
                w.start()
            finally:
                sender.sock.close()    # the worker has its own copy
            # registered only once started, so shutdown never joins an unstarted process
            self._index_queues.append(index_queue)
            self._workers.append(w)
        self._data_queue = self._worker_result_queue
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0  # next task to send
        self._rcvd_idx = 0  # next task to return
        # task -> (worker,) while outstanding, (worker, data) once received out of order
        self._task_info = {}
        self._tasks_outstanding = 0
        # whether each worker still has work this epoch (False once its IterableDataset ends)
        self._workers_status = [True] * self._num_workers
        self._workers_num_tasks = [0] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            # persistent workers: restart their fetchers and drop what the last epoch left
            for q in self._index_queues:
                q.put(_worker._ResumeIteration())
            remaining = self._num_workers
            while remaining > 0:
                return_idx, _ = self._get_data()
                if isinstance(return_idx, _worker._ResumeIteration):
                    remaining -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_get_data(self, timeout=STATUS_CHECK_INTERVAL):
        try:
            idx, data = self._data_queue.get(timeout=timeout)
            if data.__class__ is _fd_channel.Pickled:
                data = data.load()
            return True, (idx, data)
        except Exception as e:
            # on a timeout, or a batch that cannot be received (its sender died), check
            # whether workers died: the only check, no SIGCHLD handler is installed. A batch
            # whose sender was just killed can fail before the kill is visible: give the
            # dead process up to a second to be reaped
            if not isinstance(e, queue.Empty):
                end = time.monotonic() + 1.0
                while time.monotonic() < end and all(
                        w.is_alive() for i, w in enumerate(self._workers)
                        if self._workers_status[i]):
                    time.sleep(0.01)
            failed = []
            for worker_id, w in enumerate(self._workers):
                if self._workers_status[worker_id] and not w.is_alive():
                    failed.append(w)
                    self._mark_worker_as_unavailable(worker_id)
            if failed:
                err = _death_error(failed)
                self._shutdown_workers()
                raise err  # its cause names the signal or exit code
            if isinstance(e, queue.Empty):
                return False, None
            raise

    def _get_data(self):
        if self._timeout > 0:
            # polls in short steps so that a dead worker is noticed before the timeout
            deadline = time.monotonic() + self._timeout
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
                success, data = self._try_get_data(min(left, STATUS_CHECK_INTERVAL))
                if success:
                    return data
        while True:
            success, data = self._try_get_data()
            if success:
                return data

    def _next_data(self):
        while True:
            # skip tasks of workers that ended (IterableDataset) and never answered
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info:
                    worker_id = info[0]
                    if len(info) == 2 or self._workers_status[worker_id]:
                        break
                    del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:
                worker_id, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)
            if self._shutdown or self._tasks_outstanding <= 0:
                raise AssertionError("Invalid iterator state: shutdown or no outstanding "
                                     "tasks when fetching next data")
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if self._iterable and isinstance(data, _worker._IterableDatasetStopIteration):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                if not self._in_order:
                    worker_id = self._task_info.pop(idx)[0]
                    return self._process_data(data, worker_id)
                self._task_info[idx] += (data,)  # kept until its turn
            else:
                worker_id = self._task_info.pop(idx)[0]
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)

    def _try_put_index(self):
        max_tasks = self._prefetch_factor * self._num_workers
        if self._tasks_outstanding >= max_tasks:
            raise AssertionError("Number of outstanding tasks exceeded maximum allowed tasks")
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):  # the next active worker, if any
            worker_queue_idx = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_queue_idx]:
                if self._in_order:
                    break
                # out of order: no worker gets more than its share of the outstanding tasks
                if (self._workers_num_tasks[worker_queue_idx]
                        < max_tasks // sum(self._workers_status)):
                    break
        else:
            return
        self._index_queues[worker_queue_idx].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_queue_idx,)
        self._workers_num_tasks[worker_queue_idx] += 1
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _process_data(self, data, worker_idx):
        self._workers_num_tasks[worker_idx] -= 1
        self._try_put_index()
        if isinstance(data, _worker.ExceptionWrapper):
            data.reraise()
        if self._pin_memory:
            data = _pin(data)
        return data

    def _mark_worker_as_unavailable(self, worker_id, shutdown=False):
        # None tells the worker to exit; it takes no further tasks
        try:
            self._index_queues[worker_id].put(None)
        except (ValueError, OSError):
            pass  # queue already closed
        self._workers_status[worker_id] = False

    def _shutdown_workers(self):
        """Stops the workers: done event, ``None`` to each, then join (reading the result
        queue meanwhile so that no worker blocks on a full pipe and no batch in flight is
        lost with its shared memory), terminating those that do not exit in time."""
        if self._shutdown or os.getpid() != self._owner_pid:
            return  # done already, or a copy inherited by a forked child: not its workers
        self._shutdown = True
        _live_iterators.discard(self)
        try:
            self._workers_done_event.set()
            for worker_id in range(len(self._workers)):
                if self._persistent_workers or self._workers_status[worker_id]:
                    self._mark_worker_as_unavailable(worker_id, shutdown=True)
            # a worker that died abruptly may have left half a message in the pipe, which
            # would block a read forever (this process holds a writing end): no draining then
            deadline = time.monotonic() + JOIN_TIMEOUT
            while time.monotonic() < deadline:
                codes = [w.exitcode for w in self._workers]
                if None not in codes or any(c for c in codes):
                    break
                self._drain(0.02)
            for w in self._workers:
                w.join(timeout=max(0.0, deadline - time.monotonic()))
                if w.is_alive():
                    w.terminate()
                    w.join(timeout=JOIN_TIMEOUT)
            if all(w.exitcode == 0 for w in self._workers):
                self._drain(0)
            for q in self._index_queues:
                q.cancel_join_thread()
                q.close()
            for r in self._fd_receivers:
                r.close()    # the fds of batches never read go with it
            self._worker_result_queue.cancel_join_thread()
            self._worker_result_queue.close()
            for w in self._workers:
                try:
                    w.close()
                except ValueError:
                    pass  # still running after terminate and join: leave it to the OS
        finally:
            self._task_info = {}

    def _drain(self, timeout):
        """Reads and drops whatever is in the result queue."""
        try:
            while True:
                if timeout:
                    self._worker_result_queue.get(timeout=timeout)
                else:
                    self._worker_result_queue.get_nowait()
        except queue.Empty:
            return
        except Exception:
            return  # a message cut short by a terminated worker

    def __del__(self):
        if not _exiting[0]:
            self._shutdown_workers()
