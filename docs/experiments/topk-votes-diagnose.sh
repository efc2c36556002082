#!/usr/bin/env bash
# Session 25's second device call: why the vote top-k (IXO_TOPK_BALLOT) lost in next-lease-topk.sh
# (H100, top-k alone 9.5 -> 12.3 us at 1024 keys, level at 4096), and a first fix measured beside it.
#   bash docs/experiments/topk-votes-diagnose.sh   (device tool, carry .deps; $OUT/all.tgz + summary.log)
# Variants, built side by side:
#   A = this tree (radix select); B = IXO_TOPK_BALLOT=1; V = B + ballot-radix4.patch (each warp's bound
#   searched two bits a step: 16 dependent steps instead of 32, same bound); VL = V with IXO_TOPK_BALLOT=2;
#   TA / TB / TV = A / B / V with topk-ballot-timeline.patch (per-CTA phase stamps, bench only).
# V's CudaTopk and test_gpu run before any timing; the step bench A B V VL x 3; the timelines once each;
# read with /usr/bin/python3 docs/experiments/step_ab_summary.py summary.log and
# /usr/bin/python3 docs/experiments/topk_phase_summary.py tl-TA tl-TB tl-TV (in all.tgz).
cd "$(dirname "$0")/../.."
source docs/experiments/lease-lib.sh  # pack el variant step gt (session 25)
( variant A "" none bench_gpu_index_step ) &
( variant B "-DIXO_TOPK_BALLOT=1" none bench_gpu_index_step ) &
( variant V "-DIXO_TOPK_BALLOT=1" ballot-radix4.patch bench_gpu_index_step test_gpu ) &
( variant VL "-DIXO_TOPK_BALLOT=2" ballot-radix4.patch bench_gpu_index_step ) &
( variant TA "-DIXO_TOPK_TIMELINE" topk-ballot-timeline.patch bench_gpu_index_step ) &
( variant TB "-DIXO_TOPK_TIMELINE -DIXO_TOPK_BALLOT=1" topk-ballot-timeline.patch bench_gpu_index_step ) &
( variant TV "-DIXO_TOPK_TIMELINE -DIXO_TOPK_BALLOT=1" ballot-radix4.patch,topk-ballot-timeline.patch \
  bench_gpu_index_step ) &
wait; pack
export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu  # the test and bench binaries
gt topk-V /tmp/V/tests/gpu/test_gpu 'CudaTopk/*'
gt test_gpu-V /tmp/V/tests/gpu/test_gpu '*'
timeout 90 compute-sanitizer --tool racecheck --error-exitcode 7 /tmp/V/tests/gpu/test_gpu \
  --gtest_filter='CudaTopk/*nb1024_k16:CudaTopk/*nb4096_k16:CudaTopk/*nb300_k64' --gtest_brief=1 > $R/racecheck-V.log 2>&1
echo "racecheck V rc=$? $(grep SUMMARY $R/racecheck-V.log | tail -1) ($(el))" >> $s; pack
for r in 1 2 3; do step A$r /tmp/A; step B$r /tmp/B; step V$r /tmp/V; step VL$r /tmp/VL; done; pack
for v in TA TB TV; do  # the timeline CSVs land in the working directory
  mkdir -p $R/tl-$v; [[ -x /tmp/$v/bench/gpu/bench_gpu_index_step ]] || { echo "timeline $v: no binary" >> $s; continue; }
  ( cd $R/tl-$v && /tmp/$v/bench/gpu/bench_gpu_index_step --reps 20 --out st.md > st.log 2>&1 ); echo "timeline $v rc=$? ($(el))" >> $s
done
/usr/bin/env python3 $X/topk_phase_summary.py $R/tl-TA $R/tl-TB $R/tl-TV >> $s 2>&1
pack
