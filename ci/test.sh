#!/usr/bin/env bash
# The test gate: install, build, run every ctest test (GPU tests skip without a device and
# are reported as skipped, not passed).
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/install-deps.sh
bash ci/build.sh
ctest --preset default "$@"
