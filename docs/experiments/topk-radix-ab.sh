#!/usr/bin/env bash
# Session 21's device call: the radix select with two barriers a pass, warp-aggregated counts and
# an early stop (radix_select.cuh) against the tree before it, in one lease, beside the GPU gate.
#   bash docs/experiments/topk-radix-ab.sh   (device tool, carry .deps; .deps/base-src = `git archive`
#   of the base commit; everything lands in $OUT/all.tgz, summary.log beside it)
# B also skips the fp8 decode table build where no widening reads it (indexer_kernels.cuh: e4m3fn / e5m2
# start without it and its barrier; the fp8 score-alone column of A vs B measures that alone).
# Builds: B = this tree (the gate's build), A = .deps/base-src, E = B with -DIXO_TOPK_EARLY_EXIT=0,
# G = B with -DIXO_TOPK_AGGREGATE=0 (A, E, G: the benchmarks only, in the background).
# Runs: the gate's build and tests (ctest -L cuda incl. test_gpu's CudaTopk and
# mutant.topk_early_exit_partial_bin), step bench A B A B (all shapes) and E G B (--quick), CP bench
# A B, racecheck / memcheck of the new top-k test, then the gate's sanitizer stage until 570 s.
# (The perf gate and -L python: a second call.) Logs in /tmp/R, packed into $OUT/all.tgz at each step.
cd "$(dirname "$0")/../.."
: "${OUT:?}"; R=/tmp/R; mkdir -p $R; t0=$(date +%s); s=$R/summary.log
pack() { tar -czf $OUT/all.tgz -C $R . 2>/dev/null; cp $s $OUT/summary.log; }
deps=/tmp/ixo-deps; mkdir -p $deps; for f in .deps/*.deb; do dpkg -x "$f" $deps; done
nv=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
variant() {  # name source-dir flags targets...
  local n=$1 src=$2 F=$3; shift 3
  cmake -S "$src" -B /tmp/$n -G Ninja -DCMAKE_BUILD_TYPE=Release -DIXO_CUDA=ON -DCMAKE_CUDA_COMPILER=$nv \
    -DCMAKE_CUDA_ARCHITECTURES=90a -DCMAKE_PREFIX_PATH=$deps/usr -DEigen3_DIR=$deps/usr/share/eigen3/cmake \
    -DGTest_DIR=$deps/usr/lib/x86_64-linux-gnu/cmake/GTest "-DCMAKE_CUDA_FLAGS=$F" "-DCMAKE_CXX_FLAGS=$F" \
    > /tmp/conf-$n.log 2>&1 && cmake --build /tmp/$n -j2 --target "$@" > /tmp/build-$n.log 2>&1
  echo "build $n rc=$? ($(( $(date +%s) - t0 )) s)" >> $s
}
( variant A .deps/base-src "" bench_gpu_index_step bench_gpu_cp ) &
( variant E . "-DIXO_TOPK_EARLY_EXIT=0" bench_gpu_index_step ) &
( variant G . "-DIXO_TOPK_AGGREGATE=0" bench_gpu_index_step ) &
STAGES="build test" JOBS=10 PERF_COMMIT="${PERF_COMMIT:-session21}" bash ci/gpu-check.sh "$R" > $R/gate.out 2>&1
echo "gate rc=$? ($(( $(date +%s) - t0 )) s)" >> $s; wait; pack
export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu
step() {  # run-name build-dir [flags]
  local r=$1 b=$2; shift 2
  [[ -x $b/bench/gpu/bench_gpu_index_step ]] || { echo "step $r: no binary" >> $s; return; }
  $b/bench/gpu/bench_gpu_index_step --reps 50 "$@" --out $R/st-$r.md > $R/st-$r.log 2>&1; echo "step $r rc=$?" >> $s
  grep -E ' us, packed ' $R/st-$r.log >> $s; pack
}
step A1 /tmp/A; step B1 build; step A2 /tmp/A; step B2 build
step E1 /tmp/E --quick; step G1 /tmp/G --quick; step B3 build --quick
for r in A B; do b=build; [[ $r == A ]] && b=/tmp/A
  [[ -x $b/bench/gpu/bench_gpu_cp ]] && { $b/bench/gpu/bench_gpu_cp --out $R/cp-$r.md > $R/cp-$r.log 2>&1; echo "cp $r rc=$?" >> $s; }
done
echo "benches done ($(( $(date +%s) - t0 )) s)" >> $s
for tool in racecheck memcheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 7 build/tests/gpu/test_gpu --gtest_filter='CudaTopk/*' \
    --gtest_brief=1 > $R/san-topk-$tool.log 2>&1
  echo "topk $tool rc=$? $(grep SUMMARY $R/san-topk-$tool.log | tail -1)" >> $s
done
pack; SAN_UNTIL=$(( t0 + 570 )) STAGES=sanitize bash ci/gpu-check.sh "$R" >> $R/gate.out 2>&1
echo "sanitize rc=$? ($(( $(date +%s) - t0 )) s)" >> $s
cp /tmp/build-*.log /tmp/conf-*.log $R/ 2>/dev/null; pack
