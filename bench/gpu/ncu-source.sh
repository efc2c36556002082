#!/usr/bin/env bash
# Where the packed score kernel's warps stall, per SASS instruction (issue 12's open limiter):
# one Nsight Compute profile with PC sampling (SourceCounters, WarpStateStats) and the
# memory tables of one launch, exported as the source page (SASS) and the details page,
# then summarized by bench/gpu/ncu_source_summary.py.
#   bash bench/gpu/ncu-source.sh $OUT            (on the GPU machine; needs .deps/, see ci/gpu-check.sh)
#   KERNEL='score_mma_kernel<\(int\)128, \(int\)0, \(bool\)1>'   demangled-name regex (default: packed
#     bf16, D 128; ncu writes template arguments with their types, as in its "Available Kernels")
#   ARGS='--quick --reps 2'                       bench_gpu_index_step arguments (e.g. add --chunks 16)
#   NCU_FLAGS="--clock-control none"              more ncu options (default: ncu locks the clocks to base)
# Writes ncu-source.csv, ncu-details.csv, ncu-raw.csv (every metric collected), ncu-source-summary.md and the
# .ncu-rep to $1.
set -uo pipefail
out="${1:-${OUT:-$PWD/ncu-source-out}}"
mkdir -p "$out"
need="bench_gpu_index_step"
source "$(dirname "$0")/ncu-env.sh" || { echo "no ncu or build failed" | tee "$out/ncu-source-summary.md"; exit 1; }
timeout 300 "$ncu_bin" --graph-profiling node --kernel-name-base demangled ${NCU_FLAGS:-} \
  --kernel-name "regex:${KERNEL:-score_mma_kernel<\(int\)128, \(int\)0, \(bool\)1>}" --launch-count 1 \
  --section SourceCounters --section WarpStateStats --section MemoryWorkloadAnalysis_Tables \
  --section SpeedOfLight --section Occupancy -f -o "$out/ncu-source" \
  "$B/bench/gpu/bench_gpu_index_step" ${ARGS:---quick --reps 2} > "$out/ncu-profile.log" 2>&1
echo "ncu profile rc=$?" | tee "$out/ncu-source-summary.md"
# ncu exits 0 when the regex matched nothing: say so, with the names it offers.
if [[ ! -s "$out/ncu-source.ncu-rep" ]]; then
  { echo "no kernel matched KERNEL; ncu's list:"; sed -n '/Available Kernels/,$p' "$out/ncu-profile.log"; } | tee -a "$out/ncu-source-summary.md"
  exit 1
fi
"$ncu_bin" -i "$out/ncu-source.ncu-rep" --page source --csv --print-source sass > "$out/ncu-source.csv" 2> "$out/ncu-export.err"
"$ncu_bin" -i "$out/ncu-source.ncu-rep" --page details --csv > "$out/ncu-details.csv" 2>> "$out/ncu-export.err"
"$ncu_bin" -i "$out/ncu-source.ncu-rep" --page raw --csv > "$out/ncu-raw.csv" 2>> "$out/ncu-export.err"
/usr/bin/env python3 "$root/bench/gpu/ncu_source_summary.py" "$out/ncu-source.csv" --top 30 >> "$out/ncu-source-summary.md" 2>&1
cat "$out/ncu-source-summary.md"
