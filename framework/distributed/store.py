"""Key-value stores (PyTorch's ``torch.distributed.Store``) and the distributed errors.

A store maps string keys to ``bytes`` values. ``HashStore`` keeps them in this process
(for threads), ``TCPStore`` in a socket server run by the master store (stdlib
``socketserver``, one thread per client connection), ``FileStore`` in a file that every
process reads and writes under an exclusive ``flock``. ``PrefixStore`` puts a prefix before
the keys of another store. Every store runs the same operations (``_apply``) on its table;
the blocking ones (``get``, ``wait``, a blocking ``queue_pop``) wait until the keys exist or
the store's timeout passes, and then raise ``DistStoreError``.
"""
import base64
import fcntl
import json
import os
import socket
import socketserver
import struct
import threading
import time
from datetime import timedelta

__all__ = [
    "DistError", "DistBackendError", "DistNetworkError", "DistStoreError", "QueueEmptyError",
    "Store", "HashStore", "TCPStore", "FileStore", "PrefixStore",
]

_DEFAULT_TIMEOUT = timedelta(seconds=300)


class DistError(RuntimeError):
    """Raised when an error occurs in the distributed library."""


class DistBackendError(DistError):
    """Raised when a backend error occurs in distributed."""


class DistNetworkError(DistError):
    """Raised when a network error occurs in distributed."""


class DistStoreError(DistError):
    """Raised when an error occurs in the distributed store."""


class QueueEmptyError(DistStoreError):
    """Raised by ``queue_pop`` when the queue is empty and it may not block."""


def _bytes(value):
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, (list, tuple)) and all(isinstance(v, int) for v in value):
        return bytes(value)     # PyTorch also takes a list of byte values
    raise TypeError(f"Store values must be str or bytes, got {type(value).__name__}")


def _key(key):
    if not isinstance(key, str):
        raise TypeError(f"Store keys must be str, got {type(key).__name__}")
    return key


def _seconds(timeout):
    if isinstance(timeout, timedelta):
        return timeout.total_seconds()
    raise TypeError(f"timeout must be a datetime.timedelta, got {type(timeout).__name__}")


# ---- the table: what every store does to its keys ---------------------------------------
_MUTATING = {"set", "add", "compare_set", "append", "delete_key", "multi_set", "queue_push",
             "queue_pop"}


def _apply(kv, queues, op, args):
    """Runs ``op`` on the table ``kv`` (key -> bytes) and ``queues`` (key -> list of bytes);
    never blocks (the blocking part of ``wait``/``queue_pop`` is the caller's)."""
    if op == "set":
        kv[args[0]] = args[1]
        return None
    if op == "get":                 # None: missing (the caller waits for it)
        return kv.get(args[0])
    if op == "add":
        key, amount = args
        old = kv.get(key, b"0")
        try:
            value = int(old) + amount
        except ValueError:
            raise ValueError(f"stoll: the value of key {key!r} ({old!r}) is not an "
                             "integer, so add() cannot increment it") from None
        kv[key] = str(value).encode()
        return value
    if op == "compare_set":
        key, expected, desired = args
        if key not in kv:
            # PyTorch: a missing key counts as the empty value
            if expected == b"":
                kv[key] = desired
                return desired
            return expected
        if kv[key] == expected:
            kv[key] = desired
            return desired
        return kv[key]
    if op == "append":
        kv[args[0]] = kv.get(args[0], b"") + args[1]
        return None
    if op == "check":
        return all(k in kv for k in args[0])
    if op == "delete_key":
        return kv.pop(args[0], None) is not None
    if op == "num_keys":
        return len(kv)
    if op == "multi_get":           # None: some key is missing
        keys = args[0]
        return [kv[k] for k in keys] if all(k in kv for k in keys) else None
    if op == "multi_set":
        for k, v in zip(*args):
            kv[k] = v
        return None
    if op == "list_keys":
        return list(kv)
    if op == "queue_push":
        queues.setdefault(args[0], []).append(args[1])
        return None
    if op == "queue_pop":           # None: empty
        q = queues.get(args[0])
        return q.pop(0) if q else None
    if op == "queue_len":
        return len(queues.get(args[0], ()))
    raise ValueError(f"unknown store operation {op!r}")


