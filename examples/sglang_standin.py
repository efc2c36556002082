"""A numpy stand-in for SGLang's Triton decode indexer ``flash_decode_with_topk_idx`` (score-only
path), written from the *behaviour* described in the spec (indexer-semantics.md: "SGLang's
Triton decode indexer as its callers meet it", sections 2-4 and 7). No SGLang code is used.

    from sglang_standin import flash_decode_with_topk_idx
    _, ids = flash_decode_with_topk_idx(case.q, None, case.k_cache, None, case.req_to_token, case.seq_lens,
                                        case.req_to_token.shape[1], case.slot_ids, case.block_size, case.topk,
                                        case.init_blocks, case.local_blocks, disable_index_value=True,
                                        packed_queries=1, k_dtype=case.k_dtype)   # ids int32 [Hq, R, topk]

Bit arrays in: ``q`` uint16 bf16 bits [R, Hq, D]; ``k_cache`` uint16 bf16 bits or uint8 fp8 codes
[S, Hk, D] (``k_dtype`` names the fp8 format; uint16 means bf16).

What it reproduces of SGLang's behaviour (and what it deliberately does not):
- argument checks: ``R % packed_queries == 0`` (AssertionError); the top-k tile (128) must exceed
  topk, block_size must be a power of two >= 16, D must be 64 or 128, and e4m3fnuz does not
  compile on sm_90: each raises ``CompilationError``, as a Triton compile error would;
- no inactive-row guard: a slot id is wrapped once by the K slot count and then indexes
  req_to_token (an id outside the table does whatever numpy does: outside the contract);
- NaN block scores rank FIRST (torch.topk / bitonic top-k); among exactly equal scores the
  higher block id is preferred (a valid but non-oracle tie choice);
- packing (``packed_queries = P > 1``): groups of P consecutive rows are scored as P*Hq heads of
  one request (the group's first row's slot id) over the group's longest length; top-k uses
  each row's own length; with local_blocks >= 1 each row re-forces its own local window.
  ``bug=None`` is the clean packing (packed == per-row exactly); ``bug="hk_packed_heads"`` maps
  packed head p*Hq+h to K head (p*Hq+h) // (P*Hq/Hk) (right only for Hk = 1);
  ``bug="local0_group_length"`` scores every row's blocks over the group's longest length (a
  shorter row's last block sees up to P-1 keys past its length; hidden by the re-force when
  local_blocks >= 1, visible with local_blocks = 0).
"""
from typing import Any, Optional

import numpy as np

from numpy_kernel import bf16_to_float, fp8_table  # decode helpers only; the oracle is never called

LOG2E_F32 = np.float32(1.4426950409)
FORCED_INIT, FORCED_LOCAL = np.float32(1e30), np.float32(1e29)
TOPK_TILE = 128            # the smallest BLOCK_SIZE_K of SGLang's top-k autotuning
BUGS = (None, "hk_packed_heads", "local0_group_length")
K_DTYPES = ("bf16", "e4m3fn", "e4m3fnuz", "e5m2")


class CompilationError(Exception):
    """What Triton raises when a kernel cannot be compiled for these constexprs (a failed
    static_assert, an illegal tile shape, an fp8 format the target lacks)."""


def check_args(R: int, Hq: int, Hk: int, D: int, block_size: int, topk: int, packed_queries: int, k_dtype: str,
               disable_index_value: bool = True, use_dense_main_attn: bool = False) -> None:
    """SGLang's argument checks, as its callers meet them (shared with sglang_triton_standin)."""
    if k_dtype not in K_DTYPES:
        raise ValueError(f"k_dtype: unknown {k_dtype!r}")
    # Host-side asserts first (they run before any kernel is compiled) ...
    if packed_queries > 1:
        assert disable_index_value, "packed_queries > 1 needs disable_index_value (score-only layers)"
        assert not use_dense_main_attn, "packed_queries > 1 needs use_dense_main_attn=False"
    assert packed_queries >= 1 and R % packed_queries == 0, f"R ({R}) % packed_queries ({packed_queries}) != 0"
    assert Hq % Hk == 0, f"Hq {Hq} must be a multiple of Hk {Hk}"
    # ... then what fails when Triton compiles the kernels for these constexprs.
    if k_dtype == "e4m3fnuz":
        raise CompilationError("float8_e4m3fnuz is not supported on this target (sm_90): Triton cannot compile the "
                               "fp8e4b8 load/convert")
    if not (isinstance(block_size, (int, np.integer)) and block_size >= 16 and block_size & (block_size - 1) == 0):
        raise CompilationError(f"block_size {block_size}: tl.arange/tl.dot tiles need a power of two >= 16")
    if D not in (64, 128):
        raise CompilationError(f"head dim {D}: the scorer's tile is compiled for D 64 or 128")
    if not TOPK_TILE > topk:
        raise CompilationError(f"static_assert(BLOCK_SIZE_K > TOPK) failed: BLOCK_SIZE_K={TOPK_TILE}, TOPK={topk}")
    if topk < 1:
        raise CompilationError(f"topk {topk}: tl.arange(0, 0) is not a tile")


