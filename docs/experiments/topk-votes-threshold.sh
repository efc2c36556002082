#!/usr/bin/env bash
# Session 26's third device call: the split vote top-k (`=2`) only for short rows. step-in-graph.sh's
# latency suite (H100) had `=2` at -0.5..-1.2 us a step for 4K / 8K contexts (26-72 keys) but +0.3..+2.5
# us at 32K (212-297 keys), and the 16 x 131072 step (1025 keys) level. VS = `=2` with
# IXO_TOPK_BALLOT_MAX_KEYS=128: predicted the 4K / 8K gains without the 32K losses, the throughput steps level.
#   bash docs/experiments/topk-votes-threshold.sh   (device tool, carry .deps; $OUT/all.tgz + summary.log)
cd "$(dirname "$0")/../.."
VARIANT_JOBS=5; source docs/experiments/lease-lib.sh
( variant A "" none bench_gpu_index_step bench_gpu_latency ) &
( variant V2 "-DIXO_TOPK_BALLOT=2" none bench_gpu_index_step bench_gpu_latency ) &
( variant VS "-DIXO_TOPK_BALLOT=2 -DIXO_TOPK_BALLOT_MAX_KEYS=128" none bench_gpu_index_step bench_gpu_latency ) &
wait; pack
export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu
( cmake --build /tmp/VS -j10 --target test_gpu test_cp_gpu > $R/build-VS-test.log 2>&1; echo "build VS test_gpu rc=$? ($(el))" >> $s ) &
for r in 1 2; do for v in A V2 VS; do
  /tmp/$v/bench/gpu/bench_gpu_latency --out $R/lat-$v$r.md > $R/lat-$v$r.log 2>&1
  echo "latency $v$r rc=$? ($(el))" >> $s; pack
done; done
for r in 1 2; do for v in A V2 VS; do step $v$r /tmp/$v; done; done; pack
wait
gt test_gpu-VS /tmp/VS/tests/gpu/test_gpu '*'
gt test_cp_gpu-VS /tmp/VS/tests/cp/test_cp_gpu '*'; pack
