#!/usr/bin/env bash
# Session 27's second experiment (row 44): a tile's plan (common::group_plan) loads every row's length and slot id
# first, unrolled, so the 2 x pack loads are in flight together (IXO_PLAN_LOADS_FIRST=1), instead of one load
# round trip a row behind the previous row's branch. Why: the latency suite's packed steps cost ~1.9 us more than
# per-row even where nothing is scored (1K contexts: one CTA plans 8 rows one after the other; per-row CTAs plan
# one row each, side by side). Predicted (L2 round trip ~0.25-0.3 us): latency packed steps -1..-2 us at pack 8
# (1K / 4K / 8K), per-row level; the 16 x 131072 packed steps (pack 4) -0.5..-1 us; CP level.
#   bash docs/experiments/plan-loads-first.sh   (device tool, carry .deps; $OUT/all.tgz + summary.log)
cd "$(dirname "$0")/../.."
VARIANT_JOBS=7; source docs/experiments/lease-lib.sh  # pack el variant step gt
( variant A "" none bench_gpu_index_step bench_gpu_latency ) &
( variant P "-DIXO_PLAN_LOADS_FIRST=1" plan-loads-first.patch bench_gpu_index_step bench_gpu_latency ) &
wait; pack
export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu
( cmake --build /tmp/P -j8 --target test_gpu test_conformance_cuda test_cp_gpu > $R/build-P-test.log 2>&1
  echo "build P tests rc=$? ($(el))" >> $s ) &
for r in 1 2; do for v in A P; do
  /tmp/$v/bench/gpu/bench_gpu_latency --out $R/lat-$v$r.md > $R/lat-$v$r.log 2>&1
  echo "latency $v$r rc=$? ($(el))" >> $s; pack
done; done
for r in 1 2 3 4; do step A$r /tmp/A; step P$r /tmp/P; done; pack
/usr/bin/env python3 $X/latency_ab.py $R/lat-A1.md,$R/lat-A2.md $R/lat-P1.md,$R/lat-P2.md >> $s 2>&1; pack
wait
gt test_gpu-P /tmp/P/tests/gpu/test_gpu '*'
gt conformance-P /tmp/P/tests/conformance/test_conformance_cuda '*'
gt test_cp_gpu-P /tmp/P/tests/cp/test_cp_gpu '*'; pack
