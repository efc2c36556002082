"""fuzz() and suite() on Python kernels: a planted GQA head-mapping bug is found and shrunk,
the right kernel survives, Unsupported is a skip (never a pass: all-skip is NOTHING JUDGED),
a raising, hanging, exiting or malformed kernel fails its case with the reason in the report,
the time budget and Ctrl-C stop a run at once, failures never overwrite each other and their
replay line runs as printed. No test asserts on wall time: work is bounded by seed counts, and
the budget tests count kernel calls."""
import os
import subprocess
import sys
import time

import numpy as np
import pytest

import indexer_oracle as io
import numpy_kernel as nk

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "..", "examples")


def test_fuzz_finds_and_shrinks_the_planted_gqa_bug(tmp_path):
    """Bug caught: the GQA head mapping h % Hk; the shrunk case keeps only failing rows."""
    r = io.fuzz(nk.gqa_bug_kernel, seconds=None, seeds=40, seed=1, out=str(tmp_path))
    assert r.failures and not r.passed and r.outcome == "FAIL", r.log
    d = r.failures[0]
    assert os.path.dirname(d) == str(tmp_path)
    case = io.Case.load(d)
    assert case.Hk > 1 and case.Hq != case.Hk  # the shrunk case still needs grouped heads
    assert case.R <= 2, "the failing row alone (or its group) is kept"
    assert not io.check(case, *nk.gqa_bug_kernel(case)).passed  # the shrunk case replays
    io.assert_indexer(case, *nk.kernel(case))  # and the right kernel passes it
    with open(os.path.join(d, "failure.txt")) as f:
        text = f.read()
    assert "python:numpy_kernel:gqa_bug_kernel" in text and "replay" in text
    # Reports for people: the shape, the failing (head, row) and the replay first; no RapidCheck internals.
    first = r.report.splitlines()
    assert first[0].startswith("FAIL python:numpy_kernel:gqa_bug_kernel") and "shrunk to R=" in first[0]
    assert "first failure at head" in first[0] and first[1].startswith("replay: ")
    for internal in ("RC_FAIL", "Falsifiable", ".cpp", "unsigned int", "Some of your RapidCheck"):
        assert internal not in r.report, internal


def test_shrinking_drops_heads_that_do_not_fail(tmp_path):
    """Bug caught: a shrunk case keeping q heads that do not fail (8:2 heads where 2:2 show the bug).
    The planted kernel blanks every head that reads K head 1 (needs Hk >= 2; RapidCheck's smallest
    such ratio is 8:2): one q head a K head is all the failure needs."""
    def kv_head_1_blank(case):
        ids, scores = nk.kernel(case)
        g = case.Hq // case.Hk
        for h in range(case.Hq):
            if h // g == 1:
                ids[h] = -1
        return ids, scores

    r = io.fuzz(kv_head_1_blank, seconds=None, seeds=20, out=str(tmp_path))
    assert r.failures, r.log
    case = io.Case.load(r.failures[0])
    assert case.Hk == 2 and case.Hq == case.Hk and case.R == 1, case


def test_the_printed_python_replay_line_runs_as_printed(tmp_path):
    """Bug caught: a replay line that cannot run (the kernel was never imported)."""
    r = io.fuzz(nk.gqa_bug_kernel, seconds=None, seeds=40, out=str(tmp_path))
    line = next(x for x in r.report.splitlines() if x.startswith("replay: "))[len("replay: "):]
    assert "from numpy_kernel import gqa_bug_kernel" in line
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.environ.get("PYTHONPATH", ""), EXAMPLES]))
    line = line.replace("python3 ", sys.executable + " ", 1)
    p = subprocess.run(["bash", "-c", line], env=env, capture_output=True, text=True)
    assert p.returncode == 1 and "AssertionError" in p.stderr and "head" in p.stderr, p.stderr[-2000:]


