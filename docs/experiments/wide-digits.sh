#!/usr/bin/env bash
# Session 34 (row 56): the radix select in wide digits (IXO_TOPK_DIGIT_BITS=11, radix_select.cuh's
# radix_select_wide: at most 3 passes of 11 / 11 / 10 bits, 2048 bins) against the tree's 8-bit passes.
# Why: session 33's timeline (H100): top-k CTAs 4.0 us with 2 passes, 4.83 with 3 (a third of the M3 rows), and the
# 3-pass CTAs set the top-k's span (5.1 us); an M3 row's keys share their top 8 bits, so the 8-bit first pass
# resolves nothing. Predicted: nearly every row in 2 passes, a pass +0..+0.1 us (8 bins a thread to sum and walk),
# the top-k span 5.1 -> ~4.3 us, packed step 16 x 131072 -0.3..-0.8 us, top-k alone at 1025 keys -0.3..-0.8 us;
# the latency suite's radix rows likewise, its vote rows level (their radix fallback runs only on wide ties).
#   W: the tree with -DIXO_TOPK_DIGIT_BITS=11; F: the tree. T / TW: topk-timeline.patch on F / W (pass counts).
#   L (PLANT=1): plant-long-cta.patch, CudaM3.LongPrefixes' long-CTA check shown to fail (plant_tests).
# W's GPU tests first (both top-k mutants), the timelines, step W F x2, gate protocol W F x2, CP W F, latency W F W F,
# then compute-sanitizer racecheck / synccheck / memcheck on W's top-k test and small CP cases.
#   bash docs/experiments/wide-digits.sh   (device tool, carry .deps; $OUT/all.tgz + summary.log)
# Ran at c13aed1 (session 34, H100, data/s34-wide-digits-h100.log), where the knob's code was in the tree: lost, reverted;
# the code is wide-digits.patch now. To run it again, check out c13aed1 (its topk-timeline.patch counts the wide passes).
cd "$(dirname "$0")/../.."
VARIANT_JOBS=${VARIANT_JOBS:-6}; source docs/experiments/lease-lib.sh  # pack el variants step gstep lat cpb a_tests
WF=-DIXO_TOPK_DIGIT_BITS=11
specs=("W;$WF;none;$BENCHES test_gpu test_gpu_graph test_conformance_cuda test_cp_gpu test_cp_gpu_local0"
  "F;;none;$BENCHES" "T;-DIXO_TOPK_TIMELINE;topk-timeline.patch;bench_gpu_index_step"
  "TW;-DIXO_TOPK_TIMELINE $WF;topk-timeline.patch;bench_gpu_index_step")
[[ ${PLANT:-0} == 1 ]] && specs+=("L;;plant-long-cta.patch;test_gpu test_gpu_graph test_conformance_cuda")
variants "${specs[@]}"
a_tests /tmp/W topk_early_stop_partial_bin tie_rule_reversed
for v in T TW; do
  mkdir -p $R/tl-$v && (cd $R/tl-$v && /tmp/$v/bench/gpu/bench_gpu_index_step --quick --reps 5 > bench.log 2>&1
    echo "top-k timeline $v rc=$? ($(el))" >> $s
    /usr/bin/env python3 $OLDPWD/$X/topk_timeline_summary.py . > summary.txt 2>&1; cat summary.txt >> $s); pack
done
for r in 1 2; do for v in W F; do step $v$r /tmp/$v; done; done; pack
for r in 1 2; do for v in W F; do gstep $v$r /tmp/$v; done; done; pack
for v in W F; do cpb ${v}1 /tmp/$v; done; pack
for v in W F W F; do lat $v /tmp/$v; done
echo "== latency W vs F" >> $s
/usr/bin/env python3 $X/latency_ab.py $R/lat-W1.md,$R/lat-W2.md $R/lat-F1.md,$R/lat-F2.md >> $s 2>&1; pack
[[ ${PLANT:-0} == 1 ]] && plant_tests /tmp/L
t='CudaTopk/TopkRadix.IdsMatchTheOracleSelection'
c='Local0/CudaCpLocal0.PackedEqualsRowsAndOracle'
for tool in racecheck synccheck memcheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 7 /tmp/W/tests/gpu/test_gpu --gtest_brief=1 \
    --gtest_filter="$t/nb1024_k16:$t/nb4097_k16:$t/nb9000_k16:$t/nb2048_k100:$t/nb128_k64:$t/nb40_k7" > $R/san-$tool-topk.log 2>&1
  echo "$tool top-k rc=$? $(grep -E 'SUMMARY' $R/san-$tool-topk.log | head -1) ($(el))" >> $s
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 7 /tmp/W/tests/cp/test_cp_gpu_local0 --gtest_brief=1 \
    --gtest_filter="$c/w2_p4_max:$c/w4_p2_lse" > $R/san-$tool-cp.log 2>&1
  echo "$tool CP rc=$? $(grep -E 'SUMMARY' $R/san-$tool-cp.log | head -1) ($(el))" >> $s; pack
done
