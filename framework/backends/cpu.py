"""framework.backends.cpu (PyTorch's ``torch.backends.cpu``)."""
__all__ = ["get_cpu_capability"]


def get_cpu_capability():
    """Returns the vector instruction set the cpu kernels were built for: ``"AVX512"``,
    ``"AVX2"`` or ``"DEFAULT"`` on x86 (PyTorch's names). The native library is compiled
    for the machine it runs on (``-march=native``), so this is the best set this cpu
    has."""
    from ..cpu import get_capabilities
    caps = get_capabilities()
    if all(caps.get(f, False) for f in ("avx512_f", "avx512_bw", "avx512_vl", "avx512_dq")):
        return "AVX512"
    if caps.get("avx2", False) and caps.get("fma3", False):
        return "AVX2"
    return "DEFAULT"
