#!/usr/bin/env bash
# HIP compile gate: build the GPU kernel sources (kernels/gpu, the same .cuh the CUDA build
# uses) with Debian's hipcc for gfx90a and gfx940. Exit 77 (ctest: skipped) without hipcc.
# Usage: ci/hip/hip-compile.sh [out-dir]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${1:-${TMPDIR:-/tmp}/ixo-hip-gate}"
HIPCC="${HIPCC:-$(command -v hipcc || true)}"
if [[ -z "$HIPCC" ]]; then
  echo "hipcc not found: HIP compile gate skipped (install: apt-get install -y hipcc libamdhip64-dev)"
  exit 77
fi
mkdir -p "$out"
set -x
"$HIPCC" -std=c++17 -O3 --offload-arch=gfx90a --offload-arch=gfx940 -Wall \
  -I"$root/kernels" -I"$root/kernels/common" \
  -c "$root/kernels/gpu/indexer_hip.hip" -o "$out/indexer_hip.o"
# Context-parallel kernels (cp_kernels.cuh): every K format, e4m3fnuz included, on gfx940.
"$HIPCC" -std=c++17 -O3 --offload-arch=gfx90a --offload-arch=gfx940 -Wall \
  -I"$root/kernels" -I"$root/kernels/common" \
  -c "$root/kernels/gpu/cp_hip.hip" -o "$out/cp_hip.o"
set +x
ls -l "$out/indexer_hip.o" "$out/cp_hip.o"
echo "HIP compile gate: OK (gfx90a, gfx940)"