def _ready(op, result):
    """Whether a blocking operation's ``result`` means it can return now."""
    return result is not None if op in ("get", "multi_get", "queue_pop", "wait") else True


class _Table:
    """A thread-safe table: the data of a ``HashStore`` and of a ``TCPStore`` server."""

    def __init__(self):
        self.kv = {}
        self.queues = {}
        self.cond = threading.Condition()

    def run(self, op, args, timeout=None):
        """``op`` on the table; a blocking one waits up to ``timeout`` seconds and returns
        None if it still cannot complete."""
        if op == "wait":
            op, args = "multi_get", args
        with self.cond:
            result = _apply(self.kv, self.queues, op, args)
            if timeout is not None and not _ready(op, result):
                self.cond.wait_for(
                    lambda: _ready(op, _peek(self, op, args)), timeout)
                result = _apply(self.kv, self.queues, op, args)
            if op in _MUTATING:
                self.cond.notify_all()
            return result


def _peek(table, op, args):
    if op == "queue_pop":
        return table.queues.get(args[0]) or None
    return _apply(table.kv, table.queues, op, args)


class Store:
    """Base class of the key-value stores shared by processes to exchange information
    (``set``/``get``/``add``/``wait``...). Values are ``bytes``."""

    def __init__(self, timeout=_DEFAULT_TIMEOUT):
        self._timeout = timeout

    # the one thing a store implements: run an operation on its table; a blocking one
    # (get, multi_get, wait, queue_pop) waits up to ``wait_s`` seconds, returning None if
    # it still cannot complete
    def _run(self, op, args, wait_s=None):
        # a store written in Python overrides the public methods instead: a PrefixStore
        # around it reaches them through here
        if getattr(type(self), op) is getattr(Store, op):
            raise NotImplementedError(f"{type(self).__name__} does not implement {op}")
        if op == "wait":
            self.wait(args[0], None if wait_s is None else timedelta(seconds=wait_s))
            return True
        if op == "queue_pop":
            return getattr(self, op)(args[0], wait_s is not None)
        return getattr(self, op)(*args)

    def _timeout_error(self, keys, seconds):
        return DistStoreError("Wait timeout")

    def _blocking(self, op, args, keys, timeout=None):
        seconds = _seconds(self.timeout if timeout is None else timeout)
        result = self._run(op, args, seconds)
        if result is None:
            raise self._timeout_error(keys, seconds)
        return result

    @property
    def timeout(self):
        """The default timeout of the blocking operations."""
        return self._timeout

    def set_timeout(self, timeout):
        """Sets the default timeout of the blocking operations (a ``timedelta``)."""
        _seconds(timeout)
        self._timeout = timeout

    def set(self, key, value):
        """Inserts the key-value pair; an existing value is overwritten."""
        self._run("set", (_key(key), _bytes(value)))

    def get(self, key):
        """The value of ``key``; waits for the key until the timeout if it is missing."""
        return self._blocking("get", (_key(key),), [key])

    def add(self, key, amount):
        """Increments the integer value of ``key`` (created as 0) by ``amount``; returns the
        new value."""
        return self._run("add", (_key(key), int(amount)))

    def compare_set(self, key, expected_value, desired_value):
        """Sets ``key`` to ``desired_value`` if its value is ``expected_value`` (a missing
        key counts as ``""``); returns the value it then has."""
        return self._run("compare_set", (_key(key), _bytes(expected_value),
                                         _bytes(desired_value)))

    def append(self, key, value):
        """Appends ``value`` to the value of ``key`` (created if missing)."""
        self._run("append", (_key(key), _bytes(value)))

    def wait(self, keys, timeout=None):
        """Waits until every key of ``keys`` is in the store, at most ``timeout`` (default:
        the store's)."""
        keys = [_key(k) for k in keys]
        self._blocking("wait", (keys,), keys, timeout)

    def check(self, keys):
        """Whether every key of ``keys`` is in the store (without waiting)."""
        return self._run("check", ([_key(k) for k in keys],))

    def delete_key(self, key):
        """Deletes ``key``; returns whether it was there."""
        return self._run("delete_key", (_key(key),))

    def num_keys(self):
        """The number of keys in the store."""
        return self._run("num_keys", ())

    def multi_get(self, keys):
        """The values of ``keys``, waiting for them as ``get`` does."""
        keys = [_key(k) for k in keys]
        return self._blocking("multi_get", (keys,), keys)

    def multi_set(self, keys, values):
        """Sets each key of ``keys`` to the matching value of ``values``."""
        if len(keys) != len(values):
            raise ValueError(f"multi_set: {len(keys)} keys but {len(values)} values")
        self._run("multi_set", ([_key(k) for k in keys], [_bytes(v) for v in values]))

    def list_keys(self):
        """The keys of the store."""
        return self._run("list_keys", ())

    def queue_push(self, key, value):
        """Pushes ``value`` at the end of the queue ``key``."""
        self._run("queue_push", (_key(key), _bytes(value)))

    def queue_pop(self, key, block=True):
        """Pops the first value of the queue ``key``: waits for one if ``block``, else
        raises ``QueueEmptyError`` when the queue is empty."""
        if not block:
            value = self._run("queue_pop", (_key(key),))
            if value is None:
                raise QueueEmptyError("queue is empty")
            return value
        return self._blocking("queue_pop", (_key(key),), [key])

    def queue_len(self, key):
        """The number of values in the queue ``key``."""
        return self._run("queue_len", (_key(key),))

    def has_extended_api(self):
        """Whether the store supports ``append``, ``multi_get`` and ``multi_set``."""
        return True

    def barrier(self):
        raise NotImplementedError("Store.barrier is not supported")


