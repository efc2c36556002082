#!/usr/bin/env bash
# What a GPU kernel engineer sees when a GPU test fails (issue 24, "one failure culture"):
# breaks the CUDA max on purpose (score_state.cuh nan_max: every max step x 1.0625, the CPU
# twin untouched), rebuilds test_kernels_cpu and ixo, runs one kernel-matrix row (every backend), then shows the
# saved case directory, its failure.txt, twin_diff.txt, and replays it with the printed
# commands; restores the source and rebuilds at the end. Needs a CUDA build (ci/gpu-check.sh
# STAGES=build) and a GPU. Usage: tests/gpu/broken_kernel_demo.sh OUT_DIR
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${1:?usage: broken_kernel_demo.sh OUT_DIR}"
mkdir -p "$out"
B="$root/build"
f="$root/kernels/gpu/score_state.cuh"
grep -q '^  return r;$' "$f" || { echo "the line to break is gone from $f"; exit 3; }
cp "$f" "$out/score_state.cuh.orig"
restore() { cp "$out/score_state.cuh.orig" "$f"; cmake --build "$B" -j"$(nproc)" --target test_kernels_cpu ixo > "$out/demo-restore.log" 2>&1; }
trap restore EXIT
sed -i 's/^  return r;$/  return r * 1.0625f;  \/\/ DEMO: broken on purpose/' "$f"
cmake --build "$B" -j"$(nproc)" --target test_kernels_cpu ixo > "$out/demo-build.log" 2>&1 || { tail -20 "$out/demo-build.log"; exit 3; }
export IXO_TEST_FAILURES="$out/failures"
"$B/tests/kernels/test_kernels_cpu" --gtest_filter='Kernels/KernelMatrix.EveryBackend/straddle_plus1' > "$out/demo-gtest.log" 2>&1
echo "== gtest exit $? (1 expected); its failure message:"
grep -E "case saved|replay:|first failing|diff:|twin diff" "$out/demo-gtest.log" | head -12
dir=$(ls -d "$out"/failures/cuda-rows-* 2>/dev/null | head -1)
[[ -n $dir ]] || { echo "no saved case for cuda-rows"; exit 1; }
echo "== $dir:"; ls "$dir"
echo "== twin_diff.txt:"; cat "$dir/twin_diff.txt"
echo "== replay (ixo check DIR --backend cuda-rows), broken build:"
"$B/tools/ixo/ixo" check "$dir" --backend cuda-rows | tail -3; echo "exit ${PIPESTATUS[0]}"
echo "== ixo diff DIR --backend cpu-rows --backend cuda-rows:"
"$B/tools/ixo/ixo" diff "$dir" --backend cpu-rows --backend cuda-rows; echo "exit $?"
