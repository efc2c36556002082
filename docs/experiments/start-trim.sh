#!/usr/bin/env bash
# Session 28's experiment (rows 44-45): two cuts at the head of a score CTA's start chain, alone and together.
#   P  row 44, plan-loads-first.patch (-DIXO_PLAN_LOADS_FIRST=1): a tile's plan loads its rows' lengths and
#      slot ids first, unrolled. Predicted: latency packed steps -1..-2 us at pack 8, 16 x 131072 packed -0.5..-1.
#   L  row 45, fp8-table-skip.patch: the fp8 decode table (256 fp8_to_float + a barrier, first thing in every
#      fp8 CTA) is built only where it is read (e4m3fnuz, decode mutants). Why: session 17's timeline put
#      start -> plan + q at 5.4 us for e4m3fn against 3.6 for bf16. Predicted: e4m3fn steps -0.5..-1.8 us
#      (one-wave launches pay a CTA's start once), bf16 level.
#   PL both.
# Measured: the step bench (--reps 50) x3 and the gate protocol (--gate --quick) x2, interleaved; the latency
# suite A P L PL A PL; PL's GPU tests.
#   bash docs/experiments/start-trim.sh   (device tool, carry .deps; $OUT/all.tgz + summary.log)
cd "$(dirname "$0")/../.."
VARIANT_JOBS=4; source docs/experiments/lease-lib.sh  # pack el variant step gstep lat gt
T="bench_gpu_index_step bench_gpu_latency"
( variant A "" none $T ) &
( variant P "-DIXO_PLAN_LOADS_FIRST=1" plan-loads-first.patch $T ) &
( variant L "" fp8-table-skip.patch $T ) &
( variant PL "-DIXO_PLAN_LOADS_FIRST=1" plan-loads-first.patch,fp8-table-skip.patch $T test_gpu ) &
wait; pack
export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu
( cmake --build /tmp/PL -j6 --target test_conformance_cuda test_cp_gpu > $R/build-PL-test.log 2>&1
  cmake --build /tmp/A -j6 --target test_gpu >> $R/build-PL-test.log 2>&1
  echo "build PL tests + A test_gpu rc=$? ($(el))" >> $s ) &
for r in 1 2 3; do for v in A P L PL; do step $v$r /tmp/$v; done; done; pack
for r in 1 2; do for v in A P L PL; do gstep $v$r /tmp/$v; done; done; pack
for v in A P L PL A PL; do lat $v /tmp/$v; pack; done
for v in P L PL; do
  echo "== latency A vs $v" >> $s
  /usr/bin/env python3 $X/latency_ab.py $R/lat-A1.md,$R/lat-A2.md $R/lat-${v}1.md$([[ $v == PL ]] && echo ,$R/lat-PL2.md) >> $s 2>&1
done; pack
wait
gt test_gpu-PL /tmp/PL/tests/gpu/test_gpu '*'
gt conformance-PL /tmp/PL/tests/conformance/test_conformance_cuda '*'
gt test_cp_gpu-PL /tmp/PL/tests/cp/test_cp_gpu '*'; pack
# Its session-28 run also ran test_gpu under IXO_TEST_MUTANT=e4m3_subnormal_flushed with the filter
# 'CudaBackends/*', which matches no test of test_gpu (0 tests ran): that step judged nothing and was
# removed. session28-gate.sh plants a never-built table instead.
