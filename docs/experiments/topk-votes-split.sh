#!/usr/bin/env bash
# Session 25's fifth device call (~250 s of budget left): the vote top-k as its own kernel instantiation,
# chosen at launch (IXO_TOPK_BALLOT on and topk_rows_fit_votes: NB <= 4096, topk <= 64), so the radix-only
# kernel keeps today's code for long rows. Predicted (H100): 16 x 131072 top-k alone 9.7 -> ~7.8 us,
# 32 x 524288 level with A (call 4 had +8.5 us on the packed step there).
#   bash docs/experiments/topk-votes-split.sh   (device tool, carry .deps; $OUT/all.tgz + summary.log)
# A (this tree, radix), V2 (IXO_TOPK_BALLOT=2), TV2 (V2 + topk-ballot-timeline.patch): bench first, the
# step bench A V2 x 5 interleaved, TV2's timeline, the CP bench A V2 x 2 (the candidates' split too),
# then V2's CudaTopk / test_gpu / test_cp_gpu (built meanwhile).
cd "$(dirname "$0")/../.."
VARIANT_JOBS=5; source docs/experiments/lease-lib.sh  # pack el variant step gt (session 25)
( variant A "" none bench_gpu_index_step bench_gpu_cp ) &
( variant V2 "-DIXO_TOPK_BALLOT=2" none bench_gpu_index_step bench_gpu_cp ) &
( variant TV2 "-DIXO_TOPK_TIMELINE -DIXO_TOPK_BALLOT=2" topk-ballot-timeline.patch bench_gpu_index_step ) &
wait; pack
export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu  # the test and bench binaries
( cmake --build /tmp/V2 -j12 --target test_gpu test_cp_gpu > $R/build-V2-test.log 2>&1; echo "build V2 test_gpu rc=$? ($(el))" >> $s ) &
for r in 1 2 3 4 5; do step A$r /tmp/A; step V2$r /tmp/V2; done; pack
mkdir -p $R/tl-TV2
[[ -x /tmp/TV2/bench/gpu/bench_gpu_index_step ]] && ( cd $R/tl-TV2 && /tmp/TV2/bench/gpu/bench_gpu_index_step --reps 20 \
  --out st.md > st.log 2>&1 ); echo "timeline TV2 rc=$? ($(el))" >> $s
/usr/bin/env python3 $X/topk_phase_summary.py $R/tl-TV2 >> $s 2>&1; pack
for r in 1 2; do for v in A V2; do  # the CP candidates' split (cp_cand_rows_fit_votes), twice each
  /tmp/$v/bench/gpu/bench_gpu_cp --reps 50 --out $R/cp-$v$r.md > $R/cp-$v$r.log 2>&1
  echo "cp $v$r rc=$? ($(el))" >> $s; grep -E '^\|' $R/cp-$v$r.md | tail -5 >> $s; pack
done; done
wait
for f in 'CudaTopk/*' '*'; do
  timeout 60 /tmp/V2/tests/gpu/test_gpu --gtest_filter="$f" --gtest_brief=1 > $R/test-V2.log 2>&1
  echo "test_gpu V2 '$f' rc=$? $(grep -E '^\[  (PASSED|FAILED)' $R/test-V2.log | head -2 | tr '\n' ' ') ($(el))" >> $s; pack
done
gt test_cp_gpu-V2 /tmp/V2/tests/cp/test_cp_gpu '*'; pack
