#!/usr/bin/env bash
# Where the packed score kernel's warps stall, per SASS instruction (issue 12's open limiter):
# one Nsight Compute profile with PC sampling (SourceCounters, WarpStateStats) and the
# memory tables of one launch, exported as the source page (SASS) and the details page,
# then summarized by bench/gpu/ncu_source_summary.py.
#   bash bench/gpu/ncu-source.sh $OUT            (on the GPU machine; needs .deps/, see ci/gpu-check.sh)
#   KERNEL='score_mma_kernel<128, 0, (1|true)>'   demangled-name regex (default: packed bf16, D 128)
#   ARGS='--quick --reps 2'                       bench_gpu_index_step arguments (e.g. add --chunks 16)
# Writes ncu-source.csv, ncu-details.csv, ncu-source-summary.md and the .ncu-rep to $1.
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${1:-${OUT:-$root/ncu-source-out}}"
mkdir -p "$out"
B="${BUILD_DIR:-$root/build}"  # the default preset's binaryDir, where ci/gpu-check.sh builds
if [[ ! -x "$B/bench/gpu/bench_gpu_index_step" ]]; then
  STAGES=build TARGETS="bench_gpu_index_step" bash "$root/ci/gpu-check.sh" "$out/build" || exit 1
fi
export LD_LIBRARY_PATH="/tmp/ixo-deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
ncu_bin="$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)"
[[ -n "$ncu_bin" ]] || { echo "no ncu" | tee "$out/ncu-source-summary.md"; exit 1; }
timeout 300 "$ncu_bin" --graph-profiling node --kernel-name-base demangled \
  --kernel-name "regex:${KERNEL:-score_mma_kernel<128, 0, (1|true)>}" --launch-count 1 \
  --section SourceCounters --section WarpStateStats --section MemoryWorkloadAnalysis_Tables \
  --section SpeedOfLight --section Occupancy -f -o "$out/ncu-source" \
  "$B/bench/gpu/bench_gpu_index_step" ${ARGS:---quick --reps 2} > "$out/ncu-profile.log" 2>&1
echo "ncu profile rc=$?" | tee "$out/ncu-source-summary.md"
"$ncu_bin" -i "$out/ncu-source.ncu-rep" --page source --csv --print-source sass > "$out/ncu-source.csv" 2> "$out/ncu-export.err"
"$ncu_bin" -i "$out/ncu-source.ncu-rep" --page details --csv > "$out/ncu-details.csv" 2>> "$out/ncu-export.err"
/usr/bin/env python3 "$root/bench/gpu/ncu_source_summary.py" "$out/ncu-source.csv" --top 30 >> "$out/ncu-source-summary.md" 2>&1
cat "$out/ncu-source-summary.md"
