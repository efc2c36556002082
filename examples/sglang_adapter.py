"""Wrap SGLang's ``flash_decode_with_topk_idx`` (or anything with its signature) into a ``kernel(case)``
for ``indexer_oracle.fuzz`` / ``suite`` / ``check``, called the way SGLang's own caller calls it::

    from sglang.kernels.ops.attention.minimax_sparse.decode.flash_with_topk_idx import flash_decode_with_topk_idx
    import indexer_oracle as io
    from sglang_adapter import make_kernel

    kernel = make_kernel(flash_decode_with_topk_idx, packed=True)
    r = io.fuzz(kernel, contract="sglang-triton-decode", seconds=120)   # shrunk failures under r.failures
    print(r.report or f"{r.cases} cases passed")

``packed=True``: only full groups (``full_groups``) run packed, in one call with ``packed_queries=P``; every
other row runs in a second call with ``packed_queries=1``; ids are scattered back into [Hq, R, topk].
``packed=False``: one call, ``packed_queries=1``. ``supports(case)`` may return a reason string to skip a case
(counted as SKIP, never as a pass); fp8 q and nvfp4 K cases are always skipped. ``device=None`` passes numpy bit arrays plus ``k_dtype=case.k_dtype``.
"""
from typing import Any, Callable, Optional

import numpy as np

import indexer_oracle as io


def _topk_of(out: Any, rows: int, case: io.Case) -> Any:
    """The [Hq, rows, topk] integer tensor among the function's outputs."""
    want = (case.Hq, rows, case.topk)
    items = out if isinstance(out, (tuple, list)) else (out,)
    for x in items:
        if x is not None and tuple(getattr(x, "shape", ())) == want:
            return x
    raise ValueError(f"no output of shape {want} among {[tuple(getattr(x, 'shape', ())) for x in items]}")


def full_groups(case: io.Case) -> tuple[np.ndarray, np.ndarray]:
    """SGLang's caller's split, with P = case.packed_queries: the rows of every full group (aligned row
    range [g*P, (g+1)*P) whose rows share one raw slot id and have lengths L, L+1, ..., L+P-1 with
    L >= 1), in row order, and every other row, in row order. P <= 1: no packed rows."""
    P = int(case.packed_queries)
    R = case.R
    if P <= 1:
        return np.zeros(0, dtype=np.int64), np.arange(R, dtype=np.int64)
    slots = np.asarray(case.slot_ids)
    lens = np.asarray(case.seq_lens).astype(np.int64)
    packed = np.zeros(R, dtype=bool)
    for g in range(R // P):
        rows = slice(g * P, (g + 1) * P)
        L = int(lens[g * P])
        if L >= 1 and np.all(slots[rows] == slots[g * P]) and np.array_equal(lens[rows], L + np.arange(P)):
            packed[rows] = True
    return np.nonzero(packed)[0].astype(np.int64), np.nonzero(~packed)[0].astype(np.int64)


def make_kernel(fn: Callable[..., Any], packed: bool = False, *, device: Optional[str] = "cuda",
                supports: Optional[Callable[[io.Case], Optional[str]]] = None) -> Callable[[io.Case], Any]:
    """A ``kernel(case)`` calling ``fn`` with SGLang's signature (score-only: disable_index_value=True)."""

    def call(t: dict, rows: Any, n: int, P: int, case: io.Case) -> Any:
        out = fn(t["q"][rows], None, t["k_cache"], None, t["req_to_token"], t["seq_lens"][rows],
                 int(case.req_to_token.shape[1]), t["slot_ids"][rows], case.block_size, case.topk, case.init_blocks,
                 case.local_blocks, sm_scale=case.sm_scale, use_tma=False, score_type=case.score_type,
                 disable_index_value=True, use_dense_main_attn=False, page_size=1,
                 q_scale=None if case.q_scale == 1.0 else case.q_scale,
                 k_scale=None if case.k_scale == 1.0 else case.k_scale, v_scale=None, packed_queries=P, **t["extra"])
        return _topk_of(out, n, case)

    def kernel(case: io.Case) -> Any:
        # flash_decode_with_topk_idx takes bf16 q and per-tensor-scaled K only: fp8 q and NVFP4 K
        # (MSA's Q8KV8 / Q8KV4) are declined, never passed to it as if they were bf16.
        if case.q_dtype != "bf16" or case.k_dtype == "nvfp4":
            raise io.Unsupported(f"SGLang's indexer takes bf16 q and no nvfp4 K (q_dtype {case.q_dtype}, k_dtype {case.k_dtype})")
        if supports is not None:
            reason = supports(case)
            if reason:
                raise io.Unsupported(reason)
        if device is None:
            t = {"q": case.q, "k_cache": case.k_cache, "req_to_token": case.req_to_token, "slot_ids": case.slot_ids,
                 "seq_lens": case.seq_lens, "extra": {"k_dtype": case.k_dtype}}
        else:
            t = case.torch(device)
            t["extra"] = {}
        R = case.R
        if not packed:
            return call(t, slice(None), R, 1, case)
        prow, srow = full_groups(case)
        if device is None:
            ids = np.full((case.Hq, R, case.topk), -1, dtype=np.int32)
            index = lambda rows: rows  # noqa: E731
        else:
            import torch

            ids = torch.full((case.Hq, R, case.topk), -1, dtype=torch.int32, device=device)
            index = lambda rows: torch.from_numpy(rows).to(device)  # noqa: E731
        for rows, P in ((prow, int(case.packed_queries)), (srow, 1)):
            if len(rows):
                i = index(rows)
                ids[:, i, :] = call(t, i, len(rows), P, case)
        return ids

    name = getattr(fn, "__name__", None) or getattr(getattr(fn, "func", None), "__name__", "sglang_kernel")
    kernel.__name__ = name + ("_packed" if packed else "")
    kernel.full_groups = full_groups  # type: ignore[attr-defined]
    return kernel
