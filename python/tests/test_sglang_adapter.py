"""examples/sglang_adapter.py against a function with the signature of SGLang's
flash_decode_with_topk_idx (SGLang is not installed here): a per-row numpy indexer behind it."""
import numpy as np

import indexer_oracle as io
import numpy_kernel as nk
from sglang_adapter import full_groups, make_kernel

calls = []


def flash_decode_with_topk_idx(q, sink, k_cache, v_cache, req_to_token, seq_lens, max_seqlen, slot_ids, block_size, topk,
                               init_blocks, local_blocks, sm_scale=None, use_tma=False, score_type="max",
                               disable_index_value=False, use_dense_main_attn=False, page_size=1, q_scale=None,
                               k_scale=None, v_scale=None, packed_queries=1, *, k_dtype=None, gqa_bug=False):
    """Stand-in: numpy bit arrays in, (o=None, topk_idx [Hq, R, topk]) out, like the score-only path."""
    assert disable_index_value and sink is None and v_cache is None and page_size == 1
    assert max_seqlen == req_to_token.shape[1]
    assert len(q) % packed_queries == 0
    calls.append((packed_queries, len(q)))
    cfg = {"block_size": block_size, "topk": topk, "init_blocks": init_blocks, "local_blocks": local_blocks,
           "score_type": score_type, "sm_scale": sm_scale, "q_scale": q_scale or 1.0, "k_scale": k_scale or 1.0}
    ids, _ = nk.indexer(q, k_cache, k_dtype or "bf16", req_to_token, slot_ids, seq_lens, cfg, gqa_bug)
    return None, ids


def test_the_adapter_passes_a_right_stand_in_through_the_suite():
    """Catches a wrong scatter-back of the packed and per-row calls (rows swapped between the two calls, a
    head-major/row-major mix-up) on every case group of the suite, fp8 formats and inactive rows included."""
    kernel = make_kernel(flash_decode_with_topk_idx, packed=True, device=None)
    calls.clear()
    r = io.suite(kernel, property_cases=3, fixtures=False)
    assert r.passed, r.table
    assert any(p > 1 for p, _ in calls), "packed=True passes packed_queries from the case for full groups"
    c = io.generate("verify", 1)
    io.assert_indexer(c, kernel(c))


def test_the_adapter_lets_fuzz_find_a_bug_in_the_wrapped_function(tmp_path):
    """The adapter does not hide a bug of the wrapped function (the planted GQA head mapping)."""
    def buggy(*a, **kw):
        return flash_decode_with_topk_idx(*a, **kw, gqa_bug=True)

    kernel = make_kernel(buggy, device=None)
    # No time budget to beat (issue 23): a fixed number of seeds, stopping at the first shrunk
    # failure (max_failures=1): the same work on any machine. The old seconds=30 failed the
    # test if a slow machine had not reached the bug by then.
    r = io.fuzz(kernel, seconds=None, seeds=20, out=str(tmp_path))
    assert r.failures, r.log


def test_unpacked_mode_passes_one():
    """packed=False makes one call on every row with packed_queries 1."""
    kernel = make_kernel(flash_decode_with_topk_idx, packed=False, device=None)
    calls.clear()
    c = io.generate("verify", 2)
    kernel(c)
    assert calls == [(1, c.R)]


def _case(slots, lens, P):
    R = len(slots)
    rng = np.random.default_rng(0)
    q = (rng.integers(0x3C00, 0x3F80, size=(R, 1, 64)) | (rng.integers(0, 2, size=(R, 1, 64)) << 15)).astype(np.uint16)
    k = (rng.integers(0x3C00, 0x3F80, size=(256, 1, 64)) | (rng.integers(0, 2, size=(256, 1, 64)) << 15)).astype(np.uint16)
    table = np.stack([rng.permutation(256).astype(np.int32) for _ in range(8)])
    return io.Case(q, k, table, np.array(slots), np.array(lens), block_size=16, topk=3, local_blocks=1, packed_queries=P)


def test_full_groups_is_sglangs_callers_split():
    """Catches packing a group that SGLang's caller would not pack: a slot change inside the group, lengths not
    L, L+1, .., L+P-1, a length-0 start, a misaligned or trailing partial group."""
    c = _case([2, 2, 2, 5, 5, 5, 3, 3, 4, 4, 4, 1, 1, 1, 6, 6], [40, 41, 42, 50, 51, 52, 60, 61, 70, 70, 71, 0, 1, 2, 80, 81], 3)
    # groups: [0,3) full; [3,6) full; [6,9) slot change; [9,12) lens 70,71,0; [12,15) slots 1,1,6; 15 trailing
    packed, single = full_groups(c)
    assert packed.tolist() == [0, 1, 2, 3, 4, 5]
    assert single.tolist() == list(range(6, 16))
    c1 = _case([2, 2], [5, 6], 1)
    assert full_groups(c1)[0].size == 0 and full_groups(c1)[1].tolist() == [0, 1]


def test_packed_mode_makes_two_calls_and_scatters_back():
    """Catches a packed call that receives non-full-group rows (SGLang asserts R % P and would mix requests) or
    ids scattered to the wrong rows: the packed call gets exactly the full-group rows, the second call the rest,
    and the assembled output equals one per-row call."""
    c = _case([2, 2, 2, 5, 5, 5, 3, 3, 4, 4, 4, 1, 1, 1, 6, 6], [40, 41, 42, 50, 51, 52, 60, 61, 70, 70, 71, 5, 6, 7, 80, 81], 3)
    kernel = make_kernel(flash_decode_with_topk_idx, packed=True, device=None)
    calls.clear()
    ids = kernel(c)
    assert calls == [(3, 6), (1, 10)]  # groups [0,3), [3,6) packed; rows 11-13 (slot 1) are misaligned
    calls.clear()
    ref = make_kernel(flash_decode_with_topk_idx, packed=False, device=None)(c)
    np.testing.assert_array_equal(ids, ref)
    io.assert_indexer(c, ids)
    calls.clear()
    only_full = _case([2, 2, 2], [40, 41, 42], 3)
    kernel(only_full)
    assert calls == [(3, 3)]           # no call with 0 rows
