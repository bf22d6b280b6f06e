"""Tensor printing (placeholder until the PyTorch-identical formatter lands)."""


def repr_tensor(t):
    arr = t.detach()._host_array()
    body = repr(arr.tolist())
    suffix = "" if t.dtype.name in ("float32", "int64", "bool") else f", dtype={t.dtype}"
    if t.device.type != "cpu":
        suffix += f", device='{t.device}'"
    return f"tensor({body}{suffix})"
