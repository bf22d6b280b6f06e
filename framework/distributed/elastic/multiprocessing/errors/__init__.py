"""Error reporting of launched workers (``torch.distributed.elastic.multiprocessing.errors``).

A worker's entry point decorated with ``@record`` writes an uncaught exception to the file
named by ``TORCHELASTIC_ERROR_FILE`` (when set) as JSON, in torchelastic's format::

    {"message": {"message": "ValueError: ...",
                 "extraInfo": {"py_callstack": "<traceback>", "timestamp": "<seconds>"}}}

and re-raises it. ``ChildFailedError`` is what a launcher raises for failed workers.
"""
import json
import logging
import os
import signal
import socket
import time
import traceback
from dataclasses import dataclass, field
from datetime import datetime
from functools import wraps

__all__ = ["ProcessFailure", "ChildFailedError", "record", "ErrorHandler",
           "get_error_handler"]

logger = logging.getLogger(__name__)

_NOT_AVAILABLE = "<N/A>"


class ErrorHandler:
    """Writes a worker's exception to the error file (``TORCHELASTIC_ERROR_FILE``)."""

    def _get_error_file_path(self):
        return os.environ.get("TORCHELASTIC_ERROR_FILE")

    def initialize(self):
        """Enables Python's fault handler, so a crash leaves a traceback on stderr."""
        try:
            import faulthandler
            faulthandler.enable(all_threads=True)
        except Exception:
            pass

    def record_exception(self, e):
        """Writes ``e`` and the traceback being handled to the error file, if one is set."""
        path = self._get_error_file_path()
        if path:
            data = {"message": {"message": f"{type(e).__name__}: {e}",
                                "extraInfo": {"py_callstack": traceback.format_exc(),
                                              "timestamp": str(int(time.time()))}}}
            with open(path, "w") as fp:
                json.dump(data, fp)

    def dump_error_file(self, rootcause_error_file, error_code=0):
        """Copies a child's error file to this process's, with ``error_code`` set."""
        with open(rootcause_error_file) as fp:
            data = json.load(fp)
        if error_code and isinstance(data.get("message"), dict):
            data["message"]["errorCode"] = error_code
        path = self._get_error_file_path()
        if not path:
            logger.error("no error file defined for parent, to copy child error file (%s)",
                         rootcause_error_file)
            return
        if os.path.isfile(path):
            os.remove(path)
        with open(path, "w") as fp:
            fp.write(json.dumps(data))


def get_error_handler():
    return ErrorHandler()


@dataclass
class ProcessFailure:
    """A failed worker: its local rank, pid, exit code (negative: killed by that signal)
    and error file, from which ``message`` and ``timestamp`` are read when it exists."""
    local_rank: int
    pid: int
    exitcode: int
    error_file: str
    error_file_data: dict = field(init=False)
    message: str = field(init=False)
    timestamp: int = field(init=False)

    def __post_init__(self):
        self.error_file_data = {"message": "<NONE>"}
        self.message = ""
        self.timestamp = int(time.time())
        if os.path.isfile(self.error_file):
            with open(self.error_file) as fp:
                self.error_file_data = json.load(fp)
            msg = self.error_file_data["message"]
            self.message = msg
            self.timestamp = int(self.error_file_data.get("timestamp", 0)) \
                if isinstance(msg, str) else int(msg["extraInfo"]["timestamp"])
        else:
            self.error_file = _NOT_AVAILABLE
        if not self.message:
            if self.exitcode < 0:
                self.message = (f"Signal {-self.exitcode} ({self.signal_name()}) received "
                                f"by PID {self.pid}")
            else:
                self.message = ("To enable traceback see: "
                                "https://pytorch.org/docs/stable/elastic/errors.html")

    def signal_name(self):
        if self.exitcode < 0:
            try:
                return signal.Signals(-self.exitcode).name
            except ValueError:
                pass
        return _NOT_AVAILABLE

    def timestamp_isoformat(self):
        """The time of the failure as YYYY-MM-DD_HH:MM:SS."""
        return datetime.fromtimestamp(self.timestamp).isoformat(sep="_")


class ChildFailedError(Exception):
    """Raised by a launcher when workers failed: ``failures`` maps their global ranks to
    ``ProcessFailure``; the message shows the first failure (the root cause) and the
    others. Raised inside ``@record``, the root cause's error file becomes this
    process's."""

    def __init__(self, name, failures):
        if not failures:
            raise AssertionError("ChildFailedError needs at least one failure")
        self.name = name
        self.failures = failures
        super().__init__(self.format_msg())

    def get_first_failure(self):
        """(global rank, ProcessFailure) of the earliest failure."""
        rank = min(self.failures, key=lambda r: self.failures[r].timestamp)
        return rank, self.failures[rank]

    def format_msg(self, boarder_delim="=", section_delim="-"):
        title = f"{self.name} FAILED"
        root_rank, _ = self.get_first_failure()
        root, others, width = "", [], len(title)
        for idx, (rank, failure) in enumerate(self.failures.items()):
            text = self._format_failure(idx, rank, failure)
            width = max([width] + [len(line) for line in text.split("\n")])
            if rank == root_rank:
                root = text
            else:
                others.append(text)
        width = min(width, 60)
        border, section = boarder_delim * width, section_delim * width
        return "\n".join(["", border, title, section, "Failures:",
                          "\n".join(others or ["  <NO_OTHER_FAILURES>"]), section,
                          "Root Cause (first observed failure):", root, border])

    def _format_failure(self, idx, rank, failure):
        msg = failure.message
        if isinstance(msg, dict):
            msg = msg.get("extraInfo", {}).get("py_callstack", msg.get("message", _NOT_AVAILABLE))
            msg = msg.replace("\n", "\n  ")
        sig = failure.signal_name()
        sig = f" ({sig})" if sig != _NOT_AVAILABLE else ""
        return (f"[{idx}]:\n"
                f"  time      : {failure.timestamp_isoformat()}\n"
                f"  host      : {socket.getfqdn()}\n"
                f"  rank      : {rank} (local_rank: {failure.local_rank})\n"
                f"  exitcode  : {failure.exitcode} (pid: {failure.pid}) {sig}\n"
                f"  error_file: {failure.error_file}\n"
                f"  traceback : {msg}")


def record(fn, error_handler=None):
    """Decorates a worker's entry point: an exception escaping ``fn`` is written to the
    error file (``TORCHELASTIC_ERROR_FILE``) and raised again; ``SystemExit(0)`` returns
    None."""
    handler = error_handler or get_error_handler()

    @wraps(fn)
    def wrapper(*args, **kwargs):
        handler.initialize()
        try:
            return fn(*args, **kwargs)
        except SystemExit as se:
            if se.code == 0:
                return None
            raise
        except ChildFailedError as e:
            rank, failure = e.get_first_failure()
            if failure.error_file != _NOT_AVAILABLE:
                handler.dump_error_file(failure.error_file, failure.exitcode)
            else:
                logger.info("local_rank %s FAILED with no error file. Decorate your entrypoint "
                            "fn with @record for traceback info. See: "
                            "https://pytorch.org/docs/stable/elastic/errors.html", rank)
            raise
        except Exception as e:
            handler.record_exception(e)
            raise
    return wrapper
