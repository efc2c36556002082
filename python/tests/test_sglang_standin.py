"""examples/sglang_standin.py (a numpy stand-in of SGLang's Triton decode indexer, with its two real
bug classes behind ``bug=``) through examples/sglang_adapter.py (SGLang's caller: full groups packed,
every other row per row), judged by the oracle.

Part 1 uses the current API (io.generate, io.Case, io.check). Part 2, at the bottom, uses the
contract API (io.fuzz(..., contract="sglang-triton-decode", seeds=...)); see its comment.
"""
from functools import partial

import numpy as np
import pytest

import indexer_oracle as io
import sglang_standin as st
from numpy_kernel import decode_k
from sglang_adapter import full_groups, make_kernel
from sglang_standin import flash_decode_with_topk_idx

CONTRACT_BLOCK_SIZES = (16, 32, 64, 128)


def kernel(bug=None):
    return make_kernel(partial(flash_decode_with_topk_idx, bug=bug), packed=True, device=None)


def outside_contract(case):
    """Why a case lies outside the sglang-triton-decode contract (or outside what io.check can judge
    for it without the contract), or None."""
    if case.block_size not in CONTRACT_BLOCK_SIZES:
        return f"block_size {case.block_size}"
    if case.D not in (64, 128):
        return f"D {case.D}"
    if not 1 <= case.topk <= 127:
        return f"topk {case.topk}"
    if case.k_dtype == "e4m3fnuz":
        return "e4m3fnuz"
    rows = case.req_to_token.shape[0]
    if np.any(case.seq_lens < 1) or np.any((case.slot_ids < 0) | (case.slot_ids >= rows)):
        return "inactive row (length 0 or slot id outside the table)"
    seen = set()
    for r in range(case.R):
        seen.update(case.req_to_token[int(case.slot_ids[r]), :int(case.seq_lens[r])].tolist())
    tok = np.fmod(np.array(sorted(seen), dtype=np.int64) + case.S, case.S)
    if not np.all(np.isfinite(decode_k(case.k_cache[tok], case.k_dtype))):
        return "non-finite K (NaN ranking is unspecified in the contract; io.check without it ranks NaN lowest)"
    return None


# Preset -> None (in the contract: must pass) or the reason keyword it must be skipped for.
PRESETS = {
    "verify": None, "gqa": None, "local0": None, "fp8-e4m3fn": None, "e5m2-lse": None, "tiny": None, "km-slots": None,
    "forced-overlap": None, "topk-above-nb": None, "boundary": None, "exact": None, "near-tie": None,
    "specials-e4m3fn": None, "specials-e5m2": None, "long-512k": None, "bench-16x131k": None,
    "fp8-e4m3fnuz": "e4m3fnuz", "specials-e4m3fnuz": "e4m3fnuz", "padding": "inactive row",
    "graph-padded": "inactive row", "ladder-16k": "block_size", "plateau-16k": "block_size",
    "msa-sweep": None, "msa-q16": None, "msa-lengths": None, "msa-batch-129": None, "msa-batch-257": None,
    "msa-batch-513": None, "msa-batch-1025": None, "msa-1m": None, "msa-bimodal": None,
}
# MSA's large shapes (up to 1,048,576 tokens or 1025 requests): numpy over them takes minutes; run by hand.
HEAVY = {"msa-batch-513", "msa-batch-1025", "msa-1m", "msa-bimodal"}


def test_every_preset_is_listed():
    """A new preset is not silently left out of the in-contract sweep below."""
    assert set(io.presets()) == set(PRESETS)


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_clean_standin_through_the_adapter_passes_in_contract_presets(preset):
    """Catches any semantic slip in the stand-in or the adapter (scale order, masking, forcing, -1 tail,
    un-pack permutation, scatter-back of the two calls) on every in-contract preset; presets outside the
    contract are skipped only for their listed reason (and the reasons that are argument checks raise)."""
    if preset in HEAVY:
        pytest.skip(f"{preset}: a large MSA shape, run by hand (ixo gen --preset {preset} + ixo check)")
    seeds = (1,) if preset in ("long-512k", "bench-16x131k") else (1, 2)
    for seed in seeds:
        case = io.generate(preset, seed)
        why = outside_contract(case)
        if PRESETS[preset] is not None:
            assert why is not None and PRESETS[preset] in why, (preset, why)
            if PRESETS[preset] in ("e4m3fnuz", "block_size"):
                with pytest.raises(st.CompilationError):
                    kernel()(case)
            continue
        assert why is None, (preset, seed, why)
        v = io.check(case, kernel()(case))
        assert v.passed, v.report
    if PRESETS[preset] is not None:
        pytest.skip(f"{preset}: outside the sglang-triton-decode contract ({PRESETS[preset]})")


