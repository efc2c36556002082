#!/usr/bin/env bash
# Prepared in session 21 for the next lease (not run yet): one device call on the top-k of the step.
#   bash docs/experiments/next-lease-topk.sh   (device tool, carry .deps; $OUT/all.tgz + summary.log)
# 1. ncu's source view of the top-k alone (topk_kernel<256>, 16 x 131072 shapes): stalls per SASS
#    instruction, bench/gpu/ncu_source_summary.py (where its 3.5 us select goes, session 21).
# 2. Step bench A / P / Q / A / P / Q: A = this tree, P = topk-pdl-one-wave.patch with the score CTAs
#    triggering at their start (IXO_TOPK_PDL_EARLY=1: the 64 top-k CTAs resident from the start, their
#    plan loaded, waiting in griddepcontrol.wait; predicted -1..-1.5 us a packed step: the 0.8-1.1 us gap
#    and the 0.64 us plan of the timeline), Q = the patch without the early trigger (session 16: level).
# 3. P's and Q's GPU tests that a wrong wait would fail: test_gpu (incl. CudaTopk), test_gpu_graph.
cd "$(dirname "$0")/../.."
: "${OUT:?}"; R=/tmp/R; mkdir -p $R; t0=$(date +%s); s=$R/summary.log
pack() { tar -czf $OUT/all.tgz -C $R . 2>/dev/null; cp $s $OUT/summary.log; }
deps=/tmp/ixo-deps; mkdir -p $deps; for f in .deps/*.deb; do dpkg -x "$f" $deps; done
nv=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
variant() {  # name flags
  local n=$1 F=$2
  rm -rf /tmp/$n-src && mkdir -p /tmp/$n-src && tar -c --exclude=./build --exclude=./.deps . | tar -x -C /tmp/$n-src &&
    patch -d /tmp/$n-src -p1 < docs/experiments/topk-pdl-one-wave.patch > /tmp/patch-$n.log 2>&1 &&
    cmake -S /tmp/$n-src -B /tmp/$n -G Ninja -DCMAKE_BUILD_TYPE=Release -DIXO_CUDA=ON -DCMAKE_CUDA_COMPILER=$nv \
      -DCMAKE_CUDA_ARCHITECTURES=90a -DCMAKE_PREFIX_PATH=$deps/usr -DEigen3_DIR=$deps/usr/share/eigen3/cmake \
      -DGTest_DIR=$deps/usr/lib/x86_64-linux-gnu/cmake/GTest "-DCMAKE_CUDA_FLAGS=$F" "-DCMAKE_CXX_FLAGS=$F" \
      > /tmp/conf-$n.log 2>&1 && cmake --build /tmp/$n -j4 --target bench_gpu_index_step test_gpu test_gpu_graph \
      > /tmp/build-$n.log 2>&1
  echo "build $n rc=$? ($(( $(date +%s) - t0 )) s)" >> $s
}
( variant P "-DIXO_TOPK_PDL_EARLY=1" ) &
( variant Q "" ) &
KERNEL='topk_kernel<\(int\)256>' ARGS='--quick --reps 2' bash bench/gpu/ncu-source.sh $R/ncu > $R/ncu.out 2>&1
echo "ncu rc=$? ($(( $(date +%s) - t0 )) s)" >> $s; head -45 $R/ncu/ncu-source-summary.md >> $s 2>/dev/null; wait; pack
export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu
step() {  # run-name build-dir
  [[ -x $2/bench/gpu/bench_gpu_index_step ]] || { echo "step $1: no binary" >> $s; return; }
  $2/bench/gpu/bench_gpu_index_step --reps 50 --out $R/st-$1.md > $R/st-$1.log 2>&1; echo "step $1 rc=$?" >> $s
  grep -E ' us, packed ' $R/st-$1.log >> $s; pack
}
step A1 build; step P1 /tmp/P; step Q1 /tmp/Q; step A2 build; step P2 /tmp/P; step Q2 /tmp/Q
for n in P Q; do
  for t in test_gpu test_gpu_graph; do
    [[ -x /tmp/$n/tests/gpu/$t ]] && { timeout 200 /tmp/$n/tests/gpu/$t --gtest_brief=1 > $R/$t-$n.log 2>&1
      echo "$t $n rc=$? $(grep -E '^\[  (PASSED|FAILED)' $R/$t-$n.log | head -2 | tr '\n' ' ')" >> $s; }
  done
done
cp /tmp/build-*.log /tmp/conf-*.log /tmp/patch-*.log $R/ 2>/dev/null; pack
