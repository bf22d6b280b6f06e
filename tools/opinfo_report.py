"""Coverage of PyTorch's OpInfo database (op_db) by the framework.

    TRITON_INTERPRET=1 .venv/bin/python tools/opinfo_report.py [-j 2] [--cpu-only] [--ops a,b]

Runs the walk of tests/test_torch_opinfo.py over every OpInfo and prints: OpInfos total,
present (the framework has the op), samples agreeing with torch, the top disagreements grouped
by op, and the absent OpInfos. Goal: 95% of OpInfos present, 99% of samples agreeing."""
import argparse
import collections
import os
import sys
import time
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))


def _walk(args):
    index, devices = args
    from torch_opinfo import walker
    op = _DB[index]
    status = walker.status_of(op)
    t = time.time()
    try:
        results = walker.walk_op(op, devices=devices) if status == "present" else []
    except Exception as e:      # a crash of the walk itself counts against the op
        results = [walker.Result(walker.key(op), "walk", -1, "disagree",
                                 f"{type(e).__name__}: {e}")]
    return index, status, results, time.time() - t


_DB = None


def _init():
    global _DB
    from torch_opinfo import walker
    _DB = walker.load_op_db()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-j", "--jobs", type=int, default=1, help="worker processes")
    p.add_argument("--cpu-only", action="store_true", help="skip the (simulated) cuda device")
    p.add_argument("--ops", default="", help="comma-separated OpInfo names (default: all)")
    p.add_argument("--top", type=int, default=40, help="disagreeing ops to list")
    p.add_argument("--xfail", action="store_true",
                   help="also print the disagreeing ops as KNOWN_DISAGREEMENTS entries")
    a = p.parse_args(argv)
    warnings.simplefilter("ignore")
    _init()
    import framework as fw
    from torch_opinfo import walker
    devices = ("cpu",) if a.cpu_only or not fw.cuda.is_available() else ("cpu", "cuda")
    wanted = set(filter(None, a.ops.split(",")))
    todo = [(i, devices) for i, op in enumerate(_DB)
            if not wanted or op.name in wanted or walker.key(op) in wanted]
    start = time.time()
    if a.jobs > 1:
        import multiprocessing as mp
        with mp.get_context("fork").Pool(a.jobs) as pool:
            done = list(pool.imap_unordered(_walk, todo, chunksize=4))
    else:
        done = [_walk(t) for t in todo]
    done.sort()
    statuses = collections.Counter()
    counts = collections.Counter()
    by_op = collections.defaultdict(list)
    absent, slow, complex_gaps = [], [], set()
    for index, status, results, secs in done:
        op = _DB[index]
        statuses[status] += 1
        if status == "absent":
            absent.append(walker.key(op))
        slow.append((secs, walker.key(op)))
        for r in results:
            counts[r.status] += 1
            if r.status == "disagree":
                by_op[r.op].append(r)
            elif r.status == "no complex":
                complex_gaps.add(r.op)
    total = len(done)
    checked = counts["agree"] + counts["disagree"]
    print(f"OpInfos total:        {total}")
    public = total - statuses["internal"]
    print(f"  internal (list):    {statuses['internal']} (aten entry points, private and "
          f"CUDA-only ops: left aside)")
    print(f"  public:             {public}")
    print(f"  present:            {statuses['present']} ({100 * statuses['present'] / public:.1f}% "
          f"of public; goal 95%)")
    print(f"  unsupported (list): {statuses['unsupported']}")
    print(f"  absent:             {statuses['absent']}")
    print(f"samples compared:     {checked} (devices: {', '.join(devices)}; skipped: "
          f"{counts['skip']})")
    if checked:
        print(f"  agreeing:           {counts['agree']} ({100 * counts['agree'] / checked:.1f}%)")
        print(f"  disagreeing:        {counts['disagree']} in {len(by_op)} OpInfos "
              f"({sum(1 for k in by_op if walker.KNOWN_DISAGREEMENTS.get(k))} listed as known)")
    if counts["no complex"]:
        refusing = sorted(complex_gaps)
        print(f"complex64 samples refused (NotImplementedError, not compared): "
              f"{counts['no complex']} in {len(refusing)} OpInfos")
    print(f"wall time:            {time.time() - start:.0f} s")
    print()
    print(f"top disagreements (of {len(by_op)} OpInfos), by op:")
    for name, rs in sorted(by_op.items(), key=lambda kv: -len(kv[1]))[:a.top]:
        msgs = collections.Counter(r.message.split(":")[0] if r.message.startswith(
            ("values differ", "output")) else r.message[:90] for r in rs)
        known = " [known]" if walker.KNOWN_DISAGREEMENTS.get(name) else ""
        print(f"  {len(rs):3d}  {name}{known}: {msgs.most_common(1)[0][0]}")
    print()
    print(f"absent OpInfos ({len(absent)}): {', '.join(absent)}")
    print()
    print(f"OpInfos refusing complex64 ({len(complex_gaps)}): {', '.join(sorted(complex_gaps))}")
    print()
    print("slowest OpInfos: " + ", ".join(f"{k} {s:.1f}s" for s, k in sorted(slow)[-8:][::-1]))
    if a.xfail:
        print()
        for name, rs in sorted(by_op.items()):
            checks = sorted({r.check for r in rs})
            print(f"    {name!r}: {(', '.join(checks) + ': ' + rs[0].message)[:110]!r},")


if __name__ == "__main__":
    main()
