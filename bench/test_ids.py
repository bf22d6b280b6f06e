"""The test ids of a TEST_LIST file (bench/gpu_check.sh) in a form the current code and the
running pytest accept.

pytest refuses a whole run that names one id it does not select, and ids go stale (a case
named by position, ``msg4``, or by a value can be named otherwise after a change). pytest
9.1.1 (the GPU machines' in November 2026) also fails to select an id holding ``<lambda>``
that it collects (9.2 does). So a listed id that is not collected, or that holds ``<``, is
replaced by its test function (``file::name``, every case; ``-k`` still filters them).
Prints the ids one per line; reports each replacement on stderr.

    python bench/test_ids.py ids.txt > current.txt
"""
import subprocess
import sys


def collected(files):
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                          "-p", "no:cacheprovider", *files],
                         capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if "::" in line]


def current(wanted):
    have = collected(sorted({i.split("::")[0] for i in wanted}))
    known = set(have)
    functions = {h.split("[")[0] for h in have}
    out = []
    for i in wanted:
        if i in known and "<" not in i:
            got = i
        else:
            got = i.split("[")[0]
            if got not in functions:
                print(f"test_ids: {i}: no such test now, left out", file=sys.stderr)
                continue
            print(f"test_ids: {i}: as {got}", file=sys.stderr)
        if got not in out:
            out.append(got)
    return out


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        wanted = [line.strip() for line in f if line.strip()]
    print("\n".join(current(wanted)))
