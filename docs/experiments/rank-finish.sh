#!/usr/bin/env bash
# Session 33 (row 53): the top-k's ranked finish. Session 33's in-step timeline (H100, topk-timeline-now.sh) put a
# top-k CTA at 4.0 us after 2 radix passes and 4.8-5.1 us after 3 (a pass 0.84-0.9 us); a third of the M3 rows took
# 3, and the top-k's span is its slowest CTA's. radix_select.cuh now stops once <= kRankList (64) keys are at or
# above the k-th key's bin, and rank_compact ranks them whole (two barriers) instead of the remaining passes.
#   A: the tree + rank-finish.patch; F: the tree (f13d2d1's top-k: the early stop and small compaction);
#   T: A + topk-timeline-rank.patch (the in-step top-k CTAs: passes run, phases; +64 marks a ranked finish).
#   (Ran at d150bf0, where the patch's code was in the tree and F was -DIXO_TOPK_RANK_FINISH=0: not adopted,
#   data/s33-rank-finish-h100.log.)
#   Predicted: the 3-pass CTAs 4.8-5.1 -> ~4.2-4.4 us, the top-k's in-step span 5.1 -> ~4.5 us, so the packed step
#   16 x 131072 -0.3..-0.6 us (both K types), top-k alone -0.3..-0.6; the CP candidates level to -0.5; the vote
#   instantiations unchanged (same PTX).
# On an H200: the step bench A F x2 first (issue 27's table), then as below. On an H100: A's GPU tests first.
#   PERF_COMMIT=<sha> bash docs/experiments/rank-finish.sh   (device tool, carry .deps; $OUT/all.tgz + summary.log)
cd "$(dirname "$0")/../.."
VARIANT_JOBS=6; source docs/experiments/lease-lib.sh  # pack el variants step gstep lat cpb timeline a_tests a_san on_h200 pgate
variants "A;;rank-finish.patch;$BENCHES $ATESTS" "F;;none;$BENCHES" \
  "T;-DIXO_TOPK_TIMELINE;rank-finish.patch,topk-timeline-rank.patch;bench_gpu_index_step"
steps() { for r in "$@"; do for v in A F; do step $v$r /tmp/$v; done; done; pack; }
on_h200 && steps 1 2
a_tests /tmp/A topk_early_stop_partial_bin tie_rule_reversed
on_h200 || steps 1 2
timeline T 1
for r in 1 2; do for v in A F; do gstep $v$r /tmp/$v; done; done; pack
for v in A F; do cpb ${v}1 /tmp/$v; done; pack
for v in A F A F; do lat $v /tmp/$v; done
echo "== latency A vs F" >> $s
/usr/bin/env python3 $X/latency_ab.py $R/lat-A1.md,$R/lat-A2.md $R/lat-F1.md,$R/lat-F2.md >> $s 2>&1; pack
a_san /tmp/A 150
pgate /tmp/A ${PERF_COMMIT:-unknown}
