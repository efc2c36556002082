"""suite() on Python kernels (the slow half of the fuzz/suite tests, its own ctest test so the
two run side by side): the right kernel passes every group, fixture and property; a planted GQA
bug fails groups, fixtures and properties with a shrunk case written; reports carry no
RapidCheck internals."""
import os

import indexer_oracle as io
import numpy_kernel as nk


def test_suite_passes_the_right_kernel_and_fails_the_planted_bug(tmp_path):
    """Bug caught: the suite missing a GQA bug in groups, fixtures or properties."""
    good = io.suite(nk.kernel, property_cases=2, out=str(tmp_path / "good"))
    assert good.passed, good.table
    groups = {x["group"] for x in good.rows}
    assert {"verify", "fixtures", "prop:matches-oracle", "prop:padding-rows"} <= groups
    bad = io.suite(nk.gqa_bug_kernel, property_cases=12, out=str(tmp_path / "bad"))
    assert not bad.passed
    failing = {x["group"] for x in bad.rows if x["status"] == "FAIL"}
    assert {"gqa", "fixtures"} <= failing and any(g.startswith("prop:") for g in failing), bad.table
    assert os.listdir(tmp_path / "bad"), "the shrunk property counterexample is written"
    assert "RC_FAIL" not in bad.table and ".cpp:" not in bad.table


def test_fuzz_and_suite_over_our_own_backend_through_python(tmp_path):
    """Bug caught: our own backends judged differently through Python than through ixo."""
    r = io.fuzz(io.backend("cpu-packed"), seconds=None, seeds=2, out=str(tmp_path))
    assert r.passed, r.report
    s = io.suite(io.backend("cpu-rows"), property_cases=3, fixtures=False)
    assert s.passed, s.table
