#!/usr/bin/env bash
# A mutation ctest of a named GPU test (kernels/common/mutants.hpp, where "gpu-test"):
#   expect_killed.sh MUTANT_KEY TEST_PROGRAM [ARGS...]
# runs the GoogleTest program with IXO_TEST_MUTANT=MUTANT_KEY (tests/gpu/gpu_test_util.hpp
# injects it into the test's launches) and passes (exit 0) only when the test FAILS with a
# GoogleTest failure: the mutant is killed. A passing test means the mutant survived (exit 1);
# no device, or every selected test skipped, is exit 77 (ctest: skipped, never passed).
set -uo pipefail
key="$1"; shift
"$(dirname "$0")/run_if_gpu.sh" true || exit 77  # no CUDA device: skipped (run_if_gpu.sh says why)
log="$(mktemp)"; trap 'rm -f "$log"' EXIT
IXO_TEST_MUTANT="$key" "$@" > "$log" 2>&1
rc=$?
tail -n 40 "$log"
if grep -q '^\[  FAILED  \]' "$log"; then
  echo "mutant $key KILLED by $* (exit $rc)"; exit 0
fi
if [[ $rc == 0 ]] && grep -q '^\[  SKIPPED \]' "$log" && ! grep -q '^\[  PASSED  \] [1-9]' "$log"; then
  echo "SKIP: the named test skipped under mutant $key"; exit 77
fi
if [[ $rc == 0 ]]; then echo "mutant $key SURVIVED $*"; exit 1; fi
echo "mutant $key: $* ended with exit $rc but no GoogleTest failure (a crash is not counted as a kill)"; exit 1
