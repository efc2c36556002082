"""examples/msa_standin.py (a numpy stand-in of MiniMax's upstream M3 decode indexer, MSA's API, with
three planted bugs) through examples/msa_adapter.py, judged inside the msa-decode contract: quantized
ranked selection, the local page in slot 15, natural-unit history scores (docs/contracts.md).
Fixed amounts of work (seeds=), never wall time."""
from functools import partial

import numpy as np
import pytest

import indexer_oracle as io
from msa_adapter import msa_kernel
from msa_standin import msa_decode_indexer, quantized_topk


def kernel(bug=None):
    return msa_kernel(partial(msa_decode_indexer, bug=bug))


def test_the_clean_standin_passes_inside_msa_decode():
    """Bug caught: a verdict that rejects MSA's legitimate layout or its quantized swaps."""
    r = io.fuzz(kernel(), contract="msa-decode", seeds=8, seconds=None)
    assert r.passed, r.report
    assert r.cases >= 100, r.report  # a run that judged nothing is not a pass


def test_its_output_fails_the_spec_contract_which_wants_ascending_ids():
    """The same output under the spec (ascending ids, log2 scores): judged outside MSA's contract it
    fails on structure, which is why the contract exists."""
    c = io.generate("msa-sweep", 1)
    inside = io.Case(c.q, c.k_cache, np.where(c.req_to_token < 0, c.req_to_token + c.S, c.req_to_token),
                     c.slot_ids, c.seq_lens, block_size=128, topk=16, init_blocks=0, local_blocks=1,
                     packed_queries=c.packed_queries, k_dtype=c.k_dtype)
    ids, scores = kernel()(inside)
    assert io.check(inside, ids, scores, contract="msa-decode").passed
    v = io.check(inside, ids, None)
    assert not v.passed and "structure" in v.report


@pytest.mark.parametrize("bug, tier", [
    ("q_rows_share_length", None),          # earlier verify rows see the request's later tokens
    ("local_page_from_length", "structure"),  # slot 15 = L // 128
    ("ties_high", "selector"),             # equal buckets to the higher id: the replay on its scores
])
def test_each_planted_bug_is_found_and_shrunk(bug, tier):
    r = io.fuzz(kernel(bug), contract="msa-decode", seeds=40, seconds=None)
    assert not r.passed and r.failures, r.report
    head = r.report.splitlines()[0]
    assert "contract msa-decode" in head and "shrunk to R=" in head, r.report
    rows = int(head.split("shrunk to R=")[1].split(" ")[0])
    assert rows <= 4, r.report
    if tier:
        assert f"  {tier}:" in r.report, r.report


def test_the_standin_selector_matches_hand_worked_buckets():
    """lo 0, hi 65534: one step is 1, bucket(v) = floor(v + 1.5); 10.2 (id 3) and 10.4 (id 5) share
    bucket 11 and the lower id ranks first."""
    s = np.array([0.0, 65534.0, 7.0, 10.2, 10.6, 10.4], dtype=np.float32)
    assert quantized_topk(s, 5).tolist() == [1, 4, 3, 5, 2]
    assert quantized_topk(s, 5, bug="ties_high").tolist() == [1, 4, 5, 3, 2]


def test_the_readme_lines_run_as_printed():
    """README's ten lines (with seeds= in place of seconds=): a preset case with negative aliases is
    judged under msa-decode with its aliases resolved (the same truth), and the verdict names it."""
    kernel_ = msa_kernel(msa_decode_indexer)
    case = io.generate("msa-q16", seed=1)
    ids, scores = kernel_(case)
    v = io.check(case, ids, scores, contract="msa-decode")
    assert v.passed and "under contract msa-decode" in v.report, v.report
    bad = ids.copy()
    bad[:, :, [0, 15]] = bad[:, :, [15, 0]]  # the local page first: structure, in every ranked row
    assert not io.check(case, bad, scores, contract="msa-decode").passed
