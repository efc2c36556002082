"""Summary of the per-CTA timelines docs/experiments/cta-timeline.patch writes (session 17).

The patch (apply to a copy of the tree, build bench_gpu_index_step with -DIXO_CTA_TIMELINE in
both CMAKE_CUDA_FLAGS and CMAKE_CXX_FLAGS) stamps, per CTA of the native score kernel,
%globaltimer at its start, after its plan and q fragments (warp 0), after its first K sub-tile
arrived (warp 0) and at each warp's end, with %smid; the bench writes cta-timeline-<shape>-<fmt>.csv
after each shape (the last launch there: the sanity check's packed step). Usage on the GPU machine:

    /usr/bin/env python3 docs/experiments/cta_timeline_summary.py cta-timeline-*.csv

Prints per file: CTA durations, start -> plan and start -> first K (percentiles), the end -> next
start gap on an SM, and the number of CTAs starting / streaming in each 2 us bin (lockstep waves
show as bins of ~264 CTAs starting at once).
"""
import sys, numpy as np
for f in sys.argv[1:]:
    a = np.loadtxt(f, delimiter=",", dtype=np.float64)
    a = a[a[:, 2] > 0]
    # keep only CTAs of the last launch: it starts after every earlier CTA ended (stream order)
    a = a[np.argsort(a[:, 2])]
    ends = a[:, 5:9].max(axis=1)
    pm = np.maximum.accumulate(ends)
    cut = [k for k in range(1, len(a)) if a[k, 2] > pm[k - 1]]
    if cut: a = a[cut[-1]:]
    sm, st, plan, fk = a[:, 1], a[:, 2], a[:, 3], a[:, 4]
    end = a[:, 5:9].max(axis=1)
    t0 = st.min(); span = end.max() - t0
    dur = end - st
    ok = fk > st
    print(f"== {f}: {len(a)} CTAs, {len(np.unique(sm))} SMs, span {span/1e3:.1f} us")
    q = lambda x: "p10 %.2f p50 %.2f p90 %.2f max %.2f" % tuple(np.percentile(x, [10, 50, 90, 100]) / 1e3)
    print("  CTA duration us:", q(dur))
    print("  start->plan+q us:", q(plan[ok] - st[ok]))
    print("  start->first K us:", q(fk[ok] - st[ok]))
    print("  last warp end - first warp end us:", q(a[:, 5:9].max(1) - a[:, 5:9].min(1)))
    # per SM: gap between a CTA's end and the next start of a CTA on the same SM (slot reuse)
    gaps = []
    for s in np.unique(sm):
        idx = np.where(sm == s)[0]
        ss = np.sort(st[idx]); ee = np.sort(end[idx])
        # slot reuse: the k-th start after the first CTAs-per-SM starts follows the (k-c)-th end
        c = int(np.sum(ss < ss.min() + 2000))  # CTAs that started in the first 2 us on this SM
        for k in range(c, len(ss)):
            gaps.append(ss[k] - ee[k - c])
    if gaps:
        print("  end->next start on the SM us:", q(np.array(gaps)))
    first_start = np.sort(st)
    print("  first wave start spread us: %.2f (first 90 %% of the first-wave CTAs)" % ((first_start[int(0.9 * min(len(st), 264)) - 1] - t0) / 1e3))
    # timeline of phases in 2 us bins: CTAs starting (start..firstK), streaming (firstK..end)
    nb = int(span // 2000) + 1
    bins = np.arange(nb) * 2000 + t0
    startup = [np.sum((st <= b + 1000) & (fk > b + 1000)) for b in bins]
    stream = [np.sum((fk <= b + 1000) & (end > b + 1000)) for b in bins]
    print("  per 2 us bin: CTAs starting / streaming")
    print("   ", " ".join(f"{u}/{v}" for u, v in zip(startup, stream)))
    # idle-slot time: fraction of slot-time (264 slots) not streaming
    stream_time = np.sum(end[ok] - fk[ok]); start_time = np.sum(fk[ok] - st[ok])
    slots = 2 * len(np.unique(sm)) if "bf16" in f else 3 * len(np.unique(sm))
    print(f"  slot-time: streaming {stream_time/1e3/slots:.1f} us, starting {start_time/1e3/slots:.1f} us, of span {span/1e3:.1f} us ({slots} slots)")
