"""examples/sglang_adapter.py against a stand-in with the signature of SGLang's
flash_decode_with_topk_idx (SGLang is not installed here)."""
import numpy as np

import indexer_oracle as io
import numpy_kernel as nk
from sglang_adapter import make_kernel

calls = []


def flash_decode_with_topk_idx(q, sink, k_cache, v_cache, req_to_token, seq_lens, max_seqlen, slot_ids, block_size, topk,
                               init_blocks, local_blocks, sm_scale=None, use_tma=False, score_type="max",
                               disable_index_value=False, use_dense_main_attn=False, page_size=1, q_scale=None,
                               k_scale=None, v_scale=None, packed_queries=1, gqa_bug=False):
    """Stand-in: numpy bit arrays in, (o=None, topk_idx [Hq, R, topk]) out, like the score-only path."""
    assert disable_index_value and sink is None and v_cache is None and page_size == 1
    assert max_seqlen == req_to_token.shape[1]
    calls.append(packed_queries)
    k_dtype = "bf16" if k_cache.dtype == np.uint16 else stand_in_k_dtype[0]
    cfg = {"block_size": block_size, "topk": topk, "init_blocks": init_blocks, "local_blocks": local_blocks,
           "score_type": score_type, "sm_scale": sm_scale, "q_scale": q_scale or 1.0, "k_scale": k_scale or 1.0}
    ids, _ = nk.indexer(q, k_cache, k_dtype, req_to_token, slot_ids, seq_lens, cfg, gqa_bug)
    return None, ids


stand_in_k_dtype = ["bf16"]


def test_the_adapter_passes_a_right_stand_in_through_the_suite():
    kernel = make_kernel(flash_decode_with_topk_idx, packed=True, device=None,
                         supports=lambda c: None if c.k_dtype == "bf16" else "stand-in decodes bf16 only")
    calls.clear()
    r = io.suite(kernel, property_cases=3, fixtures=False)
    assert r.passed, r.table
    assert any(p > 1 for p in calls), "packed=True passes packed_queries from the case"
    c = io.generate("verify", 1)
    io.assert_indexer(c, kernel(c))


def test_the_adapter_lets_fuzz_find_a_bug_in_the_wrapped_function(tmp_path):
    def buggy(*a, **kw):
        return flash_decode_with_topk_idx(*a, **kw, gqa_bug=True)

    kernel = make_kernel(buggy, device=None, supports=lambda c: None if c.k_dtype == "bf16" else "bf16 only")
    # No time budget to beat (issue 23): fuzz stops at its first shrunk failure (max_failures=1)
    # and the seeds are fixed, so the work is the same on any machine; 100000 s is only a cap.
    # The old seconds=30 failed the test if a slow machine had not reached the bug by then.
    r = io.fuzz(kernel, seconds=100000, out=str(tmp_path))
    assert r.failures, r.log


def test_unpacked_mode_passes_one():
    kernel = make_kernel(flash_decode_with_topk_idx, packed=False, device=None)
    calls.clear()
    kernel(io.generate("verify", 2))
    assert calls == [1]
