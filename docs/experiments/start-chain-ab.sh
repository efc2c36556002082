#!/usr/bin/env bash
# Historical: the knobs it builds (all but IXO_BF16_PACKED_WAVE, now default 1) left the tree after
# session 20's run of it; it runs as written on commit 943e67b (or with docs/experiments/packed-schedules.patch).
# Sessions 17-19's prepared A/B for the next lease (not run: no device was lent since session 17's
# call 1): the packed bf16 one-wave plan, the score kernel's start-chain changes, the balanced
# packed plan and the packed plan's work claims, all off by default.
#   O = the defaults; W = -DIXO_BF16_PACKED_WAVE=1; N = W + -DIXO_START_PREFETCH=1 -DIXO_START_BATCHED_ENTRIES=1;
#   P = W + prefetch only; B = W + batched entries only; S = N + -DIXO_PACKED_BALANCED=1;
#   C = N + -DIXO_PACKED_CLAIMS=1 (session 19; exclusive with the balanced plan).
# Step bench O W N P B S C twice, O's per-row column at 4 / 8 / 12 chunks, latency suite O C S N W O C S N,
# CTA timelines of N, O and C (cta-timeline.patch),
# then C's and S's GPU tests (test_kernels_cpu's testbed judges the variant's CUDA backends; test_gpu;
# test_gpu_graph, whose replays check the work counters come back zeroed), and N's when S's fail;
# C's kernel-matrix cases and graph replays also under compute-sanitizer memcheck and racecheck.
#   bash docs/experiments/start-chain-ab.sh      (device tool, carry .deps; writes $OUT)
#   PHASE=tests bash docs/experiments/start-chain-ab.sh   (the GPU tests alone, e.g. in a second call)
# Flip a knob's default only where its rows win here and N's tests pass (docs/NOTES.md, session 17).
cd "$(dirname "$0")/../.."
R="${OUT:?}"; s=$R/summary.log; t0=$SECONDS; note() { echo "== $* ($((SECONDS - t0)) s)" | tee -a $s; }
deps=/tmp/ixo-deps; mkdir -p $deps; for f in .deps/*.deb; do dpkg -x "$f" $deps; done
export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu
nv=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
conf() {  # SRC BUILD FLAGS NAME TARGETS
  cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DIXO_CUDA=ON -DCMAKE_CUDA_COMPILER=$nv \
    -DCMAKE_CUDA_ARCHITECTURES=90a -DCMAKE_PREFIX_PATH=$deps/usr -DEigen3_DIR=$deps/usr/share/eigen3/cmake \
    -DGTest_DIR=$deps/usr/lib/x86_64-linux-gnu/cmake/GTest "-DCMAKE_CUDA_FLAGS=$3" "-DCMAKE_CXX_FLAGS=$3" > /tmp/conf-$4.log 2>&1 &&
    { [[ -z "$5" ]] || cmake --build "$2" -j3 --target $5 > /tmp/build-$4.log 2>&1; }
  echo "build $4 rc=$?" >> $s
}
tests() {  # VARIANT: its test_kernels_cpu (the testbed on its CUDA backends), test_gpu, test_gpu_graph
  cmake --build /tmp/$1 -j16 --target test_kernels_cpu test_gpu test_gpu_graph > /tmp/build-$1tests.log 2>&1
  note "$1 tests build rc=$?"; local bad=0 t rc
  for t in kernels/test_kernels_cpu gpu/test_gpu gpu/test_gpu_graph; do
    /tmp/$1/tests/$t --gtest_brief=1 > $R/$1-${t##*/}.log 2>&1; rc=$?; note "$1 ${t##*/} rc=$rc"; bad=$((bad | rc)); done
  return $bad
}
san() {  # VARIANT TOOL: compute-sanitizer on a few kernel-matrix cases (every backend) and the graph replays
  local m='Kernels/KernelMatrix.EveryBackend' rc
  timeout 200 compute-sanitizer --tool $2 --error-exitcode 7 /tmp/$1/tests/kernels/test_kernels_cpu \
    --gtest_filter="$m/exact_*:$m/dtype_*:$m/gqa_8_1_p4:$m/padding_inactive_lse_e4m3fn" --gtest_brief=1 > $R/$1-san-$2.log 2>&1
  rc=$?; timeout 200 compute-sanitizer --tool $2 --error-exitcode 7 /tmp/$1/tests/gpu/test_gpu_graph --gtest_brief=1 >> $R/$1-san-$2.log 2>&1
  note "$1 compute-sanitizer $2 rc=$rc/$?"
}
W="-DIXO_BF16_PACKED_WAVE=1"; ON="$W -DIXO_START_PREFETCH=1 -DIXO_START_BATCHED_ENTRIES=1"
if [[ "${PHASE:-all}" == tests ]]; then  # the tests alone (a second call when the first ran out of time)
  for v in C S N; do [[ -f /tmp/$v/build.ninja ]] || case $v in
    C) conf . /tmp/C "$ON -DIXO_PACKED_CLAIMS=1" C "" ;; S) conf . /tmp/S "$ON -DIXO_PACKED_BALANCED=1" S "" ;;
    N) conf . /tmp/N "$ON" N "" ;; esac; done
  tests C; san C memcheck; tests S || tests N; san C racecheck; exit 0
