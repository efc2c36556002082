"""Judge an MSA-style decode indexer (MiniMax-AI/MSA's API) inside its own contract, msa-decode.

    import indexer_oracle as io
    from msa_adapter import msa_kernel
    from msa_standin import msa_decode_indexer            # or your kernel with MSA's signature

    kernel = msa_kernel(msa_decode_indexer)                # io.Case -> (ids, scores), MSA's layout
    r = io.fuzz(kernel, contract="msa-decode", seconds=60)
    assert r.passed, r.report

How a Case becomes MSA's arguments: the rows of every full verify group (packed_queries P rows of
one request, lengths L..L+P-1) form requests of Q = P rows, every other row a request of Q = 1 (MSA
takes one Q a call: one call per Q). seq_lens = the request's last row's length. Paged cases with
128-token pages pass their page table and K pages as they are (physical pages shared between
requests stay shared); token-slot cases are gathered into private 128-token pages first. The
scale after the max is |sm_scale * q_scale * k_scale| (MSA's kernels take sm_scale only; a
negative product is folded into q as a sign flip, exact in bf16 and e4m3fn). The outputs keep MSA's layout: ids ranked with the
local page last, scores in natural units on the history columns (io.contract("msa-decode") says
so; the verdict replays the quantized selector on these scores bit for bit).
"""
from typing import Any, Callable

import numpy as np

import indexer_oracle as io
from sglang_adapter import full_groups

PAGE = 128


def _pages(case: io.Case, table_rows: np.ndarray) -> tuple[np.ndarray, Any, np.ndarray]:
    """(k_pages [pages, 128, X], k_scales or None, page_table [len(table_rows), max_pages])."""
    k, ks = np.asarray(case.k_cache)[:, 0], None if case.k_scales is None else np.asarray(case.k_scales)[:, 0]
    if case.page_table is not None and case.page_size == PAGE:
        return (k.reshape(-1, PAGE, k.shape[-1]), None if ks is None else ks.reshape(-1, PAGE, ks.shape[-1]),
                np.asarray(case.page_table)[table_rows].astype(np.int32))
    width = case.req_to_token.shape[1]
    max_pages = -(-width // PAGE)
    tokens = np.zeros((len(table_rows), max_pages * PAGE), dtype=np.int64)
    tokens[:, :width] = np.asarray(case.req_to_token)[table_rows] % case.S  # aliases wrap by S
    pages = k[tokens.reshape(-1)].reshape(len(table_rows) * max_pages, PAGE, k.shape[-1])
    scales = None if ks is None else ks[tokens.reshape(-1)].reshape(len(table_rows) * max_pages, PAGE, ks.shape[-1])
    table = np.arange(len(table_rows) * max_pages, dtype=np.int32).reshape(len(table_rows), max_pages)
    return pages, scales, table


def msa_kernel(fn: Callable[..., tuple], **kw: Any) -> Callable[[io.Case], tuple]:
    """kernel(case) -> (ids [Hq, R, 16], scores [Hq, R, NB]) calling ``fn`` with MSA's signature."""

    def kernel(case: io.Case) -> tuple:
        if case.Hk != 1 or case.D != 128 or case.block_size != PAGE or case.topk != 16:
            raise io.Unsupported("MSA decode: Hk 1, D 128, 128-token pages, topk 16")
        R, H = case.R, case.Hq
        NB = -(-case.req_to_token.shape[1] // PAGE)
        ids = np.full((H, R, 16), -1, dtype=np.int32)
        scores = np.full((H, R, NB), np.nan, dtype=np.float32)
        q = np.asarray(case.q)
        scale = case.sm_scale * case.q_scale * case.k_scale
        if scale < 0:  # MSA scales after the max: fold a negative scale into q (a sign flip is exact)
            q = q ^ np.asarray(0x8000 if case.q_dtype == "bf16" else 0x80, dtype=q.dtype)
            scale = -scale
        lens = np.asarray(case.seq_lens).astype(np.int64)
        slots = np.asarray(case.slot_ids).astype(np.int64) % case.S
        prow, srow = full_groups(case)
        for rows, Q in ((prow, int(case.packed_queries)), (srow, 1)):
            if not len(rows):
                continue
            B = len(rows) // Q
            last = rows.reshape(B, Q)[:, -1]
            k_pages, k_scales, table = _pages(case, slots[last])
            out_ids, out_scores = fn(q[rows].reshape(B, Q, H, case.D), k_pages, table, lens[last],
                                     scale=scale, q_dtype=case.q_dtype,
                                     k_dtype=case.k_dtype, k_scales=k_scales, **kw)
            ids[:, rows] = out_ids
            scores[:, rows, :min(NB, out_scores.shape[2])] = out_scores[:, :, :NB]
        return ids, scores

    kernel.__name__ = getattr(fn, "__name__", "msa_kernel") + ("_" + kw["bug"] if kw.get("bug") else "")
    return kernel
