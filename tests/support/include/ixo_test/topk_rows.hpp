// Score rows for testing a top-k selection (tests/gpu/test_gpu_topk.cpp runs them through the CUDA
// top-k, tests/kernels/test_topk_kernel_host.cpp through the same kernel code on the host): rows
// built from key bytes so that the k-th key's radix bin is told apart at pass 1, 2, 3 or 4, exact
// ties, a tie wider than the vote selection gathers, scores rising / falling with the id, NaN /
// infinities / negative scores, random rows of several spreads. Expected ids come from the oracle's
// select_topk on the same scores, never from here.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <ostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "index_config.hpp"

namespace ixo::test {

// A positive float whose bits are b (0 < b < 0x7F800000): positive floats order as their bits,
// so the rows below place keys in chosen radix bins by their bytes.
inline float from_bits(std::uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// The bits of a key placed at radix pass `pass` (1..4) in the bin of byte `digit`: the bytes
// before the pass fixed (0x3F, then 0x80: scores near 1), the pass's byte = digit, the bytes after
// it random.
inline std::uint32_t key_bits(int pass, std::uint32_t digit, std::mt19937& rng) {
  std::uint32_t b = 0;
  for (int byte = 1; byte <= 4; ++byte) {
    const std::uint32_t v = byte < pass ? (byte == 1 ? 0x3Fu : 0x80u) : byte == pass ? digit : rng() & 0xFFu;
    b |= v << (8 * (4 - byte));
  }
  return b;
}

// A row of n scores whose k-th largest lies in a bin of radix pass `pass`: `above` keys in a
// higher bin of that pass, `in_bin` keys in the bin (in_bin == k - above: every key of the bin is
// selected, the selection can stop; more: the next pass splits the bin), the rest in a lower bin;
// all of them share the bytes before the pass. Positions shuffled.
inline std::vector<float> pass_row(int n, int pass, int above, int in_bin, std::mt19937& rng) {
  const std::uint32_t lo = pass == 1 ? 0x3Eu : 0x20u, mid = pass == 1 ? 0x3Fu : 0x40u, hi = pass == 1 ? 0x40u : 0x60u;
  std::vector<float> row;
  for (int i = 0; i < n; ++i)
    row.push_back(from_bits(key_bits(pass, i < above ? hi : (i < above + in_bin ? mid : lo), rng)));
  std::shuffle(row.begin(), row.end(), rng);
  return row;
}

struct TopkCase {
  int k;
  std::vector<std::vector<float>> rows;  // each of length nb
};

// Row sets for one (nb, k): every pass decided both ways, ties at the k-th score, special
// values, random rows.
inline TopkCase topk_case(int nb, int k, std::uint32_t seed) {
  std::mt19937 rng(seed);
  TopkCase tc{k, {}};
  for (int pass = 1; pass <= 4; ++pass) {
    for (int above : {0, k / 2, k - 1}) {
      if (above >= k) continue;
      tc.rows.push_back(pass_row(nb, pass, above, k - above, rng));  // the bin is exactly the rest: stop
      if (pass < 4) tc.rows.push_back(pass_row(nb, pass, above, std::min(nb - above, k - above + 7), rng));
    }
  }
  {  // exact ties at the k-th score: k / 2 above, 3k equal ones (lowest ids win), the rest below
    std::vector<float> row(nb);
    for (int i = 0; i < nb; ++i) row[i] = i < k / 2 ? 3.0f + i : (i < k / 2 + 3 * k ? 2.0f : 1.0f / (2 + i));
    std::shuffle(row.begin(), row.end(), rng);
    tc.rows.push_back(row);
  }
  {  // a wide tie: k / 2 above, every other score equal (more tied keys than the vote selection gathers)
    std::vector<float> row(nb, 2.0f);
    for (int i = 0; i < k / 2; ++i) row[(i * 7919) % nb] = 3.0f + i;
    tc.rows.push_back(row);
  }
  {  // scores rising with the id: the top k in the highest ids (one warp's keys in the vote selection),
     // then falling: in the lowest
    std::vector<float> row(nb);
    for (int i = 0; i < nb; ++i) row[i] = 1.0f + i;
    tc.rows.push_back(row);
    std::reverse(row.begin(), row.end());
    tc.rows.push_back(row);
  }
  {  // NaN (lowest), +inf, -inf, negative scores
    std::normal_distribution<float> nd(0.0f, 4.0f);
    std::vector<float> row(nb);
    for (int i = 0; i < nb; ++i) {
      float v = nd(rng);
      row[i] = v == 0.0f ? 0.5f : v;
    }
    for (int i = 0; i < nb; i += 7) row[i] = std::numeric_limits<float>::quiet_NaN();
    row[1] = std::numeric_limits<float>::infinity();
    row[nb - 2] = -std::numeric_limits<float>::infinity();
    tc.rows.push_back(row);
    for (auto& v : row) v = -std::fabs(v);  // all negative (NaN stays NaN)
    tc.rows.push_back(row);
  }
  for (int i = 0; i < 4; ++i) {  // random rows, several spreads
    std::uniform_real_distribution<float> ud(0.25f, i == 0 ? 0.26f : (i == 1 ? 4.0f : 1e6f));
    std::vector<float> row(nb);
    for (auto& v : row) v = i == 3 ? -ud(rng) : ud(rng);
    tc.rows.push_back(row);
  }
  return tc;
}

// A (row length, k) shape of a test table; its gtest name "nb<nb>_k<k>".
struct TopkShape {
  int nb, k;
};
inline void PrintTo(const TopkShape& s, std::ostream* os) { *os << "nb " << s.nb << ", k " << s.k; }
inline std::string topk_shape_name(const TopkShape& s) {
  std::ostringstream name;  // not std::string +: gcc 12's -Wrestrict false alarm at -O3
  name << "nb" << s.nb << "_k" << s.k;
  return name.str();
}

// The shapes the top-k kernel is tested on, on the GPU (CudaTopk/TopkRadix) and on the host
// (test_topk_kernel_host, both builds). nb 1024 / 2048 / 4096 / 8192: keys in shared memory; 9000:
// read from global memory each pass. With IXO_TOPK_BALLOT, k <= 64 and nb <= IXO_TOPK_BALLOT_MAX_KEYS
// (128 by default; the host votes test raises it to 4096) take the vote selection (ballot_select.cuh):
// 40 (a key a thread, most warps empty), 128 (the default limit), 300 (2 a thread, no warp holds
// more than 64), 600 (4, partial warps), 1024 and 4096 (4 and 16 a thread); 129 / 16 just outside the
// default limit, 1024 / 65 and 4097 / 16 outside the code's.
inline const TopkShape kTopkShapes[] = {{1024, 16},  {1024, 1},  {2048, 100}, {4096, 2048}, {8192, 64}, {9000, 16},
                                        {9000, 513}, {40, 7},    {300, 64},   {600, 33},    {1024, 64}, {1024, 65},
                                        {4096, 16},  {4097, 16}, {128, 64},   {129, 16}};

// A case's launch inputs: one query row a score row (nb = the row length, every row active, block
// size 1, no forced blocks), slot ids 0 .. R-1, lengths NB, the scores row-major.
struct TopkLaunchInputs {
  common::IndexConfig config;
  std::vector<std::int64_t> slots, lens;
  std::vector<float> scores;
};
inline TopkLaunchInputs topk_launch_inputs(const TopkCase& tc) {
  const std::int64_t R = static_cast<std::int64_t>(tc.rows.size());
  const std::int64_t NB = static_cast<std::int64_t>(tc.rows[0].size());
  TopkLaunchInputs in;
  in.config.R = R;
  in.config.Hq = in.config.Hk = 1;
  in.config.S = in.config.rows = R;
  in.config.width = in.config.NB = NB;
  in.config.block_size = 1;
  in.config.topk = tc.k;
  in.config.init_blocks = in.config.local_blocks = 0;
  in.slots.resize(R);
  std::iota(in.slots.begin(), in.slots.end(), 0);
  in.lens.assign(R, NB);
  for (const auto& r : tc.rows) in.scores.insert(in.scores.end(), r.begin(), r.end());
  return in;
}

}  // namespace ixo::test
