#!/usr/bin/env bash
# Session 35 (row 57): the packed fp8 one-wave plan weighted by dispatch round (kernels/common/round_plan.hpp,
# -DIXO_FP8_ROUND_PLAN=1). Why: session 17's H200 timeline of packed e4m3fn 16 x 131072 (384 CTAs, 3 an SM, 43
# blocks each): the SM's CTAs end in dispatch order, rank 0 / 1 / 2 at a p50 of 73.2 / 75.5 / 78.1 us
# (docs/experiments/cta_rank_summary.py), on every SM; the fp8 bulk is SM-bound, so the scheduler's preference for
# older warps sets the rates. The plan: chunk-major CTAs, a chunk's share of its program's blocks weighted
# 64 + skew x (2 - round). Predicted (skew 2, from those rates): the ranks end together at ~75.5-76 us, the e4m3fn
# packed score -2..-3 us at 16 x 131072 (and ~-3 % at 32 x 524288), bf16 unchanged (not built with it: same PTX).
#   A: the tree; W: -DIXO_FP8_ROUND_PLAN=1 (skew 2); O: skew 0 (the chunk-major order alone); W3=1 adds skew 3.
#   T / TW: cta-timeline.patch on A / W (the ends by rank). G: plant-round-total.patch on W (must fail
#   CudaM3.PackedRoundsAcrossPrograms and LongPrefixes: a program's weight total one weight too large, so every
#   row's last blocks have no owner).
# Most valuable first (each phase packed; a call cut short returns what ran): W's test_gpu, step A O W x2, the
# timelines, gate protocol x2, the plant, W's graph and conformance tests, a third step round, latency A W, memcheck.
# QUICK=1: A, W and TW only (W's test_gpu, step x2, W's timeline ranks, gate protocol once).
#   bash docs/experiments/round-plan.sh   (device tool, carry .deps; $OUT/all.tgz + summary.log)
# Session 35 ran it (QUICK=1, H100): W lost, +4.4..+5.3 us, its CTAs' first K 5.4 us later (the plan's 64-bit
# divisions on the start chain). Session 37 made the plan's math 32-bit (49 -> 39 64-bit divisions in the packed
# e4m3fn kernel's PTX, the default's 36): run it again as it is, on an H200 if one comes.
cd "$(dirname "$0")/../.."
VARIANT_JOBS=${VARIANT_JOBS:-5}; source docs/experiments/lease-lib.sh  # pack el variants step gstep lat gt
RP=-DIXO_FP8_ROUND_PLAN=1
specs=("A;;none;$BENCHES" "W;$RP;none;$BENCHES test_gpu test_gpu_graph test_conformance_cuda"
  "O;$RP -DIXO_FP8_ROUND_SKEW=0;none;bench_gpu_index_step"
  "T;-DIXO_CTA_TIMELINE;cta-timeline.patch;bench_gpu_index_step"
  "TW;-DIXO_CTA_TIMELINE $RP;cta-timeline.patch;bench_gpu_index_step"
  "G;$RP;plant-round-total.patch;test_gpu")
[[ ${W3:-0} == 1 ]] && specs+=("W3;$RP -DIXO_FP8_ROUND_SKEW=3;none;bench_gpu_index_step")
V="A O W"; [[ ${W3:-0} == 1 ]] && V="$V W3"
if [[ ${QUICK:-0} == 1 ]]; then  # session 35's last budget: A, W, TW only
  variants "A;;none;bench_gpu_index_step" "W;$RP;none;bench_gpu_index_step test_gpu" \
    "TW;-DIXO_CTA_TIMELINE $RP;cta-timeline.patch;bench_gpu_index_step"
  gt test_gpu-W /tmp/W/tests/gpu/test_gpu '*'
  for r in 1 2; do for v in A W; do step $v$r /tmp/$v; done; done; pack
  cta_timeline TW TW; pack
  for v in A W; do gstep ${v}1 /tmp/$v; done; pack; exit 0
fi
variants "${specs[@]}"
gt test_gpu-W /tmp/W/tests/gpu/test_gpu '*'
for r in 1 2; do for v in $V; do step $v$r /tmp/$v; done; done; pack
for v in T TW; do cta_timeline $v $v; done; pack
for r in 1 2; do for v in $V; do gstep $v$r /tmp/$v; done; done; pack
gt_failed plant-G /tmp/G/tests/gpu/test_gpu 'CudaM3.*'
gt test_gpu_graph-W /tmp/W/tests/gpu/test_gpu_graph '*'
gt conformance-W /tmp/W/tests/conformance/test_conformance_cuda '*'; pack
for r in 3; do for v in $V; do step $v$r /tmp/$v; done; done; pack
for v in A W; do lat $v /tmp/$v; done
echo "== latency A vs W" >> $s; /usr/bin/env python3 $X/latency_ab.py $R/lat-A1.md $R/lat-W1.md >> $s 2>&1; pack
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 7 /tmp/W/tests/gpu/test_gpu --gtest_brief=1 \
  --gtest_filter='CudaM3.PackedRoundsAcrossPrograms' > $R/san-memcheck-W.log 2>&1
echo "memcheck W rc=$? $(grep -E 'SUMMARY' $R/san-memcheck-W.log | head -1) ($(el))" >> $s; pack
