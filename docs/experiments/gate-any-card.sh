#!/usr/bin/env bash
# Session 36: the GPU gate of the tree on whatever card the lease gives (h200-targets.sh's ELSE_SCRIPT). Since
# session 35 changed kernels/gpu (the round plan's fields, the tiles' (program, chunk) from the entry), no GPU has
# run the default build's tests. Most valuable first (each phase packed):
#   A: the tree's GPU tests (a_tests, with the two top-k mutants that must be killed);
#   G: plant-round-total.patch on -DIXO_FP8_ROUND_PLAN=1 (a program's weight total one weight too large, so each
#      row's last blocks have no owner): CudaM3.PackedRoundsAcrossPrograms and LongPrefixes must fail;
#   W_PATCH=NAME.patch: W (the tree with that patch) against A, step bench x2 each, and W's test_gpu;
#   last, ci/gpu-check.sh's sanitizer stage on A (within 170 s).
# Session 39: W_FLAGS=... builds W with those flags (with or without W_PATCH), runs W's test_gpu, CUDA conformance and
# graph tests, and the A / W rounds cold and hot (--hot-k: the SM-bound regime) x2 each; W_PLANT=NAME.patch builds WP
# (W's flags plus that planted bug) and names every test it fails. Row 59: W_FLAGS=-DIXO_DEFER_LOGIT_MULT=1
# W_PLANT=plant-defer-mult-sign.patch.
#   bash docs/experiments/gate-any-card.sh   (device tool, carry .deps; $OUT/all.tgz + summary.log)
# Session 40: W_ONLY=1 (with W_FLAGS, for a change whose default build is byte-identical to a tree already gated on
# this card kind) skips A's tests and plant G: the A / W rounds cold and hot x2, W's whole GPU gate (every ATESTS
# binary and the two top-k mutants), WP, (NCU=1: W's hot profile), the latency suite A W A W, then the sanitizer
# stage on W. Row 60:
# W_ONLY=1 W_FLAGS=-DIXO_NARROW_LOOP=1 W_PLANT=plant-narrow-alias.patch; NCU=1 adds ncu-hot.sh's hot profile of W
# (its files in all.tgz under ncu-W/).
cd "$(dirname "$0")/../.."
VARIANT_JOBS=${VARIANT_JOBS:-8}; source docs/experiments/lease-lib.sh
aw_rounds() {  # the A / W step rounds, cold and hot (--hot-k), x2
  for r in 1 2; do for v in A W; do step c$v$r /tmp/$v; STEP_ARGS=--hot-k step h$v$r /tmp/$v; done; done; pack
}
wp_tests() {  # every test WP (W plus the planted bug) fails
  gt_failed plant-WP /tmp/WP/tests/gpu/test_gpu '*'
  gt_failed plant-WP-conformance /tmp/WP/tests/conformance/test_conformance_cuda '*'; pack
}
WP=(); [[ -n ${W_PLANT:-} ]] && WP=("WP;${W_FLAGS:-};${W_PATCH:+$W_PATCH,}$W_PLANT;test_gpu test_conformance_cuda")
if [[ ${W_ONLY:-0} == 1 ]]; then
  variants "A;;none;bench_gpu_index_step bench_gpu_latency" \
    "W;${W_FLAGS:-};${W_PATCH:-none};$ATESTS bench_gpu_index_step bench_gpu_latency" "${WP[@]}"
  aw_rounds
  gt test_gpu-W /tmp/W/tests/gpu/test_gpu '*'
  for k in topk_early_stop_partial_bin tie_rule_reversed; do
    killed $k /tmp/W/tests/gpu/test_gpu 'CudaTopk/TopkRadix.*'
  done
  gt conformance-W /tmp/W/tests/conformance/test_conformance_cuda '*'
  gt graph-W /tmp/W/tests/gpu/test_gpu_graph '*'
  gt test_cp_gpu-W /tmp/W/tests/cp/test_cp_gpu '*'
  gt test_cp_gpu_local0-W /tmp/W/tests/cp/test_cp_gpu_local0 '*'; pack
  [[ -z ${W_PLANT:-} ]] || wp_tests
  if [[ ${NCU:-0} == 1 ]]; then  # ncu-hot.sh on W (hot K only): warp executions per opcode, against session 39
    mkdir -p $R/ncu-W && COLD=0 BUILD_DIR=/tmp/W OUT=$R/ncu-W bash $X/ncu-hot.sh > $R/ncu-W.log 2>&1
    echo "ncu-hot W rc=$? ($(el))" >> $s; cat $R/ncu-W/summary.log >> $s 2>/dev/null; rm -f $R/ncu-W/hot-fp8-raw.csv.gz
    pack
  fi
  for v in A W A W; do lat $v /tmp/$v; done
  echo "== latency A vs W" >> $s
  /usr/bin/env python3 $X/latency_ab.py $R/lat-A1.md,$R/lat-A2.md $R/lat-W1.md,$R/lat-W2.md >> $s 2>&1; pack
  a_san /tmp/W 170; exit 0
fi
W=(); [[ -n ${W_PATCH:-}${W_FLAGS:-} ]] &&
  W=("W;${W_FLAGS:-};${W_PATCH:-none};bench_gpu_index_step test_gpu test_gpu_graph test_conformance_cuda")
variants "A;;none;$ATESTS bench_gpu_index_step" "G;-DIXO_FP8_ROUND_PLAN=1;plant-round-total.patch;test_gpu" "${W[@]}" \
  "${WP[@]}"
a_tests /tmp/A topk_early_stop_partial_bin tie_rule_reversed
gt_failed plant-G /tmp/G/tests/gpu/test_gpu 'CudaM3.*'; pack
if [[ -n ${W_PATCH:-}${W_FLAGS:-} ]]; then
  gt test_gpu-W /tmp/W/tests/gpu/test_gpu '*'; pack
  aw_rounds
  gt conformance-W /tmp/W/tests/conformance/test_conformance_cuda '*'
  gt graph-W /tmp/W/tests/gpu/test_gpu_graph '*'; pack
  [[ -z ${W_PLANT:-} ]] || wp_tests
fi
a_san /tmp/A 170; pack  # session 39: 90 s cut initcheck / synccheck off on an H100; the whole stage took 95-113 s
