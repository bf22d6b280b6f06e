"""The ``"nccl"`` backend: GPU tensors through NCCL (the ``nvidia-nccl-cu12`` wheel).

Only the detection is here so far: collectives on GPU tensors through NCCL are not bound
yet, and ``init_process_group("nccl")`` says so. Simulated ``cuda`` tensors (the Triton
interpreter keeps them in host memory) go through the ``"mpi"`` backend.
"""
import ctypes
import glob
import importlib.util
import os

_MSG = "backend 'nccl' needs a GPU and the nvidia-nccl-cu12 wheel"


def find_library():
    """The path of ``libnccl.so.2`` from the ``nvidia-nccl-cu12`` wheel, or None."""
    spec = importlib.util.find_spec("nvidia")
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        hits = glob.glob(os.path.join(root, "nccl", "lib", "libnccl.so*"))
        if hits:
            return sorted(hits)[0]
    return None


def _has_gpu():
    if os.environ.get("TRITON_INTERPRET") == "1":
        return False     # simulated cuda: no device for NCCL to drive
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


def version():
    """NCCL's version as (major, minor, patch), or None when the library is missing."""
    path = find_library()
    if path is None:
        return None
    v = ctypes.c_int()
    if ctypes.CDLL(path).ncclGetVersion(ctypes.byref(v)) != 0:
        return None
    code = v.value
    return (code // 10000, code // 100 % 100, code % 100) if code >= 10000 else \
        (code // 1000, code // 100 % 10, code % 100)


def is_available():
    return find_library() is not None and _has_gpu()


def require():
    """Raises the backend's error: NCCL collectives are not bound yet."""
    if not is_available():
        raise RuntimeError(_MSG)
    raise NotImplementedError(
        "backend 'nccl': collectives through NCCL are not implemented yet; use "
        "backend='mpi' (GPU tensors then go through host memory)")
