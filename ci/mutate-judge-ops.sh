#!/usr/bin/env bash
# Operator mutants of the judge (issue 26, second run): the four areas, one command.
#
#   ci/mutate-judge-ops.sh [--jobs N] [--max-cpp N] [--max-suite N] [--max-ext N] [--max-py N] [--out DIR]
#                          [--scratch DIR] [--area NAME ...]
#
# Each area is one ci/mutate-operators.py --tests-only campaign over its files with its
# killers (the project's own gate: host test executables that ctest runs, pytest files that
# CI runs); the survivors shown equivalent are listed in ci/judge-ops-equivalent.json. Writes
# DIR/<area>.json, DIR/<area>.md and the matrix DIR/matrix.md (ci/opmut_report.py); exit 1
# if an area kills less than 95 % of its non-equivalent mutants. One scratch tree and build
# serve every area (the first build is the long part). Per-file caps: reference --max-cpp (4),
# suite/src --max-suite (2: a suite mutant rebuilds ixo and the Python module and its killers
# take minutes), exec_backend.cpp --max-ext (24), Python files --max-py (8). 2 cores: about
# 90 min; --jobs 16 on a 16-core machine cuts the builds (the tests run one at a time).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
JOBS=2 MAX_CPP=4 MAX_SUITE=2 MAX_EXT=24 MAX_PY=8 OUT="$ROOT/build-mut/judge-ops" SCRATCH="$ROOT/build-mut/judge-ops-scratch" AREAS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --jobs) JOBS="$2"; shift 2 ;;
    --max-cpp) MAX_CPP="$2"; shift 2 ;;
    --max-py) MAX_PY="$2"; shift 2 ;;
    --max-suite) MAX_SUITE="$2"; shift 2 ;;
    --max-ext) MAX_EXT="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    --scratch) SCRATCH="$2"; shift 2 ;;
    --area) shift; while [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; do AREAS+=("$1"); shift; done ;;
    *) echo "unknown argument $1"; exit 2 ;;
  esac
done
[ ${#AREAS[@]} -gt 0 ] || AREAS=(external suite python reference)
mkdir -p "$OUT"
PY=/usr/bin/python3
OPS=("$PY" "$ROOT/ci/mutate-operators.py" --tests-only --jobs "$JOBS" --scratch "$SCRATCH"
     --timeout 1800 --equivalent "$ROOT/ci/judge-ops-equivalent.json")

# The reference tests (tests/reference: labels reference, verdict), cheapest first.
REF_TESTS="test_tau_derivation test_oracle_handworked test_fast_draws test_contract test_quantized_verdict
  test_verdict test_bad_input test_npy_hardening test_case_memory test_paged test_new_dtypes test_metamorphic
  test_oracle_agreement test_decode test_fixtures test_config_fields
  test_kernels_cpu:QuantizedSelectorSweep.*:MsaPresets.*:GraphBatchGenerator.*"
EXEC_PYTEST="test_exec_backend.py::test_a_right_kernel_passes test_exec_backend.py::test_a_wrong_kernel_fails_with_the_report
  test_exec_backend.py::test_exit_77_is_a_skip_not_a_pass test_exec_backend.py::test_nonzero_exit_fails_with_the_stderr_tail
  test_exec_backend.py::test_the_failure_quotes_the_kernels_stderr_not_its_stdout
  test_exec_backend.py::test_a_timeout_kills_the_kernel_and_fails_the_case
  test_exec_backend.py::test_missing_or_malformed_outputs_fail_the_case test_exec_backend.py::test_a_missing_program_is_bad_input
  test_exec_backend.py::test_the_scores_the_kernel_writes_are_judged test_exec_backend.py::test_the_program_is_looked_up_on_path
  test_exec_backend.py::test_a_lost_kernel_exit_status_fails_at_once_not_as_a_timeout"
PY_PYTEST="test_api.py test_new_dtypes.py test_paged.py test_msa_standin.py test_fuzz_and_suite.py test_sglang_adapter.py test_suite_python.py"

run_area() {  # NAME, then mutate-operators.py arguments
  local name="$1"; shift
  echo "== area $name" >&2
  local t0=$SECONDS
  nice -n 10 "${OPS[@]}" --json "$OUT/$name.json" --out "$OUT/$name.md" "$@"
  echo "== area $name: $(( (SECONDS - t0) / 60 )) min" >&2
}

for area in "${AREAS[@]}"; do
  case "$area" in
    external)
      run_area external --files kernels/external/exec_backend.cpp kernels/external/exec_backend.hpp --max "$MAX_EXT" \
        --tests 'test_kernels_cpu:BackendRegistry.*' --pytest $EXEC_PYTEST ;;
    suite)
      run_area suite --files suite/src/{case_run,conformance,coverage,default_suite,fuzz,property_runner,stop,suite_checks}.cpp \
        --max "$MAX_SUITE" --tests test_suite_rows test_suite_rules test_properties_catch_bugs test_coverage test_conformance_catches_bugs \
        --pytest test_suite_python.py test_fuzz_and_suite.py ;;
    python)
      run_area python --files python/indexer_oracle/{_case,_contract,_kernels,_verdict,__init__,__main__}.py \
        --max "$MAX_PY" --pytest $PY_PYTEST ;;
    reference)
      run_area reference --files reference/src/{case,case_io,contract,contract_json,generate,generate_values,generate_selector,oracle_fast,oracle_naive,transform,observed_arrays,spec_json,presets,fast_draws}.cpp \
        --max "$MAX_CPP" --tests $REF_TESTS ;;
    *) echo "unknown area $area (external suite python reference)"; exit 2 ;;
  esac
done
args=()
for area in "${AREAS[@]}"; do args+=("$area=$OUT/$area.json"); done
"$PY" "$ROOT/ci/opmut_report.py" --area "${args[@]}" --out "$OUT/matrix.md"
