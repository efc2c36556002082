#!/usr/bin/env bash
# Command-line round trip and exit codes: gen -> ref -> check (0), a wrong answer (1),
# bad input (2), and a case directory written by numpy and judged against numpy's own
# float64 selection. Usage: cli_test.sh IXO NUMPY_CASE_PY [PYTHON]
set -u
IXO=$1 NUMPY_CASE=$2 PY=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
expect() {  # expect CODE DESCRIPTION -- command...
  local want=$1 what=$2
  shift 3
  "$@" >"$tmp/out" 2>&1
  local got=$?
  if [ "$got" != "$want" ]; then
    echo "FAIL: $what: exit $got, expected $want"; sed 's/^/    /' "$tmp/out"; fails=$((fails + 1))
  else
    echo "ok: $what (exit $got)"
  fi
}

expect 0 "gen boundary seed 1" -- "$IXO" gen --preset boundary --seed 1 --out "$tmp/c1"
expect 0 "gen boundary seed 2" -- "$IXO" gen --preset boundary --seed 2 --out "$tmp/c2"
expect 0 "ref" -- "$IXO" ref "$tmp/c1" --out "$tmp/o1"
expect 0 "ref into the case dir" -- "$IXO" ref "$tmp/c2"
expect 0 "check the oracle's own outputs" -- "$IXO" check "$tmp/c1" --topk "$tmp/o1/topk_idx.npy" --scores "$tmp/o1/scores.npy"
expect 0 "check --exact on ids only" -- "$IXO" check "$tmp/c1" --topk "$tmp/o1/topk_idx.npy" --exact
"$IXO" check "$tmp/c1" --topk "$tmp/o1/topk_idx.npy" --json >"$tmp/json" 2>&1
grep -q '"pass": true' "$tmp/json" || { echo "FAIL: --json lacks \"pass\": true"; cat "$tmp/json"; fails=$((fails + 1)); }
# Same shapes, other values: seed 2's answers are wrong for seed 1's case.
expect 1 "another case's ids fail" -- "$IXO" check "$tmp/c1" --topk "$tmp/c2/topk_idx.npy"
expect 1 "another case's scores fail" -- "$IXO" check "$tmp/c1" --topk "$tmp/o1/topk_idx.npy" --scores "$tmp/c2/scores.npy"
grep -q "scores\[head" "$tmp/out" || { echo "FAIL: report does not name the cell"; fails=$((fails + 1)); }
expect 2 "missing case dir" -- "$IXO" check "$tmp/nope" --topk "$tmp/o1/topk_idx.npy"
expect 2 "missing --topk" -- "$IXO" check "$tmp/c1"
expect 2 "unknown preset" -- "$IXO" gen --preset nope --seed 1 --out "$tmp/x"
expect 2 "unknown option" -- "$IXO" check --frobnicate
expect 2 "topk file of the wrong shape" -- "$IXO" check "$tmp/c1" --topk "$tmp/o1/scores.npy"
expect 2 "unknown backend" -- "$IXO" run --backend nope "$tmp/c1" --out "$tmp/x"
# Issue 10: one exit code per class, --version, JSON errors, flags of the other mode of check.
expect 0 "--version" -- "$IXO" --version
grep -q "^ixo [0-9]" "$tmp/out" || { echo "FAIL: --version prints no version"; fails=$((fails + 1)); }
expect 2 "--topk without a case directory is not a suite run" -- "$IXO" check --topk "$tmp/o1/topk_idx.npy"
expect 2 "--exact in suite mode" -- "$IXO" check --exact
expect 2 "--failures-only with a case directory" -- "$IXO" check "$tmp/c1" --topk "$tmp/o1/topk_idx.npy" --failures-only
expect 2 "--topk and --backend together" -- "$IXO" check "$tmp/c1" --topk "$tmp/o1/topk_idx.npy" --backend cpu-rows
expect 0 "--backend takes one value: the case directory is not eaten" -- "$IXO" check --backend cpu-rows "$tmp/c1"
expect 3 "an environment error (output under a regular file) is exit 3, not bad input" -- "$IXO" gen --preset tiny --out "$tmp/c1/case.json/x"
"$IXO" check "$tmp/nope" --topk x --json > "$tmp/json" 2>/dev/null
grep -q '"exit": 2' "$tmp/json" && grep -q '"field": "case"' "$tmp/json" ||
  { echo "FAIL: --json bad input prints no JSON error object"; cat "$tmp/json"; fails=$((fails + 1)); }
if "$IXO" list | grep -q cuda-rows && ! nvidia-smi -L > /dev/null 2>&1; then
  "$IXO" check --backend cuda-rows --backend cpu-rows --no-properties > "$tmp/nogpu" 2>&1
  [ "$(grep -c 'cuda-rows' "$tmp/nogpu")" = 1 ] && grep -q "unavailable here, skipped: cuda-rows: no CUDA device" "$tmp/nogpu" ||
    { echo "FAIL: no GPU must be one line saying 'no CUDA device'"; head -5 "$tmp/nogpu"; fails=$((fails + 1)); }
