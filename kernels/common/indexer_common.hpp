// Every formula the kernel backends share (CPU twin, CUDA, HIP), written once as
// host+device code. The oracle (reference/) deliberately does NOT include this file:
// it re-derives the semantics on its own, so a bug here is caught by comparing.
#pragma once
#include <cmath>
#include <cstdint>

#include "mutants.hpp"

#if defined(__CUDACC__) || defined(__HIPCC__)
#define IXO_HD __host__ __device__ __forceinline__
#else
#define IXO_HD inline
#endif
// Full unrolling of a loop whose trip count is a constant once inlined (the GPU's tile
// loops); nothing in host passes (where gcc would warn about an unknown pragma).
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define IXO_UNROLL _Pragma("unroll")
#else
#define IXO_UNROLL
#endif

// Mutant schemata (issue 5): IXO_MUTANT(sel, id) is true when mutant `id` is selected in
// a test build, and the constant false (compiled away) in release builds. The ids are the
// catalogue's (mutants.hpp); a function with a trailing `int mutant = 0` parameter carries
// the switches of the shared formula it holds, and every call site that omits it (the
// oracle never includes this file; the CP path passes its own ids) runs the true formula.
#if defined(IXO_ENABLE_MUTANTS)
#define IXO_MUTANT(sel, id) ((sel) == (id))
#else
// The selector is still evaluated as void (no unused-parameter warnings in release code);
// the value is the constant false, so every mutant branch is dead code.
#define IXO_MUTANT(sel, id) ((void)(sel), false)
#endif

