#!/usr/bin/env bash
# Is a perf-gate FAIL the code or the machine? The tree (A) and the baseline's commit (E) side by side on one card:
# bench_gpu_latency --gate --only PREFIX of each, A E A E. Prepare E's source on this machine (an untracked,
# unignored file travels with the working tree):
#   git archive --format=tar.gz -o e8.tgz <baseline commit>
#   ONLY=latency/b1/ctx4K/ bash docs/experiments/gate-same-machine.sh   (device tool, carry .deps; then rm e8.tgz)
# Ran: session 32 call 7 (H100, A = f13d2d1, E = 8af29ee; data/s32-gate-same-machine-h100.log): the gate had failed
# b1/ctx4K/H1 packed +5.3..+6.8 % twice on that card, on device code byte-identical to E's; side by side A and E
# measured the same (bf16 packed 16.66-17.02 vs 16.72-17.03 us, e4m3fn 17.62-17.69 vs 17.53-17.64).
cd "$(dirname "$0")/../.."
VARIANT_JOBS=8; source docs/experiments/lease-lib.sh  # pack el variant build_src
[[ -f e8.tgz ]] || { echo "no e8.tgz (the baseline commit's source)" >> $s; pack; exit 2; }
rm -rf /tmp/E-src && mkdir -p /tmp/E-src && tar -xzf e8.tgz -C /tmp/E-src
( variant A "" none bench_gpu_latency ) & ( build_src E "" bench_gpu_latency ) & wait; pack
export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu
for v in A E A E; do
  /tmp/$v/bench/gpu/bench_gpu_latency --gate --only "${ONLY:-latency/b1/ctx4K/}" > $R/l-$v.log 2>&1
  echo "== $v" >> $s; grep -E "packed|per.row|\|" $R/l-$v.log | head -12 >> $s; pack
done
