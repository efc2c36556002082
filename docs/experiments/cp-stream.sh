#!/usr/bin/env bash
# Session 31's device call (row 50): K's evict-first copies for the CP packed kernel too.
#   A: the tree: cp_score_mma_kernel<D, KC, kStreamK> streams K when the launch packs (p.pack > 1,
#      kPackedStreamK), as the native packed kernel since session 30; the CP per-row kernel keeps the plain copy
#      (its PTX is the old one but for the mangled name, checked on the host).
#   N: -DIXO_PACKED_K_EVICT_FIRST=0: no streamed copy anywhere (the CP kernels as before this session, the native
#      packed kernel as before session 30: its difference to A repeats row 48's packed measurement).
#   Predicted (row 48 measured E on every CP copy: CP packed -2..-3 %): CP packed 16 x 131072 bf16 67.6 -> ~66.1 us,
#   e4m3fn 45.5 -> ~44.1, 32 x 524288 bf16 392.5 -> ~384.4; CP per-row level (the plain copy in both).
#   T: the tree with the CTA timeline (cta-timeline.patch): the e4m3fn one-wave start (session 30's item 4).
# A's GPU tests (test_gpu, conformance, test_cp_gpu: the CP kernels changed). On an H200 also the perf gate of A
# against bench/gpu/perf-baseline-h200.json, on a pass re-written from the same runs (ci/gpu-check.sh STAGES=perfgate
# BUILD_DIR=/tmp/A REBASELINE=pass), and issue 27's table (the step bench x3 and the gate protocol x2 of A).
#   bash docs/experiments/cp-stream.sh   (device tool, carry .deps; $OUT/all.tgz + summary.log)
#   CP_RUNS (3) / STEP_RUNS (3) / GATE_RUNS (2): interleaved rounds A N; LATENCY=0 skips the latency suite A N A N;
#   ONLY_H200=1: on any other card only A's GPU tests and compute-sanitizer (a landing that is not an H200 still
#   checks the tree), then stop.
# Ran: session 31 call 2 (H100, 1f6c36e; data/s31-cp-stream-h100.log): row 50 adopted.
cd "$(dirname "$0")/../.."
root=$PWD; VARIANT_JOBS=5; source docs/experiments/lease-lib.sh  # pack el variant step gstep lat cpb gt on_h200 pgate
T="bench_gpu_index_step bench_gpu_latency bench_gpu_cp"
AT="test_gpu test_conformance_cuda test_cp_gpu test_cp_gpu_local0 test_kernels_cpu test_gpu_graph"
# A's GPU tests and the four compute-sanitizer tools on A (ci/gpu-check.sh's stage, the CP packed launches added).
a_checks() {
  gt test_cp_gpu-A /tmp/A/tests/cp/test_cp_gpu '*'
  gt test_cp_gpu_local0-A /tmp/A/tests/cp/test_cp_gpu_local0 '*'
  gt test_gpu-A /tmp/A/tests/gpu/test_gpu '*'
  gt conformance-A /tmp/A/tests/conformance/test_conformance_cuda '*'; pack
  STAGES=sanitize BUILD_DIR=/tmp/A SAN_CP_FILTER='CudaCp.RocmPrVerifyBatch:CudaCp.WinnersInOneShardAndPadding' \
    LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu bash ci/gpu-check.sh $R/san > $R/san.log 2>&1
  echo "sanitize A rc=$? ($(el))" >> $s; grep -E '^== compute' $R/san.log >> $s; pack
}
if [[ ${ONLY_H200:-0} == 1 ]] && ! on_h200; then
  echo "not an H200 (ONLY_H200=1): A's GPU tests and compute-sanitizer only" >> $s
  VARIANT_JOBS=16 variant A "" none $AT; a_checks; exit 0
fi
( variant A "" none $T $AT ) &
( variant N "-DIXO_PACKED_K_EVICT_FIRST=0" none $T ) &
( variant T "-DIXO_CTA_TIMELINE" cta-timeline.patch bench_gpu_index_step ) &
wait; pack
export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu
for r in $(seq ${CP_RUNS:-3}); do for v in A N; do cpb $v$r /tmp/$v; done; done; pack
a_checks
for r in $(seq ${STEP_RUNS:-3}); do for v in A N; do step $v$r /tmp/$v; done; done; pack
for r in $(seq ${GATE_RUNS:-2}); do for v in A N; do gstep $v$r /tmp/$v; done; done; pack
# The CTA timeline of the tree (T = A + stamps; session 17: start -> plan + q 5.4 us e4m3fn, 3.6 bf16).
mkdir -p $R/tl && (cd $R/tl && /tmp/T/bench/gpu/bench_gpu_index_step --quick --reps 5 > $R/tl/bench.log 2>&1
  echo "timeline T rc=$? ($(el))" >> $s
  /usr/bin/env python3 $root/$X/cta_timeline_summary.py cta-timeline-*.csv > $R/tl/summary.txt 2>&1
  grep -E '^==|first K|plan' $R/tl/summary.txt | head -24 >> $s); pack
for v in $([[ ${LATENCY:-1} == 1 ]] && echo A N A N); do lat $v /tmp/$v; done
if [[ ${LATENCY:-1} == 1 ]]; then
  echo "== latency A vs N" >> $s; /usr/bin/env python3 $X/latency_ab.py $R/lat-A1.md,$R/lat-A2.md $R/lat-N1.md,$R/lat-N2.md >> $s 2>&1
fi; pack
on_h200 && pgate /tmp/A session31
