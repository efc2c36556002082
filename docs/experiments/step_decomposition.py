#!/usr/bin/env python3
"""Splits a replayed packed step into the score kernel, the gap, the top-k and the rest (session 26).

Input: a timeline directory of topk-ballot-timeline.patch's bench run (score-tl-<case>.csv:
cta, start, end of the score CTAs, ends kept by atomicMax over the launches; topk-tl-<case>.csv, read
by topk_phase_summary.last_launch_rows) and its st.log (the bench's "packed X us (score Y, topk Z)"
lines). Only the score CTAs that started within 100 us of the last start are the last replay's.
The rest = the graph-replayed step (events around the graph) minus score start -> top-k end: the
launch and completion overhead the kernels' own stamps do not see.

    /usr/bin/python3 step_decomposition.py /tmp/R/tl-TV2
    /usr/bin/python3 step_decomposition.py /tmp/R/tl-TA-1 /tmp/R/tl-TA-2 ... /tmp/R/tl-TV-1 ...
      (several runs: each run's lines, then the medians per variant = the name before the last '-')
"""
import csv
import os
import re
import statistics
import sys

from topk_phase_summary import last_launch_rows  # same folder: the last launch's top-k CTAs

CASES = {"16x131072-bf16": "16 req x 131072 bf16", "16x131072-fp8": "16 req x 131072 e4m3fn",
         "32x524288-bf16": "32 req x 524288 bf16", "32x524288-fp8": "32 req x 524288 e4m3fn",
         "16x131072p-bf16": "16 req x 131072, permuted token slots bf16"}


def rows(path):
    with open(path, newline="") as f:
        return [[int(x) for x in r] for r in csv.reader(f) if r]


def bench_lines(d):
    out = {}
    p = os.path.join(d, "st.log")
    if os.path.exists(p):
        for line in open(p):
            m = re.match(r"(.*): rows .* packed ([\d.]+) us \(score ([\d.]+), topk ([\d.]+)\)", line)
            if m:
                out[m.group(1)] = tuple(float(m.group(i)) for i in (2, 3, 4))
    return out


def decompose(d, parts=None):
    """Lines for one run's directory; parts (if given) collects {case: [(score, gap, topk, kernels, rest)]}."""
    bench, lines = bench_lines(d), []
    for tag, name in CASES.items():
        sp, tp = os.path.join(d, f"score-tl-{tag}.csv"), os.path.join(d, f"topk-tl-{tag}.csv")
        if not (os.path.exists(sp) and os.path.exists(tp)):
            continue
        sc = [r for r in rows(sp) if r[1] > 0 and r[2] >= r[1]]
        last = max(r[1] for r in sc)
        sc = [r for r in sc if last - r[1] < 100_000]
        tk = last_launch_rows(tp)
        if not sc or not tk:
            continue
        s0, se = min(r[1] for r in sc), max(r[2] for r in sc)
        t0, te = min(r[0] for r in tk), max(r[6] for r in tk)
        kern = (te - s0) / 1e3
        line = (f"{tag}: score {(se - s0) / 1e3:.1f} us ({len(sc)} CTAs), gap {(t0 - se) / 1e3:.2f}, "
                f"top-k {(te - t0) / 1e3:.2f}, kernels {kern:.1f}")
        rest = float("nan")
        if name in bench:
            packed, score, topk = bench[name]
            rest = packed - kern
            line += f"; bench packed {packed:.1f} (rest {rest:.1f}), score alone {score:.1f}, top-k alone {topk:.1f}"
        lines.append(line)
        if parts is not None:
            parts.setdefault(tag, []).append(((se - s0) / 1e3, (t0 - se) / 1e3, (te - t0) / 1e3, kern, rest))
    return lines


def medians(dirs):
    """Per variant (a directory's name before its last '-') and case: the medians over its runs."""
    by_variant = {}
    for d in dirs:
        variant = os.path.basename(os.path.normpath(d)).rsplit("-", 1)[0]
        decompose(d, by_variant.setdefault(variant, {}))
    lines = []
    for variant, cases in sorted(by_variant.items()):
        for tag, runs in sorted(cases.items()):
            m = [statistics.median(x[i] for x in runs) for i in range(5)]
            lines.append(f"{variant} {tag} ({len(runs)} runs, medians): score {m[0]:.1f}, gap {m[1]:.2f}, "
                         f"top-k {m[2]:.2f}, kernels {m[3]:.1f}, rest {m[4]:.1f} us")
    return lines


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for d in sys.argv[1:]:
        print(d)
        print("\n".join("  " + x for x in decompose(d)))
    if len(sys.argv) > 2:
        print("\n".join(medians(sys.argv[1:])))
