"""CUDA graphs: host time per training step of a small MLP, eager beside a replayed graph
of the whole step (forward, backward, Adam with capturable=True), and torch doing the same
where it has a GPU.

    python bench/cuda_graphs.py [--device cuda] [--quick] [--steps N]

"host us/step" is the time the host spends issuing a step (no synchronize inside the
timed loop: what a step costs the CPU while the GPU works); "wall us/step" includes a
synchronize at the end of the loop. On a GPU the replay's host time is one cuGraphLaunch
(plus the copies into the static input), whatever the number of kernels.

Without a GPU (no loadable libcuda) it runs on the simulated device (TRITON_INTERPRET=1),
where a replay re-runs the recorded launches in Triton's interpreter: the numbers then
show the simulator, not the GPU's launch cost, and the sizes are cut down.
"""
import argparse
import ctypes
import os
import sys
import time


def _has_gpu():
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


SIMULATED = os.environ.get("TRITON_INTERPRET", "0") not in ("", "0") or not _has_gpu()
if SIMULATED:
    os.environ["TRITON_INTERPRET"] = "1"   # before triton and framework are imported
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _step_fns(lib, width, batch, depth):
    """(eager step, graphed step, static input, static target) of ``lib`` (framework or
    torch), each step one forward, backward and Adam update of the same MLP."""
    nn, F = lib.nn, lib.nn.functional

    def make():
        lib.manual_seed(0)
        layers = []
        for _ in range(depth):
            layers += [nn.Linear(width, width), nn.ReLU()]
        model = nn.Sequential(*layers, nn.Linear(width, 10)).cuda()
        return model, lib.optim.Adam(model.parameters(), lr=1e-3, capturable=True)

    x = lib.randn(batch, width, device="cuda")
    y = lib.randn(batch, 10, device="cuda")

    def step(model, opt):
        opt.zero_grad(set_to_none=True)
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        return loss

    eager_model, eager_opt = make()
    model, opt = make()
    side = lib.cuda.Stream()
    side.wait_stream(lib.cuda.current_stream())
    with lib.cuda.stream(side):
        for _ in range(3):
            step(model, opt)
    lib.cuda.current_stream().wait_stream(side)
    g = lib.cuda.CUDAGraph()
    with lib.cuda.graph(g):
        step(model, opt)
    new_x = lib.randn(batch, width, device="cuda")

    def graphed():
        x.copy_(new_x)
        g.replay()

    return (lambda: step(eager_model, eager_opt)), graphed, lib.cuda.synchronize


def _time(fn, sync, steps):
    fn()
    sync()
    t0 = time.perf_counter()
    for _ in range(steps):
        fn()
    host = time.perf_counter() - t0
    sync()
    wall = time.perf_counter() - t0
    return host / steps * 1e6, wall / steps * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cuda", choices=["cuda"])
    ap.add_argument("--quick", action="store_true", help="fewer steps")
    ap.add_argument("--steps", type=int, default=None)
    args = ap.parse_args()
    import framework as fw
    if SIMULATED:
        width, batch, depth, steps = 32, 8, 2, args.steps or 3
        print("note: no GPU here: simulated cuda (TRITON_INTERPRET=1); the times are the "
              "interpreter's, not a GPU's launch cost\n")
    else:
        width, batch, depth, steps = 512, 64, 4, args.steps or (50 if args.quick else 200)
        print(f"device: {fw.cuda.get_device_name()}\n")
    print(f"MLP {depth}x Linear({width}, {width}) + ReLU, Linear({width}, 10), batch {batch}, "
          f"Adam(capturable=True), {steps} steps\n")
    rows = []
    eager, graphed, sync = _step_fns(fw, width, batch, depth)
    rows.append(("framework eager step", *_time(eager, sync, steps)))
    rows.append(("framework graph replay", *_time(graphed, sync, steps)))
    if not SIMULATED:
        try:
            import torch
            if torch.cuda.is_available():
                eager, graphed, sync = _step_fns(torch, width, batch, depth)
                rows.append(("torch eager step", *_time(eager, sync, steps)))
                rows.append(("torch graph replay", *_time(graphed, sync, steps)))
        except ImportError:
            pass
    base = {name.split()[0]: host for name, host, _ in rows if name.endswith("eager step")}
    print(f"| {'step':<24} | {'host us/step':>12} | {'wall us/step':>12} | "
          f"{'host vs eager':>13} |")
    print(f"| {'-' * 24} | {'-' * 11}: | {'-' * 11}: | {'-' * 12}: |")
    for name, host, wall in rows:
        ratio = base[name.split()[0]] / host
        print(f"| {name:<24} | {host:12.1f} | {wall:12.1f} | {ratio:12.2f}x |")


if __name__ == "__main__":
    main()
