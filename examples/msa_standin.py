"""A numpy stand-in for MiniMax's upstream M3 decode indexer (MiniMax-AI/MSA), written from the
behaviour described in ../shared/spec/upstream-msa.md (sections 2-3); no MSA code is used.
Its API, as MSA's plan()/run() takes it::

    from msa_standin import msa_decode_indexer
    ids, scores = msa_decode_indexer(q, k_pages, page_table, seq_lens, scale=D ** -0.5)
    # q [B, Q, H, 128] bf16 bits (uint16) or e4m3fn codes (uint8, q_dtype="e4m3fn");
    # k_pages [pages, 128, 128] (one K head; bf16 bits / fp8 codes; nvfp4: [pages, 128, 64] codes + k_scales);
    # page_table int32 [B, max_pages]; seq_lens [B] including the Q chunk.
    # -> ids int32 [H, B*Q, 16], scores float32 [H, B*Q, max_pages] (NaN where never written)

Semantics reproduced: row b*Q + j sees L = seq_lens[b] - Q + j + 1 tokens; history page p < n - 1
(n = ceil(L / 128)) scores max_t q . K[page_table[b, p], t] (fp32 dot), times ``scale`` after the
max (natural units: no log2(e)); the local page n - 1 is never scored; top-k: n <= 16 -> 0..n-1
then -1; else the 16-bit quantized selector over the n - 1 history scores (15 ranked ids in
descending (bucket, lower id) order) and n - 1 in slot 15.

``bug`` plants one defect: "q_rows_share_length" (every row of a request takes the request's full
length: earlier verify rows see later tokens and pages), "local_page_from_length" (slot 15 = L // 128),
"ties_high" (equal buckets go to the higher page id).
"""
from typing import Any, Optional

import numpy as np

from numpy_kernel import bf16_to_float, decode_k, fp8_table  # decoders only; the oracle is never called

PAGE, TOPK = 128, 16
BUGS = (None, "q_rows_share_length", "local_page_from_length", "ties_high")


def _fmaf(a: np.ndarray, b: np.float32, c: np.float32) -> np.ndarray:
    """fmaf through 64-bit long double: the fp32 product is exact there, one rounding of the sum
    (then to fp32; a double rounding only for sums needing more than 64 bits)."""
    return (a.astype(np.longdouble) * np.longdouble(b) + np.longdouble(c)).astype(np.float32)


def quantized_topk(s: np.ndarray, take: int, bug: Optional[str] = None) -> np.ndarray:
    """MSA's selector over one row's history scores (fp32): the `take` ids of largest key."""
    s = s.astype(np.float32)
    lo, hi = np.float32(np.nanmin(s)), np.float32(np.nanmax(s))
    scale = np.float32(np.float32(65534.0) / np.float32(hi - lo)) if hi > lo else np.float32(0.0)
    bias = _fmaf(np.array([-lo], dtype=np.float32), scale, np.float32(1.5))[0]
    t = _fmaf(s, scale, bias)
    q = np.where(np.isnan(t) | (t <= 0), 0, np.minimum(np.floor(np.nan_to_num(t, nan=0.0)), 65535)).astype(np.int64)
    ids = np.arange(len(s), dtype=np.int64)
    field = (ids & 0xFFFF) if bug == "ties_high" else (~ids & 0xFFFF)
    key = (q << 16) | field
    order = np.argsort(-key, kind="stable")[:take]
    return ids[order].astype(np.int32)


def msa_decode_indexer(q: np.ndarray, k_pages: np.ndarray, page_table: np.ndarray, seq_lens: np.ndarray, *,
                       scale: float, q_dtype: str = "bf16", k_dtype: str = "bf16", k_scales: Any = None,
                       bug: Optional[str] = None) -> tuple[np.ndarray, np.ndarray]:
    if bug not in BUGS:
        raise ValueError(f"bug: one of {BUGS}")
    B, Q, H, D = q.shape
    assert D == 128 and 1 <= Q <= 16 and H in (1, 2, 4), "MSA decode: D 128, Q 1..16, H 1/2/4"
    max_pages = page_table.shape[1]
    qf = (bf16_to_float(q) if q_dtype == "bf16" else fp8_table("e4m3fn")[q]).astype(np.float32)
    kf = decode_k(k_pages, k_dtype, k_scales).astype(np.float32)  # [pages, 128, 128]
    ids = np.full((H, B * Q, TOPK), -1, dtype=np.int32)
    scores = np.full((H, B * Q, max_pages), np.nan, dtype=np.float32)
    for b in range(B):
        assert Q <= seq_lens[b] <= max_pages * PAGE, "MSA decode: Q <= seq_len <= max_pages * 128"
        for j in range(Q):
            r = b * Q + j
            L = int(seq_lens[b]) - Q + j + 1
            if bug == "q_rows_share_length":
                L = int(seq_lens[b])  # every verify row takes the request's length
            n = -(-L // PAGE)
            hist = min(n - 1, max_pages)
            if hist > 0:
                K = kf[page_table[b, :hist]]                                        # [hist, 128, 128]
                dots = np.einsum("hd,ptd->hpt", qf[b, j], K, dtype=np.float32)     # fp32 dots
                scores[:, r, :hist] = dots.max(axis=2) * np.float32(scale)
            for h in range(H):
                if n <= TOPK:
                    ids[h, r, :n] = np.arange(n)
                    continue
                ids[h, r, :TOPK - 1] = quantized_topk(scores[h, r, :n - 1], TOPK - 1, bug)
                ids[h, r, TOPK - 1] = L // PAGE if bug == "local_page_from_length" else n - 1
    return ids, scores
