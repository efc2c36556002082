#!/usr/bin/env bash
# CP device check on a CUDA machine with 2+ GPUs (the H200 x2 kind), running the CP binaries
# built on the Debian build machine (build-cp: test_cp, test_cp_gpu, ixo_cp_nccl,
# bench_gpu_cp; sm_90a + sm_100a, cudart static; libnccl.so.2 is found on the machine).
#   1. ctest -L cp in build-cp/tests/cp (CPU twin + cuda-cp tests) and kernels/gpu/nccl
#      (the two-process NCCL run == single-process simulation);
#   2. the NCCL run with step timings (all-gathers included);
#   3. compute-sanitizer memcheck on small cuda-cp cases;
#   4. the CP benchmark (bench_gpu_cp) -> cp-perf.md.
# ctest files hold /work/main/build-cp paths: /work/main is linked to this checkout.
# Logs go to $1, else $OUT, else ./cp-device-out. NVLink multicast stays off.
set -uo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
out="${1:-${OUT:-$root/cp-device-out}}"
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
B="$root/build-cp"
nccl="$(find /usr/local/cuda* /usr/lib /opt -name 'libnccl.so.2' 2>/dev/null | head -1)"
[[ -n "$nccl" ]] && export LD_LIBRARY_PATH="$(dirname "$nccl")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if [[ ! -e /work/main/build-cp ]]; then mkdir -p /work && ln -sfn "$root" /work/main; fi
sum="$out/summary.log"
{ nvidia-smi -L; echo "libnccl: ${nccl:-not found}"; } > "$sum" 2>&1
note() { echo "== $*" | tee -a "$sum"; }
status=0

(cd "$B/tests/cp" && timeout "${CTEST_TIMEOUT:-150}" ctest -L cp --output-on-failure -j8) > "$out/ctest-cp.log" 2>&1
rc=$?; note "ctest -L cp (tests/cp) rc=$rc: $(grep -E 'tests passed|tests failed' "$out/ctest-cp.log" | tail -1)"
[[ $rc == 0 ]] || status=1
(cd "$B/kernels/gpu/nccl" && timeout 60 ctest -L cp --output-on-failure) >> "$out/ctest-cp.log" 2>&1
rc=$?; note "ctest -L cp (kernels/gpu/nccl) rc=$rc: $(grep -E 'tests passed|tests failed' "$out/ctest-cp.log" | tail -1)"
[[ $rc == 0 ]] || status=1

timeout 80 "$B/kernels/gpu/nccl/ixo_cp_nccl" --case rocm-bf16 --case bench-bf16 --reps 20 \
  > "$out/nccl-run.log" 2>&1
rc=$?; note "ixo_cp_nccl timing run rc=$rc: $(tail -1 "$out/nccl-run.log")"
[[ $rc == 0 ]] || status=1
grep -E '^(case|TIMING)' "$out/nccl-run.log" | tee -a "$sum"

m='Kernels/KernelMatrix.EveryBackend'  # the kernel case matrix (cuda-cp among every backend)
f="$m/exact_*:$m/dtype_*:$m/padding*:$m/odd_dim40:$m/draft*:$m/inactive"
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 7 "$B/tests/kernels/test_kernels_cpu" --gtest_filter="$f" \
  --gtest_brief=1 > "$out/memcheck.log" 2>&1
rc=$?; note "compute-sanitizer memcheck rc=$rc: $(grep -E 'ERROR SUMMARY' "$out/memcheck.log" | tail -1) $(grep -E '^\[  (PASSED|FAILED)' "$out/memcheck.log" | head -2 | tr '\n' ' ')"
[[ $rc == 0 ]] || status=1

timeout 120 "$B/bench/gpu/bench_gpu_cp" --reps "${REPS:-30}" --out "$out/cp-perf.md" > "$out/bench.log" 2>&1
note "bench_gpu_cp rc=$?"
cat "$out/cp-perf.md" 2>/dev/null | tee -a "$sum"
note "cp device check status=$status"
exit $status
