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
VARIANT_JOBS=${VARIANT_JOBS:-6}; source docs/experiments/lease-lib.sh  # pack el variants a_tests timeline ab_round topk_san
WF=-DIXO_TOPK_DIGIT_BITS=11
specs=("W;$WF;none;$BENCHES test_gpu test_gpu_graph test_conformance_cuda test_cp_gpu test_cp_gpu_local0"
  "F;;none;$BENCHES" "T;-DIXO_TOPK_TIMELINE;topk-timeline.patch;bench_gpu_index_step"
  "TW;-DIXO_TOPK_TIMELINE $WF;topk-timeline.patch;bench_gpu_index_step")
[[ ${PLANT:-0} == 1 ]] && specs+=("$PLANT_SPEC")
variants "${specs[@]}"
a_tests /tmp/W topk_early_stop_partial_bin tie_rule_reversed
timeline T; timeline TW
ab_round W F
[[ ${PLANT:-0} == 1 ]] && plant_tests /tmp/L
topk_san /tmp/W