fi
rm -rf /tmp/lsrc; mkdir -p /tmp/lsrc; tar --exclude=./.deps --exclude="./build*" -cf - . | tar -x -C /tmp/lsrc
(cd /tmp/lsrc && patch -p1 < "$OLDPWD/docs/experiments/cta-timeline.patch") > /tmp/patch.log 2>&1; echo "patch rc=$?" >> $s
T="bench_gpu_index_step bench_gpu_latency"
conf . /tmp/O "" O "$T" & conf . /tmp/W "$W" W "$T" & conf . /tmp/N "$ON" N "$T" &
conf . /tmp/P "$W -DIXO_START_PREFETCH=1" P bench_gpu_index_step & conf . /tmp/B "$W -DIXO_START_BATCHED_ENTRIES=1" B bench_gpu_index_step &
conf . /tmp/S "$ON -DIXO_PACKED_BALANCED=1" S "$T" & conf . /tmp/C "$ON -DIXO_PACKED_CLAIMS=1" C "$T" &
conf /tmp/lsrc /tmp/LN "-DIXO_CTA_TIMELINE $ON" LN bench_gpu_index_step & conf /tmp/lsrc /tmp/LO "-DIXO_CTA_TIMELINE" LO bench_gpu_index_step &
conf /tmp/lsrc /tmp/LC "-DIXO_CTA_TIMELINE $ON -DIXO_PACKED_CLAIMS=1" LC bench_gpu_index_step &
wait; note builds
for v in LN LO LC; do mkdir -p /tmp/$v-out; (cd /tmp/$v-out && /tmp/$v/bench/gpu/bench_gpu_index_step --reps 3 > log 2>&1; echo "tl $v rc=$?" >> $s)
  /usr/bin/env python3 docs/experiments/cta_timeline_summary.py /tmp/$v-out/cta-timeline-*.csv > $R/tl-$v.txt 2>&1; done
note timelines
for r in O W N P B S C O2 W2 N2 P2 B2 S2 C2; do d=/tmp/${r:0:1}
  $d/bench/gpu/bench_gpu_index_step --reps 50 --out /tmp/st-$r.md > /tmp/st-$r.log 2>&1
  note "step $r rc=$?"; grep -E '^\| (16|32) req' /tmp/st-$r.md | cut -d'|' -f2-8 >> $s; grep WARN /tmp/st-$r.log >> $s; done
for c in 4 8 12; do  # the per-row plan (forced counts apply to every grid; read the per-row column)
  /tmp/O/bench/gpu/bench_gpu_index_step --reps 50 --chunks $c --out /tmp/st-O-c$c.md > /dev/null 2>&1
  note "step O --chunks $c rc=$?"; grep -E '^\| (16|32) req' /tmp/st-O-c$c.md | cut -d'|' -f2-4 >> $s; done
for r in O C S N W O2 C2 S2 N2; do d=/tmp/${r:0:1}
  [[ $((SECONDS - t0)) -gt 420 ]] && { note "time guard: latency stopped before $r"; break; }
  $d/bench/gpu/bench_gpu_latency --reps 50 --out /tmp/lat-$r.md > /tmp/lat-$r.log 2>&1; note "latency $r rc=$?"; done
tar -czf $R/tables.tgz -C /tmp $(cd /tmp && ls st-*.md lat-*.md 2>/dev/null)
# The tests last (the benches' numbers come back even if this outlasts the call: then run
# `PHASE=tests bash docs/experiments/start-chain-ab.sh` alone)
tests C; san C memcheck; tests S || tests N; san C racecheck
