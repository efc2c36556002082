#!/usr/bin/env bash
# The SGLang stand-in on a GPU machine (torch + triton), after ci/gpu-check.sh built ./build:
#   bash ci/gpu-sglang-standin.sh [OUTDIR]          (default $OUT, else ./gpu-sglang-out)
# Stages (STAGES="env compare smoke fuzz pytest", default "env compare smoke fuzz"):
#   env    torch/triton/GPU versions                                   -> sglang-env.log
#   compare examples/sglang_triton_fuzz.py --compare N (COMPARE=150): the Triton stand-in's ids equal the
#          numpy stand-in's bit for bit on N random in-contract batches x 3 bug switches (no indexer_oracle)
#                                                                       -> sglang-compare.jsonl
#   smoke  examples/sglang_triton_fuzz.py --smoke: the Triton stand-in (examples/sglang_triton_standin.py)
#          agrees with the numpy stand-in's io.check verdicts (clean and both bug switches)
#                                                                       -> sglang-smoke.jsonl / .log
#   fuzz   examples/sglang_triton_fuzz.py: io.fuzz(contract="sglang-triton-decode") for bug in
#          (None, hk_packed_heads, local0_group_length) x shapes in (4, None), SECONDS_PER_RUN (60) each,
#          cold Triton cache per run; one JSON line per run             -> sglang-fuzz.jsonl, fuzz-*.log, fuzz-*/
#   pytest python/tests/test_sglang_standin.py + test_sglang_adapter.py (CPU, numpy stand-in)
#                                                                       -> sglang-pytest.log
# Exit 0 only if every stage run passed (the clean stand-in passes, each planted bug is found).
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-${OUT:-$root/gpu-sglang-out}}"
mkdir -p "$out"
STAGES="${STAGES:-env compare smoke fuzz}"
PY="${IXO_PYTHON:-python3}"
deps=/tmp/ixo-deps   # ci/gpu-check.sh unpacks the .deps libraries (libfmt, ...) here
export LD_LIBRARY_PATH="$deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONPATH="$root/build/python:$root/examples${PYTHONPATH:+:$PYTHONPATH}"
status=0
note() { echo "== $*" | tee -a "$out/sglang-summary.log"; }
has() { [[ " $STAGES " == *" $1 "* ]]; }
cd "$root" || exit 3

if has env; then
  "$PY" -c "import sys, torch, triton; print(sys.version); print('torch', torch.__version__, 'triton', triton.__version__); print(torch.cuda.get_device_name())" > "$out/sglang-env.log" 2>&1
  rc=$?; note "env rc=$rc: $(tail -2 "$out/sglang-env.log" | tr '\n' ' ')"; [[ $rc == 0 ]] || exit 1
  # smoke, fuzz and pytest need the package built for this python (ci/gpu-check.sh); compare does not.
  "$PY" -c "import indexer_oracle" >> "$out/sglang-env.log" 2>&1 || { note "indexer_oracle does not import from build/python"; status=1; }
fi
if has compare; then
  "$PY" examples/sglang_triton_fuzz.py --compare "${COMPARE:-150}" > "$out/sglang-compare.jsonl" 2> "$out/sglang-compare.log"
  rc=$?; note "compare rc=$rc: $(tail -1 "$out/sglang-compare.jsonl")"; [[ $rc == 0 ]] || status=1
fi
if has smoke; then
  "$PY" examples/sglang_triton_fuzz.py --smoke --out "$out" > "$out/sglang-smoke.jsonl" 2> "$out/sglang-smoke.log"
  rc=$?; note "smoke rc=$rc: $(tail -1 "$out/sglang-smoke.jsonl")"; [[ $rc == 0 ]] || status=1
fi
if has fuzz; then
  "$PY" examples/sglang_triton_fuzz.py --seconds "${SECONDS_PER_RUN:-60}" --out "$out" > "$out/sglang-fuzz.jsonl" 2> "$out/sglang-fuzz.log"
  rc=$?; note "fuzz rc=$rc ($(wc -l < "$out/sglang-fuzz.jsonl") runs)"; cat "$out/sglang-fuzz.jsonl"; [[ $rc == 0 ]] || status=1
fi
if has pytest; then
  "$PY" -m pytest -q -p no:cacheprovider python/tests/test_sglang_standin.py python/tests/test_sglang_adapter.py > "$out/sglang-pytest.log" 2>&1
  rc=$?; note "pytest rc=$rc: $(tail -1 "$out/sglang-pytest.log")"; [[ $rc == 0 ]] || status=1
fi
exit $status
