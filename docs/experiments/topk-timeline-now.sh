#!/usr/bin/env bash
# Session 33 (H100 or H200): the in-step top-k timeline of the tree (topk-timeline.patch, first run since its
# session-32 rebase): the phases of a top-k CTA after rows 51-52 and how many radix passes its rows take.
#   bash docs/experiments/topk-timeline-now.sh   (device tool, carry .deps; $OUT/all.tgz + summary.log)
cd "$(dirname "$0")/../.."
source docs/experiments/lease-lib.sh  # pack el variant timeline
VARIANT_JOBS=16 variant T "-DIXO_TOPK_TIMELINE" topk-timeline.patch bench_gpu_index_step; pack
export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu
timeline T 1; timeline T 2
