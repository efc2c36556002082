// Builds small literal Cases for hand-worked tests (bf16 K unless the config says fp8).
#pragma once
#include <vector>

#include "ixo/case.hpp"
#include "ixo/dtype.hpp"

namespace ixo::test {

inline Case literal_case(Config cfg, std::int64_t Hq, std::int64_t Hk, std::int64_t D, const std::vector<float>& q,
                         const std::vector<float>& k, const std::vector<std::vector<std::int32_t>>& table,
                         const std::vector<std::int64_t>& slot_ids, const std::vector<std::int64_t>& seq_lens) {
  Case c;
  c.cfg = cfg;
  c.Hq = Hq;
  c.Hk = Hk;
  c.D = D;
  c.R = static_cast<std::int64_t>(slot_ids.size());
  c.S = static_cast<std::int64_t>(k.size()) / (Hk * D);
  c.rows = static_cast<std::int64_t>(table.size());
  c.width = table.empty() ? 0 : static_cast<std::int64_t>(table[0].size());
  for (float v : q) c.q.push_back(float_to_bf16_bits(v));
  for (float v : k) {
    if (is_fp8(cfg.k_dtype)) {
      c.k_cache.push_back(float_to_fp8(v, cfg.k_dtype));
    } else {
      const std::uint16_t b = float_to_bf16_bits(v);
      c.k_cache.push_back(static_cast<std::uint8_t>(b & 0xff));
      c.k_cache.push_back(static_cast<std::uint8_t>(b >> 8));
    }
  }
  for (const auto& row : table) c.req_to_token.insert(c.req_to_token.end(), row.begin(), row.end());
  c.slot_ids = slot_ids;
  c.seq_lens = seq_lens;
  return c;
}

// Config with the given block size and top-k, no forcing, score max.
inline Config small_config(int block_size, int topk, int init = 0, int local = 0) {
  Config c;
  c.block_size = block_size;
  c.topk = topk;
  c.init_blocks = init;
  c.local_blocks = local;
  return c;
}

}  // namespace ixo::test
