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
( variant A "" none bench_gpu_index_step ) &
( variant V2 "-DIXO_TOPK_BALLOT=2" none bench_gpu_index_step ) &
( variant W "-DIXO_TOPK_BALLOT=2 -DIXO_TOPK_BALLOT_STOP=32" none bench_gpu_index_step test_gpu test_gpu_graph test_cp_gpu ) &
( variant S "-DIXO_TOPK_BALLOT=1 -DIXO_TOPK_BALLOT_STOP=32" none bench_gpu_index_step ) &
( variant TW "-DIXO_TOPK_TIMELINE -DIXO_TOPK_BALLOT=2 -DIXO_TOPK_BALLOT_STOP=32" topk-ballot-timeline.patch \
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
