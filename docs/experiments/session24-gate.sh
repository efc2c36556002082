#!/usr/bin/env bash
# Session 24's second device call: the whole GPU gate on the tree that adopts the vote top-k
# (IXO_TOPK_BALLOT's default set after next-lease-topk.sh), in one call within the 600 s limit:
# ci/gpu-check.sh's build, test, python and perfgate stages (the perf gate against the stored
# baseline), racecheck of CudaTopk, then the sanitizer stage until t0 + 575 s.
#   bash docs/experiments/session24-gate.sh   (device tool, carry .deps; $OUT/all.tgz + summary.log)
#   ADOPT_BALLOT=1|2: first adopt that vote top-k on the device's copy (docs/experiments/adopt-ballot.sh),
#   so this call can follow next-lease-topk.sh at once, before the same edit is committed here.
#   GATE_STAGES: the gate stages before racecheck (default "build test python perfgate"; leave perfgate out off the H200,
#   whose baseline the perf gate compares against). SAN_SECONDS: the sanitizer stage ends t0 + this (575).
cd "$(dirname "$0")/../.."
: "${OUT:?}"; R=/tmp/R; mkdir -p $R; t0=$(date +%s); s=$R/summary.log
pack() { tar -czf $OUT/all.tgz -C $R . 2>/dev/null; cp $s $OUT/summary.log; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> $s 2>&1
if [[ -n ${ADOPT_BALLOT:-} ]]; then
  bash docs/experiments/adopt-ballot.sh "$ADOPT_BALLOT" >> $s 2>&1 || { echo "adopt failed" >> $s; pack; exit 2; }
fi
grep -m1 '^#define IXO_TOPK_BALLOT' kernels/gpu/ballot_select.cuh >> $s
STAGES="${GATE_STAGES:-build test python perfgate}" JOBS=14 PERF_COMMIT="${PERF_COMMIT:-session24}" bash ci/gpu-check.sh "$R" > $R/gate.out 2>&1
echo "gate rc=$? ($(( $(date +%s) - t0 )) s)" >> $s; pack
export LD_LIBRARY_PATH=/tmp/ixo-deps/usr/lib/x86_64-linux-gnu
timeout 60 compute-sanitizer --tool racecheck --error-exitcode 7 build/tests/gpu/test_gpu --gtest_filter='CudaTopk/*' \
  --gtest_brief=1 > $R/san-topk-racecheck.log 2>&1
echo "topk racecheck rc=$? $(grep SUMMARY $R/san-topk-racecheck.log | tail -1)" >> $s; pack
SAN_UNTIL=$(( t0 + ${SAN_SECONDS:-575} )) STAGES=sanitize bash ci/gpu-check.sh "$R" >> $R/gate.out 2>&1
echo "sanitize rc=$? ($(( $(date +%s) - t0 )) s)" >> $s; pack