class HashStore(Store):
    """A thread-safe store in this process's memory: threads can share it, processes
    cannot."""

    def __init__(self):
        super().__init__()
        self._table = _Table()

    def _run(self, op, args, wait_s=None):
        return self._table.run(op, args, wait_s)


class PrefixStore(Store):
    """Wraps ``store`` and puts ``prefix + "/"`` before every key."""

    def __init__(self, prefix, store):
        if not isinstance(store, Store):
            raise TypeError(f"PrefixStore: store must be a Store, got {type(store).__name__}")
        super().__init__()
        self._prefix = prefix + "/"
        self._store = store

    @property
    def underlying_store(self):
        return self._store

    @property
    def timeout(self):
        return self._store.timeout

    def set_timeout(self, timeout):
        self._store.set_timeout(timeout)

    def _timeout_error(self, keys, seconds):
        return self._store._timeout_error([self._prefix + k for k in keys], seconds)

    def _run(self, op, args, wait_s=None):
        p = self._prefix
        if op in ("check", "multi_get", "wait"):
            args = ([p + k for k in args[0]],)
        elif op == "multi_set":
            args = ([p + k for k in args[0]], args[1])
        elif op == "list_keys":
            keys = self._store._run(op, args)
            return [k[len(p):] for k in keys if k.startswith(p)]
        elif op != "num_keys":      # PyTorch counts every key of the underlying store
            args = (p + args[0],) + tuple(args[1:])
        return self._store._run(op, args, wait_s)


# ---- TCPStore -------------------------------------------------------------------------------
# Requests and replies are JSON (never pickle: anyone who can connect could run code) in
# frames of a 4-byte length and the text; bytes travel as {"b": base64}.
def _enc(obj):
    if isinstance(obj, bytes):
        return {"b": base64.b64encode(obj).decode()}
    if isinstance(obj, (list, tuple)):
        return [_enc(o) for o in obj]
    return obj


