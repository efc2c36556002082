#!/usr/bin/env bash
# Session 41: several kernel variants' step benches side by side on whatever card the lease gives (an exploratory
# round before one of them gets gate-any-card.sh's whole gate). VSPECS holds one variant a line, "NAME;FLAGS;PATCHES"
# (PATCHES: docs/experiments patches, comma-separated, or none); each builds bench_gpu_index_step, then every variant
# runs cold and hot (--hot-k: K in L2, the SM-bound regime) in turn, ROUNDS times (default 2), interleaved.
#   VSPECS=$'A;;none\nU;-DIXO_NARROW_UNROLL=4;none' bash docs/experiments/variants-step.sh
#   (device tool, carry .deps; $OUT/all.tgz + summary.log; also h200-targets.sh's ELSE_SCRIPT)
cd "$(dirname "$0")/../.."
VARIANT_JOBS=${VARIANT_JOBS:-4}; source docs/experiments/lease-lib.sh
: "${VSPECS:?one variant a line: NAME;FLAGS;PATCHES}"
names=(); specs=()
while IFS=';' read -r n f p; do
  [[ -z $n ]] && continue
  names+=("$n"); specs+=("$n;$f;${p:-none};bench_gpu_index_step")
done <<< "$VSPECS"
variants "${specs[@]}"
for r in $(seq 1 "${ROUNDS:-2}"); do
  for v in "${names[@]}"; do step c$v$r /tmp/$v; STEP_ARGS=--hot-k step h$v$r /tmp/$v; done; pack
done
