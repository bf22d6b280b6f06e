"""framework.save / framework.load in PyTorch's zip format.

A checkpoint is a zip archive (stored, not compressed) holding::

    <archive>/data.pkl                  the object, pickled (protocol 2) under PyTorch's names
    <archive>/.format_version           "1"
    <archive>/.storage_alignment        "64"
    <archive>/byteorder                 "little"
    <archive>/data/<key>                the bytes of each storage, 64-byte aligned
    <archive>/version                   "3"
    <archive>/.data/serialization_id    a random id

laid out as PyTorch's writer (miniz) lays it out, so that files go both ways between
PyTorch and this framework.
"""
import contextlib
import ctypes
import io
import os
import pickle
import secrets
import struct
import sys
import threading
import zlib

from ._device import CPU, device as _device
from ._serialization_pickle import (  # noqa: F401
    Pickler, StorageType, TypedStorage, Unpickler, WeightsOnlyUnpickler, add_safe_globals,
    clear_safe_globals, get_safe_globals, globals_in_pickle, is_allowed, safe_globals)
from ._storage import Storage, cpu_alloc, cpu_from_array

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals",
           "safe_globals", "get_unsafe_globals_in_checkpoint", "DEFAULT_PROTOCOL", "skip_data"]

DEFAULT_PROTOCOL = 2
_ALIGN = 64
_U32 = 0xFFFFFFFF
_PARALLEL_CRC = 1 << 20
_skip = threading.local()   # .on: inside skip_data


class skip_data:
    """Context manager that skips writing/reading storage bytes for ``save`` / ``load``:
    a save writes each storage's record as zeros (to be filled in a separate pass), a load
    gives tensors whose storages are allocated but not read from the file.
    ``materialize_fake_tensors`` is accepted for PyTorch compatibility (there are no fake
    tensors)."""

    def __init__(self, materialize_fake_tensors=False):
        self.materialize_fake_tensors = materialize_fake_tensors

    def __enter__(self):
        self._old = getattr(_skip, "on", False)
        _skip.on = True

    def __exit__(self, type, value, tb):
        _skip.on = self._old


# ---- zip writing -------------------------------------------------------------------------

def _bytes_of(storage):
    """(memoryview of a storage's bytes on the host, the storage it views): a copy for a
    cuda storage, the storage's own memory on the CPU."""
    n = storage.nbytes
    if n == 0:
        return memoryview(b""), None
    if storage.device.type != "cpu":
        from .cuda import _runtime
        host = cpu_alloc(n)
        _runtime.copy_bytes(host, storage, n)
        storage = host
    return memoryview((ctypes.c_char * n).from_address(storage.ptr)).cast("B"), storage


