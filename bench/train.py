"""Training throughput of the demo GPT (examples/train_gpt.py): tokens per second and peak
memory in the framework and in PyTorch (eager), on the same device, in one run.

The PyTorch model is the very same source: the model section of examples/train_gpt.py is
executed once with ``torch``/``nn``/``F`` bound to framework and once bound to PyTorch. One
step is forward, cross-entropy, backward, gradient clipping and an AdamW step (the demo's
param groups). Each library runs in its own subprocess, so peak memory is its own: on the
CPU the growth of the peak resident set (VmHWM, reset after the model and batch are built)
over the resident set at that point, on a GPU ``cuda.max_memory_allocated``. The
subprocesses alternate (framework, torch, framework, ...) and each library's best run is
kept, which evens out a noisy machine.

    python bench/train.py [--device cpu|cuda] [--model demo|gpt2] [--quick] [--steps N]
                          [--compile] [--json FILE] [--profile]

``--compile``: the framework's model runs as ``framework.compile(model)`` (its row labelled
"framework (compile)"; the warm-up steps include the trace); PyTorch stays eager, the
reference.

On the CPU the model is the demo's CPU default in float32; on a GPU the demo's GPU model
under bfloat16 autocast; on the simulated GPU (TRITON_INTERPRET=1, no GPU: Triton's
interpreter) a tiny model, the framework alone (PyTorch has no such device), one run.

``--profile``: the last framework run, after its timed steps, times a few steps' host time
to issue the work against their wall time with a synchronize (the same or nearly: the host
is the bottleneck, or the step synchronizes; far less: the GPU is), then runs them under
``framework.profiler`` and prints the ops and kernels by time.
"""
import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CPU_CFG = dict(batch_size=16, block_size=64, n_layer=4, n_head=4, n_embd=128)
GPU_CFG = dict(batch_size=32, block_size=256, n_layer=6, n_head=6, n_embd=384)
# --model gpt2: GPT-2 small's shape (124M parameters with its 50k vocabulary; the demo's byte
# vocabulary leaves 86M), where a GPU step is long enough for the kernels, not the host, to
# set the pace in both libraries
GPT2_CFG = dict(batch_size=8, block_size=1024, n_layer=12, n_head=12, n_embd=768)
# the simulated GPU runs every kernel in Triton's interpreter: a model it gets through
SIM_CFG = dict(batch_size=2, block_size=8, n_layer=1, n_head=2, n_embd=16)
PROFILE_STEPS = 3


def model_namespace(torch, nn, F):
    """The classes of the model section of examples/train_gpt.py, over the given library."""
    import math
    from dataclasses import dataclass
    with open(os.path.join(ROOT, "examples", "train_gpt.py")) as f:
        src = f.read()
    start, end = src.index("@dataclass\nclass GPTConfig"), src.index("# ---- the corpus")
    ns = {"torch": torch, "nn": nn, "F": F, "math": math, "dataclass": dataclass}
    exec(compile(src[start:end], "examples/train_gpt.py (model)", "exec"), ns)
    return ns