def logit_scale(D: int, sm_scale: Optional[float], q_scale: Optional[float], k_scale: Optional[float]) -> np.float32:
    """c = fp32(fp32(fp32(sm_scale*q_scale) * 1.4426950409) * k_scale), the spec's rounding order."""
    sm = D ** -0.5 if sm_scale is None else float(sm_scale)
    a = np.float32(sm * (1.0 if q_scale is None else float(q_scale)))
    b = np.float32(a * LOG2E_F32)
    return np.float32(b * np.float32(1.0 if k_scale is None else float(k_scale)))


def _cmod(a: Any, m: int) -> Any:
    """C's % (truncated): what Triton's integer % does."""
    return np.fmod(a, m)


def _block_scores(logits: np.ndarray, valid: np.ndarray, nb: int, bs: int, score_type: str) -> np.ndarray:
    """logits [T, H] fp32, valid [T, H] bool -> block scores [nb, H] fp32 (NaN if any visible NaN)."""
    T, H = logits.shape
    s = np.full((nb * bs, H), -np.inf, dtype=np.float32)
    n = min(T, nb * bs)
    s[:n] = np.where(valid[:n], logits[:n], np.float32(-np.inf))
    s = s.reshape(nb, bs, H)
    with np.errstate(invalid="ignore", over="ignore"):
        m = s.max(axis=1)                              # NaN propagates
        if score_type == "max":
            return m
        e = np.exp2((s - m[:, None, :]).astype(np.float32)).sum(axis=1, dtype=np.float32)
        lse = (m + np.log2(e)).astype(np.float32)
    return np.where(m == -np.inf, np.float32(-np.inf), lse).astype(np.float32)


def _force(score: np.ndarray, nb: int, init_blocks: int, local_blocks: int) -> None:
    """score [nb, H] in place: init 1e30, local 1e29 (local wins)."""
    score[:min(max(init_blocks, 0), nb)] = FORCED_INIT
    score[max(0, nb - max(local_blocks, 0)):nb] = FORCED_LOCAL


def select_topk(score: np.ndarray, nb: int, topk: int) -> np.ndarray:
    """score [nb, H] forced block scores -> ids [H, topk]: nb <= topk gives 0..nb-1 then -1;
    otherwise the topk blocks with NaN first, then by score descending, ties to the higher id;
    sorted ascending."""
    H = score.shape[1]
    out = np.full((H, topk), -1, dtype=np.int32)
    if nb <= topk:
        out[:, :nb] = np.arange(nb, dtype=np.int32)
        return out
    s = score.T                                        # [H, nb]
    nan = np.isnan(s)
    finite = np.where(nan, np.float32(0), s)
    ids = np.broadcast_to(np.arange(nb), s.shape)
    order = np.lexsort((-ids, -finite, ~nan), axis=-1)  # last key primary: NaN first, score desc, id desc
    out[:] = np.sort(order[:, :topk], axis=-1)
    return out


