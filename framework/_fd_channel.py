"""Direct file-descriptor passing for a DataLoader worker's batches.

Under the ``file_descriptor`` sharing strategy a pickled storage carries its segment's fd as
a ``multiprocessing.reduction.DupFd``: the receiving process connects to the sender's
resource-sharer thread, authenticates, and asks for the fd. That round trip costs about a
millisecond per tensor and waits for a thread of a worker that is busy loading the next
batch, so with two workers the main process spent most of its time there. A channel
instead is a Unix socket pair made per worker by the main process: while the worker
pickles a batch (:func:`dumps`), the storages' handles name the channel and a sequence
number, and once pickled, all of the batch's fds go in one message on the socket, before
the batch is put on the result queue. The main process (:func:`take`) reads them from its
end when it unpickles the batch: no round trip, no waiting on the worker.

Nothing leaks: fds of a batch that is never unpickled stay in the socket until the main
process closes it (the kernel closes them then), and a fd received for a handle that will
not be read (an earlier batch dropped unread) is closed when a later one is taken. A full
socket (hundreds of messages unread) makes the worker wait, as a full result queue does:
the main process reads every batch's fds as it receives the batch, and a batch's fds are
sent before the batch, so waiting cannot deadlock, except for a batch whose own fds would
fill the socket: a batch of more than ``_MAX_BATCH_FDS`` storages, or one that cannot be
sent (the main process gone), is pickled again with ordinary handles.
"""
import itertools
import os
import socket
import struct
import threading
from multiprocessing.reduction import ForkingPickler

_HEADER = struct.Struct("<qq")   # first sequence number, number of fds
_MAX_FDS = 250                   # per message (the kernel's SCM_MAX_FD is 253)
_MAX_BATCH_FDS = 8 * _MAX_FDS     # per batch: a socket holds about 270 messages
_RECV_TIMEOUT = 60.0             # the fds are sent before the batch: they are there

_tls = threading.local()
_counter = itertools.count()
_lock = threading.Lock()
_receivers = {}                  # token -> Receiver, in the process that made the channel


class Sender:
    """A worker's end of a channel (picklable: sent to a spawned worker as an argument)."""

    def __init__(self, sock, token):
        self.sock, self.token, self.next_seq = sock, token, 0


class Receiver:
    """The main process's end of a channel: fds by sequence number."""

    def __init__(self, sock, token):
        self.sock, self.token, self.pending = sock, token, {}

    def take(self, seq):
        """The fd sent under ``seq`` (the caller owns it)."""
        pending = self.pending
        while seq not in pending:
            try:
                msg, fds, _, _ = socket.recv_fds(self.sock, _HEADER.size, _MAX_FDS)
            except (OSError, ValueError) as e:   # timeout, or closed
                raise RuntimeError(f"DataLoader: the shared memory of a batch did not arrive "
                                   f"from its worker ({e})") from None
            if not msg:
                raise RuntimeError("DataLoader: the worker's channel closed before the "
                                   "shared memory of a batch arrived")
            first, n = _HEADER.unpack(msg)
            for i, fd in enumerate(fds):
                pending[first + i] = fd
        for s in [s for s in pending if s < seq]:   # of batches dropped unread
            os.close(pending.pop(s))
        return pending.pop(seq)

    def close(self):
        with _lock:
            _receivers.pop(self.token, None)
        for fd in self.pending.values():
            os.close(fd)
        self.pending = {}
        self.sock.close()


def channel():
    """A new channel: (receiver, kept by this process; sender, for one worker)."""
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    a.settimeout(_RECV_TIMEOUT)
    token = f"{os.getpid()}-{next(_counter)}"
    receiver = Receiver(a, token)
    with _lock:
        _receivers[token] = receiver
    return receiver, Sender(b, token)


def outgoing(fd):
    """Inside :func:`dumps`: queues ``fd`` to go with the message and returns its handle
    part (token, sequence number); elsewhere None (the caller uses a DupFd)."""
    out = getattr(_tls, "out", None)
    if out is None:
        return None
    sender, fds = out
    fds.append(fd)
    return sender.token, sender.next_seq + len(fds) - 1


def dumps(obj, sender):
    """``obj`` pickled by ForkingPickler with its storages' fds sent on ``sender``'s
    channel (ordinary handles if they cannot be sent now)."""
    fds = []
    _tls.out = (sender, fds)
    try:
        payload = bytes(ForkingPickler.dumps(obj))   # (a memoryview: not picklable)
    finally:
        _tls.out = None
    first = sender.next_seq
    sender.next_seq += len(fds)
    if len(fds) > _MAX_BATCH_FDS:
        return _plain(obj)
    try:
        for i in range(0, len(fds), _MAX_FDS):
            chunk = fds[i:i + _MAX_FDS]
            socket.send_fds(sender.sock, [_HEADER.pack(first + i, len(chunk))], chunk)
    except OSError:   # the main process is gone (or closed its end)
        return _plain(obj)
    return payload


def _plain(obj):
    """``obj`` pickled with ordinary (DupFd) handles; the numbers already given to its
    storages are skipped, and their fds closed by the receiver if any were sent."""
    return bytes(ForkingPickler.dumps(obj))


def take(token, seq):
    """The fd of handle (token, seq), received in the process that made the channel."""
    with _lock:
        receiver = _receivers.get(token)
    if receiver is None:
        raise RuntimeError("a DataLoader worker's batch was unpickled outside the process "
                           "that iterates the DataLoader")
    return receiver.take(seq)


class Pickled:
    """A batch pickled in the worker by :func:`dumps`; ``load()`` in the main process."""

    __slots__ = ("payload",)

    def __init__(self, payload):
        self.payload = payload

    def load(self):
        return ForkingPickler.loads(self.payload)