def test_the_right_kernel_survives_a_fixed_amount_of_fuzzing(tmp_path):
    """Bug caught: a false failure of a right kernel (oracle/verdict disagreeing with the spec)."""
    r = io.fuzz(nk.kernel, seconds=None, seeds=3, seed=7, out=str(tmp_path))
    assert r.passed and r.outcome == "PASS" and r.judged > 0 and r.cases == r.judged, r.report
    assert os.listdir(tmp_path) == []


def test_fuzz_over_presets_only(tmp_path):
    """Bug caught: --preset ignored (the case must come from the gqa preset)."""
    r = io.fuzz(nk.gqa_bug_kernel, seconds=None, seeds=10, presets=["gqa"], out=str(tmp_path))
    assert r.failures
    assert io.Case.load(r.failures[0]).Hk == 2


def test_a_kernel_that_declines_everything_judged_nothing_and_does_not_pass(tmp_path):
    """Bug caught (issue 23, HIGH): all-SKIP reported as PASS."""
    def declines(case):
        raise io.Unsupported("bf16 only")

    r = io.fuzz(declines, seconds=None, seeds=2, out=str(tmp_path))
    assert r.cases == 0 and r.judged == 0 and r.skipped > 0 and not r.failures
    assert not r.passed and r.outcome == "NOTHING JUDGED" and "NOTHING JUDGED" in r.summary
    s = io.suite(declines, properties=False)
    assert not s.passed and s.outcome == "NOTHING JUDGED" and "NOTHING JUDGED" in s.table

    def fp8_only_skipped(case):
        if case.k_dtype != "bf16":
            raise io.Unsupported("bf16 only")
        return nk.kernel(case)

    s = io.suite(fp8_only_skipped, properties=False, fixtures=False)
    rows = {x["group"]: x for x in s.rows}
    assert rows["fp8-e4m3fn"]["status"] == "SKIP" and rows["fp8-e4m3fn"]["skipped"] == 2
    assert rows["verify"]["status"] == "PASS"
    assert s.passed and s.outcome == "PASS" and "SKIP" in s.table


def test_a_raising_kernel_fails_its_cases_with_the_traceback(tmp_path):
    """Bug caught: a kernel exception swallowed or crashing the run."""
    def broken(case):
        raise RuntimeError("illegal memory access (simulated)")

    r = io.fuzz(broken, seconds=None, seeds=1, out=str(tmp_path))
    assert r.failures and "illegal memory access (simulated)" in r.report and "Traceback" in r.report


def test_sys_exit_in_a_kernel_is_a_failure_in_fuzz_and_in_suite(tmp_path):
    """Bug caught: sys.exit(77) aborting io.suite but failing in io.fuzz (one answer for both)."""
    def exits(case):
        sys.exit(77)

    r = io.fuzz(exits, seconds=None, seeds=1, out=str(tmp_path))
    assert r.failures and "sys.exit(77)" in r.report
    s = io.suite(exits, properties=False, fixtures=False)
    assert not s.passed and s.outcome == "FAIL" and "sys.exit(77)" in s.table


def test_malformed_outputs_fail_the_case(tmp_path):
    """Bug caught: a wrongly shaped output accepted or crashing the suite."""
    def wrong_shape(case):
        return np.zeros((case.Hq, case.R, case.topk + 1), np.int32)

    r = io.fuzz(wrong_shape, seconds=None, seeds=1, out=str(tmp_path))
    assert r.failures and "malformed outputs" in r.report and "topk_idx" in r.report


def test_the_budget_ends_the_run_within_one_case(tmp_path):
    """Bug caught: seconds=S overrun by a whole RapidCheck run (25 cases are never cut).
    Counted, not timed: every call takes >= 0.2 s, so a 1 s budget leaves room to start at
    most 5 cases, plus the one running when it ends."""
    calls = []

    def slow(case):
        calls.append(1)
        time.sleep(0.2)
        return nk.kernel(case)

    r = io.fuzz(slow, seconds=1.0, timeout=None, out=str(tmp_path))
    assert 1 <= len(calls) <= 6, len(calls)
    assert r.judged == len(calls) and r.outcome == "PASS"


