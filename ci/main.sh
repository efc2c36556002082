#!/usr/bin/env bash
# The main job: install, build, then `ixo check` on the embedded default suite over every
# backend this build has (a verdict table; GPU backends are SKIP without a device).
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/install-deps.sh
bash ci/build.sh
exec ./build/tools/ixo/ixo check "$@"
