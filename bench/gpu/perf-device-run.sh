#!/usr/bin/env bash
# Device-side run of binaries built on the build machine (no compiler needed there):
#   bench/gpu/perf-device-run.sh <bin-dir> <out-dir> [quick|full] [ret-dir]
# ret-dir (e.g. $OUT): gets summary.log, the tables, gpu-mutation.json and logs.tar.gz of the rest.
# <bin-dir> holds bench_gpu_index_step (+ optional bench_gpu_index_step.base, an older build
# for A/B in the same run), fp8_widen_check, test_gpu, test_gpu_graph, test_kernels_cpu (the kernel
# case matrix's testbed), test_cp_gpu, ixo.
# quick: widening check, GPU tests, benchmarks. full: also test_cp_gpu, compute-sanitizer
# (memcheck, racecheck) on a few GPU cases and the GPU mutation campaign.
set -uo pipefail
bin="$1"; out="$2"; mode="${3:-quick}"; ret="${4:-}"
mkdir -p "$out" /tmp/ixo-deps
for f in .deps/*.deb; do dpkg -x "$f" /tmp/ixo-deps; done
export LD_LIBRARY_PATH="$bin/lib:/tmp/ixo-deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# Binaries carry the build machine's absolute source paths (fixtures): make them resolve.
[[ -e /work/main ]] || { mkdir -p /work && ln -sfn "$PWD" /work/main; }
s="$out/summary.log"
note() { echo "== $*" | tee -a "$s"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > "$out/machine.log" 2>&1
"$bin/fp8_widen_check" > "$out/widen.log" 2>&1; note "fp8_widen_check rc=$?: $(tr '\n' ' ' < "$out/widen.log")"
for t in test_gpu test_gpu_graph test_kernels_cpu; do
  "$bin/$t" --gtest_brief=1 > "$out/$t.log" 2>&1
  note "$t rc=$?: $(grep -E '^\[  (PASSED|FAILED)|tests? ran' "$out/$t.log" | tr '\n' ' ' | cut -c1-300)"
done
if [[ $mode == full ]]; then
  "$bin/test_cp_gpu" --gtest_brief=1 > "$out/test_cp_gpu.log" 2>&1
  note "test_cp_gpu rc=$?: $(grep -E '^\[  (PASSED|FAILED|SKIPPED)|tests? ran' "$out/test_cp_gpu.log" | tr '\n' ' ' | cut -c1-300)"
fi
"$bin/bench_gpu_index_step" --reps 50 --out "$out/perf-table.md" > "$out/bench.log" 2>&1; note "bench rc=$?"
if [[ -x "$bin/bench_gpu_index_step.v1" ]]; then
  "$bin/bench_gpu_index_step.v1" --reps 50 --out "$out/perf-table-v1.md" > "$out/bench-v1.log" 2>&1; note "bench v1 rc=$?"
fi
if [[ -x "$bin/bench_gpu_index_step.base" ]]; then
  "$bin/bench_gpu_index_step.base" --reps 50 --out "$out/perf-table-base.md" > "$out/bench-base.log" 2>&1; note "bench base rc=$?"
fi
if [[ $mode == full ]]; then
  m='Kernels/KernelMatrix.EveryBackend'  # the kernel case matrix: test_kernels_cpu's testbed
  filter="$m/exact_*:$m/dtype_*:$m/m3_km_slots_e4m3fn:$m/padding_inactive_lse_e4m3fn:$m/gqa_8_1_p4:$m/topk9_long"
  for tool in memcheck racecheck; do
    timeout 100 compute-sanitizer --tool "$tool" --error-exitcode 7 "$bin/test_kernels_cpu" --gtest_filter="$filter" \
      --gtest_brief=1 > "$out/sanitizer-$tool.log" 2>&1
    note "compute-sanitizer $tool rc=$?: $(grep -E 'ERROR SUMMARY' "$out/sanitizer-$tool.log" | tail -1) $(grep -E '^\[  (PASSED|FAILED)' "$out/sanitizer-$tool.log" | tr '\n' ' ')"
  done
  timeout 240 "$bin/ixo" mutate --backend cuda-rows --backend cuda-packed --json "$out/gpu-mutation.json" > "$out/mutate.log" 2>&1
  note "ixo mutate rc=$?: $(tail -4 "$out/mutate.log" | tr '\n' ' ' | cut -c1-400)"
fi
cat "$out/perf-table.md" 2>/dev/null | tail -7
[[ -f "$out/perf-table-v1.md" ]] && tail -5 "$out/perf-table-v1.md"
[[ -f "$out/perf-table-base.md" ]] && tail -5 "$out/perf-table-base.md"
cat "$s"
if [[ -n "$ret" ]]; then
  mkdir -p "$ret"
  for f in summary.log perf-table.md perf-table-base.md perf-table-v1.md gpu-mutation.json; do [[ -f "$out/$f" ]] && cp "$out/$f" "$ret/"; done
  tar -czf "$ret/logs.tar.gz" -C "$out" .
fi
