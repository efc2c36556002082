#!/usr/bin/env bash
# `ixo fuzz` finds an injected bug, shrinks it and writes a loadable regression case
# directory; the unbroken backend passes that case. Usage: fuzz_test.sh IXO
set -u
IXO=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$IXO" fuzz --seconds 3 --backend cpu-packed --mutant 1 --out "$tmp/reg" > "$tmp/log" 2>&1
rc=$?
[ "$rc" = 1 ] || { echo "FAIL: fuzz with mutant 1 exited $rc, expected 1"; cat "$tmp/log"; exit 1; }
dir=$(ls -d "$tmp"/reg/*/ | head -1)
for f in case.json q.npy k_cache.npy spec.json failure.txt; do
  [ -f "$dir/$f" ] || { echo "FAIL: regression $dir lacks $f"; exit 1; }
done
grep -q "mutant 1" "$dir/failure.txt" || { echo "FAIL: failure.txt does not name the mutant"; exit 1; }
"$IXO" run --backend cpu-packed "$dir" --out "$tmp/out" > /dev/null || { echo "FAIL: run on the regression"; exit 1; }
"$IXO" check "$dir" --topk "$tmp/out/topk_idx.npy" --scores "$tmp/out/scores.npy" > "$tmp/check" 2>&1 ||
  { echo "FAIL: the unbroken backend fails the regression"; cat "$tmp/check"; exit 1; }
"$IXO" fuzz --seconds 3 --backend cpu-packed --out "$tmp/clean" > "$tmp/log2" 2>&1 ||
  { echo "FAIL: clean fuzz failed"; cat "$tmp/log2"; exit 1; }
[ ! -d "$tmp/clean" ] || [ -z "$(ls "$tmp/clean")" ] || { echo "FAIL: clean fuzz wrote regressions"; exit 1; }
echo "fuzz: mutant found, shrunk, written to $(basename "$dir"), replayable; clean run writes nothing"
