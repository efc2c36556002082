#!/usr/bin/env bash
# Session 38 (row 58): the fp8 f16 path's high pair converted from the word's upper 16-bit half (mov.b32 {l, h}, as
# CUTLASS's e4m3x4 converter does) instead of from w >> 16 (`-DIXO_FP8_CVT_HALVES=1`, mma_convert.cuh
# fp8x4_to_f16x2_pair). Same cvt on the same inputs, so the same bits. Why: the hot profile of the packed e4m3fn
# kernel (data/s38-ncu-hot-h100) is half issue-bound (issue slots 48.8 %, ALU pipe 56.7 %, 2086 warp instructions a
# block) and SHF.R.U32.HI 0x10 held 8 % of its stall samples; the knob's PTX has 64 fewer shr.u32 by 16 in that
# kernel (129 -> 65). Predicted: hot packed e4m3fn step -1..-3 % (H100); per-row e4m3fn (SM-bound cold too: hot and
# cold 266-276 us) -1..-3 %; cold packed e4m3fn on the H100 level; bf16 unchanged (not built with it: same PTX).
# Session 38 ran it (QUICK=1, H100, data/s38-cvt-halves-h100) and made the knob the default, so the tree's A now equals H;
# to re-run the A/B, pass A_FLAGS=-DIXO_FP8_CVT_HALVES=0 (the old code: the shift).
#   A: the tree (A_FLAGS); H: -DIXO_FP8_CVT_HALVES=1; S: H with plant-cvt-halves-swap.patch (the halves swapped: its test_gpu
#   must fail, e.g. CudaFp8Paths.TilesOnBothWideningsGiveTheSameBits).
# Phases (each packed): H's test_gpu and CUDA conformance, S's test_gpu; hot step A H x3; cold step A H x2; gate
# protocol A H.
#   [QUICK=1] bash docs/experiments/cvt-halves.sh   (device tool, carry .deps; $OUT/all.tgz + summary.log)
# On an H200, h200-targets.sh measures the tree (H) itself; `W_FLAGS=-DIXO_FP8_CVT_HALVES=0` puts the old code beside it.
cd "$(dirname "$0")/../.."
VARIANT_JOBS=${VARIANT_JOBS:-5}; source docs/experiments/lease-lib.sh  # pack el variants step gstep gt
if [[ ${QUICK:-0} == 1 ]]; then  # a low budget: A and H only, H's test_gpu, hot x2, cold x1
  variants "A;${A_FLAGS:-};none;bench_gpu_index_step" "H;-DIXO_FP8_CVT_HALVES=1;none;bench_gpu_index_step test_gpu"
  gt test_gpu-H /tmp/H/tests/gpu/test_gpu '*'; pack
  for r in 1 2; do for v in A H; do STEP_ARGS=--hot-k step h$v$r /tmp/$v; done; done; pack
  for v in A H; do STEP_ARGS=--quick step c${v}1 /tmp/$v; done; pack; exit 0
fi
variants "A;${A_FLAGS:-};none;bench_gpu_index_step" \
  "H;-DIXO_FP8_CVT_HALVES=1;none;bench_gpu_index_step test_gpu test_conformance_cuda" \
  "S;-DIXO_FP8_CVT_HALVES=1;plant-cvt-halves-swap.patch;test_gpu"
gt test_gpu-H /tmp/H/tests/gpu/test_gpu '*'
gt conformance-H /tmp/H/tests/conformance/test_conformance_cuda '*'
gt_failed plant-S /tmp/S/tests/gpu/test_gpu '*'; pack
for r in 1 2 3; do for v in A H; do STEP_ARGS=--hot-k step h$v$r /tmp/$v; done; done; pack
for r in 1 2; do for v in A H; do STEP_ARGS=--quick step c$v$r /tmp/$v; done; done; pack
for v in A H; do gstep ${v}1 /tmp/$v; done; pack
