#!/usr/bin/env bash
# Session 33 (row 55): the radix select's lean pass (IXO_TOPK_LEAN_PASS, radix_select.cuh): 3 barriers a pass
# instead of 7 (two alternating histograms, every warp adds the warp totals itself, no barrier at a pass's end).
# Session 33's timeline: a pass 0.84-0.9 us of a top-k CTA's 4.0-4.9; row 53 showed a pass pays for any code in it.
#   A: the tree + lean-pass.patch; F: the tree (f13d2d1's top-k). (Ran at 0657f4c, where the patch's code was in
#   the tree and F was -DIXO_TOPK_LEAN_PASS=0: level, not adopted; data/s33-lean-pass-h100.log.)
#   Predicted: a pass -0.1..-0.2 us, top-k alone -0.2..-0.5 us, packed step 16 x 131072 -0.2..-0.4 us, CP candidates
#   -0.2..-0.5, the latency suite's vote steps level (their radix fallback runs only on wide ties).
# A's GPU tests first (both mutants), then step A F x2, gate protocol A F x2, CP A F, latency A F A F, then
# compute-sanitizer racecheck / synccheck / memcheck on the top-k test (radix rows, vote rows with a wide tie) and
# small CP cases.
#   bash docs/experiments/lean-pass.sh   (device tool, carry .deps; $OUT/all.tgz + summary.log)
cd "$(dirname "$0")/../.."
VARIANT_JOBS=8; source docs/experiments/lease-lib.sh  # pack el variants step gstep lat cpb a_tests
variants "A;;lean-pass.patch;$BENCHES test_gpu test_gpu_graph test_conformance_cuda test_cp_gpu test_cp_gpu_local0" \
  "F;;none;$BENCHES"
a_tests /tmp/A topk_early_stop_partial_bin tie_rule_reversed
for r in 1 2; do for v in A F; do step $v$r /tmp/$v; done; done; pack
for r in 1 2; do for v in A F; do gstep $v$r /tmp/$v; done; done; pack
for v in A F; do cpb ${v}1 /tmp/$v; done; pack
for v in A F A F; do lat $v /tmp/$v; done
echo "== latency A vs F" >> $s
/usr/bin/env python3 $X/latency_ab.py $R/lat-A1.md,$R/lat-A2.md $R/lat-F1.md,$R/lat-F2.md >> $s 2>&1; pack
t='CudaTopk/TopkRadix.IdsMatchTheOracleSelection'
c='Local0/CudaCpLocal0.PackedEqualsRowsAndOracle'
for tool in racecheck synccheck memcheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 7 /tmp/A/tests/gpu/test_gpu --gtest_brief=1 \
    --gtest_filter="$t/nb1024_k16:$t/nb4097_k16:$t/nb9000_k16:$t/nb2048_k100:$t/nb128_k64:$t/nb40_k7" > $R/san-$tool-topk.log 2>&1
  echo "$tool top-k rc=$? $(grep -E 'SUMMARY' $R/san-$tool-topk.log | head -1) ($(el))" >> $s
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 7 /tmp/A/tests/cp/test_cp_gpu_local0 --gtest_brief=1 \
    --gtest_filter="$c/w2_p4_max:$c/w4_p2_lse" > $R/san-$tool-cp.log 2>&1
  echo "$tool CP rc=$? $(grep -E 'SUMMARY' $R/san-$tool-cp.log | head -1) ($(el))" >> $s; pack
done
