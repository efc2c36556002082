#!/usr/bin/env python3
"""Markdown table of the raw ncu CSVs written by bench/gpu/profile-ncu.sh (one row per kernel launch).

Usage: ncu_table.py ncu-index-step.csv [more.csv ...]   (ncu --csv --page raw output; stdout lines before the header are skipped)"""
import csv, sys, os
keys = ["gpu__time_duration.sum", "dram__throughput.avg.pct_of_peak_sustained_elapsed", "dram__bytes_read.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
        "sm__warps_active.avg.pct_of_peak_sustained_active", "sm__inst_issued.avg.pct_of_peak_sustained_active",
        "smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio", "smsp__average_warp_latency_issue_stalled_barrier.ratio",
        "smsp__average_warp_latency_issue_stalled_math_pipe_throttle.ratio","smsp__average_warp_latency_issue_stalled_wait.ratio", "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
        "sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active", "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active","launch__grid_size", "launch__registers_per_thread",
        "launch__waves_per_multiprocessor", "launch__occupancy_limit_registers","launch__occupancy_limit_shared_mem","lts__t_sector_hit_rate.pct"]
short = lambda k: k.replace("smsp__average_warp_latency_issue_stalled_", "stall_").replace(".avg.pct_of_peak_sustained_active","%").replace(".avg.pct_of_peak_sustained_elapsed","%").replace("launch__","").replace("__",".").split(".ratio")[0]
for f in sys.argv[1:]:
    lines = open(f).read().splitlines()
    start = next(i for i,l in enumerate(lines) if l.startswith('"ID"'))
    rows = [r for r in csv.reader(l for l in lines[start:] if l.startswith('"')) if r]
    head, units = rows[0], rows[1]
    print("##", os.path.basename(f))
    print("| kernel | block | " + " | ".join(f"{short(k)} [{units[head.index(k)]}]" for k in keys if k in head) + " |")
    for r in rows[2:]:
        print("| " + r[head.index("Kernel Name")].split("(")[0][:34] + " | " + r[head.index("Block Size")] + " | " + " | ".join(r[head.index(k)] for k in keys if k in head) + " |")
