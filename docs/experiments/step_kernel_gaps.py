#!/usr/bin/env python3
"""The two kernels of each index step inside the CUDA graphs, from nsys's GPU trace (session 26).

Input: the CSV of `nsys stats --report cuda_gpu_trace --format csv` (columns "Start (ns)",
"Duration (ns)", "Name"; one GPU stream). A step is a score kernel followed by a top-k kernel that
starts within 50 us of its end; a top-k with no score kernel before it is a "top-k alone" launch.
Steps are grouped by the score kernel's name and its duration rounded to 10 % (one bench case
each); per group the medians of: score duration, the gap score end -> top-k start, the top-k
duration and the step (score start -> top-k end).

    /usr/bin/python3 step_kernel_gaps.py A_cuda_gpu_trace.csv [V2_cuda_gpu_trace.csv ...]
"""
import csv
import math
import statistics
import sys


def kernels(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        return []
    cols = rows[0].keys()
    start = next(c for c in cols if c.startswith("Start"))
    dur = next(c for c in cols if c.startswith("Duration"))
    name = next(c for c in cols if c == "Name")
    out = []
    for r in rows:
        n = r[name]
        kind = "topk" if "topk_kernel" in n else "score" if "score" in n else None
        if kind is None:
            continue
        s, d = float(r[start]) / 1e3, float(r[dur]) / 1e3  # us
        out.append((s, s + d, kind, n))
    out.sort()
    return out


def short(name):
    """'void ixo::gpu::detail::score_mma_kernel<(int)0, (bool)1>(ixo::...)' -> 'score_mma_kernel<0, 1>'."""
    head = name.split(">(")[0] if ">(" in name else name.split("(")[0]
    base, _, targs = head.partition("<")
    base = base.split("::")[-1]
    args = [a.split(")")[-1].strip() for a in targs.split(",")] if targs else []
    return base + (f"<{', '.join(args)}>" if args else "")


def summarize(path):
    ks = kernels(path)
    groups, alone = {}, []
    for i, (s, e, kind, n) in enumerate(ks):
        if kind != "topk":
            continue
        prev = ks[i - 1] if i > 0 else None
        if prev and prev[2] == "score" and 0 <= s - prev[1] < 50:
            d = prev[1] - prev[0]
            key = (short(prev[3]), round(math.log(d) / math.log(1.1)))
            groups.setdefault(key, []).append((d, s - prev[1], e - s, e - prev[0]))
        else:
            alone.append(e - s)
    lines = [f"{path}: {len(ks)} kernels, {sum(len(v) for v in groups.values())} steps, {len(alone)} top-k alone"]
    med = lambda xs: statistics.median(xs)
    for (nm, _), v in sorted(groups.items(), key=lambda kv: med([x[0] for x in kv[1]])):
        if len(v) < 5:
            continue
        lines.append(f"  {nm} x{len(v)}: score {med([x[0] for x in v]):.1f}, gap {med([x[1] for x in v]):.2f}, "
                     f"top-k {med([x[2] for x in v]):.2f}, step {med([x[3] for x in v]):.1f} us")
    if alone:
        lines.append(f"  top-k alone: {med(alone):.2f} us (p10 {sorted(alone)[len(alone) // 10]:.2f})")
    return lines


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for p in sys.argv[1:]:
        print("\n".join(summarize(p)))
