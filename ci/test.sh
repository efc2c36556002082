#!/usr/bin/env bash
# The test gate: install (incl. Debian's hipcc for the HIP compile gate; IXO_HIP=0 skips
# it), build, run every ctest test (GPU tests skip without a device and are reported as
# skipped, not passed).
set -euo pipefail
cd "$(dirname "$0")/.."
IXO_HIP="${IXO_HIP:-1}" bash ci/install-deps.sh   # hipcc: the HIP compile gate runs too
bash ci/build.sh
ctest --preset default "$@"
