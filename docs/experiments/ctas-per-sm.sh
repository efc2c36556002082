#!/usr/bin/env bash
# Session 28's third device call (rows 46-47): more K in flight a SM at 16 x 131072, where the one-wave launches
# lose their start and tail (bulk ~97 % of the ceiling for bf16, ~88 % for fp8 in session 17's timelines).
#   B3 row 46, bf16-ctas-per-sm.patch: bf16 at 3 CTAs an SM with a ring of 2 stages (-DIXO_BF16_CTAS_PER_SM=3
#      -DIXO_MMA_STAGES_BF16=2: the same 192 KB of ring a SM, 12 warps instead of 8, the one-wave plan 396 CTAs of
#      2/3 the work). ptxas caps the packed bf16 kernel at 168 registers (213 now): 144 B spill stores / 224 B loads.
#      Predicted: the tail shorter, the spills slower: +2..+5 % (a loss) unless the tail wins.
#   F4 row 47: fp8 ring 4 stages (-DIXO_MMA_STAGES_FP8=4; 3 CTAs x 64 KB): 192 KB in flight a SM instead of 96.
#      Row 21 (3 stages) was level. Predicted: level to -2 % on the e4m3fn steps.
#   E  row 48 (session 29): K's cp.async with an L2 evict-first policy (-DIXO_CP_ASYNC_EVICT_FIRST=1, a flag only).
#      Predicted: packed level to -1 %; per-row (CTAs of one request re-read K from L2) level to +3 %.
#   Q  row 49 (session 30): fp8's f16-path decision (it reads q's fragments, so the warp waits for q there) after
#      the ring's first K copies and the entries ahead are issued, not before (-DIXO_Q_F16_AFTER_START=1, a flag):
#      q's load overlaps the entries' instead of preceding them. Only the e4m3fn / e5m2 kernels change (PTX).
#      Predicted: e4m3fn steps -0.5..-1.5 us (one of the start chain's round trips: latency suite e4m3fn 1K-4K
#      -5..-15 %, 16 x 131072 packed -0.5..-1.5 %), CP e4m3fn the same, bf16 level (byte-identical PTX).
# Ran once, session 30 (H100, at 2157d62; data/s30-ctas-per-sm-h100.log): B3, F4 lost; E and Q adopted (E for the
# packed kernels only: IXO_PACKED_K_EVICT_FIRST; Q unconditionally, its flag removed), so variant Q is the tree now.
# Step bench x3 and the gate protocol (--gate --quick) x2 interleaved; the latency suite A Q B3 F4 E A Q (latency_ab.py
# tables A vs each); the CP bench A F4 E Q x2 (F4's ring depth and E's cp.async policy are the CP kernel's too, so
# an adoption needs it); a CTA timeline of the tree (cta-timeline.patch). On an H200 also the perf gate of A (the tree)
# against bench/gpu/perf-baseline-h200.json and, on a pass, that baseline re-written from the same runs
# (ci/gpu-check.sh STAGES=perfgate BUILD_DIR=/tmp/A REBASELINE=pass; the file lands in $OUT).
#   bash docs/experiments/ctas-per-sm.sh   (device tool, carry .deps; $OUT/all.tgz + summary.log)
#   STEP_RUNS (3) / GATE_RUNS (2): the interleaved rounds; H200_GATE=0 skips the H200 gate part, LATENCY=0 the
#   latency suite, CP=0 the CP bench (a short call: STEP_RUNS=2 GATE_RUNS=1 LATENCY=0 CP=0 H200_GATE=0).
cd "$(dirname "$0")/../.."
root=$PWD; VARIANT_JOBS=3; source docs/experiments/lease-lib.sh  # pack el variant step gstep lat cpb gt on_h200 pgate
T="bench_gpu_index_step bench_gpu_latency"
( variant A "" none $T bench_gpu_cp ) &
( variant B3 "-DIXO_BF16_CTAS_PER_SM=3 -DIXO_MMA_STAGES_BF16=2" bf16-ctas-per-sm.patch $T ) &
( variant F4 "-DIXO_MMA_STAGES_FP8=4" none $T bench_gpu_cp ) &
( variant T "-DIXO_CTA_TIMELINE" cta-timeline.patch bench_gpu_index_step ) &
( variant E "-DIXO_CP_ASYNC_EVICT_FIRST=1" none $T bench_gpu_cp ) &
( variant Q "-DIXO_Q_F16_AFTER_START=1" none $T bench_gpu_cp ) &
wait; pack
export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu
( cmake --build /tmp/Q -j4 --target test_gpu test_conformance_cuda test_cp_gpu > $R/build-Q-tests.log 2>&1
  echo "build Q tests rc=$? ($(el))" >> $s ) &  # its GPU tests at the end (the scores' bits must not change)
for r in $(seq ${STEP_RUNS:-3}); do for v in A B3 F4 E Q; do step $v$r /tmp/$v; done; done; pack
for r in $(seq ${GATE_RUNS:-2}); do for v in A B3 F4 E Q; do gstep $v$r /tmp/$v; done; done; pack
for v in $([[ ${LATENCY:-1} == 1 ]] && echo A Q B3 F4 E A Q); do lat $v /tmp/$v; done
for v in $([[ ${LATENCY:-1} == 1 ]] && echo B3 F4 E Q); do
  echo "== latency A vs $v" >> $s; /usr/bin/env python3 $X/latency_ab.py $R/lat-A1.md,$R/lat-A2.md $R/lat-${v}1.md$([[ $v == Q ]] && echo ,$R/lat-Q2.md) >> $s 2>&1
done; pack
for r in $([[ ${CP:-1} == 1 ]] && echo 1 2); do for v in A F4 E Q; do cpb $v$r /tmp/$v; done; done; pack
wait
gt test_gpu-Q /tmp/Q/tests/gpu/test_gpu '*'
gt conformance-Q /tmp/Q/tests/conformance/test_conformance_cuda '*'
gt test_cp_gpu-Q /tmp/Q/tests/cp/test_cp_gpu '*'; pack
# The CTA timeline of the tree (T = A + stamps): where the e4m3fn one-wave start goes now that row 45 removed the
# decode table (session 17: start -> plan + q 5.4 us e4m3fn, 3.6 bf16; start -> first K 7.7 us both).
mkdir -p $R/tl && (cd $R/tl && /tmp/T/bench/gpu/bench_gpu_index_step --quick --reps 5 > $R/tl/bench.log 2>&1
  echo "timeline T rc=$? ($(el))" >> $s
  /usr/bin/env python3 $root/$X/cta_timeline_summary.py cta-timeline-*.csv > $R/tl/summary.txt 2>&1
  grep -E '^==|first K|plan' $R/tl/summary.txt | head -24 >> $s); pack
if [[ ${H200_GATE:-1} == 1 ]] && on_h200; then
  pgate /tmp/A session29  # compare with the H200 baseline, on a pass re-write it from the same runs
fi