def test_clean_packed_equals_per_row_exactly():
    """Catches an un-pack permutation (h*P+p vs p*Hq+h, group-major rows) or a group-length leak in the
    clean packed path: packed ids must equal per-row ids bit for bit."""
    for preset, seed in (("verify", 4), ("gqa", 2), ("local0", 3), ("e5m2-lse", 2), ("km-slots", 1)):
        case = io.generate(preset, seed)
        prow, _ = full_groups(case)
        assert len(prow) == case.R
        args = (case.q, None, case.k_cache, None, case.req_to_token, case.seq_lens, case.req_to_token.shape[1],
                case.slot_ids, case.block_size, case.topk, case.init_blocks, case.local_blocks)
        kw = dict(sm_scale=case.sm_scale, score_type=case.score_type, disable_index_value=True, k_dtype=case.k_dtype)
        _, packed = flash_decode_with_topk_idx(*args, packed_queries=case.packed_queries, **kw)
        _, rows = flash_decode_with_topk_idx(*args, packed_queries=1, **kw)
        np.testing.assert_array_equal(packed, rows)


# ----------------------------------------------------------------------------------------------- hand-built cases
def bf16(x):
    """float -> bf16 bits (x must be exactly representable)."""
    b = np.asarray(x, dtype=np.float32).view(np.uint32)
    assert np.all(b & 0xFFFF == 0)
    return (b >> 16).astype(np.uint16)


def one_request(k_vals, lens, *, Hq, block_size=16, topk=2, init=0, local=1, slot=1, q=None, k_dtype=None,
                packed_queries=None):
    """One request (all rows on table row `slot`) with identity token slots. k_vals [S, Hk, D] floats
    (or uint8 codes with k_dtype); q [R, Hq, D] floats (default 0.5 everywhere)."""
    k_vals = np.asarray(k_vals)
    S, Hk, D = k_vals.shape
    R = len(lens)
    table = np.zeros((slot + 2, S), dtype=np.int32)
    table[slot] = np.arange(S)
    table[slot + 1] = np.arange(S)[::-1]  # another request's row: reading it is a bug
    qv = np.full((R, Hq, D), 0.5) if q is None else q
    k = k_vals if k_dtype else bf16(k_vals)
    return io.Case(bf16(qv), k, table, np.full(R, slot, dtype=np.int64), np.asarray(lens, dtype=np.int64),
                   block_size=block_size, topk=topk, init_blocks=init, local_blocks=local, k_dtype=k_dtype,
                   packed_queries=packed_queries or R)


def hk_case(Hk):
    """Hq 2, P 2: with Hk = 2, K head 0 peaks in block 2 and K head 1 in block 5; with Hk = 1 the one
    K head peaks in block 2. Lengths 131, 132 (nb 9), topk 2, local 1: each head selects {peak, 8}."""
    S, D = 140, 64
    k = np.zeros((S, Hk, D))
    k[2 * 16 + 7, 0, :] = 1.0
    if Hk == 2:
        k[5 * 16 + 3, 1, :] = 1.0
    return one_request(k, [131, 132], Hq=2)


def test_hk_packed_heads_bug_fails_with_two_k_heads():
    """Catches SGLang's packed head mapping (packed head p*Hq+h reads K head (p*Hq+h) // (P*Hq/Hk)): with
    Hk = 2, P = 2 row 0 head 1 reads K head 0 and row 1 head 0 reads K head 1."""
    case = hk_case(2)
    assert io.check(case, kernel()(case)).passed
    ids = kernel("hk_packed_heads")(case)
    assert not io.check(case, ids).passed
    assert ids[1, 0].tolist() == [2, 8] and ids[0, 1].tolist() == [5, 8]


def test_hk_packed_heads_bug_is_silent_with_one_k_head_or_unpacked():
    """The trigger of the hk_packed_heads bug is Hk > 1 with P > 1: with Hk = 1 (M3's index K) or with the
    rows run per row (packed=False) the bug must not show (so a judge finding it is right, not noisy)."""
    case = hk_case(1)
    assert io.check(case, kernel("hk_packed_heads")(case)).passed
    case = hk_case(2)
    unpacked = make_kernel(partial(flash_decode_with_topk_idx, bug="hk_packed_heads"), packed=False, device=None)
    assert io.check(case, unpacked(case)).passed


