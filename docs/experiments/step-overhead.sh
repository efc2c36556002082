#!/usr/bin/env bash
# Session 26's open question, for a later lease (H100 or H200): the vote top-k (<= 4096 keys) takes 2.2 us
# off the in-step top-k CTA span, yet the graph-replayed packed step at 16 x 131072 does not move. The
# timeline builds stamp the last replayed step's score and top-k CTAs (topk-ballot-timeline.patch); one
# replay is noisy, so each variant runs 8 times interleaved (--quick: 16 x 131072 bf16 / e4m3fn), and
# step_decomposition.py gives per variant the medians of score span, gap, top-k span, kernels (score
# start -> top-k end) and the rest (bench median - kernels: launch and completion the stamps miss).
# TA: radix (IXO_TOPK_BALLOT=0); TV: votes up to 4096 keys (=2, max keys 4096); TD: the default (=2, 128:
# radix at these shapes, so TD ~ TA is the control).
#   bash docs/experiments/step-overhead.sh   (device tool, carry .deps; ~150 s after the start)
cd "$(dirname "$0")/../.."
VARIANT_JOBS=5; source docs/experiments/lease-lib.sh
( variant TA "-DIXO_TOPK_TIMELINE -DIXO_TOPK_BALLOT=0" topk-ballot-timeline.patch bench_gpu_index_step ) &
( variant TV "-DIXO_TOPK_TIMELINE -DIXO_TOPK_BALLOT=2 -DIXO_TOPK_BALLOT_MAX_KEYS=4096" topk-ballot-timeline.patch \
  bench_gpu_index_step ) &
( variant TD "-DIXO_TOPK_TIMELINE" topk-ballot-timeline.patch bench_gpu_index_step ) &
wait; pack
export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu
dirs=()
for r in 1 2 3 4 5 6 7 8; do for v in TA TV TD; do
  d=$R/tl-$v-$r; mkdir -p $d; dirs+=($d)
  [[ -x /tmp/$v/bench/gpu/bench_gpu_index_step ]] && ( cd $d && timeout 60 /tmp/$v/bench/gpu/bench_gpu_index_step --quick \
    --reps 20 --out st.md > st.log 2>&1 ); echo "run $v-$r rc=$? ($(el))" >> $s
done; pack; done
/usr/bin/env python3 $X/step_decomposition.py "${dirs[@]}" | grep medians >> $s 2>&1; pack
