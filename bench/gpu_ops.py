"""GPU op benchmarks: the framework beside PyTorch on the same GPU, in the same run.

Times are medians of many repeats, each timed with framework.cuda.Event (torch.cuda.Event
for torch) after a warm-up, over batches of calls queued behind a few milliseconds of other
device work, so that a kernel's time is not its host overhead (which is reported apart). Memory-bound ops report GB/s (bytes each input read once plus
each output written once) and matrix products TFLOP/s, each also as a fraction of the
device's peak measured in this run: a large device-to-device copy for bandwidth, and
torch.matmul (bf16 for the 16-bit products, TF32 for float32) for the matrix units when
PyTorch with CUDA is installed. Every case is checked against torch (relative error) before
it is timed. Host overhead is CPU wall time per call of a 1-element add over many calls.

    python bench/gpu_ops.py [--out results.md] [--quick]

Needs a real GPU: on the simulator (TRITON_INTERPRET=1) or without CUDA it says so and exits 0.
Speed is reported, never asserted.
"""
import argparse
import datetime
import math
import os
import platform
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import framework as fw  # noqa: E402

try:
    import torch
    HAVE_TORCH = torch.cuda.is_available()
except ImportError:  # torch is an optional reference
    torch = None
    HAVE_TORCH = False

GB = 1e9


# ---- timing -------------------------------------------------------------------------------

