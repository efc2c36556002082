#!/usr/bin/env bash
# Session 32's second device call: the tree as adopted (row 51: radix_select's early stop; the keys-first half
# measured nothing in call 1 and was removed; the one launch helper of the tensor-core score kernels) through its
# GPU tests and the sanitizer stage on any card, then A vs N (-DIXO_TOPK_EARLY_STOP=0) on the step bench and the
# gate protocol, then the perf gate of A against the card's baseline with REBASELINE=pass (the re-written baseline
# lands in $OUT). On an H200 first issue 27's table (the step bench A N x2) before the tests, and the CP bench.
#   PERF_COMMIT=<sha> bash docs/experiments/early-stop-check.sh   (device tool, carry .deps; $OUT/all.tgz + summary.log)
cd "$(dirname "$0")/../.."
VARIANT_JOBS=8; source docs/experiments/lease-lib.sh  # pack el variant step gstep lat cpb gt a_tests a_san on_h200 pgate
T="bench_gpu_index_step bench_gpu_latency bench_gpu_cp"
( variant A "" none $T $ATESTS ) &
( variant N "-DIXO_TOPK_EARLY_STOP=0" none bench_gpu_index_step bench_gpu_cp ) &
wait; pack
export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu
if on_h200; then for r in 1 2; do for v in A N; do step $v$r /tmp/$v; done; done; pack; fi
a_tests /tmp/A topk_early_stop_partial_bin
a_san /tmp/A 170
on_h200 || { for r in 1 2; do for v in A N; do step $v$r /tmp/$v; done; done; pack; }
for r in 1 2; do for v in A N; do gstep $v$r /tmp/$v; done; done; pack
pgate /tmp/A session32
on_h200 && { for v in A N; do cpb ${v}1 /tmp/$v; done; for v in A N; do step ${v}3 /tmp/$v; done; pack; }
