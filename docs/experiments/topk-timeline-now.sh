#!/usr/bin/env bash
# Session 33 (H100 or H200): the in-step top-k timeline of the tree (topk-timeline.patch, first run since its
# session-32 rebase): the phases of a top-k CTA after rows 51-52 and how many radix passes its rows take.
#   bash docs/experiments/topk-timeline-now.sh   (device tool, carry .deps; $OUT/all.tgz + summary.log)
cd "$(dirname "$0")/../.."
source docs/experiments/lease-lib.sh  # pack el variant
VARIANT_JOBS=16 variant T "-DIXO_TOPK_TIMELINE" topk-timeline.patch bench_gpu_index_step; pack
export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu
for i in 1 2; do
  mkdir -p $R/tl$i && (cd $R/tl$i && /tmp/T/bench/gpu/bench_gpu_index_step --quick --reps 5 > bench.log 2>&1
    echo "top-k timeline T$i rc=$? ($(el))" >> $s
    /usr/bin/env python3 $OLDPWD/$X/topk_timeline_summary.py . > summary.txt 2>&1; cat summary.txt >> $s); pack
done