class _ZipWriter:
    """Writes a stored zip archive front to back (no seeks: non-seekable files work), each
    record's data 64-byte aligned by an "FB" padding extra field, a data descriptor after
    each non-empty record, and a zip64 end record, as PyTorch's writer does."""

    def __init__(self, f, archive_name, pool=None):
        self.f = f
        self.pool = pool          # a thread for CRC-32s of large records, or None
        self.pos = 0
        self.prefix = archive_name + "/"
        self.central = []

    def _write(self, b):
        n = self.f.write(b)
        if n is not None and n < len(b):        # raw files and sockets may write less
            mv = memoryview(b)
            while n < len(b):
                more = self.f.write(mv[n:])
                if not more:
                    raise OSError(f"write to {self.f!r} failed after {n} of {len(b)} bytes")
                n += more
        self.pos += len(b)

    def write_record(self, name, data, keep=None):
        """Writes one record; ``keep`` holds the memory ``data`` views while it is written."""
        nbytes = len(data)
        fname = (self.prefix + name).encode("utf-8")
        offset = self.pos
        zip64 = offset >= _U32 or nbytes >= _U32
        # the CRC goes in the data descriptor after the data, so a large record's CRC is
        # computed on another thread while the data is written (both release the GIL)
        crc = 0
        if self.pool is not None and nbytes >= _PARALLEL_CRC:
            crc = self.pool.submit(zlib.crc32, data)
        elif nbytes:
            crc = zlib.crc32(data)
        flags = 0x0808 if nbytes else 0x0800      # data descriptor follows; UTF-8 names
        extra = struct.pack("<HHQQ", 1, 16, 0, 0) if zip64 else b""
        pad = -(offset + 30 + len(fname) + len(extra) + 4) % _ALIGN
        extra += b"FB" + struct.pack("<H", pad) + b"Z" * pad
        size32 = _U32 if zip64 else 0
        self._write(struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 0, flags, 0, 0, 0, 0,
                                size32, size32, len(fname), len(extra)) + fname + extra)
        if nbytes:
            self._write(data)
            if not isinstance(crc, int):
                crc = crc.result()
            if zip64:
                self._write(struct.pack("<4sIQQ", b"PK\x07\x08", crc, nbytes, nbytes))
            else:
                self._write(struct.pack("<4sIII", b"PK\x07\x08", crc, nbytes, nbytes))
        del keep
        self.central.append((fname, flags, crc, nbytes, offset))

    def finish(self):
        cd_start = self.pos
        for fname, flags, crc, n, off in self.central:
            ext = b""
            if n >= _U32:
                ext += struct.pack("<QQ", n, n)
            if off >= _U32:
                ext += struct.pack("<Q", off)
            if ext:
                ext = struct.pack("<HH", 1, len(ext)) + ext
            n32 = _U32 if n >= _U32 else n
            self._write(struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 0, 0, flags, 0, 0, 0,
                                    crc, n32, n32, len(fname), len(ext), 0, 0, 0, 0,
                                    min(off, _U32)) + fname + ext)
        cd_size = self.pos - cd_start
        count = len(self.central)
        z64 = self.pos
        self._write(struct.pack("<4sQHHIIQQQQ", b"PK\x06\x06", 44, 0x031E, 0x2D, 0, 0,
                                count, count, cd_size, cd_start))
        self._write(struct.pack("<4sIQI", b"PK\x06\x07", 0, z64, 1))
        self._write(struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, min(count, 0xFFFF),
                                min(count, 0xFFFF), min(cd_size, _U32), min(cd_start, _U32), 0))


def _write_archive(obj, f, archive_name, pickle_protocol):
    buf = io.BytesIO()
    pickler = Pickler(buf, protocol=pickle_protocol)
    pickler.dump(obj)
    big = any(st.nbytes >= _PARALLEL_CRC for st in pickler.storages.values())
    with contextlib.ExitStack() as stack:
        pool = None
        if big:
            from concurrent.futures import ThreadPoolExecutor
            pool = stack.enter_context(ThreadPoolExecutor(1))
        z = _ZipWriter(f, archive_name, pool)
        z.write_record("data.pkl", buf.getbuffer())
        z.write_record(".format_version", b"1")
        z.write_record(".storage_alignment", str(_ALIGN).encode())
        z.write_record("byteorder", sys.byteorder.encode())
        skip = getattr(_skip, "on", False)
        for key, storage in pickler.storages.items():
            if skip:
                z.write_record(f"data/{key}", memoryview(bytes(storage.nbytes)))
            else:
                z.write_record(f"data/{key}", *_bytes_of(storage))
        z.write_record("version", b"3\n")
        z.write_record(".data/serialization_id",
                       "".join(secrets.choice("0123456789") for _ in range(40)).encode())
        z.finish()


def _is_path(f):
    return isinstance(f, (str, os.PathLike))


