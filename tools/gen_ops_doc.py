"""Writes docs/ops.md, the list of supported ops, from framework/ops.yaml.

    python tools/gen_ops_doc.py            # rewrite docs/ops.md
    python tools/gen_ops_doc.py --check    # exit 1 if docs/ops.md is out of date

Ops are grouped by the family sections of ops.yaml (``# === name ===`` markers), in the
table's order. tests/test_readme.py fails when docs/ops.md is stale.
"""
import argparse
import os
import re
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPS_YAML = os.path.join(ROOT, "framework", "ops.yaml")
OPS_MD = os.path.join(ROOT, "docs", "ops.md")


def rows_by_family(text):
    """[(family, [row, ...]), ...] in the order of the file."""
    rows = yaml.safe_load(text)
    families, family, i = [], "other", 0
    counts = {}
    for line in text.splitlines():
        m = re.match(r"#\s*===\s*(end\s+)?([\w ]+?)\s*===", line)
        if m:
            family = "other" if m.group(1) else m.group(2)
        elif line.startswith("- func:"):
            counts.setdefault(family, []).append(rows[i])
            if family not in [f for f, _ in families]:
                families.append((family, counts[family]))
            i += 1
    assert i == len(rows), f"read {i} rows by text, {len(rows)} by YAML"
    return families


def describe(row):
    """(qualified name, signature after the name, ways to call it, gradient)."""
    func = row["func"]
    name, rest = func.split("(", 1)
    variants = row.get("variants", [])
    calls = []
    if "function" in variants:
        calls.append(f"`framework.{name}`")
    if "method" in variants:
        calls.append(f"`Tensor.{name}`")
    if "inplace" in variants:
        calls.append(f"`Tensor.{name}_`")
    d = row.get("derivatives")
    if d is None:
        grad = "no"
    elif d == "composite":
        grad = "composite"
    elif d == "not_differentiable" or d == {}:
        grad = "no"
    else:
        grad = ", ".join(sorted(d)) if isinstance(d, dict) else str(d)
    return name, "(" + rest, ", ".join(calls), grad


def render(text):
    families = rows_by_family(text)
    public = sum(1 for _, rows in families for r in rows
                 if not r["func"].split("(")[0].split(".")[-1].startswith("_"))
    total = sum(len(rows) for _, rows in families)
    out = ["# Supported ops", "",
           "Generated from `framework/ops.yaml` by `python tools/gen_ops_doc.py`; do not edit "
           "by hand (tests/test_readme.py fails when this file is stale).", "",
           f"{public} public ops ({total} rows with the internal ones), each on `cpu` and "
           "`cuda`. *Gradient* names the inputs with a derivative formula in the table, "
           "*composite* means the op is built from other ops and autograd differentiates "
           "those, *no* means not differentiable. Layers, losses and optimizers built on these "
           "ops (`framework.nn`, `framework.optim`) are not listed here.", ""]
    internal = []
    for family, rows in families:
        table = []
        for row in rows:
            name, sig, calls, grad = describe(row)
            if name.split(".")[-1].startswith("_"):
                internal.append((family, name))
                continue
            sig = sig.replace("|", "\\|")
            table.append(f"| `{name}` | `{sig}` | {calls} | {grad} |")
        if table:
            out += [f"## {family}", "", "| op | signature | call as | gradient |",
                    "|---|---|---|---|"] + table + [""]
    out += ["## Internal ops", "",
            "Rows that the public functions and fused layers call (forward and backward "
            "kernels of fused ops, helpers of composites):", "",
            ", ".join(f"`{n}`" for _, n in internal), ""]
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if docs/ops.md is stale")
    args = ap.parse_args(argv)
    with open(OPS_YAML) as f:
        text = render(f.read())
    if args.check:
        try:
            with open(OPS_MD) as f:
                current = f.read()
        except FileNotFoundError:
            current = None
        if current != text:
            print(f"{os.path.relpath(OPS_MD, ROOT)} is stale: run python tools/gen_ops_doc.py")
            return 1
        print(f"{os.path.relpath(OPS_MD, ROOT)} is up to date")
        return 0
    os.makedirs(os.path.dirname(OPS_MD), exist_ok=True)
    with open(OPS_MD, "w") as f:
        f.write(text)
    print(f"wrote {os.path.relpath(OPS_MD, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
