"""`make bench`: runs every benchmark under bench/ that has a quick mode (a ``--quick``
option) in its own subprocess and writes what each printed to bench/report.md, with the
machine and date, plus a chart of the training benchmark (bench/train.png) when matplotlib
is installed. Benchmarks that need a GPU (``*cuda*``/``gpu*`` in the name) run only where a
real one is present.

    python bench/report.py [--quick] [--only NAME ...] [--out bench/report.md]
"""
import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def quick_benchmarks():
    """Scripts in bench/ whose source declares a ``--quick`` option, train.py first."""
    names = []
    for name in sorted(os.listdir(HERE)):
        if not name.endswith(".py") or name.startswith("_") or name == "report.py":
            continue
        with open(os.path.join(HERE, name)) as f:
            if '"--quick"' in f.read():
                names.append(name)
    return sorted(names, key=lambda n: n != "train.py")


def needs_gpu(name):
    return "cuda" in name or name.startswith("gpu")


def has_gpu():
    sys.path.insert(0, ROOT)
    import framework
    return framework.cuda.is_available() and not framework.cuda.is_simulated()


def machine():
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"model name\s*:\s*(.+)", f.read())
            cpu = m.group(1).strip() if m else cpu
    except OSError:
        pass
    text = f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}"
    try:
        import torch
        text += f", torch {torch.__version__}"
    except ImportError:
        pass
    return text


def chart(result, path):
    """Bar chart of tokens/s and peak memory of bench/train.py's results; False without
    matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    libs = list(result["results"])
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.2))
    for ax, key, label in [(axes[0], "tokens_per_s", "tokens / s (higher is better)"),
                           (axes[1], "peak_mb", "peak memory, MiB (lower is better)")]:
        values = [result["results"][lib][key] for lib in libs]
        ax.bar(libs, values, color=["tab:blue", "tab:gray"][:len(libs)])
        ax.set_title(label, fontsize=10)
        for i, v in enumerate(values):
            ax.text(i, v, f"{v:,.0f}" if key == "tokens_per_s" else f"{v:.1f}",
                    ha="center", va="bottom", fontsize=9)
    fig.suptitle(f"demo GPT training step, {result['device']} {result['dtype']}", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def ratio_chart(name, out, path):
    """Horizontal bars of the last column of the markdown table(s) in ``out`` where that
    column holds ratios (``1.23x`` or ``1.23``), labelled by the first column; the column's
    header (which says which way is better) names the axis. False if there is nothing to
    draw or no matplotlib."""
    rows, header = [], None
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) < 2 or set(cells[0]) <= set("-: "):
            continue
        m = re.fullmatch(r"([\d.]+)x?", cells[-1])
        if m:
            rows.append((cells[0], float(m.group(1))))
        elif header is None:
            header = cells[-1]
    if not rows:
        return False
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker  # noqa: F401
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(8, 0.35 * len(rows) + 1.2))
    labels, values = zip(*rows)
    ax.barh(range(len(rows)), values, color="tab:blue")
    ax.set_yticks(range(len(rows)), labels, fontsize=8)
    ax.invert_yaxis()
    ax.axvline(1.0, color="black", lw=0.8)
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%gx"))
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    for i, v in enumerate(values):
        ax.text(v, i, f" {v:.2f}", va="center", fontsize=7)
    ax.set_xlabel(header or "ratio")
    ax.set_title(name, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def update_readme(result, table, quick):
    """Puts bench/train.py's table, with date and machine, between the README's
    ``<!-- bench:train -->`` markers."""
    path = os.path.join(ROOT, "README.md")
    with open(path) as f:
        text = f.read()
    start, end = "<!-- bench:train -->", "<!-- /bench:train -->"
    if start not in text or end not in text:
        print("README.md has no bench:train markers: not updated")
        return
    cfg = result["config"]
    body = (f"Latest measurement ({result['date']}, {result['device']}: {result['where']}, "
            f"{result['dtype']}, batch {cfg['batch_size']} x {cfg['block_size']} tokens, "
            f"`python bench/train.py{' --quick' if quick else ''}`):\n\n{table}\n")
    head, rest = text.split(start, 1)
    tail = rest.split(end, 1)[1]
    with open(path, "w") as f:
        f.write(f"{head}{start}\n{body}{end}{tail}")
    print("updated the benchmark table in README.md")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="pass --quick to every benchmark")
    ap.add_argument("--only", nargs="*", help="only these scripts (e.g. train.py)")
    ap.add_argument("--out", default=os.path.join(HERE, "report.md"))
    ap.add_argument("--timeout", type=float, default=None,
                    help="seconds per benchmark (default: 180 with --quick, a guard that "
                         "keeps the quick report near 5 minutes; else 1800)")
    ap.add_argument("--update-readme", action="store_true",
                    help="put bench/train.py's table into README.md")
    args = ap.parse_args()
    if args.timeout is None:
        args.timeout = 180 if args.quick else 1800
    gpu = has_gpu()
    names = [n for n in quick_benchmarks() if gpu or not needs_gpu(n)]
    if args.only:
        names = [n for n in names if n in args.only]
    date = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    lines = ["# Benchmark report", "",
             f"{date}; {machine()}; {'GPU present' if gpu else 'CPU only (no GPU)'}; "
             f"{'quick mode' if args.quick else 'full mode'}.", "",
             "Each benchmark prints the framework beside its references (NumPy, PyTorch) "
             "measured in the same run; each table says which way its ratio goes.", ""]
    tmp = tempfile.mkdtemp(prefix="bench-")
    for name in names:
        cmd = [sys.executable, os.path.join(HERE, name)] + (["--quick"] if args.quick else [])
        train_json = None
        if name == "train.py":
            train_json = os.path.join(tmp, "train.json")
            cmd += ["--json", train_json]
        print(f"== {' '.join(cmd[1:])}", flush=True)
        t0 = time.perf_counter()
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT,
                               timeout=args.timeout)
            out, rc = r.stdout, r.returncode
            err = r.stderr
        except subprocess.TimeoutExpired as e:
            out = e.stdout or ""             # what it printed before it was stopped
            if isinstance(out, bytes):
                out = out.decode(errors="replace")
            rc, err = f"timeout after {args.timeout:.0f} s", ""
        took = time.perf_counter() - t0
        print(out, flush=True)
        status = "" if rc == 0 else f", {rc}" if isinstance(rc, str) else f", exit {rc}"
        lines += [f"## {name}", "", f"`python bench/{name}{' --quick' if args.quick else ''}`"
                  f" ({took:.0f} s{status})", ""]
        if "|---" in out:          # markdown tables go in as they are
            lines += [out.strip(), ""]
            png = os.path.join(HERE, name[:-3] + ".png")
            if name != "train.py" and ratio_chart(name, out, png):
                lines += [f"![{name}]({os.path.basename(png)})", ""]
        else:
            lines += ["```", out.strip(), "```", ""]
        if rc != 0:
            lines += ["```", err.strip()[-2000:], "```", ""]
        if train_json and os.path.exists(train_json):
            with open(train_json) as f:
                result = json.load(f)
            if args.update_readme:
                table = "\n".join(line for line in out.splitlines() if line.startswith("|"))
                update_readme(result, table, args.quick)
            png = os.path.join(HERE, "train.png")
            if chart(result, png):
                lines += [f"![training throughput]({os.path.basename(png)})", ""]
    with open(args.out, "w") as f:
        f.write("\n".join(lines))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
