#!/usr/bin/env bash
# Session 33 (row 55): the radix select's lean pass (IXO_TOPK_LEAN_PASS, radix_select.cuh): 3 barriers a pass
# instead of 7 (two alternating histograms, every warp adds the warp totals itself, no barrier at a pass's end).
# Session 33's timeline: a pass 0.84-0.9 us of a top-k CTA's 4.0-4.9; row 53 showed a pass pays for any code in it.
#   A: the tree + lean-pass.patch; F: the tree (f13d2d1's top-k). (Ran at 0657f4c, where the patch's code was in
#   the tree and F was -DIXO_TOPK_LEAN_PASS=0: level, not adopted; data/s33-lean-pass-h100.log.)
#   Predicted: a pass -0.1..-0.2 us, top-k alone -0.2..-0.5 us, packed step 16 x 131072 -0.2..-0.4 us, CP candidates
#   -0.2..-0.5, the latency suite's vote steps level (their radix fallback runs only on wide ties).
# A's GPU tests first (both mutants), then step A F x2, gate protocol A F x2, CP A F, latency A F A F, then
# compute-sanitizer racecheck / synccheck / memcheck on the top-k test (radix rows, vote rows with a wide tie) and
# small CP cases.
#   bash docs/experiments/lean-pass.sh   (device tool, carry .deps; $OUT/all.tgz + summary.log)
cd "$(dirname "$0")/../.."
VARIANT_JOBS=8; source docs/experiments/lease-lib.sh  # pack el variants a_tests ab_round topk_san
variants "A;;lean-pass.patch;$BENCHES test_gpu test_gpu_graph test_conformance_cuda test_cp_gpu test_cp_gpu_local0" \
  "F;;none;$BENCHES"
a_tests /tmp/A topk_early_stop_partial_bin tie_rule_reversed
ab_round A F
topk_san /tmp/A
