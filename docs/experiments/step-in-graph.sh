#!/usr/bin/env bash
# Session 26's device call: why the split vote top-k (IXO_TOPK_BALLOT=2) takes 2 us off the top-k alone
# but nothing off the packed step (topk-votes-split.sh, H100: 16 x 131072 bf16 step 202.6 vs 202.5 us,
# top-k alone 10.0 vs 8.0). The two kernels of each step timed inside the graphs by nsys
# (--cuda-graph-trace=node; step_kernel_gaps.py: score, gap, top-k, step), A and V2 side by side,
# then the latency suite A V2 A V2 (the small steps, where the top-k is a larger share).
#   bash docs/experiments/step-in-graph.sh   (device tool, carry .deps; $OUT/all.tgz + summary.log)
cd "$(dirname "$0")/../.."
VARIANT_JOBS=7; source docs/experiments/lease-lib.sh
( variant A "" none bench_gpu_index_step bench_gpu_latency ) &
( variant V2 "-DIXO_TOPK_BALLOT=2" none bench_gpu_index_step bench_gpu_latency ) &
wait; pack
export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu
ns=$(command -v nsys || ls -d /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys /usr/local/cuda*/nsight-systems*/bin/nsys 2>/dev/null | head -1)
echo "nsys: ${ns:-none} $($ns --version 2>/dev/null)" >> $s
for v in A V2 A V2; do
  [[ -n $ns ]] || break
  n=$v-$(( $(date +%s) - t0 ))
  timeout 150 $ns profile --trace=cuda --cuda-graph-trace=node --sample=none --cpuctxsw=none -f true -o $R/ns-$n \
    /tmp/$v/bench/gpu/bench_gpu_index_step --quick --reps 40 > $R/ns-$n.log 2>&1
  echo "nsys $n rc=$? ($(el))" >> $s
  $ns stats --report cuda_gpu_trace --format csv --force-export=true -o $R/ns-$n $R/ns-$n.nsys-rep > $R/ns-stats-$n.log 2>&1
  /usr/bin/env python3 $X/step_kernel_gaps.py $R/ns-${n}_cuda_gpu_trace.csv >> $s 2>&1
  grep -E ' us, packed ' $R/ns-$n.log >> $s; rm -f $R/ns-$n.nsys-rep $R/ns-$n.sqlite; pack
done
for v in A V2 A V2; do
  n=$v-$(( $(date +%s) - t0 ))
  /tmp/$v/bench/gpu/bench_gpu_latency --out $R/lat-$n.md > $R/lat-$n.log 2>&1
  echo "latency $n rc=$? ($(el))" >> $s; pack
done
