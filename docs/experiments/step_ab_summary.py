#!/usr/bin/env python3
"""Side-by-side table of an A/B lease's step-bench runs (next-lease-topk.sh's summary.log).

Each `step <run> rc=...` line is followed by bench_gpu_index_step's stderr lines
`<shape> <kdt>: rows R us, packed P us (score S, topk T)`; runs are named variant + repeat
(A1, B1, BP2, B31 = B3 run 1; one digit of repeat). Prints, per shape and K type, each variant's packed step / score / top-k as
min..max over its repeats, and the packed step's change against variant A (mean of repeats).

    /usr/bin/python3 docs/experiments/step_ab_summary.py summary.log
    | shape | K | A packed | B packed | ... |
"""
import re
import sys
from collections import defaultdict

STEP = re.compile(r"^step (\S+?)(\d?) rc=")  # variant + one repeat digit (B3 + 1 = B31)
ROW = re.compile(r"^\s*(.+?) (\S+): rows ([\d.]+) us, packed ([\d.]+) us \(score ([\d.]+), topk ([\d.]+)\)")


def parse(lines):
    """{(shape, kdt): {variant: [(packed, score, topk), ...]}} and the variants in first-seen order."""
    table, order, variant = defaultdict(lambda: defaultdict(list)), [], None
    for line in lines:
        m = STEP.match(line)
        if m:
            variant = m.group(1)
            if variant not in order:
                order.append(variant)
            continue
        if " rc=" in line:  # another stage's verdict line (gate X1, latency X1, build ...): its rows are not a step run's
            variant = None
            continue
        m = ROW.match(line)
        if m and variant:
            table[(m.group(1), m.group(2))][variant].append(tuple(float(m.group(i)) for i in (4, 5, 6)))
    return table, order


def span(values):
    lo, hi = min(values), max(values)
    return f"{lo:.1f}" if lo == hi else f"{lo:.1f}..{hi:.1f}"


def render(table, order):
    head = "| shape | K | " + " | ".join(f"{v} packed / score / top-k" for v in order) + " | vs A (packed) |"
    out = [head, "|" + "---|" * (len(order) + 3)]
    for (shape, kdt), runs in table.items():
        cells, base = [], None
        if runs.get("A"):
            base = sum(r[0] for r in runs["A"]) / len(runs["A"])
        for v in order:
            rs = runs.get(v, [])
            cells.append(" / ".join(span([r[i] for r in rs]) for i in range(3)) if rs else "-")
        deltas = []
        for v in order:
            rs = runs.get(v, [])
            if v != "A" and rs and base:
                mean = sum(r[0] for r in rs) / len(rs)
                deltas.append(f"{v} {mean - base:+.1f} us ({100 * (mean / base - 1):+.1f} %)")
        out.append(f"| {shape} | {kdt} | " + " | ".join(cells) + " | " + ", ".join(deltas) + " |")
    return "\n".join(out)


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        print("usage: step_ab_summary.py summary.log", file=sys.stderr)
        return 2
    try:
        with open(argv[1], encoding="utf-8") as f:
            table, order = parse(f)
    except OSError as e:
        print(f"step_ab_summary.py: {argv[1]}: {e.strerror}", file=sys.stderr)
        return 2
    if not table:
        print(f"step_ab_summary.py: {argv[1]}: no step bench rows", file=sys.stderr)
        return 1
    print(render(table, order))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
