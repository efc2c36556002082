#!/usr/bin/env bash
# Nsight Compute profile of the index-step kernels on the GPU machine (issue 12: profile
# before changing). Builds the two GPU benchmarks (ci/gpu-check.sh build stage), then
# profiles the first launches of each kernel in the quick shapes (16 x 131072, bf16 and
# e4m3fn K): per-row and packed score kernels, top-k, and the CP candidates + merge kernels.
# Writes ncu-*.csv (raw metrics) and ncu-summary.txt to $1 (else $OUT).
#   Usage: bash bench/gpu/profile-ncu.sh $OUT     (needs .deps/, see ci/gpu-check.sh)
#          LATENCY_ONLY=latency/b1/ctx4K/H1/bf16/ bash bench/gpu/profile-ncu.sh $OUT   (+ one latency case)
set -uo pipefail
out="${1:-${OUT:-$PWD/ncu-out}}"
mkdir -p "$out"
need="bench_gpu_index_step bench_gpu_cp bench_gpu_latency"
source "$(dirname "$0")/ncu-env.sh" || { echo "no ncu or build failed" | tee "$out/ncu-summary.txt"; exit 1; }
# What bounds a kernel: DRAM and SM throughput (% of peak), achieved occupancy, issue-slot
# use, bytes in flight proxies (long-scoreboard stalls), L2 hit rate, waves per SM.
metrics=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum
metrics+=,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active
metrics+=,sm__inst_issued.avg.pct_of_peak_sustained_active,lts__t_sector_hit_rate.pct
metrics+=,smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_barrier.ratio
metrics+=,smsp__average_warp_latency_issue_stalled_math_pipe_throttle.ratio,smsp__average_warp_latency_issue_stalled_wait.ratio
metrics+=,launch__grid_size,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__registers_per_thread
metrics+=,launch__waves_per_multiprocessor,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
metrics+=,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active
prof() {  # name, binary args..., kernel regex, count
  local name=$1 regex=$2 count=$3; shift 3
  timeout 240 "$ncu_bin" --graph-profiling node --kernel-name "regex:$regex" --launch-count "$count" \
    --metrics "$metrics" --csv --page raw "$@" > "$out/ncu-$name.csv" 2> "$out/ncu-$name.err"
  echo "ncu $name rc=$?" >> "$out/ncu-summary.txt"
}
prof index-step 'score_mma_kernel|topk_kernel' 12 "$B/bench/gpu/bench_gpu_index_step" --quick --reps 2
prof cp 'cp_' 12 "$B/bench/gpu/bench_gpu_cp" --reps 2
# One latency case (LATENCY_ONLY, a gate name prefix, e.g. latency/b1/ctx4K/H1/bf16/): its first
# per-row and packed steps (score + top-k kernels), the small-batch start-up cost of issue 27.
latency_csv=()
if [[ -n "${LATENCY_ONLY:-}" ]]; then
  prof latency 'score_|topk_' 8 "$B/bench/gpu/bench_gpu_latency" --only "$LATENCY_ONLY" --reps 1 --calls 1
  latency_csv=("$out/ncu-latency.csv")
fi
# A compact table per kernel launch (bench/gpu/ncu_table.py).
/usr/bin/env python3 "$root/bench/gpu/ncu_table.py" "$out"/ncu-index-step.csv "$out"/ncu-cp.csv "${latency_csv[@]}" >> "$out/ncu-summary.txt"
cat "$out/ncu-summary.txt"