fi
# ixo diff (issue 24): two backends bit for bit, the first difference placed in the plan.
expect 0 "diff: the twin's two plans agree" -- "$IXO" diff "$tmp/c1" --backend cpu-rows --backend cpu-packed --chunks 3
grep -q "agree bit for bit" "$tmp/out" || { echo "FAIL: diff of equal outputs says no agreement"; fails=$((fails + 1)); }
expect 2 "diff takes two backends" -- "$IXO" diff "$tmp/c1" --backend cpu-rows
expect 2 "diff: unknown mutant" -- "$IXO" diff "$tmp/c1" --backend cpu-rows --backend cpu-packed --mutant 999
if "$IXO" mutate --backend cpu-rows --only 8 > /dev/null 2>&1; then  # a test build: mutant switches compiled in
  # k_by_row_index: row 0 reads table row 0, not its slot's: its block 0 is scored by CTA 0 of both plans.
  expect 1 "diff names the first differing cell under mutant 8" -- "$IXO" diff "$tmp/c1" --backend cpu-rows --backend cpu-packed --mutant 8 --chunks 3
  grep -q "first score difference: \[head 0, row 0, block 0\]" "$tmp/out" &&
    grep -q "cpu-packed (mutant 8): CTA x 0 of 12 (program 0: rows 0..3 packed, tile row 0), KV chunk 0 of 3" "$tmp/out" ||
    { echo "FAIL: diff does not place the first difference"; cat "$tmp/out"; fails=$((fails + 1)); }
fi
# ixo gen from a fixture or a spec file (issue 24: no case rebuilt in code to replay a failure).
expect 0 "gen --fixture" -- "$IXO" gen --fixture init-wider-than-row --out "$tmp/fx"
expect 0 "the fixture's case passes on the twin" -- "$IXO" check "$tmp/fx" --backend cpu-rows
if "$IXO" mutate --backend cpu-rows --only 29 > /dev/null 2>&1; then
  expect 1 "the fixture's case shows mutant 29" -- "$IXO" diff "$tmp/fx" --backend cpu-rows --backend cpu-packed --mutant 29
fi
expect 0 "gen --fixture of tie-free values" -- "$IXO" gen --fixture exact-tie-free --out "$tmp/fxe"
[ -f "$tmp/fxe/exact_ids" ] || { echo "FAIL: an exact fixture's case lacks its exact_ids marker"; fails=$((fails + 1)); }
echo '{"preset": "tiny"}' > "$tmp/spec.json"
expect 0 "gen --spec" -- "$IXO" gen --spec "$tmp/spec.json" --seed 4 --out "$tmp/sp"
expect 0 "gen --preset, same seed" -- "$IXO" gen --preset tiny --seed 4 --out "$tmp/pr"
for f in q k_cache req_to_token slot_ids seq_lens; do
  cmp -s "$tmp/sp/$f.npy" "$tmp/pr/$f.npy" || { echo "FAIL: gen --spec {preset: tiny} differs from --preset tiny in $f.npy"; fails=$((fails + 1)); }
done
expect 2 "gen without a source" -- "$IXO" gen --out "$tmp/none"
expect 2 "gen with two sources" -- "$IXO" gen --preset tiny --fixture hq4 --out "$tmp/two"
expect 2 "gen with an unknown fixture" -- "$IXO" gen --fixture nope --out "$tmp/nope"
"$IXO" list > "$tmp/list"
grep -q "exec:COMMAND" "$tmp/list" && ! grep -q "oracle-naive" "$tmp/list" ||
  { echo "FAIL: ixo list shows what ixo run does not accept"; cat "$tmp/list"; fails=$((fails + 1)); }
grep -q "run only when named (--backend): sim-rows sim-packed sim-cp" "$tmp/list" ||
  { echo "FAIL: ixo list does not name the opt-in sim backends"; cat "$tmp/list"; fails=$((fails + 1)); }
# The HIP build's code path, simulated on the host (opt-in backends), judged on one case directory.
expect 0 "sim-packed and sim-cp judge the tiny case" -- "$IXO" check "$tmp/pr" --backend sim-packed --backend sim-cp

if [ -n "$PY" ] && "$PY" -c 'import numpy' 2>/dev/null; then
  for seed in 1 2 3; do
    expect 0 "numpy writes case $seed" -- "$PY" "$NUMPY_CASE" "$tmp/np$seed" "$seed"
    expect 0 "numpy float64 selection passes (case $seed)" -- "$IXO" check "$tmp/np$seed" --topk "$tmp/np$seed/np_topk_idx.npy"
    expect 1 "numpy selection with one id moved fails (case $seed)" -- "$IXO" check "$tmp/np$seed" --topk "$tmp/np$seed/np_topk_idx_broken.npy"
  done
  grep -q "expected" "$tmp/out" || { echo "FAIL: report lacks expected ids"; fails=$((fails + 1)); }
else
  echo "numpy not available: numpy leg not run"
  [ "$fails" = 0 ] && exit 77
fi
[ "$fails" = 0 ] && echo "all CLI checks passed"
exit $((fails > 0))
