#!/usr/bin/env bash
# GPU check on the H200 machine (or any CUDA machine), the whole GPU gate in one command:
#   bash ci/gpu-check.sh [LOGDIR]
# Configures and builds with the `default` preset (CMakePresets.json; the Debian packages in
# .deps, toolchain.md path 2, are added to CMAKE_PREFIX_PATH), then runs the tests by label:
# `ctest --preset default -L cuda` (the GPU tests, the CUDA properties, fp8_widen_check, the
# GPU CP tests) and -L hip, the Python package (-L python), the benchmark and
# compute-sanitizer (memcheck, racecheck, initcheck, synccheck) on a small GPU case filter, and
# the performance gate (perfgate: both benchmarks with --gate against the card's bench/gpu/perf-baseline-<model>.json).
# Logs go to $1, else $OUT, else ./gpu-check-out.
#   STAGES="build test python bench perfgate sanitize" (default all; python: ctest -L python, incl. the
#   torch/CUDA tests, with the machine's python3 - IXO_PYTHON overrides it), ARCH=90a, JOBS=$(nproc), REPS=50,
#   TARGETS="ixo" (build stage: only these targets instead of everything), BUILD_DIR (the bench, perfgate and
#   sanitize stages' binaries from another build, e.g. an experiment's variant; build/test/python use the preset's),
#   REBASELINE=1|pass (perfgate: see there),
#   GPU_SLOTS=4 (GPU tests sharing one GPU at a time; ctest spreads them over every GPU through
#   the resource spec of ci/gpu-resources.sh), SAN_FILTER (gtest filter of test_kernels_cpu in the sanitizer stage)
# Prepare .deps here (machine with apt): mkdir -p .deps && cd .deps && apt-get download \
#   libeigen3-dev librapidcheck-dev libgtest-dev libgmock-dev nlohmann-json3-dev libcli11-dev \
#   libfmt-dev libfmt9 libbenchmark-dev libbenchmark1debian
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-${OUT:-$root/gpu-check-out}}"
mkdir -p "$out"
STAGES="${STAGES:-build test python bench perfgate sanitize}"
ARCH="${ARCH:-90a}"
JOBS="${JOBS:-$(nproc)}"
REPS="${REPS:-50}"
REBASELINE="${REBASELINE:-0}"
case $REBASELINE in 0 | 1 | pass) ;; *) echo "gpu-check: bad input: REBASELINE=$REBASELINE (0, 1 or pass)" >&2; exit 2 ;; esac
deps=/tmp/ixo-deps
P="$root/build"              # the default preset's binaryDir
B="${BUILD_DIR:-$P}"         # where the bench, perfgate and sanitize stages find their binaries
status=0
note() { echo "== $*" | tee -a "$out/summary.log"; }
has() { [[ " $STAGES " == *" $1 "* ]]; }

{ nvidia-smi; nvcc --version; cmake --version; } > "$out/machine.log" 2>&1
cd "$root" || exit 3

