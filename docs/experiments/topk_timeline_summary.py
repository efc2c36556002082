#!/usr/bin/env python3
"""Summary of topk-timeline.patch's stamps (bench_gpu_index_step built with -DIXO_TOPK_TIMELINE):
for each shape, the last replayed packed step's score CTAs and top-k CTAs, in microseconds.

    python3 topk_timeline_summary.py DIR     (DIR holds topk-tl-*.csv and score-tl-*.csv)

Rows: CTA, start, plan, keys, select, end, smid [, the select's last pass shift: session 32's patch].
"""
import glob
import os
import statistics
import sys


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * (len(xs) - 1) + 0.5))]


def passes_label(v):
    """The select's last pass field: 255 not the radix path; shift 24 / 16 / 8 / 0 = 1-4 passes; + 64 (session
    33's patch) the ranked finish after them."""
    if v == 255:
        return "none"
    return str(4 - (v & 63) // 8) + ("+rank" if v & 64 else "")


def main(d):
    for tk_path in sorted(glob.glob(os.path.join(d, "topk-tl-*.csv"))):
        tag = os.path.basename(tk_path)[len("topk-tl-"):-4]
        tk = [list(map(int, l.split(","))) for l in open(tk_path)]
        tk = [r for r in tk if r[1] > 0 and r[5] >= r[1]]
        last = max(r[1] for r in tk)
        tk = [r for r in tk if r[1] > last - 1_000_000]  # the last launch's CTAs (1 ms window)
        t0 = min(r[1] for r in tk)
        sc = [list(map(int, l.split(","))) for l in open(os.path.join(d, "score-tl-" + tag + ".csv"))]
        sc = sorted((r for r in sc if r[1] <= t0 and r[2] > r[1]), key=lambda r: r[1])
        # The last launch's CTAs: the latest run of starts without a 200 us gap (CTAs of this grid
        # that the last launch did not have keep an earlier launch's stamps, milliseconds before).
        i = len(sc) - 1
        while i > 0 and sc[i][1] - sc[i - 1][1] < 200_000:
            i -= 1
        sc = sc[i:]
        s0 = min(r[1] for r in sc)
        s_end = max(r[2] for r in sc)
        ends = [(r[2] - s0) / 1e3 for r in sc]
        us = lambda a, b: statistics.median((r[b] - r[a]) / 1e3 for r in tk)
        print(f"{tag}: score {len(sc)} CTAs, span {(s_end - s0) / 1e3:.1f} us, CTA ends p10 {pct(ends, 0.1):.1f} "
              f"p50 {pct(ends, 0.5):.1f} max {max(ends):.1f}; top-k {len(tk)} CTAs: first start "
              f"{(t0 - s_end) / 1e3:+.2f} us after the last score CTA, starts spread "
              f"{(last - t0) / 1e3:.2f} us, p50 start->plan {us(1, 2):.2f} plan->keys {us(2, 3):.2f} "
              f"keys->select {us(3, 4):.2f} select->end {us(4, 5):.2f} us, CTA p50 {us(1, 5):.2f} us, "
              f"span {(max(r[5] for r in tk) - t0) / 1e3:.2f} us; step {(max(r[5] for r in tk) - s0) / 1e3:.1f} us")
        if all(len(r) > 7 for r in tk):  # session 32's patch: the select's last pass (shift 24 / 16 / 8 / 0, 255: none)
            passes = {}
            for r in tk:
                passes[passes_label(r[7])] = passes.get(passes_label(r[7]), 0) + 1
            slowest = max(tk, key=lambda r: r[5] - r[1])
            print(f"  radix passes per CTA: {dict(sorted(passes.items()))}; the slowest CTA "
                  f"({(slowest[5] - slowest[1]) / 1e3:.2f} us) ran {passes_label(slowest[7])}")
            for label in sorted(passes):
                m = [r for r in tk if passes_label(r[7]) == label]
                ph = lambda a, b: statistics.median((r[b] - r[a]) / 1e3 for r in m)
                print(f"    {label}: {len(m)} CTAs, CTA p50 {ph(1, 5):.2f} max "
                      f"{max((r[5] - r[1]) / 1e3 for r in m):.2f} us, select {ph(3, 4):.2f}, end {ph(4, 5):.2f}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
