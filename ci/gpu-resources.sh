#!/usr/bin/env bash
# Writes a ctest resource spec (version 1.0) with one "gpus" entry per visible GPU, for
#   ctest -j N --resource-spec-file FILE
# so that GPU tests (RESOURCE_GROUPS "gpus:1") spread over every GPU of the host. The ids are
# positions 0..n-1 in the visible device list: entries of CUDA_VISIBLE_DEVICES when it is set
# (indices, UUIDs or MIG names), else the devices `nvidia-smi -L` lists. Each test process
# maps its id back to a CUDA_VISIBLE_DEVICES entry (tests/gpu/gpu_resource_main.cpp).
#   ci/gpu-resources.sh [FILE]   (default: stdout)
#   SLOTS=k   tests that may share one GPU at a time (default 1)
set -euo pipefail
slots="${SLOTS:-1}"
[[ "$slots" =~ ^[1-9][0-9]*$ ]] || { echo "gpu-resources: SLOTS must be a positive integer, got '$slots'" >&2; exit 2; }
n=0
if [[ -n "${CUDA_VISIBLE_DEVICES:-}" ]]; then
  IFS=',' read -ra devs <<< "$CUDA_VISIBLE_DEVICES"
  for d in "${devs[@]}"; do
    # An invalid entry hides itself and every entry after it from the CUDA runtime.
    [[ "$d" =~ ^-?[0-9]+$ && "$d" -lt 0 ]] && break
    n=$((n + 1))
  done
elif command -v nvidia-smi >/dev/null 2>&1; then
  n=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
fi
json='{"version":{"major":1,"minor":0},"local":[{"gpus":['
for ((i = 0; i < n; i++)); do
  ((i > 0)) && json+=','
  json+="{\"id\":\"$i\",\"slots\":$slots}"
done
json+=']}]}'
if [[ $# -ge 1 ]]; then printf '%s\n' "$json" > "$1"; else printf '%s\n' "$json"; fi
echo "gpu-resources: $n GPU(s), $slots slot(s) each" >&2
[[ $n -gt 0 ]] || echo "gpu-resources: no GPU visible; tests asking for gpus:1 cannot be scheduled with this spec" >&2
