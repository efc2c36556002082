#!/usr/bin/env bash
# Historical: IXO_PACKED_CLAIMS left the tree after this run; it runs as written on commit d0d76cb.
# Session 20's second device call: the GPU gate on the new default (IXO_BF16_PACKED_WAVE=1) and,
# beside it, variant K = work claims on the chunk plan's CTAs (-DIXO_PACKED_CLAIMS=2: equal CTAs a
# program, so the claims only even out rates inside a program; variant C of start-chain-ab.sh put
# 17 and 16 CTAs on a program and lost), step bench W K W K after the gate's benchmarks.
#   bash docs/experiments/session20-gate.sh   (device tool, carry .deps; everything lands in $OUT/all.tgz)
cd "$(dirname "$0")/../.."
R="${OUT:?}"; t0=$(date +%s); s=$R/summary.log
deps=/tmp/ixo-deps; mkdir -p $deps; for f in .deps/*.deb; do dpkg -x "$f" $deps; done
nv=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc); F="-DIXO_PACKED_CLAIMS=2"
( cmake -S . -B /tmp/K -G Ninja -DCMAKE_BUILD_TYPE=Release -DIXO_CUDA=ON -DCMAKE_CUDA_COMPILER=$nv \
    -DCMAKE_CUDA_ARCHITECTURES=90a -DCMAKE_PREFIX_PATH=$deps/usr -DEigen3_DIR=$deps/usr/share/eigen3/cmake \
    -DGTest_DIR=$deps/usr/lib/x86_64-linux-gnu/cmake/GTest "-DCMAKE_CUDA_FLAGS=$F" "-DCMAKE_CXX_FLAGS=$F" > /tmp/conf-K.log 2>&1 &&
  cmake --build /tmp/K -j2 --target bench_gpu_index_step > /tmp/build-K.log 2>&1; echo "build K rc=$? ($(( $(date +%s) - t0 )) s)" >> $s ) &
STAGES="build test perfgate python" JOBS=14 PERF_COMMIT="${PERF_COMMIT:-session20}" bash ci/gpu-check.sh "$R" > $R/gate.out 2>&1
echo "gate rc=$? ($(( $(date +%s) - t0 )) s)" >> $s; wait
export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu
for r in W1 K1 W2 K2; do b=build; [[ $r == K* ]] && b=/tmp/K
  [[ -x $b/bench/gpu/bench_gpu_index_step ]] || continue
  $b/bench/gpu/bench_gpu_index_step --reps 50 --out $R/st-$r.md > $R/st-$r.log 2>&1; echo "step $r rc=$?" >> $s
  grep -E '^\| (16|32) req x [0-9]+ \|' $R/st-$r.md | cut -d'|' -f2-8 >> $s; done
SAN_UNTIL=$(( t0 + 585 )) STAGES=sanitize bash ci/gpu-check.sh "$R" >> $R/gate.out 2>&1
echo "sanitize rc=$? ($(( $(date +%s) - t0 )) s)" >> $s
cp /tmp/build-K.log $R/ 2>/dev/null; (cd $R && tar -czf /tmp/all.tgz --exclude=all.tgz . && mv /tmp/all.tgz $R/ && find . -type f ! -name all.tgz ! -name summary.log -delete)
