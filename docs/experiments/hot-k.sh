#!/usr/bin/env bash
# Session 38: the SM-side time of the 16 x 131072 steps, on any card, and row 57's premise in that regime.
# bench_gpu_index_step --hot-k gives every request request 0's token slots and keeps one input set: the K a step
# reads (16.8 MB e4m3fn, 33.5 MB bf16) stays in L2, so the step runs with the same grid and blocks a CTA as the cold
# one but without the HBM limit. The H200's packed e4m3fn step is bound by its SMs (row 57: its 3 CTAs an SM end in
# dispatch order, 73.2 / 75.5 / 78.1 us); an H100 has the same 132 SMs and clocks but reads HBM at ~3.1 TB/s, so
# its cold step is bandwidth-bound (ranks 93.7 / 95.5 / 96.3, row 57 level or lost there). Hot K on an H100 should
# show the H200's regime: predicted packed e4m3fn score ~78-84 us (the H200's cold ~80), the fp8 ranks in dispatch
# order ~4-5 us apart, and W (the round plan) -2..-3 us against A.
#   A: the tree; W: -DIXO_FP8_ROUND_PLAN=1 (skew 2); W3: skew 3; T / TW: cta-timeline.patch on A / W.
# Phases (each packed): hot step A W W3 x2; the hot timelines T TW (ranks, start to first K); the cold step A W and
# cold timeline T (the same card's bandwidth-bound regime); a third hot round.
#   bash docs/experiments/hot-k.sh   (device tool, carry .deps; $OUT/all.tgz + summary.log)
cd "$(dirname "$0")/../.."
VARIANT_JOBS=${VARIANT_JOBS:-4}; source docs/experiments/lease-lib.sh  # pack el variants step cta_timeline
RP=-DIXO_FP8_ROUND_PLAN=1
variants "A;;none;bench_gpu_index_step" "W;$RP;none;bench_gpu_index_step" \
  "W3;$RP -DIXO_FP8_ROUND_SKEW=3;none;bench_gpu_index_step" \
  "T;-DIXO_CTA_TIMELINE;cta-timeline.patch;bench_gpu_index_step" \
  "TW;-DIXO_CTA_TIMELINE $RP;cta-timeline.patch;bench_gpu_index_step"
for r in 1 2; do for v in A W W3; do STEP_ARGS=--hot-k step h$v$r /tmp/$v; done; done; pack
cta_timeline hT T --hot-k; cta_timeline hTW TW --hot-k; pack
for v in A W; do STEP_ARGS=--quick step c${v}1 /tmp/$v; done; cta_timeline cT T --quick; pack
for v in A W W3; do STEP_ARGS=--hot-k step h${v}3 /tmp/$v; done; pack
