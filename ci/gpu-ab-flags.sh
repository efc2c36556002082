#!/usr/bin/env bash
# One-lease A/B of CUDA compile flags on the GPU machine (session 14: the fp8 ring depth, the bf16
# split path): A = this tree, B = this tree with BFLAGS added to CMAKE_CUDA_FLAGS and CMAKE_CXX_FLAGS (a
# plans.hpp knob such as IXO_FP8_CTAS_PER_SM must reach the host launcher and the CPU twin too). Builds both
# side by side (B also test_kernels_cpu, whose testbed then judges B's CUDA backends), runs
# bench_gpu_index_step A, B, A, B and bench_gpu_cp A, B (--reps 50), then B's testbed rows.
#   BFLAGS="-DIXO_MMA_STAGES_FP8=2" bash ci/gpu-ab-flags.sh $OUT      (with the device tool, carry .deps)
# Writes $1/summary.log (the step tables' rows inline) and $1/ab.tgz (every table and log).
set -uo pipefail
res="${1:?usage: BFLAGS=... ci/gpu-ab-flags.sh OUT_DIR}"; mkdir -p "$res"
: "${BFLAGS:?set BFLAGS, e.g. BFLAGS=-DIXO_MMA_STAGES_FP8=2}"
work="$(mktemp -d /tmp/gpu-ab-flags.XXXXXX)"; s="$res/summary.log"; t0=$SECONDS
trap 'tar -czf "$res/ab.tgz" -C "$work" --exclude=./A --exclude=./B . 2>/dev/null' EXIT
deps=/tmp/ixo-deps; mkdir -p $deps; for f in .deps/*.deb; do dpkg -x "$f" $deps; done
export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu
nv=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
conf() {  # BUILD_DIR CUDA_FLAGS NAME EXTRA_TARGETS
  cmake -S . -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=Release -DIXO_CUDA=ON -DCMAKE_CUDA_COMPILER=$nv \
    -DCMAKE_CUDA_ARCHITECTURES=90a -DCMAKE_PREFIX_PATH=$deps/usr -DEigen3_DIR=$deps/usr/share/eigen3/cmake \
    -DGTest_DIR=$deps/usr/lib/x86_64-linux-gnu/cmake/GTest "-DCMAKE_CUDA_FLAGS=$2" "-DCMAKE_CXX_FLAGS=$2" > "$work/conf-$3.log" 2>&1 &&
    cmake --build "$1" -j8 --target bench_gpu_index_step bench_gpu_cp $4 > "$work/build-$3.log" 2>&1
  echo "== build $3 rc=$? at $((SECONDS - t0)) s" >> "$s"
}
conf "$work/A" "" A "" & conf "$work/B" "$BFLAGS" B test_kernels_cpu & wait
for r in A B A2 B2; do
  "$work/${r:0:1}/bench/gpu/bench_gpu_index_step" --reps 50 --out "$work/step-$r.md" > "$work/step-$r.log" 2>&1
  echo "== step $r rc=$? at $((SECONDS - t0)) s" >> "$s"
  grep -E '^\| (16|32) req' "$work/step-$r.md" | cut -d'|' -f2-7 >> "$s"
done
for r in A B; do
  "$work/$r/bench/gpu/bench_gpu_cp" --reps 50 --out "$work/cp-$r.md" > "$work/cp-$r.log" 2>&1
  echo "== cp $r rc=$?" >> "$s"
done
"$work/B/tests/kernels/test_kernels_cpu" --gtest_filter='*KernelMatrix*:*TilingEdges*' --gtest_brief=1 > "$work/testbed-B.log" 2>&1
echo "== B testbed rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$work/testbed-B.log" | tr '\n' ' ')" >> "$s"
