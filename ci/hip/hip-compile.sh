#!/usr/bin/env bash
# HIP compile gate: build the GPU kernel sources (kernels/gpu, the same .cuh the CUDA build
# uses) with Debian's hipcc for gfx90a and gfx940. Exit 77 (ctest: skipped) without hipcc.
# Usage: ci/hip/hip-compile.sh [out-dir]
# It compiles the tree it lives in (a worktree compiles its own sources, not the main
# checkout's): every project header the compiler reads must lie under that tree, checked from
# the dependency files. The default out-dir is a fresh temporary folder, so two gates run from
# two trees at once never share objects.
set -euo pipefail
root="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd -P)"
if [[ $# -ge 1 ]]; then
  out="$1"
  mkdir -p "$out"
else
  out="$(mktemp -d "${TMPDIR:-/tmp}/ixo-hip-gate.XXXXXX")"
fi
HIPCC="${HIPCC:-$(command -v hipcc || true)}"
if [[ -z "$HIPCC" ]]; then
  echo "hipcc not found: HIP compile gate skipped (install: apt-get install -y hipcc libamdhip64-dev)"
  exit 77
fi
echo "HIP compile gate: sources of $root, objects in $out"
compile() {  # compile <name>: kernels/gpu/<name>.hip -> $out/<name>.o (+ .d)
  rm -f "$out/$1.o" "$out/$1.d"
  (set -x
   "$HIPCC" -std=c++17 -O3 --offload-arch=gfx90a --offload-arch=gfx940 -Wall \
     -I"$root/kernels" -I"$root/kernels/common" -I"$root/reference/include" -MD -MF "$out/$1.d" \
     -c "$root/kernels/gpu/$1.hip" -o "$out/$1.o")
  # Every project file among the dependencies must come from $root.
  local foreign
  foreign="$(tr ' \\' '\n\n' < "$out/$1.d" | grep -E '/(kernels|reference)/' | grep -v "^$root/" || true)"
  if [[ -n "$foreign" ]]; then
    echo "HIP compile gate: $1.hip read project files outside $root:" >&2
    echo "$foreign" >&2
    exit 1
  fi
}
compile indexer_hip
# Context-parallel kernels (cp_kernels.cuh): every K format, e4m3fnuz included, on gfx940.
compile cp_hip
ls -l "$out/indexer_hip.o" "$out/cp_hip.o"
echo "HIP compile gate: OK (gfx90a, gfx940; sources of $root)"
