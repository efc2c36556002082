#!/usr/bin/env bash
# Adopts the vote top-k (IXO_TOPK_BALLOT's default -> N, 1 or 2) in the tree it runs in: the default in
# kernels/gpu/ballot_select.cuh, and the host radix test (test_topk_kernel_host_radix) pinned to 0 so it
# keeps judging the radix select. Used by session24-gate.sh (ADOPT_BALLOT=N, on the device's copy)
# and here before committing the same change.   bash docs/experiments/adopt-ballot.sh N
set -euo pipefail
cd "$(dirname "$0")/../.."
n=${1:?usage: adopt-ballot.sh 1|2}
[[ $n == 1 || $n == 2 ]] || { echo "adopt-ballot.sh: N must be 1 or 2, got '$n'" >&2; exit 2; }
sed -i "s/^#define IXO_TOPK_BALLOT 0$/#define IXO_TOPK_BALLOT $n/" kernels/gpu/ballot_select.cuh
grep -q "^#define IXO_TOPK_BALLOT $n$" kernels/gpu/ballot_select.cuh || { echo "adopt-ballot.sh: default not set" >&2; exit 1; }
sed -i 's/^  if(mode STREQUAL "votes")$/  if(mode STREQUAL "radix")\n    target_compile_definitions(${t} PRIVATE IXO_TOPK_BALLOT=0)\n  elseif(mode STREQUAL "votes")/' \
  tests/kernels/CMakeLists.txt
grep -q 'IXO_TOPK_BALLOT=0' tests/kernels/CMakeLists.txt || { echo "adopt-ballot.sh: radix test not pinned" >&2; exit 1; }
echo "IXO_TOPK_BALLOT default -> $n; test_topk_kernel_host_radix pinned to 0"