def _event_median(fn, event_cls, sync, warmup, repeat, budget_s, busy=None, batch=8):
    """Median milliseconds of one call of ``fn`` (about ``budget_s`` seconds of samples, at
    least 5, after ``warmup`` calls).

    A sample is ``batch`` back-to-back calls between two events, divided by ``batch``, and
    ``busy()`` (device work on the same stream, a few milliseconds) is queued before each:
    the host then enqueues the calls while the device is still busy, so the device runs them
    without gaps and the sample is the kernels' time, not the host's time per call (a
    framework op whose host side is slower than its kernel would otherwise be timed at its
    host speed). Without ``busy``, one call per sample."""
    for _ in range(warmup):
        fn()
    sync()
    t0 = time.perf_counter()
    fn()
    sync()
    one = max(time.perf_counter() - t0, 1e-6)
    if busy is None or one > 2e-3:     # long calls: launch gaps are noise already
        batch = 1
    n = max(5, min(max(1, repeat // batch), int(budget_s / (one * batch))))
    samples = []
    for _ in range(n):
        start, end = event_cls(enable_timing=True), event_cls(enable_timing=True)
        if batch > 1:
            busy()
        start.record()
        for _ in range(batch):
            fn()
        end.record()
        sync()
        samples.append(start.elapsed_time(end) / batch)
    return statistics.median(samples)


class _Busy:
    """A few milliseconds of device work on each library's current stream: matrix
    products of 8192^2 bfloat16 matrices (made on first use)."""

    def __init__(self):
        self.fw_ab = self.torch_ab = None

    def fw(self):
        if self.fw_ab is None:
            self.fw_ab = [fw.randn(8192, 8192, device="cuda", dtype=fw.bfloat16)
                          for _ in range(2)]
        a, b = self.fw_ab
        for _ in range(3):
            a @ b

    def torch(self):
        if self.torch_ab is None:
            self.torch_ab = [torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
                             for _ in range(2)]
        a, b = self.torch_ab
        for _ in range(3):
            a @ b


BUSY = _Busy()
QUEUED = True   # off for --smoke: the simulator would take minutes over the busy work


def fw_time(fn, warmup=3, repeat=100, budget_s=1.0):
    return _event_median(fn, fw.cuda.Event, fw.cuda.synchronize, warmup, repeat, budget_s,
                         busy=BUSY.fw if QUEUED else None)


def torch_time(fn, warmup=3, repeat=100, budget_s=1.0):
    return _event_median(fn, torch.cuda.Event, torch.cuda.synchronize, warmup, repeat,
                         budget_s, busy=BUSY.torch if QUEUED else None)


def host_profile(fn, calls=2000, top=25):
    """cProfile's table (by own time) of ``calls`` calls of ``fn``: where a small op's host
    time goes."""
    import cProfile
    import io
    import pstats
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(calls):
        fn()
    prof.disable()
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(top)
    return buf.getvalue()


def host_overhead_us(fn, sync, calls=2000):
    """CPU wall microseconds per call of ``fn`` over ``calls`` calls, synchronised once at
    the end (after a warm-up): what a small op costs the Python side."""
    for _ in range(min(50, calls)):
        fn()
    sync()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    sync()
    return (time.perf_counter() - t0) / calls * 1e6


def host_overheads(a, b, calls):
    """The 1-element add's host time three ways: as it runs (the cached launcher), with every
    launch through Triton's JITFunction.run, and with the launch left out (the framework's
    own Python: dispatch, allocation, launch geometry)."""
    from framework.kernels import launcher, pointwise
    add = lambda: a + b  # noqa: E731
    sync = fw.cuda.synchronize
    out = [("", host_overhead_us(add, sync, calls))]
    launcher.enabled = False
    try:
        out.append((", JITFunction.run", host_overhead_us(add, sync, calls)))
    finally:
        launcher.enabled = True
    kernel = pointwise._binary_kernel

    class _NoLaunch:
        def __getitem__(self, grid):
            return lambda *args, **kwargs: None

    pointwise._binary_kernel = _NoLaunch()
    try:
        out.append((", launch left out", host_overhead_us(add, sync, calls)))
    finally:
        pointwise._binary_kernel = kernel
    return out


# ---- moving data between the two libraries ------------------------------------------------

def to_torch(t):
    """A torch cuda copy of a framework tensor (through the host; bfloat16 via float32)."""
    if t.dtype is fw.bfloat16:
        return to_torch(t.float()).to(torch.bfloat16)
    return torch.from_numpy(np.ascontiguousarray(np.asarray(t.cpu()))).cuda()


def rel_error(out, ref):
    """||out - ref|| / ||ref|| in float64, out a framework tensor and ref a torch one."""
    a = np.asarray(out.float().cpu(), dtype=np.float64)
    b = ref.double().cpu().numpy()
    denom = np.linalg.norm(b)
    return float(np.linalg.norm(a - b) / (denom if denom else 1.0))


# ---- peaks measured in this run ---------------------------------------------------------

def measure_peaks(nbytes):
    """{'bandwidth': GB/s, 'bf16': TFLOP/s, 'tf32': TFLOP/s} (None where unmeasurable): a
    copy of ``nbytes`` bytes, and matrix products of a size that fills the device."""
    from framework.cuda import _runtime
    src = fw.randn(nbytes // 4, device="cuda")     # random data, never zeros
    dst = fw.empty(nbytes // 4, device="cuda")
    ms = fw_time(lambda: _runtime.copy_bytes(dst._storage, src._storage, nbytes))
    peaks = {"bandwidth": 2 * nbytes / (ms * 1e-3) / GB, "bf16": None, "tf32": None,
             "bandwidth_src": "cuMemcpyDtoD (framework)"}
    del src, dst
    fw.cuda.empty_cache()
    if HAVE_TORCH:
        a = torch.randn(nbytes // 4, device="cuda")
        b = torch.empty_like(a)
        ms = torch_time(lambda: b.copy_(a))
        bw = 2 * nbytes / (ms * 1e-3) / GB
        if bw > peaks["bandwidth"]:
            peaks["bandwidth"], peaks["bandwidth_src"] = bw, "torch copy_"
        del a, b
        n = 4096 if nbytes < (1 << 30) else 8192
        a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        peaks["bf16"] = 2 * n ** 3 / (torch_time(lambda: a @ b) * 1e-3) / 1e12
        a, b = a.float(), b.float()
        prev = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = True
        peaks["tf32"] = 2 * n ** 3 / (torch_time(lambda: a @ b) * 1e-3) / 1e12
        torch.backends.cuda.matmul.allow_tf32 = prev
        del a, b
        torch.cuda.empty_cache()
    return peaks


# ---- the cases ------------------------------------------------------------------------------

class Case:
    """One benchmark row: framework and torch callables on the same data, the work done
    (bytes moved or flops), and which peak it is measured against."""

    def __init__(self, name, make, work, kind, peak):
        self.name, self.make, self.work, self.kind, self.peak = name, make, work, kind, peak


def pointwise_cases(n):
    def make(op):
        def build():
            x = fw.randn(n, device="cuda")
            y = fw.randn(n, device="cuda")
            f = {"add": lambda: x + y, "mul": lambda: x * y,
                 "gelu": lambda: fw.nn.functional.gelu(x)}[op]
            if not HAVE_TORCH:
                return f, None
            tx, ty = to_torch(x), to_torch(y)
            t = {"add": lambda: tx + ty, "mul": lambda: tx * ty,
                 "gelu": lambda: torch.nn.functional.gelu(tx)}[op]
            return f, t
        return build
    return [Case(f"{op} 2^{int(math.log2(n))} f32", make(op),
                 (3 if op != "gelu" else 2) * 4 * n, "GB/s", "bandwidth")
            for op in ("add", "mul", "gelu")]


def reduction_cases(rows, cols):
    def make(op):
        def build():
            m = fw.randn(rows, cols, device="cuda")
            f = (lambda: m.sum(1)) if op == "sum" else (lambda: m.amax(1))
            if not HAVE_TORCH:
                return f, None
            tm = to_torch(m)
            t = (lambda: tm.sum(1)) if op == "sum" else (lambda: tm.amax(1))
            return f, t
        return build
    return [Case(f"row {op} {rows}x{cols} f32", make(op), 4 * rows * cols + 4 * rows, "GB/s",
                 "bandwidth") for op in ("sum", "amax")]


def matmul_cases(sizes):
    out = []
    for dtype_name in ("bfloat16", "float16"):
        for n in sizes:
            def build(n=n, dtype_name=dtype_name):
                dt = getattr(fw, dtype_name)
                a = (fw.randn(n, n, device="cuda") / math.sqrt(n)).to(dt)
                b = fw.randn(n, n, device="cuda").to(dt)
                f = lambda: a @ b  # noqa: E731
                if not HAVE_TORCH:
                    return f, None
                ta, tb = to_torch(a), to_torch(b)
                return f, (lambda: ta @ tb)
            out.append(Case(f"matmul {dtype_name} {n}^3", build, 2 * n ** 3, "TFLOP/s", "bf16"))
    for n in sizes[:1]:
        def build_tf32(n=n):
            a = fw.randn(n, n, device="cuda") / math.sqrt(n)
            b = fw.randn(n, n, device="cuda")
            f = lambda: a @ b  # noqa: E731
            if not HAVE_TORCH:
                return f, None
            ta, tb = to_torch(a), to_torch(b)
            return f, (lambda: ta @ tb)
        out.append(Case(f"matmul f32 (TF32) {n}^3", build_tf32, 2 * n ** 3, "TFLOP/s", "tf32"))
    return out


def grouped_mm_cases(experts, tokens, k, n):
    """An MoE layer's forward: tokens split over experts (jagged, none empty), each times
    its expert's (n, k) weight transposed, bfloat16 (nn.functional.grouped_mm)."""
    def build():
        sizes = np.random.default_rng(0).multinomial(tokens - experts, [1 / experts] * experts)
        offs = fw.tensor(np.cumsum(sizes + 1), dtype=fw.int32, device="cuda")
        x = (fw.randn(tokens, k, device="cuda") / math.sqrt(k)).to(fw.bfloat16)
        w = fw.randn(experts, n, k, device="cuda").to(fw.bfloat16)
        f = lambda: fw.nn.functional.grouped_mm(x, w.mT, offs=offs)  # noqa: E731
        if not HAVE_TORCH:
            return f, None
        tx, tw, to = to_torch(x), to_torch(w), to_torch(offs)
        return f, (lambda: torch.nn.functional.grouped_mm(tx, tw.mT, offs=to))
    return [Case(f"grouped_mm bf16 {experts}x({tokens}/{experts})x{k}x{n}", build,
                 2 * tokens * k * n, "TFLOP/s", "bf16")]


class _TF32:
    """Float32 products on the matrix units (TF32) for both libraries inside the block.
    ``supported``: whether the framework has the switch (set_float32_matmul_precision)."""

    def __enter__(self):
        self.supported = hasattr(fw, "set_float32_matmul_precision")
        if self.supported:
            get = getattr(fw, "get_float32_matmul_precision", lambda: "highest")
            self.fw_prev = get()
            fw.set_float32_matmul_precision("high")
        if HAVE_TORCH:
            self.torch_prev = torch.backends.cuda.matmul.allow_tf32
            torch.backends.cuda.matmul.allow_tf32 = True
        return self

    def __exit__(self, *exc):
        if self.supported:
            fw.set_float32_matmul_precision(self.fw_prev)
        if HAVE_TORCH:
            torch.backends.cuda.matmul.allow_tf32 = self.torch_prev
        return False


class _Nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _why(what, e):
    first = str(e).splitlines()[0] if str(e) else ""
    return f"{what}: {type(e).__name__}: {first[:80]}"


def run_case(case, peaks, budget_s):
    """One row: {'name', 'fw_ms', 'torch_ms', 'err', 'rate', 'frac', 'note'}."""
    row = {"name": case.name, "fw_ms": None, "torch_ms": None, "err": None, "rate": None,
           "frac": None, "torch_rate": None, "note": ""}
    ctx = _TF32() if "TF32" in case.name else _Nothing()
    with ctx:
        try:
            f, t = case.make()
        except Exception as e:  # inputs could not be made: nothing to time
            row["note"] = _why("inputs", e)
            f = t = None
        if f is not None:
            try:
                out = f()
                fw.cuda.synchronize()
                if t is not None:
                    row["err"] = rel_error(out, t())
                del out
                row["fw_ms"] = fw_time(f, budget_s=budget_s)
            except Exception as e:  # an op the cuda backend lacks: reported, not fatal
                row["note"] = _why("framework", e)
        if t is not None:
            row["torch_ms"] = torch_time(t, budget_s=budget_s)
        if isinstance(ctx, _TF32) and not ctx.supported:
            row["note"] += " framework has no set_float32_matmul_precision: full float32"
    scale = GB if case.kind == "GB/s" else 1e12
    if row["fw_ms"]:
        row["rate"] = case.work / (row["fw_ms"] * 1e-3) / scale
        if peaks.get(case.peak):
            row["frac"] = row["rate"] / peaks[case.peak]
    if row["torch_ms"]:
        row["torch_rate"] = case.work / (row["torch_ms"] * 1e-3) / scale
    row["unit"] = case.kind
    return row


# ---- report ---------------------------------------------------------------------------------

def _fmt(v, spec):
    return "n/a" if v is None else format(v, spec)


def _rate(v, unit):
    return "n/a" if v is None else f"{v:.1f} {unit}"


def table(rows, overhead, peaks, header):
    lines = [header, "",
             "| case | framework ms | torch ms | torch/fw | framework rate | torch rate "
             "| fw % of peak | rel err vs torch | note |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in rows:
        ratio = r["torch_ms"] / r["fw_ms"] if r["fw_ms"] and r["torch_ms"] else None
        lines.append(
            f"| {r['name']} | {_fmt(r['fw_ms'], '.3f')} | {_fmt(r['torch_ms'], '.3f')} | "
            f"{_fmt(ratio, '.2f')} | {_rate(r['rate'], r['unit'])} | "
            f"{_rate(r['torch_rate'], r['unit'])} | "
            f"{_fmt(None if r['frac'] is None else 100 * r['frac'], '.0f')} | "
            f"{_fmt(r['err'], '.1e')} | {r['note']} |")
    torch_us = overhead["torch"]
    for what, fw_us in overhead["fw"]:
        ratio = torch_us / fw_us if fw_us and torch_us else None
        lines.append(f"| host overhead: 1-element add{what} | {_rate(fw_us, 'us')} | "
                     f"{_rate(torch_us, 'us')} | {_fmt(ratio, '.2f')} | | | | | CPU wall "
                     "time per call |")
    lines += ["", "Peaks measured in this run: "
              f"copy {_fmt(peaks['bandwidth'], '.0f')} GB/s ({peaks['bandwidth_src']}, bytes "
              f"read + written); bf16 matmul {_fmt(peaks['bf16'], '.0f')} TFLOP/s and TF32 "
              f"{_fmt(peaks['tf32'], '.0f')} TFLOP/s (torch.matmul). torch/fw > 1: the "
              "framework is faster. Times: medians of event-timed repeats after warm-up."]
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="also write the markdown table to this file")
    ap.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats")
    ap.add_argument("--profile", action="store_true",
                    help="also profile the host side of a 1-element add (cProfile)")
    ap.add_argument("--smoke", action="store_true",
                    help="tiny sizes, on any cuda device including the simulator: checks "
                         "that the script runs, says nothing about speed")
    args = ap.parse_args(argv)

    if not fw.cuda.is_available() or (fw.cuda.is_simulated() and not args.smoke):
        why = "the simulated device (TRITON_INTERPRET=1)" if fw.cuda.is_available() else \
            "no CUDA device"
        print(f"bench/gpu_ops.py needs a real GPU; this run has {why}, so there is nothing "
              "to time.")
        return 0

    budget = 0.3 if args.quick else 1.0
    props = fw.cuda.get_device_properties()
    if args.smoke:
        global QUEUED
        QUEUED = False
        budget = 0.0
        peaks = measure_peaks(1 << 20)
        cases = (pointwise_cases(1 << 12) + reduction_cases(64, 256) + matmul_cases([64])
                 + grouped_mm_cases(2, 64, 64, 64))
    else:
        peaks = measure_peaks((1 << 28) if args.quick else (1 << 30))
        cases = (pointwise_cases(1 << (24 if args.quick else 26))
                 + reduction_cases(1 << 14, 1 << 12)
                 + matmul_cases([4096] if args.quick else [4096, 8192])
                 + grouped_mm_cases(8, 8192, 4096, 14336))
    rows = []
    for case in cases:
        rows.append(run_case(case, peaks, budget))
        print(f"  done: {case.name}", file=sys.stderr)
        fw.cuda.empty_cache()
        if HAVE_TORCH:
            torch.cuda.empty_cache()

    a, b = fw.ones(1, device="cuda"), fw.ones(1, device="cuda")
    overhead = {"fw": host_overheads(a, b, 50 if args.smoke else 2000), "torch": None}
    if HAVE_TORCH:
        ta, tb = torch.ones(1, device="cuda"), torch.ones(1, device="cuda")
        overhead["torch"] = host_overhead_us(lambda: ta + tb, torch.cuda.synchronize)

    import triton
    versions = f"triton {triton.__version__}, " + (
        f"torch {torch.__version__}" if HAVE_TORCH else
        "no torch with CUDA: no torch columns, no matrix peaks")
    header = (f"## GPU ops: {props.name} (sm_{props.major}{props.minor}, "
              f"{props.multi_processor_count} SMs, {props.total_memory / 2**30:.0f} GiB), "
              f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC\n\n"
              f"python {platform.python_version()}, {versions}"
              f"{', quick sizes' if args.quick else ''}.")
    text = table(rows, overhead, peaks, header)
    if args.profile:
        text += ("\n### Host profile of 2000 one-element adds (cProfile, by own time)\n\n```\n"
                 + host_profile(lambda: a + b).strip() + "\n```\n")
    print(text)
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
