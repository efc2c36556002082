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
: "${OUT:?}"; R=/tmp/R; mkdir -p $R; t0=$(date +%s); s=$R/summary.log
pack() { tar -czf $OUT/all.tgz -C $R . 2>/dev/null; cp $s $OUT/summary.log; }
el() { echo "$(( $(date +%s) - t0 )) s"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> $s 2>&1
deps=/tmp/ixo-deps; mkdir -p $deps; for f in .deps/*.deb; do dpkg -x "$f" $deps; done
nv=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
X=docs/experiments
variant() {  # name flags patches(comma list or none) targets...
  local n=$1 F=$2 ps=$3; shift 3
  rm -rf /tmp/$n-src && mkdir -p /tmp/$n-src && tar -c --exclude=./build --exclude=./.deps . | tar -x -C /tmp/$n-src
  if [[ $ps != none ]]; then
    for p in ${ps//,/ }; do
      patch -d /tmp/$n-src -p1 < $X/$p >> $R/patch-$n.log 2>&1 || { echo "build $n: $p did not apply" >> $s; return 1; }
    done
  fi
  cmake -S /tmp/$n-src -B /tmp/$n -G Ninja -DCMAKE_BUILD_TYPE=Release -DIXO_CUDA=ON -DCMAKE_CUDA_COMPILER=$nv \
    -DCMAKE_CUDA_ARCHITECTURES=90a -DCMAKE_PREFIX_PATH=$deps/usr -DEigen3_DIR=$deps/usr/share/eigen3/cmake \
    -DGTest_DIR=$deps/usr/lib/x86_64-linux-gnu/cmake/GTest "-DCMAKE_CUDA_FLAGS=$F" "-DCMAKE_CXX_FLAGS=$F" \
    > $R/conf-$n.log 2>&1 && cmake --build /tmp/$n -j3 --target "$@" > $R/build-$n.log 2>&1
  echo "build $n rc=$? ($(el))" >> $s
}
( variant A "" none bench_gpu_index_step bench_gpu_cp ) &
( variant V1 "-DIXO_TOPK_BALLOT=1" none bench_gpu_index_step bench_gpu_cp test_gpu test_gpu_graph test_cp_gpu ) &
( variant V2 "-DIXO_TOPK_BALLOT=2" none bench_gpu_index_step ) &
( variant S32 "-DIXO_TOPK_BALLOT=1 -DIXO_TOPK_BALLOT_STOP=32" none bench_gpu_index_step bench_gpu_cp test_gpu test_cp_gpu ) &
( variant S64 "-DIXO_TOPK_BALLOT=1 -DIXO_TOPK_BALLOT_STOP=64" none bench_gpu_index_step ) &
( variant TV1 "-DIXO_TOPK_TIMELINE -DIXO_TOPK_BALLOT=1" topk-ballot-timeline.patch bench_gpu_index_step ) &
( variant TS32 "-DIXO_TOPK_TIMELINE -DIXO_TOPK_BALLOT=1 -DIXO_TOPK_BALLOT_STOP=32" topk-ballot-timeline.patch \
  bench_gpu_index_step ) &
wait; pack
export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu
gt() {  # log-name binary filter [env]
  [[ -x $2 ]] || { echo "$1: no binary" >> $s; return; }
  env ${4:-IXO_NONE=1} timeout 240 $2 --gtest_filter="$3" --gtest_brief=1 > $R/$1.log 2>&1
  echo "$1 rc=$? $(grep -E '^\[  (PASSED|FAILED)' $R/$1.log | head -2 | tr '\n' ' ') ($(el))" >> $s
}
step() {  # run-name build-dir
  [[ -x $2/bench/gpu/bench_gpu_index_step ]] || { echo "step $1: no binary" >> $s; return; }
  $2/bench/gpu/bench_gpu_index_step --reps 50 --out $R/st-$1.md > $R/st-$1.log 2>&1; echo "step $1 rc=$? ($(el))" >> $s
  grep -E ' us, packed ' $R/st-$1.log >> $s
}
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
