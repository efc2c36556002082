"""The SGLang stand-in of examples/sglang_standin.py with its block scoring in a Triton kernel (for an
H200 with torch + triton): same signature, same semantics, same two ``bug=`` switches, torch CUDA
tensors in (q bfloat16 [R, Hq, D]; k_cache bfloat16 or float8_e4m3fn / float8_e5m2 [S, Hk, D]).

    import indexer_oracle as io
    from sglang_adapter import make_kernel
    from sglang_triton_standin import flash_decode_with_topk_idx
    r = io.fuzz(make_kernel(flash_decode_with_topk_idx, packed=True), contract="sglang-triton-decode", seconds=60)

The scorer: one program per (kv block, group, packed head p*Hq+h); constexpr BLOCK_SIZE, D, P, HQ, HK,
LSE and the two bug flags; fp32 dot of the widened K tile with q; logit scale c = fp32 product in the
spec's order (host); max or lse per block with a NaN logit making the block NaN; fp32 block scores
written to [Hq, R, NB]. Forcing and top-k in torch: NaN first (torch.sort, like torch.topk), then the
ids sorted ascending, -1 padding. Written for clarity, not speed. Importable without torch/triton.
"""
import sglang_standin as st

_KERNEL = None
_TORCH_K = {"bfloat16": "bf16", "float8_e4m3fn": "e4m3fn", "float8_e4m3fnuz": "e4m3fnuz", "float8_e5m2": "e5m2"}


def _score_kernel():
    """Builds the Triton kernel once (imports triton here, so this module imports without it)."""
    global _KERNEL
    if _KERNEL is not None:
        return _KERNEL
    import triton
    import triton.language as tl

    @triton.jit
    def _sglang_standin_score(Q, K, RT, Slots, Lens, GroupLen, Out, c, S,
                              stride_qr, stride_qh, stride_ks, stride_kh, stride_rt, stride_oh, stride_or,
                              HQ: tl.constexpr, HK: tl.constexpr, P: tl.constexpr, D: tl.constexpr,
                              BLOCK_SIZE: tl.constexpr, LSE: tl.constexpr, BUG_HK: tl.constexpr,
                              BUG_LEN: tl.constexpr):
        b = tl.program_id(0)            # kv block
        g = tl.program_id(1)            # group of P rows (P = 1: one row)
        i = tl.program_id(2)            # packed head i = p*HQ + h
        p = i // HQ
        h = i % HQ
        r = (g * P + p).to(tl.int64)
        if BUG_HK:
            kvh = i // (P * HQ // HK)   # SGLang's packed mapping: right only for HK == 1
        else:
            kvh = h // (HQ // HK)
        L = tl.load(Lens + r).to(tl.int64)
        nb = (L + BLOCK_SIZE - 1) // BLOCK_SIZE
        if b < nb:                      # only the row's own blocks are written; top-k reads no more
            if BUG_LEN:
                lim = tl.load(GroupLen + g).to(tl.int64)   # the group's longest length
            else:
                lim = L
            t = b.to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
            valid = t < lim
            slot = tl.load(Slots + g * P).to(tl.int64)     # the group's first row's slot id
            sid = (slot + S) % S                           # wrapped once by the K slot count; no table guard
            tok = tl.load(RT + sid * stride_rt + t, mask=valid, other=0).to(tl.int64)
            tok = (tok + S) % S
            d = tl.arange(0, D)
            k = tl.load(K + tok[:, None] * stride_ks + kvh * stride_kh + d[None, :], mask=valid[:, None])
            q = tl.load(Q + r * stride_qr + h * stride_qh + d)
            dot = tl.sum(k.to(tl.float32) * q.to(tl.float32)[None, :], axis=1)
            s = tl.where(valid, dot * c, float("-inf"))
            has_nan = tl.sum((s != s).to(tl.int32), axis=0) > 0
            m = tl.max(s, axis=0)
            if LSE:
                e = tl.sum(tl.exp2(s - m), axis=0)
                sc = tl.where(m == float("-inf"), float("-inf"), m + tl.log2(e))
            else:
                sc = m
            sc = tl.where(has_nan, float("nan"), sc)
            tl.store(Out + h * stride_oh + r * stride_or + b, sc)

    _KERNEL = _sglang_standin_score
    return _KERNEL


