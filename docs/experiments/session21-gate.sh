#!/usr/bin/env bash
# Session 21's second device call: the GPU gate on the final tree (the kernels of 9dbb922 = d0d76cb's
# PTX, plus the new top-k test CudaTopk/TopkRadix and its ctest mutant.tie_rule_reversed) and, beside
# it, variant T = topk-timeline.patch (-DIXO_TOPK_TIMELINE: per-CTA stamps of the last replayed packed
# step's score and top-k kernels), summarized by topk_timeline_summary.py.
#   bash docs/experiments/session21-gate.sh   (device tool, carry .deps; $OUT/all.tgz + summary.log)
cd "$(dirname "$0")/../.."
: "${OUT:?}"; R=/tmp/R; mkdir -p $R; t0=$(date +%s); s=$R/summary.log
pack() { tar -czf $OUT/all.tgz -C $R . 2>/dev/null; cp $s $OUT/summary.log; }
deps=/tmp/ixo-deps; mkdir -p $deps; for f in .deps/*.deb; do dpkg -x "$f" $deps; done
nv=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc); F="-DIXO_TOPK_TIMELINE"
( rm -rf /tmp/T-src && mkdir -p /tmp/T-src && tar -c --exclude=./build --exclude=./.deps . | tar -x -C /tmp/T-src &&
  patch -d /tmp/T-src -p1 < docs/experiments/topk-timeline.patch > /tmp/patch-T.log 2>&1 &&
  cmake -S /tmp/T-src -B /tmp/T -G Ninja -DCMAKE_BUILD_TYPE=Release -DIXO_CUDA=ON -DCMAKE_CUDA_COMPILER=$nv \
    -DCMAKE_CUDA_ARCHITECTURES=90a -DCMAKE_PREFIX_PATH=$deps/usr -DEigen3_DIR=$deps/usr/share/eigen3/cmake \
    -DGTest_DIR=$deps/usr/lib/x86_64-linux-gnu/cmake/GTest "-DCMAKE_CUDA_FLAGS=$F" "-DCMAKE_CXX_FLAGS=$F" > /tmp/conf-T.log 2>&1 &&
  cmake --build /tmp/T -j3 --target bench_gpu_index_step > /tmp/build-T.log 2>&1; echo "build T rc=$? ($(( $(date +%s) - t0 )) s)" >> $s ) &
STAGES="build test python perfgate" JOBS=12 PERF_COMMIT="${PERF_COMMIT:-session21}" bash ci/gpu-check.sh "$R" > $R/gate.out 2>&1
echo "gate rc=$? ($(( $(date +%s) - t0 )) s)" >> $s; wait; pack
export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu
if [[ -x /tmp/T/bench/gpu/bench_gpu_index_step ]]; then
  mkdir -p $R/tl && (cd $R/tl && /tmp/T/bench/gpu/bench_gpu_index_step --reps 20 --out st-T.md > st-T.log 2>&1; echo "step T rc=$?" >> $s)
  grep -E ' us, packed ' $R/tl/st-T.log >> $s
  python3 docs/experiments/topk_timeline_summary.py $R/tl >> $s 2>&1
  (cd $R/tl && tar -czf ../tl-csv.tgz *.csv && rm -f *.csv)
fi
pack
timeout 60 compute-sanitizer --tool racecheck --error-exitcode 7 build/tests/gpu/test_gpu --gtest_filter='CudaTopk/*' \
  --gtest_brief=1 > $R/san-topk-racecheck.log 2>&1
echo "topk racecheck rc=$? $(grep SUMMARY $R/san-topk-racecheck.log | tail -1)" >> $s; pack
SAN_UNTIL=$(( t0 + 575 )) STAGES=sanitize bash ci/gpu-check.sh "$R" >> $R/gate.out 2>&1
echo "sanitize rc=$? ($(( $(date +%s) - t0 )) s)" >> $s
cp /tmp/build-*.log /tmp/conf-*.log /tmp/patch-T.log $R/ 2>/dev/null; pack
