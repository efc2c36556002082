"""Paged K in the Python layer (issue 25 item 4): io.Case takes page_size / page_table,
derives req_to_token from the table, round-trips both through case files and names the
field and value of a bad table."""
import os

import numpy as np
import pytest

import indexer_oracle as io

INTERVAL = np.array([[0, 2, 4, 6], [1, 3, 5, 0]], dtype=np.int32)  # MSA's test table, 7 pages


def paged_case(page_table=INTERVAL, req_to_token=None, S=28, page_size=4, **cfg):
    rng = np.random.default_rng(1)
    R, Hq, Hk, D = 4, 1, 1, 16
    bits = lambda a: (np.asarray(a, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)  # noqa: E731
    q = bits(rng.standard_normal((R, Hq, D)))
    k = bits(rng.standard_normal((S, Hk, D)))
    return io.Case(q, k, req_to_token, np.array([0, 0, 1, 1]), np.array([9, 10, 15, 16]), block_size=2, topk=2,
                   local_blocks=1, page_size=page_size, page_table=page_table, **cfg)


def test_req_to_token_is_derived_from_the_page_table():
    c = paged_case()
    assert c.page_size == 4 and c.page_table.dtype == np.int32
    assert np.array_equal(c.page_table, INTERVAL)
    # Hand-worked: row 0 pages 0,2,4,6 -> slots 0-3, 8-11, 16-19, 24-27; row 1 pages 1,3,5,0.
    assert c.req_to_token.tolist() == [[0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27],
                                       [4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 0, 1, 2, 3]]
    assert "page_size=4, max_pages=4" in repr(c)


def test_token_slot_cases_have_no_page_table():
    c = io.generate("tiny", 1)
    assert c.page_table is None and c.page_size == 1


def test_paged_cases_round_trip_through_case_files(tmp_path):
    c = paged_case()
    c.save(tmp_path / "case")
    assert os.path.exists(tmp_path / "case" / "page_table.npy")
    d = io.Case.load(tmp_path / "case")
    for name in ("page_table", "req_to_token", "q", "k_cache", "slot_ids", "seq_lens"):
        assert np.array_equal(getattr(c, name), getattr(d, name)), name
    assert d.page_size == 4
    os.remove(tmp_path / "case" / "req_to_token.npy")  # the table alone suffices
    assert np.array_equal(io.Case.load(tmp_path / "case").req_to_token, c.req_to_token)


def test_the_oracle_reads_the_derived_slots():
    c = paged_case()
    flat = io.Case(c.q, c.k_cache, c.req_to_token, c.slot_ids, c.seq_lens, block_size=2, topk=2, local_blocks=1)
    for a, b in zip(io.reference(c), io.reference(flat)):
        assert np.array_equal(a, b)
    ids, scores = io.reference(c)
    assert io.check(c, ids, scores).passed


def test_a_consistent_req_to_token_is_accepted_and_an_inconsistent_one_named():
    good = paged_case().req_to_token
    paged_case(req_to_token=good)
    bad = good.copy()
    bad[1, 5] = 14
    with pytest.raises(ValueError, match=r"req_to_token\[1,5\].*token slot 14.*page_table\[1,1\] = 3.*slot 13"):
        paged_case(req_to_token=bad)


@pytest.mark.parametrize("table, kw, needle", [
    (np.array([[0, 2, 4, 7], [1, 3, 5, 0]]), {}, r"page_table\[0,3\].*physical page 7 is outside \[0, 7\)"),
    (np.array([[0, 2, 4, 6], [1, -1, 5, 0]]), {}, r"page_table\[1,1\].*physical page -1"),
    (np.array([0, 2, 4, 6]), {}, r"page_table.*has 1 dimensions, expected 2"),
    (np.array([[0, 2, 4, 2 ** 40], [1, 3, 5, 0]]), {}, r"page_table: value 1099511627776 .* outside the range of int32"),
    (np.array([[0.0, 2, 4, 6], [1, 3, 5, 0]]), {}, r"page_table: must hold integers"),
    (INTERVAL, {"S": 27}, r"S = 27 slots is not a multiple of page_size 4"),
    (INTERVAL, {"page_size": 0}, r"page_size: must be >= 1, got 0"),
    (None, {"page_size": 4}, r"req_to_token.*missing"),
])
def test_bad_page_tables_name_field_and_value(table, kw, needle):
    with pytest.raises(ValueError, match=needle):
        paged_case(page_table=table, **kw)
