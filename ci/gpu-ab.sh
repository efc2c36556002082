#!/usr/bin/env bash
# One-call GPU verification with an A/B against an older commit, on the GPU machine:
#   rm -rf .deps/base-src && mkdir -p .deps/base-src && git archive <commit> | tar -x -C .deps/base-src
#   then, with the device tool (carry .deps):  bash ci/gpu-ab.sh $OUT
# Builds this tree (preset default, sm_90a) and the old tree's benchmarks in parallel, runs
# bench_gpu_cp (new, old, new) and bench_gpu_index_step (new, old), ctest -L cuda, then the GPU
# mutation campaign beside compute-sanitizer memcheck. Fits one 600 s call (~290 s in
# session 3, ~300-320 s in sessions 5 and 6). CHUNKS="16 33 128" adds forced-chunk-count runs
# (~15 s each on the quick shapes; CHUNK_SHAPES="" runs every shape, ~25 s each);
# SAN="initcheck synccheck racecheck" adds those tools on the memcheck filters while the call
# has time left (SAN_BUDGET, default 540 s from the start).
# A base older than a5c68db has the old bench_gpu_cp (kernels launched without a graph):
# copy bench/gpu/bench_cp.cpp into .deps/base-src to compare its short-kernel columns.
# The device tool brings back at most 8 files: every log goes to a fresh folder under $WORK
# (default /tmp) and, on exit, $1 gets logs.tgz (all of them but the mutation JSON), summary.log and the
# benchmark tables (step-new.md/.json, step-base.md, cp-new.md, cp-base.md).
set -uo pipefail
res="$1"; mkdir -p "$res"
mkdir -p "${WORK:-/tmp}"; out="$(mktemp -d "${WORK:-/tmp}/gpu-ab.XXXXXX")"; s="$out/summary.log"; note() { echo "== $*" | tee -a "$s"; }
trap 'tar -czf "$res/logs.tgz" -C "$out" --exclude gpu-mutation.json . 2>/dev/null
  for f in summary.log step-new.md step-new.json step-base.md cp-new.md cp-base.md; do [[ -e "$out/$f" ]] && cp "$out/$f" "$res/"; done' EXIT
