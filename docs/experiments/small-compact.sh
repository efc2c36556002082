#!/usr/bin/env bash
# Session 32's third device call (row 52): the top-k's small compaction. When the threshold's tied keys are all
# selected (eq_total == need: always after row 51's early stop, and after 4 passes unless the k-th score is an exact
# tie) and at most 32 ids are kept, radix_select.cuh's small_compact appends the ids of the keys >= prefix to a
# shared list and ranks them there (one barrier), instead of radix_compact's two passes around a block scan.
#   A: the tree; S: -DIXO_TOPK_SMALL_COMPACT=0 (8af29ee's top-k: the early stop only); N: S and
#   -DIXO_TOPK_EARLY_STOP=0 (the top-k before this session).
#   Predicted (session 21's in-step CTA: compaction 1.34 us at 1025 keys, 2.67 at 4097; row 51 measured about half
#   its prediction): top-k alone -0.5..-1 us at 1025 keys, -1..-2 at 4097; packed step 16 x 131072 -0.5..-1 us;
#   the CP candidates (same compaction, ncand <= 32) -0.3..-0.6; latency suite 32K contexts (radix rows) -0.3..-0.5.
# On an H200 the step bench A S N x2 comes first (issue 27's table), else A's GPU tests and the sanitizer stage
# first; then step / gate protocol A S N, latency A S A S, CP A S, the perf gate of A (REBASELINE=pass).
#   PERF_COMMIT=<sha> bash docs/experiments/small-compact.sh   (device tool, carry .deps; $OUT/all.tgz + summary.log)
cd "$(dirname "$0")/../.."
VARIANT_JOBS=6; source docs/experiments/lease-lib.sh  # pack el variant step gstep lat cpb gt a_tests a_san on_h200 pgate
variants "A;;none;$BENCHES $ATESTS" "S;-DIXO_TOPK_SMALL_COMPACT=0;none;$BENCHES" \
  "N;-DIXO_TOPK_SMALL_COMPACT=0 -DIXO_TOPK_EARLY_STOP=0;none;bench_gpu_index_step"
steps() { for r in "$@"; do for v in A S N; do step $v$r /tmp/$v; done; done; pack; }
on_h200 && steps 1 2
a_tests /tmp/A topk_early_stop_partial_bin tie_rule_reversed
a_san /tmp/A 170
on_h200 || steps 1 2
for r in 1 2; do for v in A S N; do gstep $v$r /tmp/$v; done; done; pack
for v in A S A S; do lat $v /tmp/$v; done
echo "== latency A vs S" >> $s
/usr/bin/env python3 $X/latency_ab.py $R/lat-A1.md,$R/lat-A2.md $R/lat-S1.md,$R/lat-S2.md >> $s 2>&1; pack
for v in A S; do cpb ${v}1 /tmp/$v; done; pack
pgate /tmp/A ${PERF_COMMIT:-unknown}
on_h200 && steps 3