def save(obj, f, pickle_module=None, pickle_protocol=DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization=True, _disable_byteorder_record=False):
    """Saves an object (tensors, state dicts, nested containers) to a file, in PyTorch's
    format: ``torch.load`` reads it.

    Args:
        obj: the object to save.
        f: a path (``str`` or ``os.PathLike``) or a binary file object (need not be
            seekable). A path is written atomically: to a temporary file in the same
            directory, flushed, fsync'ed and renamed over ``f``, so that an interrupted save
            leaves any previous file intact.
        pickle_protocol: protocol of ``data.pkl`` (2, as PyTorch).
    """
    if pickle_module is not None and pickle_module is not pickle:
        raise ValueError("framework.save: only the standard pickle module is supported")
    if not _use_new_zipfile_serialization:
        raise ValueError("framework.save: the legacy (non-zip) format is not supported")
    if not _is_path(f):
        if not hasattr(f, "write"):
            raise AttributeError(f"expected 'f' to be string, path, or a file-like object "
                                 f"with a 'write' attribute, got {type(f).__name__}")
        _write_archive(obj, f, "archive", pickle_protocol)
        return
    path = os.fspath(f)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        raise RuntimeError(f"Parent directory {d} does not exist.")
    archive = os.path.splitext(os.path.basename(path))[0] or "archive"
    tmp = os.path.join(d, f".{os.path.basename(path)}.{secrets.token_hex(6)}.tmp")
    # O_EXCL: a fresh file (mode from the umask, as open() would give)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                 0o666)
    try:
        with os.fdopen(fd, "wb") as out:
            _write_archive(obj, out, archive, pickle_protocol)
            out.flush()
            os.fsync(out.fileno())
        if os.path.exists(path):
            try:
                os.chmod(tmp, os.stat(path).st_mode & 0o7777)
            except OSError:
                pass
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_dir(d)


def _fsync_dir(d):
    """Makes the rename durable (POSIX; a no-op where directories cannot be opened)."""
    try:
        fd = os.open(d, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# ---- zip reading -------------------------------------------------------------------------

class _ZipReader:
    """The records of a stored zip archive, read in place: each record's data offset comes
    from its local header, and storages are read straight into their buffers."""

    def __init__(self, f, name):
        import zipfile
        self.f, self.name = f, name
        f.seek(0, os.SEEK_END)
        self.size = f.tell()
        f.seek(0)
        head = f.read(4)
        f.seek(0)
        if head != b"PK\x03\x04":
            if head[:2] == b"\x80\x02" or head[:1] == b"\x80":
                raise self.error("it is in PyTorch's legacy (non-zip) format, which is not "
                                 "supported; re-save it with torch.save in the zip format")
            raise self.error("it is not a zip archive")
        try:
            zf = zipfile.ZipFile(f)
            infos = zf.infolist()
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError,
                struct.error, EOFError) as e:
            raise self.error(f"the zip archive is truncated or corrupt ({e})") from None
        if not infos:
            raise self.error("the zip archive is empty")
        first = infos[0].filename
        if "/" not in first:
            raise self.error("records are not under an archive directory")
        self.prefix = first[:first.index("/") + 1]
        self.infos = {i.filename[len(self.prefix):]: i for i in infos
                      if i.filename.startswith(self.prefix)}

    def error(self, why):
        return RuntimeError(f"{self.name} is not a valid checkpoint: {why}")

    def has(self, name):
        return name in self.infos

    def offset(self, name):
        """(data offset, size) of a record; checked to lie inside the file."""
        info = self.infos.get(name)
        if info is None:
            raise self.error(f"record '{self.prefix}{name}' is missing")
        if info.compress_type != 0:
            raise self.error(f"record '{name}' is compressed")
        h = b""
        if 0 <= info.header_offset < self.size:
            self.f.seek(info.header_offset)
            h = self.f.read(30)
        if len(h) != 30 or h[:4] != b"PK\x03\x04":
            raise self.error(f"bad local header of record '{name}'")
        nlen, elen = struct.unpack("<HH", h[26:30])
        start = info.header_offset + 30 + nlen + elen
        if start + info.file_size > self.size:
            raise self.error(f"record '{name}' runs past the end of the file (truncated)")
        return start, info.file_size

    def read(self, name):
        start, n = self.offset(name)
        self.f.seek(start)
        return self.f.read(n)

    def readinto(self, name, storage):
        start, n = self.offset(name)
        if n < storage.nbytes:
            raise self.error(f"record '{name}' holds {n} bytes, {storage.nbytes} expected")
        if storage.nbytes:
            mv = memoryview((ctypes.c_char * storage.nbytes).from_address(storage.ptr)
                            ).cast("B")
            self.f.seek(start)
            got = self.f.readinto(mv)
            while got < storage.nbytes:      # raw files may return short reads
                more = self.f.readinto(mv[got:])
                if not more:
                    raise self.error(f"record '{name}' is truncated")
                got += more


# ---- map_location --------------------------------------------------------------------------

