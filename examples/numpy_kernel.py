"""A naive indexer kernel in plain numpy, written from docs/semantics.md (not from the
oracle): the kind of reference a kernel engineer writes first. Used by the examples and
the Python tests as an *outside* kernel.

    ids, scores = indexer(q_bits, k_codes, k_dtype, req_to_token, slot_ids, seq_lens, cfg)
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


def decode_k(k, k_dtype):
    k = np.asarray(k)
    if k_dtype == "bf16":
        return bf16_to_float(k)
    return fp8_table(k_dtype)[k.view(np.uint8)]


def _rank_order(score):
    """Block ids by score: descending, NaN lowest, +0 above -0, ties to the lower id."""
    return sorted(range(len(score)), key=lambda b: (np.isnan(score[b]), -score[b] if not np.isnan(score[b]) else 0.0,
                                                     bool(np.signbit(score[b])), b))


def indexer(q_bits, k_codes, k_dtype, req_to_token, slot_ids, seq_lens, cfg, gqa_bug=False):
    q = bf16_to_float(q_bits)
    k = decode_k(k_codes, k_dtype)
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
            score = np.empty(nb)
            for b in range(nb):
                s = logits[b * bs:min((b + 1) * bs, L)]
                if np.isnan(s).any():
                    score[b] = np.nan
                elif cfg["score_type"] == "max":
                    score[b] = s.max()
                else:
                    m = s.max()
                    score[b] = m if np.isinf(m) else m + np.log2(np.sum(np.exp2(s - m)))
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
           "q_scale": case.q_scale, "k_scale": case.k_scale}
    return indexer(case.q, case.k_cache, case.k_dtype, case.req_to_token, case.slot_ids, case.seq_lens, cfg, gqa_bug)


def gqa_bug_kernel(case):
    """The same kernel with the planted GQA head-mapping bug."""
    return kernel(case, gqa_bug=True)
