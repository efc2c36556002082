"""A naive indexer kernel in plain numpy, written from docs/semantics.md (not from the
oracle): the kind of reference a kernel engineer writes first. Used by the examples and
the Python tests as an *outside* kernel.

    ids, scores = indexer(q_bits, k_codes, k_dtype, req_to_token, slot_ids, seq_lens, cfg)   # cfg["q_dtype"]: bf16|e4m3fn
    ids, scores = indexer(..., k_scales=scales)   # nvfp4 K: packed E2M1 codes + e4m3fn scales
    ids, scores = kernel(case)            # the same on an indexer_oracle.Case

``gqa_bug=True`` plants a head-mapping bug: K head ``h % Hk`` instead of ``h // (Hq/Hk)``
(right whenever Hk == 1 or Hq == Hk, wrong for Hq:Hk = 4:2).
"""
import numpy as np

LOG2E = 1.4426950408889634
FORCED_INIT, FORCED_LOCAL = np.float32(1e30), np.float32(1e29)


def bf16_to_float(bits):
    return (np.asarray(bits).view(np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def fp8_table(fmt):
    """The 256 values of an fp8 format, from its definition."""
    exp_bits, bias = {"e4m3fn": (4, 7), "e4m3fnuz": (4, 8), "e5m2": (5, 15)}[fmt]
    man_bits = 7 - exp_bits
    out = np.empty(256)
    for code in range(256):
        sign = -1.0 if code & 0x80 else 1.0
        e = (code >> man_bits) & ((1 << exp_bits) - 1)
        m = code & ((1 << man_bits) - 1)
        if e == 0:
            v = sign * m * 2.0 ** (1 - bias - man_bits)
        else:
            v = sign * (1 + m / (1 << man_bits)) * 2.0 ** (e - bias)
        if fmt == "e4m3fn" and (code & 0x7F) == 0x7F:
            v = np.nan
        if fmt == "e4m3fnuz" and code == 0x80:
            v = np.nan
        if fmt == "e4m3fnuz" and code == 0x00:
            v = 0.0
        if fmt == "e5m2" and e == 31:
            v = np.nan if m else sign * np.inf
        out[code] = v
    return out


E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6])


def round_e4m3fn_satfinite(x):
    """Nearest e4m3fn value (ties to the even code), |x| > 448 saturating to 448, NaN kept."""
    grid = fp8_table("e4m3fn")[:0x7F]  # the finite non-negative values, increasing with the code
    a = np.minimum(np.abs(x), 448.0)
    hi = np.clip(np.searchsorted(grid, a), 1, len(grid) - 1)
    lo = hi - 1
    d_lo, d_hi = a - grid[lo], grid[hi] - a
    pick = np.where((d_hi < d_lo) | ((d_hi == d_lo) & (hi % 2 == 0)), hi, lo)
    out = np.copysign(grid[pick], x)
    return np.where(np.isnan(x), np.nan, out)


def decode_nvfp4(k_codes, k_scales):
    """Packed E2M1 codes [S, Hk, D/2] (low nibble = even element) and e4m3fn scales [S, Hk, D/16]."""
    b = np.asarray(k_codes).view(np.uint8)
    nib = np.stack([b & 0xF, b >> 4], axis=-1).reshape(b.shape[:-1] + (2 * b.shape[-1],))
    scale = np.repeat(fp8_table("e4m3fn")[np.asarray(k_scales).view(np.uint8)], 16, axis=-1)
    with np.errstate(invalid="ignore"):
        return round_e4m3fn_satfinite(E2M1[nib] * scale)


def decode_k(k, k_dtype, k_scales=None):
    k = np.asarray(k)
    if k_dtype == "bf16":
        return bf16_to_float(k)
    if k_dtype == "nvfp4":
        return decode_nvfp4(k, k_scales)
    return fp8_table(k_dtype)[k.view(np.uint8)]