def flash_decode_with_topk_idx(q, sink, k_cache, v_cache, req_to_token, seq_lens, max_seqlen, slot_ids, block_size, topk,
                               init_blocks, local_blocks, sm_scale=None, use_tma=False, score_type="max",
                               disable_index_value=False, use_dense_main_attn=False, page_size=1, q_scale=None,
                               k_scale=None, v_scale=None, packed_queries=1, *, k_dtype=None, bug=None):
    """SGLang's signature; returns (None, topk_idx int32 [Hq, R, topk]) on q's device."""
    import torch

    if bug not in st.BUGS:
        raise ValueError(f"bug: {bug!r} is not one of {st.BUGS}")
    kd = _TORCH_K.get(str(k_cache.dtype).replace("torch.", ""))
    if kd is None:
        raise TypeError(f"k_cache: dtype {k_cache.dtype} (bfloat16 or float8_*)")
    if k_dtype is not None and k_dtype != kd:
        raise ValueError(f"k_dtype {k_dtype!r} contradicts k_cache dtype {k_cache.dtype}")
    if q.dtype != torch.bfloat16:
        raise TypeError(f"q: bfloat16 expected, got {q.dtype}")
    if not disable_index_value:
        raise NotImplementedError("the stand-in is score-only: pass disable_index_value=True (v_cache is ignored)")
    R, Hq, D = q.shape
    S, Hk, Dk = k_cache.shape
    assert Dk == D, f"q head dim {D} != k head dim {Dk}"
    P = int(packed_queries)
    bs, topk = int(block_size), int(topk)
    st.check_args(R, Hq, Hk, D, bs, topk, P, kd, disable_index_value, use_dense_main_attn)
    assert score_type in ("max", "lse") and page_size == 1
    dev = q.device
    q = q if q.stride(2) == 1 else q.contiguous()
    k_cache = k_cache if k_cache.stride(2) == 1 else k_cache.contiguous()
    req_to_token = req_to_token if req_to_token.stride(1) == 1 else req_to_token.contiguous()
    G = R // P
    NB = -(-min(int(max_seqlen), req_to_token.shape[1]) // bs)
    lens = seq_lens.to(device=dev, dtype=torch.int64).contiguous()
    slots = slot_ids.to(device=dev, dtype=torch.int64).contiguous()
    ids = torch.full((Hq, R, topk), -1, dtype=torch.int32, device=dev)
    if R == 0 or NB == 0:
        return None, ids
    group_len = lens.view(G, P).amax(dim=1).contiguous()
    scores = torch.full((Hq, R, NB), float("-inf"), dtype=torch.float32, device=dev)
    c = float(st.logit_scale(D, sm_scale, q_scale, k_scale))
    _score_kernel()[(NB, G, P * Hq)](
        q, k_cache, req_to_token, slots, lens, group_len, scores, c, S,
        q.stride(0), q.stride(1), k_cache.stride(0), k_cache.stride(1), req_to_token.stride(0),
        scores.stride(0), scores.stride(1),
        HQ=Hq, HK=Hk, P=P, D=D, BLOCK_SIZE=bs, LSE=score_type == "lse",
        BUG_HK=bug == "hk_packed_heads", BUG_LEN=bug == "local0_group_length")

    # Forcing, per row at its own nb. SGLang forces the group's window [nb_max - local, nb_max) and then
    # re-forces each row's own [nb_j - local, nb_j) when local >= 1: for blocks < nb_j the result is the
    # same (nb_max - local >= nb_j - local), and with local 0 only init forcing is left, equal for every row.
    nb = torch.clamp((lens + bs - 1) // bs, max=NB)                      # [R]
    blk = torch.arange(NB, device=dev)
    in_row = blk[None, :] < nb[:, None]                                  # [R, NB]
    local = (blk[None, :] >= (nb - max(local_blocks, 0)).clamp(min=0)[:, None]) & in_row
    init = (blk[None, :] < max(init_blocks, 0)) & in_row
    forced = torch.where(local, torch.tensor(1e29, device=dev),
                         torch.where(init, torch.tensor(1e30, device=dev), scores))

    # Top-k: NaN first, then score descending (torch.sort ranks NaN largest, like torch.topk); the row's own
    # blocks before any column >= nb (a stable second sort on validity); then ascending ids.
    order = torch.sort(forced, dim=-1, descending=True, stable=True).indices
    ok = torch.gather(in_row.expand(Hq, R, NB).to(torch.int32), -1, order)
    order = torch.gather(order, -1, torch.sort(ok, dim=-1, descending=True, stable=True).indices)
    ar = torch.arange(topk, device=dev)
    trivial = torch.where(ar[None, None, :] < nb[None, :, None], ar, -1).expand(Hq, R, topk)
    if NB > topk:
        top = torch.sort(order[..., :topk], dim=-1).values
        ids = torch.where((nb <= topk)[None, :, None], trivial, top)
    else:
        ids = trivial
    return None, ids.to(torch.int32).contiguous()

