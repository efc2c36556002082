#!/usr/bin/env bash
# Session 27's experiment (row 43): the packed step's top-k fused into the score kernel (IXO_FUSED_TOPK=1,
# fused-topk.patch: kernels/gpu/fused_topk.cuh): the last CTA of a score program selects its rows' top-k, one warp a row, so
# the step is one kernel. Predicted (H100): 16 x 131072 packed step ~ score alone + 2-3 us (A: + 7 us),
# i.e. -4..-5 us; the 32 x 524288 shapes (4096 keys) are not fused: level; the latency suite's packed
# steps -1..-3 us (no second launch), per-row steps level.
#   bash docs/experiments/fused-topk.sh   (device tool, carry .deps; $OUT/all.tgz + summary.log)
cd "$(dirname "$0")/../.."
VARIANT_JOBS=7; source docs/experiments/lease-lib.sh  # pack el variant step gt
( variant A "" none bench_gpu_index_step bench_gpu_latency ) &
( variant F "-DIXO_FUSED_TOPK=1" fused-topk.patch bench_gpu_index_step bench_gpu_latency ) &
wait; pack
export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu
( cmake --build /tmp/F -j8 --target test_gpu test_gpu_graph test_conformance_cuda > $R/build-F-test.log 2>&1
  echo "build F tests rc=$? ($(el))" >> $s ) &
for r in 1 2 3 4; do step A$r /tmp/A; step F$r /tmp/F; done; pack
for r in 1 2; do for v in A F; do
  /tmp/$v/bench/gpu/bench_gpu_latency --out $R/lat-$v$r.md > $R/lat-$v$r.log 2>&1
  echo "latency $v$r rc=$? ($(el))" >> $s; pack
done; done
wait
gt test_gpu-F /tmp/F/tests/gpu/test_gpu '*'
gt test_gpu_graph-F /tmp/F/tests/gpu/test_gpu_graph '*'
gt conformance-F /tmp/F/tests/conformance/test_conformance_cuda '*cuda_packed*'; pack
for key in tie_rule_reversed ids_unsorted; do  # the fused selection's own mutant branches
  gt "mutant-$key-F" /tmp/F/tests/gpu/test_gpu 'CudaBackends/*:CudaDeterminism/*' "IXO_TEST_MUTANT=$key"
done; pack
