#!/usr/bin/env python3
"""Two variants' bench_gpu_latency tables side by side: the best (lowest) of each variant's runs a case, per-row
and packed, the ratio B / A a case and the geomean of each column, overall and by context.

    latency_ab.py A1.md,A2.md B1.md,B2.md     (comma lists of one variant's runs)

Example (session 27, fused-topk.sh's tables):
    >>> rows = load(["data/s27-fused-latency/lat-A1.md"])       # doctest: +SKIP
    >>> rows[("1", "1K", "1", "bf16")]                           # doctest: +SKIP
    (2.9, 4.9)
"""
import math
import sys


def load(paths):
    """{(batch, context, H, K): (per-row us, packed us)}, the lowest over the runs."""
    out = {}
    for path in paths:
        for line in open(path, encoding="utf-8"):
            if not line.startswith("| ") or "batch" in line or "---" in line:
                continue
            c = [x.strip() for x in line.strip().strip("|").split("|")]
            key = (c[0], c[1].split(" ")[0], c[2], c[3])
            v = (float(c[4]), float(c[5]))
            out[key] = tuple(min(a, b) for a, b in zip(out[key], v)) if key in out else v
    return out


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    a, b = load(argv[1].split(",")), load(argv[2].split(","))
    keys = [k for k in a if k in b]
    print("| batch | context | H | K | per-row A | per-row B | B/A | packed A | packed B | B/A |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for k in keys:
        (ra, pa), (rb, pb) = a[k], b[k]
        print(f"| {' | '.join(k)} | {ra:.1f} | {rb:.1f} | {rb / ra:.3f} | {pa:.1f} | {pb:.1f} | {pb / pa:.3f} |")
    for ctx in [None] + sorted({k[1] for k in keys}, key=lambda c: int(c.rstrip("K"))):
        ks = [k for k in keys if ctx is None or k[1] == ctx]
        rows = geomean([b[k][0] / a[k][0] for k in ks])
        packed = geomean([b[k][1] / a[k][1] for k in ks])
        print(f"geomean B/A {ctx or 'all'} ({len(ks)} cases): per-row {rows:.3f}, packed {packed:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
