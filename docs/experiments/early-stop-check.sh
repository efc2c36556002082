#!/usr/bin/env bash
# Session 32's second device call: the tree as adopted (row 51: radix_select's early stop; the keys-first half
# measured nothing in call 1 and was removed; the one launch helper of the tensor-core score kernels) through its
# GPU tests and the sanitizer stage on any card, then A vs N (-DIXO_TOPK_EARLY_STOP=0) on the step bench and the
# gate protocol, then the perf gate of A against the card's baseline with REBASELINE=pass (the re-written baseline
# lands in $OUT). On an H200 first issue 27's table (the step bench A N x2) before the tests, and the CP bench.
#   PERF_COMMIT=<sha> bash docs/experiments/early-stop-check.sh   (device tool, carry .deps; $OUT/all.tgz + summary.log)
cd "$(dirname "$0")/../.."
VARIANT_JOBS=8; source docs/experiments/lease-lib.sh  # pack el variant step gstep lat cpb gt on_h200 pgate
T="bench_gpu_index_step bench_gpu_latency bench_gpu_cp"
AT="test_gpu test_gpu_graph test_conformance_cuda test_cp_gpu test_cp_gpu_local0 test_kernels_cpu"
( variant A "" none $T $AT ) &
( variant N "-DIXO_TOPK_EARLY_STOP=0" none bench_gpu_index_step bench_gpu_cp ) &
wait; pack
export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu
if on_h200; then for r in 1 2; do for v in A N; do step $v$r /tmp/$v; done; done; pack; fi
gt test_gpu-A /tmp/A/tests/gpu/test_gpu '*'
bash tests/gpu/expect_killed.sh topk_early_stop_partial_bin /tmp/A/tests/gpu/test_gpu --gtest_filter='CudaTopk/TopkRadix.*' \
  > $R/mutant-early-stop.log 2>&1
echo "mutant.topk_early_stop_partial_bin rc=$? (0: killed): $(tail -1 $R/mutant-early-stop.log) ($(el))" >> $s
gt test_gpu_graph-A /tmp/A/tests/gpu/test_gpu_graph '*'
gt conformance-A /tmp/A/tests/conformance/test_conformance_cuda '*'
gt test_cp_gpu-A /tmp/A/tests/cp/test_cp_gpu '*'
gt test_cp_gpu_local0-A /tmp/A/tests/cp/test_cp_gpu_local0 '*'; pack
STAGES=sanitize BUILD_DIR=/tmp/A SAN_TIMEOUT=120 SAN_UNTIL=$(( $(date +%s) + 170 )) \
  bash ci/gpu-check.sh $R/san > $R/san.log 2>&1
echo "sanitize A rc=$? ($(el))" >> $s; grep -E '^== compute' $R/san.log >> $s; pack
on_h200 || { for r in 1 2; do for v in A N; do step $v$r /tmp/$v; done; done; pack; }
for r in 1 2; do for v in A N; do gstep $v$r /tmp/$v; done; done; pack
pgate /tmp/A session32
on_h200 && { for v in A N; do cpb ${v}1 /tmp/$v; done; for v in A N; do step ${v}3 /tmp/$v; done; pack; }