def _rank_order(score):
    """Block ids by score: descending, NaN lowest, +0 above -0, ties to the lower id."""
    nan = np.isnan(score)
    return np.lexsort((np.arange(len(score)), np.signbit(score), np.where(nan, 0.0, -score), nan))


def _block_scores(logits, bs, score_type):
    """One score per block of ``bs`` logits (the last block may be short): NaN if any logit is
    NaN, else the max or log2-sum-exp2. The row is padded with -inf (exp2 of it adds 0)."""
    nb = -(-len(logits) // bs)
    s = np.full(nb * bs, -np.inf)
    s[:len(logits)] = logits
    s = s.reshape(nb, bs)
    with np.errstate(invalid="ignore", over="ignore"):
        m = s.max(axis=1)
        if score_type == "max":
            score = m
        else:
            lse = m + np.log2(np.sum(np.exp2(s - m[:, None]), axis=1))
            score = np.where(np.isinf(m), m, lse)
    return np.where(np.isnan(s).any(axis=1), np.nan, score)


def indexer(q_bits, k_codes, k_dtype, req_to_token, slot_ids, seq_lens, cfg, gqa_bug=False, k_scales=None):
    q = bf16_to_float(q_bits) if cfg.get("q_dtype", "bf16") == "bf16" else fp8_table("e4m3fn")[np.asarray(q_bits).view(np.uint8)]
    k = decode_k(k_codes, k_dtype, k_scales)
    R, Hq, D = q.shape
    S, Hk, _ = k.shape
    rows, width = req_to_token.shape
    bs, topk = cfg["block_size"], cfg["topk"]
    init, local = cfg["init_blocks"], cfg["local_blocks"]
    sm = cfg.get("sm_scale") or D ** -0.5
    scale = sm * cfg.get("q_scale", 1.0) * LOG2E * cfg.get("k_scale", 1.0)
    NB = -(-width // bs)
    ids = np.full((Hq, R, topk), -1, dtype=np.int32)
    scores = np.zeros((Hq, R, NB), dtype=np.float32)
    for r in range(R):
        L = int(seq_lens[r])
        sid = int(slot_ids[r])
        sid = sid + S if -S <= sid < 0 else sid
        if L == 0 or not (0 <= sid < rows):
            continue  # inactive row: all -1
        nb = -(-L // bs)
        tokens = req_to_token[sid, :L].astype(np.int64)
        tokens = np.where(tokens < 0, tokens + S, tokens)
        for h in range(Hq):
            kv = h % Hk if gqa_bug else h // (Hq // Hk)
            with np.errstate(invalid="ignore", over="ignore"):
                logits = (k[tokens, kv, :] @ q[r, h]) * scale
            score = _block_scores(logits, bs, cfg["score_type"])
            score[:min(init, nb)] = FORCED_INIT
            if local > 0:
                score[max(0, nb - local):] = FORCED_LOCAL
            scores[h, r, :nb] = score.astype(np.float32)
            if nb <= topk:
                ids[h, r, :nb] = np.arange(nb)
            else:
                ids[h, r] = np.sort(_rank_order(score)[:topk])
    return ids, scores


def kernel(case, gqa_bug=False):
    """The naive kernel on an indexer_oracle.Case."""
    cfg = {"block_size": case.block_size, "topk": case.topk, "init_blocks": case.init_blocks,
           "local_blocks": case.local_blocks, "score_type": case.score_type, "sm_scale": case.sm_scale,
           "q_scale": case.q_scale, "k_scale": case.k_scale, "q_dtype": case.q_dtype}
    return indexer(case.q, case.k_cache, case.k_dtype, case.req_to_token, case.slot_ids, case.seq_lens, cfg, gqa_bug,
                   k_scales=case.k_scales)


def gqa_bug_kernel(case):
    """The same kernel with the planted GQA head-mapping bug."""
    return kernel(case, gqa_bug=True)
