#!/usr/bin/env bash
# Prepared in sessions 21-24; run in session 25 on an H100 (data/s25-next-lease-topk-h100.log: B, L, P, BP
# lost): one device call on the step's top-k.
#   bash docs/experiments/next-lease-topk.sh   (device tool, carry .deps; $OUT/all.tgz + summary.log)
# Variants, built side by side:
#   A  = this tree (the knobs at their defaults): the benchmarks;
#   B  = -DIXO_TOPK_BALLOT=1: rows selecting <= 64 ids of <= 4096 blocks by warp votes
#        (kernels/gpu/ballot_select.cuh, session 22; predicted top-k CTA 6.5 -> ~2.5 us at 1024 keys
#        and 10.7 -> ~4.5 at 4096: packed step -3.5..-4 us at 16 x 131072, -6 us at 32 x 524288), and the
#        CP shard candidates the same way (predicted 11.2 -> ~6 us at 32 x 524288);
#        the benchmarks, test_gpu (CudaTopk + the CUDA backends' testbed), test_gpu_graph;
#   L  = -DIXO_TOPK_BALLOT=2: B with each warp's bound from its lanes' largest keys (one vote a probe
#        instead of M; predicted like B at 1024 keys (-0.3 us), -1.5 us more than B at 4096);
#   P  = docs/experiments/topk-pdl-one-wave.patch with IXO_TOPK_PDL_EARLY=1 (session 16's programmatic
#        dependent launch of the top-k on the one-wave plans; predicted -1..-1.5 us a packed step);
#   BP = B + P (bench only: what would be adopted if both win);
#   X1 / X2 = B with a planted bug (test_gpu only; CudaTopk must FAIL): X1 a warp's bound one key too
#        high (the rows whose top k sit in one warp's ids lose a key), X2 no radix fallback on a wide
#        tie (the wide-tie rows leave their ids unwritten).
# Read the step runs side by side: /usr/bin/python3 docs/experiments/step_ab_summary.py summary.log
# Order: the tests of B and the plants first (a wrong B is not benchmarked as if right), the step
# bench A B L P BP x 2, the CP bench and latency suite A B L, then ncu's source view of B's top-k alone
# if time is left.
cd "$(dirname "$0")/../.."
: "${OUT:?}"; R=/tmp/R; mkdir -p $R; t0=$(date +%s); s=$R/summary.log
pack() { tar -czf $OUT/all.tgz -C $R . 2>/dev/null; cp $s $OUT/summary.log; }
el() { echo "$(( $(date +%s) - t0 )) s"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> $s 2>&1
deps=/tmp/ixo-deps; mkdir -p $deps; for f in .deps/*.deb; do dpkg -x "$f" $deps; done
nv=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
variant() {  # name flags edit(patch|plant1|plant2|none) targets...
  local n=$1 F=$2 e=$3; shift 3
  rm -rf /tmp/$n-src && mkdir -p /tmp/$n-src && tar -c --exclude=./build --exclude=./.deps . | tar -x -C /tmp/$n-src
  case $e in
    patch) patch -d /tmp/$n-src -p1 < docs/experiments/topk-pdl-one-wave.patch > $R/patch-$n.log 2>&1 ||
             { echo "build $n: the patch did not apply (patch-$n.log)" >> $s; return 1; } ;;
    plant1) sed -i 's/if (at_or_above >= kept) bound = c;/if (at_or_above >= kept - 1) bound = c;/' \
              /tmp/$n-src/kernels/gpu/ballot_select.cuh ;;
    plant2) sed -i 's/if (L > kCap) return false;/if (L > kCap) return true;/' /tmp/$n-src/kernels/gpu/ballot_select.cuh ;;
  esac
  if [[ $e == plant* ]] && cmp -s kernels/gpu/ballot_select.cuh /tmp/$n-src/kernels/gpu/ballot_select.cuh; then
    echo "build $n: the plant did not apply" >> $s; return 1
  fi
  cmake -S /tmp/$n-src -B /tmp/$n -G Ninja -DCMAKE_BUILD_TYPE=Release -DIXO_CUDA=ON -DCMAKE_CUDA_COMPILER=$nv \
    -DCMAKE_CUDA_ARCHITECTURES=90a -DCMAKE_PREFIX_PATH=$deps/usr -DEigen3_DIR=$deps/usr/share/eigen3/cmake \
    -DGTest_DIR=$deps/usr/lib/x86_64-linux-gnu/cmake/GTest "-DCMAKE_CUDA_FLAGS=$F" "-DCMAKE_CXX_FLAGS=$F" \
    > $R/conf-$n.log 2>&1 && cmake --build /tmp/$n -j3 --target "$@" > $R/build-$n.log 2>&1
  echo "build $n rc=$? ($(el))" >> $s
}
if [[ ${SHORT:-0} == 1 ]]; then  # SHORT=1 (a lease of < ~8 min): A B L P, the step bench and test_gpu only
  ( variant A "" none bench_gpu_index_step ) &
  ( variant B "-DIXO_TOPK_BALLOT=1" none bench_gpu_index_step test_gpu ) &
  ( variant L "-DIXO_TOPK_BALLOT=2" none bench_gpu_index_step test_gpu ) &
  ( variant P "-DIXO_TOPK_PDL_EARLY=1" patch bench_gpu_index_step test_gpu ) &
else
  ( variant A "" none bench_gpu_index_step bench_gpu_latency bench_gpu_cp ) &
  ( variant B "-DIXO_TOPK_BALLOT=1" none bench_gpu_index_step bench_gpu_latency bench_gpu_cp test_gpu test_gpu_graph \
    test_cp_gpu ) &
  ( variant P "-DIXO_TOPK_PDL_EARLY=1" patch bench_gpu_index_step test_gpu test_gpu_graph ) &
  ( variant L "-DIXO_TOPK_BALLOT=2" none bench_gpu_index_step bench_gpu_latency bench_gpu_cp test_gpu test_cp_gpu ) &
  ( variant BP "-DIXO_TOPK_BALLOT=1 -DIXO_TOPK_PDL_EARLY=1" patch bench_gpu_index_step ) &
fi
if [[ ${PLANTS:-1} == 1 ]]; then  # PLANTS=0 on a short lease (both plants fail on the host sim too: NOTES session 23)
  ( variant X1 "-DIXO_TOPK_BALLOT=1" plant1 test_gpu ) &
  ( variant X2 "-DIXO_TOPK_BALLOT=1" plant2 test_gpu ) &
fi
wait; pack
export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu
step() {  # run-name build-dir
  [[ -x $2/bench/gpu/bench_gpu_index_step ]] || { echo "step $1: no binary" >> $s; return; }
  $2/bench/gpu/bench_gpu_index_step --reps 50 --out $R/st-$1.md > $R/st-$1.log 2>&1; echo "step $1 rc=$? ($(el))" >> $s
  grep -E ' us, packed ' $R/st-$1.log >> $s; pack
}
gt() {  # log-name binary filter [env]
  [[ -x $2 ]] || { echo "$1: no binary" >> $s; return; }
  env ${4:-IXO_NONE=1} timeout 240 $2 --gtest_filter="$3" --gtest_brief=1 > $R/$1.log 2>&1
  echo "$1 rc=$? $(grep -E '^\[  (PASSED|FAILED)' $R/$1.log | head -2 | tr '\n' ' ') ($(el))" >> $s
}
racecheck_B() {
  timeout 90 compute-sanitizer --tool racecheck --error-exitcode 7 /tmp/B/tests/gpu/test_gpu \
    --gtest_filter='CudaTopk/*nb1024_k16:CudaTopk/*nb4096_k16:CudaTopk/*nb300_k64' --gtest_brief=1 > $R/racecheck-B.log 2>&1
  echo "racecheck B rc=$? $(grep SUMMARY $R/racecheck-B.log | tail -1) ($(el))" >> $s
}
gt topk-B /tmp/B/tests/gpu/test_gpu 'CudaTopk/*'
gt topk-L /tmp/L/tests/gpu/test_gpu 'CudaTopk/*'
if [[ ${PLANTS:-1} == 1 ]]; then  # each must FAIL
  gt topk-X1-planted /tmp/X1/tests/gpu/test_gpu 'CudaTopk/*'
  gt topk-X2-planted /tmp/X2/tests/gpu/test_gpu 'CudaTopk/*'
fi
gt topk-B-tie-mutant /tmp/B/tests/gpu/test_gpu 'CudaTopk/*' IXO_TEST_MUTANT=tie_rule_reversed
gt topk-B-unsorted-mutant /tmp/B/tests/gpu/test_gpu 'CudaTopk/*' IXO_TEST_MUTANT=ids_unsorted
if [[ ${SHORT:-0} == 1 ]]; then
  for r in 1 2; do step A$r /tmp/A; step B$r /tmp/B; step L$r /tmp/L; step P$r /tmp/P; done
  gt test_gpu-B /tmp/B/tests/gpu/test_gpu '*'; gt test_gpu-L /tmp/L/tests/gpu/test_gpu '*'
  gt test_gpu-P /tmp/P/tests/gpu/test_gpu '*'; pack; racecheck_B; pack; exit 0
fi
racecheck_B
gt test_gpu-B /tmp/B/tests/gpu/test_gpu '*'
gt test_gpu_graph-B /tmp/B/tests/gpu/test_gpu_graph '*'
gt test_cp_gpu-B /tmp/B/tests/cp/test_cp_gpu '*'
gt test_cp_gpu-L /tmp/L/tests/cp/test_cp_gpu '*'
pack
step A1 /tmp/A; step B1 /tmp/B; step L1 /tmp/L; step P1 /tmp/P; step BP1 /tmp/BP
step A2 /tmp/A; step B2 /tmp/B; step L2 /tmp/L; step P2 /tmp/P; step BP2 /tmp/BP
for v in A B L; do
  [[ -x /tmp/$v/bench/gpu/bench_gpu_cp ]] && { /tmp/$v/bench/gpu/bench_gpu_cp --reps 50 --out $R/cp-$v.md > $R/cp-$v.log 2>&1
    echo "cp $v rc=$? ($(el))" >> $s; grep -E '^\|' $R/cp-$v.md | tail -6 >> $s; }
  [[ -x /tmp/$v/bench/gpu/bench_gpu_latency ]] && { /tmp/$v/bench/gpu/bench_gpu_latency --out $R/lat-$v.md \
    > $R/lat-$v.log 2>&1; echo "latency $v rc=$? ($(el))" >> $s; tail -3 $R/lat-$v.log >> $s; pack; }
done
gt test_gpu-P /tmp/P/tests/gpu/test_gpu '*'
gt test_gpu_graph-P /tmp/P/tests/gpu/test_gpu_graph '*'
pack
# B's gate benchmarks (session 24): the perf gate's protocol on B, so that adopting B can take its
# baseline from this call (ci/gpu-perf-gate.py --rebaseline B's JSONs) when no second call is lent.
if (( $(date +%s) - t0 < 440 )) && [[ -x /tmp/B/bench/gpu/bench_gpu_latency ]]; then
  /tmp/B/bench/gpu/bench_gpu_index_step --gate --out $R/gate-step-B.md --json $R/gate-step-B.json > $R/gate-step-B.log 2>&1
  echo "gate step B rc=$? ($(el))" >> $s; pack
  /tmp/B/bench/gpu/bench_gpu_latency --gate --out $R/gate-lat-B.md --json $R/gate-lat-B.json > $R/gate-lat-B.log 2>&1
  echo "gate latency B rc=$? ($(el))" >> $s; pack
fi
if (( $(date +%s) - t0 < 470 )); then
  KERNEL='topk_kernel<\(int\)256' ARGS='--quick --reps 2' BUILD_DIR=/tmp/B bash bench/gpu/ncu-source.sh $R/ncu-B \
    > $R/ncu-B.out 2>&1
  echo "ncu B rc=$? ($(el))" >> $s; head -45 $R/ncu-B/ncu-source-summary.md >> $s 2>/dev/null
fi
pack
