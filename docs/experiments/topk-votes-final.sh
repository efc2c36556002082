#!/usr/bin/env bash
# (IXO_TOPK_BALLOT_STOP was removed after this call: rerunning needs ballot-early-stop.patch applied first.)
# Session 25's fourth device call: the vote top-k with the lanes'-largest bound (IXO_TOPK_BALLOT=2) and
# the early stop (IXO_TOPK_BALLOT_STOP=32) together, after topk-votes-fix.sh (H100: top-k alone A 9.7,
# =2 7.8, =1 + stop 32 8.8 us; in-step CTA radix 6.53, =1 + stop 32 5.02 us; the packed step's
# run-to-run spread ~1-2 us hides a 1-2 us top-k change). Predicted: =2 + stop 32 top-k alone ~7.3 us.
#   bash docs/experiments/topk-votes-final.sh   (device tool, carry .deps; $OUT/all.tgz + summary.log)
# Variants: A (radix), V2 (=2), W (=2 + stop 32), S (=1 + stop 32), TW (W with the timeline patch).
# W's GPU tests, racecheck and memcheck of CudaTopk first; then the step bench A V2 W S x 4.
cd "$(dirname "$0")/../.."
source docs/experiments/lease-lib.sh  # pack el variant step gt (session 25)
( variant A "" none bench_gpu_index_step ) &
( variant V2 "-DIXO_TOPK_BALLOT=2" none bench_gpu_index_step ) &
( variant W "-DIXO_TOPK_BALLOT=2 -DIXO_TOPK_BALLOT_STOP=32" none bench_gpu_index_step test_gpu test_gpu_graph test_cp_gpu ) &
( variant S "-DIXO_TOPK_BALLOT=1 -DIXO_TOPK_BALLOT_STOP=32" none bench_gpu_index_step ) &
( variant TW "-DIXO_TOPK_TIMELINE -DIXO_TOPK_BALLOT=2 -DIXO_TOPK_BALLOT_STOP=32" topk-ballot-timeline.patch \
  bench_gpu_index_step ) &
wait; pack
export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu  # the test and bench binaries
gt topk-W /tmp/W/tests/gpu/test_gpu 'CudaTopk/*'
gt topk-W-tie-mutant /tmp/W/tests/gpu/test_gpu 'CudaTopk/*' IXO_TEST_MUTANT=tie_rule_reversed
gt test_gpu-W /tmp/W/tests/gpu/test_gpu '*'
gt test_gpu_graph-W /tmp/W/tests/gpu/test_gpu_graph '*'
gt test_cp_gpu-W /tmp/W/tests/cp/test_cp_gpu '*'
for tool in racecheck memcheck; do
  timeout 90 compute-sanitizer --tool $tool --error-exitcode 7 /tmp/W/tests/gpu/test_gpu \
    --gtest_filter='CudaTopk/*' --gtest_brief=1 > $R/$tool-W.log 2>&1
  echo "$tool W rc=$? $(grep -E 'SUMMARY' $R/$tool-W.log | tail -1) ($(el))" >> $s
done; pack
for r in 1 2 3 4; do step A$r /tmp/A; step V2$r /tmp/V2; step W$r /tmp/W; step S$r /tmp/S; done; pack
for v in TW; do  # the timeline CSVs land in the working directory
  mkdir -p $R/tl-$v; [[ -x /tmp/$v/bench/gpu/bench_gpu_index_step ]] || { echo "timeline $v: no binary" >> $s; continue; }
  ( cd $R/tl-$v && /tmp/$v/bench/gpu/bench_gpu_index_step --reps 20 --out st.md > st.log 2>&1 ); echo "timeline $v rc=$? ($(el))" >> $s
done
/usr/bin/env python3 $X/topk_phase_summary.py $R/tl-TW >> $s 2>&1
pack
