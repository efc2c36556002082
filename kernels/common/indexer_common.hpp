// Every formula the kernel backends share (CPU twin, CUDA, HIP), written once as
// host+device code. The oracle (reference/) deliberately does NOT include this file:
// it re-derives the semantics on its own, so a bug here is caught by comparing.
#pragma once
#include <cmath>
#include <cstdint>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define IXO_HD __host__ __device__ __forceinline__
#else
#define IXO_HD inline
#endif

// Mutant schemata (issue 5): IXO_MUTANT(sel, id) is true when mutant `id` is selected in
// a test build, and the constant false (compiled away) in release builds.
#if defined(IXO_ENABLE_MUTANTS)
#define IXO_MUTANT(sel, id) ((sel) == (id))
#else
#define IXO_MUTANT(sel, id) false
#endif

namespace ixo::common {

enum KCode : int { kBf16 = 0, kE4m3fn = 1, kE4m3fnuz = 2, kE5m2 = 3 };  // == ixo::KDtype order

constexpr float kInitForce = 1e30f;   // forced init block score
constexpr float kLocalForce = 1e29f;  // forced local block score (wins the assignment over init)
constexpr int kTileRows = 16;         // rows of one MMA tile (packed rows x heads)
constexpr float kLog2e = 1.4426950409f;

IXO_HD std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Blocks a row of length L covers.
IXO_HD std::int64_t num_blocks(std::int64_t L, int bs) { return L <= 0 ? 0 : ceil_div(L, bs); }

// A token slot from req_to_token in [-S, S) -> a k_cache row in [0, S).
IXO_HD std::int64_t wrap_slot(std::int64_t s, std::int64_t S) { return s < 0 ? s + S : s; }

// Table row a query row reads, or -1 when the row is inactive (slot outside the table
// after the negative alias, or length 0): an inactive row reads no K and selects nothing.
IXO_HD std::int64_t table_row(std::int64_t slot, std::int64_t S, std::int64_t rows, std::int64_t L) {
  const std::int64_t sid = slot < 0 ? slot + S : slot;
  return (L > 0 && sid >= 0 && sid < rows) ? sid : -1;
}

// Rows with nb <= topk select 0..nb-1 without reading scores; the scorers skip them.
IXO_HD bool trivial_row(std::int64_t nb, int topk) { return nb <= topk; }

// Tile row i of a packed tile -> (draft row, head); rows past pack*hq are idle.
struct TileRow {
  int draft;
  int head;
  bool used;
};
IXO_HD TileRow tile_row(int i, int pack, int hq) { return TileRow{i / hq, i % hq, i < pack * hq}; }
// A pack fits one tile when pack * hq <= 16.
IXO_HD bool pack_fits(int pack, int hq) { return pack >= 1 && pack * hq <= kTileRows; }

// Length the group loads K for: the longest row of the group (not the last, not the first).
IXO_HD std::int64_t group_length(const std::int64_t* lens, std::int64_t first_row, int pack) {
  std::int64_t m = 0;
  for (int p = 0; p < pack; ++p) m = lens[first_row + p] > m ? lens[first_row + p] : m;
  return m;
}

// Number of KV chunks: a power of two from graph-constant values only (batch = rows or
// groups launched, hk = K heads), never from seq_lens. 4096 / (B*Hk) clamped to [1, 256].
IXO_HD int num_kv_chunks(std::int64_t batch, std::int64_t hk) {
  std::int64_t bh = batch * hk;
  if (bh < 1) bh = 1;
  std::int64_t v = 4096 / bh;
  if (v < 1) v = 1;
  if (v > 256) v = 256;
  int p = 1;
  while (p * 2 <= v) p *= 2;
  return p;
}

// Blocks [*b0, *b1) owned by chunk c of `chunks` for a row (or group) with nb blocks.
IXO_HD void chunk_blocks(std::int64_t nb, int chunks, int c, std::int64_t* b0, std::int64_t* b1) {
  const std::int64_t cs = ceil_div(nb, chunks);
  std::int64_t s = static_cast<std::int64_t>(c) * cs;
  std::int64_t e = s + cs;
  if (s > nb) s = nb;
  if (e > nb) e = nb;
  *b0 = s;
  *b1 = e;
}

// Forcing of block b of a row with nb blocks: the local window [nb-local, nb) gets 1e29
// and wins over init; else b < init gets 1e30; else the score stays.
IXO_HD float forced_score(float score, std::int64_t b, std::int64_t nb, int init_blocks, int local_blocks) {
  std::int64_t local_start = nb - local_blocks;
  if (local_start < 0) local_start = 0;
  if (b >= local_start && b < nb) return kLocalForce;
  if (b < init_blocks) return kInitForce;
  return score;
}

// Logit multiplier in SGLang's fp32 order: ((sm_scale*q_scale) * log2e) * k_scale.
IXO_HD float logit_multiplier(float sm_times_q_scale, float k_scale) {
  const float b = sm_times_q_scale * kLog2e;
  return b * k_scale;
}

// Exact element decoding.
IXO_HD float bf16_to_float(std::uint16_t bits) {
  const std::uint32_t u = static_cast<std::uint32_t>(bits) << 16;
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
}
IXO_HD float fp8_to_float(std::uint8_t c, int code) {
  const float sign = (c & 0x80) ? -1.0f : 1.0f;
  if (code == kE5m2) {
    const int e = (c >> 2) & 31, m = c & 3;
    if (e == 31) return m == 0 ? sign * INFINITY : NAN;
    return e == 0 ? sign * ldexpf(static_cast<float>(m), -16) : sign * ldexpf(static_cast<float>(4 + m), e - 17);
  }
  const int e = (c >> 3) & 15, m = c & 7;
  if (code == kE4m3fnuz) {
    if (c == 0x80) return NAN;
    return e == 0 ? sign * ldexpf(static_cast<float>(m), -10) : sign * ldexpf(static_cast<float>(8 + m), e - 11);
  }
  if (e == 15 && m == 7) return NAN;  // e4m3fn
  return e == 0 ? sign * ldexpf(static_cast<float>(m), -9) : sign * ldexpf(static_cast<float>(8 + m), e - 10);
}

// Top-k ordering key: larger key ranks first. Score descending (NaN ranks lowest, +0 above
// -0), then the lower block id first.
IXO_HD std::uint64_t topk_key(float score, std::int32_t id) {
  std::uint32_t u;
  if (score != score) {
    u = 0;  // NaN: below every other value
  } else {
    __builtin_memcpy(&u, &score, 4);
    u = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
  }
  return (static_cast<std::uint64_t>(u) << 32) | (0xFFFFFFFFu - static_cast<std::uint32_t>(id));
}
IXO_HD std::int32_t topk_key_id(std::uint64_t key) {
  return static_cast<std::int32_t>(0xFFFFFFFFu - static_cast<std::uint32_t>(key & 0xFFFFFFFFu));
}

}  // namespace ixo::common