t0=$SECONDS
deps=/tmp/ixo-deps; mkdir -p $deps; for f in .deps/*.deb; do dpkg -x "$f" $deps; done
export LD_LIBRARY_PATH="$deps/usr/lib/x86_64-linux-gnu"
( STAGES=build JOBS=12 bash ci/gpu-check.sh "$out/check" > "$out/build.out" 2>&1 ) & p1=$!
( cmake -S .deps/base-src -B /tmp/base $(command -v ninja >/dev/null && echo -G Ninja) -DCMAKE_BUILD_TYPE=Release -DIXO_CUDA=ON -DCMAKE_CUDA_COMPILER=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc) \
  -DCMAKE_CUDA_ARCHITECTURES=90a -DCMAKE_PREFIX_PATH=$deps/usr -DEigen3_DIR=$deps/usr/share/eigen3/cmake > "$out/build-base.log" 2>&1 && cmake --build /tmp/base -j4 --target bench_gpu_cp bench_gpu_index_step >> "$out/build-base.log" 2>&1 ) & p2=$!
wait $p1; note "build new rc=$? $(tail -3 "$out/check/summary.log" | tr '\n' ' ')"; wait $p2; note "build base rc=$?"
N=build
for r in new base new2; do d=$N; [[ $r == base ]] && d=/tmp/base
  $d/bench/gpu/bench_gpu_cp --reps 50 --out "$out/cp-$r.md" > "$out/cp-$r.log" 2>&1; note "cp $r rc=$?"; done
$N/bench/gpu/bench_gpu_index_step --reps 50 --out "$out/step-new.md" --json "$out/step-new.json" > "$out/step-new.log" 2>&1; note "step new rc=$?"
/tmp/base/bench/gpu/bench_gpu_index_step --reps 50 --out "$out/step-base.md" > "$out/step-base.log" 2>&1; note "step base rc=$?"
# CHUNKS="16 33 128": the new tree's quick shapes with the score kernels' chunk count forced
# (the wave experiment of docs/NOTES.md "Open work"; the plan's own count is step-new.md).
for c in ${CHUNKS:-}; do
  $N/bench/gpu/bench_gpu_index_step ${CHUNK_SHAPES---quick} --reps 50 --chunks "$c" --out "$out/step-chunks$c.md" > "$out/step-chunks$c.log" 2>&1
  note "step chunks=$c rc=$?: $(grep -E '^\| (16|32) req' "$out/step-chunks$c.md" | cut -d'|' -f2-7 | tr '\n' ' ')"
done
SLOTS=4 ci/gpu-resources.sh "$out/resources.json" 2>/dev/null
ctest --preset default -L cuda --output-on-failure -j12 --resource-spec-file "$out/resources.json" > "$out/ctest-cuda.log" 2>&1
note "ctest -L cuda rc=$?: $(grep -E 'tests passed|tests failed' "$out/ctest-cuda.log" | tail -1)"
grep -E '\*\*\*Failed|\*\*\*Skipped|Not Run' "$out/ctest-cuda.log" | head -20 >> "$s"
grep -E 'mutant\.' "$out/ctest-cuda.log" | grep -E 'Passed|Failed|Skipped' >> "$s"  # named GPU-test mutants: Passed = killed
( timeout ${MUT_T:-200} $N/tools/ixo/ixo mutate --backend cuda-rows --backend cuda-packed --backend cuda-cp --json "$out/gpu-mutation.json" > "$out/mutate.log" 2>&1; echo "rc=$?" >> "$out/mutate.log" ) & p3=$!
m='Kernels/KernelMatrix.EveryBackend'
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 7 $N/tests/kernels/test_kernels_cpu --gtest_filter="$m/exact_*:$m/dtype_*:$m/odd_dim40:$m/padding_inactive_lse_e4m3fn:$m/gqa_8_1_p4" --gtest_brief=1 > "$out/memcheck.log" 2>&1
note "memcheck test_kernels_cpu (kernel matrix) rc=$?: $(grep -E 'ERROR SUMMARY' "$out/memcheck.log" | tail -1)"
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 7 $N/tests/cp/test_cp_gpu --gtest_brief=1 > "$out/memcheck-cp.log" 2>&1
note "memcheck test_cp_gpu rc=$?: $(grep -E 'ERROR SUMMARY' "$out/memcheck-cp.log" | tail -1)"
wait $p3; note "mutate: $(tail -3 "$out/mutate.log" | tr '\n' ' ')"
# SAN: ci/gpu-check.sh's sanitize stage with these tools on the memcheck filters (no graph
# test: racecheck needs > 100 s there), every run ending by SAN_BUDGET (a fast tool's unused
# time goes to the next: an equal share each left the CP racecheck, ~46 s, 30 s in session 7).
if [[ -n "${SAN:-}" ]]; then
  left=$(( ${SAN_BUDGET:-540} - (SECONDS - t0) ))
  if [[ $left -gt 40 ]]; then
    STAGES=sanitize SAN_TOOLS="$SAN" SAN_GRAPH=0 SAN_TIMEOUT=80 SAN_UNTIL=$(( $(date +%s) + left )) \
      SAN_FILTER="$m/exact_*:$m/dtype_*:$m/padding_inactive_lse_e4m3fn" \
      SAN_CP_FILTER="CudaCp.RocmPrVerifyBatch:CudaCp.WorldSizes:CudaCp.WinnersInOneShardAndPadding:Kernels/CudaCp*" \
      bash ci/gpu-check.sh "$out/san" > "$out/san.out" 2>&1
    grep -E '^== compute-sanitizer' "$out/san/summary.log" >> "$s"
  else
    note "sanitizers $SAN skipped: the call's time is spent"
  fi
fi