class UntypedStorage:
    """A loaded storage as a ``map_location`` function sees it (PyTorch passes a CPU
    ``UntypedStorage``); return it, ``storage.cpu()`` or ``storage.cuda(i)``."""

    __slots__ = ("_s",)

    def __init__(self, storage):
        self._s = storage

    @property
    def device(self):
        return self._s.device

    def nbytes(self):
        return self._s.nbytes

    size = nbytes

    def data_ptr(self):
        return self._s.ptr

    def to(self, device=None, non_blocking=False):
        return UntypedStorage(_to_device(self._s, _device(device)))

    def cpu(self):
        return self.to(CPU)

    def cuda(self, device=None, non_blocking=False):
        if device is None:
            from . import cuda
            device = cuda.current_device()
        if isinstance(device, int):
            device = _device("cuda", device)
        return self.to(device)

    def __repr__(self):
        return f"UntypedStorage(nbytes={self._s.nbytes}, device='{self._s.device}')"


def _check_device(dev):
    if dev.type == "cuda":
        from . import cuda
        if not cuda.is_available():
            raise RuntimeError(
                "Attempting to deserialize object on a CUDA device but "
                "framework.cuda.is_available() is False. If you are running on a CPU-only "
                "machine, please use framework.load with map_location=framework.device('cpu') "
                "to map your storages to the CPU.")
        idx = dev.index if dev.index is not None else cuda.current_device()
        if idx >= cuda.device_count():
            raise RuntimeError(
                f"Attempting to deserialize object on CUDA device {idx} but "
                f"framework.cuda.device_count() is {cuda.device_count()}. Please use "
                f"framework.load with map_location to map your storages to an existing device.")
        return _device("cuda", idx)
    if dev.type != "cpu":
        raise RuntimeError(f"don't know how to restore data location of {dev}")
    return CPU


def _to_device(storage, dev):
    dev = _check_device(dev)
    if storage.device == dev:
        return storage
    if dev.type == "cpu":
        out = cpu_alloc(storage.nbytes)
    else:
        from . import cuda
        out = cuda.alloc_storage(storage.nbytes, dev)
    from .cuda import _runtime
    _runtime.copy_bytes(out, storage, storage.nbytes)
    return out


def _location_device(location):
    try:
        return _device(location)
    except (RuntimeError, TypeError):
        raise RuntimeError(f"don't know how to restore data location of {location}") from None


def _restorer(map_location):
    """(target device of a location or None when a function decides, function or None)."""
    if map_location is None:
        return _location_device, None
    if isinstance(map_location, (str, _device)):
        dev = _device(map_location)
        return (lambda loc: dev), None
    if isinstance(map_location, dict):
        return (lambda loc: _location_device(str(map_location.get(loc, loc)))), None
    if callable(map_location):
        return None, map_location
    raise TypeError(f"map_location should be a device, a string, a dict or a function, "
                    f"got {type(map_location).__name__}")


# ---- load ------------------------------------------------------------------------------------

