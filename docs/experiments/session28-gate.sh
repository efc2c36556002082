#!/usr/bin/env bash
# Session 28's second device call: the whole GPU gate on the tree that adopts row 45 (the fp8 decode table
# built only where a kernel reads it), in one call within the 600 s limit:
#   1. ci/gpu-check.sh build test python perfgate (the perf gate against the card's stored baseline);
#   2. the card's baseline re-written from the same two --gate runs (bench/gpu/perf-baseline-<model>.json,
#      copied to $OUT: commit it if step 1 passed);
#   3. a planted bug, X = plant-fp8-table-never.patch (the table never built, so e4m3fnuz tiles read
#      shared memory nobody wrote): the e4m3fnuz conformance cases must fail on X (and pass on the tree);
#   4. compute-sanitizer (initcheck first) until t0 + 575 s.
#   PERF_COMMIT=<sha> bash docs/experiments/session28-gate.sh   (device tool, carry .deps; $OUT/all.tgz + summary.log)
cd "$(dirname "$0")/../.."
VARIANT_JOBS=14; source docs/experiments/lease-lib.sh  # R s t0 X deps pack el variant gt
STAGES="build test python perfgate" JOBS=14 PERF_COMMIT="${PERF_COMMIT:-session28}" bash ci/gpu-check.sh "$R" > $R/gate.out 2>&1
echo "gate rc=$? ($(el))" >> $s; pack
if [[ -s $R/perfgate-step.json && -s $R/perfgate-latency.json ]]; then
  base=$(/usr/bin/python3 ci/gpu-perf-gate.py --print-baseline $R/perfgate-step.json $R/perfgate-latency.json)
  /usr/bin/python3 ci/gpu-perf-gate.py --rebaseline --commit "${PERF_COMMIT:-session28}" \
    $R/perfgate-step.json $R/perfgate-latency.json > $R/rebaseline.log 2>&1
  echo "rebaseline rc=$? $(tail -1 $R/rebaseline.log) ($(el))" >> $s; cp "$base" $R/ 2>/dev/null; pack
fi
variant X "" plant-fp8-table-never.patch test_conformance_cuda
export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu
gt conformance-fnuz-tree build/tests/conformance/test_conformance_cuda '*fnuz*'
gt conformance-fnuz-X /tmp/X/tests/conformance/test_conformance_cuda '*fnuz*'; pack
SAN_TOOLS="initcheck memcheck synccheck racecheck" SAN_UNTIL=$(( t0 + 575 )) STAGES=sanitize \
  bash ci/gpu-check.sh "$R" >> $R/gate.out 2>&1
echo "sanitize rc=$? ($(el))" >> $s; pack
