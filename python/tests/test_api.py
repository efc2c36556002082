"""Every function of indexer_oracle on numpy inputs: cases of every dtype, the reference,
the verdict (pass, layouts, structured failures, plots), assert_indexer, bad input."""
import os

import numpy as np
import pytest

import indexer_oracle as io
import numpy_kernel as nk
from conftest import EXAMPLES


def small_case(k_dtype="bf16", seed=0, **cfg):
    """A hand-built batch: 2 requests x 2 draft rows, Hq 2 / Hk 1, D 16, permuted token slots."""
    rng = np.random.default_rng(seed)
    R, Hq, Hk, D, S, width = 4, 2, 1, 16, 160, 40
    q = nk_bits(rng.standard_normal((R, Hq, D)))
    if k_dtype == "bf16":
        k = nk_bits(rng.standard_normal((S, Hk, D)))
    else:
        table = nk.fp8_table(k_dtype)
        finite = np.flatnonzero(np.isfinite(table) & (np.abs(table) < 64))
        k = rng.choice(finite, size=(S, Hk, D)).astype(np.uint8)
    req_to_token = rng.permutation(S)[:3 * width].reshape(3, width).astype(np.int32)
    args = dict(block_size=8, topk=2, init_blocks=1, local_blocks=1, packed_queries=2)
    args.update(cfg)
    return io.Case(q, k, req_to_token, np.array([2, 2, 0, 0]), np.array([30, 31, 17, 18]),
                   k_dtype=None if k_dtype == "bf16" else k_dtype, **args)


def nk_bits(x):
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def test_presets_and_generate_match_the_cli_names():
    names = io.presets()
    assert {"tiny", "verify", "boundary", "km-slots", "padding"} <= set(names)
    c = io.generate("verify", 3)
    assert (c.R, c.Hq, c.block_size, c.topk, c.k_dtype) == (16, 1, 128, 16, "bf16")
    assert c.sm_scale == pytest.approx(128 ** -0.5)
    assert io.generate("verify", 3).q.tobytes() == c.q.tobytes()  # deterministic
    assert io.generate("verify", 4).q.tobytes() != c.q.tobytes()


@pytest.mark.parametrize("k_dtype", ["bf16", "e4m3fn", "e4m3fnuz", "e5m2"])
def test_every_dtype_from_numpy_agrees_with_an_independent_numpy_kernel(k_dtype):
    c = small_case(k_dtype, k_scale=0.75 if k_dtype != "bf16" else 1.0)
    assert c.k_dtype == k_dtype
    assert c.k_cache.dtype == (np.uint16 if k_dtype == "bf16" else np.uint8)
    ids, scores = io.reference(c)
    assert ids.dtype == np.int32 and ids.shape == (c.Hq, c.R, c.topk)
    assert scores.dtype == np.float32 and scores.shape == (c.Hq, c.R, c.NB)
    nids, nscores = nk.kernel(c)
    io.assert_indexer(c, nids, nscores)
    assert np.array_equal(ids, nids)


def test_int16_bits_are_accepted_like_uint16():
    c = small_case()
    d = io.Case(c.q.view(np.int16), c.k_cache.view(np.int16), c.req_to_token, c.slot_ids, c.seq_lens, block_size=8, topk=2,
                init_blocks=1, local_blocks=1)
    assert np.array_equal(io.reference(c)[0], io.reference(d)[0])


def test_config_is_readable_and_resolved():
    c = small_case(sm_scale=0.5, q_scale=2.0, score_type="lse")
    assert (c.block_size, c.topk, c.init_blocks, c.local_blocks, c.packed_queries) == (8, 2, 1, 1, 2)
    assert (c.sm_scale, c.q_scale, c.k_scale, c.score_type) == (0.5, 2.0, 1.0, "lse")
    assert (c.R, c.Hq, c.Hk, c.D, c.S, c.NB) == (4, 2, 1, 16, 160, 5)
    assert "Case(R=4" in repr(c)


def test_save_and_load_round_trip(tmp_path):
    c = small_case("e5m2")
    c.save(tmp_path / "case")
    d = io.Case.load(tmp_path / "case")
    for name in ("q", "k_cache", "req_to_token", "slot_ids", "seq_lens"):
        assert np.array_equal(getattr(c, name), getattr(d, name)), name
    assert d.k_dtype == "e5m2"


