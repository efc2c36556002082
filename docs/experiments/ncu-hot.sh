#!/usr/bin/env bash
# Session 38: where the packed e4m3fn score kernel's warps stall with K hot in L2 (bench_gpu_index_step --hot-k: the
# SM-bound regime of the H200's cold step, on any card; data/s38-hot-k-h100: hot 80-82 us a step on an H100, cold
# 110-113), beside the same kernel cold. bench/gpu/ncu-source.sh (PC sampling per SASS instruction, warp states,
# speed of light) on the first packed e4m3fn launch (D 128), clocks not locked and caches not flushed (ncu's default
# flush would make hot K cold), with the pipes' utilization (ComputeWorkloadAnalysis, InstructionStats, the raw
# page). WITH_BF16=1: a bf16 hot profile last; COLD=0 skips the cold one. Needs ncu on the card.
# Session 39: the profiles stay in /tmp/ncu (the device returns 8 files at most: session 38 lost its hot source page);
# each run returns NAME-source-summary.md (stalls, then warp executions per opcode: what a trim would remove),
# NAME-source.csv.gz (the SASS page, per instruction) and NAME-raw.csv.gz: two runs fit the limit, so with
# WITH_BF16=1 pass COLD=0.
#   bash docs/experiments/ncu-hot.sh   (device tool, carry .deps; $OUT/summary.log, $OUT/{hot,cold}-fp8-*)
cd "$(dirname "$0")/../.."
: "${OUT:?}"; rm -rf /tmp/ncu; mkdir -p /tmp/ncu
s=$OUT/summary.log; t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> $s 2>&1
ncu_run() {  # ncu_run NAME KC ARGS
  KERNEL="score_mma_kernel<\(int\)128, \(int\)$2, \(bool\)1" ARGS="$3" \
    NCU_FLAGS='--clock-control none --cache-control none --section ComputeWorkloadAnalysis --section InstructionStats' \
    bash bench/gpu/ncu-source.sh /tmp/ncu/$1 > /tmp/ncu/$1.log 2>&1
  echo "== $1 ($3) rc=$? ($(( $(date +%s) - t0 )) s)" >> $s
  local d=/tmp/ncu/$1
  cp $d/ncu-source-summary.md $OUT/$1-source-summary.md 2>/dev/null
  for f in source raw; do gzip -c $d/ncu-$f.csv > $OUT/$1-$f.csv.gz 2>/dev/null; done
  # the pipes' utilization (sm__inst_executed_pipe_*, sm__pipe_*_cycles_active) from ncu-source.sh's raw page
  /usr/bin/env python3 - $d/ncu-raw.csv >> $s 2>&1 <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
if len(rows) >= 3:
    for name, unit, val in zip(rows[0], rows[1], rows[2]):
        if ("pipe" in name and "pct" in name) or name.startswith(("sm__inst_executed.sum", "smsp__inst_executed.sum",
                                                                    "gpu__time_duration.sum", "sm__cycles_elapsed.avg")):
            print(f"  {name} {val} {unit}")
PY
  grep -E 'Duration|Issue Slots|Executed Ipc|Issued Warp|Compute \(SM\) Throughput|L1/TEX Hit|L2 Hit|DRAM Throughput' \
    $d/ncu-details.csv 2>/dev/null | cut -c1-400 >> $s
  cat $d/ncu-source-summary.md >> $s 2>/dev/null
}
ncu_run hot-fp8 1 '--hot-k --reps 2'
[[ ${COLD:-1} == 1 ]] && ncu_run cold-fp8 1 '--quick --reps 2'
[[ ${WITH_BF16:-0} == 1 ]] && ncu_run hot-bf16 0 '--hot-k --reps 2'