def rss_mb(field="VmRSS"):
    """This process's resident set (``VmRSS``) or its peak since the last reset (``VmHWM``),
    in MiB, from /proc/self/status (Linux)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def reset_peak_rss():
    """Sets the peak resident set (VmHWM) back to the current one (Linux >= 4.0)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def profile_steps(step, sync, gpu, n=PROFILE_STEPS):
    """Host time to issue ``n`` steps against their wall time with a synchronize, then the
    same steps under framework.profiler: (summary line, table)."""
    import framework.profiler as fp
    issue, wall = [], []
    for _ in range(n):
        sync()
        t0 = time.perf_counter()
        step()
        t1 = time.perf_counter()
        sync()
        issue.append(t1 - t0)
        wall.append(time.perf_counter() - t0)
    acts = [fp.ProfilerActivity.CPU] + ([fp.ProfilerActivity.CUDA] if gpu else [])
    with fp.profile(activities=acts) as prof:
        for _ in range(n):
            with fp.record_function("train_step"):
                step()
    avgs = prof.key_averages()
    table = avgs.table(sort_by="cuda_time_total" if gpu else "cpu_time_total", row_limit=30)
    issue_ms, wall_ms = sorted(issue)[n // 2] * 1e3, sorted(wall)[n // 2] * 1e3
    line = (f"step (median of {n}, unprofiled): host time to issue {issue_ms:.2f} ms, wall time "
            f"with synchronize {wall_ms:.2f} ms")
    if gpu:
        kernels = sum(e.self_cuda_time_total for e in avgs
                      if e.device_type is fp.DeviceType.CUDA) / n / 1e3
        line += (f"; kernel time per step (profiled) {kernels:.2f} ms = "
                 f"{100 * kernels / wall_ms:.0f}% of the wall time: "
                 + ("host-bound (or the step synchronizes)" if issue_ms > 0.8 * wall_ms
                    else "device-bound"))
    return line, table


def worker(lib, device, steps, warmup, cfg, threads, profile=False, compiled=False):
    if lib == "torch":
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
    else:
        sys.path.insert(0, ROOT)
        import framework as torch
        import framework.nn as nn
        import framework.nn.functional as F
    if threads:
        torch.set_num_threads(threads)
    ns = model_namespace(torch, nn, F)
    torch.manual_seed(0)
    gcfg = ns["GPTConfig"](block_size=cfg["block_size"], n_layer=cfg["n_layer"],
                           n_head=cfg["n_head"], n_embd=cfg["n_embd"])
    model = ns["GPT"](gcfg).to(device)
    opt = model.configure_optimizer(1e-3, 0.1)
    forward = torch.compile(model) if compiled and lib == "framework" else model
    B, T = cfg["batch_size"], cfg["block_size"]
    x = torch.randint(0, 256, (B, T), device=device)
    y = torch.randint(0, 256, (B, T), device=device)
    gpu = device.startswith("cuda")

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast(device_type="cuda" if gpu else "cpu", dtype=torch.bfloat16,
                            enabled=gpu):
            _, loss = forward(x, y)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss

    def sync():
        if gpu:
            torch.cuda.synchronize()

    base = rss_mb()
    reset_peak_rss()
    if gpu:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base_gpu = torch.cuda.memory_allocated() / 2**20
    for _ in range(warmup):
        step()
    sync()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        loss = step()
        loss.item()            # waits for the step, as a training loop's logging does
        sync()
        times.append(time.perf_counter() - t0)
    times.sort()
    median = times[len(times) // 2]
    out = {"lib": lib, "tokens_per_s": B * T / median, "step_ms": median * 1e3,
           "params": sum(p.numel() for p in model.parameters()),
           "threads": torch.get_num_threads(), "compile": forward is not model}
    if profile:
        out["profile_line"], out["profile_table"] = profile_steps(step, sync, gpu)
    if gpu:
        out["peak_mb"] = torch.cuda.max_memory_allocated() / 2**20 - base_gpu
        out["device_name"] = torch.cuda.get_device_name()
    else:
        out["peak_mb"] = rss_mb("VmHWM") - base
    print(json.dumps(out))


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def run_worker(lib, args, profile=False):
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", lib, "--device", args.device,
           "--steps", str(args.steps), "--warmup", str(args.warmup),
           "--threads", str(args.threads), "--model", args.model] + (
               ["--profile"] if profile else []) + (["--compile"] if args.compile else [])
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if r.returncode != 0:
        raise SystemExit(f"{lib} worker failed:\n{r.stdout}\n{r.stderr}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default=None, help="cpu or cuda (default: cuda if present)")
    ap.add_argument("--quick", action="store_true", help="fewer steps and rounds")
    ap.add_argument("--model", choices=["demo", "gpt2"], default="demo",
                    help="the demo's model for the device (default), or GPT-2 small's shape")
    ap.add_argument("--steps", type=int, default=None, help="timed steps per run")
    ap.add_argument("--warmup", type=int, default=None, help="untimed steps first (3; 1 on "
                    "the simulated GPU)")
    ap.add_argument("--rounds", type=int, default=None, help="runs per library")
    ap.add_argument("--threads", type=int, default=0, help="CPU threads (default: each "
                    "library's own default)")
    ap.add_argument("--compile", action="store_true", help="the framework's model as "
                    "framework.compile(model) (PyTorch stays eager)")
    ap.add_argument("--json", help="write the results to this file")
    ap.add_argument("--profile", action="store_true", help=f"after the last framework run's "
                    f"timed steps, profile {PROFILE_STEPS} steps (framework.profiler) and print "
                    "the ops and kernels by time")
    ap.add_argument("--worker", choices=["framework", "torch"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.device is None:
        sys.path.insert(0, ROOT)
        import framework
        args.device = "cuda" if framework.cuda.is_available() and \
            not framework.cuda.is_simulated() else "cpu"
    # framework's rule (framework/cuda/_runtime.py), read here without starting CUDA
    simulated = args.device.startswith("cuda") and \
        os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")
    cfg = SIM_CFG if simulated else GPU_CFG if args.device.startswith("cuda") else CPU_CFG
    if args.model == "gpt2" and not simulated:
        cfg = GPT2_CFG
    if args.steps is None:
        args.steps = 2 if simulated else 10 if args.quick else 30
    if args.warmup is None:
        args.warmup = 1 if simulated else 3
    if args.worker:
        return worker(args.worker, args.device, args.steps, args.warmup, cfg, args.threads,
                      args.profile, args.compile)
    rounds = args.rounds or (1 if simulated else 2 if args.quick else 3)
    libs = ["framework"]
    if simulated:
        print("simulated GPU (Triton's interpreter): framework only, a tiny model")
    else:
        try:
            import torch  # noqa: F401
            libs.append("torch")
        except ImportError:
            print("PyTorch is not installed: framework only")
    best, profiled = {}, None
    for i in range(rounds):
        for lib in libs:
            r = run_worker(lib, args, profile=args.profile and lib == "framework"
                           and i == rounds - 1)
            if "profile_table" in r:
                profiled = r
            if lib not in best or r["tokens_per_s"] > best[lib]["tokens_per_s"]:
                best[lib] = r
    dtype = "bfloat16 autocast" if args.device.startswith("cuda") else "float32"
    if simulated:
        dtype += ", simulated"
    where = best["framework"].get("device_name") or f"{cpu_name()}, {os.cpu_count()} cores"
    name = "GPT-2 small shape" if cfg is GPT2_CFG else "demo GPT"
    print(f"{name} training step ({best['framework']['params'] / 1e6:.2f}M parameters, "
          f"batch {cfg['batch_size']} x {cfg['block_size']} tokens, {dtype}) on "
          f"{args.device} ({where}); best of {rounds} runs of {args.steps} steps, median step")
    print()
    print("| library | tokens/s | step (ms) | peak memory (MiB) | threads | tokens/s vs torch "
          "| memory vs torch |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    ref = best.get("torch")
    for lib in libs:
        r = best[lib]
        ratio = f"{r['tokens_per_s'] / ref['tokens_per_s']:.2f}x" if ref else "-"
        mem = f"{r['peak_mb'] / ref['peak_mb']:.2f}x" if ref and ref["peak_mb"] > 0 else "-"
        label = f"{lib} (compile)" if r.get("compile") else lib
        print(f"| {label} | {r['tokens_per_s']:,.0f} | {r['step_ms']:.1f} | {r['peak_mb']:.1f} "
              f"| {r['threads']} | {ratio} | {mem} |")
    if profiled is not None:
        print()
        print(f"framework.profiler, {PROFILE_STEPS} steps of the last framework run:")
        print(profiled["profile_line"])
        print(profiled["profile_table"])
    if args.json:
        for r in best.values():
            r.pop("profile_table", None)
        with open(args.json, "w") as f:
            json.dump({"device": args.device, "where": where, "dtype": dtype, "config": cfg,
                       "date": time.strftime("%Y-%m-%d"), "results": best}, f, indent=1)


if __name__ == "__main__":
    main()
