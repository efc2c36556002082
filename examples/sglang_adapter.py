"""Wrap SGLang's ``flash_decode_with_topk_idx`` (or any function with its signature) into a
``kernel(case)`` for ``indexer_oracle.fuzz`` / ``suite`` / ``check``.

On a GPU machine with SGLang installed::

    from sglang.kernels.ops.attention.minimax_sparse.decode.flash_with_topk_idx import flash_decode_with_topk_idx
    import indexer_oracle as io
    from sglang_adapter import make_kernel

    kernel = make_kernel(flash_decode_with_topk_idx, packed=True)
    r = io.fuzz(kernel, seconds=120)          # shrunk failures under r.failures
    print(io.suite(kernel).table)

``packed=True`` passes ``packed_queries`` from the case (the EAGLE verify path); otherwise 1.
``supports(case)`` may return a reason string to skip a case (e.g. Triton cannot compile
e4m3fnuz on sm_90): the case then counts as SKIP, never as a pass. ``device=None`` passes
numpy bit arrays instead of torch tensors (for stand-ins without torch).
"""
from typing import Any, Callable, Optional

import numpy as np

import indexer_oracle as io


def _topk_of(out: Any, case: io.Case) -> Any:
    """The [Hq, R, topk] integer tensor among the function's outputs."""
    want = (case.Hq, case.R, case.topk)
    items = out if isinstance(out, (tuple, list)) else (out,)
    for x in items:
        if x is not None and tuple(getattr(x, "shape", ())) == want:
            return x
    raise ValueError(f"no output of shape {want} among {[tuple(getattr(x, 'shape', ())) for x in items]}")


def make_kernel(fn: Callable[..., Any], packed: bool = False, *, device: Optional[str] = "cuda",
                supports: Optional[Callable[[io.Case], Optional[str]]] = None) -> Callable[[io.Case], Any]:
    def kernel(case: io.Case) -> Any:
        if supports is not None:
            reason = supports(case)
            if reason:
                raise io.Unsupported(reason)
        if device is None:
            t = {"q": case.q, "k_cache": case.k_cache, "req_to_token": case.req_to_token, "slot_ids": case.slot_ids,
                 "seq_lens": case.seq_lens}
        else:
            t = case.torch(device)
        out = fn(t["q"], None, t["k_cache"], None, t["req_to_token"], t["seq_lens"], int(case.req_to_token.shape[1]),
                 t["slot_ids"], case.block_size, case.topk, case.init_blocks, case.local_blocks, sm_scale=case.sm_scale,
                 use_tma=False, score_type=case.score_type, disable_index_value=True, use_dense_main_attn=False,
                 page_size=1, q_scale=None if case.q_scale == 1.0 else case.q_scale,
                 k_scale=None if case.k_scale == 1.0 else case.k_scale, v_scale=None,
                 packed_queries=case.packed_queries if packed else 1)
        return _topk_of(out, case)

    kernel.__name__ = getattr(fn, "__name__", "sglang_kernel") + ("_packed" if packed else "")
    return kernel
