"""Bad-input report: runs every case of tests/badinput/ on the framework (cpu, and cuda where
available) in worker processes, so crashes and hangs are counted instead of ending the run, and
prints the counts per category and the failing case ids.

    TRITON_INTERPRET=1 .venv/bin/python bench/bad_input_report.py [-v] [-k SUBSTRING] [--json FILE]

Statuses: pass; crash (the worker died); hang (timed out); silent (succeeded where PyTorch
raises); class (both raise, another exception class); message (same class, the message lacks
PyTorch's fragment); wrote (raised as expected but modified the target); raised (raised where
PyTorch succeeds); wrong (succeeded with another value)."""
import argparse
import json
import os
import sys
import time
from collections import Counter, defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))

import badinput as B  # noqa: E402
from badinput.isolate import run_isolated  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-v", "--verbose", action="store_true", help="print each failure's detail")
    ap.add_argument("-k", default="", help="only cases whose id contains this")
    ap.add_argument("--json", help="write every result to this file")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per case")
    args = ap.parse_args()

    import framework as fw
    cuda = fw.cuda.is_available()
    try:
        import torch
    except ImportError:
        torch = None

    cases = [c for c in B.all_cases() if args.k in c.id]
    jobs = [(c.id, dev) for c in cases for dev in B.devices_for(c, cuda)]
    t0 = time.time()
    got = run_isolated(jobs, timeout=args.timeout)
    t_fw = time.time() - t0

    stale = []
    refs = {}
    if torch is not None:
        for c in cases:
            if not c.oracle:
                continue
            ref = B.run(c, torch, "cpu")
            refs[c.id] = ref
            why = B.table_disagreement(c, ref)
            if why:
                stale.append((c.id, why))

    rows = []
    for c in cases:
        for dev in B.devices_for(c, cuda):
            ref = refs.get(c.id) if c.expect is B.OK else None
            status, detail = B.judge(c, got[(c.id, dev)], ref)
            rows.append((c, dev, status, detail, got[(c.id, dev)]))

    print(f"bad-input report: {len(cases)} cases, {len(rows)} runs "
          f"(devices: cpu{', cuda' if cuda else ''}; torch {'%s' % torch.__version__ if torch else 'absent'}); "
          f"framework runs took {t_fw:.1f} s")
    cols = B.STATUSES
    print()
    print(f"{'category':<11}{'cases':>6}{'runs':>6}" + "".join(f"{s:>8}" for s in cols) + f"{'class%':>8}")
    by_cat = defaultdict(list)
    for r in rows:
        by_cat[r[0].category].append(r)
    total_both = total_same = 0
    for cat in B.CATEGORIES + ["all"]:
        rs = rows if cat == "all" else by_cat.get(cat, [])
        if not rs:
            continue
        n_cases = len({r[0].id for r in rs})
        cnt = Counter(r[2] for r in rs)
        both = [r for r in rs if r[0].expect is not B.OK and r[4]["kind"] == "raise"]
        same = sum(1 for r in both if B.class_matches(r[4], r[0].expect.cls))
        pct = f"{100.0 * same / len(both):.1f}" if both else "-"
        if cat == "all":
            total_both, total_same = len(both), same
            print("-" * (25 + 8 * (len(cols) + 1)))
        print(f"{cat:<11}{n_cases:>6}{len(rs):>6}" + "".join(f"{cnt.get(s, 0):>8}" for s in cols) + f"{pct:>8}")
    print()
    cnt = Counter(r[2] for r in rows)
    print(f"crashes {cnt['crash']}, hangs {cnt['hang']}, silent successes where torch raises "
          f"{cnt['silent']}, wrong values {cnt['wrong']}, class mismatches {cnt['class']}, "
          f"message mismatches {cnt['message']}, wrote before raising {cnt['wrote']}, "
          f"raised where torch succeeds {cnt['raised']}")
    if total_both:
        print(f"class agreement where both raise: {total_same}/{total_both} = "
              f"{100.0 * total_same / total_both:.1f}%")
    print(f"passing runs: {cnt['pass']}/{len(rows)}")
    if stale:
        print(f"\nSTALE TABLE ROWS (the table disagrees with this torch): {len(stale)}")
        for cid, why in stale:
            print(f"  {cid}: {why}")

    fails = defaultdict(list)
    for c, dev, status, detail, _ in rows:
        if status != "pass":
            fails[status].append((f"{c.id}[{dev}]", detail))
    for status in cols[1:]:
        if not fails[status]:
            continue
        print(f"\n{status} ({len(fails[status])}):")
        if args.verbose:
            for cid, detail in fails[status]:
                print(f"  {cid}: {detail[:400]}")
        else:
            print("  " + " ".join(cid for cid, _ in fails[status]))

    if args.json:
        with open(args.json, "w") as f:
            json.dump([{"id": c.id, "device": dev, "status": s, "detail": d, "outcome": o}
                       for c, dev, s, d, o in rows], f, indent=1)


if __name__ == "__main__":
    main()
