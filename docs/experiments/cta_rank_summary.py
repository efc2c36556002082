"""The ends of a one-wave launch's CTAs by their dispatch rank on their SM (session 35, experiment row 57).

Reads the per-CTA timelines docs/experiments/cta-timeline.patch writes (columns: CTA, SM, start, plan + q,
first K, the 4 warps' ends; %globaltimer ns) and prints, per file, each rank's CTAs (rank 0: the SM's lowest
blockIdx, dispatched first), their end p50 / p90 / max after the launch's first start, and the span. Session 17's
H200 e4m3fn 16 x 131072 launch (docs/experiments/data/s17-tl-e4m3fn-24chunks.csv): ranks 0 / 1 / 2 ended at a
p50 of 73.5 / 75.6 / 78.3 us on every SM; bf16 (2 an SM) showed no order. Usage:

    /usr/bin/python3 docs/experiments/cta_rank_summary.py cta-timeline-*.csv
"""
import collections
import sys

import numpy as np


def last_launch(a):
    """The rows of the file's last launch: it starts after every earlier CTA ended (stream order)."""
    a = a[a[:, 2] > 0]
    a = a[np.argsort(a[:, 2])]
    pm = np.maximum.accumulate(a[:, 5:9].max(axis=1))
    cut = [k for k in range(1, len(a)) if a[k, 2] > pm[k - 1]]
    return a[cut[-1]:] if cut else a


def rank_ends(a):
    """{rank: [end us]} with ends after the launch's first start; rank = order of blockIdx on the SM."""
    t0 = a[:, 2].min()
    by_sm = collections.defaultdict(list)
    for row in a:
        by_sm[int(row[1])].append((int(row[0]), (row[5:9].max() - t0) / 1e3))
    out = collections.defaultdict(list)
    for ctas in by_sm.values():
        for rank, (_, end) in enumerate(sorted(ctas)):
            out[rank].append(end)
    return out


def main(paths):
    for f in paths:
        a = last_launch(np.loadtxt(f, delimiter=",", dtype=np.float64, ndmin=2))
        ends = rank_ends(a)
        span = (a[:, 5:9].max() - a[:, 2].min()) / 1e3
        print(f"== {f}: {len(a)} CTAs, span {span:.1f} us")
        for rank in sorted(ends):
            e = np.array(ends[rank])
            print(f"  rank {rank}: {len(e)} CTAs, end p50 {np.median(e):.1f} p90 {np.percentile(e, 90):.1f} "
                  f"max {e.max():.1f} us")


if __name__ == "__main__":
    main(sys.argv[1:])
