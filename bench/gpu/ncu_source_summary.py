#!/usr/bin/python3
"""Where a kernel's warps stall, per SASS instruction, from an Nsight Compute source page.

    ncu -i report.ncu-rep --page source --csv --print-source sass > sass.csv
    /usr/bin/python3 bench/gpu/ncu_source_summary.py sass.csv [--top 25]

Prints the total of the warp-stall samples, the instructions that hold most of them (address,
SASS, share, and the per-reason columns when the export has them: names starting `stall_`),
the samples summed per opcode, and, when the page has the `Instructions Executed` column (warp-level
executions of each instruction), the executions summed per opcode: which instructions a trim would remove.
Example:

    >>> rows = load_source_csv("sass.csv")
    >>> s = summarize(rows, top=3)
    >>> s["total"], s["top"][0]["source"], round(s["top"][0]["share"], 2)
    (10000, 'DEPBAR.LE SB0, 0x2', 0.41)
    >>> s["by_opcode"][0]
    ('DEPBAR.LE', 4100)
    >>> e = executed_by_opcode(rows)
    >>> e["total"], e["by_opcode"][0]
    (5200, ('IADD3', 2128))
"""
import argparse
import csv

SAMPLE_COLUMNS = ("Warp Stall Sampling (All Samples)", "Warp Stall Sampling (All Cycles)", "# Samples")
EXECUTED_COLUMNS = ("Instructions Executed", "Warp Instructions Executed")


def _num(text):
    text = (text or "").replace(",", "").strip()
    try:
        return float(text)
    except ValueError:
        return 0.0


def load_source_csv(path):
    """Rows of the source page as dicts (the header is the first row naming a `Source` column;
    lines before it, such as the kernel name, are skipped)."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    for i, row in enumerate(rows):
        if "Source" in row:
            head = row
            return [dict(zip(head, r)) for r in rows[i + 1:] if len(r) == len(head)]
    raise ValueError(f"{path}: no header row with a 'Source' column (not an ncu --page source --csv export)")


def opcode(source):
    """The opcode of one SASS line: its first word, a predicate (`@P0`, `@!PT`) dropped."""
    words = source.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0] if words else "?"


def sum_by_opcode(rows, col):
    """Column `col` summed per opcode, as (opcode, sum) pairs, largest first."""
    by_op = {}
    for r in rows:
        op = opcode(r["Source"])
        by_op[op] = by_op.get(op, 0) + int(_num(r[col]))
    return sorted(by_op.items(), key=lambda kv: -kv[1])


def executed_by_opcode(rows):
    """Warp-level executions summed per opcode (largest first) and their total, from the page's
    `Instructions Executed` column; None when the export has no such column."""
    col = next((c for c in EXECUTED_COLUMNS if rows and c in rows[0]), None)
    if col is None:
        return None
    by_op = sum_by_opcode(rows, col)
    return {"column": col, "total": sum(n for _, n in by_op), "by_opcode": by_op}


def summarize(rows, top=25):
    """total samples, the `top` instructions by samples (with their share and stall columns),
    and the samples per opcode (first word of the SASS, predicate dropped), largest first."""
    if not rows:
        raise ValueError("no instruction rows")
    col = next((c for c in SAMPLE_COLUMNS if c in rows[0]), None)
    if col is None:
        raise ValueError(f"no sampling column: expected one of {SAMPLE_COLUMNS}, got {sorted(rows[0])}")
    reasons = [c for c in rows[0] if c.startswith("stall_")]
    total = sum(_num(r[col]) for r in rows)
    ranked = sorted(rows, key=lambda r: _num(r[col]), reverse=True)[:top]
    out_top = []
    for r in ranked:
        n = _num(r[col])
        out_top.append({"address": r.get("Address", r.get("#", "")), "source": r["Source"].strip(), "samples": int(n),
                        "share": n / total if total else 0.0,
                        "reasons": {c: int(_num(r[c])) for c in reasons if _num(r[c])}})
    return {"column": col, "total": int(total), "top": out_top, "by_opcode": sum_by_opcode(rows, col)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv")
    ap.add_argument("--top", type=int, default=25)
    a = ap.parse_args()
    rows = load_source_csv(a.csv)
    s = summarize(rows, a.top)
    print(f"{s['column']}: {s['total']} samples")
    print("| address | SASS | samples | share | reasons |\n|---|---|---|---|---|")
    for t in s["top"]:
        rs = ", ".join(f"{k} {v}" for k, v in sorted(t["reasons"].items(), key=lambda kv: -kv[1]))
        print(f"| {t['address']} | `{t['source']}` | {t['samples']} | {100 * t['share']:.1f} % | {rs} |")
    print("\n| opcode | samples | share |\n|---|---|---|")
    for op, n in s["by_opcode"][:15]:
        print(f"| {op} | {n} | {100 * n / max(s['total'], 1):.1f} % |")
    e = executed_by_opcode(rows)
    if e is None:
        print("\n(no executed-instruction column on this page)")
        return
    print(f"\n{e['column']}: {e['total']} warp instructions\n| opcode | executed | share |\n|---|---|---|")
    for op, n in e["by_opcode"][:a.top]:
        print(f"| {op} | {n} | {100 * n / max(e['total'], 1):.1f} % |")


if __name__ == "__main__":
    main()