def local0_case(local):
    """Hq 1, P 2, block 16, lengths 95 and 96 (straddling the 96 boundary; nb 6 both), topk 2, init 0.
    Keys: 1.0 at token 20 (block 1), 0.5 at 50 (block 3), -1 elsewhere, and 2.0 at token 95: past row 0's
    length, inside row 0's last block (5). Row 0 must select {1, 3} with local 0, {1, 5} with local 1."""
    S, D = 100, 64
    k = np.full((S, 1, D), -1.0)
    k[20] = 1.0
    k[50] = 0.5
    k[95] = 2.0
    return one_request(k, [95, 96], Hq=1, local=local)


def test_local0_group_length_bug_fails_with_local_blocks_0():
    """Catches packed rows scored over the group's longest length with local_blocks 0: row 0's last block
    sees key 95 (past its length), outscores block 3 and is selected."""
    case = local0_case(0)
    assert io.check(case, kernel()(case)).passed
    ids = kernel("local0_group_length")(case)
    assert ids[0, 0].tolist() == [1, 5]
    assert not io.check(case, ids).passed


def test_local0_group_length_bug_is_hidden_by_the_local_reforce():
    """With local_blocks >= 1 every row re-forces its own last block, so the contaminated block is selected
    anyway and the group-length bug must not show (SGLang's behaviour on M3's local 1)."""
    case = local0_case(1)
    ids = kernel("local0_group_length")(case)
    assert ids[0, 0].tolist() == [1, 5]
    assert io.check(case, ids).passed


def test_adapter_runs_partial_groups_per_row():
    """Catches an adapter that packs a group which is not a full group (different slot ids, lengths not
    L..L+P-1, a trailing partial group): SGLang's caller runs those rows with packed_queries 1, so the
    local0_group_length bug cannot reach them."""
    case = local0_case(0)
    # Same rows but lengths 95, 97 (not consecutive): not a full group, run per row: the bug is absent.
    c2 = io.Case(case.q, case.k_cache, case.req_to_token, case.slot_ids, np.array([95, 97]), block_size=16, topk=2,
                 local_blocks=0, packed_queries=2)
    assert [len(x) for x in full_groups(c2)] == [0, 2]
    assert io.check(c2, kernel("local0_group_length")(c2)).passed


# ----------------------------------------------------------------------------------------------- argument checks
def _call(case, **over):
    a = dict(q=case.q, sink=None, k_cache=case.k_cache, v_cache=None, req_to_token=case.req_to_token,
             seq_lens=case.seq_lens, max_seqlen=case.req_to_token.shape[1], slot_ids=case.slot_ids,
             block_size=case.block_size, topk=case.topk, init_blocks=case.init_blocks, local_blocks=case.local_blocks,
             disable_index_value=True, packed_queries=case.packed_queries, k_dtype=case.k_dtype)
    a.update(over)
    return flash_decode_with_topk_idx(**a)


def test_argument_checks_raise_like_sglang():
    """Catches a stand-in more permissive than SGLang (the fuzz contract must not draw what SGLang refuses):
    R % packed_queries (assert), topk >= the 128 top-k tile (static_assert), block_size 8 or 48 and D 96
    (tile shapes), e4m3fnuz (no sm_90 support in Triton) all raise."""
    case = io.generate("verify", 1)  # R 16, P 4
    with pytest.raises(AssertionError):
        _call(case, packed_queries=3)
    with pytest.raises(AssertionError):
        _call(case, q=case.q[:15], seq_lens=case.seq_lens[:15], slot_ids=case.slot_ids[:15])
    _call(case, topk=127)
    with pytest.raises(st.CompilationError, match="static_assert"):
        _call(case, topk=128)
    for bs in (8, 48):
        with pytest.raises(st.CompilationError, match="block_size"):
            _call(case, block_size=bs)
    q96 = np.zeros((case.R, 1, 96), np.uint16)
    with pytest.raises(st.CompilationError, match="head dim"):
        _call(case, q=q96, k_cache=np.zeros((case.S, 1, 96), np.uint16))
    fnuz = io.generate("fp8-e4m3fnuz", 1)
    with pytest.raises(st.CompilationError, match="e4m3fnuz"):
        _call(fnuz)
    fn = io.generate("fp8-e4m3fn", 1)
    _call(fn)


