#!/usr/bin/env bash
# `ixo fuzz` end to end. Each block names the bug it catches:
#  1. a planted bug (mutant 1) found, shrunk, written loadable, replayable; the clean backend passes it
#  2. two runs into one --out never overwrite each other (dirs named backend-fuzz-seedN[-k])
#  3. a kernel that declines every case is NOTHING JUDGED (exit 1), never PASS (issue 23, HIGH)
#  4. the budget ends the run within one case: counted kernel calls, never wall time
#  5. Ctrl-C while a kernel runs: exit 3, the kernel stopped, no bogus failure written
#  6. bad --seconds / --seed / --out are exit 2 before any case runs
#  7. --contract: a typo in a contract file is exit 2 naming the key; fuzz under a contract says so,
#     draws only inside it (cpu-cp under sglang-triton-decode: no case declined) and lists the coverage
#     conditions the contract makes unreachable; a failure found under a contract saves contract.json,
#     which `ixo check DIR` picks up
# Usage: fuzz_test.sh IXO
set -u
IXO=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# 1.
"$IXO" fuzz --seconds 60 --seeds 4 --max-failures 1 --backend cpu-packed --mutant 1 --out "$tmp/reg" > "$tmp/log" 2>&1
rc=$?
[ "$rc" = 1 ] || { cat "$tmp/log"; fail "fuzz with mutant 1 exited $rc, expected 1"; }
dir=$(ls -d "$tmp"/reg/*/ | head -1)
for f in case.json q.npy k_cache.npy failure.txt; do
  [ -f "$dir/$f" ] || fail "regression $dir lacks $f"
done
grep -q "mutant 1" "$dir/failure.txt" || fail "failure.txt does not name the mutant"
grep -q "^replay: ixo check '.*' --backend 'cpu-packed'" "$dir/failure.txt" || fail "failure.txt has no replay line"
grep -qE "RC_FAIL|Falsifiable|\.cpp:" "$tmp/log" && fail "the report carries RapidCheck internals"
"$IXO" run --backend cpu-packed "$dir" --out "$tmp/out" > /dev/null || fail "run on the regression"
"$IXO" check "$dir" --topk "$tmp/out/topk_idx.npy" --scores "$tmp/out/scores.npy" > "$tmp/check" 2>&1 ||
  { cat "$tmp/check"; fail "the unbroken backend fails the regression"; }
"$IXO" fuzz --seconds 60 --seeds 2 --backend cpu-packed --out "$tmp/clean" > "$tmp/log2" 2>&1 ||
  { cat "$tmp/log2"; fail "clean fuzz failed"; }
[ -z "$(ls -A "$tmp/clean")" ] || fail "clean fuzz wrote regressions"
grep -q "fuzz PASS" "$tmp/log2" || fail "clean fuzz did not say PASS"

# 2.
"$IXO" fuzz --seconds 60 --seeds 4 --max-failures 1 --backend cpu-packed --mutant 1 --out "$tmp/reg" > /dev/null 2>&1
[ "$(ls "$tmp/reg" | wc -l)" = 2 ] || { ls "$tmp/reg"; fail "the second run overwrote the first one's failure"; }
ls "$tmp/reg" | grep -q -- "^cpu-packed-fuzz-seed[0-9]*-2$" || { ls "$tmp/reg"; fail "no -2 suffix on the taken name"; }

# 3. and 4.
count="$tmp/calls"
cat > "$tmp/decline.sh" <<SH
#!/bin/sh
echo x >> "$count"
sleep 0.3
exit 77
SH
"$IXO" fuzz --seconds 1 --backend exec:"/bin/sh $tmp/decline.sh" --out "$tmp/none" > "$tmp/log3" 2>&1
rc=$?
[ "$rc" = 1 ] || { cat "$tmp/log3"; fail "a kernel that declined everything exited $rc, expected 1"; }
grep -q "NOTHING JUDGED" "$tmp/log3" || { cat "$tmp/log3"; fail "no NOTHING JUDGED outcome"; }
"$IXO" check --backend exec:"/bin/sh -c 'exit 77'" --no-properties --no-fixtures > "$tmp/log3b" 2>&1
rc=$?
[ "$rc" = 1 ] && grep -q "NOTHING JUDGED" "$tmp/log3b" || { tail -5 "$tmp/log3b"; fail "ixo check over an all-skip kernel exited $rc"; }
"$IXO" check --backend exec:"/bin/sh -c 'exit 77'" --no-properties --no-fixtures --json > "$tmp/j" 2>&1
grep -q '"pass": false' "$tmp/j" && grep -q '"outcome": "NOTHING JUDGED"' "$tmp/j" || fail "--json says pass for an all-skip kernel"
calls=$(wc -l < "$count")
# every call takes >= 0.3 s: a 1 s budget starts at most 4 calls, plus the one running at its end
[ "$calls" -ge 1 ] && [ "$calls" -le 5 ] || fail "the 1 s budget ran $calls calls of >= 0.3 s"

# 5.
rm -f "$count"
cat > "$tmp/interrupt.sh" <<SH
#!/bin/sh
echo x >> "$count"
n=\$(wc -l < "$count")
if [ "\$n" -ge 2 ]; then kill -INT \$PPID; sleep 30; fi
exit 77
SH
"$IXO" fuzz --seconds 600 --backend exec:"/bin/sh $tmp/interrupt.sh" --out "$tmp/int" > "$tmp/log5" 2>&1
rc=$?
[ "$rc" = 3 ] || { cat "$tmp/log5"; fail "Ctrl-C during fuzz exited $rc, expected 3"; }
grep -q "INTERRUPTED" "$tmp/log5" || fail "no INTERRUPTED outcome"
[ "$(wc -l < "$count")" = 2 ] || fail "fuzz ran on after Ctrl-C ($(wc -l < "$count") calls)"
[ -z "$(ls -A "$tmp/int")" ] || fail "Ctrl-C wrote a bogus failure"

# 6.
for args in "--seconds nan" "--seconds 0" "--seconds -5" "--seed -3" "--out /proc/nowhere/x"; do
  # shellcheck disable=SC2086
  "$IXO" fuzz $args --backend exec:"/bin/sh $tmp/decline.sh" > "$tmp/log6" 2>&1
  rc=$?
  [ "$rc" = 2 ] || { cat "$tmp/log6"; fail "ixo fuzz $args exited $rc, expected 2"; }
done
# 7.
echo '{"base": "sglang-triton-decode", "topk_max": 9}' > "$tmp/typo.json"
"$IXO" fuzz --contract "$tmp/typo.json" --backend cpu-rows --seconds 5 --out "$tmp/c" > "$tmp/log7" 2>&1
rc=$?
[ "$rc" = 2 ] && grep -q "contract.topk_max" "$tmp/log7" || { cat "$tmp/log7"; fail "a contract typo exited $rc"; }
"$IXO" fuzz --contract sglang-triton-decode --backend cpu-cp --backend cpu-packed --seeds 1 --seconds 600 --coverage --out "$tmp/c" > "$tmp/log7" 2>&1 ||
  { cat "$tmp/log7"; fail "cpu-cp under sglang-triton-decode"; }
grep -q "judged under cpu-cp: contract sglang-triton-decode" "$tmp/log7" || fail "the contract is not named"
grep -q ", 0 declined" "$tmp/log7" || { grep "fuzz " "$tmp/log7"; fail "cases were drawn outside the contract and declined"; }
grep -q "unreachable under the contract (not misses):.*topk_ge_1024" "$tmp/log7" || { tail -5 "$tmp/log7"; fail "coverage counts contract-excluded conditions as misses"; }
"$IXO" fuzz --contract sglang-triton-decode --backend cpu-packed --mutant 1 --seeds 10 --max-failures 1 --seconds 600 --out "$tmp/cm" > "$tmp/log8" 2>&1
dir=$(ls -d "$tmp"/cm/*/ | head -1)
[ -f "$dir/contract.json" ] || { cat "$tmp/log8"; fail "no contract.json beside a failure found under a contract"; }
"$IXO" check "$dir" --backend cpu-packed > "$tmp/log9" 2>&1
grep -q "under contract sglang-triton-decode" "$tmp/log9" || { cat "$tmp/log9"; fail "ixo check DIR ignored DIR/contract.json"; }
echo "fuzz: mutant found, shrunk, replayable; dirs unique; all-skip is NOTHING JUDGED; budget and Ctrl-C honoured; bad numbers exit 2; contracts honoured"
