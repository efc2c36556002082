#!/usr/bin/env bash
# Same-lease performance bisect on the GPU machine (session 14: "the bf16 score kernel got
# slower" was the lease, not the code): bench_gpu_index_step of several commits built side by
# side, then run round-robin twice, so every commit is timed on the same machine in the same
# minutes. Prepare the trees here (git archive, carried in .deps), then run there:
#   for c in c85bd17 8cb61e1 HEAD; do mkdir -p .deps/src/$c && git archive $c | tar -x -C .deps/src/$c; done
#   bash ci/gpu-bisect.sh $OUT                                           (with the device tool, carry .deps)
# Writes $1/summary.log (each commit's 32 x 524288 bf16 row per round) and $1/bisect.tgz (all tables).
set -uo pipefail
o="${1:?usage: ci/gpu-bisect.sh OUT_DIR (trees in .deps/src/<commit>)}"; mkdir -p "$o"
work="$(mktemp -d /tmp/gpu-bisect.XXXXXX)"; t0=$SECONDS
trap 'tar -czf "$o/bisect.tgz" -C "$work" --exclude=./build . 2>/dev/null' EXIT
cs=$(ls .deps/src 2>/dev/null); [[ -n $cs ]] || { echo "no trees in .deps/src"; exit 2; }
deps=/tmp/ixo-deps; mkdir -p $deps; for f in .deps/*.deb; do dpkg -x "$f" $deps; done
export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu
nv=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
for c in $cs; do
  ( cmake -S .deps/src/$c -B "$work/build/$c" -G Ninja -DCMAKE_BUILD_TYPE=Release -DIXO_CUDA=ON -DCMAKE_CUDA_COMPILER=$nv \
      -DCMAKE_CUDA_ARCHITECTURES=90a -DCMAKE_PREFIX_PATH=$deps/usr -DEigen3_DIR=$deps/usr/share/eigen3/cmake \
      > "$work/conf-$c.log" 2>&1 && cmake --build "$work/build/$c" -j3 --target bench_gpu_index_step > "$work/build-$c.log" 2>&1
    echo "== build $c rc=$? at $((SECONDS - t0)) s" >> "$o/summary.log" ) &
done
wait
for round in 1 2; do
  for c in $cs; do
    "$work/build/$c/bench/gpu/bench_gpu_index_step" --reps 50 --out "$work/step-$c-$round.md" > "$work/step-$c-$round.log" 2>&1
    echo "== $c round $round rc=$?: $(grep -E '^\| 32 req x 524288 \| bf16' "$work/step-$c-$round.md" | cut -d'|' -f4-7 | tr -s ' ')" \
      >> "$o/summary.log"
  done
done
