#include "cp_cases.hpp"

#include <cstring>

namespace ixo::cptest {

GenSpec rocm_pr_spec(KDtype k) {
  GenSpec s = GenSpec{}.rows(4, 4).lengths({255 * 128 + 126}).heads(4, 1, 128).blocks(128, 16, 1, 2).k(k);
  s.permute_slots = true;
  s.permute_tokens = true;
  return s;
}

GenSpec world_spec(int world, int draft_rows) {
  return GenSpec{}.rows(3, draft_rows).up_to(700).heads(world, 1, 64).blocks(16, 4, 1, 2);
}

Case winners_in_one_shard(int world, int shard, std::int64_t prefix, int requests) {
  GenSpec s;
  s.requests = requests;
  s.draft_rows = 4;
  s.prefixes = {prefix};
  s.Hq = world;
  s.D = 128;
  s.cfg.topk = 16;
  s.cfg.init_blocks = 1;
  s.cfg.local_blocks = 2;
  s.negative_aliases = true;
  Case c = generate(s, 0xC0FFEE + static_cast<std::uint64_t>(world));
  const int bs = c.cfg.block_size;
  // q: head h is the unit vector e_h; K: dim h of a token in block b is 128 + b / WORLD
  // when b = shard + h (mod WORLD), else (b / WORLD) mod 64 (all exact bf16 integers).
  std::fill(c.q.begin(), c.q.end(), 0);
  for (std::int64_t r = 0; r < c.R; ++r)
    for (std::int64_t h = 0; h < c.Hq; ++h) c.q[(r * c.Hq + h) * c.D + h] = float_to_bf16_bits(1.0f);
  std::fill(c.k_cache.begin(), c.k_cache.end(), 0);
  for (std::int64_t r = 0; r < c.R; ++r)
    for (std::int64_t t = 0, row = table_row(c, r); row >= 0 && t < c.seq_lens[r]; ++t) {
      std::int64_t slot = c.req_to_token[row * c.width + t];
      if (slot < 0) slot += c.S;
      const std::int64_t b = t / bs;
      for (std::int64_t h = 0; h < c.Hq; ++h) {
        const bool win = b % world == (shard + h) % world;
        const float v = win ? 128.0f + static_cast<float>(b / world) : static_cast<float>((b / world) % 64);
        const std::uint16_t bits = float_to_bf16_bits(v);
        std::memcpy(&c.k_cache[static_cast<std::size_t>((slot * c.D + h) * 2)], &bits, 2);
      }
    }
  return c;
}

std::int64_t differing_rows(const Observed& a, const Observed& b) {
  std::int64_t n = 0;
  for (std::int64_t hr = 0; hr < a.Hq * a.R; ++hr)
    for (std::int64_t i = 0; i < a.topk; ++i)
      if (a.topk_idx[hr * a.topk + i] != b.topk_idx[hr * b.topk + i]) {
        ++n;
        break;
      }
  return n;
}

}  // namespace ixo::cptest
