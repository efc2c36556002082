#!/usr/bin/env bash
# Session 31's H200 call (issue 27, targets 1-2 on the card of SGLang's anchors), lean: the session's H100 calls
# already ran the tree's GPU tests, compute-sanitizer and row 50's A/B (cp-stream.sh, data/s31-cp-stream-h100.log).
#   A: the tree (K's evict-first copies in the native and CP packed kernels); N: -DIXO_PACKED_K_EVICT_FIRST=0.
# On any card but an H200 it stops at once (summary "not an H200"). On an H200, most valuable first (each phase
# packed, so a call cut short still returns what ran): the step bench A N x2 (issue 27's table: packed step, score
# alone, % of the floor), the gate protocol A N x2, the perf gate of A against bench/gpu/perf-baseline-h200.json
# with REBASELINE=pass (the re-written baseline lands in $OUT), the CP bench A N, a third step round.
#   PERF_COMMIT=<sha> bash docs/experiments/h200-targets.sh   (device tool, carry .deps; $OUT/all.tgz + summary.log)
# N_FLAGS names N's build flags (default session 31's); session 32: N_FLAGS=-DIXO_TOPK_EARLY_STOP=0 (row 51).
# TL=1 also builds T (topk-timeline.patch) and, last, writes the in-step top-k timeline's summary.
# GATE=1 (session 33) also builds A's GPU tests and runs them last (a_tests: the GPU gate's tests on the H200).
# ELSE_TESTS=1 (session 33): on another card, build and run the tree's GPU tests (a_tests) before stopping.
# P_FLAGS=... (session 33) adds variant P (those flags) to the step bench rounds, e.g. row 54's
# -DIXO_FP8_LONG_PLAIN_COPIES=1 (the packed fp8 launches of > 128 blocks a CTA keep plain copies).
# Row 54 ran that way in session 44 (level; docs/experiments row 54): now fp8-long-plain-copies.patch, which P does not apply.
# PLANT=1 (session 34) also builds L (plant-long-cta.patch) and runs its GPU tests (plant_tests) after A's: on an H200
# with GATE=1, else with ELSE_TESTS=1. CudaM3.LongPrefixes (its forced-chunk packed runs) must fail; session 34 (H100)
# saw conformance's random properties (cuda-rows, cuda-packed) fail too, the graph tests pass.
# W_FLAGS=... (session 34) adds variant W to the step and gate-protocol rounds (and with TL=1 its timeline TW): row 56
# ran with -DIXO_TOPK_DIGIT_BITS=11 at c13aed1 (lost; that knob is gone). ELSE_SCRIPT=NAME (session 34): on another
# card, run docs/experiments/NAME instead (it starts its own summary); ELSE_QUICK=1 (session 38) runs it with QUICK=1
# (QUICK=1 itself only picks this script's lean H200 form), e.g. ELSE_SCRIPT=round-plan.sh ELSE_QUICK=1.
# QUICK=1 (session 36, for a budget under ~400 s): A (and P) only: step x2, gate protocol x2, A's perf gate, step x1.
# W_PATCH=NAME.patch (session 36) builds W from that docs/experiments patch (with W_FLAGS if any) and runs W's test_gpu
# last; no TW then. Session 36 ran W_PATCH=embed-native-plan.patch (adopted in the tree after it, the patch removed).
cd "$(dirname "$0")/../.."
source docs/experiments/lease-lib.sh  # pack el variants step gstep cpb a_tests plant_tests timeline on_h200 pgate
if ! on_h200; then
  echo "not an H200: stopped" >> $s
  [[ -n ${ELSE_SCRIPT:-} ]] && QUICK=${ELSE_QUICK:-0} exec bash $X/$ELSE_SCRIPT
  if [[ ${ELSE_TESTS:-0} == 1 ]]; then  # session 33: the card still runs the tree's GPU tests
    L=(); [[ ${PLANT:-0} == 1 ]] && L=("$PLANT_SPEC")
    VARIANT_JOBS=8 variants "A;;none;$ATESTS" "${L[@]}"; a_tests /tmp/A topk_early_stop_partial_bin tie_rule_reversed
    [[ ${PLANT:-0} == 1 ]] && plant_tests /tmp/L
  fi
  pack; exit 0
fi
if [[ ${QUICK:-0} == 1 ]]; then  # session 36, a low budget: issue 27's table, row 54 and the H200 perf gate only
  P=(); [[ -n ${P_FLAGS:-} ]] && P=("P;$P_FLAGS;none;bench_gpu_index_step")
  VARIANT_JOBS=16 variants "A;;none;bench_gpu_index_step bench_gpu_latency" "${P[@]}"
  for r in 1 2; do for v in A ${P:+P}; do step $v$r /tmp/$v; done; done; pack
  for r in 1 2; do for v in A ${P:+P}; do gstep $v$r /tmp/$v; done; done; pack
  pgate /tmp/A ${PERF_COMMIT:-unknown}
  for v in A ${P:+P}; do step ${v}3 /tmp/$v; done; pack; exit 0
fi
T="bench_gpu_index_step bench_gpu_latency bench_gpu_cp"
VARIANT_JOBS=8
[[ ${GATE:-0} == 1 ]] && T="$T $ATESTS"
HAS_W=0; [[ -n ${W_FLAGS:-}${W_PATCH:-} ]] && HAS_W=1
V="A N"; [[ -n ${P_FLAGS:-} ]] && V="$V P"; [[ $HAS_W == 1 ]] && V="$V W"
G="A N"; [[ $HAS_W == 1 ]] && G="$G W"
specs=("A;;none;$T" "N;${N_FLAGS:--DIXO_PACKED_K_EVICT_FIRST=0};none;bench_gpu_index_step bench_gpu_cp")
[[ -n ${P_FLAGS:-} ]] && specs+=("P;$P_FLAGS;none;bench_gpu_index_step")
[[ $HAS_W == 1 ]] && specs+=("W;${W_FLAGS:-};${W_PATCH:-none};bench_gpu_index_step$([[ -n ${W_PATCH:-} ]] && echo ' test_gpu')")
[[ ${TL:-0} == 1 ]] && specs+=("T;-DIXO_TOPK_TIMELINE;topk-timeline.patch;bench_gpu_index_step")
[[ ${TL:-0} == 1 && -n ${W_FLAGS:-} && -z ${W_PATCH:-} ]] && specs+=("TW;-DIXO_TOPK_TIMELINE $W_FLAGS;topk-timeline.patch;bench_gpu_index_step")
[[ ${GATE:-0} == 1 && ${PLANT:-0} == 1 ]] && specs+=("$PLANT_SPEC")
variants "${specs[@]}"
for r in 1 2; do for v in $V; do step $v$r /tmp/$v; done; done; pack
for r in 1 2; do for v in $G; do gstep $v$r /tmp/$v; done; done; pack
pgate /tmp/A ${PERF_COMMIT:-unknown}
for v in A N; do cpb ${v}1 /tmp/$v; done; pack
for v in $V; do step ${v}3 /tmp/$v; done; pack
if [[ ${TL:-0} == 1 ]]; then
  for v in T $([[ -n ${W_FLAGS:-} && -z ${W_PATCH:-} ]] && echo TW); do timeline $v; done
fi
[[ ${GATE:-0} == 1 ]] && a_tests /tmp/A topk_early_stop_partial_bin
[[ ${GATE:-0} == 1 && ${PLANT:-0} == 1 ]] && plant_tests /tmp/L
[[ -n ${W_PATCH:-} ]] && { gt test_gpu-W /tmp/W/tests/gpu/test_gpu '*'; pack; }
