"""fuzz() and suite() on Python kernels: a planted GQA head-mapping bug is found and shrunk,
the right kernel survives, Unsupported is a skip (never a pass), a raising or malformed
kernel fails its case with the reason in the report."""
import os
import time

import numpy as np

import indexer_oracle as io
import numpy_kernel as nk


def test_fuzz_finds_and_shrinks_the_planted_gqa_bug_within_30_s(tmp_path):
    t0 = time.monotonic()
    r = io.fuzz(nk.gqa_bug_kernel, seconds=30, seed=1, out=str(tmp_path))
    assert time.monotonic() - t0 < 40
    assert r.failures and not r.passed, r.log
    d = r.failures[0]
    assert os.path.dirname(d) == str(tmp_path)
    case = io.Case.load(d)
    assert case.Hk > 1 and case.Hq != case.Hk  # the shrunk case still needs grouped heads
    assert case.R <= 4, "shrinking should leave a small batch"
    assert not io.check(case, *nk.gqa_bug_kernel(case)).passed  # the shrunk case replays
    io.assert_indexer(case, *nk.kernel(case))  # and the right kernel passes it
    with open(os.path.join(d, "failure.txt")) as f:
        text = f.read()
    assert "python:gqa_bug_kernel" in text and "replay" in text
    assert "Falsifiable" in r.report and "shrink" in r.report


def test_the_right_kernel_survives_15_s_of_fuzzing(tmp_path):
    r = io.fuzz(nk.kernel, seconds=15, seed=7, out=str(tmp_path))
    assert r.passed and r.cases > 50, r.report
    assert os.listdir(tmp_path) == []


def test_fuzz_over_presets_only(tmp_path):
    r = io.fuzz(nk.gqa_bug_kernel, seconds=20, presets=["gqa"], out=str(tmp_path))
    assert r.failures
    assert io.Case.load(r.failures[0]).Hk == 2


def test_unsupported_is_a_skip_never_a_pass(tmp_path):
    def declines(case):
        raise io.Unsupported("bf16 only")

    r = io.fuzz(declines, seconds=2, out=str(tmp_path))
    assert r.cases == 0 and r.gave_up > 0 and not r.failures and not r.passed

    def fp8_only_skipped(case):
        if case.k_dtype != "bf16":
            raise io.Unsupported("bf16 only")
        return nk.kernel(case)

    s = io.suite(fp8_only_skipped, properties=False, fixtures=False)
    rows = {x["group"]: x for x in s.rows}
    assert rows["fp8-e4m3fn"]["status"] == "SKIP" and rows["fp8-e4m3fn"]["skipped"] == 2
    assert rows["verify"]["status"] == "PASS"
    assert s.passed and "SKIP" in s.table


def test_a_raising_kernel_fails_its_cases_with_the_traceback(tmp_path):
    def broken(case):
        raise RuntimeError("illegal memory access (simulated)")

    r = io.fuzz(broken, seconds=5, out=str(tmp_path))
    assert r.failures and "illegal memory access (simulated)" in r.report and "Traceback" in r.report


def test_malformed_outputs_fail_the_case(tmp_path):
    def wrong_shape(case):
        return np.zeros((case.Hq, case.R, case.topk + 1), np.int32)

    r = io.fuzz(wrong_shape, seconds=5, out=str(tmp_path))
    assert r.failures and "malformed outputs" in r.report and "topk_idx" in r.report


def test_suite_passes_the_right_kernel_and_fails_the_planted_bug(tmp_path):
    good = io.suite(nk.kernel, property_cases=4, out=str(tmp_path / "good"))
    assert good.passed, good.table
    groups = {x["group"] for x in good.rows}
    assert {"verify", "fixtures", "prop:matches-oracle", "prop:padding-rows"} <= groups
    bad = io.suite(nk.gqa_bug_kernel, property_cases=40, out=str(tmp_path / "bad"))
    assert not bad.passed
    failing = {x["group"] for x in bad.rows if x["status"] == "FAIL"}
    assert {"gqa", "fixtures"} <= failing and any(g.startswith("prop:") for g in failing), bad.table
    assert os.listdir(tmp_path / "bad"), "the shrunk property counterexample is written"


def test_fuzz_and_suite_over_our_own_backend_through_python(tmp_path):
    r = io.fuzz(io.backend("cpu-packed"), seconds=3, out=str(tmp_path))
    assert r.passed, r.report
    s = io.suite(io.backend("cpu-rows"), property_cases=3, fixtures=False)
    assert s.passed, s.table