if has build; then
  mkdir -p "$deps"
  for f in "$root"/.deps/*.deb; do [[ -e $f ]] && dpkg -x "$f" "$deps"; done
  gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
  # A cache from a configure that ran without .deps found the machine's own GTest (another version
  # than the .deps headers: link errors in RecordProperty); start that cache afresh.
  if ls "$root"/.deps/libgtest-dev_*.deb >/dev/null 2>&1 && [[ -f "$P/CMakeCache.txt" ]] &&
     ! grep -q "^GTest_DIR:PATH=$deps" "$P/CMakeCache.txt"; then
    note "configure: $P/CMakeCache.txt has GTest outside $deps: removed"; rm -f "$P/CMakeCache.txt"
  fi
  cmake --preset default "${gen[@]}" -DIXO_CUDA=ON \
    -DCMAKE_CUDA_COMPILER="$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)" \
    -DCMAKE_CUDA_ARCHITECTURES="$ARCH" -DCMAKE_PREFIX_PATH="$deps/usr" \
    -DEigen3_DIR="$deps/usr/share/eigen3/cmake" -DIXO_PYTHON="${IXO_PYTHON:-$(command -v python3)}" > "$out/build.log" 2>&1
  rc=$?; note "configure (preset default) rc=$rc"; [[ $rc == 0 ]] || { tail -30 "$out/build.log"; exit 1; }
  targets=(); [[ -n "${TARGETS:-}" ]] && targets=(--target $TARGETS)  # e.g. TARGETS=ixo for the GPU mutation campaign
  cmake --build --preset default -j"$JOBS" "${targets[@]}" >> "$out/build.log" 2>&1
  rc=$?; note "build (preset default${TARGETS:+: $TARGETS}) rc=$rc"; [[ $rc == 0 ]] || { tail -40 "$out/build.log"; exit 1; }
fi
export LD_LIBRARY_PATH="$deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

if has test; then
  # GPU tests declare RESOURCE_GROUPS "gpus:1": with the spec, ctest -j spreads them over every GPU.
  SLOTS="${GPU_SLOTS:-4}" "$root/ci/gpu-resources.sh" "$out/resources.json" 2>> "$out/summary.log"
  spec=(); grep -q '"id"' "$out/resources.json" && spec=(--resource-spec-file "$out/resources.json")
  ctest --preset default -L cuda --output-on-failure -j"$JOBS" "${spec[@]}" > "$out/ctest-cuda.log" 2>&1
  rc=$?; note "ctest -L cuda ${spec[*]} rc=$rc: $(grep -E 'tests passed|tests failed' "$out/ctest-cuda.log" | tail -1)"
  # Skips are reported, never passed (tests needing more GPUs than the machine has skip).
  grep -qE '\*\*\*Skipped' "$out/ctest-cuda.log" && note "skipped: $(grep -E '\*\*\*Skipped' "$out/ctest-cuda.log" | tr -s ' ' | cut -d' ' -f4 | tr '\n' ' ')"
  [[ $rc == 0 ]] || status=1
  ctest --preset default -L hip --output-on-failure > "$out/ctest-hip.log" 2>&1
  note "ctest -L hip rc=$?: $(grep -E 'tests passed|tests failed' "$out/ctest-hip.log" | tail -1)"
fi

if has python; then
  # The Python package on this machine's python3 (torch, CUDA tensors, fuzz/suite over cuda-packed).
  ctest --preset default -L python --output-on-failure -j4 > "$out/ctest-python.log" 2>&1
  rc=$?; note "ctest -L python rc=$rc: $(grep -E 'tests passed|tests failed' "$out/ctest-python.log" | tail -1)"
  [[ $rc == 0 ]] || status=1
fi

if has bench; then
  "$B/bench/gpu/bench_gpu_index_step" --reps "$REPS" --out "$out/perf-table.md" --json "$out/perf.json" > "$out/bench.log" 2>&1
  note "bench rc=$?"
  cat "$out/perf-table.md" 2>/dev/null
fi
if has perfgate; then
  # The GPU performance gate (issue 27 item 4; docs/performance.md, "Latency suite and performance
  # gate"): bench_gpu_index_step and bench_gpu_latency with the gate's protocol (--gate: 5 warm-up
  # + 20 timed replays of graphs of 120 steps, CV <= 3 % or measured again), then
  # ci/gpu-perf-gate.py against PERF_BASELINE (default: the card's own, bench/gpu/perf-baseline-<model>.json:
  # h200, h100): rc 0 pass, 1 slower (weighted ratio < 0.99 or a case > 5 % slower), 2 bad input (no
  # baseline for this card yet, a case without a baseline, a noisy case, another device). About 2
  # minutes. REBASELINE=1 writes the card's baseline from this run instead (after a deliberate change;
  # a copy lands in the log dir: commit it under bench/gpu/ with its name); REBASELINE=pass compares
  # and, on a pass, writes it from the same runs (one benchmark run for both); PERF_COMMIT names the
  # commit measured where the tree has no .git.
  py=/usr/bin/python3; [[ -x $py ]] || py=python3
  "$B/bench/gpu/bench_gpu_index_step" --gate --out "$out/perfgate-step.md" --json "$out/perfgate-step.json" > "$out/perfgate-step.log" 2>&1
  rc_step=$?
  "$B/bench/gpu/bench_gpu_latency" --gate --out "$out/perfgate-latency.md" --json "$out/perfgate-latency.json" > "$out/perfgate-latency.log" 2>&1
  rc_latency=$?
  note "perfgate benchmarks: bench_gpu_index_step --gate rc=$rc_step, bench_gpu_latency --gate rc=$rc_latency"
  gate=("$py" "$root/ci/gpu-perf-gate.py")
  [[ -n ${PERF_BASELINE:-} ]] && gate+=(--baseline "$PERF_BASELINE")
  if [[ $REBASELINE != 0 ]]; then
    # The file the rebaseline writes (the card's, or PERF_BASELINE): a copy lands in the log dir.
    baseline=$("${gate[@]}" --print-baseline "$out/perfgate-step.json" "$out/perfgate-latency.json")
    [[ $REBASELINE == 1 ]] && gate+=(--rebaseline) || gate+=(--rebaseline-if-pass)
  fi
  [[ -n ${PERF_COMMIT:-} ]] && gate+=(--commit "$PERF_COMMIT")  # the commit a copy without .git was made from
  "${gate[@]}" "$out/perfgate-step.json" "$out/perfgate-latency.json" > "$out/perfgate.log" 2>&1
  rc=$?
  # rc 0: the baseline was written (REBASELINE=pass writes none on a fail or bad input)
  [[ $REBASELINE != 0 && $rc == 0 && -n ${baseline:-} ]] && cp "$baseline" "$out/"
  note "perf gate$([[ $REBASELINE == 0 ]] || echo " (REBASELINE=$REBASELINE)") rc=$rc: $(tail -1 "$out/perfgate.log")"
  cat "$out/perfgate.log"
  [[ $rc == 0 && $rc_step == 0 && $rc_latency == 0 ]] || status=1
fi
if has sanitize; then
  # Small cases over every kernel path: tensor-core bf16/fp8 (all four formats), the scalar
  # path (odd D), lse, padding/inactive rows, GQA, packed fallback, and the graph test.
  # SAN_TOOLS (default all four), SAN_GRAPH=0 leaves out test_gpu_graph, SAN_CP_FILTER (a
  # test_cp_gpu filter, default none) adds test_cp_gpu's larger CP cases; all runs share one log.
  # Always: the top-k kernel alone on crafted rows (test_gpu CudaTopk: keys in shared memory and in
  # global memory, a 4097-key row; SAN_TOPK_FILTER) and the CP kernels on small cases
  # (test_cp_gpu_local0: packed and per-row plans, bf16 and e4m3fn, max and lse; SAN_CP_SMALL_FILTER;
  # session 31: racecheck of test_cp_gpu's cases did not finish in 240 s).
  # SAN_UNTIL (epoch seconds, default none): no run lasts past it (each run's limit is
  # SAN_TIMEOUT or the time left, whichever is less), so time a fast tool leaves over goes
  # to the runs after it; a run with no time left is not started (rc 124).
  # The kernel case matrix runs in test_kernels_cpu's testbed (every backend; the CUDA ones here).
  m='Kernels/KernelMatrix.EveryBackend'
  filter="${SAN_FILTER:-$m/exact_*:$m/dtype_*:$m/odd_dim40:$m/m3_km_slots_e4m3fn:$m/padding_inactive_lse_e4m3fn:$m/gqa_8_1_p4:$m/straddle_local0_lse_minus1:$m/topk9_long}"
  for tool in ${SAN_TOOLS:-memcheck racecheck initcheck synccheck}; do
    extra=(); [[ $tool == memcheck ]] && extra=(--leak-check full)
    san() {
      local lim="${SAN_TIMEOUT:-150}"
      if [[ -n "${SAN_UNTIL:-}" ]]; then
        local left=$(( SAN_UNTIL - $(date +%s) ))
        (( left < lim )) && lim=$left
        (( lim >= 1 )) || { echo "== $tool $(basename "$1"): not started, SAN_UNTIL reached"; return 124; }
      fi
      timeout "$lim" compute-sanitizer --tool "$tool" "${extra[@]}" --error-exitcode 7 "$@" --gtest_brief=1
    }
    # A later run of the same tool: appended to the same log; the first failing run's rc is kept.
    san_more() {
      san "$@" >> "$out/sanitizer-$tool.log" 2>&1
      local r=$?; [[ $rc == 0 ]] && rc=$r
    }
    san "$B/tests/kernels/test_kernels_cpu" --gtest_filter="$filter" > "$out/sanitizer-$tool.log" 2>&1
    rc=$?
    # The CUDA-graph replays (test_gpu_graph).
    [[ ${SAN_GRAPH:-1} != 0 ]] && san_more "$B/tests/gpu/test_gpu_graph"
    t='CudaTopk/TopkRadix.IdsMatchTheOracleSelection'
    san_more "$B/tests/gpu/test_gpu" --gtest_filter="${SAN_TOPK_FILTER:-$t/nb1024_k16:$t/nb4097_k16:$t/nb9000_k16:$t/nb2048_k100}"
    c='Local0/CudaCpLocal0.PackedEqualsRowsAndOracle'
    san_more "$B/tests/cp/test_cp_gpu_local0" --gtest_filter="${SAN_CP_SMALL_FILTER:-$c/w2_p4_max:$c/w2_p3_lse:$c/w4_p4_max:$c/w4_p2_lse}"
    [[ -n "${SAN_CP_FILTER:-}" ]] && san_more "$B/tests/cp/test_cp_gpu" --gtest_filter="$SAN_CP_FILTER"
    # rc 7: the sanitizer found errors; rc 1: a test failed under it; 124: timed out.
    note "compute-sanitizer $tool rc=$rc: $(grep -E 'SUMMARY' "$out/sanitizer-$tool.log" | tail -1) $(grep -E '^\[  (PASSED|FAILED)' "$out/sanitizer-$tool.log" | head -3 | tr '\n' ' ')"
    [[ $rc == 0 ]] || status=1
  done
fi

note "gpu-check status=$status"
exit $status
