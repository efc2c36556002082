#!/usr/bin/env bash
# Historical: run on 01e1041 (the change is now docs/experiments/topk-wide-cta.patch, `git apply` first).
# Session 21's third device call: the top-k CTA at 1024 threads for rows of more than 512 blocks (one
# key a thread for a 1024-block row; topk_kernel.cuh kTopkThreadsWide) against 256 always (A =
# .deps/base-src, the tree before), beside
# the GPU gate on this tree (build, ctest -L cuda, -L python, the perf gate), then compute-sanitizer
# racecheck / memcheck of the top-k test and the gate's sanitizer stage (racecheck, memcheck) until 480 s.
#   bash docs/experiments/topk-threads-ab.sh   (device tool, carry .deps; $OUT/all.tgz + summary.log)
cd "$(dirname "$0")/../.."
: "${OUT:?}"; R=/tmp/R; mkdir -p $R; t0=$(date +%s); s=$R/summary.log
pack() { tar -czf $OUT/all.tgz -C $R . 2>/dev/null; cp $s $OUT/summary.log; }
deps=/tmp/ixo-deps; mkdir -p $deps; for f in .deps/*.deb; do dpkg -x "$f" $deps; done
nv=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
( cmake -S .deps/base-src -B /tmp/A -G Ninja -DCMAKE_BUILD_TYPE=Release -DIXO_CUDA=ON -DCMAKE_CUDA_COMPILER=$nv \
    -DCMAKE_CUDA_ARCHITECTURES=90a -DCMAKE_PREFIX_PATH=$deps/usr -DEigen3_DIR=$deps/usr/share/eigen3/cmake \
    -DGTest_DIR=$deps/usr/lib/x86_64-linux-gnu/cmake/GTest > /tmp/conf-A.log 2>&1 &&
  cmake --build /tmp/A -j3 --target bench_gpu_index_step > /tmp/build-A.log 2>&1; echo "build A rc=$? ($(( $(date +%s) - t0 )) s)" >> $s ) &
STAGES="build test python perfgate" JOBS=12 PERF_COMMIT="${PERF_COMMIT:-session21}" bash ci/gpu-check.sh "$R" > $R/gate.out 2>&1
echo "gate rc=$? ($(( $(date +%s) - t0 )) s)" >> $s; wait; pack
export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu
step() {  # run-name build-dir
  [[ -x $2/bench/gpu/bench_gpu_index_step ]] || { echo "step $1: no binary" >> $s; return; }
  $2/bench/gpu/bench_gpu_index_step --reps 50 --out $R/st-$1.md > $R/st-$1.log 2>&1; echo "step $1 rc=$?" >> $s
  grep -E ' us, packed ' $R/st-$1.log >> $s; pack
}
step A1 /tmp/A; step B1 build; step A2 /tmp/A; step B2 build
for tool in racecheck memcheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 7 build/tests/gpu/test_gpu --gtest_filter='CudaTopk/*' \
    --gtest_brief=1 > $R/san-topk-$tool.log 2>&1
  echo "topk $tool rc=$? $(grep SUMMARY $R/san-topk-$tool.log | tail -1)" >> $s
done
pack; SAN_TOOLS="racecheck memcheck" SAN_UNTIL=$(( t0 + 480 )) STAGES=sanitize bash ci/gpu-check.sh "$R" >> $R/gate.out 2>&1
echo "sanitize rc=$? ($(( $(date +%s) - t0 )) s)" >> $s
cp /tmp/build-*.log /tmp/conf-*.log $R/ 2>/dev/null; pack