def _load_archive(zr, map_location, weights_only, mm, pickle_load_args):
    if zr.has("byteorder"):
        order = zr.read("byteorder")
        if order not in (b"little", b"big"):
            raise zr.error(f"unknown byteorder {order!r}")
    else:
        order = b"little"
    swap = order.decode() != sys.byteorder
    target, fn = _restorer(map_location)
    loaded = {}
    skip = getattr(_skip, "on", False)

    def load_storage(dtype, numel, key):
        """The saved bytes of a storage on the CPU (read, or mapped from the file)."""
        name = f"data/{key}"
        nbytes = numel * dtype.itemsize
        if skip:
            return cpu_alloc(nbytes)
        if mm is None:
            st = cpu_alloc(nbytes)
            zr.readinto(name, st)
            return st
        start, n = zr.offset(name)
        if n < nbytes:
            raise zr.error(f"record '{name}' holds {n} bytes, {nbytes} expected")
        return cpu_from_array(mm[start:start + nbytes])[0] if nbytes else cpu_alloc(0)

    def persistent_load(pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] in ("storage", b"storage")
                and isinstance(pid[1], StorageType)
                and isinstance(pid[2], (str, bytes)) and isinstance(pid[3], (str, bytes))
                and type(pid[4]) is int and pid[4] >= 0):
            raise pickle.UnpicklingError(f"unsupported persistent id in {zr.name}: "
                                         f"{pid!r:.200}")
        _, stype, key, location, numel = pid
        key = key.decode("ascii") if isinstance(key, bytes) else key
        location = location.decode("ascii") if isinstance(location, bytes) else location
        typed = loaded.get(key)
        if typed is None:
            dtype = stype.dtype
            st = load_storage(dtype, numel, key)
            if swap and not skip:
                _byteswap(st, dtype)
            if fn is not None:
                res = fn(UntypedStorage(st), location)
                if res is None:
                    st = _to_device(st, _location_device(location))
                else:
                    st = res._s if isinstance(res, UntypedStorage) else res
                    if not isinstance(st, Storage):
                        raise TypeError(f"map_location returned a {type(res).__name__}, "
                                        "expected a storage")
            else:
                st = _to_device(st, target(location))
            typed = loaded[key] = TypedStorage(st, stype.dtype)
        elif typed.dtype is not stype.dtype:
            typed = TypedStorage(typed.storage, stype.dtype)
        return typed

    data = io.BytesIO(zr.read("data.pkl"))
    pickle_load_args.setdefault("encoding", "utf-8")
    cls = WeightsOnlyUnpickler if weights_only else Unpickler
    return cls(data, persistent_load, **pickle_load_args).load()


def _byteswap(storage, dtype):
    import numpy as np
    if storage.nbytes and dtype.itemsize > 1:
        a = np.ctypeslib.as_array((ctypes.c_uint8 * storage.nbytes).from_address(storage.ptr))
        a.view(dtype.np).byteswap(inplace=True)


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """Loads an object saved with ``framework.save`` or ``torch.save``.

    Args:
        f: a path (``str`` or ``os.PathLike``) or a binary file object.
        map_location: where storages go: a device, a string (``"cpu"``, ``"cuda:0"``), a
            dict mapping saved locations to locations (``{"cuda:0": "cpu"}``), or a function
            ``(storage, location) -> storage`` (None: keep the saved location).
        weights_only: only load tensors, dtypes, devices, primitive types and Python
            containers (plus globals allowed with ``add_safe_globals``); default ``True``.
            ``False`` runs full pickle, which can execute arbitrary code.
        mmap: map storages from the file (copy-on-write) instead of reading them; ``f`` must
            be a path.
    """
    if pickle_module is not None and pickle_module is not pickle:
        if weights_only:
            raise RuntimeError("Can not safely load weights when explicit pickle_module is "
                               "specified")
        raise ValueError("framework.load: only the standard pickle module is supported")
    if weights_only is None:
        weights_only = pickle_module is None
    if mmap and not _is_path(f):
        raise ValueError("f must be a file path in order to use the mmap argument")
    with _open_for_read(f) as (fh, name):
        zr = _ZipReader(fh, name)
        mm = None
        if mmap:
            import numpy as np
            mm = np.memmap(os.fspath(f), dtype=np.uint8, mode="c")
        return _load_archive(zr, map_location, weights_only, mm, dict(pickle_load_args))


@contextlib.contextmanager
def _open_for_read(f):
    """(seekable binary file, name for messages) of a path or file object."""
    if _is_path(f):
        path = os.fspath(f)
        with open(path, "rb") as fh:
            yield fh, repr(os.fsdecode(path))
        return
    if not hasattr(f, "read"):
        raise AttributeError(f"expected 'f' to be string, path, or a file-like object with a "
                             f"'read' attribute, got {type(f).__name__}")
    name = repr(getattr(f, "name", None) or f"<{type(f).__name__}>")
    seekable = getattr(f, "seekable", None)
    if seekable is None or not seekable():
        f = io.BytesIO(f.read())
    yield f, name


def get_unsafe_globals_in_checkpoint(f):
    """The globals in a checkpoint that ``weights_only`` load would refuse (a sorted list of
    ``"module.name"``), found without running the pickle."""
    with _open_for_read(f) as (fh, name):
        data = _ZipReader(fh, name).read("data.pkl")
    return sorted(g for g in globals_in_pickle(data) if not is_allowed(g))