def test_check_passes_the_reference_and_accepts_the_rht_layout():
    c = io.generate("gqa", 1)
    ids, scores = io.reference(c)
    v = io.check(c, ids, scores)
    assert v.passed and v.failures == [] and v.report.startswith("PASS")
    assert io.check(c, ids.transpose(1, 0, 2), scores.transpose(1, 0, 2), layout="rht").passed
    assert io.check(c, ids.astype(np.int64)).passed  # torch.topk gives int64


def drop_best_block(c, ids):
    """ids with the strongest non-forced selected block of one row swapped for the weakest unselected one."""
    d = io._core.oracle_detail(c._c)
    for r in range(c.R):
        nb = int(d["nb"][r])
        if nb > c.topk + 1:
            free = [b for b in ids[0, r] if not d["forced"][0, r, b]]
            best = max(free, key=lambda b: d["score"][0, r, b])
            worst = min((b for b in range(nb) if b not in set(ids[0, r])), key=lambda b: d["score"][0, r, b])
            bad = ids.copy()
            bad[0, r] = np.sort([worst if b == best else b for b in ids[0, r]])
            return bad, r
    raise AssertionError("no row with a real selection")


def test_a_wrong_selection_fails_with_structured_failures():
    c = io.generate("verify", 1)
    ids, _ = io.reference(c)
    bad, row = drop_best_block(c, ids)
    v = io.check(c, bad)
    assert not v.passed
    f = v.failures[0]
    assert (f["tier"], f["head"], f["row"]) == ("ids", 0, row)
    assert len(f["missing"]) == 1 and len(f["extra"]) == 1 and f["margin"] > 0 and f["tau"] > 0
    assert f["expected"] == ids[0, row].tolist() and f["observed"] == bad[0, row].tolist()
    assert "missing" in v.report
    with pytest.raises(AssertionError) as err:
        io.assert_indexer(c, bad)
    assert str(err.value) == v.report


def test_exact_mode_rejects_a_tie_swap_that_the_tau_mode_accepts():
    c = io.generate("near-tie", 1)
    ids, _ = io.reference(c)
    # Swap the weakest selected block with the strongest unselected one where they are within tau.
    d = io._core.oracle_detail(c._c)
    for h in range(c.Hq):
        for r in range(c.R):
            nb = int(d["nb"][r])
            if nb <= c.topk:
                continue
            sel = [b for b in ids[h, r] if not d["forced"][h, r, b]]
            uns = [b for b in range(nb) if b not in set(ids[h, r]) and not d["forced"][h, r, b]]
            lo = min(sel, key=lambda b: d["score"][h, r, b])
            hi = max(uns, key=lambda b: d["score"][h, r, b])
            gap = d["score"][h, r, lo] - d["score"][h, r, hi]
            # A strict gap inside tau (an exact tie is a legal swap in both modes).
            if 0 < gap <= d["tau"][h, r, lo] + d["tau"][h, r, hi]:
                bad = ids.copy()
                bad[h, r] = np.sort([hi if b == lo else b for b in ids[h, r]])
                assert io.check(c, bad).passed
                assert not io.check(c, bad, exact=True).passed
                return
    pytest.skip("no within-tau pair in this near-tie case")


@pytest.mark.parametrize("make, field", [
    (lambda c: io.Case(c.q, c.k_cache, c.req_to_token, c.slot_ids, c.seq_lens, block_size=8, topk=0), "topk"),
    (lambda c: io.Case(c.q, c.k_cache, c.req_to_token, c.slot_ids[:3], c.seq_lens, block_size=8, topk=2), "slot_ids"),
    (lambda c: io.Case(c.q.astype(np.float32), c.k_cache, c.req_to_token, c.slot_ids, c.seq_lens, block_size=8, topk=2), "q"),
    (lambda c: io.Case(c.q, c.k_cache.view(np.uint8), c.req_to_token, c.slot_ids, c.seq_lens, block_size=8, topk=2), "k_cache"),
    (lambda c: io.Case(c.q, c.k_cache, c.req_to_token, c.slot_ids, c.seq_lens + 100, block_size=8, topk=2), "seq_lens"),
    (lambda c: io.Case(c.q, c.k_cache, c.req_to_token, c.slot_ids, c.seq_lens, block_size=8, topk=2, score_type="mean"), "score_type"),
    (lambda c: io.Case(c.q, c.k_cache, c.req_to_token, c.slot_ids, c.seq_lens, block_size=8, topk=2, k_dtype="e4m3"), "k_dtype"),
    (lambda c: io.check(c, np.zeros((c.Hq, c.R, 3), np.int32)), "topk_idx"),
    # int64 ids 2^32 above the right ones: refused, never wrapped to the right ids (judge mutant P1)
    (lambda c: io.check(c, io.reference(c)[0].astype(np.int64) + (1 << 32)), "topk_idx"),
    (lambda c: io.check(c, io.reference(c)[0], io.reference(c)[1].astype(np.float64)), "scores"),
    (lambda c: io.check(c, io.reference(c)[0], io.reference(c)[1][:, :, :2]), "scores"),
    (lambda c: io.check(c, io.reference(c)[0], layout="thr"), "layout"),
])
def test_bad_input_raises_value_error_naming_the_field(make, field):
    with pytest.raises(ValueError) as err:
        make(small_case())
    assert str(err.value).startswith(field), str(err.value)