namespace ixo::common {

enum KCode : int { kBf16 = 0, kE4m3fn = 1, kE4m3fnuz = 2, kE5m2 = 3, kNvfp4 = 4 };  // == ixo::KDtype order

constexpr float kInitForce = 1e30f;   // forced init block score
constexpr float kLocalForce = 1e29f;  // forced local block score (wins the assignment over init)
constexpr int kTileRows = 16;         // rows of one MMA tile (packed rows x heads)
constexpr float kLog2e = 1.4426950409f;

IXO_HD std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Blocks a row of length L covers.
IXO_HD std::int64_t num_blocks(std::int64_t L, int bs) { return L <= 0 ? 0 : ceil_div(L, bs); }

// A token slot from req_to_token in [-S, S) -> a k_cache row in [0, S).
IXO_HD std::int64_t wrap_slot(std::int64_t s, std::int64_t S, int mutant = 0) {
  if (IXO_MUTANT(mutant, mutants::negative_alias_clamped)) return s < 0 ? 0 : s;
  return s < 0 ? s + S : s;
}

// The K row the bytes of a load of k_cache row s come from: s itself, every offset in 64
// bits. (k_offset_32bit: the byte offset s * row_bytes wrapped to 32 bits, as an `unsigned`
// offset would; exact rows of 2^32 / row_bytes lower when row_bytes divides 2^32.)
IXO_HD std::int64_t k_load_row(std::int64_t s, std::int64_t row_bytes, int mutant = 0) {
  if (IXO_MUTANT(mutant, mutants::k_offset_32bit) && s >= 0)
    return static_cast<std::int64_t>(static_cast<std::uint32_t>(s * row_bytes)) / row_bytes;
  return s;
}

// Table row a query row reads, or -1 when the row is inactive (slot outside the table
// after the negative alias, or length 0): an inactive row reads no K and selects nothing.
IXO_HD std::int64_t table_row(std::int64_t slot, std::int64_t S, std::int64_t rows, std::int64_t L, int mutant = 0) {
  const std::int64_t sid = slot < 0 ? slot + S : slot;
  if (IXO_MUTANT(mutant, mutants::inactive_row_reads_k) && L > 0 && rows > 0) return (sid % rows + rows) % rows;
  return (L > 0 && sid >= 0 && sid < rows) ? sid : -1;
}

// Table row whose tokens the K loads of a row (or group) go through: the row's table row
// `sid`; `row_index` is the query row (or first row of the group) launching the loads.
IXO_HD std::int64_t k_table_row(std::int64_t sid, std::int64_t row_index, std::int64_t rows, int mutant = 0) {
  if (IXO_MUTANT(mutant, mutants::k_by_row_index)) return row_index % rows;
  return sid;
}

// Rows with nb <= topk select 0..nb-1 without reading scores; the scorers skip them.
// (shortcut_strict_less: the shortcut taken only for nb < topk, a row with nb == topk is
// scored and ranked.)
IXO_HD bool trivial_row(std::int64_t nb, int topk, int mutant = 0) {
  if (IXO_MUTANT(mutant, mutants::shortcut_strict_less)) return nb < topk;
  return nb <= topk;
}

// Tile row i of a packed tile -> (draft row, head); rows past pack*hq are idle.
struct TileRow {
  int draft;
  int head;
  bool used;
};
IXO_HD TileRow tile_row(int i, int pack, int hq) { return TileRow{i / hq, i % hq, i < pack * hq}; }
// A pack fits one tile when pack * hq <= 16.
IXO_HD bool pack_fits(int pack, int hq) { return pack >= 1 && pack * hq <= kTileRows; }

// ---- The packed plan over a real (graph-padded) batch -----------------------------------
// packed_queries (P) is a launch hint, never part of the truth: every row is scored by its
// own semantics. The packed plan's row axis is graph-constant (R and P only):
//   programs x = 0 .. R/P - 1   whole groups, rows x*P .. x*P + P-1 (groups start at row 0);
//   programs x = R/P .. +R%P-1  the trailing rows of a partial group, one row each.
// A whole group runs as ONE packed tile only when its rows share one slot id
// (group_packs: read from slot_ids where they live, i.e. on the device, never by the launch
// plan). Every other group -- mixed slot ids: a request boundary, graph padding next to a
// real request, an inactive row whose slot lies past the table -- and every trailing row
// runs per row: the same program scores its rows one after the other, each as a tile of
// one row (the per-row plan's arithmetic, so packed == per-row bit for bit everywhere).
// Nothing else is asked of a packed group: its lengths may be anything (not chain verify,
// 0, graph padding), because the packed scorer loads K for the group's longest writable row
// and masks and forces every row with its own length.
// The per-row plan is the pack-1 case of the same functions.

// Programs along the row axis: R for the per-row plan, R / P + R % P for the packed plan.
IXO_HD std::int64_t packed_batch(std::int64_t R, int pack) { return pack <= 1 ? R : R / pack + R % pack; }

// The rows [first, first + rows) of program x of the row axis.
struct ProgramRows {
  std::int64_t first;
  int rows;  // pack for a whole group (1 in the per-row plan), 1 for a trailing row
};
// `whole` = R / pack, the number of whole groups (the kernels take it from their launch
// parameters: no 64-bit division per program).
// (group_start_pow2: a power-of-two pack assumed, the group's first row x << log2(pack).)
IXO_HD ProgramRows program_rows_of(std::int64_t x, std::int64_t whole, int pack, int mutant = 0) {
  if (pack <= 1) return ProgramRows{x, 1};
  if (x < whole) {
    if (IXO_MUTANT(mutant, mutants::group_start_pow2)) {
      int sh = 0;
      while ((2 << sh) <= pack) ++sh;
      return ProgramRows{x << sh, pack};
    }
    return ProgramRows{x * pack, pack};
  }
  return ProgramRows{whole * pack + (x - whole), 1};
}
IXO_HD ProgramRows program_rows(std::int64_t x, std::int64_t R, int pack, int mutant = 0) {
  return program_rows_of(x, pack <= 1 ? R : R / pack, pack, mutant);
}

// Whether rows [first, first + rows) form a packed group: a whole group (rows == pack) whose
// rows all carry the first row's slot id (the raw value: two aliases of one table row do not
// pack). A group of one row always "packs" (the per-row plan).
// No early exit: the P loads are independent (issued together on the device, not one
// compare-and-branch after another at the start of every program).
IXO_HD bool group_packs(const std::int64_t* slot_ids, std::int64_t first, int rows, int pack) {
  if (rows != pack) return false;
  const std::int64_t s = slot_ids[first];
  bool same = true;
  for (int d = 1; d < pack; ++d) same = same & (slot_ids[first + d] == s);
  return same;
}

// The tiles program x scores: `count` tiles of `pack` rows, tile t starting at row
// first + t * pack: one packed tile, or one tile per row of a non-qualifying group.
struct ProgramTiles {
  std::int64_t first;
  int count;
  int pack;
};
IXO_HD ProgramTiles program_tiles(const std::int64_t* slot_ids, std::int64_t x, std::int64_t R, int pack,
                                  int mutant = 0) {
  const ProgramRows pr = program_rows(x, R, pack, mutant);
  if (group_packs(slot_ids, pr.first, pr.rows, pack)) return ProgramTiles{pr.first, 1, pr.rows};
  return ProgramTiles{pr.first, pr.rows, 1};
}

// Blocks [*b0, *b1) owned by chunk c of `chunks` for a row (or group) with nb blocks.
IXO_HD void chunk_blocks(std::int64_t nb, int chunks, int c, std::int64_t* b0, std::int64_t* b1, int mutant = 0) {
  const std::int64_t cs = IXO_MUTANT(mutant, mutants::chunk_floor_division) ? nb / chunks : ceil_div(nb, chunks);
  std::int64_t s = static_cast<std::int64_t>(c) * cs;
  std::int64_t e = s + cs;
  if (IXO_MUTANT(mutant, mutants::chunk_last_block_dropped)) e = s + cs - 1;
  if (s > nb) s = nb;
  if (e > nb) e = nb;
  *b0 = s;
  *b1 = e;
}

// Forcing of block b of a row with nb blocks: the local window [nb-local, nb) gets 1e29
// and wins over init; else b < init gets 1e30; else the score stays.
IXO_HD float forced_score(float score, std::int64_t b, std::int64_t nb, int init_blocks, int local_blocks,
                          int mutant = 0) {
  std::int64_t local_start = nb - local_blocks;
  if (IXO_MUTANT(mutant, mutants::local_window_off_by_one)) local_start = nb - local_blocks - 1;
  if (local_start < 0) local_start = 0;
  if (IXO_MUTANT(mutant, mutants::init_over_local) && b < init_blocks) return kInitForce;
  if (b >= local_start && b < nb) return kLocalForce;
  if (IXO_MUTANT(mutant, mutants::init_wider_than_row_dropped) && init_blocks > nb) return score;
  if (b < init_blocks) return kInitForce;
  return score;
}

// Logit multiplier in SGLang's fp32 order: ((sm_scale*q_scale) * log2e) * k_scale.
IXO_HD float logit_multiplier(float sm_times_q_scale, float k_scale, int mutant = 0) {
  const float b = sm_times_q_scale * kLog2e;
  if (IXO_MUTANT(mutant, mutants::k_scale_ignored)) return b;
  return b * k_scale;
}

// Logit multiplier in natural units (no log2(e)): (sm_scale*q_scale) * k_scale. The units
// MiniMax's upstream indexer reports its scores in (contract msa-decode).
IXO_HD float natural_logit_multiplier(float sm_times_q_scale, float k_scale) { return sm_times_q_scale * k_scale; }

// Exact element decoding.
IXO_HD float bf16_to_float(std::uint16_t bits) {
  const std::uint32_t u = static_cast<std::uint32_t>(bits) << 16;
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
}
IXO_HD float fp8_to_float(std::uint8_t c, int code, int mutant = 0) {
  if (IXO_MUTANT(mutant, mutants::fp8_cast_dropped)) return static_cast<float>(c);
  if (IXO_MUTANT(mutant, mutants::fnuz_as_fn) && code == kE4m3fnuz) code = kE4m3fn;
  const float sign = (c & 0x80) ? -1.0f : 1.0f;
  if (code == kE5m2) {
    const int e = (c >> 2) & 31, m = c & 3;
    if (e == 31) return m == 0 ? sign * INFINITY : NAN;
    if (IXO_MUTANT(mutant, mutants::e5m2_subnormal_flushed) && e == 0) return sign * 0.0f;
    return e == 0 ? sign * ldexpf(static_cast<float>(m), -16) : sign * ldexpf(static_cast<float>(4 + m), e - 17);
  }
  const int e = (c >> 3) & 15, m = c & 7;
  if (IXO_MUTANT(mutant, mutants::e4m3_subnormal_flushed) && e == 0) return sign * 0.0f;  // e4m3fn and fnuz
  if (code == kE4m3fnuz) {
    if (c == 0x80) return NAN;
    return e == 0 ? sign * ldexpf(static_cast<float>(m), -10) : sign * ldexpf(static_cast<float>(8 + m), e - 11);
  }
  if (e == 15 && m == 7) return NAN;  // e4m3fn
  return e == 0 ? sign * ldexpf(static_cast<float>(m), -9) : sign * ldexpf(static_cast<float>(8 + m), e - 10);
}

// A stored q element (bf16 bits, or an e4m3fn code in the low byte: q code kE4m3fn), exact.
IXO_HD float q_element(std::uint16_t v, int q_code) {
  return q_code == kBf16 ? bf16_to_float(v) : fp8_to_float(static_cast<std::uint8_t>(v), q_code);
}

// ---- NVFP4 K (MSA's Q8KV4): E2M1 codes, two a byte (low nibble = even element), and one
// e4m3fn scale per 16 elements. Element = satfinite_e4m3(e2m1 * scale): the exact fp32
// product rounded to the nearest e4m3fn value, ties to even, saturating to +-448 (what
// cvt.rn.satfinite.e4m3x2.f32 does); NaN stays NaN.
constexpr int kNvfp4Block = 16;
IXO_HD float e2m1_to_float(int nibble) {
  const int mag = nibble & 7;  // 0, 0.5, 1, 1.5, 2, 3, 4, 6
  const float v = mag < 4 ? 0.5f * static_cast<float>(mag) : ldexpf(static_cast<float>(2 + (mag & 1)), (mag >> 1) - 2);
  return (nibble & 8) ? -v : v;
}
// Round a float to the nearest e4m3fn value (ties to even), saturating at +-448.
IXO_HD float satfinite_e4m3(float x) {
  if (x != x || x == 0.0f) return x;  // NaN stays NaN, +-0 keeps its sign
  const float a = fabsf(x);
  float r;
  if (a >= 448.0f) {
    r = 448.0f;  // (448, 464] rounds to 448, above it saturates
  } else if (a < 0.015625f) {
    r = ldexpf(rintf(ldexpf(a, 9)), -9);  // subnormals: steps of 2^-9
  } else {
    int e;
    frexpf(a, &e);                               // a = f * 2^e, f in [0.5, 1): 3 mantissa bits -> step 2^(e-4)
    r = ldexpf(rintf(ldexpf(a, 4 - e)), e - 4);  // may carry into the next binade (exact)
  }
  return x < 0.0f ? -r : r;  // a tiny negative product rounds to -0
}
IXO_HD float nvfp4_element(const std::uint8_t* row, int e, const std::uint8_t* scales) {
  const int nibble = (row[e >> 1] >> (4 * (e & 1))) & 0xF;
  return satfinite_e4m3(e2m1_to_float(nibble) * fp8_to_float(scales[e / kNvfp4Block], kE4m3fn));
}

// Whether fp8_to_float with `mutant` decodes an e4m3fn or e5m2 code differently from the
// exact decode: a kernel that widens those formats in hardware (or with integer operations)
// must then decode through a table built with fp8_to_float, or the mutant is never reached.
IXO_HD bool fp8_decode_mutated(int mutant) {
  return IXO_MUTANT(mutant, mutants::fp8_cast_dropped) || IXO_MUTANT(mutant, mutants::e4m3_subnormal_flushed) ||
         IXO_MUTANT(mutant, mutants::e5m2_subnormal_flushed);
}

// The K format a launch decodes with: the case's k_dtype (mutant fn_as_fnuz: e4m3fn
// dispatched as e4m3fnuz, a host-side dtype mix-up).
IXO_HD int launch_k_code(int k_code, int mutant = 0) {
  return (IXO_MUTANT(mutant, mutants::fn_as_fnuz) && k_code == kE4m3fn) ? kE4m3fnuz : k_code;
}

// Top-k ordering key: larger key ranks first. Score descending (NaN ranks lowest, +0 above
// -0), then the lower block id first.
IXO_HD std::uint64_t topk_key(float score, std::int32_t id, int mutant = 0) {
  std::uint32_t u;
  if (score != score) {
    u = 0;  // NaN: below every other value
  } else {
    __builtin_memcpy(&u, &score, 4);
    u = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
  }
  if (IXO_MUTANT(mutant, mutants::tie_rule_reversed))
    return (static_cast<std::uint64_t>(u) << 32) | static_cast<std::uint32_t>(id);
  return (static_cast<std::uint64_t>(u) << 32) | (0xFFFFFFFFu - static_cast<std::uint32_t>(id));
}
IXO_HD std::int32_t topk_key_id(std::uint64_t key, int mutant = 0) {
  if (IXO_MUTANT(mutant, mutants::tie_rule_reversed)) return static_cast<std::int32_t>(key & 0xFFFFFFFFu);
  return static_cast<std::int32_t>(0xFFFFFFFFu - static_cast<std::uint32_t>(key & 0xFFFFFFFFu));
}

// ---- Addressing and scoring shared by the CPU twin and the GPU kernels ----

// K head a q head reads: gqa = Hq / Hk consecutive q heads share one K head.
IXO_HD int kv_head_of(int q_head, int gqa) { return q_head / gqa; }

// k_cache row of token t of table row `sid` (req_to_token is [rows, width], row-major).
IXO_HD std::int64_t token_slot(const std::int32_t* req_to_token, std::int64_t width, std::int64_t sid, std::int64_t t,
                               std::int64_t S, int mutant = 0) {
  return wrap_slot(static_cast<std::int64_t>(req_to_token[sid * width + t]), S, mutant);
}

// Element e of a raw little-endian K row (bf16: 2 bytes, fp8: 1 byte), decoded exactly.
IXO_HD float k_element(const std::uint8_t* row, int e, int code, int mutant = 0) {
  if (code == kBf16) {
    const std::uint16_t bits =
        static_cast<std::uint16_t>(row[2 * e] | (static_cast<std::uint16_t>(row[2 * e + 1]) << 8));
    return bf16_to_float(bits);
  }
  return fp8_to_float(row[e], code, mutant);
}
IXO_HD int k_element_bytes(int code) { return code == kBf16 ? 2 : 1; }
// Bytes of a K row of D elements: nvfp4 D/2 (its scales are a separate [S, Hk, D/16] array).
IXO_HD std::int64_t k_row_bytes(int code, std::int64_t D) { return code == kNvfp4 ? D / 2 : D * k_element_bytes(code); }

// The one fp32 dot-product order every backend of the twin uses: kDotLanes partial sums,
// lane j accumulating elements d = j (mod kDotLanes) in increasing d (the 16-wide k-steps
// of an MMA), then a fixed pairwise tree over the lanes (j += j + w for w = 8, 4, 2, 1).
// Products of bf16 (or widened fp8) values are exact in fp32, so FMA vs mul+add does not
// matter away from fp32 underflow.
constexpr int kDotLanes = 16;
IXO_HD float dot_fp32(const float* a, const float* b, int n) {
  float lane[kDotLanes];
  for (int j = 0; j < kDotLanes; ++j) lane[j] = 0.0f;
  int d0 = 0;
  for (; d0 + kDotLanes <= n; d0 += kDotLanes)
    for (int j = 0; j < kDotLanes; ++j) lane[j] += a[d0 + j] * b[d0 + j];
  for (int j = 0; d0 + j < n; ++j) lane[j] += a[d0 + j] * b[d0 + j];
  for (int w = kDotLanes / 2; w >= 1; w /= 2)
    for (int j = 0; j < w; ++j) lane[j] += lane[j + w];
  return lane[0];
}

// Logit of one token, log2 units: fp32 dot times the logit multiplier.
IXO_HD float logit(float dot, float multiplier) { return dot * multiplier; }

// Visible tokens of block b for a row of length L (0 when the block is past the row).
IXO_HD int block_tokens(std::int64_t b, std::int64_t L, int bs) {
  const std::int64_t n = L - b * bs;
  return n <= 0 ? 0 : (n >= bs ? bs : static_cast<int>(n));
}

// Logit of a lane of a block: visible lanes keep their logit, the others are masked out
// with -inf (lanes past the row's length do not exist, they are not zeros).
IXO_HD float masked_logit(bool visible, float s, int mutant = 0) {
  if (IXO_MUTANT(mutant, mutants::partial_block_zero_mask)) return visible ? s : 0.0f;
  return visible ? s : -INFINITY;
}

// Block max step (start from -inf): a NaN logit makes the maximum NaN for good (the
// oracle's rule, docs/semantics.md "Scores"); otherwise the larger one, the running
// maximum on equality (so -0 then +0 keeps -0, as the oracle's std::max does).
IXO_HD float max_step(float m, float s) { return (s > m || s != s) ? s : m; }
// Whether a block max is a score by itself, without the lse sum: -inf (nothing visible),
// +inf (the lse is +inf too, as in the oracle) or NaN (a NaN logit).
IXO_HD bool max_is_final(float m) { return !(m > -INFINITY && m < INFINITY); }
// The lse's exponential and logarithm, base 2 (logits are in log2 units).
IXO_HD float lse_exp(float x, int mutant = 0) {
  return IXO_MUTANT(mutant, mutants::lse_natural_exp) ? expf(x) : exp2f(x);
}
IXO_HD float lse_log(float x, int mutant = 0) {
  return IXO_MUTANT(mutant, mutants::lse_natural_exp) ? logf(x) : log2f(x);
}
// Block lse, log2 units: m + log2(sum_t exp2(s_t - m)) with m the block max and the sum in
// token order; a block whose max is not finite scores its max (max_is_final): a fully
// masked block (m = -inf) -inf, a +inf logit +inf, a NaN logit NaN.
// (lse_no_max_subtraction: sum_t exp2(s_t), then log2, no max taken out: exp2 overflows to
// inf for s > 128 and underflows to 0 for s < -149.)
IXO_HD float lse_term(float s, float m, int mutant = 0) {
  return lse_exp(IXO_MUTANT(mutant, mutants::lse_no_max_subtraction) ? s : s - m, mutant);
}
IXO_HD float lse_finish(float m, float sum, int mutant = 0) {
  if (max_is_final(m)) return m;
  return IXO_MUTANT(mutant, mutants::lse_no_max_subtraction) ? lse_log(sum, mutant) : m + lse_log(sum, mutant);
}

// Online block-score state of one row (the one lse arithmetic of every kernel): the max,
// and for lse the sum of exp2(s - max). Logits come in groups (state_add: the whole block
// on the CPU twin, a thread's tile columns on the GPU) and partial states merge in a fixed
// order (state_merge: the GPU's lanes); a group's terms are summed in order from 0 and the
// running sum is rescaled to the new max once per group. The NaN-propagating max
// (pick_max) of the caller (MaxStep here; the GPU's one-instruction max.NaN, which may differ on the
// sign of a zero maximum only).
struct BlockState {
  float m;
  float s;
};
struct MaxStep {
  IXO_HD float operator()(float m, float s) const { return max_step(m, s); }
};
IXO_HD void state_reset(BlockState& st) {
  st.m = -INFINITY;
  st.s = 0.0f;
}
// Adds the n logits v[0], v[stride], ... (already masked to -inf) in that order.
// IXO_MAX_FROM_FIRST (row 61, adopted: default 1): the group max starts at v[0], not at max(-inf, v[0]) (the same
// value: max_step returns v[0] itself, the GPU's max.NaN a canonical NaN for a NaN v[0]); one max less a group (the
// GPU's inline-asm max.NaN(-inf, v) was never folded away: 2 of a sub-tile's ~382 warp instructions).
#ifndef IXO_MAX_FROM_FIRST
#define IXO_MAX_FROM_FIRST 1
#endif
template <class Max>
IXO_HD void state_add(BlockState& st, const float* v, int n, int stride, bool lse, Max pick_max, int mutant = 0) {
  float mt = -INFINITY;
  int e0 = 0;
  if (IXO_MAX_FROM_FIRST && n > 0) {
    mt = v[0];
    e0 = 1;
  }
  IXO_UNROLL
  for (int e = e0; e < n; ++e) mt = pick_max(mt, v[e * stride]);
  if (!lse) {
    st.m = pick_max(st.m, mt);
    return;
  }
  const float nm = pick_max(st.m, mt);
  if (nm == -INFINITY) return;
  // nm = +inf or NaN: the sum turns NaN (inf - inf), unread: state_score returns the max.
  float s = st.m == -INFINITY ? 0.0f : st.s * lse_exp(st.m - nm, mutant);
  IXO_UNROLL
  for (int e = 0; e < n; ++e) s += lse_term(v[e * stride], nm, mutant);
  st.m = nm;
  st.s = s;
}
// Merges state b into a (a first, then b: a fixed order).
template <class Max>
IXO_HD void state_merge(BlockState& a, const BlockState& b, bool lse, Max pick_max, int mutant = 0) {
  if (!lse) {
    a.m = pick_max(a.m, b.m);
    return;
  }
  const float nm = pick_max(a.m, b.m);
  if (nm == -INFINITY) return;
  const float sa = a.m == -INFINITY ? 0.0f : a.s * lse_exp(a.m - nm, mutant);
  const float sb = b.m == -INFINITY ? 0.0f : b.s * lse_exp(b.m - nm, mutant);
  a.m = nm;
  a.s = sa + sb;
}
IXO_HD float state_score(const BlockState& st, bool lse, int mutant = 0) {
  if (!lse) return st.m;
  return lse_finish(st.m, st.s, mutant);
}

// Block score over n logits s[0], s[stride], ... (n may be 0: -inf), max or lse: one
// state_add of the whole block (the sum starts at 0 relative to the block max).
IXO_HD float block_score(const float* s, int n, int stride, bool lse, int mutant = 0) {
  BlockState st;
  state_reset(st);
  state_add(st, s, n, stride, lse, MaxStep{}, mutant);
  return state_score(st, lse, mutant);
}

// Whether a row writes score columns: active (table row >= 0) and not trivial (nb > topk).
// It then writes exactly the columns [0, nb), each once.
IXO_HD bool row_writes_scores(std::int64_t table_row_or_neg, std::int64_t nb, int topk, int mutant = 0) {
  if (IXO_MUTANT(mutant, mutants::trivial_rows_scored)) return table_row_or_neg >= 0 && nb > 0;
  return table_row_or_neg >= 0 && !trivial_row(nb, topk, mutant);
}

// Cell (h, r, b) of a [Hq, R, NB] score buffer (and the start of topk row (h, r) with NB = topk).
IXO_HD std::int64_t score_index(std::int64_t h, std::int64_t r, std::int64_t b, std::int64_t R, std::int64_t NB) {
  return (h * R + r) * NB + b;
}

// Row and q head of tile row i of the tile starting at row `first`: draft row
// first + i/gqa, head kvh*gqa + i%gqa (tile_row generalised to any Hk: every row reads its
// own K head).
IXO_HD std::int64_t tile_query_row(std::int64_t first, const TileRow& tr) { return first + tr.draft; }
// (hk, the K head count, only matters to the kv_head_modulo mutant: the q heads h with
// h % Hk == kvh, i.e. K head h % Hk instead of h / gqa.)
IXO_HD int tile_query_head(int kvh, int gqa, const TileRow& tr, int hk = 1, int mutant = 0) {
  if (IXO_MUTANT(mutant, mutants::kv_head_modulo)) return tr.head * hk + kvh;
  return kvh * gqa + tr.head;
}
// Tile row of the store (row, head) of tile row i: tile_row(i, pack, gqa), the same
// mapping the loads use.
IXO_HD TileRow store_tile_row(int i, int pack, int gqa, int mutant = 0) {
  if (IXO_MUTANT(mutant, mutants::wrong_score_row)) return TileRow{i % pack, i / pack, i < pack * gqa};
  return tile_row(i, pack, gqa);
}
// K head the K tile of a program of K head kvh is loaded from. Under SGLang's packing the
// tile row i of a pack reads K head i / (pack * Hq/Hk), which is right only for Hk = 1.
IXO_HD int tile_k_head(int kvh, int pack, int mutant = 0) {
  if (IXO_MUTANT(mutant, mutants::packed_kv_head_of_tile_row) && pack > 1) return 0;  // i / (pack*gqa), i < pack*gqa
  return kvh;
}

// Output of a row that does not read scores: inactive rows (nb = 0) give all -1, trivial
// rows (nb <= topk) give 0..nb-1 then -1.
IXO_HD std::int32_t trivial_topk_id(int i, std::int64_t nb, int mutant = 0) {
  return i < nb ? i : (IXO_MUTANT(mutant, mutants::no_minus_one_tail) ? 0 : -1);
}
IXO_HD void trivial_topk(std::int64_t nb, int topk, std::int32_t* out, int mutant = 0) {
  for (int i = 0; i < topk; ++i) out[i] = trivial_topk_id(i, nb, mutant);
}

}  // namespace ixo::common
