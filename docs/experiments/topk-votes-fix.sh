#!/usr/bin/env bash
# (IXO_TOPK_BALLOT_STOP was removed after this call: rerunning needs ballot-early-stop.patch applied first.)
# Session 25's third device call: the vote top-k (IXO_TOPK_BALLOT) after topk-votes-diagnose.sh's
# timeline (H100, 1024 keys: bound 2.72 us, rank 3.90 us at L ~ 50, radix select + compact 4.8 us):
# the rank loop branch-free with 16-byte shared loads (in the tree), and the bound search stopped early
# (IXO_TOPK_BALLOT_STOP). Predicted top-k CTA 8.96 -> ~5.4 us (rank fix), ~4 us with the stop.
#   bash docs/experiments/topk-votes-fix.sh   (device tool, carry .deps; $OUT/all.tgz + summary.log)
# Variants: A = this tree (radix select); V1 = IXO_TOPK_BALLOT=1; V2 = 2; S32 / S64 = V1 with
# IXO_TOPK_BALLOT_STOP=32 / 64; TV1 / TS32 = V1 / S32 with topk-ballot-timeline.patch (bench only).
# V1's and S32's GPU tests before any timing; the step bench A V1 V2 S32 S64 x 3, the CP bench A V1 S32,
# the timelines; read with docs/experiments/step_ab_summary.py summary.log.
cd "$(dirname "$0")/../.."
source docs/experiments/lease-lib.sh  # pack el variant step gt (session 25)
( variant A "" none bench_gpu_index_step bench_gpu_cp ) &
( variant V1 "-DIXO_TOPK_BALLOT=1" none bench_gpu_index_step bench_gpu_cp test_gpu test_gpu_graph test_cp_gpu ) &
( variant V2 "-DIXO_TOPK_BALLOT=2" none bench_gpu_index_step ) &
( variant S32 "-DIXO_TOPK_BALLOT=1 -DIXO_TOPK_BALLOT_STOP=32" none bench_gpu_index_step bench_gpu_cp test_gpu test_cp_gpu ) &
( variant S64 "-DIXO_TOPK_BALLOT=1 -DIXO_TOPK_BALLOT_STOP=64" none bench_gpu_index_step ) &
( variant TV1 "-DIXO_TOPK_TIMELINE -DIXO_TOPK_BALLOT=1" topk-ballot-timeline.patch bench_gpu_index_step ) &
( variant TS32 "-DIXO_TOPK_TIMELINE -DIXO_TOPK_BALLOT=1 -DIXO_TOPK_BALLOT_STOP=32" topk-ballot-timeline.patch \
  bench_gpu_index_step ) &
wait; pack
export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu  # the test and bench binaries
gt topk-V1 /tmp/V1/tests/gpu/test_gpu 'CudaTopk/*'
gt topk-S32 /tmp/S32/tests/gpu/test_gpu 'CudaTopk/*'
gt topk-V1-tie-mutant /tmp/V1/tests/gpu/test_gpu 'CudaTopk/*' IXO_TEST_MUTANT=tie_rule_reversed
gt test_gpu-V1 /tmp/V1/tests/gpu/test_gpu '*'
gt test_gpu_graph-V1 /tmp/V1/tests/gpu/test_gpu_graph '*'
gt test_cp_gpu-V1 /tmp/V1/tests/cp/test_cp_gpu '*'
gt test_gpu-S32 /tmp/S32/tests/gpu/test_gpu '*'
gt test_cp_gpu-S32 /tmp/S32/tests/cp/test_cp_gpu '*'
timeout 90 compute-sanitizer --tool racecheck --error-exitcode 7 /tmp/V1/tests/gpu/test_gpu \
  --gtest_filter='CudaTopk/*nb1024_k16:CudaTopk/*nb4096_k16:CudaTopk/*nb300_k64' --gtest_brief=1 > $R/racecheck-V1.log 2>&1
echo "racecheck V1 rc=$? $(grep SUMMARY $R/racecheck-V1.log | tail -1) ($(el))" >> $s; pack
for r in 1 2 3; do step A$r /tmp/A; step V1$r /tmp/V1; step V2$r /tmp/V2; step S32$r /tmp/S32; step S64$r /tmp/S64; done; pack
for v in A V1 S32; do
  [[ -x /tmp/$v/bench/gpu/bench_gpu_cp ]] && { /tmp/$v/bench/gpu/bench_gpu_cp --reps 50 --out $R/cp-$v.md > $R/cp-$v.log 2>&1
    echo "cp $v rc=$? ($(el))" >> $s; grep -E '^\|' $R/cp-$v.md | tail -5 >> $s; pack; }
done
for v in TV1 TS32; do  # the timeline CSVs land in the working directory
  mkdir -p $R/tl-$v; [[ -x /tmp/$v/bench/gpu/bench_gpu_index_step ]] || { echo "timeline $v: no binary" >> $s; continue; }
  ( cd $R/tl-$v && /tmp/$v/bench/gpu/bench_gpu_index_step --reps 20 --out st.md > st.log 2>&1 ); echo "timeline $v rc=$? ($(el))" >> $s
done
/usr/bin/env python3 $X/topk_phase_summary.py $R/tl-TV1 $R/tl-TS32 >> $s 2>&1
pack