def test_load_of_a_missing_directory_names_the_file(tmp_path):
    with pytest.raises(ValueError) as err:
        io.Case.load(tmp_path / "nope")
    assert "nope" in str(err.value)


def test_plot_draws_each_failing_row(tmp_path):
    pytest.importorskip("matplotlib")
    c = io.generate("verify", 1)
    v = io.check(c, drop_best_block(c, io.reference(c)[0])[0])
    path = v.plot(str(tmp_path / "rows.png"))
    with open(path, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    assert os.path.getsize(path) > 10000


def test_backend_runs_our_own_kernels_from_python():
    c = io.generate("km-slots", 1)
    ids, scores = io.backend("cpu-packed")(c)
    io.assert_indexer(c, ids, scores)


def test_the_hip_path_simulated_on_the_host_runs_from_python():
    """Bug caught: the opt-in sim backends (the HIP build's kernels on the CPU) unreachable by name."""
    c = io.generate("tiny", 3)
    ids, scores = io.backend("sim-packed")(c)
    io.assert_indexer(c, ids, scores)
    rows_ids, rows_scores = io.backend("sim-rows")(c)
    assert np.array_equal(ids, rows_ids) and np.array_equal(scores.view(np.uint32), rows_scores.view(np.uint32))


def test_help_reads_well():
    doc = io.__doc__
    assert "assert_indexer" in doc and "fuzz" in doc and "suite" in doc
    for fn in (io.Case, io.check, io.assert_indexer, io.fuzz, io.suite, io.reference, io.generate, io.Verdict.plot):
        assert fn.__doc__ and len(fn.__doc__) > 40, fn


# Issue 23, io.Case input checks. Each test names the bug it catches in the old _case.py.

def test_req_to_token_out_of_int32_range_is_refused_not_wrapped():
    """Bug: an int64 table entry 2**32 + 5 was cast to int32 unchecked and silently became
    slot 5 (a different, valid token); -2**31 - 1 wrapped to 2**31 - 1."""
    c = small_case()
    for bad, at in ((2 ** 32 + 5, (1, 3)), (-2 ** 31 - 1, (2, 0))):
        table = c.req_to_token.astype(np.int64)
        table[at] = bad
        with pytest.raises(ValueError) as err:
            io.Case(c.q, c.k_cache, table, c.slot_ids, c.seq_lens, block_size=8, topk=2)
        msg = str(err.value)
        assert msg.startswith("req_to_token") and str(bad) in msg and str(at) in msg, msg
    # In-range int64 and uint32 tables are still accepted, value for value.
    for dtype in (np.int64, np.uint32):
        d = io.Case(c.q, c.k_cache, c.req_to_token.astype(dtype), c.slot_ids, c.seq_lens, block_size=8, topk=2)
        assert np.array_equal(d.req_to_token, c.req_to_token)


def test_int32_extremes_in_an_int64_table_are_accepted_value_for_value():
    """The int32 range check is inclusive of both ends: an int64 req_to_token holding
    2**31 - 1 and -2**31 (in a table row no request reads) converts, it is not refused."""
    c = small_case()  # slot ids 2 and 0: table row 1 is never read
    table = c.req_to_token.astype(np.int64)
    table[1, 0], table[1, 1] = 2 ** 31 - 1, -2 ** 31
    d = io.Case(c.q, c.k_cache, table, c.slot_ids, c.seq_lens, block_size=8, topk=2)
    assert d.req_to_token[1, 0] == 2 ** 31 - 1 and d.req_to_token[1, 1] == -2 ** 31


def test_config_integers_are_refused_just_past_int32_and_named():
    """Config integers are int32 in the case file: 2**31 is refused by the Python layer with
    the field's name and the bound (not handed on to the C++ layer)."""
    c = small_case()
    for field, most in (("block_size", 2147483647), ("topk", 2048), ("packed_queries", 2147483647)):
        args = dict(block_size=8, topk=2, packed_queries=1)
        args[field] = 2 ** 31
        with pytest.raises(ValueError, match=rf"^{field}: 2147483648 is out of range \(at most {most}\)"):
            io.Case(c.q, c.k_cache, c.req_to_token, c.slot_ids, c.seq_lens, **args)


def test_every_integer_knob_is_a_keyword_and_a_property():
    """The integer knobs come from one list (ixo/config_fields.hpp, issue 24): each is a Case
    keyword checked against its range, read back as a property and handed to the torch dict."""
    c = small_case(block_size=4, topk=3, init_blocks=2, local_blocks=0, packed_queries=1)
    got = {k: getattr(c, k) for k in ("block_size", "topk", "init_blocks", "local_blocks", "packed_queries", "page_size")}
    assert got == dict(block_size=4, topk=3, init_blocks=2, local_blocks=0, packed_queries=1, page_size=1)
    assert [f[0] for f in io._core.config_int_fields()] == list(got)
    for field, least in (("init_blocks", 0), ("local_blocks", 0), ("packed_queries", 1), ("page_size", 1)):
        with pytest.raises(ValueError, match=rf"^{field}: must be >= {least}, got {least - 1}$"):
            small_case(**{field: least - 1})
    with pytest.raises(TypeError, match="unexpected keyword argument 'sink_blocks'"):
        small_case(sink_blocks=1)


def test_a_0d_torch_tensor_config_value_is_taken_as_its_element():
    """A config integer given as a 0-d torch tensor (``block_size=torch.tensor(8)``) is its
    element. torch is not installed here: a stand-in with torch's module name, ``ndim`` and
    ``item()`` takes the tensor branch (test_torch.py covers real tensors on a torch machine)."""
    class Tensor0d:
        __module__ = "torch"
        ndim = 0

        def __init__(self, v):
            self.v = v

        def item(self):
            return self.v

    c = small_case(block_size=Tensor0d(8), topk=Tensor0d(2))
    assert (c.block_size, c.topk) == (8, 2)


def test_a_knob_python_does_not_name_is_taken_by_its_name(monkeypatch):
    """A new integer knob needs no Python change: a knob in the list that Case has no named
    keyword for is checked against its range and written into case.json under its name (here
    the C++ side, which does not know the made-up knob, refuses the key by name)."""
    import indexer_oracle._case as case_mod

    monkeypatch.setitem(case_mod._INT_FIELDS, "sink_blocks", (0, 0, 7, False))
    with pytest.raises(ValueError, match=r"^sink_blocks: must be >= 0, got -1$"):
        small_case(sink_blocks=-1)
    with pytest.raises(ValueError, match=r"^sink_blocks: 8 is out of range \(at most 7\)$"):
        small_case(sink_blocks=8)
    with pytest.raises(ValueError, match=r"sink_blocks: unknown key in case.json"):
        small_case(sink_blocks=3)


def test_uint64_ids_and_lengths_beyond_int64_are_refused_not_wrapped():
    """Bug: a uint64 slot id 2**64 - 1 was cast to int64 unchecked and became -1 (an
    inactive-row marker), so a garbage id passed as padding; seq_lens the same."""
    c = small_case()
    slots = c.slot_ids.astype(np.uint64)
    slots[3] = 2 ** 64 - 1
    with pytest.raises(ValueError) as err:
        io.Case(c.q, c.k_cache, c.req_to_token, slots, c.seq_lens, block_size=8, topk=2)
    msg = str(err.value)
    assert msg.startswith("slot_ids") and "18446744073709551615" in msg and "(3,)" in msg, msg
    lens = c.seq_lens.astype(np.uint64)
    lens[1] = 2 ** 63
    with pytest.raises(ValueError) as err:
        io.Case(c.q, c.k_cache, c.req_to_token, c.slot_ids, lens, block_size=8, topk=2)
    msg = str(err.value)
    assert msg.startswith("seq_lens") and str(2 ** 63) in msg and "(1,)" in msg, msg
    # uint64 values that fit are accepted unchanged.
    d = io.Case(c.q, c.k_cache, c.req_to_token, c.slot_ids.astype(np.uint64), c.seq_lens.astype(np.uint64),
                block_size=8, topk=2)
    assert np.array_equal(d.slot_ids, c.slot_ids) and np.array_equal(d.seq_lens, c.seq_lens)


def test_numpy_scalar_config_values_are_accepted_like_python_numbers():
    """Bug: block_size=np.int64(8) or sm_scale=np.float32(0.5) raised a json TypeError from
    inside the package (numpy scalars and 0-d arrays are what array code naturally passes)."""
    c = small_case()
    plain = io.Case(c.q, c.k_cache, c.req_to_token, c.slot_ids, c.seq_lens, block_size=8, topk=2, init_blocks=1,
                    local_blocks=1, packed_queries=2, sm_scale=0.5, q_scale=2.0, k_scale=0.75)
    numpyish = io.Case(c.q, c.k_cache, c.req_to_token, c.slot_ids, c.seq_lens, block_size=np.int64(8), topk=np.int32(2),
                       init_blocks=np.uint8(1), local_blocks=np.array(1), packed_queries=np.array(2, np.int16),
                       sm_scale=np.float32(0.5), q_scale=np.array(2.0), k_scale=np.float64(0.75))
    for key in ("block_size", "topk", "init_blocks", "local_blocks", "packed_queries", "sm_scale", "q_scale", "k_scale"):
        got, want = getattr(numpyish, key), getattr(plain, key)
        assert got == want and type(got) is type(want), (key, got, want)
    assert np.array_equal(io.reference(numpyish)[1], io.reference(plain)[1])


@pytest.mark.parametrize("field", ["sm_scale", "q_scale", "k_scale"])
@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf"), np.float32("nan"), np.float64("inf")])
def test_non_finite_scales_raise_value_error_naming_the_field_and_value(field, value):
    """Bug: sm_scale=nan (or any inf scale) was written as NaN/Infinity into the JSON handed to
    the C++ side and came back as "case.json: is not valid JSON" - no case.json exists."""
    c = small_case()
    with pytest.raises(ValueError) as err:
        io.Case(c.q, c.k_cache, c.req_to_token, c.slot_ids, c.seq_lens, block_size=8, topk=2, **{field: value})
    msg = str(err.value)
    assert msg.startswith(field) and str(float(value)) in msg and "case.json" not in msg, msg


@pytest.mark.parametrize("field, value, words", [
    ("block_size", 0, [">= 1", "0"]),
    ("block_size", np.int64(-8), [">= 1", "-8"]),
    ("topk", np.int32(0), [">= 1", "0"]),
    ("init_blocks", np.int64(-1), [">= 0", "-1"]),
    ("local_blocks", np.array(-2), [">= 0", "-2"]),
    ("packed_queries", np.int8(0), [">= 1", "0"]),
    ("block_size", np.int64(2 ** 40), [str(2 ** 40)]),
    ("block_size", np.bool_(True), ["integer", "True"]),
    ("topk", True, ["integer", "True"]),
    ("topk", np.float64(2.0), ["integer", "2.0"]),
    ("sm_scale", np.complex128(1j), ["real", "1j"]),
    ("q_scale", np.bool_(False), ["real", "False"]),
    ("k_scale", np.array([1.0]), ["real"]),
])
def test_bad_config_scalars_raise_value_error_naming_the_field_and_value(field, value, words):
    """Bug: numpy-typed bad sizes (np.int64(-8)) and numpy bools/complex raised a json TypeError
    instead of a ValueError naming the field; the new int()/float() conversion must not accept
    a bool as 1/0 or a float 2.0 as an integer."""
    c = small_case()
    cfg = dict(block_size=8, topk=2)
    cfg[field] = value
    with pytest.raises(ValueError) as err:
        io.Case(c.q, c.k_cache, c.req_to_token, c.slot_ids, c.seq_lens, **cfg)
    msg = str(err.value)
    assert msg.startswith(field), msg
    for w in words:
        assert w in msg, msg


def test_case_keyword_defaults_are_the_cpp_config_defaults():
    """Bug caught: Python and C++ disagreeing on a default (io.Case's local_blocks was 0 while
    ixo::Config's is 1, so the same case judged from Python and from ixo forced other blocks)."""
    import inspect
    import json

    cpp = json.loads(io._core.config_defaults())
    params = inspect.signature(io.Case.__init__).parameters
    for field in ("init_blocks", "local_blocks", "score_type", "q_scale", "k_scale", "packed_queries"):
        assert params[field].default == cpp[field], field
    assert cpp["local_blocks"] == 1  # the spec's sparse_local_block default
    c = io.generate("tiny", 1)
    same = io.Case(c.q, c.k_cache, c.req_to_token, c.slot_ids, c.seq_lens, block_size=c.block_size, topk=c.topk)
    assert same.local_blocks == 1 and same.init_blocks == 0 and same.score_type == "max"


def test_contract_overrides_are_normalized_and_a_custom_contract_is_named_so():
    """Keyword overrides of a Contract: (Hq, Hk) tuples and (min, max) pairs become lists, other
    keys keep their values; without name= a customized contract is '<base>+custom', an
    unchanged one keeps its base's name, an explicit name is kept."""
    mine = io.Contract("spec", heads=[(4, 1), (2, 2)], topk=(1, 32), block_sizes=[8, 64], max_length=512)
    assert mine.heads == [[4, 1], [2, 2]] and mine.topk == [1, 32]
    assert mine.block_sizes == [8, 64] and mine.max_length == 512
    assert mine.name == "spec+custom"
    assert io.Contract("spec").name == "spec"
    assert io.Contract("spec", name="mine", block_sizes=[8]).name == "mine"


def test_a_contract_admits_exactly_the_cases_it_does_not_refuse():
    c = small_case()  # block_size 8
    inside, outside = io.Contract("spec", block_sizes=[8]), io.Contract("spec", block_sizes=[64])
    assert inside.refuses(c) is None and inside.admits(c)
    assert "block_size 8" in outside.refuses(c) and not outside.admits(c)


def test_every_named_contract_loads_and_an_unknown_name_is_a_value_error():
    for name in io.contracts():
        assert io.contract(name).name == name
    with pytest.raises(ValueError, match="unknown contract 'no-such-kernel'"):
        io.contract("no-such-kernel")


def test_the_plot_command_exits_0_on_a_pass_and_1_with_a_picture_on_a_failure(tmp_path):
    """`python3 -m indexer_oracle plot CASE --topk F --out DIR` (what `ixo check --plot` runs):
    exit 0 and no picture when the check passes; exit 1 and DIR/failing_rows.png when it fails."""
    pytest.importorskip("matplotlib")
    import subprocess
    import sys

    c = io.generate("verify", 1)
    c.save(tmp_path / "case")
    ids = io.reference(c)[0]
    bad, _ = drop_best_block(c, ids)
    np.save(tmp_path / "good.npy", ids)
    np.save(tmp_path / "bad.npy", bad)
    env = dict(os.environ, MPLBACKEND="Agg")

    def plot(topk, out):
        return subprocess.run([sys.executable, "-m", "indexer_oracle", "plot", str(tmp_path / "case"), "--topk",
                               str(tmp_path / topk), "--out", str(tmp_path / out)], capture_output=True, text=True, env=env)
    p = plot("good.npy", "none")
    assert p.returncode == 0 and "passed: nothing to plot" in p.stdout, p.stdout + p.stderr
    assert not (tmp_path / "none").exists()
    p = plot("bad.npy", "pics")
    assert p.returncode == 1 and "wrote" in p.stdout, p.stdout + p.stderr
    with open(tmp_path / "pics" / "failing_rows.png", "rb") as f:
        assert f.read(4) == b"\x89PNG"


def test_int64_ids_at_the_int32_extremes_are_judged_not_refused():
    """topk_idx given as int64 converts when every value fits int32, both ends included: an id
    of 2**31 - 1 (or -2**31) is a wrong id the verdict fails (structure), not a ValueError."""
    c = small_case()
    ids = io.reference(c)[0].astype(np.int64)
    for v in (2 ** 31 - 1, -2 ** 31):
        bad = ids.copy()
        bad[0, 0, 0] = v
        verdict = io.check(c, bad)
        assert not verdict.passed and "ids" in verdict.report, verdict.report