def test_the_budget_also_ends_shrinking(tmp_path):
    """Bug caught: shrinking a failure running past the budget (a failing case per call)."""
    calls = []

    def slow_and_wrong(case):
        calls.append(1)
        time.sleep(0.2)
        return nk.gqa_bug_kernel(case) if case.Hk > 1 else np.full((case.Hq, case.R, case.topk), 7, np.int32)

    r = io.fuzz(slow_and_wrong, seconds=1.0, timeout=None, out=str(tmp_path))
    assert r.failures and len(calls) <= 7, len(calls)  # the cases that fit, one shrink step, no row reduction


def test_a_hanging_kernel_fails_its_case_after_the_timeout(tmp_path):
    """Bug caught: a hanging Python kernel hanging fuzz forever."""
    def hangs(case):
        time.sleep(1000)

    r = io.fuzz(hangs, seconds=2, timeout=0.3, out=str(tmp_path))
    assert r.failures and "per-case timeout" in r.report
    assert io.Case.load(r.failures[0]).R >= 1  # the case is saved


def test_ctrl_c_stops_fuzz_at_once_without_a_bogus_failure(tmp_path):
    """Bug caught: Ctrl-C turned into a failure (and a saved case that passes), fuzz running on."""
    calls = []

    def interrupted_on_third_call(case):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return nk.kernel(case)

    r = io.fuzz(interrupted_on_third_call, seconds=None, seeds=5, out=str(tmp_path))
    assert r.interrupted and r.outcome == "INTERRUPTED" and not r.passed
    assert len(calls) == 3 and not r.failures and os.listdir(tmp_path) == []
    assert r.judged == 2

    calls.clear()
    s = io.suite(interrupted_on_third_call, properties=False)
    assert s.interrupted and s.outcome == "INTERRUPTED" and not s.passed and len(calls) == 3


def test_bad_numbers_are_value_errors_before_any_work(tmp_path):
    """Bug caught: seconds=nan hanging, 0/-5 running nothing and passing, negative seeds wrapping."""
    calls = []

    def k(case):
        calls.append(1)
        return nk.kernel(case)

    for bad in (float("nan"), 0, -5, float("inf"), "10"):
        with pytest.raises(ValueError, match="seconds"):
            io.fuzz(k, seconds=bad, out=str(tmp_path))
    with pytest.raises(ValueError, match="seed"):
        io.fuzz(k, seed=-1, out=str(tmp_path))
    with pytest.raises(ValueError, match="shapes"):
        io.fuzz(k, shapes=-2, out=str(tmp_path))
    with pytest.raises(ValueError, match="seed: must be a whole number >= 0, got 9223372036854775808"):
        io.fuzz(k, seed=2 ** 63, seeds=1, seconds=None, out=str(tmp_path))  # past int64: refused, not wrapped
    with pytest.raises(ValueError, match="out"):
        io.fuzz(k, seconds=1, out="/proc/no/such/dir")
    assert calls == []
    # numpy scalars are numbers like any other
    r = io.fuzz(k, seconds=None, seeds=np.int64(1), seed=np.uint32(3), out=str(tmp_path))
    assert r.passed


def test_failure_directories_never_overwrite_each_other(tmp_path):
    """Bug caught: every failure written to kernel-seed<N>: a second run or backend overwrote the first."""
    a = io.fuzz(nk.gqa_bug_kernel, seconds=None, seeds=40, out=str(tmp_path))
    b = io.fuzz(nk.gqa_bug_kernel, seconds=None, seeds=40, out=str(tmp_path))
    assert a.failures and b.failures and a.failures[0] != b.failures[0]
    assert os.path.basename(a.failures[0]).startswith("python_numpy_kernel_gqa_bug_kernel-fuzz-seed")
    assert sorted(os.listdir(tmp_path)) == sorted(os.path.basename(d) for d in a.failures + b.failures)
