#!/usr/bin/env bash
# The test gate: install (incl. Debian's hipcc for the HIP compile gate; IXO_HIP=0 skips
# it), build, run every ctest test (GPU tests skip without a device and are reported as
# skipped, not passed). The ctest log and its JUnit XML (for dashboards) land side by side
# in IXO_TEST_LOG_DIR (default build/): ctest.log, ctest-junit.xml.
set -euo pipefail
cd "$(dirname "$0")/.."
IXO_HIP="${IXO_HIP:-1}" bash ci/install-deps.sh   # hipcc: the HIP compile gate runs too
bash ci/build.sh
logs="$(realpath -m "${IXO_TEST_LOG_DIR:-build}")"
mkdir -p "$logs"
ctest --preset default -j "${JOBS:-$(nproc)}" --output-junit "$logs/ctest-junit.xml" "$@" 2>&1 | tee "$logs/ctest.log"
