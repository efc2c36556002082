"""A kernel engineer's pytest file: the naive numpy kernel checked with assert_indexer on
preset cases (a case table visible at the test) and fuzzed for a few seconds.

    PYTHONPATH=build/python:examples /usr/bin/python3 -m pytest -q examples/test_numpy_kernel.py
"""
import pytest

import indexer_oracle as io
from numpy_kernel import kernel

CASES = [("tiny", 1), ("verify", 2), ("boundary", 1), ("km-slots", 1), ("fp8-e4m3fn", 1), ("fp8-e4m3fnuz", 1),
         ("e5m2-lse", 1), ("gqa", 1), ("padding", 1), ("local0", 1), ("topk-above-nb", 1), ("forced-overlap", 1)]


@pytest.mark.parametrize("preset, seed", CASES)
def test_kernel_matches_the_oracle(preset, seed):
    case = io.generate(preset, seed)
    ids, scores = kernel(case)
    io.assert_indexer(case, ids, scores)


def test_kernel_survives_fuzzing(tmp_path):
    r = io.fuzz(kernel, seconds=5, out=str(tmp_path))
    assert not r.failures, r.report
