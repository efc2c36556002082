#!/usr/bin/env bash
# The first H200 call after session 26 (the vote top-k adopted for rows of <= 128 keys, measured on an
# H100 only): the perf gate against the stored H200 baseline (expected: pass, the latency cases faster),
# then the baseline re-recorded from a second run (commit $OUT/perf-baseline-h200.json as
# bench/gpu/perf-baseline-h200.json if it passes), then initcheck and synccheck, which session 26's gate
# on the adopted tree did not reach, until t0 + 575 s. Between the two: the CUDA top-k tests (CudaTopk's 16 shapes).
#   PERF_COMMIT=<sha> bash docs/experiments/h200-rebaseline.sh   (device tool, carry .deps; $OUT/all.tgz + summary.log)
cd "$(dirname "$0")/../.."
: "${OUT:?}"; R=/tmp/R; mkdir -p $R; t0=$(date +%s); s=$R/summary.log
pack() { tar -czf $OUT/all.tgz -C $R . 2>/dev/null; cp $s $OUT/summary.log; cp $R/perf-baseline-*.json $OUT/ 2>/dev/null; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> $s 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 || echo "WARNING: not an H200: the perf gate will refuse (another device)" >> $s
STAGES="build perfgate" JOBS=14 PERF_COMMIT="${PERF_COMMIT:-session26}" bash ci/gpu-check.sh "$R/compare" > $R/compare.out 2>&1
echo "perf gate (compare) rc=$? ($(( $(date +%s) - t0 )) s)" >> $s; grep -E "^== perf" $R/compare/summary.log >> $s; pack
(cd build && ctest -L cuda -R "[Tt]opk" --output-on-failure > $R/ctest-topk.log 2>&1)
echo "ctest -L cuda -R topk rc=$?: $(grep -E 'tests passed|tests failed' $R/ctest-topk.log | tail -1) ($(( $(date +%s) - t0 )) s)" >> $s; pack
REBASELINE=1 STAGES=perfgate PERF_COMMIT="${PERF_COMMIT:-session26}" bash ci/gpu-check.sh "$R" > $R/rebaseline.out 2>&1
echo "perf gate (rebaseline) rc=$? ($(( $(date +%s) - t0 )) s)" >> $s; grep -E "^== perf" $R/summary.log >> $s; pack
SAN_TOOLS="initcheck synccheck" SAN_UNTIL=$(( t0 + 575 )) STAGES=sanitize bash ci/gpu-check.sh "$R/san" > $R/san.out 2>&1
echo "sanitize rc=$? ($(( $(date +%s) - t0 )) s)" >> $s; grep -E "^== compute" $R/san/summary.log >> $s; pack
