// "cpu-msa": an in-tree kernel under the msa-decode contract (docs/contracts.md), behaving as
// ../shared/spec/upstream-msa.md describes MiniMax's upstream decode indexer: the twin's
// per-row scorer in natural units (no log2(e)) on every active row, the score buffer holding
// the unforced (history) columns of every row and never a forced cell, and MSA's 16-bit
// quantized selector (kernels/common/quantized_topk.hpp): rows with nb <= topk give
// 0..nb-1, longer rows the topk - F unforced blocks of largest (bucket, lower id) in that
// order, then the F forced blocks ascending (MSA: 15 ranked pages, the local page in slot 15).
#include <algorithm>
#include <cstring>
#include <functional>
#include <vector>

#include "cpu/cpu_backends.hpp"
#include "indexer_common.hpp"
#include "quantized_topk.hpp"

namespace ixo {
namespace cpu {
namespace {

namespace cm = ixo::common;

void select_ranked(const Case& c, const float* scores, std::int64_t nb, std::int64_t L, int mutant,
                   std::vector<std::uint32_t>& keys, std::int32_t* out) {
  const int K = c.cfg.topk, init = c.cfg.init_blocks, local = c.cfg.local_blocks;
  std::vector<std::int32_t> forced, history;
  float lo = INFINITY, hi = -INFINITY;
  for (std::int64_t b = 0; b < nb; ++b) {
    const bool f = cm::block_forced(b, nb, init, local);
    (f ? forced : history).push_back(static_cast<std::int32_t>(b));
    if (f && !IXO_MUTANT(mutant, mutants::msa_range_over_forced)) continue;
    const float v = f ? cm::forced_score(0.0f, b, nb, init, local) : scores[b];  // forced: the mutant's 1e29 / 1e30
    lo = fminf(lo, v);
    hi = fmaxf(hi, v);
  }
  const int tail = std::min<int>(K, static_cast<int>(forced.size()));
  const int ranked = K - tail;
  const cm::QuantizedMap m = cm::quantized_map(lo, hi, mutant);
  keys.clear();
  for (std::int32_t b : history) keys.push_back(cm::quantized_key(scores[b], b, m, mutant));
  const int take = std::min<int>(ranked, static_cast<int>(keys.size()));
  std::partial_sort(keys.begin(), keys.begin() + take, keys.end(), std::greater<>());
  for (int i = 0; i < take; ++i) out[i] = cm::quantized_key_id(keys[i], mutant);
  for (int i = 0; i < tail; ++i) out[take + i] = forced[i];
  // The local page in the last slot, as MSA computes it from the row's length.
  if (local >= 1 && tail >= 1 && forced.back() == nb - 1)
    out[take + tail - 1] = static_cast<std::int32_t>(cm::local_page(L, c.cfg.block_size, mutant));
}

Observed run_msa(const Case& c, const RunOptions& options) {
  Observed o = score_rows(c, options, Scoring{.natural_units = true, .every_row = true});
  float poison;
  std::memcpy(&poison, &options.score_poison_bits, sizeof poison);
  const int K = c.cfg.topk;
  const std::int64_t pairs = c.Hq * c.R;
#pragma omp parallel
  {
    std::vector<std::uint32_t> keys;
#pragma omp for schedule(dynamic, 4)
    for (std::int64_t hr = 0; hr < pairs; ++hr) {
      const std::int64_t h = hr / c.R, r = hr % c.R;
      const std::int64_t L = c.seq_lens[static_cast<std::size_t>(r)];
      const std::int64_t tr = cm::table_row(c.slot_ids[static_cast<std::size_t>(r)], c.S, c.rows, L);
      const std::int64_t nb = tr < 0 ? 0 : cm::num_blocks(L, c.cfg.block_size);
      float* row = o.scores.data() + cm::score_index(h, r, 0, c.R, o.NB);
      // The history columns stay; forced cells are never written (back to the poison).
      for (std::int64_t b = 0; b < nb; ++b)
        if (cm::block_forced(b, nb, c.cfg.init_blocks, c.cfg.local_blocks)) row[b] = poison;
      std::int32_t* out = o.topk_idx.data() + hr * K;
      if (nb <= K) {
        cm::trivial_topk(nb, K, out);
        continue;
      }
      select_ranked(c, row, nb, L, options.mutant, keys, out);
    }
  }
  return o;
}

class CpuMsa final : public Backend {
 public:
  std::string name() const override { return "cpu-msa"; }
  bool available(std::string* /*why*/) const override { return true; }
  Observed run(const Case& c, const RunOptions& options) override { return run_msa(c, options); }
};

}  // namespace
}  // namespace cpu

std::unique_ptr<Backend> make_cpu_msa_backend() { return std::make_unique<cpu::CpuMsa>(); }

}  // namespace ixo
