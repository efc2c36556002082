# Sourced by the session-25 device-call scripts (topk-votes-*.sh) from the repository root, on the
# device machine: needs $OUT; sets R (results), s (summary.log), t0, X (this folder), deps, nv, and
#   pack                      results -> $OUT/all.tgz + $OUT/summary.log (+ any $R/perf-baseline-*.json a
#                             rebaseline wrote, so it can be committed as is)
#   el                        seconds since t0
#   variant NAME FLAGS PATCHES TARGETS...   a copy of the tree in /tmp/NAME-src with the comma list of
#                             docs/experiments patches applied (none: none), built in /tmp/NAME with
#                             FLAGS in the CUDA and C++ flags (VARIANT_JOBS parallel jobs, default 3)
#   build_src NAME FLAGS TARGETS...   the same build of a source tree already in /tmp/NAME-src (variant's second half)
#   variants SPEC...          each SPEC "NAME;FLAGS;PATCHES;TARGETS" built side by side by `variant`, then pack and the
#                             deps' libraries on LD_LIBRARY_PATH (BENCHES: the three GPU benches' targets)
#   step NAME DIR             bench_gpu_index_step of DIR, its step lines into the summary (STEP_ARGS: more flags,
#                             e.g. --quick or --hot-k)
#   gstep NAME DIR            the same under the gate's protocol (--gate --quick: the 16 x 131072 shapes)
#   lat V DIR                 bench_gpu_latency of DIR, variant V's next numbered run: $R/lat-V1.md, lat-V2.md, ...
#   cpb NAME DIR              bench_gpu_cp of DIR ($R/cp-NAME.md), its table rows into the summary
#   gt NAME BINARY FILTER [ENV]  a gtest binary under a filter (and one VAR=value), its verdict line
#   gt_failed NAME BINARY FILTER  gt, then each failed test's line (a planted-bug build's run)
#   killed KEY BINARY FILTER  tests/gpu/expect_killed.sh: the mutant KEY must make the gtest BINARY fail under FILTER
#   a_tests DIR [KEY...]      DIR's GPU tests (test_gpu, test_gpu_graph, conformance, test_cp_gpu, test_cp_gpu_local0:
#                             the targets in $ATESTS) and `killed` for each mutant KEY on CudaTopk/TopkRadix
#   plant_tests DIR           a planted-bug build's test_gpu, test_gpu_graph and CUDA conformance: every failed test named
#                             (PLANT_SPEC: the `variants` spec of L, plant-long-cta.patch with those three targets)
#   ab_round A B              the A/B round of a kernel experiment on /tmp/A and /tmp/B: step x2 and the gate protocol x2
#                             interleaved, CP bench once each, latency A B A B and latency_ab.py's comparison
#   timeline V [RUN]          the in-step top-k timeline of /tmp/V (a topk-timeline.patch build) and its summary, in
#                             $R/tl-V[RUN]
#   cta_timeline NAME V [FLAGS]  the CTA timeline of /tmp/V (a cta-timeline.patch build) under bench flags FLAGS
#                             (default --quick) in $R/tl-NAME: each SM's CTAs' ends by dispatch rank (ranks.txt) and
#                             start / duration summary (summary.txt) into the summary
#   topk_san DIR              racecheck / synccheck / memcheck of DIR's top-k test (6 radix and vote rows) and 2 small
#                             CP cases (the top-k experiments' sanitizer round)
#   a_san DIR SECONDS         ci/gpu-check.sh's sanitizer stage on DIR's build, every run within SECONDS
#   on_h200                   true on an H200
#   pgate DIR COMMIT          ci/gpu-check.sh's perf gate on DIR's build against the card's baseline, REBASELINE=pass
#                             (PERF_COMMIT, else COMMIT, names the tree); a re-written baseline lands in $R (pack: $OUT)
# A machine keeps /tmp between calls (and sessions): $R starts empty, so a pack holds this call's results only.
: "${OUT:?}"; R=/tmp/R; rm -rf $R; mkdir -p $R; t0=$(date +%s); s=$R/summary.log; X=docs/experiments
pack() { tar -czf $OUT/all.tgz -C $R . 2>/dev/null; cp $s $OUT/summary.log; cp $R/perf-baseline-*.json $OUT/ 2>/dev/null; }
el() { echo "$(( $(date +%s) - t0 )) s"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> $s 2>&1
deps=/tmp/ixo-deps; mkdir -p $deps; for f in .deps/*.deb; do dpkg -x "$f" $deps; done
nv=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
variant() {
  local n=$1 F=$2 ps=$3; shift 3
  rm -rf /tmp/$n-src && mkdir -p /tmp/$n-src && tar -c --exclude=./build --exclude=./.deps . | tar -x -C /tmp/$n-src
  if [[ $ps != none ]]; then
    for p in ${ps//,/ }; do
      patch -d /tmp/$n-src -p1 < $X/$p >> $R/patch-$n.log 2>&1 || { echo "build $n: $p did not apply" >> $s; return 1; }
    done
  fi
  build_src $n "$F" "$@"
}
BENCHES="bench_gpu_index_step bench_gpu_latency bench_gpu_cp"
variants() {
  local spec n f ps t
  for spec in "$@"; do
    IFS=';' read -r n f ps t <<< "$spec"
    ( variant $n "$f" $ps $t ) &
  done
  wait; pack
  export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu
}
build_src() {
  local n=$1 F=$2; shift 2
  cmake -S /tmp/$n-src -B /tmp/$n -G Ninja -DCMAKE_BUILD_TYPE=Release -DIXO_CUDA=ON -DCMAKE_CUDA_COMPILER=$nv \
    -DCMAKE_CUDA_ARCHITECTURES=90a -DCMAKE_PREFIX_PATH=$deps/usr -DEigen3_DIR=$deps/usr/share/eigen3/cmake \
    -DGTest_DIR=$deps/usr/lib/x86_64-linux-gnu/cmake/GTest "-DCMAKE_CUDA_FLAGS=$F" "-DCMAKE_CXX_FLAGS=$F" \
    > $R/conf-$n.log 2>&1 && cmake --build /tmp/$n -j${VARIANT_JOBS:-3} --target "$@" > $R/build-$n.log 2>&1
  echo "build $n rc=$? ($(el))" >> $s
}
step() {
  [[ -x $2/bench/gpu/bench_gpu_index_step ]] || { echo "step $1: no binary" >> $s; return; }
  LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu $2/bench/gpu/bench_gpu_index_step --reps 50 --out $R/st-$1.md \
    ${STEP_ARGS:-} > $R/st-$1.log 2>&1
  echo "step $1 rc=$? ($(el))" >> $s
  grep -E ' us, packed ' $R/st-$1.log >> $s
}
gstep() {
  [[ -x $2/bench/gpu/bench_gpu_index_step ]] || { echo "gate $1: no binary" >> $s; return; }
  LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu $2/bench/gpu/bench_gpu_index_step --gate --quick \
    --json $R/gate-$1.json > $R/gate-$1.log 2>&1
  echo "gate $1 rc=$? ($(el))" >> $s; grep -E ' us, packed ' $R/gate-$1.log >> $s
}
lat() {
  local n=$(($(ls $R/lat-$1?.md 2>/dev/null | wc -l) + 1))
  [[ -x $2/bench/gpu/bench_gpu_latency ]] || { echo "latency $1$n: no binary" >> $s; return; }
  LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu $2/bench/gpu/bench_gpu_latency --out $R/lat-$1$n.md \
    > $R/lat-$1$n.log 2>&1
  echo "latency $1$n rc=$? ($(el))" >> $s
}
cpb() {
  [[ -x $2/bench/gpu/bench_gpu_cp ]] || { echo "cp $1: no binary" >> $s; return; }
  LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu $2/bench/gpu/bench_gpu_cp --out $R/cp-$1.md > $R/cp-$1.log 2>&1
  echo "cp $1 rc=$? ($(el))" >> $s; grep -E '^\|' $R/cp-$1.md | tail -n +3 >> $s
}
gt() {
  [[ -x $2 ]] || { echo "$1: no binary" >> $s; return; }
  env LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu ${4:-IXO_NONE=1} timeout 240 $2 --gtest_filter="$3" \
    --gtest_brief=1 > $R/$1.log 2>&1
  echo "$1 rc=$? $(grep -E '^\[  (PASSED|FAILED)' $R/$1.log | head -2 | tr '\n' ' ') ($(el))" >> $s
}
# gt's run of a planted-bug build, then every failed test it names (the plant must fail them).
gt_failed() {
  gt "$@"; grep -E '^\[  FAILED  \] [A-Za-z]' $R/$1.log | sort -u >> $s
}
ATESTS="test_gpu test_gpu_graph test_conformance_cuda test_cp_gpu test_cp_gpu_local0 test_kernels_cpu"
killed() {
  bash tests/gpu/expect_killed.sh $1 $2 --gtest_filter="$3" > $R/mutant-$1.log 2>&1
  echo "mutant.$1 rc=$? (0: killed): $(tail -1 $R/mutant-$1.log) ($(el))" >> $s
}
a_tests() {
  local d=$1; shift
  gt test_gpu-A $d/tests/gpu/test_gpu '*'
  for k in "$@"; do killed $k $d/tests/gpu/test_gpu 'CudaTopk/TopkRadix.*'; done
  gt test_gpu_graph-A $d/tests/gpu/test_gpu_graph '*'
  gt conformance-A $d/tests/conformance/test_conformance_cuda '*'
  gt test_cp_gpu-A $d/tests/cp/test_cp_gpu '*'
  gt test_cp_gpu_local0-A $d/tests/cp/test_cp_gpu_local0 '*'; pack
}
PLANT_SPEC="L;;plant-long-cta.patch;test_gpu test_gpu_graph test_conformance_cuda"
plant_tests() {
  local d=$1 t
  for t in tests/gpu/test_gpu tests/gpu/test_gpu_graph tests/conformance/test_conformance_cuda; do
    gt_failed plant-${t##*/} $d/$t '*'
  done
  pack
}
ab_round() {
  local a=$1 b=$2 r v
  for r in 1 2; do for v in $a $b; do step $v$r /tmp/$v; done; done; pack
  for r in 1 2; do for v in $a $b; do gstep $v$r /tmp/$v; done; done; pack
  for v in $a $b; do cpb ${v}1 /tmp/$v; done; pack
  for v in $a $b $a $b; do lat $v /tmp/$v; done
  echo "== latency $a vs $b" >> $s
  /usr/bin/env python3 $X/latency_ab.py $R/lat-${a}1.md,$R/lat-${a}2.md $R/lat-${b}1.md,$R/lat-${b}2.md >> $s 2>&1; pack
}
timeline() {
  mkdir -p $R/tl-$1${2:-} && (cd $R/tl-$1${2:-} && /tmp/$1/bench/gpu/bench_gpu_index_step --quick --reps 5 > bench.log 2>&1
    echo "top-k timeline $1${2:-} rc=$? ($(el))" >> $s
    /usr/bin/env python3 $OLDPWD/$X/topk_timeline_summary.py . > summary.txt 2>&1; cat summary.txt >> $s); pack
}
cta_timeline() {
  mkdir -p $R/tl-$1 && (cd $R/tl-$1 && /tmp/$2/bench/gpu/bench_gpu_index_step ${3:---quick} --reps 5 > bench.log 2>&1
    echo "timeline $1 ($2 ${3:---quick}) rc=$? ($(el))" >> $s
    /usr/bin/env python3 $OLDPWD/$X/cta_rank_summary.py cta-timeline-*.csv > ranks.txt 2>&1; cat ranks.txt >> $s
    /usr/bin/env python3 $OLDPWD/$X/cta_timeline_summary.py cta-timeline-*.csv > summary.txt 2>&1
    grep -E 'first K|slot-time|duration' summary.txt >> $s)
}
topk_san() {
  local d=$1 tool t='CudaTopk/TopkRadix.IdsMatchTheOracleSelection' c='Local0/CudaCpLocal0.PackedEqualsRowsAndOracle'
  for tool in racecheck synccheck memcheck; do
    timeout 120 compute-sanitizer --tool $tool --error-exitcode 7 $d/tests/gpu/test_gpu --gtest_brief=1 \
      --gtest_filter="$t/nb1024_k16:$t/nb4097_k16:$t/nb9000_k16:$t/nb2048_k100:$t/nb128_k64:$t/nb40_k7" \
      > $R/san-$tool-topk.log 2>&1
    echo "$tool top-k rc=$? $(grep -E 'SUMMARY' $R/san-$tool-topk.log | head -1) ($(el))" >> $s
    timeout 120 compute-sanitizer --tool $tool --error-exitcode 7 $d/tests/cp/test_cp_gpu_local0 --gtest_brief=1 \
      --gtest_filter="$c/w2_p4_max:$c/w4_p2_lse" > $R/san-$tool-cp.log 2>&1
    echo "$tool CP rc=$? $(grep -E 'SUMMARY' $R/san-$tool-cp.log | head -1) ($(el))" >> $s; pack
  done
}
a_san() {
  STAGES=sanitize BUILD_DIR=$1 SAN_TIMEOUT=120 SAN_UNTIL=$(( $(date +%s) + $2 )) bash ci/gpu-check.sh $R/san > $R/san.log 2>&1
  echo "sanitize $1 rc=$? ($(el))" >> $s; grep -E '^== compute' $R/san.log >> $s; pack
}
on_h200() { nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; }
pgate() {
  STAGES=perfgate BUILD_DIR=$1 REBASELINE=pass PERF_COMMIT="${PERF_COMMIT:-$2}" \
    bash ci/gpu-check.sh $R/perfgate > $R/perfgate.log 2>&1
  echo "perf gate of $1 (the card's baseline, REBASELINE=pass) rc=$? ($(el))" >> $s
  grep -E '^==|^perf gate|wrote|not re|weighted|slower' $R/perfgate.log >> $s
  cp $R/perfgate/perf-baseline-*.json $R/ 2>/dev/null; pack
}
