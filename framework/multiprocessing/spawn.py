"""``spawn``: runs ``fn(i, *args)`` in ``nprocs`` processes and reports the first failure
with the child's traceback (PyTorch's torch.multiprocessing.spawn)."""
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import tempfile
import time


class ProcessException(Exception):
    """A process started by ``spawn`` failed."""

    def __init__(self, msg, error_index, pid):
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.pid = pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A process raised an exception; the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """A process exited with a non-zero code or was killed by a signal."""

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code,
                            self.signal_name)


def _wrap(fn, i, args, error_file):
    # runs in the child: a raised exception leaves its traceback in error_file
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass   # the parent sent SIGINT: it knows
    except Exception:
        import traceback
        with open(error_file, "w") as f:
            f.write(traceback.format_exc())
        sys.exit(1)


class ProcessContext:
    """The processes started by ``spawn(..., join=False)``; ``join()`` them."""

    def __init__(self, processes, error_files):
        self.processes = processes
        self.error_files = error_files
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self):
        return [int(p.pid) for p in self.processes]

    def join(self, timeout=None, grace_period=None):
        """Waits for the processes (at most ``timeout`` seconds). Returns True once all
        have exited successfully, False while some still run. When one fails, the others
        are terminated (SIGTERM, then SIGKILL after ``grace_period`` seconds) and its
        error is raised: ProcessRaisedException or ProcessExitedException."""
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(list(self.sentinels), timeout=timeout)
        failed = None
        for sentinel in ready:
            index = self.sentinels.pop(sentinel)
            proc = self.processes[index]
            proc.join()
            if proc.exitcode != 0:
                failed = index
                break
        if failed is None:
            if not self.sentinels:
                self._remove_files()
            return not self.sentinels
        self._stop_others(grace_period)
        try:
            self._raise(failed)
        finally:
            self._remove_files()

    def _stop_others(self, grace_period):
        alive = [p for p in self.processes if p.is_alive()]
        for p in alive:
            p.terminate()
        deadline = time.monotonic() + (grace_period if grace_period is not None else 5.0)
        for p in alive:
            p.join(max(0.0, deadline - time.monotonic()))
        for p in alive:
            if p.is_alive():
                p.kill()
                p.join()

    def _raise(self, index):
        proc = self.processes[index]
        code = proc.exitcode
        trace = ""
        if os.path.exists(self.error_files[index]):
            with open(self.error_files[index]) as f:
                trace = f.read()
        if not trace:
            if code < 0:
                name = signal.Signals(-code).name
                raise ProcessExitedException(
                    f"process {index} terminated with signal {name}", error_index=index,
                    error_pid=proc.pid, exit_code=code, signal_name=name)
            raise ProcessExitedException(
                f"process {index} terminated with exit code {code}", error_index=index,
                error_pid=proc.pid, exit_code=code)
        msg = f"\n\n-- Process {index} terminated with the following error:\n{trace}"
        raise ProcessRaisedException(msg, index, proc.pid)

    def _remove_files(self):
        for path in self.error_files:
            try:
                os.unlink(path)
            except OSError:
                pass


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Starts ``nprocs`` processes of ``start_method`` running ``fn(i, *args)``; joins them
    (``join=True``) or returns their ProcessContext."""
    ctx = multiprocessing.get_context(start_method)
    processes, error_files = [], []
    for i in range(nprocs):
        fd, path = tempfile.mkstemp(prefix="fw_spawn_err_")
        os.close(fd)
        error_files.append(path)
        p = ctx.Process(target=_wrap, args=(fn, i, args, path), daemon=daemon)
        p.start()
        processes.append(p)
    context = ProcessContext(processes, error_files)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Spawns ``nprocs`` processes that run ``fn(i, *args)``, ``i`` the process index.

    With ``join=True`` waits for all of them; if one raises, the others are terminated and
    ProcessRaisedException (with the child's traceback) is raised; if one exits with a
    non-zero code or by a signal, ProcessExitedException. With ``join=False`` returns a
    ProcessContext to ``join()``."""
    return start_processes(fn, args, nprocs, join, daemon, start_method)
