"""Issue 25 item 3 in the Python layer: fp8 (e4m3fn) q and NVFP4 K cases from numpy, the
reference against the independent numpy kernel (examples/numpy_kernel.py, written from
docs/semantics.md), hand-worked NVFP4 values, save/load, and bad input naming the field.

Seen to fail on an injected bug (temporarily): numpy_kernel's nvfp4 decode without the e4m3
rounding fails test_new_dtypes_agree_with_the_numpy_kernel[*-nvfp4] (the oracle rounds, the
kernel does not) and test_nvfp4_hand_worked_scores."""
import math

import numpy as np
import pytest

import indexer_oracle as io
import numpy_kernel as nk


def random_case(q_dtype="bf16", k_dtype="bf16", seed=0, D=32, **cfg):
    """2 requests x 2 draft rows, Hq 2 / Hk 1, permuted token slots, random finite codes."""
    rng = np.random.default_rng(seed)
    R, Hq, Hk, S, width = 4, 2, 1, 160, 40
    e4m3 = nk.fp8_table("e4m3fn")
    if q_dtype == "bf16":
        q = rng.standard_normal((R, Hq, D)).astype(np.float32).view(np.uint32) >> 16
        q = q.astype(np.uint16)
    else:
        q = rng.choice(np.flatnonzero(np.isfinite(e4m3) & (np.abs(e4m3) < 8)), size=(R, Hq, D)).astype(np.uint8)
    k_scales = None
    if k_dtype == "nvfp4":
        k = rng.integers(0, 256, size=(S, Hk, D // 2), dtype=np.uint8)
        moderate = np.flatnonzero((e4m3 > 2.0 ** -6) & (e4m3 <= 8))
        large = np.flatnonzero((e4m3 >= 64) & np.isfinite(e4m3))
        k_scales = np.where(rng.random((S, Hk, D // 16)) < 0.2, rng.choice(large, (S, Hk, D // 16)),
                            rng.choice(moderate, (S, Hk, D // 16))).astype(np.uint8)
    else:
        k = rng.choice(np.flatnonzero(np.isfinite(e4m3) & (np.abs(e4m3) < 64)), size=(S, Hk, D)).astype(np.uint8)
    req_to_token = rng.permutation(S)[:3 * width].reshape(3, width).astype(np.int32)
    args = dict(block_size=4, topk=3, init_blocks=1, local_blocks=1, packed_queries=2)
    args.update(cfg)
    return io.Case(q, k, req_to_token, np.array([2, 2, 0, 0]), np.array([30, 31, 17, 18]), k_dtype=k_dtype,
                   q_dtype=q_dtype, k_scales=k_scales, **args)


@pytest.mark.parametrize("k_dtype", ["e4m3fn", "nvfp4"])
@pytest.mark.parametrize("q_dtype", ["bf16", "e4m3fn"])
@pytest.mark.parametrize("score_type", ["max", "lse"])
def test_new_dtypes_agree_with_the_numpy_kernel(q_dtype, k_dtype, score_type):
    for seed in range(3):
        c = random_case(q_dtype, k_dtype, seed=seed, score_type=score_type)
        assert (c.q_dtype, c.k_dtype) == (q_dtype, k_dtype)
        assert c.q.dtype == (np.uint16 if q_dtype == "bf16" else np.uint8)
        ids, scores = nk.kernel(c)
        io.assert_indexer(c, ids, scores)
        assert np.array_equal(io.reference(c)[0], ids)


def nvfp4_hand_case(q_dtype="bf16", k_scale=1.0):
    # D = 16, q = (1, 2, 0...), three tokens (see tests/reference/test_new_dtypes.cpp):
    #   t0: 6 * 1.125 = 6.75 -> 7 (tie to even), 1.5 * 1.125 = 1.6875 -> 1.75: dot 10.5
    #   t1: 6 * 448 -> 448 (saturated), 0.5 * 448 = 224: dot 896
    #   t2: 0.5 * 2^-9 -> 0 (tie to even), 1.5 * 2^-9 -> 2^-8: dot 2^-7
    qv = np.zeros((1, 1, 16), np.float32)
    qv[0, 0, :2] = (1, 2)
    q = (qv.view(np.uint32) >> 16).astype(np.uint16) if q_dtype == "bf16" else np.where(qv == 1, 0x38, np.where(qv == 2, 0x40, 0)).astype(np.uint8)
    k = np.zeros((3, 1, 8), np.uint8)
    k[:, 0, 0] = (0x37, 0x17, 0x31)
    scales = np.array([0x39, 0x7E, 0x01], np.uint8).reshape(3, 1, 1)
    return io.Case(q, k, np.array([[0, 1, 2]], np.int32), np.array([0]), np.array([3]), block_size=1, topk=2,
                   local_blocks=0,  # nothing forced: the three scores are the hand-worked ones
                   sm_scale=math.log(2), k_scale=k_scale, k_dtype="nvfp4", q_dtype=q_dtype, k_scales=scales)


@pytest.mark.parametrize("q_dtype", ["bf16", "e4m3fn"])
def test_nvfp4_hand_worked_scores(q_dtype):
    ids, scores = io.reference(nvfp4_hand_case(q_dtype))
    assert ids.tolist() == [[[0, 1]]]
    assert scores[0, 0].tolist() == pytest.approx([10.5, 896.0, 2.0 ** -7], rel=1e-6)
    ids, scores = io.reference(nvfp4_hand_case(q_dtype, k_scale=2.0))  # k_scale still multiplies the dot
    assert scores[0, 0].tolist() == pytest.approx([21.0, 1792.0, 2.0 ** -6], rel=1e-6)
    io.assert_indexer(nvfp4_hand_case(q_dtype), *nk.kernel(nvfp4_hand_case(q_dtype)))


def test_numpy_kernel_rounding_matches_hand_values():
    assert nk.round_e4m3fn_satfinite(np.array([1.6875, 3.375, 2.0 ** -10, 3 * 2.0 ** -10, 480.0, -2688.0])).tolist() == \
        [1.75, 3.5, 0.0, 2.0 ** -8, 448.0, -448.0]


def test_fp8_q_round_trip(tmp_path):
    for q_dtype, k_dtype in (("e4m3fn", "e4m3fn"), ("bf16", "nvfp4"), ("e4m3fn", "nvfp4")):
        c = random_case(q_dtype, k_dtype)
        c.save(tmp_path / "case")
        d = io.Case.load(tmp_path / "case")
        assert (d.q_dtype, d.k_dtype) == (q_dtype, k_dtype)
        assert d.q.dtype == c.q.dtype and np.array_equal(d.q, c.q)
        assert np.array_equal(d.k_cache, c.k_cache)
        assert (d.k_scales is None) == (k_dtype != "nvfp4")
        if k_dtype == "nvfp4":
            assert d.k_cache.shape == (c.S, c.Hk, c.D // 2) and np.array_equal(d.k_scales, c.k_scales)
        assert np.load(tmp_path / "case" / "q.npy").dtype == (np.uint16 if q_dtype == "bf16" else np.uint8)
        assert np.array_equal(io.reference(c)[0], io.reference(d)[0])
        assert ("q_dtype='e4m3fn'" in repr(d)) == (q_dtype == "e4m3fn")


def test_bad_input_names_the_field():
    c = random_case("e4m3fn", "nvfp4")
    args = (c.req_to_token, c.slot_ids, c.seq_lens)
    kw = dict(block_size=4, topk=3)
    with pytest.raises(ValueError, match="q_dtype='e4m3fn'"):  # uint8 q without q_dtype
        io.Case(c.q, c.k_cache, *args, k_dtype="nvfp4", k_scales=c.k_scales, **kw)
    with pytest.raises(ValueError, match="q: e4m3fn codes must be uint8"):
        io.Case(c.q.astype(np.uint16), c.k_cache, *args, k_dtype="nvfp4", q_dtype="e4m3fn", k_scales=c.k_scales, **kw)
    with pytest.raises(ValueError, match="q_dtype: unknown 'e5m2'"):
        io.Case(c.q, c.k_cache, *args, k_dtype="nvfp4", q_dtype="e5m2", k_scales=c.k_scales, **kw)
    with pytest.raises(ValueError, match="k_scales: required"):
        io.Case(c.q, c.k_cache, *args, k_dtype="nvfp4", q_dtype="e4m3fn", **kw)
    with pytest.raises(ValueError, match=r"k_scales.*\[S, Hk, D/16\]"):
        io.Case(c.q, c.k_cache, *args, k_dtype="nvfp4", q_dtype="e4m3fn", k_scales=c.k_scales[:, :, :1], **kw)
    with pytest.raises(ValueError, match="k_scales: given, but k_dtype 'e4m3fn'"):
        io.Case(c.q, np.zeros((c.S, 1, c.D), np.uint8), *args, k_dtype="e4m3fn", q_dtype="e4m3fn", k_scales=c.k_scales, **kw)
    with pytest.raises(ValueError, match="k_cache.*nvfp4"):  # one code a byte instead of two
        io.Case(c.q, np.zeros((c.S, 1, c.D), np.uint8), *args, k_dtype="nvfp4", q_dtype="e4m3fn", k_scales=c.k_scales, **kw)
    q24 = np.zeros((c.R, c.Hq, 24), np.uint8)
    with pytest.raises(ValueError, match="D.*multiple of 16.*got 24"):
        io.Case(q24, np.zeros((c.S, 1, 12), np.uint8), *args, k_dtype="nvfp4", q_dtype="e4m3fn",
                k_scales=np.zeros((c.S, 1, 1), np.uint8), **kw)


def test_our_cuda_and_cp_backends_decline_the_new_dtypes():
    c = random_case("e4m3fn", "nvfp4")
    ids, _ = io.reference(c)
    r = io.backend("cpu-rows")(c)  # the CPU twin takes them
    assert np.array_equal(r[0], ids)
    with pytest.raises(io.Unsupported):
        io.backend("cpu-cp")(c)