def _dec(obj):
    if isinstance(obj, dict):
        return base64.b64decode(obj["b"])
    if isinstance(obj, list):
        return [_dec(o) for o in obj]
    return obj


def _send(sock, obj):
    data = json.dumps(_enc(obj)).encode()
    sock.sendall(struct.pack("!I", len(data)) + data)


def _recv_exact(sock, n):
    buf = b""
    while len(buf) < n:
        try:
            chunk = sock.recv(n - len(buf))
        except OSError:
            chunk = b""
        if not chunk:
            raise DistNetworkError("Failed to recv, got 0 bytes. Connection was likely "
                                   "closed. Did the remote server shutdown or crash?")
        buf += chunk
    return buf


def _recv(sock):
    (n,) = struct.unpack("!I", _recv_exact(sock, 4))
    return _dec(json.loads(_recv_exact(sock, n)))


class _Handler(socketserver.BaseRequestHandler):
    def handle(self):
        table = self.server.table
        while True:
            try:
                op, args, wait_s = _recv(self.request)
            except (DistNetworkError, OSError, ValueError):
                return
            try:
                reply = ["ok", table.run(op, tuple(args), wait_s)]
            except Exception as e:     # the client raises it again
                reply = ["error", f"{type(e).__name__}: {e}"]
            try:
                _send(self.request, reply)
            except OSError:
                return


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, port, listen_fd):
        self.table = _Table()
        if listen_fd is not None:
            super().__init__(("", 0), _Handler, bind_and_activate=False)
            self.socket.close()
            self.socket = socket.socket(fileno=os.dup(listen_fd))
        else:
            # every interface, as PyTorch's master listens on
            super().__init__(("", port), _Handler)
        self.thread = threading.Thread(target=self.serve_forever, args=(0.05,), daemon=True,
                                       name="TCPStore server")
        self.thread.start()

    def stop(self, wait=True):
        if wait:
            self.shutdown()
        else:   # at interpreter exit the serving thread may be gone: do not wait for it
            self._BaseServer__shutdown_request = True
        self.server_close()


_TENANT_SERVERS = {}    # port -> server shared by the multi_tenant master stores here


