#!/usr/bin/env bash
# Is a perf-gate FAIL the code or the machine? The tree (A) and the baseline's commit (E) side by side on one card.
# Prepare E's source on this machine (an untracked, unignored file travels with the working tree):
#   git archive --format=tar.gz -o e8.tgz <baseline commit>
#   E_COMMIT=<baseline commit> bash docs/experiments/gate-same-machine.sh   (device tool, carry .deps; then rm e8.tgz)
# Default (session 37): the whole gate. E's two gate benchmarks (--gate, the perf gate's protocol) become a baseline in
# $R/base-E.json, A's runs after them are judged against it by ci/gpu-perf-gate.py (the tree against the baseline's
# code on this card), and E's runs against the stored baseline (the card against the baseline's card). REUSE_A=1 on a
# warm machine whose /tmp/A this same call's tree built (lease-lib's variant) skips A's build; /tmp outlives calls
# and sessions, so by default A is built afresh.
# ONLY=PREFIX (session 32's form): bench_gpu_latency --gate --only PREFIX of each, A E A E, the tables in the summary.
# Ran: session 32 call 7 (H100, ONLY=latency/b1/ctx4K/, A = f13d2d1, E = 8af29ee; data/s32-gate-same-machine-h100.log):
# A and E measured the same. Session 37's last H100 call ran the default form inline (data/s37-perfgate-h100/same-card):
# E against the stored baseline FAIL 0.9883, A against E PASS 0.9995: the card.
cd "$(dirname "$0")/../.."
VARIANT_JOBS=${VARIANT_JOBS:-16}; source docs/experiments/lease-lib.sh  # pack el variant build_src
[[ -f e8.tgz ]] || { echo "no e8.tgz (the baseline commit's source)" >> $s; pack; exit 2; }
rm -rf /tmp/E-src /tmp/E && mkdir -p /tmp/E-src && tar -xzf e8.tgz -C /tmp/E-src
T="bench_gpu_index_step bench_gpu_latency"
A_BUILD=(variant A "" none $T)
[[ ${REUSE_A:-0} == 1 && -x /tmp/A/bench/gpu/bench_gpu_index_step && -x /tmp/A/bench/gpu/bench_gpu_latency ]] &&
  A_BUILD=(true)
( "${A_BUILD[@]}" ) & ( build_src E "" $T ) & wait; pack
export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu
if [[ -n ${ONLY:-} ]]; then
  for v in A E A E; do
    /tmp/$v/bench/gpu/bench_gpu_latency --gate --only "$ONLY" > $R/l-$v.log 2>&1
    echo "== $v" >> $s; grep -E "packed|per.row|\|" $R/l-$v.log | head -12 >> $s; pack
  done
  exit 0
fi
gate_runs() {  # NAME DIR: both gate benchmarks, their JSON in $R/NAME-step.json and $R/NAME-lat.json
  "$2/bench/gpu/bench_gpu_index_step" --gate --out $R/$1-step.md --json $R/$1-step.json > $R/$1-step.log 2>&1
  local rs=$?
  "$2/bench/gpu/bench_gpu_latency" --gate --out $R/$1-lat.md --json $R/$1-lat.json > $R/$1-lat.log 2>&1
  echo "gate runs $1 rc=$rs/$? ($(el))" >> $s; pack
}
gate_runs E1 /tmp/E
gate_runs A1 /tmp/A
py=/usr/bin/python3; [[ -x $py ]] || py=python3
$py ci/gpu-perf-gate.py --rebaseline --baseline $R/base-E.json --commit "${E_COMMIT:-baseline}" \
  $R/E1-step.json $R/E1-lat.json >> $s 2>&1
$py ci/gpu-perf-gate.py --baseline $R/base-E.json $R/A1-step.json $R/A1-lat.json > $R/A-vs-E.log 2>&1
echo "== the tree (A) against the baseline's commit (E) on this card: rc=$?" >> $s; tail -4 $R/A-vs-E.log >> $s
$py ci/gpu-perf-gate.py $R/E1-step.json $R/E1-lat.json > $R/E-vs-stored.log 2>&1
echo "== the baseline's commit (E) on this card against the stored baseline: rc=$?" >> $s; tail -3 $R/E-vs-stored.log >> $s
pack