def test_nan_block_ranks_first():
    """SGLang's bitonic top-k (like torch.topk) ranks a NaN block score above every finite one: a NaN code in
    an unforced block must be selected over a block with a real high score (the stand-in must reproduce it,
    so the contract's "NaN ranking unspecified" is exercised)."""
    S, D = 96, 64
    k = np.zeros((S, 1, D), np.uint8)   # e4m3fn code 0 = +0.0
    k[20, 0, 5] = 0x7F                  # NaN in block 1
    k[50, 0, :] = 0x40                  # 2.0 in block 3
    case = one_request(k, [96], Hq=1, local=1, k_dtype="e4m3fn", packed_queries=1)
    assert decode_k(k[20, 0, 5], "e4m3fn") != decode_k(k[20, 0, 5], "e4m3fn")
    ids = kernel()(case)
    assert ids[0, 0].tolist() == [1, 5]
    s = st.block_scores(case.q, case.k_cache, case.req_to_token, case.seq_lens, case.slot_ids, 16, 0, 1,
                        k_dtype="e4m3fn")[0][:, 0]
    assert np.isnan(s[1]) and s[3] > 0 and s[5] == np.float32(1e29)


def test_exact_ties_prefer_higher_ids_and_still_pass():
    """The stand-in breaks exact ties toward higher ids (not the oracle's lower-id rule); io.check must accept
    any choice among exactly equal scores (forced blocks beyond topk, all-zero K)."""
    k = np.zeros((160, 1, 64))
    case = one_request(k, [160], Hq=1, topk=3, init=0, local=1, packed_queries=1)
    ids = kernel()(case)
    assert ids[0, 0].tolist() == [7, 8, 9]
    assert io.check(case, ids).passed
    case = io.generate("forced-overlap", 1)
    assert io.check(case, kernel()(case)).passed


# ----------------------------------------------------------------------------------------------- Part 2
# Fuzzing inside the contract: a fixed amount of work (seed counts, never a time budget). The two-minute
# clean run of issue 22 is a command in docs/contracts.md (too long for the gate); its result is in NOTES.
SEEDS = 40


@pytest.mark.parametrize("bug", ["hk_packed_heads", "local0_group_length"])
def test_contract_fuzz_finds_each_planted_sglang_bug(bug, tmp_path):
    """Catches a contract generator that never draws the bug's trigger (Hk > 1 with full packed groups; local
    0 with straddling full groups) or a shrinker that cannot reduce it: fuzz must find the planted SGLang bug
    class inside the contract and shrink it to <= 4 rows."""
    r = io.fuzz(make_kernel(partial(flash_decode_with_topk_idx, bug=bug), packed=True, device=None),
                contract="sglang-triton-decode", seeds=SEEDS, seconds=None, max_failures=1, out=str(tmp_path))
    assert r.failures, r.log
    shrunk = io.Case.load(r.failures[0])
    assert shrunk.R <= 4, (shrunk, r.report)
    # the shrunk case still fails the planted kernel and passes the clean one (a real counterexample)
    ids = make_kernel(partial(flash_decode_with_topk_idx, bug=bug), packed=True, device=None)(shrunk)
    assert not io.check(shrunk, ids, contract="sglang-triton-decode").passed
    io.assert_indexer(shrunk, make_kernel(flash_decode_with_topk_idx, packed=True, device=None)(shrunk),
                      contract="sglang-triton-decode")


def test_contract_fuzz_passes_the_clean_standin(tmp_path):
    """Catches a contract that draws cases SGLang's caller never makes (inactive rows, partial groups packed,
    topk >= 128, e4m3fnuz, odd block sizes) or a judge that ranks NaN / breaks ties more strictly than the
    contract: the clean stand-in must pass every drawn case."""
    r = io.fuzz(make_kernel(flash_decode_with_topk_idx, packed=True, device=None), contract="sglang-triton-decode",
                seeds=4, seconds=None, out=str(tmp_path), max_failures=1)
    assert r.passed and r.cases > 0, r.report


def test_contract_fuzz_with_few_shapes_passes_the_clean_standin(tmp_path):
    """Catches a shapes=N limit that leaks a case outside the contract (or draws nothing)."""
    r = io.fuzz(make_kernel(flash_decode_with_topk_idx, packed=True, device=None), contract="sglang-triton-decode",
                shapes=4, seeds=6, seconds=None, out=str(tmp_path))
    assert r.passed and r.cases > 0, r.report