class TCPStore(Store):
    """A store whose data is held by a TCP server that the master store (``is_master``)
    runs on ``port`` (0: a free one, see ``.port``); every store, the master's too, is a
    client of it. With ``world_size`` and ``wait_for_workers``, the master waits until
    ``world_size`` stores have connected. ``multi_tenant``: master stores of this process on
    the same port share one server. ``master_listen_fd``: a listening socket to serve on."""

    def __init__(self, host_name, port, world_size=None, is_master=False,
                 timeout=_DEFAULT_TIMEOUT, wait_for_workers=True, multi_tenant=False,
                 master_listen_fd=None, use_libuv=True):
        super().__init__(timeout)
        seconds = _seconds(timeout)
        self.host = host_name
        self.libuvBackend = False       # the server is Python's socketserver, not libuv
        self._server = None
        # a connection per thread: one thread blocked in get() does not hold up the others
        self._local = threading.local()
        self._socks = []
        if is_master:
            if multi_tenant and port in _TENANT_SERVERS:
                self._server = _TENANT_SERVERS[port]
            else:
                try:
                    self._server = _Server(port, master_listen_fd)
                except OSError as e:
                    raise DistNetworkError(
                        f"The server socket has failed to listen on any local network "
                        f"address. port: {port}, useIpv6: 0, code: {e.errno}, name: "
                        f"{e.strerror}") from None
                if multi_tenant:
                    _TENANT_SERVERS[self._server.server_address[1]] = self._server
            port = self._server.server_address[1]
        self.port = port
        self._seconds = seconds
        self._sock()
        self._run("add", ("init/", 1))
        if is_master and world_size is not None and wait_for_workers:
            self._wait_for_workers(world_size)

    def _wait_for_workers(self, world_size):
        """Waits until ``world_size`` stores (this one included) have connected."""
        deadline = time.monotonic() + self._seconds
        while True:
            joined = int(self._run("get", ("init/",)))
            if joined >= world_size:
                return
            if time.monotonic() > deadline:
                raise DistStoreError(
                    f"Timed out after {int(self._seconds)} seconds waiting for clients. "
                    f"{joined}/{world_size} clients joined.")
            time.sleep(0.002)

    def _sock(self):
        sock = getattr(self._local, "sock", None)
        if sock is None:
            sock = self._local.sock = self._connect(self.host, self.port, self._seconds)
            self._socks.append(sock)
        return sock

    @staticmethod
    def _connect(host, port, seconds):
        deadline = time.monotonic() + seconds
        while True:
            try:
                sock = socket.create_connection((host, port), timeout=max(seconds, 0.01))
                sock.settimeout(None)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                return sock
            except OSError:
                if time.monotonic() > deadline:
                    raise DistNetworkError(
                        f"The client socket has timed out after {int(seconds * 1000)}ms "
                        f"while trying to connect to ({host}, {port}).") from None
                time.sleep(0.02)

    def _run(self, op, args, wait_s=None):
        sock = self._sock()
        _send(sock, [op, list(args), wait_s])
        status, value = _recv(sock)
        if status == "error":
            kind, _, text = value.partition(": ")
            raise (ValueError if kind == "ValueError" else DistStoreError)(text)
        if op in ("set", "append", "multi_set", "queue_push"):
            return None
        return value

    def _timeout_error(self, keys, seconds):
        listed = ", ".join("/" + k for k in keys)
        return DistStoreError(f"wait timeout after {int(seconds * 1000)}ms, keys: {listed}")

    def _shutdown(self, wait=True):
        """Closes this client, and the server if this store runs it alone."""
        for sock in self._socks:
            sock.close()
        self._socks = []
        self._local = threading.local()
        if self._server is not None and self._server not in _TENANT_SERVERS.values():
            self._server.stop(wait)
        self._server = None

    def __del__(self):
        try:
            self._shutdown(wait=False)
        except Exception:
            pass


# ---- FileStore ------------------------------------------------------------------------------
class FileStore(Store):
    """A store kept in the file ``file_name``, shared by the processes that can open it
    (e.g. on a shared file system). ``world_size``: how many stores use the file (-1: not
    fixed)."""

    _POLL_S = 0.01

    def __init__(self, file_name, world_size=-1):
        super().__init__()
        self.path = file_name
        self.world_size = world_size
        open(file_name, "ab").close()

    def _locked(self, fn):
        """``fn(kv, queues)`` on the file's table under an exclusive lock; writes the table
        back when ``fn`` changed it."""
        with open(self.path, "r+b") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                raw = f.read()
                state = _dec(json.loads(raw)) if raw else [[], []]
                kv, queues = (dict(zip(state[0][::2], state[0][1::2])),
                              dict(zip(state[1][::2], state[1][1::2])))
                before = (dict(kv), {k: list(v) for k, v in queues.items()})
                result = fn(kv, queues)
                if (kv, queues) != before:
                    flat = [[x for kvp in kv.items() for x in kvp],
                            [x for qp in queues.items() for x in qp]]
                    f.seek(0)
                    f.truncate()
                    f.write(json.dumps(_enc(flat)).encode())
                    f.flush()
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)
        return result

    def _run(self, op, args, wait_s=None):
        run_op, run_args = ("multi_get", args) if op == "wait" else (op, args)
        deadline = None if wait_s is None else time.monotonic() + wait_s
        while True:
            result = self._locked(lambda kv, q: _apply(kv, q, run_op, run_args))
            if deadline is None or _ready(run_op, result) or time.monotonic() > deadline:
                return result
            time.sleep(self._POLL_S)

    def _timeout_error(self, keys, seconds):
        if len(keys) == 1:
            return DistStoreError(f"Timeout waiting for key: {keys[0]} after "
                                  f"{int(seconds * 1000)} ms")
        return DistStoreError("Wait timeout")
