"""The framework's own host time for the demo GPT's training step on ``cuda``, measured
without a GPU: the simulated device (``TRITON_INTERPRET=1``) with every kernel launch
stubbed out, so what is timed is the Python and native work around the launches (dispatch,
autograd, autocast, allocation, launch geometry, argument binding) that a GPU run pays
before each kernel. On a GPU, a step whose host time exceeds the kernels' time is
host-bound; this is the number to bring down, and it can be measured on any machine.

    python bench/host_step.py [--steps N] [--profile] [--kernels] [--n-layer L] [--launcher]

With ``--launcher`` the launches go through the cached launcher a GPU uses
(framework/kernels/launcher.py: binding, key, stream) up to Triton's compiled launcher, which
is what is stubbed then; without it, up to Triton's ``JITFunction.run``.

It sets ``TRITON_INTERPRET=1`` itself (on a GPU machine too, where it measures that host's
CPU: the figure to set beside a GPU run's step time).

Prints launches a step (by kernel with ``--kernels``), the host time a step (median; by
phase with ``--phases``), and
with ``--profile`` a cProfile table of the steps by own time. The model is bench/train.py's
(the demo's source) at a small width: launch counts do not depend on the sizes, except
where a reduction splits.
"""
import argparse
import collections
import cProfile
import ctypes
import io
import os
import pstats
import sys
import time


os.environ["TRITON_INTERPRET"] = "1"  # before triton and framework are imported
if "--launcher" in sys.argv:  # the cached launcher wraps the interpreter's kernels too
    os.environ["FW_CACHED_LAUNCH"] = "interpreted"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cuda", choices=["cuda"],
                    help="the simulated cuda device (gpu_check.sh passes it)")
    ap.add_argument("--quick", action="store_true", help="accepted, as by the other benches")
    ap.add_argument("--steps", type=int, default=10, help="timed steps (after 3 untimed)")
    ap.add_argument("--n-layer", type=int, default=6)
    ap.add_argument("--n-embd", type=int, default=64)
    ap.add_argument("--batch-size", type=int, default=4)
    ap.add_argument("--block-size", type=int, default=64)
    ap.add_argument("--profile", action="store_true", help="cProfile table of the steps")
    ap.add_argument("--kernels", action="store_true", help="launches a step by kernel")
    ap.add_argument("--phases", action="store_true",
                    help="host time of forward, backward, clipping and optimizer step")
    ap.add_argument("--launcher", action="store_true",
                    help="launch through the GPU's cached launcher (framework/kernels/"
                         "launcher.py) up to Triton's compiled launcher, which is stubbed")
    ap.add_argument("--rows", type=int, default=40, help="rows of the profile table")
    ap.add_argument("--sort", default="tottime", help="the profile's order (cumulative, ...)")
    args = ap.parse_args()

    from triton.runtime.interpreter import InterpretedFunction

    import framework as torch
    import framework.nn as nn
    import framework.nn.functional as F
    from train import model_namespace

    launches = collections.Counter()
    counting = [False]
    in_stub = [0.0]  # seconds spent in the stub, taken off the step's time

    class Compiled:
        """What the cached launcher keeps of a first launch (--launcher): its later
        launches call ``run``, Triton's compiled launcher there, here a count."""
        function = packed_metadata = None

        def __init__(self, name):
            self.name = name

        def run(self, *a):
            if counting[0]:
                launches[self.name] += 1

    def stub_run(self, *a, **k):
        """The launch left out; its own time is taken off the step's. Integer outputs the
        host reads back must say "all is well": zeros (the index checks' flags and counts),
        but for cross_entropy's first bad row, which must lie past the last. So a kernel
        with integer tensors comes back here every time; the others (--launcher) hand the
        cached launcher a stand-in compiled kernel for their later launches."""
        t0 = time.perf_counter()
        name = self.fn.__name__
        if counting[0]:
            launches[name] += 1
        fill = 0x7f if name == "_ce_forward_kernel" else 0
        compiled = Compiled(name)
        for t in (*a, *k.values()):
            if isinstance(t, torch.Tensor) and not t.dtype.is_floating_point:
                st = t._storage
                ctypes.memset(st.ptr, fill, st.nbytes)
                compiled = None
        in_stub[0] += time.perf_counter() - t0
        return compiled

    ns = model_namespace(torch, nn, F)
    torch.manual_seed(0)
    cfg = ns["GPTConfig"](block_size=args.block_size, n_layer=args.n_layer,
                          n_head=max(1, args.n_embd // 32), n_embd=args.n_embd)
    model = ns["GPT"](cfg).to("cuda")
    opt = model.configure_optimizer(1e-3, 0.1)
    B, T = args.batch_size, args.block_size
    x = torch.randint(0, 256, (B, T), device="cuda")
    y = torch.randint(0, 256, (B, T), device="cuda")

    phases = collections.defaultdict(list)  # phase -> host seconds of each step

    def timed(name, t0):
        """Books the time since ``t0`` (less the stub's) to ``name``; a new t0."""
        t = time.perf_counter()
        phases[name].append(t - t0 - in_stub[0])
        in_stub[0] = 0.0
        return time.perf_counter()

    def step():
        in_stub[0] = 0.0
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            _, loss = model(x, y)
        t0 = timed("forward", t0)
        loss.backward()
        t0 = timed("backward", t0)
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        t0 = timed("clip_grad_norm_", t0)
        opt.step()
        timed("optimizer step", t0)

    # one real step first: lazily built state (optimizer slots, plans) is made with real
    # values, as on a GPU; the stubbed steps after it only issue work. An interpreter that
    # cannot run a kernel (Triton 3.6's on the GPU machines fails in a `range(tl.cdiv(..))`
    # that newer ones run) leaves that state to the stubbed steps: zeros, the same work.
    try:
        step()
    except Exception as e:  # noqa: BLE001 - the host time is still measurable
        print(f"host_step: the real step failed in this Triton's interpreter "
              f"({type(e).__name__}); stubbed from the first step")
    InterpretedFunction.run = stub_run
    step()
    counting[0] = True
    step()
    counting[0] = False
    phases.clear()
    for _ in range(args.steps):
        step()
    times = sorted(map(sum, zip(*phases.values())))
    n = sum(launches.values())
    ms = times[len(times) // 2] * 1e3
    print(f"launches a step: {n}; host time a step: {ms:.2f} ms (median of {args.steps}; "
          f"min {times[0] * 1e3:.2f}), {1e3 * ms / max(n, 1):.1f} us a launch")
    if args.phases:
        for name, ts in phases.items():
            print(f"  {name:16s} {sorted(ts)[len(ts) // 2] * 1e3:6.2f} ms")
    if args.kernels:
        for name, k in launches.most_common():
            print(f"  {k:5d}  {name}")
    if args.profile:
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(args.steps):
            step()
        prof.disable()
        s = io.StringIO()
        st = pstats.Stats(prof, stream=s).sort_stats(args.sort)
        st.print_stats(args.rows)
        if os.environ.get("HOST_STEP_CALLERS"):
            st.print_callers(os.environ["HOST_STEP_CALLERS"])
        if os.environ.get("HOST_STEP_DUMP"):
            prof.dump_stats(os.environ["HOST_STEP_DUMP"])
        print(s.getvalue())


if __name__ == "__main__":
    main()