def flash_decode_with_topk_idx(q, sink, k_cache, v_cache, req_to_token, seq_lens, max_seqlen, slot_ids, block_size, topk,
                               init_blocks, local_blocks, sm_scale=None, use_tma=False, score_type="max",
                               disable_index_value=False, use_dense_main_attn=False, page_size=1, q_scale=None,
                               k_scale=None, v_scale=None, packed_queries=1, *, k_dtype=None, bug=None):
    """SGLang's signature; returns (None, topk_idx int32 [Hq, R, topk]) (score-only path)."""
    if bug not in BUGS:
        raise ValueError(f"bug: {bug!r} is not one of {BUGS}")
    q = np.asarray(q)
    k_cache = np.asarray(k_cache)
    if q.dtype not in (np.uint16, np.int16):
        raise TypeError(f"q: bf16 bits (uint16) expected, got {q.dtype}")
    if k_dtype is None:
        if k_cache.dtype not in (np.uint16, np.int16):
            raise TypeError("k_cache: uint8 fp8 codes need k_dtype= ('e4m3fn', 'e5m2', ...)")
        k_dtype = "bf16"
    R, Hq, D = q.shape
    S, Hk, Dk = k_cache.shape
    assert Dk == D, f"q head dim {D} != k head dim {Dk}"
    if not disable_index_value:
        raise NotImplementedError("the stand-in is score-only: pass disable_index_value=True (v_cache is ignored)")
    P = int(packed_queries)
    check_args(R, Hq, Hk, D, int(block_size), int(topk), P, k_dtype, disable_index_value, use_dense_main_attn)
    bs, topk = int(block_size), int(topk)
    assert score_type in ("max", "lse"), f"score_type {score_type!r}"
    assert page_size == 1, "page_size 1 only"

    qf = bf16_to_float(q).astype(np.float32)                       # exact
    kf = (bf16_to_float(k_cache) if k_dtype == "bf16" else fp8_table(k_dtype)[k_cache.view(np.uint8)]).astype(np.float32)
    c = logit_scale(D, sm_scale, q_scale, k_scale)
    req_to_token = np.asarray(req_to_token)
    slot_ids = np.asarray(slot_ids).astype(np.int64)
    lens = np.asarray(seq_lens).astype(np.int64)
    gqa = Hq // Hk
    PH = P * Hq
    # Packed head i = p*Hq + h: its K head.
    heads = np.arange(PH)
    kv_of = heads // (PH // Hk) if bug == "hk_packed_heads" else (heads % Hq) // gqa
    ids = np.full((Hq, R, topk), -1, dtype=np.int32)
    for g in range(R // P):
        rows = np.arange(g * P, (g + 1) * P)
        Lr = lens[rows]
        Lg = int(Lr.max())                                         # the group's longest length
        nbg = -(-Lg // bs)
        if Lg <= 0:
            continue                                               # nb = 0 for every row: all -1
        sid = int(_cmod(slot_ids[rows[0]] + S, S))                 # wrapped once by the K slot count; no table guard
        t = np.arange(Lg)
        tok = _cmod(req_to_token[sid, t].astype(np.int64) + S, S)  # negative token slots wrap
        Qp = qf[rows].reshape(PH, D)                               # [P*Hq, D], row-major in (p, h)
        logits = np.empty((Lg, PH), dtype=np.float32)
        with np.errstate(invalid="ignore", over="ignore"):
            for kvh in range(Hk):
                sel = np.nonzero(kv_of == kvh)[0]
                if sel.size:
                    logits[:, sel] = (kf[tok, kvh, :] @ Qp[sel].T).astype(np.float32) * c
        # Visibility: the clean kernel masks each row at its own length; the bug at the group's.
        own = np.repeat(Lr, Hq)                                    # per packed head
        limit = np.full(PH, Lg) if bug == "local0_group_length" else own
        valid = t[:, None] < limit[None, :]
        score = _block_scores(logits, valid, nbg, bs, score_type)  # [nbg, P*Hq]
        _force(score, nbg, init_blocks, local_blocks)              # the group's forcing (longest row's window)
        for p, r in enumerate(rows):
            nb = -(-int(Lr[p]) // bs) if Lr[p] > 0 else 0
            s = score[:nb, p * Hq:(p + 1) * Hq].copy()             # un-pack: out[h, g*P+p] = packed[p*Hq+h, g]
            if P > 1 and local_blocks > 0:
                s[max(0, nb - local_blocks):nb] = FORCED_LOCAL    # each row re-forces its own local window
            ids[:, r, :] = select_topk(s, nb, topk)
    return None, ids


def block_scores(q, k_cache, req_to_token, seq_lens, slot_ids, block_size, init_blocks, local_blocks, score_type="max",
                 sm_scale=None, q_scale=None, k_scale=None, *, k_dtype=None):
    """The clean per-row forced block scores, a list of [nb_r, Hq] arrays (for tests and plots)."""
    q = np.asarray(q)
    k_dtype = k_dtype or "bf16"
    R, Hq, D = q.shape
    S, Hk, _ = np.asarray(k_cache).shape
    qf = bf16_to_float(q).astype(np.float32)
    kf = (bf16_to_float(k_cache) if k_dtype == "bf16" else fp8_table(k_dtype)[np.asarray(k_cache).view(np.uint8)]
          ).astype(np.float32)
    c = logit_scale(D, sm_scale, q_scale, k_scale)
    out = []
    for r in range(R):
        L = int(seq_lens[r])
        nb = -(-L // block_size)
        sid = int(_cmod(int(slot_ids[r]) + S, S))
        tok = _cmod(np.asarray(req_to_token)[sid, :L].astype(np.int64) + S, S)
        with np.errstate(invalid="ignore", over="ignore"):
            lg = np.stack([(kf[tok, h // (Hq // Hk)] @ qf[r, h]).astype(np.float32) * c for h in range(Hq)], axis=1)
        s = _block_scores(lg, np.ones_like(lg, dtype=bool), nb, block_size, score_type)
        _force(s, nb, init_blocks, local_blocks)
        out.append(s)
    return out
