#!/usr/bin/env bash
# Session 32's device call (row 51): the radix top-k's keys first and its early stop.
#   A: the tree: topk_kernel loads its whole buffer row (NB <= 8192 scores, unrolled) before its plan's loads
#      (IXO_TOPK_KEYS_FIRST), and radix_select stops once the k-th key's bin is selected whole
#      (IXO_TOPK_EARLY_STOP; the CP candidates' select too).
#   N: -DIXO_TOPK_KEYS_FIRST=0 -DIXO_TOPK_EARLY_STOP=0: the top-k as before this session.
#   K: -DIXO_TOPK_EARLY_STOP=0: the keys first only (which half gives what).
#   Predicted (session 21's in-step timeline of a top-k CTA at 1025 keys: plan 0.64-0.67 us, keys 0.94-1.02, select
#   3.49-3.55 in 4 passes, compaction 1.34-1.38): the plan and the keys overlap (-0.7..-0.9 us) and the slowest of
#   the step's 64 rows stops after pass 3 (-0.9 us): packed step 16 x 131072 -1.5..-2 us (bf16 and e4m3fn), top-k
#   alone the same; 32 x 524288 (4097 keys, 17 a thread: keys 1.44 us) -1.5..-2.5 us; latency suite: rows of
#   <= 128 keys take the vote path (unchanged), the 32K contexts (256-296 keys) -0.5..-1 us; CP candidates -0.5..-1.
# A's GPU tests (test_gpu incl. CudaTopk, conformance, CP), the new mutant's ctest by hand (CudaTopk must fail under
# IXO_TEST_MUTANT=topk_early_stop_partial_bin), ci/gpu-check.sh's sanitizer stage (now with the top-k test and the
# small CP cases), then the benches interleaved, then the perf gate of A (REBASELINE=pass: a re-written baseline
# lands in $OUT; committed only if A is adopted).
#   bash docs/experiments/topk-keys-early.sh   (device tool, carry .deps; $OUT/all.tgz + summary.log)
# Ran: session 32 call 1 (H100, 40def36; data/s32-topk-keys-early-h100.log): the early stop kept, the keys first
# (K = N within noise) removed afterwards, so IXO_TOPK_KEYS_FIRST is gone from the tree. Its tests and sanitizer
# lines became lease-lib.sh's a_tests / a_san after the call (a_tests adds test_gpu_graph).
cd "$(dirname "$0")/../.."
VARIANT_JOBS=6; source docs/experiments/lease-lib.sh  # pack el variant step gstep lat cpb gt a_tests a_san on_h200 pgate
variants "A;;none;$BENCHES $ATESTS" "N;-DIXO_TOPK_KEYS_FIRST=0 -DIXO_TOPK_EARLY_STOP=0;none;$BENCHES" \
  "K;-DIXO_TOPK_EARLY_STOP=0;none;bench_gpu_index_step"
for r in 1 2; do for v in A N K; do step $v$r /tmp/$v; done; done; pack
a_tests /tmp/A topk_early_stop_partial_bin
for r in 1 2; do for v in A N; do gstep $v$r /tmp/$v; done; done; pack
a_san /tmp/A 200
for v in A N; do cpb ${v}1 /tmp/$v; done; pack
for v in A N A N; do lat $v /tmp/$v; done
echo "== latency A vs N" >> $s
/usr/bin/env python3 $X/latency_ab.py $R/lat-A1.md,$R/lat-A2.md $R/lat-N1.md,$R/lat-N2.md >> $s 2>&1; pack
for v in A N K; do step ${v}3 /tmp/$v; done; pack
pgate /tmp/A session32
