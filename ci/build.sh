#!/usr/bin/env bash
# Configures and builds the default preset (Release; CUDA for sm_90a + sm_100a when nvcc
# exists; mutant switches on; warnings are errors).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset default >/dev/null
cmake --build --preset default -j "${JOBS:-$(nproc)}"   # the machine's cores (JOBS overrides)
