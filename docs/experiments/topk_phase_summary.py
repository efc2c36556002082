#!/usr/bin/env python3
"""Phases of the top-k CTAs of the last replayed packed step, from topk-ballot-timeline.patch's
stamps (bench_gpu_index_step built with -DIXO_TOPK_TIMELINE): per shape, medians (p90) in us of
plan, keys, [votes: bound, gather, rank] or [radix: select], the end, and the CTA's whole time.

    python3 topk_phase_summary.py DIR...    (each DIR holds topk-tl-*.csv)
"""
import glob
import os
import statistics
import sys

from topk_timeline_summary import pct  # same folder: the percentile of the earlier timeline summary


def last_launch_rows(path):
    """The stamps (start, plan, keys, ..., end at [6], ..., L at [8]) of the last launch's top-k CTAs in a
    topk-tl-*.csv: the buffer keeps earlier launches' CTAs (other shapes' grids) beside them."""
    rows = [list(map(int, l.split(",")))[1:] for l in open(path) if l.strip()]
    rows = [r for r in rows if r[0] > 0 and r[6] >= r[0]]
    if not rows:
        return []
    last = max(r[0] for r in rows)
    return [r for r in rows if r[0] > last - 1_000_000]


def show(d):
    for path in sorted(glob.glob(os.path.join(d, "topk-tl-*.csv"))):
        tag = os.path.basename(path)[len("topk-tl-"):-4]
        rows = last_launch_rows(path)
        if not rows:
            print(f"{d} {tag}: no stamps")
            continue
        # A stamp counts only when it is this launch's (at or after the CTA's start): rows taking the other
        # path keep an earlier launch's stamps in those columns.
        v = lambda r: r[3] >= r[0] and r[5] >= r[3]
        x = lambda r: not v(r) and r[5] >= r[2] >= r[0]
        votes = sum(1 for r in rows if v(r))

        def ph(a, b, sel):
            xs = [(r[b] - r[a]) / 1e3 for r in rows if sel(r)]
            return f"{statistics.median(xs):.2f} ({pct(xs, 0.9):.2f})" if xs else "-"

        span = (max(r[6] for r in rows) - min(r[0] for r in rows)) / 1e3
        line = (f"{d} {tag}: {len(rows)} CTAs ({votes} by votes), launch span {span:.2f} us; plan {ph(0, 1, bool)}, "
                f"keys {ph(1, 2, bool)}")
        if votes:
            ls = [r[8] for r in rows if v(r)]
            line += (f"; votes: bound {ph(2, 3, v)}, gather {ph(3, 4, v)}, rank {ph(4, 5, v)}, emit {ph(5, 6, v)}, "
                     f"L median {statistics.median(ls):.0f} max {max(ls)}")
        if any(x(r) for r in rows):
            line += f"; radix: select {ph(2, 5, x)}, compact {ph(5, 6, x)}"
        line += f"; CTA {ph(0, 6, bool)}"
        print(line)


if __name__ == "__main__":
    for d in sys.argv[1:] or ["."]:
        show(d)
